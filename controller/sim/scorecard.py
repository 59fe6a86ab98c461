"""The physics scorecard: every robot driven through its modes and gaits in
physics, judged on ground truth against the criteria of
config/physics/scorecard.yaml (which says what each metric means).

    python -m controller.sim.scorecard [--robot NAME|CONFIG.yaml] [--only TEXT ...] [--jobs N] [-o FILE]

Prints one table and writes bench/physics.json. A benchmark, not a test: a
failing row is a finding to report, and the exit status is 0 unless the
scorecard itself could not run.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import math
import re
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from controller import msgs
from controller.core import goals
from controller.core.goals import GoalKind
from controller.logs import configure
from controller.motion.motions import load_motion
from controller.robot.config import ConfigError, load_config
from controller.robot.config.motions import MotionsConfig
from controller.robot.config.reader import load_yaml
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.mjcf_figures import subtree
from controller.robot.resources import CONFIG_DIR, DATA_ROOT
from controller.sim import limbs
from controller.sim.faults import Fault
from controller.sim.limbs import KNEE_GEOMS
from controller.sim.mjcf import has_model
from controller.sim.motion_path import commanded_path
from controller.sim.own_model import model_joints
from controller.sim.physics import geom_labels
from controller.sim.progress import Progress
from controller.sim.trial import PRELUDE_S, Trial
from controller.sim.workers import Lost, Workers, WorkersError
from controller.sim.workers import add_arguments as add_worker_arguments
from controller.sim.world import World

CARD = CONFIG_DIR / "physics" / "scorecard.yaml"
FELL_TILT = 1.0            # rad
STAND_TOLERANCE = (0.015, 0.1)   # time_to_stand: height within, tilt under
VELOCITY_FIELDS = {"vx_error": 0, "vy_error": 1, "wz_error": 2}
RECOVER_WINDOW = 0.3       # s: recover_s averages the speed over this sliding window...
RECOVER_VX = (0.05, 0.1)   # ...until vx is within 0.05 m/s + 10 % of the command
RECOVER_VY = 0.1           # and vy within this of it (m/s), to the end of the run
MIN_TRAVEL = 0.1           # m: below this an odometry error share is not measured
GOAL_ID = 16               # the goal_id the scorecard's goals carry


@dataclass
class Marks:
    """Where in the trace a row did something to the robot, for the metrics about it."""
    push: int | None = None       # the first trace row after the (last) push
    script: int | None = None     # the first trace row after the (last) `script:` step
    goal: int | None = None       # the last trace row before the goal arrived
    fault: int | None = None      # the first trace row after a part broke (`fault:`)
    goal_target: tuple[float, float, float] = (0.0, 0.0, 0.0)   # x, y, yaw in the robot's frame then


@dataclass
class Row:
    robot: str
    name: str
    issue: int
    spec: dict[str, Any]
    metrics: dict[str, float] = field(default_factory=dict)
    verdicts: dict[str, tuple[bool, str]] = field(default_factory=dict)   # metric -> (pass, limit)
    error: str = ""
    seconds: float = 0.0      # wall time of the run
    config: str = ""          # the robot's config file (set before the rows are sent to workers)

    @property
    def passed(self) -> bool:
        return not self.error and all(ok for ok, _ in self.verdicts.values())


def expand(robot: str, spec: dict[str, Any]) -> list[Row]:
    """A card's rows for one robot, `each: gait|motion` rows expanded."""
    cfg = load_config(CONFIG_DIR / spec["config"])
    rows = []
    for entry in [*spec["rows"], *spec.get("extra_rows", [])]:
        each = entry.get("each")
        if each == "gait":
            rows += _each_gait(robot, cfg, entry)
        elif each == "motion":
            ids = sorted(cfg.motions.files) if cfg.motions else []
            for motion_id in ids:
                assert cfg.motions is not None
                path = cfg.motions.directory / cfg.motions.files[motion_id]
                rows += _with_margins(robot, _motion_entry(cfg, entry, motion_id, path, None,
                                                           entry["name"].format(id=motion_id),
                                                           entry.get("per_id", {}).get(motion_id, {})))
        elif each == "robot_files":
            rows += _robot_files(robot, cfg, entry)
        else:
            rows += _with_margins(robot, entry)
    return rows


def card_row(name: str) -> dict[str, Any]:
    """The card's row entry named `name` (the first robot's that has it)."""
    for robot in CARD_DATA["robots"].values():
        for entry in [*robot["rows"], *robot.get("extra_rows", [])]:
            if entry.get("name") == name:
                return dict(entry)
    raise ConfigError(f"{CARD}: no row named {name!r}")


MOTION_TAIL_S = 2.0        # `s: motion`: the motion's steps, then this long
JUMP_MODE = 16
JUMP_WAIT_S = 1.5    # s per jump step: motiond's jumps land 0.5-1 s after the robot's step ends


def _motion_entry(cfg: Any, entry: dict[str, Any], motion_id: int, path: Path,
                  user_gaits: Path | None, name: str, own: dict[str, Any]) -> dict[str, Any]:
    """One motion's row: the entry's checks with `own`'s on top (null drops
    a shared one); a first step of `s: motion` runs the motion's steps and
    MOTION_TAIL_S more (a file that does not load keeps 30 s: the row then
    reports the refusal), and JUMP_WAIT_S more per jump (a jump's step waits
    for its landing, longer than the robot's files allow it)."""
    first = {**entry["steps"][0], "gait_id": motion_id}
    if first.get("s") == "motion":
        try:
            blocks = load_motion(path, path.parent, 1000.0 / cfg.tick_hz)
            jumps = sum(1 for b in blocks if b.mode == JUMP_MODE)
            first["s"] = sum(b.duration for b in blocks) * cfg.dt + MOTION_TAIL_S + jumps * JUMP_WAIT_S
        except ValueError:
            first["s"] = 30.0
    return {**entry, "name": name, "steps": [first] + entry["steps"][1:],
            "motion": {"id": motion_id, "file": str(path),
                       "user_gaits": None if user_gaits is None else str(user_gaits)},
            "checks": {k: v for k, v in {**entry.get("checks", {}),
                                         **own.get("checks", {})}.items() if v is not None},
            "report": [*entry.get("report", []), *own.get("report", [])]}


