"""`motionctl script`: ask motiond to play keyframe scripts by name (script_request_t).

Sends one request and follows the motion_event answers about it
(goal_id = request_id): SCRIPT_STARTED, then SCRIPT_DONE with how it ended.
Exit codes as the rest of motionctl: 0 finished (or accepted, with
--no-wait), 2 refused, 3 no answer in time, 4 preempted or cancelled.
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
    EXIT_OK,
    EXIT_PREEMPTED,
    EXIT_REFUSED,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    STATUS_LISTEN_S,
    Formatter,
    Link,
    describe_script_event,
    open_link,
)
from controller.cli.commands import summary
from controller.msgs import controller_status_t, motion_event_t, script_request_t
from controller.protocol.goal_codes import EventKind, Reason
from controller.robot.config import Config

PLAY, CANCEL = 0, 1
ANSWER_WAIT_S = 2.0      # a request is answered (started or refused) within this when due
DONE_MARGIN_S = 2.0
_DONE_EXIT = {Reason.FINISHED: EXIT_OK, Reason.REFUSED: EXIT_REFUSED,
              Reason.PREEMPTED: EXIT_PREEMPTED, Reason.CANCELLED: EXIT_PREEMPTED}


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add `script` to an argparse subparsers object; its func is `run`."""
    p: argparse.ArgumentParser = sub.add_parser(
        "script", help=summary("script"),
        description="Ask motiond to play one or more keyframe scripts back to back, by the "
                    "names of files in the robot's script directories (config scripts."
                    "directories). A script naming only free limbs (an arm, the head) plays "
                    "beside the current mode; one that needs limbs the mode drives must "
                    "outrank its command source and plays in the script mode. Waits for "
                    "SCRIPT_DONE and prints it. See docs/SCRIPTS.md.",
        epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    p.add_argument("names", nargs="*", metavar="NAME", help="script names, played in order")
    timing = p.add_mutually_exclusive_group()
    timing.add_argument("--speed", type=float, default=0.0, metavar="F",
                        help="play F times as fast (2 halves the time)")
    timing.add_argument("--total-ms", type=int, default=0, metavar="MS",
                        help="stretch the whole chain to last MS milliseconds")
    p.add_argument("--mirror", action="store_true", help="swap left and right")
    p.add_argument("--priority", type=int, default=0, metavar="P",
                   help="1..100 (default: the robot's script priority, 15; "
                        "robot_control_cmd has 20)")
    p.add_argument("--start-in", type=float, default=0.0, metavar="S",
                   help="start S seconds from now on the daemon's clock (needs the "
                        "daemon's utime from controller_status; default: at once)")
    p.add_argument("--cancel", type=int, metavar="ID",
                   help="cancel script request ID (0: every script) instead of playing")
    p.add_argument("--id", type=int, metavar="N", help="request_id to use (default: random)")
    p.add_argument("--no-wait", action="store_true", help="exit once the script has started")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S",
                   help="seconds to wait for SCRIPT_DONE (default %(default)g)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace, cfg: Config) -> int:
    """`motionctl script`: the exit code."""
    link = open_link(cfg, ("event", "status"))
    utime = 0
    if args.start_in > 0:
        status = first_status(link)
        utime = int(status.utime) if status is not None else 0
    try:
        return send_request(args, link, utime)
    except ValueError as exc:
        print(f"motionctl: script: {exc}", file=sys.stderr)
        return EXIT_USAGE


def first_status(link: Link, listen_s: float = STATUS_LISTEN_S) -> controller_status_t | None:
    """The first controller_status heard within `listen_s`, or None."""
    deadline = link.now() + listen_s
    while link.now() < deadline:
        for msg in link.poll():
            if isinstance(msg, controller_status_t):
                return msg
        link.sleep()
    return None


def build_request(args: argparse.Namespace, rng: random.Random, daemon_utime: int = 0
                  ) -> script_request_t:
    """The request the arguments describe; ValueError on a usage error."""
    msg = script_request_t()
    msg.request_id = args.id if args.id is not None else rng.randint(1, 2**31 - 1)
    msg.utime = int(time.time() * 1e6)
    if args.cancel is not None:
        msg.action, msg.request_id = CANCEL, args.cancel
        return msg
    if not args.names:
        raise ValueError("give at least one script name (or --cancel ID)")
    if not 0 <= args.priority <= 100:
        raise ValueError(f"--priority {args.priority} is outside 0..100")
    msg.action = PLAY
    msg.names = list(args.names)
    msg.num_names = len(msg.names)
    msg.mirror = bool(args.mirror)
    msg.speed = float(args.speed)
    msg.total_ms = int(args.total_ms)
    msg.priority = int(args.priority)
    if args.start_in > 0:
        if daemon_utime <= 0:
            raise ValueError("--start-in needs controller_status from the daemon (none heard)")
        msg.start_utime = daemon_utime + int(args.start_in * 1e6)
    return msg


def follow(link: Link, msg: script_request_t, wait: bool, timeout: float, out: TextIO) -> int:
    """Wait for the answers about `msg` and return the exit code."""
    started = False
    # A request scheduled ahead is answered when its time comes (at most 60 s).
    deadline = link.now() + ANSWER_WAIT_S + (60.0 if msg.start_utime else 0.0)
    while True:
        for ev in link.poll():
            if not isinstance(ev, motion_event_t) or ev.goal_id != msg.request_id:
                continue
            if ev.kind == EventKind.SCRIPT_STARTED:
                started = True
                print(describe_script_event(ev), file=out, flush=True)
                if not wait:
                    return EXIT_OK
                deadline = link.now() + max(ev.value, 0.0) + timeout + DONE_MARGIN_S
            elif ev.kind == EventKind.SCRIPT_DONE:
                print(describe_script_event(ev), file=out, flush=True)
                return _DONE_EXIT.get(ev.reason, EXIT_REFUSED)   # IntEnum keys match ints
        if link.now() >= deadline:
            what = "SCRIPT_DONE" if started else "an answer"
            print(f"timeout: no {what} for request {msg.request_id}", file=out, flush=True)
            return EXIT_TIMEOUT
        link.sleep()


def send_request(args: argparse.Namespace, link: Link, daemon_utime: int, out: TextIO = sys.stdout,
                 rng: random.Random | None = None) -> int:
    """Send the request the arguments describe and follow its answers; ValueError on a usage error."""
    msg = build_request(args, rng or random.Random(), daemon_utime)
    link.poll()                      # drop events that predate this request
    link.bus.publish("command", link.script_channel, msg.encode())
    if msg.action == CANCEL:
        print(f"sent cancel for request {msg.request_id}", file=out, flush=True)
        return EXIT_OK
    print(f"sent request {msg.request_id}: {' + '.join(msg.names)}", file=out, flush=True)
    try:
        return follow(link, msg, not args.no_wait, args.timeout, out)
    except KeyboardInterrupt:
        stop = script_request_t()
        stop.action, stop.request_id = CANCEL, msg.request_id
        link.bus.publish("command", link.script_channel, stop.encode())
        print(f"interrupted: cancelled request {msg.request_id}", file=out, flush=True)
        return EXIT_INTERRUPTED
