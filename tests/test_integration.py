"""motiond --sim as a subprocess, spoken to over real udpm LCM.

Every test here opens udpm:// sockets, so it runs only inside the private
network namespace that `make test` creates (tests/netns.sh; conftest.py fails
these tests anywhere else). Timing bounds are the SPEC's.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lcm
import numpy as np
import pytest
from harness import command, stolen_s

from controller import msgs
from controller.core.publisher import ODOMETRY_EVERY
from controller.robot.config import load_config

pytestmark = pytest.mark.udpm

ROOT = Path(__file__).resolve().parent.parent
CFG = load_config()
CH = CFG.lcm.channels
TICK_MS = 2.0


class Client:
    """A CyberDog-style client: sends commands, timestamps everything it hears."""

    def __init__(self) -> None:
        self.cmd_lcm = lcm.LCM(CFG.lcm.url("command"))
        # The joint port carries ~2000 messages/s (joint_cmd, tick_trace, ...); a 4 MB
        # receive buffer keeps a Python listener that the host pauses from losing any.
        self.rx = {name: lcm.LCM(CFG.lcm.url(name) + "&recv_buf_size=4194304")
                   for name in ("response", "joint")}
        self.lock = threading.Lock()
        self.responses: list[tuple[int, msgs.robot_control_response_lcmt]] = []
        self.status: list[tuple[int, msgs.controller_status_t]] = []
        self.joint_cmd_ticks: list[tuple[int, int]] = []
        # (tick, tick_ns, taken_command, taken_command_late)
        self.traces: list[tuple[int, int, int, int]] = []
        self.lateness_ns: dict[int, int] = {}     # tick -> its wake-up lateness
        self.rx["response"].subscribe(CH["response"], self._on_response)
        self.rx["joint"].subscribe(CH["status"], self._on_status)
        self.rx["joint"].subscribe(CH["joint_cmd"], self._on_joint_cmd)
        self.rx["joint"].subscribe(CH["tick_trace"], self._on_trace)
        self.life_count = 0
        self.running = True
        self.threads = [threading.Thread(target=self._spin, args=(inst,), daemon=True)
                        for inst in self.rx.values()]
        for t in self.threads:
            t.start()

    def _spin(self, inst: lcm.LCM) -> None:
        while self.running:
            inst.handle_timeout(50)

    def _on_response(self, _ch: str, data: bytes) -> None:
        t = time.monotonic_ns()
        with self.lock:
            self.responses.append((t, msgs.robot_control_response_lcmt.decode(data)))

    def _on_status(self, _ch: str, data: bytes) -> None:
        t = time.monotonic_ns()
        with self.lock:
            self.status.append((t, msgs.controller_status_t.decode(data)))

    def _on_trace(self, _ch: str, data: bytes) -> None:
        t = msgs.tick_trace_t.decode(data)
        with self.lock:
            self.traces.append((t.tick, t.tick_ns, t.taken_command, t.taken_command_late))
            self.lateness_ns[t.tick] = t.lateness_ns

    def _on_joint_cmd(self, _ch: str, data: bytes) -> None:
        t = time.monotonic_ns()
        # tick is the second int64 after the 8-byte fingerprint.
        tick = int.from_bytes(data[16:24], "big", signed=True)
        with self.lock:
            self.joint_cmd_ticks.append((t, tick))

    def send(self, mode: int, gait: int = 0, duration: int = 0, life_count: int | None = None,
             **fields: Any) -> msgs.robot_control_cmd_lcmt:
        if life_count is None:
            self.life_count = (self.life_count + 1) % 128
            life_count = self.life_count
        msg = command(mode, gait, life_count, duration, **fields)
        self.cmd_lcm.publish(CH["command"], msg.encode())
        self.last_sent = msg
        return msg

    def heartbeat(self) -> int:
        self.cmd_lcm.publish(CH["command"], self.last_sent.encode())
        return time.monotonic_ns()

    def hold(self, seconds: float, period: float = 0.1) -> None:
        """Keep the heartbeat going for `seconds` (the official examples' habit)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.heartbeat()
            time.sleep(min(period, max(0.0, end - time.monotonic())))

    def hold_until(self, done: Callable[[], bool], timeout: float, period: float = 0.1) -> None:
        """Keep the heartbeat going until done() holds; `timeout` s of wall
        clock is only the harness's patience (what is judged is on the
        daemon's ticks): a host that slows the daemon takes longer."""
        end = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < end, f"not done within {timeout} s"
            self.heartbeat()
            time.sleep(period)

    def wait_for(self, predicate: Callable[[msgs.robot_control_response_lcmt], bool], timeout: float,
                 heartbeat: bool = True) -> msgs.robot_control_response_lcmt:
        """The first response since now for which predicate holds."""
        with self.lock:
            start = len(self.responses)
        end = time.monotonic() + timeout
        next_beat = 0.0
        while time.monotonic() < end:
            if heartbeat and time.monotonic() >= next_beat:
                self.heartbeat()
                next_beat = time.monotonic() + 0.1
            with self.lock:
                for _, r in self.responses[start:]:
                    if predicate(r):
                        return r
            time.sleep(0.005)
        last = self.responses[-1][1] if self.responses else None
        raise AssertionError(f"no matching response within {timeout} s; last: "
                             f"{last and (last.mode, last.gait_id, last.switch_status, last.order_process_bar)}")

    def wait_status(self, predicate: Callable[[msgs.controller_status_t], bool],
                    timeout: float) -> msgs.controller_status_t:
        """The first controller_status heard so far (or within timeout) for which predicate holds."""
        end = time.monotonic() + timeout
        while True:
            with self.lock:
                for _, s in self.status:
                    if predicate(s):
                        return s
            if time.monotonic() >= end:
                raise AssertionError(f"no matching controller_status within {timeout} s")
            time.sleep(0.005)

    def close(self) -> None:
        self.running = False
        for t in self.threads:
            t.join(1)


def start_daemon(tmp_path: Path, sim: str) -> Iterator[tuple[subprocess.Popen[bytes], Client]]:
    with open(tmp_path / "motiond.log", "w") as log:       # the daemon has its own copy
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli.motiond", "--sim", sim,
                                 "--log-level", "info"], cwd=ROOT, stderr=log, stdout=log)
    client = Client()
    deadline = time.monotonic() + 15
    while not client.status:
        assert proc.poll() is None, (tmp_path / "motiond.log").read_text()
        assert time.monotonic() < deadline, "motiond did not publish controller_status"
        time.sleep(0.02)
    yield proc, client
    client.close()
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(5)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Client]]:
    """motiond --sim: the MuJoCo body."""
    yield from start_daemon(tmp_path, "physics")