def _robot_files(robot: str, cfg: Any, entry: dict[str, Any]) -> list[Row]:
    """`each: robot_files`: a row per file of a directory of the robot's own
    motion files (`directory`, relative to the repository root; `files`:
    globs in it), each played unchanged as mode 62 under a free id, with the
    directory's user gaits (`user_gaits`, a folder in it) if given. A missing
    directory is one row that reports it."""
    directory = (DATA_ROOT / entry["directory"]).resolve()
    if not directory.is_dir():
        row = Row(robot, entry["name"].format(file="*"), entry["issue"], entry)
        row.error = f"no directory {directory} (the robot's motion files; see the row's comment)"
        return [row]
    user_gaits = directory / entry["user_gaits"] if "user_gaits" in entry else None
    rows = []
    for pattern in entry["files"]:
        for path in sorted(directory.glob(pattern)):
            own = entry.get("per_file", {}).get(path.name, {})
            one = _motion_entry(cfg, entry, ROBOT_FILE_ID, path, user_gaits,
                                entry["name"].format(file=path.relative_to(directory)), own)
            rows += _with_margins(robot, one)
    return rows


ROBOT_FILE_ID = 1            # the motion id a robot's file is played under


def _with_margins(robot: str, entry: dict[str, Any]) -> list[Row]:
    row = Row(robot, entry["name"], entry["issue"], entry)
    return [row, *_margins(robot, entry)] if entry.get("margins") else [row]


# `margins: true` on a row adds it again in each of these worlds (issue 17's
# sim-to-real margins), named with the world's change.
MARGINS = ({"trunk_mass_scale": 0.9}, {"trunk_mass_scale": 1.1}, {"friction": 0.5}, {"friction": 1.0})


def world_spec(world: Any) -> dict[str, Any]:
    """A row's `world:` as a mapping: a world's name is {"use": name}."""
    if world is None:
        return {}
    return {"use": world} if isinstance(world, str) else dict(world)


def in_world(rows: list[Row], world: str) -> list[Row]:
    """`rows` again in the named world (config/physics/worlds.yaml) on top
    of each row's own, named with it (`--world`)."""
    from controller.sim.world import named_worlds

    World.from_spec(world, "--world")          # a name that exists, a world that builds
    extra = named_worlds()[world]
    return [Row(r.robot, f"{r.name} [{world}]", r.issue,
                {**r.spec, "world": {**world_spec(r.spec.get("world")), **extra}}) for r in rows]


def _margins(robot: str, entry: dict[str, Any]) -> list[Row]:
    rows = []
    for change in MARGINS:
        world = {**world_spec(entry.get("world")), **change}
        label = World.from_spec(change, entry["name"]).label
        rows.append(Row(robot, f"{entry['name']} [{label}]", entry["issue"],
                        {**entry, "world": world, "margins": False}))
    return rows


def _each_gait(robot: str, cfg: Any, entry: dict[str, Any]) -> list[Row]:
    from controller.motion.gait_table import load_gaits
    if cfg.locomotion is None:
        return []
    rows = []
    for gait_id, gait in sorted(load_gaits(cfg.locomotion.gaits_dir, len(cfg.legs), cfg.locomotion.windows).items()):
        if gait_id in entry.get("skip", ()):
            continue
        vx = 0.0 if gait.stand else round(float(gait.window_max[0]) * entry["fraction"], 2)
        step = {**entry["steps"][0], "gait_id": gait_id, "vel_des": [vx, 0.0, 0.0]}
        rows.append(Row(robot, entry["name"].format(gait=gait_id, vx=vx), entry["issue"],
                        {**entry, "steps": [step] + entry["steps"][1:]}))
    return rows


NOT_CONFIGURED = "not configured: "


class NotConfigured(Exception):
    """The robot's config lacks what the row's mode plays (a jump's
    trajectory, the two-leg stand, the recovery's roll-over)."""


def run_row(row: Row) -> Row:
    started = time.perf_counter()
    try:
        _run(row)
    except NotConfigured as exc:
        row.error = f"{NOT_CONFIGURED}{exc}"
    except Exception as exc:  # noqa: BLE001 - a row that cannot run is reported, not fatal
        row.error = f"{type(exc).__name__}: {exc}"
    row.seconds = time.perf_counter() - started
    return row


SCRIPTED_MODES = {16: "jump", 64: "two-leg stand"}
UPSIDE_DOWN = 1.0       # rad of roll or pitch: a start on the back or a side needs the roll-over


def missing_for(cfg: Any, spec: dict[str, Any]) -> str | None:
    """What of the robot's config the row needs and lacks, said with what
    to do; None when it has all: a scripted mode's gait the config's
    `scripts.modes` does not list (the controller would refuse it), or a
    start on the back or a side for the recovery stand or the reset without
    the roll-over (`scripts.recovery`) or the robot's own reset policy."""
    if cfg.kind != "quadruped":
        return None
    modes = cfg.scripts.modes if cfg.scripts is not None else {}
    for step in spec.get("steps", ()):
        mode, gait = step.get("mode"), int(step.get("gait_id", 0))
        if mode not in SCRIPTED_MODES:
            continue
        name = SCRIPTED_MODES[mode]
        if mode not in modes:
            how = ("its figures made in physics: run `motionctl optimise all` (or `optimise two-leg`; "
                   "docs/SCRIPTS.md \"Two-leg stand\")" if mode == 64 else
                   "optimised trajectories: run `motionctl optimise all` (docs/SCRIPTS.md \"Jumps\")")
            return f"this robot has no {name} (mode {mode}): it needs {how}"
        if gait not in modes[mode].gaits:
            return (f"this robot's {name} (mode {mode}) has no gait {gait} (scripts.modes.{mode}.gaits lists "
                    f"{sorted(modes[mode].gaits)})")
    rpy = spec.get("start_rpy")
    upside_down = rpy is not None and max(abs(float(rpy[0])), abs(float(rpy[1]))) > UPSIDE_DOWN
    stands = any(step.get("mode") in (12, 80) for step in spec.get("steps", ()))
    if upside_down and stands and "rl_policy" not in spec and (cfg.scripts is None or cfg.scripts.rolls is None):
        return ("this robot has no roll-over for the recovery from its back or side: run "
                "`motionctl optimise all` (or `optimise roll-back`, named in `scripts.recovery`; docs/SCRIPTS.md)")
    return None


def _run(row: Row) -> None:
    spec = row.spec
    cfg = load_config(row.config or CONFIG_DIR / CARD_DATA["robots"][row.robot]["config"])
    if not has_model(cfg):
        raise ConfigError(f"no physics model for {cfg.robot} yet")
    missing = missing_for(cfg, spec)
    if missing is not None:
        raise NotConfigured(missing)
    row.metrics, row.verdicts = play(cfg, spec, row.name)


