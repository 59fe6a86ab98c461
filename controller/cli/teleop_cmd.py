"""`motionctl teleop`: drive the robot from the keyboard (controller/cli/teleop.py).

On a terminal the keys act as they are pressed (cbreak mode, restored on
exit); from a pipe or file each character is a key, and the end of the input
quits. Quitting lies the robot down and waits for it (up to --lie-wait s).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import select
import sys
import termios
import time
import tty
from collections.abc import Iterator
from typing import Any

from controller.cli.client import EXIT_OK, EXIT_USAGE, Formatter, open_link, positive_seconds
from controller.cli.commands import summary
from controller.cli.gamepad import Gamepad, GamepadError
from controller.cli.teleop import KEY_HELP, Limits, Teleop
from controller.robot.config.wire import Wire

POLL_S = 0.01
STICK_S = 0.1       # s: the quickest a moving stick sends a new command


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "teleop", help=summary("teleop"),
        description="Drive the robot from the keyboard: " + KEY_HELP + ". Each key is a new command; "
                    "the heartbeat goes on between keys, and one line shows the robot's state and "
                    "what is asked. Quitting lies the robot down. Keys can come from a pipe as well "
                    "(each character a key, the end of the input quits).",
        formatter_class=Formatter)
    limits = Limits()
    p.add_argument("--max-vx", type=positive_seconds, default=limits.vx, metavar="M/S",
                   help="forward/backward speed limit (default %(default)g)")
    p.add_argument("--max-vy", type=positive_seconds, default=limits.vy, metavar="M/S",
                   help="sideways speed limit (default %(default)g)")
    p.add_argument("--max-wz", type=positive_seconds, default=limits.wz, metavar="RAD/S",
                   help="turn rate limit (default %(default)g)")
    p.add_argument("--gamepad", nargs="?", const="", default=None, metavar="DEVICE",
                   help="drive with a gamepad as well: the left stick forward/back and sideways, the "
                        "right stick across turns; A stand, X trot, Y walk, B lie down, Start quit. "
                        "DEVICE: its /dev/input/eventN (default: the first gamepad found). "
                        "Needs the evdev package (pip install 'motiond[gamepad]')")
    p.add_argument("--lie-wait", type=positive_seconds, default=10.0, metavar="S",
                   help="on quitting, wait this long for the robot to lie down (default %(default)g)")
    p.set_defaults(func=run)
    return p


@contextlib.contextmanager
def keys_as_pressed(fd: int) -> Iterator[None]:
    """cbreak mode on a terminal (keys without Enter), restored after."""
    if not os.isatty(fd):
        yield
        return
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def run(args: argparse.Namespace, cfg: Wire) -> int:
    fd = sys.stdin.fileno()
    on_tty = os.isatty(fd) and sys.stdout.isatty()
    pad = None
    if args.gamepad is not None:
        try:
            pad = Gamepad(args.gamepad or None)
        except GamepadError as exc:
            print(f"motionctl: teleop: {exc}", file=sys.stderr)
            return EXIT_USAGE
    teleop = Teleop(open_link(cfg), cfg.fsm.name, sys.stdout, Limits(args.max_vx, args.max_vy, args.max_wz),
                    tty=on_tty)
    print(f"teleop: {KEY_HELP}" + (f"; gamepad {pad.name}" if pad is not None else ""), flush=True)
    with keys_as_pressed(fd):
        going = True
        sticks_due = 0.0                                  # stick changes go out at most every STICK_S
        moved = False
        while going:
            try:
                ready, _, _ = select.select([fd] + ([pad] if pad is not None else []), [], [], POLL_S)
                if fd in ready:
                    data = os.read(fd, 64).decode(errors="replace")
                    if not data:
                        going = teleop.key("x")          # end of the input
                    for k in data:
                        if going and k not in "\r\n":
                            going = teleop.key(k)
                if pad is not None and pad in ready:
                    for event in pad.events():
                        key, stick = pad.pad.event(*event)
                        moved |= stick
                        if going and key is not None:
                            going = teleop.key(key)
                if going and pad is not None and moved and time.monotonic() >= sticks_due:
                    teleop.sticks(*pad.pad.speeds())
                    moved, sticks_due = False, time.monotonic() + STICK_S
                teleop.poll()
            except KeyboardInterrupt:                    # Ctrl-C, SIGTERM: quit as x does
                going = teleop.key("x")
            except GamepadError as exc:                  # the gamepad went away: lie down, say why
                print(f"\nmotionctl: teleop: {exc}", file=sys.stderr)
                going = teleop.key("x")
    if pad is not None:
        pad.close()
    end = time.monotonic() + args.lie_wait
    while time.monotonic() < end:
        r = teleop.response
        if r is not None and r.mode == 7 and r.gait_id == 1 and r.order_process_bar >= 95:
            break
        teleop.poll()
        time.sleep(POLL_S)
    print("\nteleop: done; the robot lies down (the heartbeat stops now)" if on_tty else
          "teleop: done; the robot lies down (the heartbeat stops now)", flush=True)
    return EXIT_OK
