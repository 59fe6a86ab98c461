"""`motionctl record | replay | plot`: record a session as LCM event logs,
re-run the controller core on it, plot it."""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from controller.cli.commands import summary
from controller.robot.config import Config
from controller.service.recorder import QUEUE_CAPACITY, Recorder
from controller.service.recording import (
    RecordingError,
    base_of,
    existing_parts,
    part_name,
)

EXIT_OK, EXIT_ERROR, EXIT_DIFFERENT, EXIT_INTERRUPTED = 0, 1, 5, 130

RECORD_HELP = """\
Record every motiond channel (the config's channels, with --namespace) as LCM
event logs (lcm-logger's format, readable by lcm-logplayer): one
series per LCM port, BASE.<port>.lcmlog.NN, a new part every --split-mb MB.
Runs until Ctrl-C, SIGTERM or --duration; with --mcap, then also writes the
session as one MCAP file for Foxglove.
Start it before motiond if you want to replay the session: replay re-runs the
daemon from its first tick, and record on the daemon's host: only there do the
logger and the daemon see each port's packets in the same order.
An existing recording with the same BASE is never appended to."""

REPLAY_HELP = """\
Re-run the controller core on a recording's inputs (commands, joint_state,
tick times, in the order the daemon took them in) and compare every message it
publishes with the recorded one, field by field (controller_status without its
loop timing). Prints 'identical' or the first differing tick, channel and field.
Use the same --config (and --namespace) as the recorded daemon.

A recording made on another host, or one the logger lost packets from, is
refused as incomplete at the first tick whose inputs it cannot prove.

exit codes: 0 identical, 1 unreadable or incomplete recording, 5 different"""

PLOT_HELP = """\
Plot the commanded joint positions and velocities (joint_cmd) against time, with
every mode change (controller_status) marked, to a PNG. Needs matplotlib
(pip install 'motiond[plot]')."""


def add_parsers(sub: Any, formatter: type[argparse.HelpFormatter]) -> None:
    rec = sub.add_parser("record", help=summary("record"),
                         description=RECORD_HELP, formatter_class=formatter)
    rec.add_argument("-o", "--output", metavar="BASE", type=Path,
                     help="base name of the files (default: motiond-YYYYmmdd-HHMMSS)")
    rec.add_argument("--split-mb", type=float, default=256.0, metavar="MB",
                     help="start a new part once a file exceeds MB (default %(default)g)")
    rec.add_argument("--keep", type=int, default=0, metavar="N",
                     help="rotate: keep only the newest N parts per port, newest as .0; "
                          "a rotated recording loses its start and cannot be replayed "
                          "(default 0: keep every part, numbered .00, .01, ...)")
    rec.add_argument("--duration", type=float, default=None, metavar="S",
                     help="stop after S seconds (default: until Ctrl-C)")
    rec.add_argument("--priority", type=int, default=0, metavar="P",
                     help="record under SCHED_FIFO at P (1-99), below motiond's "
                          "realtime.priority, so a busy machine keeps it behind for less "
                          f"time (it queues up to {QUEUE_CAPACITY} messages a port meanwhile; "
                          "default 0: the normal scheduler)")
    rec.add_argument("--mcap", type=Path, default=None, metavar="OUT.mcap",
                     help="also write the session as MCAP for Foxglove when the recording "
                          "ends (what `motionctl export BASE -o OUT.mcap` writes; needs "
                          "the foxglove extra)")
    rec.set_defaults(func=run_record)

    rep = sub.add_parser("replay", help=summary("replay"),
                         description=REPLAY_HELP, formatter_class=formatter)
    rep.add_argument("log", metavar="LOG", type=Path, help="the recording's BASE or any of its files")
    rep.set_defaults(func=run_replay)

    plot = sub.add_parser("plot", help=summary("plot"),
                          description=PLOT_HELP, formatter_class=formatter)
    plot.add_argument("log", metavar="LOG", type=Path, help="the recording's BASE or any of its files")
    plot.add_argument("-o", "--output", metavar="PNG", type=Path, required=True)
    plot.add_argument("--joints", metavar="NAME", nargs="+",
                      help="joint names or indices to plot (default: all)")
    plot.set_defaults(func=run_plot)


