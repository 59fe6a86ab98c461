"""motionctl: the companion command line of motiond.

    motionctl send   send one command and keep its heartbeat going
    motionctl watch  show the controller's status, live or once
    motionctl play   play a TOML command sequence (official CyberDog format)

`send` and `play` speak only the public CyberDog 2 protocol (SPEC §1-§3), so
they also drive a real CyberDog; `watch` reads motiond's controller_status.
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

from controller.config import Config, ConfigError, LcmConfig, load_config
from controller.msgs import controller_status_t, robot_control_cmd_lcmt, robot_control_response_lcmt
from controller.protocol import BAN_TRANS, TRANSITIONING
from controller.protocol import SWITCH_STATUS_NAMES as SWITCH_STATUS
from controller.sequence import (
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

EXIT_OK = 0
EXIT_USAGE = 1          # bad arguments, config, sequence file or LCM setup
EXIT_REFUSED = 2        # the controller refused the mode change (BAN_TRANS)
EXIT_TIMEOUT = 3        # no completion (or, for watch --once, no status) in time
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

Feedback = robot_control_response_lcmt | controller_status_t
ModeNames = Callable[[int], str]


# --------------------------------------------------------------------------- I/O seams

class BusLike(Protocol):
    """The part of controller.transport.Bus motionctl uses (a fake in the tests)."""

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


class Link:
    """motionctl's end of the protocol: decoded feedback in, commands out.

    The last command sent is re-sent every HEARTBEAT_S from poll(), with the
    same life_count, so the controller keeps it without re-queueing it
    (SPEC §2.3) and does not time out (SPEC §2.5).
    """

    def __init__(self, bus: BusLike, lcm: LcmConfig, clock: Clock) -> None:
        self.bus = bus
        self.clock = clock
        self._command_channel = lcm.channels["command"]
        self._types: dict[str, type[robot_control_response_lcmt | controller_status_t]] = {
            lcm.channels["response"]: robot_control_response_lcmt,
            lcm.channels["status"]: controller_status_t,
        }
        bus.subscribe("response", lcm.channels["response"])
        bus.subscribe("joint", lcm.channels["status"])
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
    reports 62 with gait_id = the motion id, so the same comparison holds.
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

    def feed(self, resp: robot_control_response_lcmt, now: float) -> Outcome | None:
        self.last = resp
        self.ban.feed(resp.switch_status, now)
        if (now - self.sent_at >= self.settle and resp.mode == self.mode
                and resp.gait_id == self.gait_id and resp.order_process_bar >= DONE_BAR):
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


# --------------------------------------------------------------------------- watch

def progress_bar(percent: int, width: int = 20) -> str:
    filled = round(clamp_percent(percent) * width / 100)
    return "[" + "#" * filled + "-" * (width - filled) + "]"


def _motor_faults(resp: robot_control_response_lcmt) -> str:
    """Motors with any error or warning bit; bits 30-31 are the motor mode, not faults (SPEC §5.9)."""
    faults = [f"{i}:0x{word & 0x3FFFFFFF:x}" for i, word in enumerate(resp.motor_error)
              if word & 0x3FFFFFFF]
    return " ".join(faults) if faults else "ok"


def render_status(status: controller_status_t | None, response: robot_control_response_lcmt | None,
                  names: ModeNames | None = None) -> str:
    """The `watch` screen as text (no ANSI codes): pure, so tests call it directly.

    Mode, gait, progress and switch_status come from controller_status when
    there is one (the daemon's own view), else from the last response.
    """
    def name(mode: int, given: str = "") -> str:
        label = given or (names(mode) if names else "")
        return f"{label} ({mode})" if label else f"mode {mode}"

    if status is None and response is None:
        return "waiting for controller_status and robot_control_response ..."
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
    return "\n".join(lines)


def render_status_line(status: controller_status_t) -> str:
    """One plain line per status message, for logs and pipes (no redrawing)."""
    return (f"tick {status.tick} {status.mode_name or 'mode'} ({status.mode}) gait {status.gait_id}"
            f" {clamp_percent(status.progress)} % {status_word(status.switch_status)}"
            f" queue {status.queue_depth} ({status.block_remaining_ms} ms)"
            f" late p99 {status.lateness_p99_us:.0f} us overruns {status.tick_overruns}"
            f" accepted {status.commands_accepted} rejected {status.packets_rejected}/{status.commands_rejected}"
            f" timeouts {status.timeouts} error {status.last_error or '-'}")


def _latest(msgs: list[Feedback], status: controller_status_t | None,
            response: robot_control_response_lcmt | None
            ) -> tuple[controller_status_t | None, robot_control_response_lcmt | None]:
    for msg in msgs:
        if isinstance(msg, controller_status_t):
            status = msg
        else:
            response = msg
    return status, response


def watch_once(link: Link, out: TextIO, names: ModeNames, wait_s: float = ONCE_WAIT_S) -> int:
    """Print one snapshot once a controller_status arrives; exit 3 if none does in `wait_s`."""
    deadline = link.now() + wait_s
    status: controller_status_t | None = None
    response: robot_control_response_lcmt | None = None
    while status is None or response is None:
        status, response = _latest(link.poll(), status, response)
        if (status is not None and response is not None) or link.now() >= deadline:
            break
        if status is not None:
            # A response comes at 50 Hz; give it a moment, not the whole wait.
            deadline = min(deadline, link.now() + 0.1)
        link.sleep()
    if status is None:
        print(f"no controller_status within {wait_s:g} s (is motiond running?)", file=sys.stderr)
        return EXIT_TIMEOUT
    emit(out, render_status(status, response, names))
    return EXIT_OK


def watch_live(link: Link, out: TextIO, names: ModeNames, tty: bool) -> int:
    """Redraw the status screen at ~10 Hz on a terminal, else one line per status; until Ctrl-C."""
    status: controller_status_t | None = None
    response: robot_control_response_lcmt | None = None
    status_at = link.now()
    next_frame = link.now()
    try:
        while True:
            msgs = link.poll()
            now = link.now()
            for msg in msgs:
                if isinstance(msg, controller_status_t):
                    status_at = now
                    if not tty:
                        emit(out, render_status_line(msg))
            status, response = _latest(msgs, status, response)
            if tty and now >= next_frame:
                next_frame = now + WATCH_FRAME_S
                text = render_status(status, response, names)
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
  0    done (send --wait, play), or stopped with Ctrl-C (send, watch)
  1    usage, config, sequence-file or LCM setup error
  2    refused: the controller reported switch_status 5 (BAN_TRANS) for >= 100 ms
  3    timeout (send --wait, play), or no controller_status (watch --once)
  130  interrupted (Ctrl-C or SIGTERM) during send --wait or play
  141  standard output closed by its reader (e.g. `motionctl watch | head`)"""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="motionctl",
        description="Command line for motiond and other CyberDog 2 compatible controllers: "
                    "send commands, watch the status, play command sequences.",
        epilog=EXIT_CODES_HELP, formatter_class=_Formatter)
    parser.add_argument("--config", metavar="PATH",
                        help="robot config with the LCM ports and channels "
                             "(default: config/cyberdog2.yaml)")
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
        description="Show motiond's controller_status and the last robot_control_response: "
                    "redrawn in place at 10 Hz on a terminal, one line per status message "
                    "otherwise. Ctrl-C ends it.",
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
    return parser


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


