"""`motionctl foxglove` (a live Foxglove WebSocket server on the robot's LCM)
and `motionctl export` (a recording to an MCAP file), both through
controller/service/foxglove_feed.py."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from controller.cli.client import EXIT_CODES_HELP, Formatter
from controller.cli.commands import summary
from controller.robot.config import Config

EXIT_OK, EXIT_ERROR = 0, 1
INSTALL_HINT = "pip install 'motiond[foxglove]' (or: pip install foxglove-sdk)"

FOXGLOVE_HELP = """\
Serve the robot to the Foxglove app (https://foxglove.dev, desktop or browser)
over its WebSocket protocol: open a connection to ws://HOST:PORT. It streams the
robot's 3D model posed live (from sim_state in simulation; from joint_state and
the global_to_robot odometry on a real robot), joint positions, speeds and
torques to plot (/joint_states, /joint_cmd), mode, gait and progress (/status),
the odometry pose and path, and the feet on the ground (simulation). It only
listens to the daemon's LCM ports (same config and namespace); it sends nothing.
Runs until Ctrl-C or --seconds."""

EXPORT_HELP = """\
Convert a recording (`motionctl record`, BASE as given to it) into one MCAP
file that Foxglove opens: the same topics as `motionctl foxglove`, at their
recorded times."""


def add_parsers(sub: Any) -> None:
    fox = sub.add_parser("foxglove", help=summary("foxglove"), description=FOXGLOVE_HELP,
                         epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    fox.add_argument("--host", default="127.0.0.1",
                     help="address to listen on (default %(default)s; 0.0.0.0 for other machines)")
    fox.add_argument("--port", type=int, default=8765, help="TCP port (default %(default)s; 0: any free one)")
    fox.add_argument("--seconds", type=float, default=None, metavar="S",
                     help="stop after S seconds (default: at Ctrl-C)")
    fox.set_defaults(func=run_foxglove)

    exp = sub.add_parser("export", help=summary("export"), description=EXPORT_HELP,
                         epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    exp.add_argument("base", type=Path, metavar="BASE", help="the recording's base name")
    exp.add_argument("-o", "--output", type=Path, required=True, metavar="OUT.mcap",
                     help="the MCAP file to write")
    exp.add_argument("--force", action="store_true", help="overwrite OUT.mcap if it exists")
    exp.set_defaults(func=run_export)


def _service() -> Any:
    """controller.service.foxglove_live, or None with the reason printed."""
    try:
        from controller.service import foxglove_live
    except ImportError as exc:
        if "foxglove" not in str(exc):
            raise
        print(f"motionctl: the Foxglove SDK is not installed: {INSTALL_HINT}", file=sys.stderr)
        return None
    return foxglove_live


def run_foxglove(args: argparse.Namespace, cfg: Config) -> int:
    live = _service()
    if live is None:
        return EXIT_ERROR

    def ready(port: int) -> None:
        print(f"serving {cfg.robot} on ws://{args.host}:{port}: in Foxglove, Open connection -> "
              f"Foxglove WebSocket -> ws://{'localhost' if args.host in ('127.0.0.1', '0.0.0.0') else args.host}"
              f":{port}", flush=True)
    try:
        served = live.serve(cfg, args.host, args.port, args.seconds, on_ready=ready)
    except live.FoxgloveError as exc:
        print(f"motionctl: foxglove: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_OK
    print(f"stopped: {served.messages} messages heard, {served.poses} poses sent")
    return EXIT_OK


def run_export(args: argparse.Namespace, cfg: Config) -> int:
    return export_to(cfg, args.base, args.output, overwrite=args.force)


def export_to(cfg: Config, base: Path, out: Path, overwrite: bool) -> int:
    """Export the recording at `base` to `out` (also `record --mcap`); the exit code."""
    live = _service()
    if live is None:
        return EXIT_ERROR
    from controller.service.recording import RecordingError
    try:
        counts = live.export(cfg, base, out, overwrite=overwrite)
    except (live.FoxgloveError, RecordingError) as exc:
        print(f"motionctl: export: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(f"wrote {out}: {counts['messages']} messages drawn on, {counts['poses']} poses"
          + (f", {counts['undecodable']} undecodable skipped" if counts["undecodable"] else ""))
    return EXIT_OK