def run_record(args: argparse.Namespace, cfg: Config) -> int:
    if args.split_mb <= 0 or args.keep < 0 or not 0 <= args.priority <= 99:
        print("motionctl: record: --split-mb must be > 0, --keep >= 0 and --priority in 0-99",
              file=sys.stderr)
        return EXIT_ERROR
    base = args.output or Path(time.strftime("motiond-%Y%m%d-%H%M%S"))
    earlier = existing_parts(base, list(cfg.lcm.ports))
    if earlier:
        print(f"motionctl: record: {earlier[0]} exists: choose another -o, or remove the earlier "
              "recording (two sessions in one recording cannot be replayed)", file=sys.stderr)
        return EXIT_ERROR
    if args.priority:
        # Before the LCM instances: their receive threads inherit the policy.
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(args.priority))
        except OSError as exc:     # without it, record anyway
            print(f"motionctl: record: SCHED_FIFO {args.priority} refused ({exc.strerror}); "
                  "recording at normal priority", file=sys.stderr)
    base.parent.mkdir(parents=True, exist_ok=True)
    try:
        recorder = Recorder(cfg.lcm, base, int(args.split_mb * 1e6), args.keep)
    except RuntimeError as exc:     # LCM could not open a URL
        print(f"motionctl: record: {exc} ({', '.join(cfg.lcm.url(p) for p in cfg.lcm.ports)})",
              file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"motionctl: record: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for port in cfg.lcm.ports:
        print(f"recording {cfg.lcm.url(port)} to {part_name(base, port)}.*", flush=True)
    code = EXIT_OK
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        recorder.run(args.duration)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED if args.duration is not None else EXIT_OK
    finally:
        try:
            recorder.drain()        # what is queued still goes to the files
        except KeyboardInterrupt:   # a second Ctrl-C or SIGTERM: stop writing, still close
            code = EXIT_INTERRUPTED
        signal.signal(signal.SIGTERM, previous)
        recorder.close()
    counts = ", ".join(f"{port} {n}" for port, n in recorder.counts.items())
    print(f"recorded messages: {counts}")
    for path in sorted(base.parent.glob(f"{base.name}.*")):
        print(f"{path}  {path.stat().st_size} bytes")
    if args.mcap is not None:
        from controller.cli.foxglove_cmd import export_to
        if export_to(cfg, base, args.mcap, overwrite=False) != EXIT_OK:
            code = EXIT_ERROR
    return code


def run_replay(args: argparse.Namespace, cfg: Config) -> int:
    from controller.logs import configure
    from controller.service.replay import load_recording, replay

    configure("error")   # the re-run controller's own events are the recorded daemon's
    try:
        result = replay(cfg, load_recording(cfg, base_of(args.log)))
    except RecordingError as exc:
        print(f"motionctl: replay: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for note in result.notes:
        print(f"note: {note}")
    counts = ", ".join(f"{k} {n}" for k, n in result.compared.items() if n)
    if not result.identical:
        print(f"different: first at {result.differences[0]}")
        return EXIT_DIFFERENT
    if result.incomplete:
        print(f"incomplete: identical for {result.ticks} ticks, then {result.incomplete}",
              file=sys.stderr)
        return EXIT_ERROR
    print(f"identical: {result.ticks} ticks; messages compared: {counts}")
    return EXIT_OK


def run_plot(args: argparse.Namespace, cfg: Config) -> int:
    from controller.service import plot

    try:
        series = plot.load_series(cfg, base_of(args.log))
        joints = plot.pick_joints(cfg.joint_names, args.joints)
        plot.render(series, joints, cfg.joint_names, args.output)
    except (RecordingError, ValueError, plot.MissingMatplotlib) as exc:
        print(f"motionctl: plot: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(f"wrote {args.output}: {len(series.t)} ticks, {len(joints)} joints, "
          f"{len(series.modes)} mode changes")
    return EXIT_OK