def _open_link(cfg: Config) -> Link:
    from controller.transport import Bus  # imports lcm; only needed when talking
    try:
        return Link(Bus(cfg.lcm), cfg.lcm, SystemClock())
    except (OSError, RuntimeError) as exc:
        raise SetupError(f"cannot open LCM at {cfg.lcm.url('command')}: {exc}") from None


def _run_send(args: argparse.Namespace, cfg: Config) -> int:
    return send_command(_open_link(cfg), fields_from_args(args), wait=args.wait, timeout=args.timeout,
                        names=cfg.fsm.name, out=sys.stdout, rng=random.Random())


def _run_watch(args: argparse.Namespace, cfg: Config) -> int:
    link = _open_link(cfg)
    if args.once:
        return watch_once(link, sys.stdout, cfg.fsm.name)
    return watch_live(link, sys.stdout, cfg.fsm.name, tty=sys.stdout.isatty())


def _run_play(args: argparse.Namespace, cfg: Config) -> int:
    steps = load_sequence(args.file)  # before any socket: a bad file sends nothing
    player = Player(_open_link(cfg), steps, timeout=args.timeout, names=cfg.fsm.name,
                    out=sys.stdout, rng=random.Random(), tick_ms=1000.0 / cfg.tick_hz)
    return player.run()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `motionctl` console script; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (1, see _Parser)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        cfg = load_config(args.config)
        with _sigterm_as_interrupt():
            return int(args.func(args, cfg))
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
