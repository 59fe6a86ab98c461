"""`motionctl view`: MuJoCo's interactive viewer on a running simulator
(controller/service/view.py)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from controller.cli.client import EXIT_CODES_HELP, Formatter
from controller.cli.commands import summary
from controller.robot.config import Config

EXIT_OK, EXIT_ERROR = 0, 1

DESCRIPTION = """\
Open MuJoCo's interactive viewer on a running simulator (`motiond --sim` or
`motionctl sim`, same config and namespace): the robot's model follows the
sim_state ground truth the simulator publishes. Drag to turn the camera,
scroll to zoom; the viewer sends nothing. It needs a display; without one,
record and draw offscreen with `motionctl render`."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add `view` to an argparse subparsers object; its func is `run`."""
    p: argparse.ArgumentParser = sub.add_parser(
        "view", help=summary("view"),
        description=DESCRIPTION, epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    p.add_argument("--seconds", type=float, default=None, metavar="S",
                   help="close after S seconds (default: when the window is closed)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace, cfg: Config) -> int:
    from controller.service.view import ViewError, view

    try:
        frames = view(cfg, args.seconds)
    except ViewError as exc:
        print(f"motionctl: view: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(f"viewer closed after {frames} frames")
    return EXIT_OK