@pytest.fixture
def joint_daemon(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Client]]:
    """motiond --sim joint: the joint-space sim, which has no IMU, for the
    odometry rule without one (exact integration of the commanded, limited
    velocity); the odometry from the IMU is tested in test_estimator.py."""
    yield from start_daemon(tmp_path, "joint")


def stand(client: Client) -> None:
    client.send(12)
    client.wait_for(lambda r: r.mode == 12 and r.order_process_bar == 100, 8)


def test_stand_up_and_repeated_life_count_is_ignored(daemon):
    _, client = daemon
    stand(client)
    lc = client.life_count
    client.send(21, 5, duration=1000, life_count=lc, pos_des=[0, 0, 0.15])
    client.hold(0.3)
    with client.lock:
        recent = [r for t, r in client.responses[-10:]]
    assert all(r.mode == 12 for r in recent)
    with client.lock:
        assert client.status[-1][1].heartbeats > 0


def test_off_to_pose_is_refused_with_ban_trans(daemon):
    _, client = daemon
    client.send(21, 0)
    r = client.wait_for(lambda r: r.switch_status == 5, 1)
    assert r.mode == 0


@pytest.mark.realtime
def test_timeout_shows_mode_7_within_500_ms_plus_2_ticks(daemon):
    _, client = daemon
    stand(client)
    client.hold(0.3)
    with client.lock:
        taken_before = client.traces[-1][2]
    sent_ns = time.monotonic_ns()
    client.heartbeat()
    client.wait_for(lambda r: r.mode == 7, 2, heartbeat=False)
    # controller_status goes out on every mode change, from the tick that made it.
    # Responses and status arrive on two sockets handled by two threads, so the
    # status of the same tick may still be in flight when the response is seen.
    first7 = client.wait_status(lambda s: s.mode == 7, 1.0)
    deadline = time.monotonic() + 1.0
    while True:                    # the tick traces up to the mode-7 tick, on their own socket
        with client.lock:
            traces = {tick: (tick_ns, taken, late) for tick, tick_ns, taken, late in client.traces}
        if first7.tick in traces or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    # The tick that took the heartbeat in: the first whose command-port count passed
    # the count before it was sent. Both ends are the daemon's own tick times, so
    # the test thread's scheduling on a loaded machine does not enter the figure.
    take_tick = min(tick for tick, (_, taken, _) in traces.items() if taken > taken_before)
    # Taken in after that tick's state estimate (the tick's last command-port
    # packets), it arrived while the tick ran: the next tick is the one that saw it.
    seen_tick = take_tick + (1 if traces[take_tick][2] > 0 else 0)
    seen_ns, seven_ns = traces[seen_tick][0], traces[first7.tick][0]
    elapsed_ms = (seven_ns - seen_ns) / 1e6
    print(f"timeout fallback {first7.tick - seen_tick} ticks, {elapsed_ms:.2f} ms after the "
          f"tick that saw the last packet (taken in by tick {take_tick}, sent "
          f"{(traces[take_tick][0] - sent_ns) / 1e6:.2f} ms before it woke)")
    # SPEC: 500 ms after the last packet. The daemon fires on the first tick at least
    # 500 ms less half a tick after the one that saw it (controller/protocol/intake.py,
    # tick wake times): that tick and no later, and within 500 ms + 2 ticks of real time.
    before_ns = traces[first7.tick - 1][0]
    assert (before_ns - seen_ns) / 1e6 < 500.0 - TICK_MS / 2 <= elapsed_ms
    assert elapsed_ms <= 500.0 + 2 * TICK_MS, elapsed_ms
    assert traces[take_tick][0] - sent_ns < 100e6          # the heartbeat was taken in at once


