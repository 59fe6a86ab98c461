"""`motionctl hold`: keep the heartbeat between motionctl commands
(controller/cli/hold.py).

    motionctl hold            in the foreground, until Ctrl-C
    motionctl hold --start    in the background; returns once it listens
    motionctl hold --status   what it holds
    motionctl hold --stop     let go (the controller lies the robot down)
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from typing import Any

from controller.cli.client import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, Formatter, open_link, positive_seconds
from controller.cli.commands import summary
from controller.cli.hold import DEFAULT_IDLE_S, Hold, HoldError, hold_path, request
from controller.robot.config.wire import Wire

START_WAIT_S = 10.0       # a background hold must listen within this


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "hold", help=summary("hold"),
        description="Keep the heartbeat going between motionctl commands. The controller lies the "
                    "robot down 0.5 s after the last command, and each `motionctl send` keeps its "
                    "command alive only while it runs. While a hold runs, `send` and `play` hand "
                    "their commands to it: it gives each a fresh life_count and repeats it every "
                    "100 ms, so the robot stays up between commands. It lets go (and the robot "
                    "lies down) on --stop, Ctrl-C, or after --idle seconds without a new command.",
        formatter_class=Formatter)
    what = p.add_mutually_exclusive_group()
    what.add_argument("--start", action="store_true", help="run it in the background; return once it listens")
    what.add_argument("--stop", action="store_true", help="stop the running hold")
    what.add_argument("--status", action="store_true", help="say what the running hold holds")
    p.add_argument("--idle", type=positive_seconds, default=DEFAULT_IDLE_S, metavar="S",
                   help="let go after S seconds without a new command (default %(default)g)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace, cfg: Wire) -> int:
    path = hold_path(cfg.lcm)
    try:
        if args.stop or args.status:
            answer = request(path, {"op": "stop" if args.stop else "status"})
            if answer is None:
                print("no hold runs for this controller")
                return EXIT_OK if args.stop else EXIT_USAGE
            if args.stop:
                print(f"hold (pid {answer['pid']}) stopped: the controller lies the robot down 0.5 s "
                      "after its last heartbeat")
            else:
                held = answer["command"] or "nothing yet"
                left = answer["idle_left_s"]
                print(f"hold (pid {answer['pid']}): {held}"
                      + (f"; lets go in {left:.0f} s without a new command" if left is not None else ""))
            return EXIT_OK
        if args.start:
            return start_background(args, cfg)
        hold = Hold(open_link(cfg, subscribe=("status",)), path, cfg.fsm.name, sys.stdout, args.idle)
        hold.open()
    except HoldError as exc:
        print(f"motionctl: hold: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        print(hold.run(), flush=True)
    except KeyboardInterrupt:
        print("hold: interrupted; the controller lies the robot down 0.5 s after the last heartbeat",
              flush=True)
        return EXIT_INTERRUPTED
    return EXIT_OK


def start_background(args: argparse.Namespace, cfg: Wire) -> int:
    """`hold --start`: the same command in the foreground, detached, its
    output in a log beside its socket."""
    path = hold_path(cfg.lcm)
    answer = request(path, {"op": "status"})
    if answer is not None:
        print(f"a hold already runs (pid {answer['pid']}); `motionctl hold --stop` stops it")
        return EXIT_OK
    log = path.with_suffix(".log")
    argv = [sys.executable, "-m", "controller.cli.motionctl", "--config", str(cfg.path)]
    if args.namespace:
        argv += ["--namespace", args.namespace]
    argv += ["hold", "--idle", f"{args.idle:g}"]
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            print(f"motionctl: hold: it exited at start ({proc.returncode}):\n{log.read_text()}", file=sys.stderr)
            return EXIT_USAGE
        if request(path, {"op": "status"}) is not None:
            print(f"hold started (pid {proc.pid}): `motionctl send` and `play` now hand it their commands "
                  f"and it keeps them alive; it lets go after {args.idle:g} s without a new one, or on "
                  f"`motionctl hold --stop`. Its log: {log}")
            return EXIT_OK
        time.sleep(0.05)
    proc.terminate()
    print(f"motionctl: hold: not listening after {START_WAIT_S:g} s; log: {log}", file=sys.stderr)
    return EXIT_USAGE
