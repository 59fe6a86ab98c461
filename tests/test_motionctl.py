"""motionctl and controller.motion.sequence: sequence parsing, command building, life_count
choice, the send / wait / play logic and the watch rendering.

No sockets: the network side is a FakeBus driven by a FakeClock, so waits of
seconds take no real time and every published packet can be inspected.
"""
from __future__ import annotations

import dataclasses
import io
import itertools
import random
from pathlib import Path

import pytest

from controller.cli import client, goal_cmd, play_cmd, send_cmd, watch_cmd
from controller.cli import motionctl as mc
from controller.core import goals
from controller.core.goals import EventKind, GoalKind, Reason
from controller.core.odometry import Odometry
from controller.motion.sequence import (
    FieldError,
    SequenceError,
    build_command,
    group_steps,
    load_sequence,
    parse_sequence,
    zero_fields,
)
from controller.msgs import (
    controller_status_t,
    localization_lcmt,
    motion_event_t,
    motion_goal_t,
    robot_control_cmd_lcmt,
    robot_control_response_lcmt,
)
from controller.robot.config import LcmConfig, load_config
from controller.service.transport import Bus

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "config" / "sequences" / "stand_pose_lie.toml"
CFG = load_config()
RESPONSE = CFG.lcm.channels["response"]
STATUS = CFG.lcm.channels["status"]
COMMAND = CFG.lcm.channels["command"]
NAMES = CFG.fsm.name


# --------------------------------------------------------------------------- fakes

class FakeClock:
    """Time advances only by sleep(); optionally 'Ctrl-C' at a given time."""

    def __init__(self, interrupt_at: float | None = None) -> None:
        self.now = 0.0
        self.interrupt_at = interrupt_at

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now = round(self.now + seconds, 9)  # no float drift over thousands of steps
        if self.interrupt_at is not None and self.now >= self.interrupt_at:
            raise KeyboardInterrupt


class FakeBus:
    """Delivers scripted (time, channel, bytes) packets once their time has come."""

    def __init__(self, clock: FakeClock, script: list[tuple[float, str, bytes]] | None = None) -> None:
        self.clock = clock
        self.pending = sorted(script or [], key=lambda p: p[0])
        self.published: list[tuple[float, robot_control_cmd_lcmt]] = []
        self.subscribed: list[tuple[str, str]] = []

    def subscribe(self, port_name: str, channel: str) -> None:
        self.subscribed.append((port_name, channel))

    def drain(self) -> list[tuple[str, bytes]]:
        due = [p for p in self.pending if p[0] <= self.clock.now]
        self.pending = [p for p in self.pending if p[0] > self.clock.now]
        return [(ch, data) for _, ch, data in due]

    def publish(self, port_name: str, channel: str, data: bytes) -> None:
        assert (port_name, channel) == ("command", COMMAND)
        self.published.append((self.clock.now, robot_control_cmd_lcmt.decode(data)))


class FakeController(FakeBus):
    """A crude controller: answers each new life_count at 50 Hz with that command's
    mode and gait, progress reaching 100 % after `settle_s`; modes in `refuse`
    are answered with BAN_TRANS and the previous mode."""

    def __init__(self, clock: FakeClock, *, last_life_count: int = -1, refuse: frozenset[int] = frozenset(),
                 settle_s: float = 0.5) -> None:
        super().__init__(clock)
        self.last_life = last_life_count
        self.refuse = refuse
        self.settle_s = settle_s
        self.mode, self.gait, self.since, self.ban = 0, 0, 0.0, False
        self.accepted: list[tuple[float, robot_control_cmd_lcmt]] = []
        self._next_response = 0.0
        self._next_status = 0.0

    def publish(self, port_name: str, channel: str, data: bytes) -> None:
        super().publish(port_name, channel, data)
        cmd = self.published[-1][1]
        if cmd.life_count == self.last_life or cmd.mode == -1:
            return  # heartbeat (SPEC §2.3)
        self.last_life = cmd.life_count
        self.accepted.append((self.clock.now, cmd))
        self.ban = cmd.mode in self.refuse
        if not self.ban and (cmd.mode, cmd.gait_id) != (self.mode, self.gait):
            self.mode, self.gait, self.since = cmd.mode, cmd.gait_id, self.clock.now

    def drain(self) -> list[tuple[str, bytes]]:
        out = super().drain()
        now = self.clock.now
        if now >= self._next_status:
            self._next_status = now + 0.1
            out.append((STATUS, status_bytes(last_life_count=self.last_life, mode=self.mode)))
        if now >= self._next_response:
            self._next_response = now + 0.02
            bar = min(100, int((now - self.since) / self.settle_s * 100))
            out.append((RESPONSE, response_bytes(self.mode, self.gait, bar, 5 if self.ban else 0)))
        return out


def response_bytes(mode: int, gait: int, bar: int, switch: int = 0) -> bytes:
    msg = robot_control_response_lcmt()
    msg.mode, msg.gait_id, msg.order_process_bar, msg.switch_status = mode, gait, bar, switch
    return msg.encode()


def status_bytes(**fields: object) -> bytes:
    msg = controller_status_t()
    msg.mode_name = ""
    msg.last_error = ""
    for key, value in fields.items():
        setattr(msg, key, value)
    return msg.encode()


def responses(start: float, stop: float, mode: int, gait: int, bar: int | None = None,
              switch: int = 0, period: float = 0.02) -> list[tuple[float, str, bytes]]:
    """Responses every `period` in [start, stop); bar rises 0 -> 100 over the span if None."""
    out, t = [], start
    while t < stop - 1e-9:
        b = bar if bar is not None else int((t - start) / (stop - start) * 100)
        out.append((round(t, 6), RESPONSE, response_bytes(mode, gait, b, switch)))
        t += period
    return out


def make_link(bus: FakeBus) -> client.Link:
    return client.Link(bus, CFG.lcm, bus.clock)


class FixedRandom(random.Random):
    def __init__(self, value: int) -> None:
        super().__init__(0)
        self.value = value

    def randint(self, a: int, b: int) -> int:
        return self.value


def send(bus: FakeBus, fields: dict, *, wait: bool = True, timeout: float = 15.0,
         rng: random.Random | None = None) -> tuple[int, str]:
    out = io.StringIO()
    code = send_cmd.send_command(make_link(bus), fields, wait=wait, timeout=timeout, names=NAMES,
                           out=out, rng=rng or FixedRandom(42))
    return code, out.getvalue()


