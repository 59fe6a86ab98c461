"""`motionctl play`: play a TOML command sequence (official CyberDog format).

Speaks only the public CyberDog 2 protocol (SPEC §1-§3), so it also drives a
real CyberDog. The sequence is loaded and checked by
controller.motion.sequence before any socket is opened; `Player` then sends
it one group of steps at a time over a Link.
"""
from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from controller.cli.client import (
    DEFAULT_TIMEOUT_S,
    EXIT_CODES_HELP,
    EXIT_INTERRUPTED,
    EXIT_OK,
    BanWatch,
    CompletionTracker,
    Formatter,
    Link,
    ModeNames,
    Outcome,
    ResponseReporter,
    Tracker,
    choose_life_count,
    daemon_refusal,
    describe_command,
    emit,
    follow,
    last_life_count,
    open_link,
    outcome_line,
    positive_seconds,
)
from controller.cli.commands import summary
from controller.cli.hold import hold_path, json_fields, request
from controller.motion.sequence import Step, build_command, group_steps, is_timed, load_sequence
from controller.msgs import robot_control_response_lcmt
from controller.protocol.constants import TRANSITIONING
from controller.robot.config.wire import Wire

BURST_SPACING_S = 0.01   # > one 2 ms tick, so each queued command is seen (SPEC §2.1)
BATCH_TAIL_S = 0.1       # margin after the last queued block's nominal end


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add `play` to an argparse subparsers object; its func is `run`."""
    play: argparse.ArgumentParser = sub.add_parser(
        "play", help=summary("play"),
        description="Play a sequence of [[step]] tables (official CyberDog example format: keys "
                    "mode, gait_id, contact, life_count (ignored), vel_des, rpy_des, pos_des, "
                    "acc_des, ctrl_point, foot_pose, step_height, value, duration). A key a step "
                    "omits keeps the previous step's value. Consecutive steps with duration > 0 "
                    "are queued together and run for their durations; a step with duration 0 "
                    "runs alone until its mode reports >= 95 % progress.",
        epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    play.add_argument("file", metavar="FILE", help="TOML sequence file")
    play.add_argument("--timeout", type=positive_seconds, default=DEFAULT_TIMEOUT_S, metavar="S",
                      help="seconds a duration-0 step may take (and a queued group may stay "
                           "TRANSITIONING) before giving up (default %(default)g)")
    play.set_defaults(func=run)
    return play


def run(args: argparse.Namespace, cfg: Wire) -> int:
    """`motionctl play`: the exit code."""
    steps = load_sequence(args.file)  # before any socket: a bad file sends nothing
    player = Player(open_link(cfg), steps, timeout=args.timeout, names=cfg.fsm.name,
                    out=sys.stdout, rng=random.Random(), tick_ms=1000.0 / cfg.tick_hz)
    # A running hold (motionctl hold) pauses while the sequence plays, so the
    # two never fight, and takes the last step's command back at the end.
    path = hold_path(cfg.lcm)
    held = request(path, {"op": "pause"})
    code = player.run()
    if held is not None:
        if code == EXIT_OK and player.last is not None:
            request(path, {"op": "adopt", "fields": json_fields(player.last.fields),
                           "life_count": player.life})
            emit(sys.stdout, f"the hold (pid {held['pid']}) keeps the last step's heartbeat")
        else:
            emit(sys.stdout, f"the hold (pid {held['pid']}) holds nothing now: the controller lies "
                             "the robot down 0.5 s after the last heartbeat")
    return code


class BatchTracker:
    """Follows timed steps queued back-to-back: done when their durations have run.

    The controller freezes the block timer while switch_status is 1
    TRANSITIONING (SPEC §3.3 step 6), so time spent there is added to the
    schedule; otherwise a following continuous step would cut the last block
    short. More than `timeout` seconds of such frozen time is a timeout (a gait
    the mode never reports shows 1 for ever, SPEC §5.7).
    """

    def __init__(self, durations_ms: Sequence[int], sent_at: float, timeout: float,
                 tail: float = BATCH_TAIL_S, keys: Sequence[tuple[int, int]] | None = None) -> None:
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
        # The wall clock runs ahead of a controller whose ticks run late, and
        # the next continuous step would cut the last block short. Where the
        # last step's (mode, gait_id) differs from the step's before it, its
        # block is also timed from when the response first shows it (waited
        # for at most `timeout` past the schedule, for a controller that
        # reports another gait_id).
        self.last_key = keys[-1] if keys is not None and len(keys) >= 2 and keys[-1] != keys[-2] else None
        self.last_s = durations_ms[-1] / 1000.0 if durations_ms else 0.0
        self._last_seen: tuple[float, float] | None = None     # when, and frozen() then

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
        if self._last_seen is None and (resp.mode, resp.gait_id) == self.last_key:
            self._last_seen = (now, self.frozen(now))
        return self.check(now)

    def _last_block_over(self, now: float) -> bool:
        """The last block has run its duration since the response showed it
        (True where it cannot be told apart, or past the wait for it)."""
        if self.last_key is None or self.elapsed(now) >= self.ends[-1] + self.tail + self.timeout:
            return True
        if self._last_seen is None:
            return False
        seen, frozen = self._last_seen
        return now - seen - (self.frozen(now) - frozen) >= self.last_s + self.tail

    def check(self, now: float) -> Outcome | None:
        if self.ban.refused(now):
            return Outcome.REFUSED
        if self.frozen(now) > self.timeout:
            return Outcome.TIMEOUT
        if self.elapsed(now) >= self.ends[-1] + self.tail and self._last_block_over(now):
            return Outcome.DONE
        return None


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
        self.last: Step | None = None      # the step sent last
        self.sent_at = 0.0
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
                    reason = daemon_refusal(self.link, step.mode, self.sent_at) \
                        if outcome is Outcome.REFUSED else None
                    line = outcome_line(outcome, step.mode, step.gait_id, tracker, self.timeout, self.names,
                                        reason)
                    emit(self.out, f"stopped at step {step.number}/{len(self.steps)}: {line}")
                    return int(outcome)
        except KeyboardInterrupt:
            where = f" at step {self.current.number}/{len(self.steps)}" if self.current else ""
            emit(self.out, f"interrupted{where}; heartbeat stopped")
            return EXIT_INTERRUPTED
        emit(self.out, f"done: {len(self.steps)} steps in {self.link.now() - started:.1f} s")
        return EXIT_OK

    def _send(self, step: Step) -> None:
        self.sent_at = self.link.now()
        self._life = choose_life_count(self._life, self.rng)
        self.last = step
        self.link.send(build_command(step.fields, self._life))

    @property
    def life(self) -> int | None:
        """The life_count of the command sent last."""
        return self._life

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
        tracker = BatchTracker([s.duration for s in group], sent_at, self.timeout,
                               keys=[(s.mode, s.gait_id) for s in group])
        announced = 0

        def announce_started(now: float) -> None:
            nonlocal announced
            while announced <= tracker.active_index(now):
                self._announce(group[announced])
                announced += 1

        outcome = follow(self.link, tracker, self._reporter, self.out, announce_started)
        return outcome, group[tracker.active_index(self.link.now())], tracker
