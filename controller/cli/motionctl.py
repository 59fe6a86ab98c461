"""motionctl: the companion command line of motiond.

    motionctl send   send one command and keep its heartbeat going
    motionctl hold   keep the heartbeat between motionctl commands
    motionctl watch  show the controller's status, live or once
    motionctl play   play a TOML command sequence (official CyberDog format)
    motionctl goal   goal-directed moves, odometry and triggers (motion_goal_t)
    (and script, validate, check-config, new-robot, spy, sim, render, view, foxglove, export,
     record, replay, plot, bridge, board-emulator, joint-check: see --help)

`send` and `play` speak only the public CyberDog 2 protocol (SPEC §1-§3), so
they also drive a real CyberDog; `watch` reads motiond's controller_status,
`global_to_robot` odometry and motion events; `goal` speaks motiond's own
motion_goal / motion_event pair.

This module is only the wiring: the top-level parser, one module per
subcommand adding its own parser (send_cmd, hold_cmd, watch_cmd, play_cmd, goal_cmd,
script_cmd, spy_cmd, sim_cmd, render_cmd, optimise_cmd, view_cmd, foxglove_cmd, check_config,
new_robot, log_cmd, bridge_cmd, joint_check_cmd here in controller/cli/, and controller/motion/validate.py),
and main(), which loads the config and maps errors to exit codes. What the talking subcommands share (the Link made from
a bus and a clock, so the send / wait / play logic runs in the tests on fakes,
exit codes, wording, waiting) is in controller/cli/client.py.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

from controller.cli.client import (
    EXIT_BROKEN_PIPE,
    EXIT_CODES_HELP,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    Formatter,
    Parser,
    SetupError,
)
from controller.cli.commands import COMMANDS, FILE_COMMANDS, WIRE_COMMANDS
from controller.motion.sequence import FieldError, SequenceError
from controller.robot.config.reader import ConfigError
from controller.robot.config.wire import load_wire, with_namespace

GLOBAL_OPTIONS = ("--config", "--namespace")     # the options that take a value before COMMAND


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """motionctl's parser: every subcommand's own for `command` None, else
    `command`'s own and the others by their summary only (their modules,
    some heavy, are not imported)."""
    parser = Parser(
        prog="motionctl",
        description="Command line for motiond and other CyberDog 2 compatible controllers: "
                    "send commands, watch the status, play command sequences, send motion goals.",
        epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    parser.add_argument("--config", metavar="PATH",
                        help="robot config with the LCM ports and channels "
                             "(default: config/cyberdog2.yaml)")
    parser.add_argument("--namespace", metavar="NAME",
                        help="talk to the motiond started with --namespace NAME "
                             "(default: the config's lcm.namespace, normally none)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    added: set[str] = set()
    for name, (module, summary) in COMMANDS.items():
        if name in added:
            continue
        if command is None or COMMANDS.get(command, ("",))[0] == module:
            added |= _add_full(sub, module, summary)
        else:
            sub.add_parser(name, help=summary, add_help=False)
            added.add(name)
    return parser


def _add_full(sub: Any, module: str, summary: str) -> set[str]:
    """Add the parsers `module` defines; the names it added."""
    before = set(sub.choices)
    mod = importlib.import_module(f"controller.{module}")
    if module == "motion.validate":
        mod.add_parser(sub, summary, physics=_physics_check)
    elif module == "cli.log_cmd":
        mod.add_parsers(sub, Formatter)
    elif hasattr(mod, "add_parsers"):
        mod.add_parsers(sub)
    else:
        mod.add_parser(sub)
    return set(sub.choices) - before


def command_in(argv: list[str]) -> str | None:
    """The subcommand named in `argv` (the first word after the global
    options), or None."""
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in GLOBAL_OPTIONS:
            skip = True
        elif not word.startswith("-"):
            return word
    return None


def _physics_check(findings: Any) -> Any:
    """`validate --physics`: the simulator's run (imports mujoco, so only then)."""
    from controller.sim.physics_check import PhysicsCheck
    return PhysicsCheck(findings)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C, so `kill` ends a run through the same clean path."""
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `motionctl` console script; returns the exit code."""
    words = sys.argv[1:] if argv is None else argv
    command = command_in(words)
    parser = build_parser(command if command in COMMANDS else None)
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:  # --help (0) or a usage error (1, see client.Parser)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        if args.command in FILE_COMMANDS:   # files only; need no LCM config
            return int(args.func(args))
        if args.command in WIRE_COMMANDS:   # talk only: the config's wire part is enough
            cfg: Any = with_namespace(load_wire(args.config), args.namespace)
        else:
            if args.command == "render":
                # It picks MuJoCo's GL backend (EGL) before MuJoCo is first
                # imported, which loading a config with its own MJCF does.
                import controller.service.render  # noqa: F401
            from controller.robot.config import load_config
            cfg = with_namespace(load_config(args.config), args.namespace)
        with _sigterm_as_interrupt():
            return int(args.func(args, cfg))
    except FieldError as exc:
        print(f"motionctl: goal {exc.key}: {exc.reason}", file=sys.stderr)
        return EXIT_USAGE
    except (ConfigError, SequenceError, SetupError) as exc:
        print(f"motionctl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # before anything was sent, e.g. while listening for status
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
