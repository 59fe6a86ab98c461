"""`motionctl goal`: goal-directed moves, odometry and triggers (motion_goal_t).

Speaks motiond's own motion_goal / motion_event pair: one motion_goal_t per
command line, checked with the daemon's own rules (controller.core.goals)
before it is sent, then the motion_event answers about its goal_id, followed
by `GoalTracker` until the goal is accepted (settings, triggers) or done (moves).
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any, TextIO

from controller.cli.client import (
    EXIT_CODES_HELP,
    EXIT_INTERRUPTED,
    Formatter,
    Link,
    Outcome,
    Parser,
    describe_event,
    emit,
    enum_name,
    finite_float,
    int_type,
    open_link,
    positive_seconds,
)
from controller.cli.commands import summary
from controller.core import goals
from controller.motion.sequence import FieldError
from controller.msgs import motion_event_t, motion_goal_t
from controller.protocol.goal_codes import EventKind, GoalKind, Reason
from controller.robot.config import Config

GOAL_ACK_S = 1.0         # motiond answers every goal within a tick; longer = not listening
GOAL_DONE_MARGIN_S = 2.0  # beyond a move's own timeout, for its GOAL_DONE to arrive
DEFAULT_MOVE_TIMEOUT_S = 30.0

GOAL_HELP = """SI units: m, rad (counter-clockwise positive), s, V; body x forward, y left.
Each goal gets a fresh random goal_id (or --id) and is answered on motion_event.
Moves wait for their GOAL_DONE and print it (exit 0 reached); Ctrl-C during a
move sends a STOP goal. Settings and triggers exit 0 once motiond accepts them."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add `goal` and its actions to an argparse subparsers object; its func is `run`."""
    goal: argparse.ArgumentParser = sub.add_parser(
        "goal", help=summary("goal"),
        description="Send one motion_goal_t to motiond and report the motion_event answers.\n\n" + GOAL_HELP,
        epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    actions = goal.add_subparsers(dest="goal_command", required=True, metavar="ACTION")
    common = Parser(add_help=False)
    common.add_argument("--id", type=int_type(32, "int32"), metavar="N",
                        help="goal_id to use (default: random)")
    f = finite_float

    move = actions.add_parser(
        "move", parents=[common], formatter_class=Formatter,
        help="travel DISTANCE m along an arc turning --angle rad; stop on the target",
        description="MOVE_DISTANCE: travel DISTANCE m (negative: backwards) along the arc that turns "
                    "the body by --angle rad on the way; DISTANCE 0 turns in place. The speed "
                    "profile (goal profile) limits acceleration, speed and rotation. Exit 0 when "
                    "REACHED, 3 on TIMEOUT, 4 if pre-empted.", epilog=EXIT_CODES_HELP)
    move.add_argument("distance", type=f, metavar="DISTANCE", help="m along the path")
    move.add_argument("--angle", type=f, default=0.0, metavar="A", help="rad turned over the path (default 0)")
    move.add_argument("--timeout", type=positive_seconds, default=DEFAULT_MOVE_TIMEOUT_S, metavar="S",
                      help="give up after this many seconds (default %(default)g, at most 600)")
    move.add_argument("--no-wait", dest="wait", action="store_false",
                      help="exit once motiond accepts the move")

    cont = actions.add_parser(
        "cont", parents=[common], formatter_class=Formatter,
        help="move at SPEED m/s and ROT rad/s for --timeout s",
        description="MOVE_CONTINUOUS: move at SPEED m/s (tangential) and ROT rad/s for --timeout "
                    "seconds, within the speed profile (scaled down keeping the circle). Running its "
                    "full time is its normal end: GOAL_DONE REACHED, exit 0.", epilog=EXIT_CODES_HELP)
    cont.add_argument("speed", type=f, metavar="SPEED", help="m/s, negative backwards")
    cont.add_argument("rotation", type=f, metavar="ROT", help="rad/s, counter-clockwise positive")
    cont.add_argument("--timeout", type=positive_seconds, required=True, metavar="S",
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
    goal.set_defaults(func=run)
    return goal


def run(args: argparse.Namespace, cfg: Config) -> int:
    """`motionctl goal ACTION`: the exit code."""
    msg = goal_from_args(args)  # before any socket: a goal motiond would refuse is a usage error
    return send_goal(open_link(cfg, ("event",)), msg, wait=getattr(args, "wait", True), out=sys.stdout,
                     rng=random.Random(), goal_id=args.id)


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
    emit(out, f"sent {enum_name(GoalKind, msg.kind)} goal {msg.goal_id}")
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
