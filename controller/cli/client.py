"""What motionctl's talking subcommands share: the Link, exit codes, wording, waiting.

The bottom of controller/cli/'s motionctl modules (send_cmd, watch_cmd,
play_cmd, goal_cmd and script_cmd import it; it imports none of them):

- the I/O seams: `BusLike`, `Clock`, `SystemClock`, `feeds`, and `Link`, made
  from a bus and a clock, so the send / wait / play logic runs in the tests on
  fakes, without sockets and without sleeping; `open_link` makes the real one;
- the exit codes and the exit-code table every subcommand's --help ends with;
- life_count choice (SPEC §2.3);
- the wording of modes, commands, responses and motion events;
- waiting for a command to finish, shared by `send --wait` and `play`:
  `Outcome`, `BanWatch`, `CompletionTracker`, `follow`, `outcome_line`;
- the argparse pieces: `Formatter`, `Parser` and the argument types.
"""
from __future__ import annotations

import argparse
import enum
import random
import struct
import sys
import time
from collections.abc import Callable, Sequence
from typing import NoReturn, Protocol, TextIO, TypeAlias

from controller.cli.names import parse_int
from controller.motion.sequence import FieldError, Fields, check_float, check_int
from controller.msgs import (
    controller_status_t,
    localization_lcmt,
    motion_event_t,
    motion_goal_t,
    robot_control_cmd_lcmt,
    robot_control_response_lcmt,
)
from controller.protocol.constants import BAN_TRANS, MOTION_MODE
from controller.protocol.constants import SWITCH_STATUS_NAMES as SWITCH_STATUS
from controller.protocol.goal_codes import EventKind, GoalKind, Reason
from controller.robot.config.lcm import LcmConfig
from controller.robot.config.wire import Wire

EXIT_OK = 0
EXIT_USAGE = 1          # bad arguments, config, sequence file or LCM setup
EXIT_REFUSED = 2        # the controller refused the mode change (BAN_TRANS)
EXIT_TIMEOUT = 3        # no completion (or, for watch --once, no status) in time
EXIT_PREEMPTED = 4      # a goal was pre-empted or cancelled before it finished
EXIT_INTERRUPTED = 130  # Ctrl-C / SIGTERM while waiting or playing
EXIT_BROKEN_PIPE = 141  # stdout closed by its reader (`| head`), as SIGPIPE would give

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


HEARTBEAT_S = 0.1        # re-send period; the controller times out after 0.5 s (SPEC §2.5)
POLL_S = 0.01            # feedback poll period; LCM queues packets meanwhile
STATUS_LISTEN_S = 0.3    # controller_status comes at 10 Hz: three chances
DONE_BAR = 95            # the official examples' "finished" threshold (SPEC §5.11)
BAN_HOLD_S = 0.1         # BAN_TRANS must persist this long to count as a refusal
SETTLE_S = 0.05          # responses already in flight at send time describe the old command
DEFAULT_TIMEOUT_S = 15.0
REASON_WAIT_S = 0.3      # controller_status (10 Hz) carrying the daemon's refusal reason
LAPSE_HINT = ("\n  each motionctl keeps its command's heartbeat only while it runs: "
              "`motionctl hold --start` keeps it between commands (docs/GUIDE.md)")

# Channels of motiond's own goal interface; config may name them
# (lcm.channels.motion_goal / motion_event / global_to_robot).
GOAL_CHANNEL = "motion_goal"          # port "command" (7671)
EVENT_CHANNEL = "motion_event"        # port "command" (7671)
ODOMETRY_CHANNEL = "global_to_robot"  # port "joint" (7667), SPEC §1.6

# The generated LCM classes are untyped (mypy sees them as Any), so these
# unions need TypeAlias to be read as types rather than as values.
Feedback: TypeAlias = robot_control_response_lcmt | controller_status_t | motion_event_t | localization_lcmt
FeedType: TypeAlias = type[robot_control_response_lcmt] | type[controller_status_t] | type[motion_event_t] | \
    type[localization_lcmt]
ModeNames: TypeAlias = Callable[[int], str]


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
        self.status: controller_status_t | None = None     # the last controller_status
        self.status_at = float("-inf")                      # and when it came

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
                msg = kind.decode(data)
            except (ValueError, struct.error):
                self.undecodable += 1
                continue
            if isinstance(msg, controller_status_t):
                self.status, self.status_at = msg, self.now()
            out.append(msg)
        return out

    def stop_heartbeat(self) -> None:
        """Send nothing more (another process keeps the command alive)."""
        self._heartbeat = None


class SetupError(RuntimeError):
    """LCM could not be opened (e.g. no multicast route)."""


def open_link(cfg: Wire, subscribe: Sequence[str] = ("response", "status")) -> Link:
    """A Link on the config's LCM URLs, subscribed to the feeds named; SetupError if LCM fails."""
    from controller.service.transport import Bus  # imports lcm; only needed when talking
    try:
        return Link(Bus(cfg.lcm), cfg.lcm, SystemClock(), subscribe)
    except (OSError, RuntimeError) as exc:
        raise SetupError(f"cannot open LCM at {cfg.lcm.url('command')}: {exc}") from None


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


def next_life_count(status: controller_status_t | None, sent: int | None, rng: random.Random) -> int:
    """The life_count for a new command from a client that keeps sending
    (a hold, teleop, the Python client): one past the controller's last
    accepted (its status), else past the client's own last; never the one
    the client sent last, which the controller may not have taken yet."""
    last = int(status.last_life_count) if status is not None else sent
    life = choose_life_count(last, rng)
    return choose_life_count(life, rng) if life == sent else life


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