def play(cfg: Any, spec: dict[str, Any], name: str) -> tuple[dict[str, float], dict[str, Any]]:
    """The card's row `spec` (named `name`) played on the robot of `cfg`
    in physics: its metrics, from the simulator's ground truth, and its
    checks' verdicts (also the two-leg stand's optimiser's judge)."""
    motion = spec.get("motion")
    if motion is not None:
        cfg = _motion_config(cfg, motion)
    if "rl_policy" in spec:
        # A robot's own mode-80 policy file (relative to the repository root).
        policy = (DATA_ROOT / spec["rl_policy"]).resolve()
        if not policy.is_file():
            raise ConfigError(f"{CARD}: {name}: rl_policy {policy} is not a file")
        cfg = replace(cfg, rl_reset=replace(cfg.rl_reset, policy=policy))
    trial = Trial(cfg, world=World.from_spec(spec.get("world"), f"{CARD}: {name}"))
    if "start_rpy" in spec:
        pose = spec.get("start_pose", cfg.sim.get("start_pose", "fold"))
        trial.robot.place(cfg.poses[pose], tuple(spec["start_rpy"]))
    if spec.get("prelude", "stand") == "stand":
        trial.send(12)
        trial.run(spec.get("prelude_s", PRELUDE_S))
    start = len(trial.trace.t)
    command = np.zeros(3)
    mode = -1
    marks = Marks()
    for step in spec["steps"]:
        fields = {k: resolve(cfg, v, f"{name}: {k}") for k, v in step.items()
                  if k not in ("s", "heartbeat", "push", "goal", "upload", "random", "script", "fault")}
        if "script" in step:
            trial.send_script(str(step["script"]), SCRIPT_REQUEST_ID)
            marks.script = len(trial.trace.t)
        uploads = [_upload(trial, file, name) for file in step.get("upload", ())]
        if "push" in step:
            trial.robot.data.qvel[0:3] += np.asarray(step["push"], dtype=float)
            marks.push = len(trial.trace.t)
        if "fault" in step:
            trial.robot.inject(Fault.from_spec(step["fault"], list(cfg.joint_names), list(cfg.legs), name))
            marks.fault = len(trial.trace.t)
        if "goal" in step:
            _send_goal(trial, step["goal"], step["s"], marks)
        if "random" in step:
            _random_commands(trial, cfg, fields, step["random"], step["s"], name)
            mode = int(fields["mode"])
            continue
        if "mode" in fields:
            trial.send(**fields)
            command = np.asarray(fields.get("vel_des", [0.0, 0.0, 0.0]), dtype=float)
            mode = int(fields["mode"])
        trial.run(step["s"], heartbeat=step.get("heartbeat", True))
        for file, text in uploads:
            if text not in trial.ctl.gaits.user_gait.values():
                raise ConfigError(f"{CARD}: {name}: the controller refused the upload of "
                                  f"{file}: {trial.ctl.counters.last_error}")
    metrics = measure(trial, start, spec, command, mode, marks)
    if motion is not None:
        metrics.update(motion_metrics(trial, start, int(motion["id"]), metrics))
    return metrics, judge(metrics, spec["checks"], command)


def _motion_config(cfg: Any, motion: dict[str, Any]) -> Any:
    """The config with the row's motion file as its motion id (a robot's own
    file, played unchanged) and the user gaits of its directory, if named."""
    path = Path(motion["file"])
    cfg = replace(cfg, motions=MotionsConfig(path.parent, {int(motion["id"]): path.name}))
    if motion.get("user_gaits") and cfg.locomotion is not None:
        cfg = replace(cfg, locomotion=replace(cfg.locomotion, user_gaits=Path(motion["user_gaits"])))
    return cfg


BAR_DONE = 100


def motion_metrics(trial: Trial, start: int, motion_id: int,
                   metrics: dict[str, float]) -> dict[str, float]:
    """A mode-62 motion against its own steps (controller/sim/motion_path.py):
    refused_s (time with switch_status 5), path_error_share and
    turn_error_share (where the body ended and how far it turned against
    the steps' path: 1 = at the allowance of PATH_ALLOWANCE, TURN_ALLOWANCE),
    bar_early_s (how long before the last step's start the bar said 100;
    0 when it did not), and the path itself (path_x, path_y, path_yaw)."""
    ctl = trial.ctl
    if ctl.motions is None or motion_id not in ctl.motions.motions:
        raise ConfigError(f"motion {motion_id} did not load: "
                          f"{ctl.motions.why_missing(motion_id) if ctl.motions else 'no motions'}")
    blocks = ctl.motions.motions[motion_id]
    loco = ctl.fsm.behaviours.get(11)
    path = commanded_path(blocks, getattr(loco, "gait", lambda _id: None), trial.cfg.dt)
    tr, dt = trial.trace, trial.cfg.dt
    status = np.array(tr.switch_status[start:])
    bar = np.array(tr.bar[start:])
    reported = np.array(tr.mode[start:])
    done = np.flatnonzero((bar >= BAR_DONE) & (reported == 62))
    last_start = path.seconds - blocks[-1].duration * dt
    early = max(0.0, last_start - float(done[0]) * dt) if len(done) else 0.0
    d, t = PATH_ALLOWANCE, TURN_ALLOWANCE
    error = math.hypot(metrics["travel"] - path.x, metrics["lateral"] - path.y)
    out = {
        "refused_s": float((status == 5).sum()) * dt,
        "path_error_share": error / (d[0] + d[1] * path.distance),
        "turn_error_share": abs(metrics["yaw_change"] - path.yaw) / (t[0] + t[1] * abs(path.yaw)),
        "bar_early_s": early,
        "path_x": path.x, "path_y": path.y, "path_yaw": path.yaw,
    }
    return {k: float(v) for k, v in out.items()}      # plain floats: bench/physics.json


MOTION_METRICS = ("refused_s", "path_error_share", "turn_error_share", "bar_early_s",
                  "path_x", "path_y", "path_yaw")      # what motion_metrics adds
PATH_ALLOWANCE = (0.1, 0.2)    # m + share of the steps' distance
TURN_ALLOWANCE = (0.15, 0.2)   # rad + share of the steps' turn


SCRIPT_REQUEST_ID = 19       # the request id of a row's `script:` step


# A humanoid's legs below the hip: landing on them (knees bent) is the
# protective posture working, not the impact.
LOWER_LIMBS = ("_shank", "_thigh")


