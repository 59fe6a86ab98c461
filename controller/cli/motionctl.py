"""motionctl: the companion command line of motiond.

    motionctl send   send one command and keep its heartbeat going
    motionctl watch  show the controller's status, live or once
    motionctl play   play a TOML command sequence (official CyberDog format)
    motionctl goal   goal-directed moves, odometry and triggers (motion_goal_t)
    (and script, validate, check-config, spy, record, replay, plot: see --help)

`send` and `play` speak only the public CyberDog 2 protocol (SPEC §1-§3), so
they also drive a real CyberDog; `watch` reads motiond's controller_status,
`global_to_robot` odometry and motion events; `goal` speaks motiond's own
motion_goal / motion_event pair.
Everything that touches the network goes through a `Link` made from a bus and
a clock, so the send / wait / play logic runs in the tests on fakes, without
sockets and without sleeping.
"""
from __future__ import annotations

import argparse
import contextlib
import enum
import os
import random
import signal
import struct
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn, Protocol, TextIO

from controller.cli import check_config, log_cmd, script_cmd, spy_cmd
from controller.core import goals
from controller.core.goals import EventKind, GoalKind, Reason
from controller.motion import validate
from controller.motion.sequence import (
    FieldError,
    Fields,
    SequenceError,
    Step,
    build_command,
    check_float,
    check_int,
    group_steps,
    is_timed,
    load_sequence,
    pad,
)
from controller.msgs import (
    controller_status_t,
    localization_lcmt,
    motion_event_t,
    motion_goal_t,
    robot_control_cmd_lcmt,
    robot_control_response_lcmt,
)
from controller.protocol.constants import BAN_TRANS, MOTION_MODE, TRANSITIONING
from controller.protocol.constants import SWITCH_STATUS_NAMES as SWITCH_STATUS
from controller.robot.config import Config, ConfigError, LcmConfig, load_config, with_namespace

EXIT_OK = 0
EXIT_USAGE = 1          # bad arguments, config, sequence file or LCM setup
EXIT_REFUSED = 2        # the controller refused the mode change (BAN_TRANS)
EXIT_TIMEOUT = 3        # no completion (or, for watch --once, no status) in time
EXIT_PREEMPTED = 4      # a goal was pre-empted or cancelled before it finished
EXIT_INTERRUPTED = 130  # Ctrl-C / SIGTERM while waiting or playing
EXIT_BROKEN_PIPE = 141  # stdout closed by its reader (`| head`), as SIGPIPE would give


HEARTBEAT_S = 0.1        # re-send period; the controller times out after 0.5 s (SPEC §2.5)
POLL_S = 0.01            # feedback poll period; LCM queues packets meanwhile
BURST_SPACING_S = 0.01   # > one 2 ms tick, so each queued command is seen (SPEC §2.1)
STATUS_LISTEN_S = 0.3    # controller_status comes at 10 Hz: three chances
DONE_BAR = 95            # the official examples' "finished" threshold (SPEC §5.11)
BAN_HOLD_S = 0.1         # BAN_TRANS must persist this long to count as a refusal
SETTLE_S = 0.05          # responses already in flight at send time describe the old command
BATCH_TAIL_S = 0.1       # margin after the last queued block's nominal end
WATCH_FRAME_S = 0.1      # ~10 Hz redraw
WATCH_STALE_S = 1.0      # status older than this is flagged in the live view
ONCE_WAIT_S = 2.0
DEFAULT_TIMEOUT_S = 15.0
GOAL_ACK_S = 1.0         # motiond answers every goal within a tick; longer = not listening
GOAL_DONE_MARGIN_S = 2.0  # beyond a move's own timeout, for its GOAL_DONE to arrive
DEFAULT_MOVE_TIMEOUT_S = 30.0
EVENTS_SHOWN = 5         # motion events kept on the watch screen

# Channels of motiond's own goal interface; config may name them
# (lcm.channels.motion_goal / motion_event / global_to_robot).
GOAL_CHANNEL = "motion_goal"          # port "command" (7671)
EVENT_CHANNEL = "motion_event"        # port "command" (7671)
ODOMETRY_CHANNEL = "global_to_robot"  # port "joint" (7667), SPEC §1.6

Feedback = robot_control_response_lcmt | controller_status_t | motion_event_t | localization_lcmt
FeedType = type[robot_control_response_lcmt] | type[controller_status_t] | type[motion_event_t] | \
    type[localization_lcmt]
ModeNames = Callable[[int], str]


# --------------------------------------------------------------------------- I/O seams

class BusLike(Protocol):
    """The part of controller.service.transport.Bus motionctl uses (a fake in the tests)."""

    def subscribe(self, port_name: str, channel: str) -> None: ...
    def drain(self) -> list[tuple[str, bytes]]: ...
    def publish(self, port_name: str, channel: str, data: bytes) -> None: ...


class Clock(Protocol):
    """Monotonic time and sleeping (a fake in the tests, so waits take no real time)."""

    def monotonic(self) -> float: ...
    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def feeds(lcm: LcmConfig) -> dict[str, tuple[str, str, FeedType]]:
    """Feedback a Link can subscribe to: name -> (port name, channel, message type)."""
    ch = lcm.channels
    return {
        "response": ("response", ch["response"], robot_control_response_lcmt),
        "status": ("joint", ch["status"], controller_status_t),
        "event": ("command", ch.get("motion_event", EVENT_CHANNEL), motion_event_t),
        "odometry": ("joint", ch.get("global_to_robot", ODOMETRY_CHANNEL), localization_lcmt),
    }


class Link:
    """motionctl's end of the protocol: decoded feedback in, commands out.

    The last command sent is re-sent every HEARTBEAT_S from poll(), with the
    same life_count, so the controller keeps it without re-queueing it
    (SPEC §2.3) and does not time out (SPEC §2.5). Goals are sent once: a
    repeated goal would restart the move.
    """

    def __init__(self, bus: BusLike, lcm: LcmConfig, clock: Clock,
                 subscribe: Sequence[str] = ("response", "status")) -> None:
        self.bus = bus
        self.clock = clock
        self._command_channel = lcm.channels["command"]
        self._goal_channel = lcm.channels.get("motion_goal", GOAL_CHANNEL)
        self.script_channel = lcm.channels.get("script_request", "script_request")
        available = feeds(lcm)
        self._types: dict[str, FeedType] = {}
        for name in subscribe:
            port, channel, kind = available[name]
            self._types[channel] = kind
            bus.subscribe(port, channel)
        self._heartbeat: bytes | None = None
        self._next_beat = 0.0
        self.undecodable = 0

    def now(self) -> float:
        return self.clock.monotonic()

    def sleep(self, seconds: float = POLL_S) -> None:
        self.clock.sleep(seconds)

    def send(self, msg: robot_control_cmd_lcmt) -> None:
        """Publish `msg` now; it becomes the heartbeat from here on."""
        self._heartbeat = msg.encode()
        self._publish(self._heartbeat)

    def send_goal(self, msg: motion_goal_t) -> None:
        """Publish a motion goal once (no heartbeat)."""
        self.bus.publish("command", self._goal_channel, msg.encode())

    def _publish(self, data: bytes) -> None:
        self.bus.publish("command", self._command_channel, data)
        self._next_beat = self.now() + HEARTBEAT_S

    def poll(self) -> list[Feedback]:
        """Send the heartbeat if it is due, then return the feedback received since the last poll."""
        if self._heartbeat is not None and self.now() >= self._next_beat:
            self._publish(self._heartbeat)
        out: list[Feedback] = []
        for channel, data in self.bus.drain():
            kind = self._types.get(channel)
            if kind is None:
                continue
            try:
                out.append(kind.decode(data))
            except (ValueError, struct.error):
                self.undecodable += 1
        return out


