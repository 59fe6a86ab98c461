"""`motionctl send`: send one robot_control_cmd and keep its heartbeat going.

Speaks only the public CyberDog 2 protocol (SPEC §1-§3), so it also drives a
real CyberDog. The command gets a fresh life_count and is re-sent every
100 ms; with --wait it ends once the response shows it finished (0), refused
(2) or not finished in time (3).
"""
from __future__ import annotations

import argparse
import random
import sys
from typing import Any, TextIO

from controller.cli.client import (
    DEFAULT_TIMEOUT_S,
    EXIT_CODES_HELP,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CompletionTracker,
    Formatter,
    Link,
    ModeNames,
    ResponseReporter,
    choose_life_count,
    describe_command,
    emit,
    finite_float,
    follow,
    int_type,
    last_life_count,
    open_link,
    outcome_line,
    positive_seconds,
)
from controller.motion.sequence import Fields, build_command, pad
from controller.robot.config import Config

# argparse dest -> command field, for the options `send` exposes.
SEND_FIELDS = {"mode": "mode", "gait": "gait_id", "contact": "contact", "vel": "vel_des",
               "rpy": "rpy_des", "pos": "pos_des", "acc": "acc_des", "ctrl_point": "ctrl_point",
               "foot_pose": "foot_pose", "step_height": "step_height", "value": "value",
               "duration": "duration"}


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add `send` to an argparse subparsers object; its func is `run`."""
    send: argparse.ArgumentParser = sub.add_parser(
        "send", help="send one robot_control_cmd and keep it alive",
        description="Send one robot_control_cmd with a fresh life_count (one past the "
                    "controller's last accepted value from controller_status, else random), "
                    "then re-send it every 100 ms as the heartbeat so the controller's 0.5 s "
                    "timeout does not fire. Without --wait, print response changes until "
                    "Ctrl-C. Fields not given are 0.",
        epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    int8, int32 = int_type(8, "int8"), int_type(32, "int32")
    send.add_argument("--mode", type=int8, required=True, metavar="M", help="FSM mode (int8), e.g. 12 stand, 7 damper")
    send.add_argument("--gait", type=int8, metavar="G", help="gait_id (int8; default 0)")
    send.add_argument("--vel", type=finite_float, nargs=3, metavar=("X", "Y", "YAW"),
                      help="vel_des: vx, vy (m/s), yaw rate (rad/s)")
    send.add_argument("--rpy", type=finite_float, nargs=3, metavar=("R", "P", "Y"),
                      help="rpy_des: roll, pitch, yaw (rad)")
    send.add_argument("--pos", type=finite_float, nargs=3, metavar=("X", "Y", "Z"), help="pos_des (m)")
    send.add_argument("--contact", type=int8, metavar="C",
                      help="contact leg mask (int8, hex allowed, e.g. 0x0F; default 0)")
    send.add_argument("--foot-pose", type=finite_float, nargs="+", action=PaddedFloats, metavar="F",
                      help="foot_pose: up to 6 numbers, zero-padded (m)")
    send.add_argument("--ctrl-point", type=finite_float, nargs=3, metavar=("X", "Y", "Z"),
                      help="ctrl_point: pose rotation centre (m)")
    send.add_argument("--acc", type=finite_float, nargs=6, metavar="A", help="acc_des: 6 numbers")
    send.add_argument("--step-height", type=finite_float, nargs=2, metavar=("A", "B"),
                      help="step_height (m; default 0 0)")
    send.add_argument("--value", type=int32, metavar="V", help="value bit flags (int32; default 0)")
    send.add_argument("--duration", type=int32, metavar="MS", help="duration in ms; 0 = continuous (default)")
    send.add_argument("--wait", action="store_true",
                      help="exit once the response shows this mode and gait at >= 95 %% progress (0), "
                           "a refusal (2) or no completion within --timeout (3)")
    send.add_argument("--timeout", type=positive_seconds, default=DEFAULT_TIMEOUT_S, metavar="S",
                      help="seconds to wait with --wait (default %(default)g)")
    send.set_defaults(func=run)
    return send


class PaddedFloats(argparse.Action):
    """--foot-pose: 1 to 6 numbers, zero-padded to 6."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if len(values) > 6:
            raise argparse.ArgumentError(self, f"expected at most 6 numbers, got {len(values)}")
        setattr(namespace, self.dest, pad(values, 6))


def fields_from_args(args: argparse.Namespace) -> Fields:
    """The command fields given on the `send` command line; the rest stay 0."""
    return {field: getattr(args, dest) for dest, field in SEND_FIELDS.items()
            if getattr(args, dest) is not None}


def run(args: argparse.Namespace, cfg: Config) -> int:
    """`motionctl send`: the exit code."""
    return send_command(open_link(cfg), fields_from_args(args), wait=args.wait, timeout=args.timeout,
                        names=cfg.fsm.name, out=sys.stdout, rng=random.Random())


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
