"""Recovery the daemon must get right (docs/RELIABILITY.md), in process: the
client dies mid-sequence, the daemon restarts on a standing robot, and
SIGTERM arrives mid-motion. The daemon-level halves are in
test_faults_daemon.py."""
from __future__ import annotations

import signal
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from harness import Rig, command

from controller import msgs
from controller.core.controller import Controller
from controller.robot.config import load_config
from controller.robot.native import Payload
from controller.service import runtime as runtime_module
from controller.service.runtime import SHUTDOWN_TICKS, Runtime
from controller.sim.joint_sim import SimRobot


@pytest.fixture
def standing() -> Rig:
    r = Rig(record_joints=True)
    r.stand()
    return r


def damped(rig: Rig) -> bool:
    """The last joint command is the passive damper: no stiffness, some damping."""
    k = rig.ctl.kernel
    return not k.kp.any() and bool(k.kd.any())


# -- the client dies mid-sequence ------------------------------------------------------------
def test_client_dies_mid_sequence_damper_at_500_ms_and_its_old_life_count_keeps_it_down(
        standing: Rig) -> None:
    """Extends test_controller.py::test_timeout_lies_down_exactly_500_ms_after_the_last_packet
    (a standing robot) to a queued sequence cut off half-way."""
    r = standing
    for pitch in (0.2, -0.2, 0.1):
        r.send(21, 0, duration=1000, rpy_des=[0, pitch, 0])
        r.tick()
    r.run(600)                                  # in the first block, two more queued
    assert len(r.ctl.queue) == 3
    last_packet_ns = r.now_ns
    r.tick(heartbeat=True)
    r.run(600, heartbeat=False)
    first7 = next(x for x in r.responses if x.mode == 7)
    assert first7.t_ns - last_packet_ns == 500_000_000
    assert len(r.ctl.queue) == 1 and r.ctl.last_active.source == "timeout"
    r.run(4000, heartbeat=True)                 # back, with the same life_count
    assert r.mode == 7 and r.body_height() < 0.12
    assert r.ctl.counters.commands_accepted == 4   # 12 and the three blocks: nothing since
    r.send(12)
    r.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 5000)


# -- a restart never jumps ------------------------------------------------------------------
def test_a_restarted_controller_is_off_and_limp_and_does_not_move_to_an_old_target(
        standing: Rig) -> None:
    """The daemon killed with the robot standing: a new controller on the same
    robot (a real one held up by its own stiffness, here the sim's pose)."""
    old = standing
    stand_target = old.ctl.kernel.pos.copy()
    r = Rig(record_joints=True, sim=False)
    assert old.robot is not None
    r.robot = old.robot                  # the same body: only the controller restarted
    measured = msgs.joint_state_t.decode(old.robot.joint_state(0)).position
    r.run(1000, heartbeat=False)
    for jc in r.joint_cmds:
        assert not any(jc.kp) and not any(jc.kd) and not any(jc.torque)
    assert r.mode == 0 and all(x.mode == 0 for x in r.responses)
    # The target follows the measurement (sagging, unpowered), never the old target.
    np.testing.assert_allclose(r.joint_cmds[0].position, measured, atol=1e-6)
    assert np.abs(np.array(r.joint_cmds[-1].position) - stand_target).max() > 0.3
    r.send(12)
    r.tick()
    first = np.array(r.joint_cmds[-1].position)
    assert np.abs(first - r.ctl.q).max() <= r.cfg.v_max.max() * r.cfg.dt + 1e-9


# -- SIGTERM mid-motion -------------------------------------------------------------------
@pytest.mark.parametrize("mode, gait, fields", [(11, 3, {"vel_des": [0.5, 0.0, 0.0]}),
                                                (7, 1, {}), (16, 6, {})])
def test_shutdown_is_the_passive_damper_on_the_next_tick_from_any_motion(mode: int, gait: int,
                                                                         fields: dict[str, Any]) -> None:
    """Extends test_controller.py::test_shutdown_commands_the_damper (standing) to
    a trot (whose hand-over to 7 would wait for it to slow down), the stiff
    active lie-down and a jump (whose hand-over waits for the landing)."""
    r = Rig(record_joints=True)
    r.stand()
    r.send(mode, gait, **fields)
    r.run(300)
    assert r.mode == mode and r.ctl.kernel.kp.any()
    r.ctl.shutdown()
    r.tick()
    assert r.mode == 7 and damped(r) and r.last.mode == 7
    r.run(100)
    assert r.mode == 7 and damped(r)


