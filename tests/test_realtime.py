"""Real-time setup (controller/service/realtime.py) and the allocation-free tick:
the encoders that reuse their buffers write exactly what lcm-gen would, the
tick makes no reference cycles (so automatic collection can stay off), and
what the system refuses is reported, not fatal."""
from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from harness import Rig

from controller import msgs
from controller.robot.config import ConfigError, RealtimeConfig, load_config
from controller.robot.native import Kernel
from controller.service import realtime
from controller.service.transport import FixedEncoder

ROOT = Path(__file__).resolve().parents[1]


# -- encoders ---------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 12, 20, 64])
def test_the_kernel_encodes_the_joint_command_as_lcm_gen_does(n):
    rng = np.random.default_rng(n)
    k = Kernel(-np.ones(n), np.ones(n), np.ones(n))
    fingerprint = int.from_bytes(msgs.joint_command_t._get_packed_fingerprint(), "big")
    for utime, tick in ((0, 0), (1_763_712_000_123_456, 2**40 + 7), (-5, -1)):
        for name in ("pos", "vel", "kp", "kd", "tau"):
            getattr(k, name)[:] = rng.normal(0, 100, n)
        k.pos[0] = 1e-40             # underflows float32: rounds as Python's does
        msg = msgs.joint_command_t()
        msg.utime, msg.tick, msg.num_joints = utime, tick, n
        msg.position, msg.velocity = k.pos.tolist(), k.vel.tolist()
        msg.kp, msg.kd, msg.torque = k.kp.tolist(), k.kd.tolist(), k.tau.tolist()
        assert bytes(k.encode_joint_command(fingerprint, utime, tick)) == msg.encode()


def test_the_joint_command_buffer_is_reused_not_reallocated():
    k = Kernel(-np.ones(3), np.ones(3), np.ones(3))
    fingerprint = int.from_bytes(msgs.joint_command_t._get_packed_fingerprint(), "big")
    first = k.encode_joint_command(fingerprint, 0, 0)
    k.pos[:] = 0.5
    second = k.encode_joint_command(fingerprint, 0, 1)
    assert first is second
    assert msgs.joint_command_t.decode(bytes(second)).tick == 1


def test_the_fixed_encoder_writes_the_trace_as_lcm_gen_does():
    enc = FixedEncoder(msgs.tick_trace_t)
    t = msgs.tick_trace_t()
    values = (123, 2**62, -9, 5, 6, -(2**31), 2**31 - 1, 3, 2, 1_999_999, 250_000, 77, -1, 4)
    for name, value in zip(enc.fields, values, strict=True):
        setattr(t, name, value)
    assert bytes(enc.encode(*values)) == t.encode()
    assert msgs.tick_trace_t.decode(bytes(enc.encode(*values))).lateness_ns == 1_999_999


def test_the_fixed_encoder_refuses_types_with_arrays():
    with pytest.raises(TypeError, match="arrays"):
        FixedEncoder(msgs.joint_command_t)


def test_a_tick_reuses_its_outbox_and_payloads():
    rig = Rig()
    rig.run(20)
    out = rig.last_out
    assert out is not None
    payload = out.get(rig.ch["joint_cmd"])
    rig.run(2)
    assert rig.last_out is out and out.get(rig.ch["joint_cmd"]) is payload


# -- no garbage cycles, no growth -------------------------------------------------------
def _exercise(rig: Rig) -> None:
    """Stand, a locomotion gait, pose control, the damper and a timeout."""
    rig.stand()
    rig.send(11, 3, vel_des=[0.3, 0.0, 0.2])
    rig.run(2000)
    rig.send(21, 0, rpy_des=[0.1, 0.1, 0.0])
    rig.run(600)
    rig.send(7)
    rig.run(600)
    rig.run(1000, heartbeat=False)