def enum_name(enum_type: type[enum.IntEnum], value: int) -> str:
    """The member's name, or UNKNOWN_<value> for a value this motionctl does not know."""
    try:
        return enum_type(value).name
    except ValueError:
        return f"UNKNOWN_{value}"


def describe_script_event(event: motion_event_t) -> str:
    """The words for a SCRIPT_STARTED or SCRIPT_DONE event (the answers to a script_request)."""
    if event.kind == EventKind.SCRIPT_STARTED:
        return f"started request {event.goal_id}: {event.text} ({event.value:.2f} s)"
    try:
        reason = Reason(event.reason).name
    except ValueError:
        reason = f"reason {event.reason}"
    return f"{reason} request {event.goal_id}: {event.text}"


def describe_event(event: motion_event_t) -> str:
    """'GOAL_DONE REACHED goal 7 (MOVE_DISTANCE) at x 1.000 y 0.000 yaw 0.000: reached ...'."""
    if event.kind in (EventKind.SCRIPT_STARTED, EventKind.SCRIPT_DONE):
        return f"{enum_name(EventKind, event.kind)} {describe_script_event(event)}"
    what = enum_name(EventKind, event.kind)
    if event.kind in (EventKind.FALL, EventKind.FAULT):      # about the robot, not a goal
        return f"{what} at x {event.x:.3f} y {event.y:.3f} yaw {event.yaw:.3f}: {event.text}"
    if event.kind == EventKind.GOAL_DONE:
        what += f" {enum_name(Reason, event.reason)}"
    if event.kind == EventKind.BATTERY_LOW:
        what += f" {event.value:.2f} V"
    text = f": {event.text}" if event.text else ""
    return (f"{what} goal {event.goal_id} ({enum_name(GoalKind, event.goal_kind)}) at x {event.x:.3f}"
            f" y {event.y:.3f} yaw {event.yaw:.3f}{text}")


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


def emit(out: TextIO, line: str | None) -> None:
    if line is not None:
        print(line, file=out, flush=True)


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


class StatusFeed(Protocol):
    """What daemon_refusal reads: a Link, or a view of one another thread polls."""

    @property
    def status(self) -> controller_status_t | None: ...
    @property
    def status_at(self) -> float: ...
    def now(self) -> float: ...
    def poll(self) -> list[Feedback]: ...
    def sleep(self, seconds: float = POLL_S) -> None: ...


def daemon_refusal(link: StatusFeed, mode: int, since: float, wait_s: float = REASON_WAIT_S) -> str | None:
    """motiond's own reason for refusing `mode` (controller_status last_error,
    "mode M refused: why"), from a status received after `since`; None when
    none comes within `wait_s` (another controller, or no status feed)."""
    prefix = f"mode {mode} refused: "
    deadline = link.now() + wait_s
    while True:
        status = link.status
        if status is not None and link.status_at >= since and status.last_error.startswith(prefix):
            return str(status.last_error[len(prefix):])
        if link.now() >= deadline:
            return None
        link.poll()
        link.sleep()


def outcome_line(outcome: Outcome, mode: int, gait_id: int, tracker: Tracker,
                 timeout: float, names: ModeNames, reason: str | None = None) -> str:
    """One line saying how a wait ended, naming the modes involved; `reason`:
    the controller's own for a refusal (daemon_refusal)."""
    want = f"{mode_label(mode, names)} gait {gait_id}"
    last = tracker.last
    if outcome is Outcome.DONE:
        return f"done: {want}"
    if outcome is Outcome.REFUSED:
        if reason is not None:
            hint = LAPSE_HINT if "heartbeat lapsed" in reason else ""
            return f"refused: {want}: {reason} (switch_status {BAN_TRANS} BAN_TRANS){hint}"
        current = mode_label(last.mode, names) if last is not None else "the current mode"
        return f"refused: {current} does not switch to {want} (switch_status {BAN_TRANS} BAN_TRANS)"
    seen = describe_response(last, names) if last is not None else "no response received"
    return f"timeout: {want} not finished within {timeout:g} s (last: {seen})"


# --------------------------------------------------------------------------- command line

class Formatter(argparse.HelpFormatter):
    """Wraps descriptions, but keeps multi-line texts (the exit-code table) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class Parser(argparse.ArgumentParser):
    """argparse with usage errors exiting 1: exit code 2 means "refused" here."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def int_type(bits: int, key: str) -> Callable[[str], int]:
    """argparse type for an int<bits> field; accepts 0x.. hex (handy for leg masks)."""
    def parse(text: str) -> int:
        value = parse_int(text)
        if value is None:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer")
        try:
            return check_int(key, value, bits)
        except FieldError as exc:
            raise argparse.ArgumentTypeError(exc.reason) from None
    parse.__name__ = f"int{bits}"
    return parse


def finite_float(text: str) -> float:
    """argparse type for a finite float."""
    try:
        return check_float("value", float(text))
    except ValueError as exc:
        reason = exc.reason if isinstance(exc, FieldError) else f"{text!r} is not a number"
        raise argparse.ArgumentTypeError(reason) from None


def positive_seconds(text: str) -> float:
    """argparse type for a duration in seconds, > 0."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value
