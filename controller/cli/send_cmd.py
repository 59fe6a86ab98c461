"""`motionctl send`: send one robot_control_cmd and keep its heartbeat going.

Speaks only the public CyberDog 2 protocol (SPEC §1-§3), so it also drives a
real CyberDog. The command gets a fresh life_count and is re-sent every
100 ms; with --wait it ends once the response shows it finished (0), refused
(2, with motiond's own reason when it gives one) or not finished in time (3).
While a hold runs (controller/cli/hold.py) the hold sends it and keeps it
alive instead, so the next send does not fight it.
"""
from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from controller.cli.client import (
    DEFAULT_TIMEOUT_S,
    EXIT_CODES_HELP,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    CompletionTracker,
    Formatter,
    Link,
    ModeNames,
    Outcome,
    ResponseReporter,
    choose_life_count,
    daemon_refusal,
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
from controller.cli.commands import summary
from controller.cli.hold import HoldError, hold_path, json_fields, request
from controller.cli.names import number_or_word, resolve_gait, resolve_mode
from controller.motion.sequence import Fields, build_command, pad
from controller.robot.config.wire import Wire

LYING_MODES = (0, 7)      # modes the 0.5 s timeout leaves as they are
LETTING_GO = ("the heartbeat stops as motionctl exits: the controller lies the robot down 0.5 s from "
              "now unless another command comes (`motionctl hold --start` keeps it between commands)")

# argparse dest -> command field, for the options `send` exposes.
SEND_FIELDS = {"mode": "mode", "gait": "gait_id", "contact": "contact", "vel": "vel_des",
               "rpy": "rpy_des", "pos": "pos_des", "acc": "acc_des", "ctrl_point": "ctrl_point",
               "foot_pose": "foot_pose", "step_height": "step_height", "value": "value",
               "duration": "duration"}


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add `send` to an argparse subparsers object; its func is `run`."""
    send: argparse.ArgumentParser = sub.add_parser(
        "send", help=summary("send"),
        description="Send one robot_control_cmd with a fresh life_count (one past the "
                    "controller's last accepted value from controller_status, else random), "
                    "then re-send it every 100 ms as the heartbeat so the controller's 0.5 s "
                    "timeout does not fire. Without --wait, print response changes until "
                    "Ctrl-C. Fields not given are 0. While `motionctl hold` runs, the hold "
                    "sends the command and keeps it alive, and send exits once it is sent "
                    "(with --wait, once it finished).",
        epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    int8, int32 = int_type(8, "int8"), int_type(32, "int32")
    send.add_argument("--mode", type=number_or_word, required=True, metavar="M",
                      help="FSM mode: a number (int8) or a word: stand (12), lie (7 gait 1), "
                           "damper (7), trot (11 gait 3), walk (11 gait 6), pose (21), "
                           "pose-absolute (21 gait 5), motion (62), off (0)... or a state's name")
    send.add_argument("--gait", type=number_or_word, metavar="G",
                      help="gait_id: a number (int8) or, for mode 11, a word: trot (3), walk (6), "
                           "trot-slow (27), trot-fast (10), pronk, bound, pace (default: the mode "
                           "word's gait, else 0)")
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


def fields_from_args(args: argparse.Namespace, fsm_names: Mapping[int, str]) -> Fields:
    """The command fields given on the `send` command line, the mode and gait
    words resolved (controller/cli/names.py); the rest stay 0. ValueError for
    an unknown word."""
    fields = {field: getattr(args, dest) for dest, field in SEND_FIELDS.items()
              if getattr(args, dest) is not None}
    mode, gait = resolve_mode(args.mode, fsm_names)
    fields["mode"] = mode
    if args.gait is not None:
        fields["gait_id"] = resolve_gait(args.gait)
    elif gait is not None:
        fields["gait_id"] = gait
    return fields


def run(args: argparse.Namespace, cfg: Wire) -> int:
    """`motionctl send`: the exit code. Through the hold when one runs."""
    try:
        fields = fields_from_args(args, cfg.fsm.names)
    except ValueError as exc:
        print(f"motionctl: send: {exc}", file=sys.stderr)
        return EXIT_USAGE
    link = open_link(cfg)
    link.poll()  # drop feedback that predates this command
    try:
        answer = request(hold_path(cfg.lcm), {"op": "send", "fields": json_fields(fields)})
    except HoldError as exc:
        print(f"motionctl: send: the hold refused it: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if answer is not None:
        return send_held(link, fields, answer, wait=args.wait, timeout=args.timeout,
                         names=cfg.fsm.name, out=sys.stdout)
    return send_command(link, fields, wait=args.wait, timeout=args.timeout,
                        names=cfg.fsm.name, out=sys.stdout, rng=random.Random())


def send_held(link: Link, fields: Fields, answer: dict[str, Any], *, wait: bool, timeout: float,
              names: ModeNames, out: TextIO) -> int:
    """The hold sent the command and keeps it alive: follow it with --wait."""
    sent_at = link.now()
    emit(out, f"sent {describe_command(fields, names)}, life_count {answer['life_count']}, "
              f"through the hold (pid {answer['pid']}), which keeps its heartbeat")
    if not wait:
        return EXIT_OK
    mode, gait = int(fields["mode"]), int(fields.get("gait_id", 0))
    tracker = CompletionTracker(mode, gait, sent_at, timeout)
    try:
        outcome = follow(link, tracker, ResponseReporter(names), out)
    except KeyboardInterrupt:
        emit(out, "stopped waiting; the hold keeps the command alive")
        return EXIT_INTERRUPTED
    reason = daemon_refusal(link, mode, sent_at) if outcome is Outcome.REFUSED else None
    emit(out, outcome_line(outcome, mode, gait, tracker, timeout, names, reason))
    return int(outcome)


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
    reason = daemon_refusal(link, mode, sent_at) if outcome is Outcome.REFUSED else None
    emit(out, outcome_line(outcome, mode, gait, tracker, timeout, names, reason))
    if outcome is Outcome.DONE and mode not in LYING_MODES:
        emit(out, LETTING_GO)
    return int(outcome)