@pytest.mark.parametrize("config", [None, "config/humanoid20.yaml", "config/nao22.yaml"])
def test_the_tick_makes_no_reference_cycles(config):
    rig = Rig(str(ROOT / config) if config else None)
    rig.run(50)
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        ticks = rig.ctl.tick
        _exercise(rig)
        assert rig.ctl.tick - ticks > 2500
        assert gc.collect() == 0       # nothing a collection would have had to free
        cycle: list[object] = [None]
        cycle[0] = cycle               # the check itself can see a cycle
        del cycle
        assert gc.collect() == 1
    finally:
        if was_enabled:
            gc.enable()


def test_a_steady_tick_allocates_nothing_that_stays():
    rig = Rig()
    rig.stand()
    rig.send(11, 3, vel_des=[0.3, 0.0, 0.0])
    rig.run(1000)
    gc.collect()
    before = sys.getallocatedblocks()
    rig.run(2000)
    gc.collect()                     # cyclic garbage is not kept: count only what stays
    grown = sys.getallocatedblocks() - before
    # rig.responses keeps one small record per response (20 Hz): 100 of them
    assert grown < 100 * 12, grown


# -- the collector around the loop -----------------------------------------------------
def test_the_frozen_heap_turns_collection_off_and_restores_it():
    assert gc.isenabled()
    with realtime.FrozenHeap(True) as heap:
        assert not gc.isenabled() and gc.get_freeze_count() > 0
        assert heap.collect_if_due() is None
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with realtime.FrozenHeap(False):
        assert gc.isenabled()


def test_the_frozen_heap_collects_when_the_budget_is_spent(monkeypatch):
    monkeypatch.setattr(realtime, "GC_BUDGET", 1000)
    with realtime.FrozenHeap(True) as heap:
        junk = []
        for _ in range(600):
            pair: list[object] = [None, None]
            pair[0] = pair
            junk.append(pair)
        del junk, pair
        assert heap.collect_if_due() is None        # 601 new objects: within budget
        for _ in range(600):
            pair = [None]
            pair[0] = pair
        del pair
        collected = heap.collect_if_due()
        assert collected is not None
        found, ns = collected
        assert found >= 1199 and ns > 0 and heap.collections == 1