class LoopBus:
    """The runtime's bus without LCM: packets a test queues, publishes recorded."""

    def __init__(self) -> None:
        self.taken: dict[str, int] = {}
        self.crc: dict[str, int] = {}
        self.inbox: list[tuple[str, bytes]] = []
        self.sent: list[tuple[str, bytes]] = []

    def subscribe(self, port_name: str, channel: str) -> None:
        self.taken.setdefault(port_name, 0)
        self.crc.setdefault(port_name, 0)

    def drain(self, ports: Sequence[str] | None = None) -> list[tuple[str, bytes]]:
        out, self.inbox = self.inbox, []
        return out

    def publish(self, port_name: str, channel: str, data: Payload) -> None:
        self.sent.append((channel, bytes(data)))    # data is only valid during the call


def test_sigterm_mid_trot_damps_for_100_ms_then_run_returns_0(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real loop (Runtime.run) with the sim on a fake clock; the signal
    arrives while the robot trots. The daemon-level half (a real SIGTERM, the
    exit code) is test_faults_daemon.py::test_sigterm_mid_trot_damps_then_exits_0."""
    cfg = load_config()
    ch = cfg.lcm.channels
    ctl = Controller(cfg)
    bus = LoopBus()
    rt = Runtime(ctl, bus, sim=SimRobot(cfg, ctl.kin))
    script = {10: command(12, life_count=1), 1600: command(11, 3, 2, vel_des=[0.4, 0, 0])}
    stop_tick = 2600

    class Clock:
        now = 1_000_000_000

        def mk_now_ns(self) -> int:
            return self.now

        def mk_sleep_until(self, deadline: int) -> None:
            self.now = max(self.now, deadline)
            tick = ctl.tick
            msg = script.get(tick)
            if msg is None and tick % 50 == 0 and tick > 10:
                msg = script[10] if tick < 1600 else script[1600]    # heartbeats
            if msg is not None:
                bus.inbox.append((ch["command"], msg.encode()))
            if tick == stop_tick:
                rt.request_stop(signal.SIGTERM)

    monkeypatch.setattr(runtime_module, "lib", Clock())
    assert rt.run() == 0
    traces = [msgs.tick_trace_t.decode(d) for c, d in bus.sent if c == ch["tick_trace"]]
    cmds = {m.tick: m for m in (msgs.joint_command_t.decode(d) for c, d in bus.sent
                                if c == ch["joint_cmd"])}
    shutdown = [t.tick for t in traces if t.flags & t.FLAG_SHUTDOWN]
    # The signal lands in the sleep before tick stop_tick (ctl.tick is the
    # next tick's number there); that tick is the first of SHUTDOWN_TICKS
    # damped ones (100 ms).
    assert shutdown == list(range(shutdown[0], shutdown[0] + len(shutdown)))
    assert shutdown[0] == stop_tick
    assert len(shutdown) == SHUTDOWN_TICKS
    assert max(cmds) == shutdown[-1]                         # nothing after the damper
    assert any(cmds[stop_tick - 1].kp)                       # trotting until the signal
    for tick in shutdown:
        assert not any(cmds[tick].kp) and all(kd > 0 for kd in cmds[tick].kd)
    responses = [msgs.robot_control_response_lcmt.decode(d) for c, d in bus.sent
                 if c == ch["response"]]
    assert responses[-1].mode == 7


def test_the_timeout_lies_a_healthy_robot_down_actively_then_damps_reporting_7_0(
        standing: Rig) -> None:
    """README "Where motiond differs": the timeout's damper (SPEC §2.5, 7 gait 0)
    lowers the body with the active lie-down, then goes passive on the same
    tick counter; the client sees 7/0 and gait 0's progress as the SPEC has it.
    In physics: the body comes down slower than 0.3 m/s (the passive collapse
    hits the ground at 0.40 m/s)."""
    from controller.sim.physics import PhysicsRobot
    r = standing
    assert isinstance(r.robot, PhysicsRobot)
    r.run(600, heartbeat=False)                  # 0.5 s to the timeout, then lying down
    assert r.mode == 7 and r.ctl.last_reported[:2] == (7, 0)
    assert r.ctl.kernel.kp.any(), "lying down actively, not limp"
    fastest = 0.0
    for _ in range(1500):
        r.tick(heartbeat=False)
        fastest = min(fastest, float(r.robot.truth().velocity[2]))
    assert fastest > -0.3
    assert damped(r), "passive once lying (1.2 s interpolation + 0.8 s of damping)"
    r.run(1000, heartbeat=False)                 # gait 0's bar: 100 from its 2000th tick
    assert r.ctl.last_reported[:2] == (7, 0) and r.last.bar == 100
    assert r.body_height() < 0.12