# Figures of the robot's config a row may name instead of a number (in a
# list, the entry's index is the axis): the walk's velocity window, the pose
# height range and the stand height, so one row fits robots of different
# sizes. A figure may carry an offset in m or m/s: "stand_height + 0.04".
CONFIG_FIGURES = ("walk_min", "walk_max", "height_min", "height_max", "stand_height")
_FIGURE = re.compile(r"^\s*([a-z_]+)\s*(?:([+-])\s*([0-9]*\.?[0-9]+))?\s*$")


def resolve(cfg: Any, value: Any, where: str) -> Any:
    """`value` with every CONFIG_FIGURES name replaced by the config's figure."""
    if isinstance(value, list):
        return [_figure(cfg, v, i, where) if isinstance(v, str) else v for i, v in enumerate(value)]
    return _figure(cfg, value, 0, where) if _names_figure(value) else value


def _names_figure(value: Any) -> bool:
    match = _FIGURE.match(value) if isinstance(value, str) else None
    return match is not None and match.group(1) in CONFIG_FIGURES


def _figure(cfg: Any, name: str, axis: int, where: str) -> float:
    match = _FIGURE.match(name)
    base = match.group(1) if match else name
    offset = 0.0 if match is None or match.group(2) is None else float(match.group(2) + match.group(3))
    return _base_figure(cfg, base, axis, where, name) + offset


def _base_figure(cfg: Any, name: str, axis: int, where: str, given: str) -> float:
    if name in ("walk_min", "walk_max"):
        if cfg.walk is None:
            raise ConfigError(f"{CARD}: {where}: {name}: {cfg.robot} has no biped walk")
        params = cfg.walk.params
        return float((params.velocity_min if name == "walk_min" else params.velocity_max)[axis])
    if name in ("height_min", "height_max"):
        return float(cfg.pose_height_range[0 if name == "height_min" else 1])
    if name == "stand_height":
        return float(cfg.stand_height)
    raise ConfigError(f"{CARD}: {where}: {given!r} is not a number or one of {CONFIG_FIGURES} "
                      "(with an offset: \"stand_height + 0.04\")")


def _random_commands(trial: Trial, cfg: Any, fields: dict[str, Any], spec: dict[str, Any],
                     seconds: float, row: str) -> None:
    """A step's `random: {seed, hold}`: for `seconds`, the step's command
    with a new vel_des every `hold` s, uniform inside the walk's window (or
    `min`/`max`, per axis). `push: v` shoves the body every `push_every` s
    (8 by default) at a speed uniform in [v/4, v] (m/s), in a random
    horizontal direction. `leash: r`: the client turns the robot back toward
    its start while it is more than r m away (the test's client, not the
    controller, looks at where the body is: the terrain is only so big)."""
    unknown = sorted(set(spec) - {"seed", "hold", "min", "max", "push", "push_every", "leash"})
    if unknown or "mode" not in fields:
        raise ConfigError(f"{CARD}: {row}: random: want a mode and {{seed, hold, min, max, push, "
                          f"push_every, leash}}, not {unknown}")
    rng = np.random.default_rng(int(spec.get("seed", 0)))
    lo = np.array(spec["min"], dtype=float) if "min" in spec else \
        np.array([_figure(cfg, "walk_min", i, row) for i in range(3)])
    hi = np.array(spec["max"], dtype=float) if "max" in spec else \
        np.array([_figure(cfg, "walk_max", i, row) for i in range(3)])
    hold = float(spec.get("hold", 2.0))
    push, every = float(spec.get("push", 0.0)), float(spec.get("push_every", 8.0))
    leash = float(spec.get("leash", math.inf))
    start = trial.robot.data.qpos[0:2].copy()
    left, since_push = seconds, 0.0
    while left > 1e-9:
        v = rng.uniform(lo, hi)
        away = trial.robot.data.qpos[0:2] - start
        if float(np.hypot(*away)) > leash:        # walk back toward the start
            yaw = trial.robot.truth().rpy[2]
            back = in_frame(-away / np.hypot(*away), yaw)
            v[:2] = back * hi[0] * 0.6
            v[2] = 0.0
        trial.send(**{**fields, "vel_des": v.tolist()})
        run = min(hold, left)
        if push > 0.0 and since_push + run >= every:
            first = max(0.0, every - since_push)
            trial.run(first)
            angle = rng.uniform(0.0, 2.0 * math.pi)
            speed = rng.uniform(push / 4.0, push)
            trial.robot.data.qvel[0:2] += speed * np.array([math.cos(angle), math.sin(angle)])
            trial.run(run - first)
            since_push = run - first
        else:
            trial.run(run)
            since_push += run
        left -= hold


def _upload(trial: Trial, name: str, row: str) -> tuple[str, str]:
    """A step's `upload:` file (relative to the repository root), published on
    the controller's user_gait_file channel; (name, its text)."""
    path = DATA_ROOT / name
    if not path.is_file():
        raise ConfigError(f"{CARD}: {row}: upload {name}: no such file under {DATA_ROOT}")
    text = path.read_text(encoding="utf-8")
    trial.send_file(text)
    return name, text


def goal_message(spec: dict[str, Any], seconds: float) -> msgs.motion_goal_t:
    """The MOVE_DISTANCE goal a row's `goal: {distance: D, angle: A}` asks
    for (as `motionctl goal move D --angle A` sends it), timing out after
    the row's `seconds`; ConfigError if the controller would refuse it."""
    unknown = sorted(set(spec) - {"distance", "angle"})
    if unknown or "distance" not in spec:
        raise ConfigError(f"{CARD}: goal {spec!r}: want distance and optionally angle, not {unknown}")
    msg = msgs.motion_goal_t()
    msg.kind = GoalKind.MOVE_DISTANCE
    msg.distance = float(spec["distance"])
    msg.angle = float(spec.get("angle", 0.0))
    msg.timeout = float(seconds)
    msg.goal_id = GOAL_ID
    problem = goals.validate(msg)
    if problem is not None:
        raise ConfigError(f"{CARD}: goal {spec!r} would be refused: {problem}")
    return msg


def _send_goal(trial: Trial, spec: dict[str, Any], seconds: float, marks: Marks) -> None:
    msg = goal_message(spec, seconds)
    trial.send_goal(msg)
    if msg.kind == GoalKind.MOVE_DISTANCE:
        marks.goal = max(0, len(trial.trace.t) - 1)
        marks.goal_target = arc_end(float(msg.distance), float(msg.angle))


def arc_end(distance: float, angle: float) -> tuple[float, float, float]:
    """Where MOVE_DISTANCE ends, in the robot's frame at its start: `distance`
    m along the arc over which the heading turns by `angle` rad
    (controller/core/goals.py); x, y and the heading turned."""
    if angle == 0.0:
        return (distance, 0.0, 0.0)
    radius = distance / angle
    return (radius * math.sin(angle), radius * (1.0 - math.cos(angle)), angle)