# -- setup -------------------------------------------------------------------------
def test_setup_applies_what_it_is_permitted():
    if os.geteuid() != 0:
        pytest.skip("needs root to set SCHED_FIFO in a child")   # CI runs as root
    code = textwrap.dedent("""
        import json, os, threading
        from controller.service import realtime
        from controller._kernel import lib
        from controller.robot.config import RealtimeConfig
        done = threading.Event()
        worker = threading.Thread(target=done.wait)   # as the LCM receive threads
        worker.start()
        def latency_files():
            return sum(os.readlink(f"/proc/self/fd/{fd}") == "/dev/cpu_dma_latency"
                       for fd in os.listdir("/proc/self/fd") if os.path.exists(f"/proc/self/fd/{fd}"))
        def system_latency():       # the kernel's answer: the lowest request held
            with open("/dev/cpu_dma_latency", "rb") as f:
                return int.from_bytes(f.read(4), "little", signed=True)
        a, r = realtime.setup(RealtimeConfig(priority=7, lock_memory=True, timer_slack_ns=1,
                                             cpu_dma_latency_us=3))
        tasks = [int(t) for t in os.listdir('/proc/self/task')]
        held = [latency_files(), system_latency()]
        a2, r2 = realtime.setup(RealtimeConfig(priority=7, lock_memory=True, timer_slack_ns=1,
                                               cpu_dma_latency_us=0))
        held += [latency_files(), system_latency()]
        realtime.release_idle_latency()
        held += [latency_files()]
        print(json.dumps([a, r, [os.sched_getscheduler(t) for t in tasks],
                          [os.sched_getparam(t).sched_priority for t in tasks],
                          lib.mk_get_timer_slack(), held, a2[-1]]))
        done.set()
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    applied, refused, policies, priorities, slack, held, again = json.loads(out)
    assert refused == []
    assert applied == ["SCHED_FIFO priority 7", "timer slack 1 ns", "memory locked",
                       "cpu idle latency 3 us"]
    assert len(policies) >= 2 and set(policies) == {os.SCHED_FIFO} and set(priorities) == {7}
    assert slack in (0, 1)      # recent kernels give SCHED_FIFO threads no slack at all
    # The request is held open (one descriptor, replaced by a second setup, not
    # added to) and the kernel honours it; released, the descriptor is gone.
    assert held[0] == 1 and 0 <= held[1] <= 3
    assert held[2] == 1 and held[3] == 0
    assert held[4] == 0 and again == "cpu idle latency 0 us"


@pytest.mark.parametrize(("errno_value", "words"), [
    (2, "no /dev/cpu_dma_latency (a kernel without PM QoS, or a private /dev"),
    (13, "Permission denied on /dev/cpu_dma_latency (needs root or write access")])
def test_a_refused_idle_latency_request_says_why(monkeypatch, errno_value, words):
    class Lib:
        @staticmethod
        def mk_request_cpu_latency(max_us):
            return -errno_value

        mk_set_timer_slack = staticmethod(lambda ns: 0)
    monkeypatch.setattr(realtime, "lib", Lib)
    applied, refused = realtime.setup(RealtimeConfig(priority=0, lock_memory=False, cpu_dma_latency_us=0))
    assert applied == ["timer slack 1 ns"]
    assert len(refused) == 1 and refused[0].startswith("cpu idle latency 0 us: ") and words in refused[0]


def test_the_idle_latency_key(tmp_path):
    """Absent: 10 us (no deep idle states); null: no request; a
    negative, fractional or boolean value fails naming the key."""
    for folder in ("config", "gaits"):         # the config's relative paths hold
        shutil.copytree(ROOT / folder, tmp_path / folder)
    base = (ROOT / "config" / "cyberdog2.yaml").read_text()
    assert "  cpu_dma_latency_us: 10 " in base
    path = tmp_path / "config" / "cyberdog2.yaml"
    for text, want in (("0", 0), ("150", 150), ("null", None)):
        path.write_text(base.replace("  cpu_dma_latency_us: 10 ", f"  cpu_dma_latency_us: {text} "))
        assert load_config(path).realtime.cpu_dma_latency_us == want
    path.write_text(base.replace("  cpu_dma_latency_us: 10 ", "  #"))
    assert load_config(path).realtime.cpu_dma_latency_us == 10
    for text in ("-1", "1.5", "true", "2000000"):
        path.write_text(base.replace("  cpu_dma_latency_us: 10 ", f"  cpu_dma_latency_us: {text} "))
        with pytest.raises(ConfigError, match="realtime.cpu_dma_latency_us"):
            load_config(path)


def test_without_the_capabilities_the_daemon_runs_with_one_warning():
    """motiond with CAP_SYS_NICE and CAP_IPC_LOCK dropped (and no rlimits that
    grant them): one realtime_degraded warning naming both, then it ticks."""
    if os.geteuid() != 0:
        pytest.skip("dropping capabilities needs root")   # CI runs as root
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        ["setpriv", "--inh-caps=-sys_nice,-ipc_lock", "--bounding-set=-sys_nice,-ipc_lock",
         "prlimit", "--rtprio=0", "--memlock=65536", "--",
         sys.executable, "-m", "controller.cli.motiond", "--ticks", "20", "--config",
         str(ROOT / "config/cyberdog2.yaml")],
        check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    warnings = [e for e in events if e["event"] == "realtime_degraded"]
    assert len(warnings) == 1
    refused = warnings[0]["refused"]
    assert [r.split(":")[0] for r in refused] == ["SCHED_FIFO priority 49", "mlockall"]
    assert "CAP_SYS_NICE" in refused[0] and "CAP_IPC_LOCK" in refused[1]
    # The idle-latency request needs no capability: root owns the device.
    assert warnings[0]["applied"] == ["timer slack 1 ns", "cpu idle latency 10 us"]
    assert any(e["event"] == "shutdown" and e["ticks"] == 20 for e in events)
