"""`motionctl render`: draw a recording of the simulated robot (its
sim_state ground truth) into a GIF or an MP4 (controller/service/render.py)."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from controller.cli.client import EXIT_CODES_HELP, Formatter
from controller.cli.commands import summary
from controller.robot.config import Config

EXIT_OK, EXIT_ERROR = 0, 1

DESCRIPTION = """\
Draw a recording (motionctl record while motiond runs --sim, or motionctl
sim) offscreen: the robot's MuJoCo model posed from every sim_state, a camera
that follows it, and the mode, gait and progress the controller reported
written on each frame. Rendering runs on the CPU through EGL (Debian/Ubuntu:
libegl1 libegl-mesa0 libgl1-mesa-dri; `make` installs them when root). An .mp4
also needs ffmpeg: the `video` extra's (pip install 'motiond[video]'; `make`
installs it) or the system's. Frames go to the file as they are drawn, with
a progress line on stderr."""


def size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d{2,4})x(\d{2,4})", text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r}: expected WIDTHxHEIGHT, e.g. 480x360")
    return int(m[1]), int(m[2])


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add `render` to an argparse subparsers object; its func is `run`."""
    p: argparse.ArgumentParser = sub.add_parser(
        "render", help=summary("render"),
        description=DESCRIPTION, epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    p.add_argument("base", type=Path, metavar="BASE", help="the recording (its base name or any of its files)")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="OUT",
                   help="out.gif or out.mp4")
    p.add_argument("--fps", type=float, default=20.0, help="frames per second (default: %(default)g)")
    p.add_argument("--size", type=size, default=(480, 360), metavar="WxH",
                   help="frame size in pixels (default: 480x360)")
    p.add_argument("--start", type=float, default=0.0, metavar="S",
                   help="start S seconds into the recording (default: 0)")
    p.add_argument("--seconds", type=float, default=None, metavar="S",
                   help="draw S seconds (default: to the end)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace, cfg: Config) -> int:
    from controller.service.render import (
        RecordingError,
        RenderError,
        check_output,
        mp4_encoder,
        poses,
        render,
    )
    from controller.sim.progress import Progress

    if not 1.0 <= args.fps <= 100.0 or args.start < 0 or (args.seconds is not None and args.seconds <= 0):
        print("motionctl: render: --fps must be in 1-100, --start >= 0, --seconds > 0", file=sys.stderr)
        return EXIT_ERROR
    width, height = args.size
    try:
        if check_output(args.output) == ".mp4":
            mp4_encoder()                 # before loading anything: say at once if there is none
        frames = poses(cfg, args.base, args.fps, args.start, args.seconds)
        count = render(cfg, frames, args.output, args.fps, width, height,
                       Progress(len(frames), "frames", lines=10))
    except (RecordingError, RenderError) as exc:
        print(f"motionctl: render: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(f"{args.output}: {count} frames, {count / args.fps:.1f} s at {args.fps:g} fps")
    return EXIT_OK
