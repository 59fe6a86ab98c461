"""`motionctl new-robot NAME [-o PATH] [--force]`: a config skeleton for a new
12-joint quadruped.

Writes two files from the templates in config/templates/ (installed with the
package as its data, controller/data/config/templates/):

* the robot config, PATH (default config/NAME.yaml): every key a quadruped
  needs, CyberDog 2's structure, each robot-specific figure CyberDog 2's with
  the comment "CyberDog 2's figure: measure yours", and the `joint_map`;
* its physics figures, physics/NAME.yaml beside it (the structure of
  config/physics/cyberdog2.yaml), named by the config's `sim.physics`.

The paths inside the config (the FSM table, the gait directory, the physics
file) are written relative to where the config goes, so the skeleton loads as
written; `motionctl check-config PATH` then lists every figure still marked.
Existing files are left alone unless --force. Pure: writes two files, opens
no sockets. docs/NEW_ROBOT.md walks through the result.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from string import Template
from typing import Any, TextIO

from controller.cli.commands import summary
from controller.cli.new_robot_mjcf import fill_from_model
from controller.robot.config.reader import ConfigError
from controller.robot.maker_figures import read_maker_quadruped
from controller.robot.resources import CONFIG_DIR, GAITS_DIR

TEMPLATES = CONFIG_DIR / "templates"
CONFIG_TEMPLATE = TEMPLATES / "quadruped.yaml"
PHYSICS_TEMPLATE = TEMPLATES / "physics_quadruped.yaml"
FSM_TABLE = CONFIG_DIR / "cyberdog_fsm.yaml"
GAITS = GAITS_DIR / "quadruped"
USER_GAITS = GAITS_DIR / "user" / "cyberdog2"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
EXIT_OK, EXIT_REFUSED = 0, 1


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add `new-robot` to an argparse subparsers object; its func is `run`."""
    parser = sub.add_parser(
        "new-robot", help=summary("new-robot"),
        description="Write a config skeleton for a 12-joint quadruped named NAME: every key a "
                    "quadruped needs, with CyberDog 2's figures marked \"CyberDog 2's figure: "
                    "measure yours\" where yours go, the joint_map, and a physics-figures skeleton "
                    "(physics/NAME.yaml beside the config). It loads as written; `motionctl "
                    "check-config` lists what is still to fill in. docs/NEW_ROBOT.md walks through it. "
                    "Exit code 0 when written, 1 if a file exists (without --force) or NAME is not a name.")
    parser.add_argument("name", metavar="NAME", help="the robot's name (letters, digits, _ and -)")
    parser.add_argument("-o", "--output", metavar="PATH",
                        help="where the config goes (default: config/NAME.yaml); the physics "
                             "figures go to physics/NAME.yaml in its directory")
    parser.add_argument("--mjcf", metavar="FILE",
                        help="the robot's own MuJoCo model (its maker's MJCF, as it is): the joint map, "
                             "limits, torque limits, leg geometry, mass and stand height are read from it "
                             "(each line says so), sim.mjcf points at it and no physics file is written; "
                             "what it does not hold keeps CyberDog 2's figure and its mark")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    parser.set_defaults(func=run)
    return parser


def _relative(target: Path, start: Path) -> str:
    """`target` as a path relative to the directory `start` when it is below
    it (the new physics file) or `start` is in the tree of the shipped configs
    (a config beside them moves with them), else absolute (a config anywhere
    else keeps finding the shipped files)."""
    target, start = target.resolve(), start.resolve()
    shipped_tree = FSM_TABLE.resolve().parent.parent       # holds config/ and gaits/
    if target.is_relative_to(start) or start.is_relative_to(shipped_tree):
        return Path(os.path.relpath(target, start)).as_posix()
    return target.as_posix()


def skeleton(name: str, config_path: Path) -> tuple[str, str, Path]:
    """The config text, the physics text and where the physics file goes, for
    a config written to `config_path`."""
    physics_path = config_path.parent / "physics" / f"{name}.yaml"
    here = config_path.parent
    values = {"robot": name, "fsm": _relative(FSM_TABLE, here), "gaits": _relative(GAITS, here),
              "user_gaits": _relative(USER_GAITS, here), "physics": _relative(physics_path, here)}
    config = Template(CONFIG_TEMPLATE.read_text()).substitute(values)
    physics = Template(PHYSICS_TEMPLATE.read_text()).substitute(values)
    return config, physics, physics_path


def run(args: argparse.Namespace, _daemon_cfg: object = None, *, out: TextIO | None = None) -> int:
    """Write the two files; 0 when written, 1 when refused."""
    out = out or sys.stdout
    name = args.name
    if not NAME.fullmatch(name):
        print(f"motionctl new-robot: {name!r} is not a robot name (letters, digits, _ and -, "
              "starting with a letter or digit)", file=sys.stderr)
        return EXIT_REFUSED
    config_path = Path(args.output) if args.output else Path("config") / f"{name}.yaml"
    config, physics, physics_path = skeleton(name, config_path)
    if getattr(args, "mjcf", None):
        return _from_model(args, config_path, config, physics_path, out)
    existing = [p for p in (config_path, physics_path) if p.exists()]
    if existing and not args.force:
        print(f"motionctl new-robot: {', '.join(map(str, existing))} already "
              f"{'exists' if len(existing) == 1 else 'exist'}; pass --force to overwrite", file=sys.stderr)
        return EXIT_REFUSED
    physics_path.parent.mkdir(parents=True, exist_ok=True)
    config_path.write_text(config)
    physics_path.write_text(physics)
    print(f"wrote {config_path} and {physics_path}: CyberDog 2's figures where yours go, each marked "
          f"\"CyberDog 2's figure: measure yours\".\nnext: measure them (docs/NEW_ROBOT.md), then "
          f"`motionctl check-config {config_path}` lists what is left", file=out)
    return EXIT_OK


def _from_model(args: argparse.Namespace, config_path: Path, config: str, physics_path: Path,
                out: TextIO) -> int:
    """`--mjcf`: the skeleton with the maker's model's figures in; no physics file."""
    model = Path(args.mjcf)
    if config_path.exists() and not args.force:
        print(f"motionctl new-robot: {config_path} already exists; pass --force to overwrite", file=sys.stderr)
        return EXIT_REFUSED
    try:
        figures = read_maker_quadruped(model)
    except ConfigError as exc:
        print(f"motionctl new-robot: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    here = config_path.parent
    text = fill_from_model(config, figures, _relative(model, here),
                           f"  physics: {_relative(physics_path, here)}")
    config_path.parent.mkdir(parents=True, exist_ok=True)
    config_path.write_text(text)
    print(f"wrote {config_path}: the joint map, limits, torque limits, leg geometry, mass and stand "
          f"height read from {model}, each line saying so; the rest CyberDog 2's figures, marked "
          f"\"CyberDog 2's figure: measure yours\".", file=out)
    for reason in figures.missing:
        print(f"not in the model: {reason}", file=out)
    print(f"next: `motionctl check-config {config_path}` (it compares the config's legs with the model's)",
          file=out)
    return EXIT_OK
