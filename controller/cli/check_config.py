"""`motionctl check-config [PATH...]`: is a robot config one motiond accepts?

Loads each config with `controller.robot.config.load_config`, as the daemon does at
start, and prints one verdict per file:

    OK   <path>: robot <name>, <kind>, <n> joints, <tick_hz> Hz, <m> FSM modes, ...
    FAIL <path>: <key path>: <reason>

The loader owns every rule, so a FAIL line is the daemon's own refusal. A
config can load and still name motion files the daemon refuses at start
(keeping the rest): on-disk user gaits (mode 11), step-list motions (mode
62), keyframe scripts and .mof files. Those are printed as warnings under
the OK line; they do not fail the config (the daemon starts with them), and
`motionctl validate` checks such files one by one.

A quadruped config is also checked for figures that load one by one but do
not fit together (controller/cli/config_checks.py): heights the legs cannot
hold inside the joint limits, gaits faster than the legs step, a torque
limit that cannot hold the robot up, a balance mass far from the physics
figures, no physics figures; and every figure still marked as a placeholder
by `motionctl new-robot`. Those are warnings too: the daemon starts. A
config that names its robot's own MJCF (`sim.mjcf`) fails when the
simulator cannot build the body from it: the file, the joints and feet as
the config names (or finds) them, MuJoCo's compile; one that builds is
warned of what will cost the robot (controller/sim/model_check.py): feet
where the config's geometry does not put them, joint damping, soft foot
contact, torque limits against the model's.

Pure: reads files, opens no sockets, starts nothing. See docs/CONFIG.md for
every key.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

import mujoco

from controller.cli.commands import summary as command_summary
from controller.cli.config_checks import placeholders, quadruped_findings
from controller.motion.mof import load_net
from controller.motion.motions import MotionLibrary
from controller.motion.scripts import load_directory
from controller.motion.user_gait_files import load_user_gaits
from controller.robot.config import DEFAULT_CONFIG, Config, ConfigError, load_config, load_fsm
from controller.robot.config.reader import load_yaml
from controller.robot.mjcf_figures import maker_spec
from controller.sim.mjcf import robot_mjcf
from controller.sim.model_check import own_model_findings
from controller.sim.own_model import own_model_path


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add `check-config` to an argparse subparsers object; its func is `run`."""
    parser = sub.add_parser(
        "check-config", help=command_summary("check-config"),
        description="Load each robot config as motiond does at start and print OK with a "
                    "summary (robot, kind, joints, tick rate, modes, motions), or FAIL with "
                    "the file, the key path and the reason. Motion files the config names "
                    "that the daemon would refuse at start are listed as warnings, and so are "
                    "a quadruped's figures that do not fit together (heights out of reach, gaits "
                    "faster than the stride, torque too small to stand, balance mass against the "
                    "physics figures) and placeholders left by new-robot. Without "
                    f"PATH: motionctl's --config, else {DEFAULT_CONFIG}. Exit code 0 if every "
                    "config loads, 1 otherwise. The keys are documented in docs/CONFIG.md.")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="robot config YAML")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace, _daemon_cfg: object = None, *,
        out: TextIO | None = None) -> int:
    """Print a verdict per config; 0 if every one loads, else 1."""
    out = out or sys.stdout
    paths = args.paths or [getattr(args, "config", None) or DEFAULT_CONFIG]
    failed = 0
    for path in paths:
        fsm = fsm_table(Path(path))
        if fsm is not None:
            print(fsm, file=out)
            failed += fsm.startswith("FAIL")
            continue
        try:
            cfg = load_config(path)
        except ConfigError as exc:
            print(f"FAIL {exc}", file=out)
            failed += 1
            continue
        except Exception as exc:  # noqa: BLE001 - a loader bug is this file's FAIL, not a traceback
            print(f"FAIL {path}: the config loader crashed ({type(exc).__name__}: {exc}); "
                  "this is a bug in motiond, please report it", file=out)
            failed += 1
            continue
        broken = own_model_problem(cfg)
        if broken is not None:
            print(f"FAIL {broken}", file=out)
            failed += 1
            continue
        print(f"OK   {cfg.path}: {summary(cfg)}", file=out)
        if cfg.scaled and cfg.scale is not None and (cfg.scale.mass, cfg.scale.leg) != (1.0, 1.0):
            print(f"     scaled: {', '.join(cfg.scaled)} left out: {cfg.scale.describe()}", file=out)
        look = own_model_left_out(cfg)
        if look:
            print(f"     sim.mjcf: files missing, the look they give left out (no contact, no mass): "
                  f"{', '.join(look)}", file=out)
        for warning in refused_at_start(cfg) + inconsistencies(cfg):
            print(f"     warning: {warning}", file=out)
    return 0 if failed == 0 else 1