def target_height(cfg: Any, target: Any) -> float | None:
    if _names_figure(target):
        return _figure(cfg, target, 0, "target")
    if target == "stand":
        return float(cfg.stand_height)
    if target == "crouch":      # mode 80's recovered pose (config rl_reset.crouch)
        return float(crouch_height(cfg))
    if target == "body":
        return float(cfg.locomotion.body_height) if cfg.locomotion else float(cfg.stand_height)
    return None if target is None else float(target)


def crouch_height(cfg: Any) -> float:
    """Body origin over flat ground in mode 80's crouch (config rl_reset.crouch)."""
    q = np.tile(cfg.rl_reset.crouch, len(cfg.legs)).reshape(-1, 3)
    return QuadrupedKinematics(cfg.geometry).body_height(q)


def lower_leg_geoms(trial: Trial) -> frozenset[str]:
    """A quadruped's lower legs (controller/sim/limbs.py), by label: a lower
    leg on the ground is reported (shank_contact_s), not a fall: a calf
    brushing the floor in a fast gait, or resting on it when the maker's foot
    contact is soft. Empty for a humanoid (its fall is judged by its own
    metrics) or without a model."""
    robot, cfg = trial.robot, trial.cfg
    model = getattr(robot, "model", None)
    if model is None:
        return frozenset()
    labels, feet = geom_labels(model), set(trial.feet)
    foot_ids = {g for g in range(model.ngeom) if labels[g] in feet}
    return frozenset(labels[g] for g in limbs.lower_leg_geoms(model, cfg, list(robot.model_map.order),
                                                             foot_ids))


def humanoid_limbs(trial: Trial) -> tuple[frozenset[str], frozenset[str]]:
    """A humanoid's feet and legs, from the model's tree: every geom on a
    foot's body (a maker's foot may be two boxes, OP3's are), and every geom
    on the bodies each leg's hip pitch joint moves (the thigh down: what the
    protective crouch lands on). Empty for a quadruped or without a model."""
    robot, cfg = trial.robot, trial.cfg
    model = getattr(robot, "model", None)
    if model is None or cfg.kind != "humanoid":
        return frozenset(), frozenset()
    labels = geom_labels(model)
    names, _ = model_joints(cfg)
    order = list(robot.model_map.order)          # wire slot -> the controller's joint
    foot_bodies = {int(model.geom_bodyid[model.geom(f).id]) for f in trial.feet}
    below: set[int] = set()
    for side in ("right", "left"):
        hip_pitch = cfg.limbs[f"{side}_leg"][2]
        below.update(subtree(model, int(model.jnt_bodyid[model.joint(names[order.index(hip_pitch)]).id])))
    on = [int(b) for b in model.geom_bodyid]
    return (frozenset(labels[g] for g in range(model.ngeom) if on[g] in foot_bodies),
            frozenset(labels[g] for g in range(model.ngeom) if on[g] in below))


def trunk_geoms(trial: Trial) -> frozenset[str]:
    """The names of the geoms on the robot's floating body (the trunk or
    torso itself, not a limb): a sit-down may rest a knee on the floor, never
    these. Empty without a physics model."""
    model = getattr(trial.robot, "model", None)
    if model is None:
        return frozenset()
    root = model.body("trunk").id
    labels = geom_labels(model)
    return frozenset(labels[g] for g in range(model.ngeom) if model.geom_bodyid[g] == root)