# --------------------------------------------------------------------------- life_count

def wrap_int8(n: int) -> int:
    """n folded into int8 two's complement range: 128 -> -128."""
    return (n + 128) % 256 - 128


def choose_life_count(last: int | None, rng: random.Random) -> int:
    """A life_count the controller will take as a new command (SPEC §2.3).

    Only inequality with the last accepted value matters. With a known `last`
    take the next value (int8 wrap); without one, a random value, so that a
    restarted client is unlikely to hit the remembered one. Never -1: it is the
    controller's initial "last accepted" value, so a first -1 would be ignored.
    """
    if last is None:
        value = rng.randint(-128, 126)
        return 127 if value == -1 else value
    value = wrap_int8(last + 1)
    return 0 if value == -1 else value


def last_life_count(link: Link, listen_s: float = STATUS_LISTEN_S) -> int | None:
    """The controller's last accepted life_count from controller_status, or None if none comes."""
    deadline = link.now() + listen_s
    while True:
        for msg in link.poll():
            if isinstance(msg, controller_status_t):
                return int(msg.last_life_count)
        if link.now() >= deadline:
            return None
        link.sleep()


# --------------------------------------------------------------------------- wording

def status_word(code: int) -> str:
    return SWITCH_STATUS.get(code, f"UNKNOWN_{code}")


def mode_label(mode: int, names: ModeNames) -> str:
    return f"{names(mode)} ({mode})"


def describe_command(fields: Fields, names: ModeNames) -> str:
    """'POSE_CTRL (21) gait 0, 1000 ms' -- the words used for a step or a sent command."""
    mode, gait, duration = fields.get("mode", 0), fields.get("gait_id", 0), fields.get("duration", 0)
    length = f"{duration} ms" if duration else "continuous"
    return f"{mode_label(mode, names)} gait {gait}, {length}"


def describe_response(resp: robot_control_response_lcmt, names: ModeNames) -> str:
    return (f"{mode_label(resp.mode, names)} gait {resp.gait_id}  "
            f"{clamp_percent(resp.order_process_bar):3d} %  {status_word(resp.switch_status)}")


def clamp_percent(value: int) -> int:
    return max(0, min(100, int(value)))


