"""`motionctl spy`: lcm-spy on motiond's LCM URLs, with motiond's types decoded.

lcm-spy listens on one LCM URL, and motiond uses three (one UDP port each,
config lcm.ports): so this starts one lcm-spy window per port, each titled
with its port name and URL, all with the types jar (controller.service.lcmjava) on
their CLASSPATH. It waits until every window is closed; Ctrl-C closes them all.
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.cli.commands import summary
from controller.robot.config import Config, LcmConfig
from controller.service import lcmjava

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130

DESCRIPTION = """\
Start lcm-spy, LCM's traffic viewer, on the daemon's LCM URLs from the robot
config, with every type in lcmtypes/ decoded: double-click a channel to see
its fields live.

lcm-spy listens on one URL, but motiond uses one UDP port per kind of traffic.
So this opens one lcm-spy window per port, titled with the port's name and URL.
With the shipped config:
  command   7671  robot_control_cmd, user_gait_file, user_gait_result,
                  motion_goal, motion_event, script_request
  response  7670  robot_control_response
  joint     7667  joint_cmd, joint_state, motor_ctrl, motor_ctrl_state,
                  controller_status, global_to_robot, tick_trace
--port picks some of them. Closing a window leaves the others open; Ctrl-C
closes them all.

First the types jar (build/lcmtypes/motiond-types.jar) is built with lcm-gen,
javac and jar if it is missing or older than any .lcm file; it needs a JDK
(Debian/Ubuntu: default-jdk-headless) and a display."""

EPILOG = """\
exit codes:
  0    every lcm-spy window was closed normally (or --dry-run)
  1    usage or config error, a missing tool, a failed jar build, no display,
       or an lcm-spy that exited with an error
  130  interrupted (Ctrl-C or SIGTERM)"""


@dataclass(frozen=True)
class SpyWindow:
    port: str
    url: str
    argv: list[str]


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "spy", help=summary("spy"),
        description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", action="append", metavar="NAME",
                        help="only this port of the config's lcm.ports (command, response, "
                             "joint); repeat for more (default: all of them, one window each)")
    parser.add_argument("--dry-run", action="store_true",
                        help="build the types jar and print the lcm-spy commands "
                             "instead of starting them")
    parser.set_defaults(func=run)
    return parser


def spy_windows(lcm: LcmConfig, ports: list[str], lcm_spy: Path) -> list[SpyWindow]:
    """The lcm-spy command line for each port, in the order given."""
    windows = []
    for port in ports:
        url = lcm.url(port)
        label = f"motiond {port} :{lcm.ports[port]}"
        windows.append(SpyWindow(port, url, [str(lcm_spy), "--lcm-url", url,
                                             "--title", label, "--title-url"]))
    return windows


def classpath_env(jar: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment with the types jar first on CLASSPATH; lcm-spy's script
    adds CLASSPATH to its own jars, and its type scan reads CLASSPATH too."""
    env = dict(os.environ if env is None else env)
    old = env.get("CLASSPATH")
    env["CLASSPATH"] = f"{jar}{os.pathsep}{old}" if old else str(jar)
    return env


def run(args: argparse.Namespace, cfg: Config) -> int:
    ports = args.port or list(cfg.lcm.ports)
    unknown = [p for p in ports if p not in cfg.lcm.ports]
    if unknown:
        known = ", ".join(f"{name} {number}" for name, number in cfg.lcm.ports.items())
        return _fail(f"unknown port {unknown[0]!r} (the config's ports: {known})")
    ports = list(dict.fromkeys(ports))   # once each, in the order given
    try:
        jar = lcmjava.types_jar()
        windows = spy_windows(cfg.lcm, ports, lcmjava.lcm_tool("lcm-spy"))
        if args.dry_run:
            print(f"CLASSPATH={shlex.quote(str(jar))}")
            for w in windows:
                print(shlex.join(w.argv))
            return EXIT_OK
        lcmjava.java_tool("java")
    except lcmjava.LcmJavaError as exc:
        return _fail(str(exc))
    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY"):
        return _fail("lcm-spy opens a window, but DISPLAY is not set "
                     "(run it in a desktop session, or over ssh -X)")
    return _run_windows(windows, classpath_env(jar))


def _run_windows(windows: list[SpyWindow], env: dict[str, str]) -> int:
    procs: list[tuple[SpyWindow, subprocess.Popen[bytes]]] = []
    try:
        for w in windows:
            procs.append((w, subprocess.Popen(w.argv, env=env)))
            print(f"lcm-spy on {w.url} ({w.port} port), pid {procs[-1][1].pid}", flush=True)
        codes = [(w, p.wait()) for w, p in procs]
    except KeyboardInterrupt:
        for _, p in procs:
            if p.poll() is None:
                p.terminate()
        for _, p in procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        return EXIT_INTERRUPTED
    failed = [(w, code) for w, code in codes if code != 0]
    for w, code in failed:
        print(f"motionctl: spy: lcm-spy on {w.url} ({w.port} port) exited with status {code}",
              file=sys.stderr)
    return EXIT_FAILED if failed else EXIT_OK


def _fail(message: str) -> int:
    print(f"motionctl: spy: {message}", file=sys.stderr)
    return EXIT_FAILED