def measure(trial: Trial, start: int, spec: dict[str, Any], command: np.ndarray,
            mode: int = -1, marks: Marks | None = None) -> dict[str, float]:
    """The metrics of config/physics/scorecard.yaml from the trial's trace."""
    tr, cfg = trial.trace, trial.cfg
    pos = np.array(tr.position[start:])
    rpy = np.array(tr.rpy[start:])
    vel = np.array(tr.body_velocity[start:])
    contacts = tr.contacts[start:]
    dt = cfg.dt
    win = max(1, int(round(spec.get("window", 1.0) / dt)))
    tilt = np.max(np.abs(rpy[:, :2]), axis=1)
    feet = set(trial.feet)
    # Anything on the ground but the feet and the lower legs: the trunk and
    # the upper body (a fall); the lower legs are reported apart.
    lower = lower_leg_geoms(trial)
    soles, legs = humanoid_limbs(trial)
    allowed = feet | lower | soles
    other = np.array([bool(c - allowed) for c in contacts])
    m: dict[str, float] = {}
    m["height"] = float(pos[-win:, 2].mean())
    goal = target_height(cfg, spec.get("target"))
    if goal is not None:
        m["height_error"] = abs(m["height"] - goal)
    m["tilt"] = float(tilt[-win:].max())
    m["roll"] = float(rpy[-win:, 0].mean())
    m["pitch"] = float(rpy[-win:, 1].mean())
    mean_v = vel[-win:].mean(axis=0)
    m["vx"], m["vy"], m["wz"] = (float(v) for v in mean_v)
    for name, axis in VELOCITY_FIELDS.items():
        m[name] = abs(float(mean_v[axis]) - float(command[axis]))
    yaw = np.unwrap(rpy[:, 2])
    heading = yaw[0]
    d = pos[-1, :2] - pos[0, :2]
    m["travel"] = float(d[0] * math.cos(heading) + d[1] * math.sin(heading))
    m["lateral"] = float(-d[0] * math.sin(heading) + d[1] * math.cos(heading))
    # The furthest the body went each way along and across the start heading
    # (a motion that steps back and then forward ends near where it began).
    path = pos[:, :2] - pos[0, :2]
    along = path @ np.array([math.cos(heading), math.sin(heading)])
    across = path @ np.array([-math.sin(heading), math.cos(heading)])
    m["travel_min"], m["travel_max"] = float(along.min()), float(along.max())
    m["lateral_min"], m["lateral_max"] = float(across.min()), float(across.max())
    m["yaw_change"] = float(yaw[-1] - yaw[0])
    stand = float(cfg.stand_height)
    m["apex"] = float(pos[:, 2].max() - stand)
    m["rear"] = float(max(0.0, -rpy[:, 1].min()))
    m["trunk_contact_s"] = float(other.sum() * dt)
    body = trunk_geoms(trial)
    m["body_contact_s"] = float(sum(1 for c in contacts if c & body) * dt)
    # A quadruped's leg above the shank (a knee pad, a thigh, a hip cover) on
    # the ground; and its shanks (a shank on a stair's nosing is not a knee).
    m["knee_contact_s"] = float(sum(1 for c in contacts if any(g.endswith(KNEE_GEOMS) for g in c)) * dt)
    m["shank_contact_s"] = float(sum(1 for c in contacts if c & lower or any(g.endswith("_shank") for g in c)) * dt)
    m["airborne_s"] = float(sum(1 for c in contacts if not c) * dt)
    m["slip"] = foot_slip(np.array(tr.foot_slide[start:]), contacts, trial.feet, dt)
    m["saturation"] = float(np.mean(tr.saturated[start:]))
    touch = np.flatnonzero(other)
    m["touchdown_speed"] = float(np.linalg.norm(tr.velocity[start + touch[0]])) if len(touch) else 0.0
    # A bounce: the fastest the trunk rose after it first touched the ground.
    vz = np.array(tr.velocity[start:])[:, 2]
    m["rebound"] = float(max(0.0, vz[touch[0]:].max())) if len(touch) else 0.0
    height_ok = np.abs(pos[:, 2] - stand) <= STAND_TOLERANCE[0]
    upright = tilt < STAND_TOLERANCE[1]
    reached = np.flatnonzero(height_ok & upright & ~other)
    m["time_to_stand"] = float(reached[0] * dt) if len(reached) else math.inf
    if goal is not None:
        at_goal = np.flatnonzero((np.abs(pos[:, 2] - goal) <= STAND_TOLERANCE[0]) & upright & ~other)
        m["time_to_target"] = float(at_goal[0] * dt) if len(at_goal) else math.inf
    # A getup: from the script request to the stand (as time_to_stand).
    if marks is not None and marks.script is not None:
        after = reached[reached >= marks.script - start]
        m["getup_s"] = float((after[0] - (marks.script - start)) * dt) if len(after) else math.inf
    m["fell"] = float(bool(other.any() or tilt.max() > FELL_TILT))
    # The fastest any foot moved (a kick's strike): site speed, finite differences.
    feet_pos = np.array(tr.feet[start:])
    m["foot_speed_max"] = float(np.linalg.norm(np.diff(feet_pos, axis=0), axis=2).max() / dt) \
        if len(feet_pos) > 1 else 0.0
    # A humanoid's fall (controller/core/fall.py): when the controller saw it,
    # how long before the upper body (not a foot, shank or thigh) hit the
    # ground, and whether every joint was limp by then.
    seen = np.flatnonzero(tr.fall_seen[start:])
    limbs = LOWER_LIMBS + tuple(trial.feet)
    hit = np.flatnonzero([any(g not in legs and not g.endswith(limbs) for g in c) for c in contacts])
    origin = marks.push if marks is not None and marks.push is not None else start
    m["fall_detected_s"] = float((start + seen[0] - origin) * dt) if len(seen) else math.inf
    m["fall_warning_s"] = float((hit[0] - seen[0]) * dt) if len(seen) and len(hit) else -math.inf
    m["limp_at_impact"] = float(len(hit) > 0 and not tr.stiff[start + hit[0]])
    m["end_tilt"] = float(tilt[-1])
    m["end_on_feet"] = float(bool(contacts[-1]) and contacts[-1] <= allowed and feet <= contacts[-1])
    # The highest progress the response reported in the commanded mode (a
    # finished motion's hold reports the next block's mode and bar).
    bars = [b for b, md in zip(tr.bar[start:], tr.mode[start:], strict=True) if md == mode]
    m["bar"] = float(max(bars, default=0))
    m["mode"] = float(tr.mode[-1])
    m.update(belief_errors(np.array(tr.odometry[start:]), np.array(tr.estimate[start:]),
                           pos[:, :2], yaw, np.array(tr.velocity[start:])[:, :2]))
    m.update(event_metrics(trial, marks or Marks(), command))
    if marks is not None and marks.fault is not None:
        m.update(fault_metrics(trial, marks.fault, cfg))
    return m


def fault_metrics(trial: Trial, mark: int, cfg: Any) -> dict[str, float]:
    """After a part broke (`fault:`): fault_detected_s (to the controller's
    damper or stop; inf: never), fault_tilt (the worst tilt after), and
    fault_drop (how far the trunk fell below its height then)."""
    tr, dt = trial.trace, trial.cfg.dt
    seen = np.flatnonzero(tr.tripped[mark:])
    rpy = np.array(tr.rpy[mark:])
    tilt = np.max(np.abs(rpy[:, :2]), axis=1)     # as the other metrics measure it
    z = np.array(tr.position[mark:])[:, 2]
    return {"fault_detected_s": float(seen[0] * dt) if len(seen) else math.inf,
            "fault_tilt": float(tilt.max()), "fault_drop": float(z[0] - z.min())}


def in_frame(d: np.ndarray, heading: float) -> np.ndarray:
    """A horizontal world vector in the frame of a robot heading `heading`."""
    c, s = math.cos(heading), math.sin(heading)
    return np.array([c * d[0] + s * d[1], -s * d[0] + c * d[1]])


def event_metrics(trial: Trial, marks: Marks, command: np.ndarray) -> dict[str, float]:
    """recover_s after a push, the goal errors after a goal: ground truth."""
    tr = trial.trace
    m: dict[str, float] = {}
    if marks.push is not None:
        speed = np.array(tr.body_velocity[marks.push:])[:, :2]
        m["recover_s"] = recovery_time(speed, command, trial.cfg.dt)
    if marks.goal is not None:
        pos = np.array(tr.position[marks.goal:])[:, :2]
        yaw = np.unwrap(np.array(tr.rpy[marks.goal:])[:, 2])
        m["goal_position_error"], m["goal_yaw_error"] = goal_errors(pos, yaw, marks.goal_target)
    return m


def recovery_time(speed: np.ndarray, command: np.ndarray, dt: float) -> float:
    """Seconds from a push until the body's (vx, vy), averaged over the
    sliding RECOVER_WINDOW that ends then, is back within RECOVER_VX /
    RECOVER_VY of the command and stays so to the end; inf if it never is.
    `speed[i]` is the sample (i + 1) ticks after the push."""
    n = max(1, int(round(RECOVER_WINDOW / dt)))
    if len(speed) < n:
        return math.inf
    sums = np.cumsum(np.vstack([np.zeros((1, 2)), speed]), axis=0)
    mean = (sums[n:] - sums[:-n]) / n                 # mean[i]: samples i .. i + n - 1
    ok = (np.abs(mean[:, 0] - command[0]) <= RECOVER_VX[0] + RECOVER_VX[1] * abs(float(command[0]))) \
        & (np.abs(mean[:, 1] - command[1]) <= RECOVER_VY)
    if not ok[-1]:
        return math.inf
    bad = np.flatnonzero(~ok)
    first = int(bad[-1]) + 1 if len(bad) else 0
    return (first + n) * dt