class ResponseReporter:
    """Picks the responses worth a line of output.

    Responses arrive at 50-500 Hz (SPEC §1.8); one line per mode, gait or
    switch_status change, or per 10 % of progress, keeps the output readable.
    """

    def __init__(self, names: ModeNames) -> None:
        self.names = names
        self._last: tuple[int, int, int, int] | None = None

    def update(self, resp: robot_control_response_lcmt) -> str | None:
        key = (resp.mode, resp.gait_id, resp.switch_status, clamp_percent(resp.order_process_bar) // 10)
        if key == self._last:
            return None
        self._last = key
        return "  " + describe_response(resp, self.names)


# --------------------------------------------------------------------------- waiting

class Outcome(enum.IntEnum):
    """How a wait ended; the value is the exit code."""

    DONE = EXIT_OK
    REFUSED = EXIT_REFUSED
    TIMEOUT = EXIT_TIMEOUT
    PREEMPTED = EXIT_PREEMPTED


class Tracker(Protocol):
    last: robot_control_response_lcmt | None

    def feed(self, resp: robot_control_response_lcmt, now: float) -> Outcome | None: ...
    def check(self, now: float) -> Outcome | None: ...


class BanWatch:
    """Refusal detection: switch_status 5 (BAN_TRANS) held for at least `hold` seconds.

    A single 5 may be stale (published before our command was processed); a
    refused mode keeps reporting 5 (SPEC §5.7), so persistence is the signal.
    """

    def __init__(self, hold: float = BAN_HOLD_S) -> None:
        self.hold = hold
        self._since: float | None = None

    def feed(self, switch_status: int, now: float) -> None:
        if switch_status != BAN_TRANS:
            self._since = None
        elif self._since is None:
            self._since = now

    def refused(self, now: float) -> bool:
        return self._since is not None and now - self._since >= self.hold


class CompletionTracker:
    """When has a continuous command finished? Pure: fed responses and times.

    Finished = the response shows the requested mode and gait with
    order_process_bar >= 95, as in the official examples (SPEC §5.11), but
    comparing the real gait (SPEC §10, pitfall 1). For mode 62 the response
    reports 62 with gait_id = the motion id; a motion counts as finished only
    once the response has also left 62 after that, because a new mode-62
    command is dropped while a motion still runs (SPEC §3.2), so a sequence
    of motions would otherwise lose every other one.
    Responses within SETTLE_S of the send may still describe the previous
    command, so they cannot complete it.
    """

    def __init__(self, mode: int, gait_id: int, sent_at: float, timeout: float,
                 settle: float = SETTLE_S) -> None:
        self.mode = mode
        self.gait_id = gait_id
        self.sent_at = sent_at
        self.timeout = timeout
        self.settle = settle
        self.ban = BanWatch()
        self.last: robot_control_response_lcmt | None = None
        self.motion_nearly_done = False

    def feed(self, resp: robot_control_response_lcmt, now: float) -> Outcome | None:
        self.last = resp
        self.ban.feed(resp.switch_status, now)
        if (now - self.sent_at >= self.settle and resp.mode == self.mode
                and resp.gait_id == self.gait_id and resp.order_process_bar >= DONE_BAR):
            if self.mode != MOTION_MODE:
                return Outcome.DONE
            self.motion_nearly_done = True
        elif self.motion_nearly_done and resp.mode != MOTION_MODE:
            return Outcome.DONE
        return self.check(now)

    def check(self, now: float) -> Outcome | None:
        if self.ban.refused(now):
            return Outcome.REFUSED
        if now - self.sent_at >= self.timeout:
            return Outcome.TIMEOUT
        return None


class BatchTracker:
    """Follows timed steps queued back-to-back: done when their durations have run.

    The controller freezes the block timer while switch_status is 1
    TRANSITIONING (SPEC §3.3 step 6), so time spent there is added to the
    schedule; otherwise a following continuous step would cut the last block
    short. More than `timeout` seconds of such frozen time is a timeout (a gait
    the mode never reports shows 1 for ever, SPEC §5.7).
    """

    def __init__(self, durations_ms: Sequence[int], sent_at: float, timeout: float,
                 tail: float = BATCH_TAIL_S) -> None:
        self.ends: list[float] = []
        total = 0.0
        for d in durations_ms:
            total += d / 1000.0
            self.ends.append(total)
        self.sent_at = sent_at
        self.timeout = timeout
        self.tail = tail
        self.ban = BanWatch()
        self.last: robot_control_response_lcmt | None = None
        self._frozen = 0.0
        self._transitioning_since: float | None = None

    def frozen(self, now: float) -> float:
        """Seconds the controller has reported TRANSITIONING since the batch was sent."""
        running = now - self._transitioning_since if self._transitioning_since is not None else 0.0
        return self._frozen + running

    def elapsed(self, now: float) -> float:
        """Block time used up so far: wall time minus frozen time."""
        return now - self.sent_at - self.frozen(now)

    def active_index(self, now: float) -> int:
        """Index of the step whose block is expected to be running now."""
        elapsed = self.elapsed(now)
        for i, end in enumerate(self.ends):
            if elapsed < end:
                return i
        return len(self.ends) - 1

    def feed(self, resp: robot_control_response_lcmt, now: float) -> Outcome | None:
        self.last = resp
        self.ban.feed(resp.switch_status, now)
        if resp.switch_status == TRANSITIONING:
            if self._transitioning_since is None:
                self._transitioning_since = now
        elif self._transitioning_since is not None:
            self._frozen += now - self._transitioning_since
            self._transitioning_since = None
        return self.check(now)

    def check(self, now: float) -> Outcome | None:
        if self.ban.refused(now):
            return Outcome.REFUSED
        if self.frozen(now) > self.timeout:
            return Outcome.TIMEOUT
        if self.elapsed(now) >= self.ends[-1] + self.tail:
            return Outcome.DONE
        return None


def emit(out: TextIO, line: str | None) -> None:
    if line is not None:
        print(line, file=out, flush=True)


def follow(link: Link, tracker: Tracker | None, reporter: ResponseReporter, out: TextIO,
           on_poll: Callable[[float], None] | None = None) -> Outcome:
    """Heart-beat and report responses until `tracker` reaches an outcome.

    With no tracker it runs until interrupted (KeyboardInterrupt propagates).
    """
    while True:
        msgs = link.poll()
        now = link.now()
        if on_poll is not None:
            on_poll(now)
        for msg in msgs:
            if not isinstance(msg, robot_control_response_lcmt):
                continue
            emit(out, reporter.update(msg))
            if tracker is not None and (outcome := tracker.feed(msg, now)) is not None:
                return outcome
        if tracker is not None and (outcome := tracker.check(now)) is not None:
            return outcome
        link.sleep()


def outcome_line(outcome: Outcome, mode: int, gait_id: int, tracker: Tracker,
                 timeout: float, names: ModeNames) -> str:
    """One line saying how a wait ended, naming the modes involved."""
    want = f"{mode_label(mode, names)} gait {gait_id}"
    last = tracker.last
    if outcome is Outcome.DONE:
        return f"done: {want}"
    if outcome is Outcome.REFUSED:
        current = mode_label(last.mode, names) if last is not None else "the current mode"
        return f"refused: {current} does not switch to {want} (switch_status {BAN_TRANS} BAN_TRANS)"
    seen = describe_response(last, names) if last is not None else "no response received"
    return f"timeout: {want} not finished within {timeout:g} s (last: {seen})"


# --------------------------------------------------------------------------- send

def send_command(link: Link, fields: Fields, *, wait: bool, timeout: float, names: ModeNames,
                 out: TextIO, rng: random.Random) -> int:
    """Send one command with a fresh life_count and keep it alive; see `motionctl send --help`."""
    life = choose_life_count(last_life_count(link), rng)
    msg = build_command(fields, life)
    link.poll()  # drop feedback that predates this command
    link.send(msg)
    sent_at = link.now()
    emit(out, f"sent {describe_command(fields, names)}, life_count {life}")
    mode, gait = msg.mode, msg.gait_id
    tracker = CompletionTracker(mode, gait, sent_at, timeout) if wait else None
    try:
        outcome = follow(link, tracker, ResponseReporter(names), out)
    except KeyboardInterrupt:
        emit(out, "stopped sending; the controller times out 0.5 s after the last heartbeat")
        return EXIT_OK if tracker is None else EXIT_INTERRUPTED
    assert tracker is not None  # without a tracker, follow() only ends by interruption
    emit(out, outcome_line(outcome, mode, gait, tracker, timeout, names))
    return int(outcome)


# --------------------------------------------------------------------------- play

class Player:
    """Plays a validated sequence over a Link, one group of steps at a time.

    Timed steps (D > 0) are sent back-to-back so the controller queues them
    (SPEC §3.2); a continuous step replaces the queue, so it goes alone and is
    waited for like `send --wait`.
    """

    def __init__(self, link: Link, steps: list[Step], *, timeout: float, names: ModeNames,
                 out: TextIO, rng: random.Random, tick_ms: float = 2.0) -> None:
        self.link = link
        self.steps = steps
        self.timeout = timeout
        self.names = names
        self.out = out
        self.rng = rng
        self.tick_ms = tick_ms
        self.current: Step | None = None
        self._life: int | None = None
        self._reporter = ResponseReporter(names)

    def run(self) -> int:
        started = self.link.now()
        self._life = last_life_count(self.link)
        self.link.poll()  # drop feedback that predates the sequence
        try:
            for group in group_steps(self.steps, self.tick_ms):
                timed = is_timed(group[0], self.tick_ms)
                outcome, step, tracker = self._play_timed(group) if timed else self._play_continuous(group[0])
                if outcome is not Outcome.DONE:
                    line = outcome_line(outcome, step.mode, step.gait_id, tracker, self.timeout, self.names)
                    emit(self.out, f"stopped at step {step.number}/{len(self.steps)}: {line}")
                    return int(outcome)
        except KeyboardInterrupt:
            where = f" at step {self.current.number}/{len(self.steps)}" if self.current else ""
            emit(self.out, f"interrupted{where}; heartbeat stopped")
            return EXIT_INTERRUPTED
        emit(self.out, f"done: {len(self.steps)} steps in {self.link.now() - started:.1f} s")
        return EXIT_OK

    def _send(self, step: Step) -> None:
        self._life = choose_life_count(self._life, self.rng)
        self.link.send(build_command(step.fields, self._life))

    def _announce(self, step: Step) -> None:
        self.current = step
        emit(self.out, f"step {step.number}/{len(self.steps)}: {describe_command(step.fields, self.names)}")

    def _play_continuous(self, step: Step) -> tuple[Outcome, Step, Tracker]:
        self._announce(step)
        self._send(step)
        tracker = CompletionTracker(step.mode, step.gait_id, self.link.now(), self.timeout)
        return follow(self.link, tracker, self._reporter, self.out), step, tracker

    def _play_timed(self, group: list[Step]) -> tuple[Outcome, Step, Tracker]:
        sent_at = self.link.now()
        for i, step in enumerate(group):
            if i:
                self.link.sleep(BURST_SPACING_S)
            self._send(step)
        tracker = BatchTracker([s.duration for s in group], sent_at, self.timeout)
        announced = 0

        def announce_started(now: float) -> None:
            nonlocal announced
            while announced <= tracker.active_index(now):
                self._announce(group[announced])
                announced += 1

        outcome = follow(self.link, tracker, self._reporter, self.out, announce_started)
        return outcome, group[tracker.active_index(self.link.now())], tracker


# --------------------------------------------------------------------------- goal

def _name(enum_type: type[enum.IntEnum], value: int) -> str:
    try:
        return enum_type(value).name
    except ValueError:
        return f"UNKNOWN_{value}"


def describe_event(event: motion_event_t) -> str:
    """'GOAL_DONE REACHED goal 7 (MOVE_DISTANCE) at x 1.000 y 0.000 yaw 0.000: reached ...'."""
    if event.kind in (EventKind.SCRIPT_STARTED, EventKind.SCRIPT_DONE):
        return f"{_name(EventKind, event.kind)} {script_cmd.describe(event)}"
    what = _name(EventKind, event.kind)
    if event.kind == EventKind.GOAL_DONE:
        what += f" {_name(Reason, event.reason)}"
    if event.kind == EventKind.BATTERY_LOW:
        what += f" {event.value:.2f} V"
    text = f": {event.text}" if event.text else ""
    return (f"{what} goal {event.goal_id} ({_name(GoalKind, event.goal_kind)}) at x {event.x:.3f}"
            f" y {event.y:.3f} yaw {event.yaw:.3f}{text}")


_REASON_OUTCOME = {Reason.REACHED: Outcome.DONE, Reason.TIMEOUT: Outcome.TIMEOUT,
                   Reason.PREEMPTED: Outcome.PREEMPTED, Reason.CANCELLED: Outcome.PREEMPTED,
                   Reason.REFUSED: Outcome.REFUSED}


class GoalTracker:
    """How a sent goal ends, from the motion events about its goal_id. Pure: fed events and times.

    Every goal is answered at once with ACCEPTED or GOAL_DONE/REFUSED; a move
    then ends with one GOAL_DONE. A setting is done when it is ACCEPTED. No
    answer within `ack_wait` means nothing handles goals (timeout); a move
    without GOAL_DONE within `run_wait` after ACCEPTED times out too.
    """

    def __init__(self, goal_id: int, is_move: bool, sent_at: float, run_wait: float,
                 ack_wait: float = GOAL_ACK_S) -> None:
        self.goal_id = goal_id
        self.is_move = is_move
        self.sent_at = sent_at
        self.run_wait = run_wait
        self.ack_wait = ack_wait
        self.accepted_at: float | None = None
        self.last: motion_event_t | None = None

    def feed(self, event: motion_event_t, now: float) -> Outcome | None:
        if event.goal_id != self.goal_id or event.kind not in (EventKind.ACCEPTED, EventKind.GOAL_DONE):
            return self.check(now)
        self.last = event
        if event.kind == EventKind.GOAL_DONE:
            # A reason this motionctl does not know is at least not a success.
            return _REASON_OUTCOME.get(event.reason, Outcome.PREEMPTED)
        if self.accepted_at is None:
            self.accepted_at = now
        return None if self.is_move else Outcome.DONE

    def check(self, now: float) -> Outcome | None:
        if self.accepted_at is None:
            return Outcome.TIMEOUT if now - self.sent_at >= self.ack_wait else None
        return Outcome.TIMEOUT if now - self.accepted_at >= self.run_wait else None

    def waited(self) -> str:
        """Why a timeout happened, for the last line."""
        if self.accepted_at is None:
            return (f"no answer to goal {self.goal_id} within {self.ack_wait:g} s "
                    "(is motiond running, with motion goals?)")
        return f"goal {self.goal_id} not done within {self.run_wait:g} s of its acceptance"


def _goal(kind: GoalKind, **values: float) -> motion_goal_t:
    msg = motion_goal_t()
    msg.kind = int(kind)
    for key, value in values.items():
        setattr(msg, key, value)
    return msg


def goal_from_args(args: argparse.Namespace) -> motion_goal_t:
    """The motion_goal_t a `goal ...` command line asks for (goal_id and utime still 0).

    Raises FieldError (a usage error) when the daemon would refuse it, using
    the daemon's own check (controller.core.goals.validate), so nothing is sent.
    """
    action = args.goal_command
    if action == "move":
        msg = _goal(GoalKind.MOVE_DISTANCE, distance=args.distance, angle=args.angle, timeout=args.timeout)
    elif action == "cont":
        msg = _goal(GoalKind.MOVE_CONTINUOUS, speed=args.speed, rotation=args.rotation, timeout=args.timeout)
    elif action == "stop":
        msg = _goal(GoalKind.STOP)
    elif action == "profile":
        msg = _goal(GoalKind.SET_SPEED_PROFILE, max_acc=args.max_acc, max_speed=args.max_speed,
                    max_rotation=args.max_rotation)
    elif action == "odom":
        msg = _goal(GoalKind.SET_ODOMETRY, x=args.x, y=args.y, yaw=args.yaw)
    elif action == "area":
        if not args.off and len(args.corners) != 4:
            raise FieldError("area", f"expected X1 Y1 X2 Y2 (or --off), got {len(args.corners)} numbers")
        x1, y1, x2, y2 = args.corners if len(args.corners) == 4 else (0.0, 0.0, 0.0, 0.0)
        msg = _goal(GoalKind.AREA, x1=x1, y1=y1, x2=x2, y2=y2, enable=0 if args.off else 1)
    else:
        if not args.off and args.volts is None:
            raise FieldError("battery", "expected VOLTS (or --off)")
        msg = _goal(GoalKind.BATTERY_LOW, voltage=args.volts or 0.0, enable=0 if args.off else 1)
    problem = goals.validate(msg)
    if problem is not None:
        raise FieldError(action, problem)
    return msg


def choose_goal_id(rng: random.Random) -> int:
    """A positive int32 unlikely to collide with another client's goals."""
    return rng.randint(1, 2**31 - 1)


def send_goal(link: Link, msg: motion_goal_t, *, wait: bool, out: TextIO, rng: random.Random,
              goal_id: int | None = None) -> int:
    """Send one goal and report its events; see `motionctl goal --help`."""
    msg.goal_id = goal_id if goal_id is not None else choose_goal_id(rng)
    msg.utime = int(time.time() * 1e6)
    is_move = msg.kind in (GoalKind.MOVE_DISTANCE, GoalKind.MOVE_CONTINUOUS)
    link.poll()  # drop events that predate this goal
    link.send_goal(msg)
    sent_at = link.now()
    emit(out, f"sent {_name(GoalKind, msg.kind)} goal {msg.goal_id}")
    tracker = GoalTracker(msg.goal_id, is_move and wait, sent_at, run_wait=msg.timeout + GOAL_DONE_MARGIN_S)
    try:
        outcome = _follow_goal(link, tracker, out)
    except KeyboardInterrupt:
        if is_move and tracker.accepted_at is not None:
            stop = _goal(GoalKind.STOP)
            stop.goal_id = choose_goal_id(rng)
            link.send_goal(stop)
            emit(out, f"interrupted: sent STOP goal {stop.goal_id}")
        return EXIT_INTERRUPTED
    if outcome is Outcome.TIMEOUT and (tracker.last is None or tracker.last.kind != EventKind.GOAL_DONE):
        emit(out, f"timeout: {tracker.waited()}")
    else:
        assert tracker.last is not None
        word = {Outcome.DONE: "done", Outcome.REFUSED: "refused", Outcome.TIMEOUT: "timeout",
                Outcome.PREEMPTED: "ended"}[outcome]
        emit(out, f"{word}: {describe_event(tracker.last)}")
    return int(outcome)


def _follow_goal(link: Link, tracker: GoalTracker, out: TextIO) -> Outcome:
    while True:
        msgs = link.poll()
        now = link.now()
        for msg in msgs:
            if not isinstance(msg, motion_event_t):
                continue
            outcome = tracker.feed(msg, now)
            if msg.goal_id == tracker.goal_id and msg.kind == EventKind.ACCEPTED and outcome is None:
                emit(out, f"  {describe_event(msg)}")
            if outcome is not None:
                return outcome
        if (outcome := tracker.check(now)) is not None:
            return outcome
        link.sleep()


# --------------------------------------------------------------------------- watch

def progress_bar(percent: int, width: int = 20) -> str:
    filled = round(clamp_percent(percent) * width / 100)
    return "[" + "#" * filled + "-" * (width - filled) + "]"


def _motor_faults(resp: robot_control_response_lcmt) -> str:
    """Motors with any error or warning bit; bits 30-31 are the motor mode, not faults (SPEC §5.9)."""
    faults = [f"{i}:0x{word & 0x3FFFFFFF:x}" for i, word in enumerate(resp.motor_error)
              if word & 0x3FFFFFFF]
    return " ".join(faults) if faults else "ok"


def describe_odometry(odom: localization_lcmt) -> str:
    return (f"x {odom.xyz[0]:.3f} m  y {odom.xyz[1]:.3f} m  yaw {odom.rpy[2]:.3f} rad"
            f"  vx {odom.vBody[0]:.2f} m/s")


def render_status(status: controller_status_t | None, response: robot_control_response_lcmt | None,
                  names: ModeNames | None = None, odometry: localization_lcmt | None = None,
                  events: Sequence[motion_event_t] = ()) -> str:
    """The `watch` screen as text (no ANSI codes): pure, so tests call it directly.

    Mode, gait, progress and switch_status come from controller_status when
    there is one (the daemon's own view), else from the last response. Then
    the global_to_robot odometry and the last few motion events, newest last.
    """
    def name(mode: int, given: str = "") -> str:
        label = given or (names(mode) if names else "")
        return f"{label} ({mode})" if label else f"mode {mode}"

    tail = [f"odometry  {describe_odometry(odometry) if odometry is not None else 'none received'}"]
    tail += [f"event     {describe_event(e)}" for e in events]
    if status is None and response is None:
        waiting = "waiting for controller_status and robot_control_response ..."
        return "\n".join([waiting, *tail]) if odometry is not None or events else waiting
    lines = []
    if status is not None:
        lines.append(f"motiond   tick {status.tick}")
        mode, gait = name(status.mode, status.mode_name), status.gait_id
        progress, switch = status.progress, status.switch_status
    else:
        assert response is not None
        lines.append("motiond   no controller_status received (is motiond running?)")
        mode, gait = name(response.mode), response.gait_id
        progress, switch = response.order_process_bar, response.switch_status
    lines += [
        f"mode      {mode}   gait {gait}",
        f"progress  {progress_bar(progress)} {clamp_percent(progress):3d} %",
        f"switch    {status_word(switch)} ({switch})",
    ]
    if status is not None:
        lines += [
            f"queue     {status.queue_depth} blocks, {status.block_remaining_ms} ms left in the active block",
            (f"timing    lateness p50 {status.lateness_p50_us:.0f} us  p99 {status.lateness_p99_us:.0f} us"
             f"  max {status.lateness_max_us:.0f} us   loop p99 {status.loop_p99_us:.0f} us"
             f"   overruns {status.tick_overruns}"),
            (f"counters  accepted {status.commands_accepted}  heartbeats {status.heartbeats}"
             f"  packets rejected {status.packets_rejected}  commands rejected {status.commands_rejected}"
             f"  timeouts {status.timeouts}"),
            f"script    {_script_words(status)}",
        ]
    if response is not None:
        lines.append(
            f"response  {name(response.mode)} gait {response.gait_id}"
            f"  {clamp_percent(response.order_process_bar)} %  {status_word(response.switch_status)}"
            f"   contact 0x{response.contact & 0xF:X}  ori_error {response.ori_error}"
            f"  footpos_error 0x{response.footpos_error & 0xFFF:03x}  motors {_motor_faults(response)}")
    else:
        lines.append("response  none received")
    if status is not None:
        lines.append(f"error     {status.last_error or '-'}")
    return "\n".join(lines + tail)


def render_status_line(status: controller_status_t, odometry: localization_lcmt | None = None) -> str:
    """One plain line per status message, for logs and pipes (no redrawing)."""
    odom = f" odom {describe_odometry(odometry)}" if odometry is not None else ""
    return (f"tick {status.tick} {status.mode_name or 'mode'} ({status.mode}) gait {status.gait_id}"
            f" {clamp_percent(status.progress)} % {status_word(status.switch_status)}"
            f" queue {status.queue_depth} ({status.block_remaining_ms} ms)"
            f" late p99 {status.lateness_p99_us:.0f} us overruns {status.tick_overruns}"
            f" accepted {status.commands_accepted} rejected {status.packets_rejected}/{status.commands_rejected}"
            f" timeouts {status.timeouts} script {_script_words(status)}"
            f" error {status.last_error or '-'}{odom}")


def _script_words(status: controller_status_t) -> str:
    """'Wave frame 3 (40 %)' or '-': the scripts playing, as controller_status says."""
    return f"{status.script} ({clamp_percent(status.script_progress)} %)" if status.script else "-"


WATCH_FEEDS = ("response", "status", "odometry", "event")


class WatchState:
    """The latest status, response and odometry, and the last EVENTS_SHOWN motion events."""

    def __init__(self) -> None:
        self.status: controller_status_t | None = None
        self.response: robot_control_response_lcmt | None = None
        self.odometry: localization_lcmt | None = None
        self.events: list[motion_event_t] = []

    def update(self, msg: Feedback) -> None:
        if isinstance(msg, controller_status_t):
            self.status = msg
        elif isinstance(msg, robot_control_response_lcmt):
            self.response = msg
        elif isinstance(msg, localization_lcmt):
            self.odometry = msg
        else:
            self.events = [*self.events[-(EVENTS_SHOWN - 1):], msg]

    def render(self, names: ModeNames | None) -> str:
        return render_status(self.status, self.response, names, self.odometry, self.events)


def watch_once(link: Link, out: TextIO, names: ModeNames, wait_s: float = ONCE_WAIT_S) -> int:
    """Print one snapshot once a controller_status arrives; exit 3 if none does in `wait_s`."""
    deadline = link.now() + wait_s
    state = WatchState()
    while True:
        for msg in link.poll():
            state.update(msg)
        if (state.status is not None and state.response is not None) or link.now() >= deadline:
            break
        if state.status is not None:
            # A response comes at 50 Hz; give it a moment, not the whole wait.
            deadline = min(deadline, link.now() + 0.1)
        link.sleep()
    if state.status is None:
        print(f"no controller_status within {wait_s:g} s (is motiond running?)", file=sys.stderr)
        return EXIT_TIMEOUT
    emit(out, state.render(names))
    return EXIT_OK


def watch_live(link: Link, out: TextIO, names: ModeNames, tty: bool) -> int:
    """Redraw the status screen at ~10 Hz on a terminal, else one line per status or
    motion event; until Ctrl-C."""
    state = WatchState()
    status_at = link.now()
    next_frame = link.now()
    try:
        while True:
            msgs = link.poll()
            now = link.now()
            for msg in msgs:
                state.update(msg)
                if isinstance(msg, controller_status_t):
                    status_at = now
                    if not tty:
                        emit(out, render_status_line(msg, state.odometry))
                elif isinstance(msg, motion_event_t) and not tty:
                    emit(out, f"event {describe_event(msg)}")
            if tty and now >= next_frame:
                next_frame = now + WATCH_FRAME_S
                status = state.status
                text = state.render(names)
                if status is not None and now - status_at > WATCH_STALE_S:
                    text += f"\n(no controller_status for {now - status_at:.1f} s)"
                # Home, each line cleared to its end, then everything below cleared.
                out.write("\x1b[H" + "\x1b[K\n".join(text.split("\n")) + "\x1b[K\n\x1b[J")
                out.flush()
            link.sleep()
    except KeyboardInterrupt:
        return EXIT_OK


# --------------------------------------------------------------------------- command line

class _Formatter(argparse.HelpFormatter):
    """Wraps descriptions, but keeps multi-line texts (the exit-code table) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors exiting 1: exit code 2 means "refused" here."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _int_type(bits: int, key: str) -> Callable[[str], int]:
    """argparse type for an int<bits> field; accepts 0x.. hex (handy for leg masks)."""
    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            try:
                value = int(text, 10)  # "08": base 0 rejects leading zeros
            except ValueError:
                raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        try:
            return check_int(key, value, bits)
        except FieldError as exc:
            raise argparse.ArgumentTypeError(exc.reason) from None
    parse.__name__ = f"int{bits}"
    return parse


def _finite_float(text: str) -> float:
    try:
        return check_float("value", float(text))
    except ValueError as exc:
        reason = exc.reason if isinstance(exc, FieldError) else f"{text!r} is not a number"
        raise argparse.ArgumentTypeError(reason) from None


def _positive_seconds(text: str) -> float:
    value = _finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


class _PaddedFloats(argparse.Action):
    """--foot-pose: 1 to 6 numbers, zero-padded to 6."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if len(values) > 6:
            raise argparse.ArgumentError(self, f"expected at most 6 numbers, got {len(values)}")
        setattr(namespace, self.dest, pad(values, 6))


# argparse dest -> command field, for the options `send` exposes.
SEND_FIELDS = {"mode": "mode", "gait": "gait_id", "contact": "contact", "vel": "vel_des",
               "rpy": "rpy_des", "pos": "pos_des", "acc": "acc_des", "ctrl_point": "ctrl_point",
               "foot_pose": "foot_pose", "step_height": "step_height", "value": "value",
               "duration": "duration"}


def fields_from_args(args: argparse.Namespace) -> Fields:
    """The command fields given on the `send` command line; the rest stay 0."""
    return {field: getattr(args, dest) for dest, field in SEND_FIELDS.items()
            if getattr(args, dest) is not None}


EXIT_CODES_HELP = """exit codes:
  0    done (send --wait, play, goal), or stopped with Ctrl-C (send, watch)
  1    usage, config, sequence-file or LCM setup error
  2    refused: the controller reported switch_status 5 (BAN_TRANS) for >= 100 ms,
       or motiond refused the goal (GOAL_DONE REFUSED)
  3    timeout (send --wait, play, a move's GOAL_DONE TIMEOUT), no answer to a goal,
       or no controller_status (watch --once)
  4    goal pre-empted (newer move, robot_control_cmd) or cancelled (goal stop)
  5    replay: the re-run controller published something different
  130  interrupted (Ctrl-C or SIGTERM) during send --wait, play or a goal move
  141  standard output closed by its reader (e.g. `motionctl watch | head`)"""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="motionctl",
        description="Command line for motiond and other CyberDog 2 compatible controllers: "
                    "send commands, watch the status, play command sequences, send motion goals.",
        epilog=EXIT_CODES_HELP, formatter_class=_Formatter)
    parser.add_argument("--config", metavar="PATH",
                        help="robot config with the LCM ports and channels "
                             "(default: config/cyberdog2.yaml)")
    parser.add_argument("--namespace", metavar="NAME",
                        help="talk to the motiond started with --namespace NAME "
                             "(default: the config's lcm.namespace, normally none)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    send = sub.add_parser(
        "send", help="send one robot_control_cmd and keep it alive",
        description="Send one robot_control_cmd with a fresh life_count (one past the "
                    "controller's last accepted value from controller_status, else random), "
                    "then re-send it every 100 ms as the heartbeat so the controller's 0.5 s "
                    "timeout does not fire. Without --wait, print response changes until "
                    "Ctrl-C. Fields not given are 0.",
        epilog=EXIT_CODES_HELP, formatter_class=_Formatter)
    int8, int32 = _int_type(8, "int8"), _int_type(32, "int32")
    send.add_argument("--mode", type=int8, required=True, metavar="M", help="FSM mode (int8), e.g. 12 stand, 7 damper")
    send.add_argument("--gait", type=int8, metavar="G", help="gait_id (int8; default 0)")
    send.add_argument("--vel", type=_finite_float, nargs=3, metavar=("X", "Y", "YAW"),
                      help="vel_des: vx, vy (m/s), yaw rate (rad/s)")
    send.add_argument("--rpy", type=_finite_float, nargs=3, metavar=("R", "P", "Y"),
                      help="rpy_des: roll, pitch, yaw (rad)")
    send.add_argument("--pos", type=_finite_float, nargs=3, metavar=("X", "Y", "Z"), help="pos_des (m)")
    send.add_argument("--contact", type=int8, metavar="C",
                      help="contact leg mask (int8, hex allowed, e.g. 0x0F; default 0)")
    send.add_argument("--foot-pose", type=_finite_float, nargs="+", action=_PaddedFloats, metavar="F",
                      help="foot_pose: up to 6 numbers, zero-padded (m)")
    send.add_argument("--ctrl-point", type=_finite_float, nargs=3, metavar=("X", "Y", "Z"),
                      help="ctrl_point: pose rotation centre (m)")
    send.add_argument("--acc", type=_finite_float, nargs=6, metavar="A", help="acc_des: 6 numbers")
    send.add_argument("--step-height", type=_finite_float, nargs=2, metavar=("A", "B"),
                      help="step_height (m; default 0 0)")
    send.add_argument("--value", type=int32, metavar="V", help="value bit flags (int32; default 0)")
    send.add_argument("--duration", type=int32, metavar="MS", help="duration in ms; 0 = continuous (default)")
    send.add_argument("--wait", action="store_true",
                      help="exit once the response shows this mode and gait at >= 95 %% progress (0), "
                           "a refusal (2) or no completion within --timeout (3)")
    send.add_argument("--timeout", type=_positive_seconds, default=DEFAULT_TIMEOUT_S, metavar="S",
                      help="seconds to wait with --wait (default %(default)g)")
    send.set_defaults(func=_run_send)

    watch = sub.add_parser(
        "watch", help="show the controller's status",
        description="Show motiond's controller_status, the last robot_control_response, the "
                    "global_to_robot odometry (x, y, yaw, vx) and the last motion events: redrawn "
                    "in place at 10 Hz on a terminal; otherwise one line per status message (with "
                    "the odometry) and one per motion event. Ctrl-C ends it.",
        epilog=EXIT_CODES_HELP, formatter_class=_Formatter)
    watch.add_argument("--once", action="store_true",
                       help=f"print one snapshot and exit (exit 3 if no status within {ONCE_WAIT_S:g} s)")
    watch.set_defaults(func=_run_watch)

    play = sub.add_parser(
        "play", help="play a TOML command sequence",
        description="Play a sequence of [[step]] tables (official CyberDog example format: keys "
                    "mode, gait_id, contact, life_count (ignored), vel_des, rpy_des, pos_des, "
                    "acc_des, ctrl_point, foot_pose, step_height, value, duration). A key a step "
                    "omits keeps the previous step's value. Consecutive steps with duration > 0 "
                    "are queued together and run for their durations; a step with duration 0 "
                    "runs alone until its mode reports >= 95 % progress.",
        epilog=EXIT_CODES_HELP, formatter_class=_Formatter)
    play.add_argument("file", metavar="FILE", help="TOML sequence file")
    play.add_argument("--timeout", type=_positive_seconds, default=DEFAULT_TIMEOUT_S, metavar="S",
                      help="seconds a duration-0 step may take (and a queued group may stay "
                           "TRANSITIONING) before giving up (default %(default)g)")
    play.set_defaults(func=_run_play)
    _add_goal_parser(sub)
    script_cmd.add_parser(sub, _Formatter, EXIT_CODES_HELP)
    sub.choices["script"].set_defaults(func=_run_script)
    validate.add_parser(sub)
    spy_cmd.add_parser(sub)
    check_config.add_parser(sub)
    log_cmd.add_parsers(sub, _Formatter)
    return parser