def change_ticks(client: Client, since_ns: int) -> list[tuple[int, int, int]]:
    """(tick, mode, gait) at each change, from controller_status (sent on every change)."""
    out: list[tuple[int, int, int]] = []
    with client.lock:
        for t, s in client.status:
            if t >= since_ns and (not out or (s.mode, s.gait_id) != out[-1][1:]):
                out.append((s.tick, s.mode, s.gait_id))
    return out


@pytest.mark.realtime
def test_queued_sequence_runs_in_order_and_duration_zero_preempts(daemon):
    _, client = daemon
    stand(client)
    start = time.monotonic_ns()
    client.send(21, 0, duration=300, rpy_des=[0, 0.1, 0])
    time.sleep(0.01)
    client.send(21, 5, duration=200, pos_des=[0, 0, 0.2])
    time.sleep(0.01)
    client.send(21, 0, duration=400, rpy_des=[0, -0.1, 0])
    # 0.9 s of blocks, then the pose hold (21/3): timed on the daemon's ticks.
    client.hold_until(lambda: len(change_ticks(client, start)) >= 4, 10.0)
    changes = change_ticks(client, start)
    assert [c[1:] for c in changes[:4]] == [(21, 0), (21, 5), (21, 0), (21, 3)]
    durations = [b[0] - a[0] for a, b in zip(changes, changes[1:4])]
    for got, want_ms in zip(durations, (300, 200, 400)):
        assert abs(got - want_ms / TICK_MS) <= 1, durations
    # A second sequence, cut short by a continuous command.
    client.send(21, 0, duration=2000, rpy_des=[0, 0.1, 0])
    time.sleep(0.01)
    client.send(21, 5, duration=2000, pos_des=[0, 0, 0.2])
    client.hold(0.2)
    client.send(7, 1)
    # At once: a daemon that let the queue run first would show it after 3.8 s.
    r = client.wait_for(lambda r: r.mode == 7, 1.5)
    assert r.gait_id == 1
    client.hold(0.2)
    with client.lock:
        assert client.status[-1][1].queue_depth == 1