def goal_errors(pos: np.ndarray, yaw: np.ndarray, target: tuple[float, float, float]) -> tuple[float, float]:
    """The end of a goal against its target (x, y, yaw in the robot's frame at
    its start); `pos` (n, 2) and the unwrapped `yaw` from that start on."""
    reached = in_frame(pos[-1] - pos[0], float(yaw[0]))
    position = float(np.hypot(*(reached - np.array(target[:2]))))
    return position, abs(float(yaw[-1] - yaw[0]) - target[2])


def belief_errors(odometry: np.ndarray, estimate: np.ndarray, pos: np.ndarray, yaw: np.ndarray,
                  velocity: np.ndarray) -> dict[str, float]:
    """The controller's odometry (x, y, yaw rows) and estimated world velocity
    (vx, vy rows) against the truth (pos, unwrapped yaw, world velocity):
    the odometry's position error as a share of the true distance (all of
    it, and along the start heading alone), its yaw error, the velocity's RMS
    error. NaN when the body did not travel or nothing was estimated."""
    true = in_frame(pos[-1] - pos[0], float(yaw[0]))
    believed = in_frame(odometry[-1, :2] - odometry[0, :2], float(odometry[0, 2]))
    distance = float(np.hypot(*true))
    odom_yaw = np.unwrap(odometry[:, 2])
    return {
        "odom_position_error_share": float(np.hypot(*(believed - true))) / distance
        if distance >= MIN_TRAVEL else math.nan,
        "odom_travel_error_share": abs(float(believed[0] - true[0])) / abs(float(true[0]))
        if abs(float(true[0])) >= MIN_TRAVEL else math.nan,
        "odom_yaw_error": abs(float(odom_yaw[-1] - odom_yaw[0]) - float(yaw[-1] - yaw[0])),
        "velocity_rms_error": float(np.sqrt(np.mean(np.sum(np.square(estimate - velocity), axis=1)))),
    }


def foot_slip(slide: np.ndarray, contacts: list[frozenset[str]], names: list[str],
              dt: float) -> float:
    """Worst horizontal slide of a foot between touching down and lifting off:
    the velocity of the foot's material point at its contact (Trace.foot_slide,
    (ticks, legs, 2)) integrated over each stance. A ball foot that rolls, or a
    sole that pivots, without sliding does not count; its centre's travel would."""
    worst = 0.0
    for k, name in enumerate(names):
        moved: np.ndarray | None = None
        for i, touching in enumerate(contacts):
            if name in touching:
                moved = np.zeros(2) if moved is None else moved + slide[i, k] * dt
                worst = max(worst, float(np.hypot(*moved)))
            else:
                moved = None
    return worst


def judge(metrics: dict[str, float], checks: dict[str, dict[str, float]],
          command: np.ndarray) -> dict[str, tuple[bool, str]]:
    verdicts = {}
    for name, rule in checks.items():
        value = metrics.get(name)
        if value is None:
            verdicts[name] = (False, "not measured")
            continue
        extra = 0.0
        if "per_command" in rule and name in VELOCITY_FIELDS:
            extra = rule["per_command"] * abs(float(command[VELOCITY_FIELDS[name]]))
        lo, hi = rule.get("min"), rule.get("max")
        hi = None if hi is None else hi + extra
        ok = bool((lo is None or value >= lo) and (hi is None or value <= hi) and not math.isnan(value))
        limit = " and ".join(s for s in (f">= {lo:g}" if lo is not None else "",
                                         f"<= {hi:.3g}" if hi is not None else "") if s)
        verdicts[name] = (ok, limit)
    return verdicts


def cost(robot: str, ticks: int = 2000) -> dict[str, float]:
    """What physics costs per 2 ms tick on one core, standing: the physics
    step alone and the whole in-process tick (sensors, controller, physics),
    medians and p99 in µs, and the real-time factor of the whole tick."""
    cfg = load_config(CONFIG_DIR / CARD_DATA["robots"][robot]["config"])
    trial = Trial(cfg)
    trial.send(12)
    trial.run(2.0)
    physics: list[int] = []
    whole: list[int] = []
    for _ in range(ticks):
        t0 = time.perf_counter_ns()
        trial.tick()
        whole.append(time.perf_counter_ns() - t0)
        physics.append(trial.robot.step_ns)
    p, w = np.array(physics) / 1e3, np.array(whole) / 1e3
    return {"physics_p50_us": float(np.median(p)), "physics_p99_us": float(np.percentile(p, 99)),
            "tick_p50_us": float(np.median(w)), "tick_p99_us": float(np.percentile(w, 99)),
            "realtime_factor": cfg.dt * 1e6 / float(np.median(w))}


def load_card(path: Path = CARD) -> dict[str, Any]:
    data = load_yaml(path)
    if not isinstance(data, dict) or not isinstance(data.get("robots"), dict):
        raise ConfigError(f"{path}: expected `robots:` mapping robot names to their rows")
    return data


CARD_DATA = load_card()


def table(rows: list[Row]) -> str:
    lines = [f"{'robot':<11} {'row':<38} {'issue':>5}  {'result':<6} details"]
    for r in rows:
        if r.error:
            lines.append(f"{r.robot:<11} {r.name:<38} {r.issue:>5}  {'ERROR':<6} {r.error}")
            continue
        judged = [f"{name} {r.metrics[name]:.3g}{'' if ok else ' (want ' + limit + ')'}"
                  for name, (ok, limit) in r.verdicts.items() if name in r.metrics]
        shown = [f"[{name} {r.metrics[name]:.3g}]" for name in r.spec.get("report", ())
                 if name in r.metrics and name not in r.verdicts]
        details = "; ".join(judged + shown)
        lines.append(f"{r.robot:<11} {r.name:<38} {r.issue:>5}  {'pass' if r.passed else 'FAIL':<6} {details}")
    passed = sum(r.passed for r in rows)
    unconfigured = sum(r.error.startswith(NOT_CONFIGURED) for r in rows)
    lines.append(f"{passed}/{len(rows)} rows pass"
                 + (f" ({unconfigured} not configured for the robot)" if unconfigured else ""))
    return "\n".join(lines)