def write(tmp_path: Path, text: str, name: str = "seq.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- sequence files

def test_example_sequence_parses_with_inheritance() -> None:
    steps = load_sequence(EXAMPLE)
    assert [(s.number, s.mode, s.gait_id, s.duration) for s in steps] == [
        (1, 12, 0, 0), (2, 21, 0, 1000), (3, 21, 0, 1000), (4, 21, 5, 1500), (5, 7, 1, 0)]
    # Step 3 names only rpy_des and duration: mode, gait and contact come from step 2.
    assert steps[2].fields["contact"] == 15
    assert steps[2].fields["rpy_des"] == pytest.approx([0.0, -0.2, 0.0])
    assert steps[3].fields["pos_des"] == pytest.approx([0.0, 0.0, 0.2])
    assert steps[4].fields["contact"] == 15
    assert [[s.number for s in g] for g in group_steps(steps)] == [[1], [2, 3, 4], [5]]


def test_omitted_keys_keep_previous_value_and_first_step_starts_at_zero() -> None:
    doc = {"step": [
        {"mode": 11, "vel_des": [0.3, 0.0, 0.1], "step_height": [0.05, 0.05]},
        {"gait_id": 3},
        {"vel_des": [0.0, 0.0, 0.0], "foot_pose": [0.1, 0.2, 0.3]},
    ]}
    s1, s2, s3 = parse_sequence(doc, "doc")
    assert s1.fields == zero_fields() | {"mode": 11, "vel_des": [0.3, 0.0, 0.1], "step_height": [0.05, 0.05]}
    assert (s2.mode, s2.gait_id, s2.fields["vel_des"], s2.fields["step_height"]) == \
        (11, 3, [0.3, 0.0, 0.1], [0.05, 0.05])
    assert (s3.gait_id, s3.fields["vel_des"]) == (3, [0.0, 0.0, 0.0])
    assert s3.fields["foot_pose"] == [0.1, 0.2, 0.3, 0.0, 0.0, 0.0]  # 3 values padded to 6
    # Steps do not share lists: changing one cannot change another.
    s2.fields["vel_des"][0] = 9.0
    assert s1.fields["vel_des"][0] == 0.3


def test_life_count_in_a_step_is_accepted_and_ignored() -> None:
    (step,) = parse_sequence({"step": [{"mode": 12, "life_count": 200}]}, "doc")
    assert "life_count" not in step.fields


@pytest.mark.parametrize("body, step, key, reason", [
    ("mode = 12\n[[step]]\ngait = 1", 2, "gait", "unknown key"),
    ("mode = 1.5", 1, "mode", "expected an integer"),
    ("mode = '12'", 1, "mode", "expected an integer"),
    ("mode = true", 1, "mode", "expected an integer"),
    ("mode = 128", 1, "mode", "outside the int8 range [-128, 127]"),
    ("mode = 21\ncontact = -129", 1, "contact", "outside the int8 range"),
    ("mode = 21\n[[step]]\ngait_id = 300", 2, "gait_id", "outside the int8 range"),
    ("vel_des = [0.1, 0.2]", 1, "vel_des", "expected an array of 3 numbers"),
    ("foot_pose = [0.1, 0.2, 0.3, 0.4]", 1, "foot_pose", "expected an array of 3 or 6 numbers"),
    ("step_height = 0.05", 1, "step_height", "expected an array of 2 numbers"),
    ("rpy_des = [0.0, nan, 0.0]", 1, "rpy_des", "element 1: must be finite"),
    ("acc_des = [0.0, 0.0, 0.0, 0.0, 0.0, inf]", 1, "acc_des", "element 5: must be finite"),
    ("pos_des = [0.0, 0.0, 1e39]", 1, "pos_des", "does not fit a 32-bit float"),
    ("vel_des = [0.0, 'a', 0.0]", 1, "vel_des", "expected a number"),
    ("value = 2147483648", 1, "value", "outside the int32 range"),
    ("duration = -2", 1, "duration", "must be >= 0 ms"),
])
def test_invalid_step_names_file_step_and_key(tmp_path: Path, body: str, step: int, key: str,
                                              reason: str) -> None:
    path = write(tmp_path, "[[step]]\n" + body + "\n")
    with pytest.raises(SequenceError) as err:
        load_sequence(path)
    message = str(err.value)
    assert message.startswith(f"{path}: step {step}: {key}: "), message
    assert reason in message


@pytest.mark.parametrize("text, fragment", [
    ("[[step]\nmode = 12\n", "not valid TOML"),
    ("# nothing\n", "step: expected at least one [[step]] table"),
    ("speed = 1\n[[step]]\nmode = 12\n", "speed: unknown top-level key"),
    ("step = [1, 2]\n", "step 1: expected a table"),
])
def test_invalid_file_structure(tmp_path: Path, text: str, fragment: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SequenceError, match=fr"^{path}: .*") as err:
        load_sequence(path)
    assert fragment in str(err.value)


def test_unreadable_file() -> None:
    with pytest.raises(SequenceError, match="cannot read"):
        load_sequence("/nonexistent/seq.toml")


def test_one_ms_step_is_continuous_so_it_is_not_grouped() -> None:
    steps = parse_sequence({"step": [{"mode": 21, "duration": 500}, {"duration": 1},
                                     {"duration": 2}, {"duration": 400}]}, "doc")
    assert [[s.number for s in g] for g in group_steps(steps)] == [[1], [2], [3, 4]]


# --------------------------------------------------------------------------- command building

def test_build_command_round_trips_and_zero_fills() -> None:
    msg = build_command({"mode": 21, "gait_id": 5, "contact": 0x0F, "pos_des": [0.0, 0.0, 0.2],
                         "foot_pose": [0.01, 0.02, 0.03], "duration": 1500, "value": 8}, life_count=-128)
    back = robot_control_cmd_lcmt.decode(msg.encode())
    assert (back.mode, back.gait_id, back.contact, back.life_count) == (21, 5, 15, -128)
    assert (back.duration, back.value) == (1500, 8)
    assert back.pos_des == pytest.approx([0.0, 0.0, 0.2])
    assert back.foot_pose == pytest.approx([0.01, 0.02, 0.03, 0.0, 0.0, 0.0])
    assert list(back.vel_des) == [0.0] * 3 and list(back.acc_des) == [0.0] * 6
    assert list(back.step_height) == [0.0, 0.0]


def test_build_command_rejects_bad_values_instead_of_struct_error() -> None:
    with pytest.raises(FieldError, match="life_count: 128 is outside the int8 range"):
        build_command({"mode": 12}, life_count=128)
    with pytest.raises(FieldError, match="gait: unknown key"):
        build_command({"gait": 1}, life_count=0)


# --------------------------------------------------------------------------- life_count

@pytest.mark.parametrize("last, expected", [(5, 6), (126, 127), (127, -128), (-128, -127), (-2, 0), (-1, 0)])
def test_life_count_follows_the_controllers_last_value(last: int, expected: int) -> None:
    assert client.choose_life_count(last, random.Random(0)) == expected


def test_life_count_without_status_is_random_int8_never_minus_one() -> None:
    rng = random.Random(1)
    seen = {client.choose_life_count(None, rng) for _ in range(20000)}
    assert -1 not in seen
    assert seen == set(range(-128, 128)) - {-1}
    assert client.choose_life_count(None, FixedRandom(-1)) == 127


# --------------------------------------------------------------------------- send

def test_send_uses_status_life_count_and_heartbeats_every_100ms_until_interrupted() -> None:
    clock = FakeClock(interrupt_at=1.0)
    bus = FakeBus(clock, [(0.05, STATUS, status_bytes(last_life_count=127))])
    code, out = send(bus, {"mode": 12}, wait=False)
    assert code == client.EXIT_OK
    times = [t for t, _ in bus.published]
    assert times[0] == pytest.approx(0.05)
    assert {m.life_count for _, m in bus.published} == {-128}  # wrapped, and the same every time
    assert {m.encode() for _, m in bus.published} == {bus.published[0][1].encode()}
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(gaps) >= 8 and all(0.1 - 1e-9 <= g <= 0.11 + 1e-9 for g in gaps)
    assert "life_count -128" in out and "stopped sending" in out


def test_send_without_status_waits_300ms_then_uses_a_random_life_count() -> None:
    bus = FakeBus(FakeClock(interrupt_at=0.5))
    send(bus, {"mode": 7, "gait_id": 1}, wait=False, rng=FixedRandom(42))
    t0, first = bus.published[0]
    assert t0 == pytest.approx(0.3, abs=0.011)
    assert (first.mode, first.gait_id, first.life_count) == (7, 1, 42)


def test_send_wait_done_when_mode_and_gait_reach_95_percent() -> None:
    clock = FakeClock()
    # Sent at 0.3 s (no status). Progress rises from 0 at 0.4 s to 100 at 1.4 s: 95 % at 1.35 s.
    bus = FakeBus(clock, responses(0.31, 0.4, 0, 0, bar=100) + responses(0.4, 1.4, 12, 0))
    code, out = send(bus, {"mode": 12})
    assert code == client.EXIT_OK
    assert clock.now == pytest.approx(1.35, abs=0.025)
    done, letting_go = out.strip().splitlines()[-2:]
    assert done == "done: RECOVERY_STAND (12) gait 0"
    assert letting_go == send_cmd.LETTING_GO       # standing, and nothing keeps it up after this


def test_send_wait_ignores_a_stale_response_in_flight_at_send_time() -> None:
    clock = FakeClock()
    # A response from before our command says 21/0 at 100 %; ours then restarts at 0 %.
    script = [(0.31, RESPONSE, response_bytes(21, 0, 100))] + responses(0.32, 1.32, 21, 0)
    code, _ = send(FakeBus(clock, script), {"mode": 21, "duration": 1000})
    assert code == client.EXIT_OK
    assert clock.now > 1.2


def test_send_wait_requires_the_gait_too() -> None:
    clock = FakeClock()
    bus = FakeBus(clock, responses(0.3, 5.0, 21, 3, bar=100))
    code, out = send(bus, {"mode": 21, "gait_id": 0}, timeout=2.0)
    assert code == client.EXIT_TIMEOUT
    assert clock.now == pytest.approx(2.3, abs=0.02)
    assert "timeout: POSE_CTRL (21) gait 0 not finished within 2 s (last: POSE_CTRL (21) gait 3" in out


def test_send_wait_mode_62_matches_motion_id_and_waits_for_the_motion_to_end() -> None:
    clock = FakeClock()
    # 62/2 at 100 % until 2.3 s, then the motion ends into the pose-hold filler.
    script = responses(0.3, 2.3, 62, 2) + responses(2.32, 3.0, 21, 3, bar=100)
    assert send(FakeBus(clock, script), {"mode": 62, "gait_id": 2})[0] == client.EXIT_OK
    assert 2.3 <= clock.now < 2.4
    # Still in the motion at the timeout: not finished.
    bus = FakeBus(FakeClock(), responses(0.3, 5.0, 62, 2, bar=100))
    assert send(bus, {"mode": 62, "gait_id": 2}, timeout=2.0)[0] == client.EXIT_TIMEOUT


def test_send_wait_refused_after_100ms_of_ban_trans() -> None:
    clock = FakeClock()
    bus = FakeBus(clock, responses(0.3, 5.0, 0, 0, bar=100, switch=5))
    code, out = send(bus, {"mode": 21})
    assert code == client.EXIT_REFUSED
    # The 0.30 s response predates the send and is dropped; 5 from 0.32 s, held
    # 100 ms; then up to REASON_WAIT_S for motiond's reason, which this
    # controller never sends.
    assert clock.now == pytest.approx(0.42 + client.REASON_WAIT_S, abs=0.015)
    assert "refused: OFF (0) does not switch to POSE_CTRL (21) gait 0" in out


def test_a_refusal_says_the_daemons_own_reason_and_a_lapsed_heartbeat_how_to_keep_it() -> None:
    clock = FakeClock()
    reason = ("PURE_DAMPER cannot switch to POSE_CTRL (transition table): the heartbeat lapsed "
              "(no command for 500 ms), so the robot was sent to PURE_DAMPER (7)")
    bus = FakeBus(clock, responses(0.3, 5.0, 7, 0, bar=100, switch=5)
                  + [(t, STATUS, status_bytes(mode=7, last_error=f"mode 21 refused: {reason}"))
                     for t in (0.35, 0.45, 0.55)])
    code, out = send(bus, {"mode": 21, "gait_id": 5})
    assert code == client.EXIT_REFUSED
    assert clock.now == pytest.approx(0.42, abs=0.015)          # its reason came with the refusal
    assert f"refused: POSE_CTRL (21) gait 5: {reason} (switch_status 5 BAN_TRANS)" in out
    assert "`motionctl hold --start` keeps it between commands" in out


def test_send_wait_brief_ban_trans_is_not_a_refusal() -> None:
    # 60 ms of a stale BAN_TRANS, then the transition happens and completes.
    script = (responses(0.3, 0.36, 0, 0, bar=100, switch=5) + responses(0.36, 0.5, 0, 0, bar=100, switch=1)
              + responses(0.5, 1.5, 12, 0))
    assert send(FakeBus(FakeClock(), script), {"mode": 12})[0] == client.EXIT_OK


def test_send_wait_times_out_without_responses() -> None:
    clock = FakeClock()
    code, out = send(FakeBus(clock), {"mode": 12}, timeout=1.5)
    assert code == client.EXIT_TIMEOUT
    assert clock.now == pytest.approx(1.8, abs=0.02)
    assert "no response received" in out


def test_send_wait_interrupted_exits_130() -> None:
    assert send(FakeBus(FakeClock(interrupt_at=1.0)), {"mode": 12})[0] == client.EXIT_INTERRUPTED


def test_undecodable_packets_are_counted_not_raised() -> None:
    clock = FakeClock()
    bus = FakeBus(clock, [(0.0, RESPONSE, b"garbage"), (0.0, STATUS, b"\x00" * 8)])
    link = make_link(bus)
    assert link.poll() == []
    assert link.undecodable == 2
    assert ("response", RESPONSE) in bus.subscribed and ("joint", STATUS) in bus.subscribed


# --------------------------------------------------------------------------- trackers

def test_batch_tracker_adds_transitioning_time_to_the_schedule() -> None:
    tracker = play_cmd.BatchTracker([1000, 500], sent_at=0.0, timeout=5.0)
    resp = robot_control_response_lcmt()
    resp.switch_status = 1
    assert tracker.feed(resp, 0.0) is None
    resp.switch_status = 0
    assert tracker.feed(resp, 0.3) is None    # 0.3 s frozen
    assert tracker.active_index(1.2) == 0      # only 0.9 s of block time used
    assert tracker.active_index(1.4) == 1
    assert tracker.check(1.89) is None
    assert tracker.check(1.91) is client.Outcome.DONE   # 1.5 + 0.1 tail + 0.3 frozen


def _response(mode: int, gait_id: int, switch_status: int = 0) -> robot_control_response_lcmt:
    resp = robot_control_response_lcmt()
    resp.mode, resp.gait_id, resp.switch_status = mode, gait_id, switch_status
    return resp


def test_batch_tracker_times_the_last_block_from_when_the_controller_shows_it() -> None:
    """A controller whose ticks run late starts the last block after the
    wall clock's schedule: the batch is done once that block has run its
    duration since the response first showed it, not at the schedule."""
    tracker = play_cmd.BatchTracker([1000, 1500], sent_at=0.0, timeout=5.0, keys=[(21, 0), (21, 5)])
    assert tracker.feed(_response(21, 0), 0.1) is None
    assert tracker.feed(_response(21, 0), 2.6) is None          # the schedule's end, not started yet
    assert tracker.feed(_response(21, 5), 1.5 + 1.5) is None    # first shown at 3.0 s
    assert tracker.check(3.0 + 1.5 + 0.09) is None
    assert tracker.check(3.0 + 1.5 + 0.11) is client.Outcome.DONE
    # Time frozen in TRANSITIONING after it showed is added as before.
    tracker = play_cmd.BatchTracker([1000, 1500], sent_at=0.0, timeout=5.0, keys=[(21, 0), (21, 5)])
    tracker.feed(_response(21, 5), 1.0)
    tracker.feed(_response(21, 5, switch_status=1), 1.2)
    tracker.feed(_response(21, 5), 1.7)                          # 0.5 s frozen
    assert tracker.check(1.0 + 1.5 + 0.5 + 0.09) is None
    assert tracker.check(1.0 + 1.5 + 0.5 + 0.11) is client.Outcome.DONE


def test_batch_tracker_keeps_the_schedule_where_the_last_block_cannot_be_told_apart() -> None:
    # The same mode and gait as the step before: the wall clock's schedule.
    same = play_cmd.BatchTracker([1000, 1000], sent_at=0.0, timeout=5.0, keys=[(21, 0), (21, 0)])
    same.feed(_response(21, 0), 0.1)
    assert same.check(2.09) is None and same.check(2.11) is client.Outcome.DONE
    # A controller that never shows the last step's gait_id: waited for at most
    # `timeout` past the schedule, then done as the schedule says.
    never = play_cmd.BatchTracker([1000, 1000], sent_at=0.0, timeout=3.0, keys=[(21, 0), (21, 5)])
    never.feed(_response(21, 0), 0.1)
    assert never.check(2.11) is None
    assert never.check(2.1 + 3.0 - 0.01) is None and never.check(2.1 + 3.0 + 0.01) is client.Outcome.DONE


def test_batch_tracker_times_out_when_stuck_transitioning() -> None:
    tracker = play_cmd.BatchTracker([100], sent_at=0.0, timeout=2.0)
    resp = robot_control_response_lcmt()
    resp.switch_status = 1
    tracker.feed(resp, 0.0)
    assert tracker.check(1.9) is None
    assert tracker.check(2.1) is client.Outcome.TIMEOUT


# --------------------------------------------------------------------------- play

def play(bus: FakeBus, steps: list, timeout: float = 15.0) -> tuple[int, str]:
    out = io.StringIO()
    player = play_cmd.Player(make_link(bus), steps, timeout=timeout, names=NAMES, out=out, rng=FixedRandom(42))
    return player.run(), out.getvalue()


def test_play_example_sequence() -> None:
    clock = FakeClock()
    bus = FakeController(clock, last_life_count=10)
    code, out = play(bus, load_sequence(EXAMPLE))
    assert code == client.EXIT_OK, out
    sent = [(t, m.life_count, m.mode, m.gait_id, m.duration) for t, m in bus.accepted]
    assert [s[1:] for s in sent] == [(11, 12, 0, 0), (12, 21, 0, 1000), (13, 21, 0, 1000),
                                     (14, 21, 5, 1500), (15, 7, 1, 0)]
    # Timed steps go back-to-back, 10 ms apart; the last step waits for their 3.5 s + 0.1 s.
    assert sent[2][0] - sent[1][0] == pytest.approx(0.01) and sent[3][0] - sent[2][0] == pytest.approx(0.01)
    assert sent[4][0] - sent[1][0] == pytest.approx(3.6, abs=0.02)
    # The first step was done (100 % after 0.5 s) before the group was sent.
    assert sent[1][0] - sent[0][0] == pytest.approx(0.5, abs=0.06)
    lines = [line for line in out.splitlines() if line.startswith("step ")]
    assert lines == ["step 1/5: RECOVERY_STAND (12) gait 0, continuous",
                     "step 2/5: POSE_CTRL (21) gait 0, 1000 ms",
                     "step 3/5: POSE_CTRL (21) gait 0, 1000 ms",
                     "step 4/5: POSE_CTRL (21) gait 5, 1500 ms",
                     "step 5/5: PURE_DAMPER (7) gait 1, continuous"]
    assert out.strip().splitlines()[-1].startswith("done: 5 steps in ")
    # Heartbeats in between repeat an accepted life_count.
    assert len(bus.published) > 30
    assert {m.life_count for _, m in bus.published} == {11, 12, 13, 14, 15}


def test_play_stops_at_a_refused_step() -> None:
    bus = FakeController(FakeClock(), refuse=frozenset({21}))
    code, out = play(bus, load_sequence(EXAMPLE))
    assert code == client.EXIT_REFUSED
    assert [m.mode for _, m in bus.accepted] == [12, 21, 21, 21]   # step 5 never sent
    assert "stopped at step 2/5: refused: RECOVERY_STAND (12) does not switch to POSE_CTRL (21)" in out


def test_play_times_out_on_a_continuous_step() -> None:
    bus = FakeController(FakeClock(), settle_s=1e9)  # never reaches 95 %
    code, out = play(bus, load_sequence(EXAMPLE), timeout=2.0)
    assert code == client.EXIT_TIMEOUT
    assert "stopped at step 1/5: timeout" in out


def test_play_interrupted_exits_130() -> None:
    bus = FakeController(FakeClock(interrupt_at=2.0))
    code, out = play(bus, load_sequence(EXAMPLE))
    assert code == client.EXIT_INTERRUPTED
    assert "interrupted at step 3/5" in out


# --------------------------------------------------------------------------- watch

def make_status(**fields: object) -> controller_status_t:
    return controller_status_t.decode(status_bytes(**fields))


def make_response(mode: int, gait: int, bar: int, switch: int = 0) -> robot_control_response_lcmt:
    return robot_control_response_lcmt.decode(response_bytes(mode, gait, bar, switch))


def test_render_status_shows_every_figure() -> None:
    status = make_status(tick=1234, mode=21, gait_id=0, mode_name="POSE_CTRL", switch_status=1,
                         progress=50, queue_depth=3, block_remaining_ms=420, last_life_count=7,
                         commands_accepted=5, heartbeats=96, packets_rejected=2, commands_rejected=1,
                         timeouts=4, tick_overruns=6, lateness_p50_us=12.0, lateness_p99_us=85.4,
                         lateness_max_us=310.0, loop_p99_us=140.0, last_error="refused 0 -> 21")
    resp = make_response(21, 0, 49, 1)
    resp.contact, resp.footpos_error = 0x0F, 0x004
    resp.motor_error = [0] * 12
    resp.motor_error[3] = 0x1 | (2 << 30)     # offline, in motor mode
    resp.motor_error[5] = -(2**31)            # mode bits only: not a fault
    text = watch_cmd.render_status(status, resp, NAMES)
    for part in ["tick 1234", "POSE_CTRL (21)   gait 0", "[##########----------]  50 %",
                 "TRANSITIONING (1)", "3 blocks, 420 ms left", "p50 12 us", "p99 85 us", "max 310 us",
                 "loop p99 140 us", "overruns 6", "accepted 5", "heartbeats 96", "packets rejected 2",
                 "commands rejected 1", "timeouts 4", "contact 0xF", "footpos_error 0x004",
                 "motors 3:0x1", "error     refused 0 -> 21"]:
        assert part in text, part
    assert "\x1b" not in text


def test_render_status_without_status_falls_back_to_the_response() -> None:
    text = watch_cmd.render_status(None, make_response(12, 0, 100), NAMES)
    assert "no controller_status" in text
    assert "RECOVERY_STAND (12)" in text and "[####################] 100 %" in text
    assert "motors ok" in text
    assert "waiting" in watch_cmd.render_status(None, None)


@pytest.mark.parametrize("percent, bar", [(0, "[" + "-" * 20 + "]"), (100, "[" + "#" * 20 + "]"),
                                          (-5, "[" + "-" * 20 + "]"), (127, "[" + "#" * 20 + "]"),
                                          (25, "[#####" + "-" * 15 + "]")])
def test_progress_bar(percent: int, bar: str) -> None:
    assert watch_cmd.progress_bar(percent) == bar


def test_watch_once_prints_a_snapshot() -> None:
    clock = FakeClock()
    bus = FakeBus(clock, [(0.4, STATUS, status_bytes(mode=12, mode_name="RECOVERY_STAND", progress=80)),
                          (0.42, RESPONSE, response_bytes(12, 0, 80))])
    out = io.StringIO()
    assert watch_cmd.watch_once(make_link(bus), out, NAMES) == client.EXIT_OK
    assert "RECOVERY_STAND (12)" in out.getvalue() and "response  RECOVERY_STAND (12)" in out.getvalue()
    assert clock.now < 0.5


def test_watch_once_without_status_exits_3() -> None:
    clock = FakeClock()
    assert watch_cmd.watch_once(make_link(FakeBus(clock)), io.StringIO(), NAMES) == client.EXIT_TIMEOUT
    assert clock.now == pytest.approx(2.0, abs=0.011)


def test_watch_plain_output_is_one_line_per_status() -> None:
    clock = FakeClock(interrupt_at=0.35)
    bus = FakeBus(clock, [(t, STATUS, status_bytes(tick=round(t * 500), mode=7, mode_name="PURE_DAMPER"))
                          for t in (0.1, 0.2, 0.3)])
    out = io.StringIO()
    assert watch_cmd.watch_live(make_link(bus), out, NAMES, tty=False) == client.EXIT_OK
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and lines[0].startswith("tick 50 PURE_DAMPER (7)")


# --------------------------------------------------------------------------- command line

def test_send_options_become_fields() -> None:
    args = mc.build_parser().parse_args(
        ["send", "--mode", "21", "--contact", "0x0E", "--vel", "-0.1", "0", "0.5", "--foot-pose", "0.05",
         "--step-height", "0.05", "0.05", "--duration", "1000", "--wait"])
    fields = send_cmd.fields_from_args(args, CFG.fsm.names)
    assert fields == {"mode": 21, "contact": 14, "vel_des": [-0.1, 0.0, 0.5],
                      "foot_pose": [0.05, 0.0, 0.0, 0.0, 0.0, 0.0], "step_height": [0.05, 0.05],
                      "duration": 1000}
    msg = build_command(fields, 3)
    assert (msg.gait_id, msg.contact, msg.rpy_des) == (0, 14, [0.0, 0.0, 0.0])
    assert args.wait and args.timeout == 15.0


@pytest.mark.parametrize("argv, message", [
    (["send", "--mode", "128"], "argument --mode: 128 is outside the int8 range [-128, 127]"),
    (["send", "--mode", "12", "--gait", "-129"], "argument --gait: -129 is outside the int8 range"),
    (["send", "--mode", "12", "--contact", "0x100"], "argument --contact: 256 is outside the int8 range"),
    (["send", "--mode", "x"], "send: --mode 'x': not a mode number or word (damper, lie,"),
    (["send", "--mode", "trot", "--gait", "gallop"], "send: --gait 'gallop': not a gait number or word"),
    (["send", "--mode", "12", "--rpy", "0", "inf", "0"], "argument --rpy: must be finite"),
    (["send", "--mode", "12", "--foot-pose", "1", "2", "3", "4", "5", "6", "7"], "at most 6 numbers"),
    (["send", "--mode", "12", "--timeout", "0"], "argument --timeout: must be > 0"),
    (["send"], "the following arguments are required: --mode"),
    ([], "the following arguments are required: COMMAND"),
])
def test_usage_errors_exit_1_with_a_clear_message(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                  message: str) -> None:
    assert mc.main(argv) == client.EXIT_USAGE
    assert message in capsys.readouterr().err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert mc.main(["play", "--help"]) == 0
    assert "[[step]]" in capsys.readouterr().out


def test_bad_config_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert mc.main(["--config", str(tmp_path / "missing.yaml"), "watch", "--once"]) == client.EXIT_USAGE
    assert "missing.yaml: cannot read" in capsys.readouterr().err


def test_bad_sequence_exits_1_before_sending(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "[[step]]\nmode = 12\n[[step]]\nmode = 21\nrpy_des = [0, 0]\n")
    assert mc.main(["play", str(path)]) == client.EXIT_USAGE
    assert f"{path}: step 2: rpy_des: expected an array of 3 numbers" in capsys.readouterr().err


# --------------------------------------------------------------------------- goal

EVENT = client.EVENT_CHANNEL
ODOMETRY = client.ODOMETRY_CHANNEL


def event_bytes(kind: int, goal_id: int, reason: int = 0, goal_kind: int = 1, text: str = "",
                x: float = 0.0, value: float = 0.0) -> bytes:
    event = goals.Event(kind=kind, goal_id=goal_id, goal_kind=goal_kind, reason=reason, x=x, value=value,
                        text=text)
    return goals.to_msg(event, 0).encode()


class FakeGoalDaemon:
    """Answers each motion goal: ACCEPTED after 2 ms (or GOAL_DONE `refuse` text), then for
    moves a GOAL_DONE with `reason` after `run_s`. `silent` answers nothing."""

    def __init__(self, clock: FakeClock, *, reason: int = Reason.REACHED, run_s: float = 1.0,
                 refuse: str = "", silent: bool = False, extra: list[tuple[float, str, bytes]] | None = None) -> None:
        self.clock = clock
        self.reason, self.run_s, self.refuse, self.silent = reason, run_s, refuse, silent
        self.pending: list[tuple[float, str, bytes]] = list(extra or [])
        self.goals: list[tuple[float, motion_goal_t]] = []
        self.subscribed: list[tuple[str, str]] = []

    def subscribe(self, port_name: str, channel: str) -> None:
        self.subscribed.append((port_name, channel))

    def publish(self, port_name: str, channel: str, data: bytes) -> None:
        assert (port_name, channel) == ("command", client.GOAL_CHANNEL)
        msg = motion_goal_t.decode(data)
        now = self.clock.now
        self.goals.append((now, msg))
        if self.silent:
            return
        if self.refuse:
            self.pending.append((now + 0.002, EVENT, event_bytes(
                EventKind.GOAL_DONE, msg.goal_id, Reason.REFUSED, msg.kind, self.refuse)))
            return
        self.pending.append((now + 0.002, EVENT, event_bytes(EventKind.ACCEPTED, msg.goal_id, 0, msg.kind)))
        if msg.kind in (GoalKind.MOVE_DISTANCE, GoalKind.MOVE_CONTINUOUS):
            self.pending.append((now + self.run_s, EVENT, event_bytes(
                EventKind.GOAL_DONE, msg.goal_id, self.reason, msg.kind, "the end", x=0.5, value=0.5)))

    def drain(self) -> list[tuple[str, bytes]]:
        due = [p for p in self.pending if p[0] <= self.clock.now]
        self.pending = [p for p in self.pending if p[0] > self.clock.now]
        return [(ch, data) for _, ch, data in sorted(due, key=lambda p: p[0])]


def parse_goal(argv: list[str]) -> motion_goal_t:
    return goal_cmd.goal_from_args(mc.build_parser().parse_args(["goal", *argv]))


def run_goal(daemon: FakeGoalDaemon, argv: list[str]) -> tuple[int, str]:
    args = mc.build_parser().parse_args(["goal", *argv])
    out = io.StringIO()
    link = client.Link(daemon, CFG.lcm, daemon.clock, ("event",))
    code = goal_cmd.send_goal(link, goal_cmd.goal_from_args(args), wait=getattr(args, "wait", True), out=out,
                        rng=FixedRandom(77), goal_id=args.id)
    return code, out.getvalue()


@pytest.mark.parametrize("argv, expected", [
    (["move", "1.0"], {"kind": GoalKind.MOVE_DISTANCE, "distance": 1.0, "angle": 0.0, "timeout": 30.0}),
    (["move", "-0.5", "--angle", "1.5", "--timeout", "8"],
     {"kind": GoalKind.MOVE_DISTANCE, "distance": -0.5, "angle": 1.5, "timeout": 8.0}),
    (["cont", "0.2", "-0.1", "--timeout", "3"],
     {"kind": GoalKind.MOVE_CONTINUOUS, "speed": pytest.approx(0.2), "rotation": pytest.approx(-0.1),
      "timeout": 3.0}),
    (["stop"], {"kind": GoalKind.STOP}),
    (["profile", "1", "0.5", "0.8"], {"kind": GoalKind.SET_SPEED_PROFILE, "max_acc": 1.0, "max_speed": 0.5,
                                      "max_rotation": pytest.approx(0.8)}),
    (["odom", "1", "-2", "0.5"], {"kind": GoalKind.SET_ODOMETRY, "x": 1.0, "y": -2.0, "yaw": 0.5}),
    (["area", "0", "-1", "2", "1"], {"kind": GoalKind.AREA, "x1": 0.0, "y1": -1.0, "x2": 2.0, "y2": 1.0,
                                     "enable": 1}),
    (["area", "--off"], {"kind": GoalKind.AREA, "enable": 0}),
    (["battery", "22.5"], {"kind": GoalKind.BATTERY_LOW, "voltage": 22.5, "enable": 1}),
    (["battery", "--off"], {"kind": GoalKind.BATTERY_LOW, "enable": 0}),
])
def test_goal_arguments_become_a_motion_goal(argv: list[str], expected: dict[str, object]) -> None:
    msg = motion_goal_t.decode(parse_goal(argv).encode())   # what goes on the wire
    assert {key: getattr(msg, key) for key in expected} == expected


@pytest.mark.parametrize("argv, message", [
    (["goal"], "the following arguments are required: ACTION"),
    (["goal", "move"], "the following arguments are required: DISTANCE"),
    (["goal", "move", "nan"], "argument DISTANCE: must be finite"),
    (["goal", "move", "1", "--timeout", "0"], "argument --timeout: must be > 0"),
    (["goal", "move", "1", "--timeout", "601"], "goal move: timeout 601 is outside (0, 600]"),
    (["goal", "move", "1", "--angle", "900"], "goal move: angle 900 is outside"),
    (["goal", "cont", "0.2", "0"], "the following arguments are required: --timeout"),
    (["goal", "profile", "1", "0", "1"], "goal profile: max_speed 0 is outside (0, 2]"),
    (["goal", "area", "0", "0", "1"], "goal area: expected X1 Y1 X2 Y2 (or --off), got 3 numbers"),
    (["goal", "area", "1", "0", "0", "1"], "goal area: area needs x1 < x2 and y1 < y2"),
    (["goal", "battery"], "goal battery: expected VOLTS (or --off)"),
    (["goal", "stop", "--id", "0x100000000"], "argument --id: 4294967296 is outside the int32 range"),
])
def test_goal_usage_errors_exit_1_before_sending(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                 message: str) -> None:
    assert mc.main(argv) == client.EXIT_USAGE
    assert message in capsys.readouterr().err


def test_goal_help_is_true(capsys: pytest.CaptureFixture[str]) -> None:
    assert mc.main(["goal", "--help"]) == 0
    text = capsys.readouterr().out
    for action in ("move", "cont", "stop", "profile", "odom", "area", "battery"):
        assert f"    {action} " in text
    assert "4    goal pre-empted" in text
    assert mc.main(["goal", "cont", "--help"]) == 0
    assert "GOAL_DONE REACHED, exit 0" in " ".join(capsys.readouterr().out.split())


def test_goal_move_waits_for_reached() -> None:
    clock = FakeClock()
    daemon = FakeGoalDaemon(clock, run_s=2.5)
    code, out = run_goal(daemon, ["move", "0.5", "--id", "7"])
    assert code == client.EXIT_OK
    assert clock.now == pytest.approx(2.5, abs=0.011)
    (t, sent), = daemon.goals
    assert (t, sent.goal_id, sent.kind, sent.distance) == (0.0, 7, GoalKind.MOVE_DISTANCE, 0.5)
    assert sent.utime > 0
    lines = out.splitlines()
    assert lines[0] == "sent MOVE_DISTANCE goal 7"
    assert lines[1].startswith("  ACCEPTED goal 7 (MOVE_DISTANCE)")
    assert lines[-1] == "done: GOAL_DONE REACHED goal 7 (MOVE_DISTANCE) at x 0.500 y 0.000 yaw 0.000: the end"
    assert ("command", EVENT) in daemon.subscribed


@pytest.mark.parametrize("reason, code, word", [
    (Reason.TIMEOUT, client.EXIT_TIMEOUT, "timeout: GOAL_DONE TIMEOUT"),
    (Reason.PREEMPTED, client.EXIT_PREEMPTED, "ended: GOAL_DONE PREEMPTED"),
    (Reason.CANCELLED, client.EXIT_PREEMPTED, "ended: GOAL_DONE CANCELLED"),
    (Reason.REFUSED, client.EXIT_REFUSED, "refused: GOAL_DONE REFUSED"),
    (99, client.EXIT_PREEMPTED, "ended: GOAL_DONE UNKNOWN_99"),
])
def test_goal_move_exit_code_follows_the_reason(reason: int, code: int, word: str) -> None:
    result, out = run_goal(FakeGoalDaemon(FakeClock(), reason=reason), ["cont", "0.1", "0", "--timeout", "1"])
    assert result == code
    assert out.splitlines()[-1].startswith(word)


def test_goal_refused_at_once_exits_2() -> None:
    code, out = run_goal(FakeGoalDaemon(FakeClock(), refuse="distance is not finite"), ["move", "1"])
    assert code == client.EXIT_REFUSED
    assert out.splitlines()[-1] == ("refused: GOAL_DONE REFUSED goal 77 (MOVE_DISTANCE) at x 0.000 y 0.000 "
                                    "yaw 0.000: distance is not finite")


def test_goal_without_answer_times_out_after_a_second() -> None:
    clock = FakeClock()
    code, out = run_goal(FakeGoalDaemon(clock, silent=True), ["odom", "0", "0", "0"])
    assert code == client.EXIT_TIMEOUT
    assert clock.now == pytest.approx(goal_cmd.GOAL_ACK_S, abs=0.011)
    assert "no answer to goal 77 within 1 s (is motiond running, with motion goals?)" in out


def test_goal_move_without_done_times_out_after_its_timeout_and_a_margin() -> None:
    clock = FakeClock()
    code, out = run_goal(FakeGoalDaemon(clock, run_s=100.0), ["move", "1", "--timeout", "3"])
    assert code == client.EXIT_TIMEOUT
    assert clock.now == pytest.approx(3.0 + goal_cmd.GOAL_DONE_MARGIN_S, abs=0.02)
    assert "goal 77 not done within 5 s of its acceptance" in out


def test_goal_settings_are_done_when_accepted() -> None:
    clock = FakeClock()
    for argv in (["profile", "1", "0.5", "1"], ["stop"], ["area", "0", "0", "1", "1"], ["battery", "--off"]):
        code, out = run_goal(FakeGoalDaemon(clock), argv)
        assert code == client.EXIT_OK, out
        assert out.splitlines()[-1].startswith("done: ACCEPTED goal 77")
    assert clock.now < 0.1


def test_goal_move_no_wait_returns_once_accepted() -> None:
    clock = FakeClock()
    code, _ = run_goal(FakeGoalDaemon(clock, run_s=5.0), ["move", "1", "--no-wait"])
    assert code == client.EXIT_OK and clock.now < 0.1


def test_goal_ignores_other_goals_events() -> None:
    clock = FakeClock()
    extra = [(0.5, EVENT, event_bytes(EventKind.GOAL_DONE, 5, Reason.REFUSED)),
             (0.6, EVENT, event_bytes(EventKind.AREA_LEFT, 78, 0, GoalKind.AREA))]
    code, _ = run_goal(FakeGoalDaemon(clock, run_s=1.0, extra=extra), ["move", "1"])
    assert code == client.EXIT_OK and clock.now == pytest.approx(1.0, abs=0.011)


def test_goal_move_interrupted_sends_stop() -> None:
    daemon = FakeGoalDaemon(FakeClock(interrupt_at=0.5), run_s=5.0)
    code, out = run_goal(daemon, ["move", "1"])
    assert code == client.EXIT_INTERRUPTED
    assert [m.kind for _, m in daemon.goals] == [GoalKind.MOVE_DISTANCE, GoalKind.STOP]
    assert "interrupted: sent STOP goal" in out


def test_goal_tracker_needs_the_goal_id() -> None:
    tracker = goal_cmd.GoalTracker(3, is_move=True, sent_at=0.0, run_wait=2.0)
    other = motion_event_t.decode(event_bytes(EventKind.ACCEPTED, 4))
    assert tracker.feed(other, 0.1) is None and tracker.accepted_at is None
    assert tracker.feed(motion_event_t.decode(event_bytes(EventKind.ACCEPTED, 3)), 0.2) is None
    assert tracker.check(2.19) is None and tracker.check(2.2) is client.Outcome.TIMEOUT


class MemqLcm(LcmConfig):
    """The configured channels on one in-process memq:// LCM: real encoding, no socket."""

    def url(self, port_name: str) -> str:
        return "memq://"


class RobotClock(FakeClock):
    """Fake time that runs a GoalExecutor at 500 Hz, as motiond would, while motionctl sleeps."""

    def __init__(self) -> None:
        super().__init__()
        self.executor, self.odom = goals.GoalExecutor(), Odometry()
        self.bus: Bus | None = None
        self._ns = 0

    def on_goal(self, channel: str, data: bytes) -> None:
        self.publish(self.executor.on_goal(motion_goal_t.decode(data), self._ns, self.odom))

    def publish(self, events: list[goals.Event]) -> None:
        assert self.bus is not None
        for event in events:
            self.bus.publish("command", EVENT, goals.to_msg(event, self._ns // 1000).encode())

    def sleep(self, seconds: float) -> None:
        end = round((self.now + seconds) * 1e9)
        while self._ns < end:
            velocity, events = self.executor.step(self._ns, self.odom, None)
            self.publish(events)
            self.odom.integrate(velocity or (0.0, 0.0, 0.0), 0.002)
            self._ns += 2_000_000
        super().sleep(seconds)


def test_goal_move_over_memq_lcm_with_the_real_executor() -> None:
    lcm_cfg = MemqLcm(**{f.name: getattr(CFG.lcm, f.name) for f in dataclasses.fields(CFG.lcm) if f.init})
    clock = RobotClock()
    bus = Bus(lcm_cfg)
    clock.bus = bus
    bus._instance("command").subscribe(client.GOAL_CHANNEL, clock.on_goal)
    out = io.StringIO()
    link = client.Link(bus, lcm_cfg, clock, ("event",))
    msg = goal_cmd.goal_from_args(mc.build_parser().parse_args(["goal", "move", "0.3"]))
    assert goal_cmd.send_goal(link, msg, wait=True, out=out, rng=FixedRandom(5), goal_id=None) == client.EXIT_OK
    assert clock.odom.x == pytest.approx(0.3, abs=0.005)
    assert 1.2 < clock.now < 2.0     # 0.6 s ramp, 0.6 s braking, 0.6 s at 0.3 m/s less overlap
    assert out.getvalue().splitlines()[-1].startswith("done: GOAL_DONE REACHED goal 5 (MOVE_DISTANCE) at x 0.29")


# --------------------------------------------------------------------------- watch: odometry and events

def odometry_msg(x: float, y: float, yaw: float, vx: float) -> localization_lcmt:
    odom = Odometry()
    odom.set(x, y, yaw)
    odom.integrate((vx, 0.0, 0.0), 0.0)
    return odom.fill(localization_lcmt(), 0)


def test_render_status_shows_odometry_and_events() -> None:
    events = [motion_event_t.decode(event_bytes(EventKind.AREA_ENTERED, 5, 0, GoalKind.AREA, "entered area")),
              motion_event_t.decode(event_bytes(EventKind.BATTERY_LOW, 6, 0, GoalKind.BATTERY_LOW, value=21.5))]
    text = watch_cmd.render_status(make_status(mode=11), None, NAMES, odometry_msg(1.25, -0.5, 0.75, 0.3), events)
    assert "odometry  x 1.250 m  y -0.500 m  yaw 0.750 rad  vx 0.30 m/s" in text
    assert "event     AREA_ENTERED goal 5 (AREA) at x 0.000 y 0.000 yaw 0.000: entered area" in text
    assert "event     BATTERY_LOW 21.50 V goal 6 (BATTERY_LOW)" in text
    assert "odometry  none received" in watch_cmd.render_status(make_status(), None, NAMES)


def test_watch_plain_output_has_odometry_and_one_line_per_event() -> None:
    clock = FakeClock(interrupt_at=0.35)
    script = [(0.05, ODOMETRY, odometry_msg(2.0, 1.0, -0.5, 0.25).encode()),
              (0.1, STATUS, status_bytes(tick=50, mode=11, mode_name="LOCOMOTION")),
              (0.2, EVENT, event_bytes(EventKind.GOAL_DONE, 9, Reason.REACHED, text="reached: 1.000 m"))]
    bus = FakeBus(clock, script)
    out = io.StringIO()
    link = client.Link(bus, CFG.lcm, clock, watch_cmd.WATCH_FEEDS)
    assert ("joint", ODOMETRY) in bus.subscribed and ("command", EVENT) in bus.subscribed
    assert watch_cmd.watch_live(link, out, NAMES, tty=False) == client.EXIT_OK
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("odom x 2.000 m  y 1.000 m  yaw -0.500 rad  vx 0.25 m/s")
    assert lines[1] == "event GOAL_DONE REACHED goal 9 (MOVE_DISTANCE) at x 0.000 y 0.000 yaw 0.000: reached: 1.000 m"


def test_a_fault_or_fall_event_is_about_the_robot_not_a_goal() -> None:
    fault = motion_event_t.decode(event_bytes(EventKind.FAULT, 0, 0, text="motor_weak: FR_knee gave 0 %: "
                                              "damping (EDAMP)", value=2.0))
    assert client.describe_event(fault) == ("FAULT at x 0.000 y 0.000 yaw 0.000: motor_weak: FR_knee gave 0 %: "
                                            "damping (EDAMP)")


def test_watch_screen_keeps_the_last_five_events() -> None:
    state = watch_cmd.WatchState()
    for i in range(8):
        state.update(motion_event_t.decode(event_bytes(EventKind.ACCEPTED, i)))
    assert [e.goal_id for e in state.events] == [3, 4, 5, 6, 7]
    assert state.render(NAMES).count("event     ACCEPTED") == 5


def test_watch_says_how_old_the_daemons_last_error_is() -> None:
    """last_error is the daemon's last, however old: the screen says when it
    appeared (or that it predates the watch), so a stale one reads as such."""
    state = watch_cmd.WatchState()

    def status(error: str) -> controller_status_t:
        return controller_status_t.decode(status_bytes(last_error=error))
    state.update(status("motion goal 3: refused: no joint_state"), now=1.0)
    assert "error     motion goal 3: refused: no joint_state   (from before this watch started)" \
        in state.render(NAMES, now=2.0)
    state.update(status("motion goal 3: refused: no joint_state"), now=4.0)
    state.update(status("mode 13 refused: mode 13 is not a known mode"), now=5.0)
    assert "error     mode 13 refused: mode 13 is not a known mode   (7 s ago)" in state.render(NAMES, now=12.0)
    state.update(status(""), now=13.0)
    assert "error     -\n" in state.render(NAMES, now=14.0) + "\n"