@pytest.mark.realtime
def test_response_at_50_hz_and_joint_cmd_at_500_hz(daemon):
    _, client = daemon
    time.sleep(0.5)
    with client.lock:
        r0, j0 = len(client.responses), len(client.joint_cmd_ticks)
    steal0 = stolen_s()
    time.sleep(2.0)
    with client.lock:
        responses = client.responses[r0:]
        ticks = [k for _, k in client.joint_cmd_ticks[j0:]]
    stolen = stolen_s() - steal0
    # A tick's trace goes out after its joint_cmd and its reports, on its own
    # socket: the last tick's may still be in flight.
    deadline = time.monotonic() + 1.0
    while True:
        with client.lock:
            wake = {tick: tick_ns for tick, tick_ns, *_ in client.traces}
        if ticks[-1] in wake or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    # Rates on the daemon's clock (its tick wake times), so a listener the host
    # pauses for a moment does not count as a slow daemon; every joint_cmd arrives.
    assert ticks == list(range(ticks[0], ticks[0] + len(ticks)))  # none lost, in order
    assert ticks[0] in wake and ticks[-1] in wake
    span_s = (wake[ticks[-1]] - wake[ticks[0]]) / 1e9
    # A tick that wakes a whole period or more late (the host took the CPU away)
    # restarts the schedule from its wake time, never bursting to catch up: the
    # time it lost is exactly its lateness. So the schedule holds 500 Hz once
    # that time is added back, and a daemon too slow for 2 ms (every tick late)
    # fails the bound on lost periods: 5 % of them, beyond the periods the
    # virtual machine's host stole (harness.stolen_s).
    with client.lock:
        late = [client.lateness_ns[k] for k in ticks[1:]]
    lost = sum(ns for ns in late if ns >= 2_000_000) / 2_000_000
    why = (f"{len(ticks)} joint_cmds over {span_s:.4f} s, {lost:.1f} periods lost "
           f"(the latest tick {max(late, default=0) / 1e6:.1f} ms late), {stolen:.2f} s stolen by the host")
    print(why)
    # The 2 s window held ~1000 periods: a joint_cmd each, or lost (above).
    assert len(ticks) + lost >= 900, why
    assert lost <= 0.05 * len(ticks) + stolen * 500, why
    assert 495 <= (len(ticks) - 1 + lost) / span_s <= 505, why
    expected = (ticks[-1] - ticks[0]) / 10             # 50 Hz = one response every 10 ticks
    assert abs(len(responses) - expected) <= 3, (len(responses), expected)


@pytest.mark.realtime
def test_sigterm_damps_and_exits_within_one_second(daemon):
    proc, client = daemon
    stand(client)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(2) == 0
    assert time.monotonic() - t0 < 1.0
    with client.lock:
        last = client.responses[-1][1]
    assert last.mode == 7