def to_json(rows: list[Row]) -> dict[str, Any]:
    def clean(x: float) -> float | None:
        return None if math.isinf(x) or math.isnan(x) else round(x, 6)
    return {"rows": [{"robot": r.robot, "row": r.name, "issue": r.issue, "passed": r.passed,
                      "error": r.error or None, "wall_s": round(r.seconds, 2),
                      "metrics": {k: clean(v) for k, v in r.metrics.items()},
                      "checks": {k: {"passed": ok, "limit": lim} for k, (ok, lim) in r.verdicts.items()}}
                     for r in rows],
            "passed": sum(r.passed for r in rows), "total": len(rows)}


def add_config_robot(path: Path) -> str:
    """A robot named by its config file (`--robot path/to/robot.yaml`, `make
    physics ROBOT=...`): scored by the rows of the card's first robot of its
    kind (a quadruped by cyberdog2's), unless the card lists it by name; its
    name in the table is the config's `robot`."""
    cfg = load_config(path)
    robots = CARD_DATA["robots"]
    if cfg.robot in robots:
        robots[cfg.robot] = {**robots[cfg.robot], "config": str(path.resolve())}
        return cfg.robot
    for spec in robots.values():
        if load_config(CONFIG_DIR / spec["config"]).kind == cfg.kind:
            robots[cfg.robot] = {"config": str(path.resolve()), "rows": spec["rows"]}
            return cfg.robot
    raise ConfigError(f"{path}: the scorecard has no rows for a {cfg.kind}")


def selected(name: str, only: list[str] | None) -> bool:
    """Whether `--only` selects the row `name`: by its whole name, by its
    name without the variants in brackets ("motion (62/14)" selects its
    "[friction 1]" too), or by a shell pattern with * or ? ("*gyro bias*";
    brackets in a name are plain characters). "stand" selects no "two-leg
    stand"."""
    if not only:
        return True
    base = name.split(" [", 1)[0]
    return any(p in (name, base) or (("*" in p or "?" in p) and fnmatch.fnmatchcase(name, p.replace("[", "[[]")))
               for p in only)


def nothing_matched(robots: list[str], only: list[str] | None) -> str:
    """Why no row was selected, with what there is to choose from."""
    known = list(CARD_DATA["robots"])
    unknown = [r for r in robots if r not in known]
    if unknown:
        return f"no robot {', '.join(unknown)} in the card (robots: {', '.join(known)})"
    names = sorted({r.name for robot, spec in CARD_DATA["robots"].items() if not robots or robot in robots
                    for r in expand(robot, spec)})
    return (f"no row is named {' or '.join(repr(t) for t in only or [])} (a whole name, or a pattern with * "
            f"or ?); rows are named like: {', '.join(names[:8])}...")


DESCRIPTION = "Drive every shipped robot through its modes and gaits in physics and judge what the body did."


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m controller.sim.scorecard", description=DESCRIPTION)
    add_arguments(p)
    return run(p.parse_args(argv))


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The scorecard's options (also `motionctl physics`'s)."""
    p.add_argument("--robot", action="append",
                   help="only this robot (repeatable): a name in config/physics/scorecard.yaml, or a "
                        "robot config file (.yaml), scored by the rows of the card's robot of its kind")
    p.add_argument("--only", action="append",
                   help="only this row: its whole name (without its [variants]: all of them), or a "
                        "pattern with * or ? (\"*gyro bias*\"); repeatable: any of them")
    p.add_argument("--world", metavar="NAME",
                   help="run the selected rows in this world of config/physics/worlds.yaml, on top of "
                        "each row's own (e.g. real_actuators_3ms: every row on the real motors, 3 ms delay)")
    add_worker_arguments(p, "rows run at once on local processes (default: 2)")
    p.add_argument("-o", "--output", default="bench/physics.json", help="JSON results (default: %(default)s)")
    p.add_argument("--log-level", default="error",
                   help="the controllers' log level while the rows run (default: %(default)s)")


def run(args: argparse.Namespace) -> int:
    """Run the rows `args` select; 2 when none is selected, else 0 (a
    failing row is a finding, not an error)."""
    try:
        args.robot = [add_config_robot(Path(r)) if r.endswith((".yaml", ".yml")) else r
                      for r in args.robot or []]
    except ConfigError as exc:
        print(f"scorecard: {exc}", file=sys.stderr)
        return 2
    rows: list[Row] = []
    for robot, spec in CARD_DATA["robots"].items():
        if args.robot and robot not in args.robot:
            continue
        rows += [r for r in expand(robot, spec) if selected(r.name, args.only)]
    if args.world and rows:
        try:
            rows = in_world(rows, args.world)
        except ConfigError as exc:
            print(f"scorecard: {exc}", file=sys.stderr)
            return 2
    if not rows:
        print(f"no rows selected: {nothing_matched(args.robot, args.only)}", file=sys.stderr)
        return 2
    for row in rows:      # the config by path: a worker of a Ray cluster knows no --robot file
        row.config = str((CONFIG_DIR / CARD_DATA["robots"][row.robot]["config"]).resolve())
    configure(args.log_level)          # only now: a run that selects nothing leaves logging alone
    try:
        workers = Workers(2 if args.jobs is None else args.jobs, args.ray, initializer=configure,
                          initargs=(args.log_level,))
    except WorkersError as exc:
        print(f"scorecard: {exc}", file=sys.stderr)
        return 2
    print(f"{len(rows)} rows on {workers.where()}", file=sys.stderr)
    progress = Progress(len(rows), "rows")
    finished: dict[int, Row] = {}
    with workers:
        for i, result in workers.run(run_row, rows):
            if isinstance(result, Lost):     # reported as a failed row, never dropped
                rows[i].error = f"not run: {result.why}"
                result = rows[i]
            row = finished[i] = result
            progress.step(f"{row.robot} {row.name}", row.passed,
                          "n/c " if row.error.startswith(NOT_CONFIGURED) else None)
    done = [finished[i] for i in range(len(rows))]     # the card's order
    print(table(done))
    costs = {robot: cost(robot) for robot in sorted({r.robot for r in done})}
    print("\nphysics cost per 2 ms tick on one core (standing; µs p50/p99), and the real-time "
          "factor of the whole in-process tick (sensors + controller + physics):")
    for robot, c in costs.items():
        print(f"  {robot:<11} physics {c['physics_p50_us']:6.0f} / {c['physics_p99_us']:6.0f}   "
              f"whole tick {c['tick_p50_us']:6.0f} / {c['tick_p99_us']:6.0f}   "
              f"real-time factor {c['realtime_factor']:.1f}")
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**to_json(done), "cost": costs}, indent=1) + "\n")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