def fsm_table(path: Path) -> str | None:
    """For a state-machine table (`modes:` and `transitions:`, no `kind:`;
    what a robot config's `fsm:` names), its verdict line (OK or FAIL);
    None for anything else (then it is checked as a robot config)."""
    try:
        data = load_yaml(path)
    except ConfigError:
        return None                     # load_config says why
    if not isinstance(data, dict) or "kind" in data or not {"modes", "transitions"} <= data.keys():
        return None
    try:
        table = load_fsm(path)
    except ConfigError as exc:
        return f"FAIL {exc}"
    return (f"OK   {path}: a state-machine table (what a robot config's `fsm:` names), not a robot config: "
            f"{_plural(len(table.names), 'mode')}, {_plural(len(table.immediate), 'state')} with transitions")


def summary(cfg: Config) -> str:
    """One line on what the config sets up."""
    parts = [f"robot {cfg.robot}", cfg.kind, f"{cfg.num_joints} joints",
             f"{cfg.tick_hz:g} Hz", f"{len(cfg.fsm.names)} FSM modes",
             f"lcm {cfg.lcm.group}:{'/'.join(str(p) for p in cfg.lcm.ports.values())}"]
    if cfg.locomotion is not None:
        n = len(list(cfg.locomotion.gaits_dir.glob("*.yaml")))
        parts.append(f"{_plural(n, 'gait file')} in {_short(cfg, cfg.locomotion.gaits_dir)}")
        if cfg.locomotion.user_gaits is not None:
            user = load_user_gaits(cfg.locomotion.user_gaits)
            parts.append(f"{_plural(len(user.gaits), 'user gait')} in {_short(cfg, user.directory)}")
    if cfg.walk is not None:
        parts.append(f"walk {_short(cfg, cfg.walk.path)} (gaits {sorted(cfg.walk.walk_gaits)})")
    if cfg.motions is not None:
        parts.append(_plural(len(cfg.motions.files), "motion"))
    if cfg.scripts is not None:
        modes = f", scripted modes {sorted(cfg.scripts.modes)}" if cfg.scripts.modes else ""
        parts.append(f"{_plural(len(cfg.scripts.directories), 'script directory', 'script directories')}"
                     f"{modes}")
    if cfg.mof is not None:
        parts.append(f".mof net of {len(cfg.mof.files)} files")
    return ", ".join(parts)


def own_model_problem(cfg: Config) -> str | None:
    """With `sim.mjcf` (the robot's own MuJoCo model), why the simulator
    could not build its body from it (the file, its joints and feet as the
    config names them, or finds them, and MuJoCo's compile), or None."""
    if own_model_path(cfg) is None:
        return None
    try:
        mujoco.MjModel.from_xml_string(robot_mjcf(cfg))
    except ConfigError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - MuJoCo's compiler says what is wrong
        return f"{cfg.path}: sim.mjcf: the model does not compile with what the simulator adds: {exc}"
    return None


def own_model_left_out(cfg: Config) -> list[str]:
    """The mesh and texture files the robot's own MJCF names but its folder
    lacks, which the simulator leaves out (mjcf_figures.maker_spec)."""
    path = own_model_path(cfg)
    return [] if path is None else maker_spec(path, f"{cfg.path}: sim.mjcf")[1]


def refused_at_start(cfg: Config) -> list[str]:
    """What the daemon would log and refuse at start while still running:
    user gaits and motion ids whose file does not load, bad scripts, bad .mof files."""
    warnings: list[str] = []
    if cfg.locomotion is not None and cfg.locomotion.user_gaits is not None:
        for gait_id, problem in sorted(load_user_gaits(cfg.locomotion.user_gaits).errors.items()):
            warnings.append(f"locomotion.user_gaits: {problem} (mode 11 refuses gait {gait_id})")
    if cfg.motions is not None:
        library = MotionLibrary(cfg.motions.directory, cfg.motions.files, 1000.0 / cfg.tick_hz)
        for motion_id, problem in sorted(library.errors.items()):
            warnings.append(f"motions.ids.{motion_id}: {problem} (mode 62 refuses this id)")
    for directory in cfg.scripts.directories if cfg.scripts is not None else ():
        _, errors = load_directory(directory, cfg)
        warnings += [f"{error} (script refused)" for error in errors]
    for error in load_net(cfg.mof)[1] if cfg.mof is not None else ():
        warnings.append(f"{error} (left out of the .mof net)")
    return warnings


def inconsistencies(cfg: Config) -> list[str]:
    """Figures that load one by one but do not fit together (a quadruped's
    heights, poses, gaits, torques and mass against its legs and physics
    figures; controller/cli/config_checks.py), and the placeholders
    `motionctl new-robot` left to fill in."""
    try:
        kind = quadruped_findings(cfg) if cfg.kind == "quadruped" else placeholders(cfg.path)
        return kind + own_model_findings(cfg)
    except Exception as exc:  # noqa: BLE001 - a checker bug is a warning, not a traceback
        return [f"the consistency checks crashed ({type(exc).__name__}: {exc}); this is a bug in motiond, "
                "please report it"]


def _short(cfg: Config, path: Path) -> str:
    """`path` relative to the config's directory when it is below its parent
    (the shipped layout: ../gaits/...), else as it is."""
    try:
        return str(Path("..") / path.relative_to(cfg.path.parent.resolve().parent))
    except ValueError:
        return str(path)


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"