def motionctl(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "controller.cli.motionctl", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_motionctl_send_wait_exit_codes(daemon):
    done = motionctl("send", "--mode", "12", "--wait", "--timeout", "10")
    assert done.returncode == 0, done.stdout + done.stderr
    refused = motionctl("send", "--mode", "99", "--wait", "--timeout", "5")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    watch = motionctl("watch", "--once")
    assert watch.returncode == 0
    assert "RECOVERY_STAND" in watch.stdout or "PURE_DAMPER" in watch.stdout, watch.stdout


def test_client_with_its_own_cyberdog_types_works_unchanged(daemon, tmp_path):
    """A client built the CyberDog way: its own lcm-gen output of the reference
    .lcm files (no package), a ttl=255 URL, and a message object it reuses."""
    for name in ("robot_control_cmd_lcmt", "robot_control_response_lcmt"):
        text = (ROOT / "lcmtypes" / f"{name}.lcm").read_text().replace("package msgs;", "")
        (tmp_path / f"{name}.lcm").write_text(text)
    gen = Path(sys.executable).parent / "lcm-gen"
    subprocess.run([str(gen), "-p", "--ppath", str(tmp_path / "gen"),
                    *map(str, tmp_path.glob("*.lcm"))], check=True)
    sys.path.insert(0, str(tmp_path / "gen"))
    try:
        from robot_control_cmd_lcmt import robot_control_cmd_lcmt  # type: ignore[import-not-found]  # lcm-gen output, made above
        from robot_control_response_lcmt import robot_control_response_lcmt  # type: ignore[import-not-found]  # lcm-gen output, made above
    finally:
        sys.path.pop(0)
    assert robot_control_cmd_lcmt.__module__ == "robot_control_cmd_lcmt"  # not motiond's

    lc_cmd = lcm.LCM("udpm://239.255.76.67:7671?ttl=255")
    lc_rsp = lcm.LCM("udpm://239.255.76.67:7670?ttl=255")
    seen = []
    lc_rsp.subscribe("robot_control_response",
                     lambda _c, d: seen.append(robot_control_response_lcmt.decode(d)))
    msg = robot_control_cmd_lcmt()

    def do(mode, gait, duration=0, **fields):
        for k, v in fields.items():
            setattr(msg, k, v)
        msg.mode, msg.gait_id, msg.duration = mode, gait, duration
        msg.life_count = (msg.life_count + 1) % 128
        lc_cmd.publish("robot_control_cmd", msg.encode())

    def wait(pred, seconds):
        end = time.monotonic() + seconds
        beat = 0.0
        while time.monotonic() < end:
            if time.monotonic() > beat:
                lc_cmd.publish("robot_control_cmd", msg.encode())   # heartbeat: same life_count
                beat = time.monotonic() + 0.1
            lc_rsp.handle_timeout(10)
            if seen and pred(seen[-1]):
                return seen[-1]
        raise AssertionError(f"timed out; last {seen[-1].__dict__ if seen else None}")

    do(12, 0)
    wait(lambda r: r.mode == 12 and r.order_process_bar == 100, 8)
    do(21, 0, 500, rpy_des=[0.0, 0.2, 0.0])
    time.sleep(0.01)
    do(21, 5, 600, pos_des=[0.0, 0.0, 0.2])
    wait(lambda r: r.mode == 21 and r.gait_id == 5, 2)
    wait(lambda r: r.mode == 21 and r.gait_id == 3, 2)        # the pose-hold filler
    do(7, 1)
    wait(lambda r: r.mode == 7 and r.gait_id == 1 and r.order_process_bar == 100, 3)
    do(12, 0)
    wait(lambda r: r.mode == 12 and r.order_process_bar == 100, 8)
    seen.clear()
    end = time.monotonic() + 1.0
    while time.monotonic() < end:                     # silence: the timeout fallback
        lc_rsp.handle_timeout(10)
    assert seen and seen[-1].mode == 7


def test_motionctl_plays_the_example_sequence(daemon):
    _, client = daemon
    played = motionctl("play", "config/sequences/stand_pose_lie.toml", "--timeout", "15", timeout=60)
    assert played.returncode == 0, played.stdout + played.stderr
    with client.lock:
        modes = [(s.mode, s.gait_id) for _, s in client.status]
    # Every step shows up in order: stand, relative pose, absolute height, lie down.
    seen = [m for i, m in enumerate(modes) if i == 0 or modes[i - 1] != m]
    order = [(12, 0), (21, 0), (21, 5), (7, 1)]
    positions = [seen.index(m) for m in order]
    assert positions == sorted(positions), seen


@pytest.mark.realtime
def test_trot_advances_global_to_robot_at_50_hz_and_a_goal_stops_on_target(joint_daemon):
    """The issue's user story over real LCM: trot forward while turning, the
    odometry on global_to_robot advances at the limited velocity at 50 Hz;
    then `motionctl goal move` walks 0.5 m and reports reached."""
    _, client = joint_daemon
    odom: list[tuple[int, msgs.localization_lcmt]] = []
    lock = threading.Lock()

    def on_odom(_ch, data):
        with lock:
            odom.append((time.monotonic_ns(), msgs.localization_lcmt.decode(data)))
    client.rx["joint"].subscribe(CH["global_to_robot"], on_odom)
    stand(client)
    client.send(11, 3, vel_des=[0.4, 0.0, 0.3], step_height=[0.05, 0.05])
    client.wait_for(lambda r: r.mode == 11 and r.gait_id == 3 and r.switch_status == 0, 3)
    client.hold(3.0)
    with lock:
        window = [m for t, m in odom if t >= odom[-1][0] - 2_000_000_000]
    # 50 Hz: every ODOMETRY_EVERY-th tick, stamped with its tick time. A tick
    # the loaded host stalls stretches one gap (the schedule restarts after an
    # overrun: CI once saw 48 messages/s over 2 s), so the median gap is the rate.
    gaps_ms = np.diff([m.timestamp for m in window]) / 1e6
    with client.lock:
        timing = client.status[-1][1]
    assert np.median(gaps_ms) == pytest.approx(1000.0 / 50, abs=0.5), (
        f"gaps {np.round(gaps_ms, 1)}; the daemon's tick: {timing.tick_overruns} overruns, "
        f"loop p99 {timing.loop_p99_us:.0f} us, lateness p99 {timing.lateness_p99_us:.0f} us")
    assert len(window) >= 0.8 * 2 * 50          # none lost in bulk
    assert window[-1].vBody[0] == pytest.approx(0.4, abs=1e-6)
    assert window[-1].omegaBody[2] == pytest.approx(0.3, abs=1e-6)
    # Speed along the path over the last 2 s equals the commanded 0.4 m/s. The
    # odometry integrates per tick, so the time is the ticks between messages
    # (every ODOMETRY_EVERY ticks): a tick the loaded host missed moves nothing.
    path = sum(np.hypot(b.xyz[0] - a.xyz[0], b.xyz[1] - a.xyz[1])
               for a, b in zip(window, window[1:]))
    elapsed = (len(window) - 1) * ODOMETRY_EVERY * CFG.dt
    assert path / elapsed == pytest.approx(0.4, rel=0.01)

    client.send(11, 1)                        # stand in locomotion, then the goal
    client.wait_for(lambda r: r.mode == 11 and r.gait_id == 1 and r.switch_status == 0, 5)
    with lock:
        x0 = odom[-1][1].xyz
        yaw0 = odom[-1][1].rpy[2]
    # Heartbeats (same life_count) keep the command timeout quiet while
    # motionctl starts; they do not pre-empt the goal.
    goal = subprocess.Popen([sys.executable, "-m", "controller.cli.motionctl", "goal", "move",
                             "0.5", "--timeout", "10"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while goal.poll() is None and time.monotonic() < deadline:
        client.hold(0.1)
    out = goal.communicate(timeout=5)[0]
    assert goal.returncode == 0, out
    time.sleep(0.3)                           # braking is over well within this
    with lock:
        x1 = odom[-1][1].xyz
    travelled = np.hypot(x1[0] - x0[0], x1[1] - x0[1])
    assert travelled == pytest.approx(0.5, abs=0.02)
    assert abs(np.arctan2(x1[1] - x0[1], x1[0] - x0[0]) - yaw0) < 0.05


def test_motionctl_plays_a_sequence_of_motions(daemon):
    """hi-five, sit, stretch and push-ups from a `motionctl play` file: every
    motion runs (none dropped), in order, each reported as mode 62 to 100 %."""
    _, client = daemon
    played = motionctl("play", "config/sequences/motions.toml", "--timeout", "30", timeout=120)
    assert played.returncode == 0, played.stdout + played.stderr
    with client.lock:
        shown = [(r.mode, r.gait_id, r.order_process_bar) for _, r in client.responses]
    finished = [gait for mode, gait, bar in shown if mode == 62 and bar == 100]
    order = [g for i, g in enumerate(finished) if i == 0 or finished[i - 1] != g]
    assert order == [1, 3, 6, 34]
    assert shown[-1][:2] == (7, 1)


def test_motionctl_script_waves_the_humanoid_arm_over_udpm(tmp_path):
    """A script requested by name over script_request plays on the humanoid
    daemon beside its stand, with SCRIPT_STARTED and SCRIPT_DONE FINISHED on
    motion_event, and the script in controller_status meanwhile; a name with a
    path is refused (exit 2)."""
    config = "config/humanoid20.yaml"
    with open(tmp_path / "motiond.log", "w") as log:       # the daemon has its own copy
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli.motiond", "--sim",
                                 "--config", config, "--log-level", "info"],
                                cwd=ROOT, stderr=log, stdout=log)
    client = Client()
    try:
        deadline = time.monotonic() + 15
        while not client.status:
            assert proc.poll() is None, (tmp_path / "motiond.log").read_text()
            assert time.monotonic() < deadline, "motiond did not publish controller_status"
            time.sleep(0.02)
        stand(client)
        wave = subprocess.Popen([sys.executable, "-m", "controller.cli.motionctl", "--config",
                                 config, "script", "Wave", "--timeout", "20"], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seen = set()
        deadline = time.monotonic() + 40
        while wave.poll() is None:         # the commander keeps the stand alive meanwhile
            assert time.monotonic() < deadline, "motionctl script did not end"
            client.heartbeat()
            with client.lock:
                seen |= {s.script.split(" frame")[0] for _, s in client.status if s.script}
            time.sleep(0.1)
        assert wave.stdout is not None
        out = wave.stdout.read()
        assert wave.returncode == 0, out
        assert "started request" in out and "FINISHED request" in out, out
        assert seen == {"Wave"}
        bad = motionctl("--config", config, "script", "../Wave", "--timeout", "5")
        assert bad.returncode == 2 and "path separator" in bad.stdout, bad.stdout
    finally:
        client.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(5)
        log.close()


def test_official_client_flow_runs_modes_80_81_and_jumps_2_4_5_9(daemon):
    """Issue 38, as an official client drives it over LCM: from a stand, each
    of the modes and ids the reference runs and motiond used to refuse is
    accepted (never switch_status 5) and reports what the SPEC says."""
    _, client = daemon
    stand(client)
    refused = lambda r: r.switch_status == 5          # noqa: E731 - a predicate
    for gait in (4, 2, 5, 9):
        client.send(16, gait)
        r = client.wait_for(lambda r, g=gait: r.mode == 16 and r.gait_id == g or refused(r), 4)
        assert r.switch_status != 5, f"jump 16/{gait} refused"
        client.wait_for(lambda r: r.mode == 16 and r.order_process_bar == 100, 6)
        stand(client)
    client.send(81, 0, vel_des=[0.0, 0.0, 0.3])
    r = client.wait_for(lambda r: r.mode == 81 or refused(r), 2)
    assert (r.mode, r.gait_id, r.switch_status, r.order_process_bar) == (81, 0, 0, 100)
    client.hold(1.0)
    stand(client)                                     # leaves after the yaw ramps down
    client.send(80, 3)
    r = client.wait_for(lambda r: r.mode == 80 or refused(r), 2)
    assert (r.mode, r.gait_id) == (80, 3) and r.switch_status != 5
    client.wait_for(lambda r: r.mode == 80 and r.order_process_bar == 100, 5)
    stand(client)                                     # every exit of 80 is immediate