GOAL_HELP = """SI units: m, rad (counter-clockwise positive), s, V; body x forward, y left.
Each goal gets a fresh random goal_id (or --id) and is answered on motion_event.
Moves wait for their GOAL_DONE and print it (exit 0 reached); Ctrl-C during a
move sends a STOP goal. Settings and triggers exit 0 once motiond accepts them."""


def _add_goal_parser(sub: Any) -> None:
    goal = sub.add_parser(
        "goal", help="goal-directed moves, odometry and triggers (motiond's motion_goal)",
        description="Send one motion_goal_t to motiond and report the motion_event answers.\n\n" + GOAL_HELP,
        epilog=EXIT_CODES_HELP, formatter_class=_Formatter)
    actions = goal.add_subparsers(dest="goal_command", required=True, metavar="ACTION")
    common = _Parser(add_help=False)
    common.add_argument("--id", type=_int_type(32, "int32"), metavar="N",
                        help="goal_id to use (default: random)")
    f = _finite_float

    move = actions.add_parser(
        "move", parents=[common], formatter_class=_Formatter,
        help="travel DISTANCE m along an arc turning --angle rad; stop on the target",
        description="MOVE_DISTANCE: travel DISTANCE m (negative: backwards) along the arc that turns "
                    "the body by --angle rad on the way; DISTANCE 0 turns in place. The speed "
                    "profile (goal profile) limits acceleration, speed and rotation. Exit 0 when "
                    "REACHED, 3 on TIMEOUT, 4 if pre-empted.", epilog=EXIT_CODES_HELP)
    move.add_argument("distance", type=f, metavar="DISTANCE", help="m along the path")
    move.add_argument("--angle", type=f, default=0.0, metavar="A", help="rad turned over the path (default 0)")
    move.add_argument("--timeout", type=_positive_seconds, default=DEFAULT_MOVE_TIMEOUT_S, metavar="S",
                      help="give up after this many seconds (default %(default)g, at most 600)")
    move.add_argument("--no-wait", dest="wait", action="store_false",
                      help="exit once motiond accepts the move")

    cont = actions.add_parser(
        "cont", parents=[common], formatter_class=_Formatter,
        help="move at SPEED m/s and ROT rad/s for --timeout s",
        description="MOVE_CONTINUOUS: move at SPEED m/s (tangential) and ROT rad/s for --timeout "
                    "seconds, within the speed profile (scaled down keeping the circle). Running its "
                    "full time is its normal end: GOAL_DONE REACHED, exit 0.", epilog=EXIT_CODES_HELP)
    cont.add_argument("speed", type=f, metavar="SPEED", help="m/s, negative backwards")
    cont.add_argument("rotation", type=f, metavar="ROT", help="rad/s, counter-clockwise positive")
    cont.add_argument("--timeout", type=_positive_seconds, required=True, metavar="S",
                      help="how long to move, s (at most 600)")
    cont.add_argument("--no-wait", dest="wait", action="store_false",
                      help="exit once motiond accepts the move")

    actions.add_parser("stop", parents=[common], help="cancel the running move",
                       description="STOP: the running move ends with GOAL_DONE CANCELLED.")

    profile = actions.add_parser(
        "profile", parents=[common], help="set the speed profile for moves",
        description="SET_SPEED_PROFILE: maximum acceleration, speed and rotation for every later "
                    "move and the running one.")
    profile.add_argument("max_acc", type=f, metavar="ACC", help="m/s^2")
    profile.add_argument("max_speed", type=f, metavar="SPEED", help="m/s")
    profile.add_argument("max_rotation", type=f, metavar="ROT", help="rad/s")

    odom = actions.add_parser("odom", parents=[common], help="set the odometry pose",
                              description="SET_ODOMETRY: the odometry pose becomes X, Y (m), YAW (rad).")
    odom.add_argument("x", type=f, metavar="X")
    odom.add_argument("y", type=f, metavar="Y")
    odom.add_argument("yaw", type=f, metavar="YAW")

    area = actions.add_parser(
        "area", parents=[common], help="report leaving and entering a rectangle",
        description="AREA: motiond reports AREA_LEFT and AREA_ENTERED on motion_event whenever the "
                    "odometry crosses the rectangle X1 < X2, Y1 < Y2 (m); see them with "
                    "`motionctl watch`. Replaces the previous area; --off removes it.")
    area.add_argument("corners", type=f, nargs="*", metavar="X1 Y1 X2 Y2")
    area.add_argument("--off", action="store_true", help="switch the area trigger off")

    battery = actions.add_parser(
        "battery", parents=[common], help="report when the battery falls below VOLTS",
        description="BATTERY_LOW: motiond reports BATTERY_LOW once when the battery voltage "
                    "(joint_state.battery_voltage) falls below VOLTS, again after it has recovered; "
                    "--off removes the trigger.")
    battery.add_argument("volts", type=f, nargs="?", metavar="VOLTS")
    battery.add_argument("--off", action="store_true", help="switch the battery trigger off")
    goal.set_defaults(func=_run_goal)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C, so `kill` ends a run through the same clean path."""
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class SetupError(RuntimeError):
    """LCM could not be opened (e.g. no multicast route)."""


def _open_link(cfg: Config, subscribe: Sequence[str] = ("response", "status")) -> Link:
    from controller.service.transport import Bus  # imports lcm; only needed when talking
    try:
        return Link(Bus(cfg.lcm), cfg.lcm, SystemClock(), subscribe)
    except (OSError, RuntimeError) as exc:
        raise SetupError(f"cannot open LCM at {cfg.lcm.url('command')}: {exc}") from None


def _run_send(args: argparse.Namespace, cfg: Config) -> int:
    return send_command(_open_link(cfg), fields_from_args(args), wait=args.wait, timeout=args.timeout,
                        names=cfg.fsm.name, out=sys.stdout, rng=random.Random())


def _run_watch(args: argparse.Namespace, cfg: Config) -> int:
    link = _open_link(cfg, WATCH_FEEDS)
    if args.once:
        return watch_once(link, sys.stdout, cfg.fsm.name)
    return watch_live(link, sys.stdout, cfg.fsm.name, tty=sys.stdout.isatty())


def _run_play(args: argparse.Namespace, cfg: Config) -> int:
    steps = load_sequence(args.file)  # before any socket: a bad file sends nothing
    player = Player(_open_link(cfg), steps, timeout=args.timeout, names=cfg.fsm.name,
                    out=sys.stdout, rng=random.Random(), tick_ms=1000.0 / cfg.tick_hz)
    return player.run()


def _run_goal(args: argparse.Namespace, cfg: Config) -> int:
    msg = goal_from_args(args)  # before any socket: a goal motiond would refuse is a usage error
    return send_goal(_open_link(cfg, ("event",)), msg, wait=getattr(args, "wait", True), out=sys.stdout,
                     rng=random.Random(), goal_id=args.id)


def _run_script(args: argparse.Namespace, cfg: Config) -> int:
    link = _open_link(cfg, ("event", "status"))
    utime = 0
    if args.start_in > 0:
        status = _first_status(link)
        utime = int(status.utime) if status is not None else 0
    try:
        return script_cmd.run(args, link, utime)
    except ValueError as exc:
        print(f"motionctl: script: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _first_status(link: Link, listen_s: float = STATUS_LISTEN_S) -> controller_status_t | None:
    deadline = link.now() + listen_s
    while link.now() < deadline:
        for msg in link.poll():
            if isinstance(msg, controller_status_t):
                return msg
        link.sleep()
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `motionctl` console script; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (1, see _Parser)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        if args.command in ("validate", "check-config"):   # check files; need no LCM config
            return int(args.func(args))
        cfg = with_namespace(load_config(args.config), args.namespace)
        with _sigterm_as_interrupt():
            return int(args.func(args, cfg))
    except FieldError as exc:
        print(f"motionctl: goal {exc.key}: {exc.reason}", file=sys.stderr)
        return EXIT_USAGE
    except (ConfigError, SequenceError, SetupError) as exc:
        print(f"motionctl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # before anything was sent, e.g. while listening for status
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
