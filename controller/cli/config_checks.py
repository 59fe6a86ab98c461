"""What `motionctl check-config` explains about a quadruped config that loads
but does not hang together: figures the loader takes one by one, checked
against each other with the controller's own kinematics.

* heights (poses.stand_height, locomotion.body_height, the ends of
  pose_height_range and locomotion.height_range) the legs cannot reach with
  the feet under the hips inside the joint limits, and the stand pose;
* gaits whose velocity window is faster than the stride the legs reach
  (locomotion.half_stride) or whose swing is faster than the joints turn
  (joint_velocity_limit);
* a torque limit that cannot hold the robot standing (or trotting);
* a `balance.mass` far from the physics figures' total, and a robot with no
  physics figures at all;
* figures still marked as placeholders (PLACEHOLDER_MARK in a comment: what
  `motionctl new-robot` writes), in the config and its physics file.

Each finding is one line naming the key, the numbers and what to do. None of
them stops the daemon: they are printed as warnings under the OK line.
Pure: reads files, opens no sockets.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml

from controller.behaviours.locomotion import LIMIT_MARGIN as WALK_MARGIN
from controller.behaviours.pose import LIMIT_MARGIN as POSE_MARGIN
from controller.behaviours.rl_rapid import RAPID_DIR, rapid_gait
from controller.motion.gait import CROSS_COUPLING
from controller.motion.gait_table import SEGMENT_MS, GaitDefinition, GaitError, load_gaits
from controller.robot.config import Config, ConfigError, Geometry
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.mass_properties import load_figures, physics_path, total_mass
from controller.robot.mjcf_figures import compile_mjcf, floating_body, mjcf_path

# The comment that marks a figure the user still has to measure (written by
# `motionctl new-robot`; the template is controller/cli/templates/).
PLACEHOLDER_MARK = "CyberDog 2's figure: measure yours"
GRAVITY = 9.81
MASS_TOLERANCE = 0.10        # balance.mass may differ this much from the physics figures' total
JOINTS = ("abad", "hip", "knee")
HEIGHT_STEP = 0.0005         # m: the resolution of the reachable height span


def quadruped_findings(cfg: Config) -> list[str]:
    """Every consistency warning of a quadruped config (empty for a humanoid)."""
    if cfg.kind != "quadruped":
        return []
    geo = cfg.geometry
    assert isinstance(geo, Geometry)
    kin = QuadrupedKinematics(geo)
    return placeholders(cfg.path) + heights(cfg, kin) + gaits(cfg, kin) + torques(cfg, kin) + physics(cfg)


# -- heights and poses ----------------------------------------------------------------
def _limits(cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    n = len(cfg.legs)
    return cfg.q_min.reshape(n, 3), cfg.q_max.reshape(n, 3)


def _outside(cfg: Config, q: np.ndarray, margin: float) -> list[tuple[float, str]]:
    """(how far, description) of every joint of q (legs, 3) outside the joint
    limits less `margin`, worst first."""
    lo, hi = _limits(cfg)
    found = []
    for i, leg in enumerate(cfg.legs):
        for j, joint in enumerate(JOINTS):
            below, above = lo[i, j] + margin - q[i, j], q[i, j] - (hi[i, j] - margin)
            if below > 1e-9:
                found.append((below, f"{leg}_{joint} at {q[i, j]:.3f} rad, {below:.3f} below "
                                     f"joint_limits.{leg}[{j}]'s lower {lo[i, j]:g}"))
            elif above > 1e-9:
                found.append((above, f"{leg}_{joint} at {q[i, j]:.3f} rad, {above:.3f} above "
                                     f"joint_limits.{leg}[{j}]'s upper {hi[i, j]:g}"))
    return sorted(found, reverse=True)


def _fits(cfg: Config, kin: QuadrupedKinematics, height: float, com_x: float, margin: float) -> bool:
    q, clipped = kin.inverse(kin.stance_feet(height, com_x))
    return not clipped.any() and not _outside(cfg, q, margin)


def height_span(cfg: Config, kin: QuadrupedKinematics, com_x: float, margin: float) -> tuple[float, float] | None:
    """The lowest and highest body heights the legs hold with the feet under
    the hips (shifted back by com_x) inside the joint limits less `margin`;
    None if there is none."""
    top = kin.reach + kin.foot_radius
    grid = np.arange(HEIGHT_STEP, top + HEIGHT_STEP, HEIGHT_STEP)
    ok = [h for h in grid if _fits(cfg, kin, float(h), com_x, margin)]
    return (float(ok[0]), float(ok[-1])) if ok else None


def heights(cfg: Config, kin: QuadrupedKinematics) -> list[str]:
    """Every configured body height the legs cannot hold inside the limits."""
    checks: list[tuple[str, float, float, float, str]] = [   # key, height, com_x, margin, who
        ("poses.stand_height", cfg.stand_height, cfg.stand_com_x, 0.0, "the stand (mode 12's goal)")]
    lo, hi = cfg.pose_height_range
    checks += [("pose_height_range[0]", lo, 0.0, POSE_MARGIN, "mode 21's lowest pose"),
               ("pose_height_range[1]", hi, 0.0, POSE_MARGIN, "mode 21's highest pose")]
    if cfg.locomotion is not None:
        loco = cfg.locomotion
        lo, hi = loco.height_range
        checks += [("locomotion.body_height", loco.body_height, loco.com_x, WALK_MARGIN, "the walk"),
                   ("locomotion.height_range[0]", lo, loco.com_x, WALK_MARGIN, "the walk's lowest"),
                   ("locomotion.height_range[1]", hi, loco.com_x, WALK_MARGIN, "the walk's highest")]
    out = []
    spans: dict[tuple[float, float], tuple[float, float] | None] = {}
    for key, height, com_x, margin, who in checks:
        q, clipped = kin.inverse(kin.stance_feet(height, com_x))
        outside = _outside(cfg, q, margin)
        if not clipped.any() and not outside:
            continue
        if (com_x, margin) not in spans:
            spans[(com_x, margin)] = height_span(cfg, kin, com_x, margin)
        span = spans[(com_x, margin)]
        within = (f"inside the limits{f' (less the {margin:g} rad this motion keeps clear)' if margin else ''} "
                  f"the legs hold the body between {span[0]:.3f} and {span[1]:.3f} m: move {key} into that span"
                  if span else "no height at all is inside the limits")
        if clipped.any():
            top = kin.foot_radius + float(np.sqrt(max(kin.reach ** 2 - com_x ** 2, 0.0)))
            what = (f"is beyond the legs' reach with the feet under the hips (at most {top:.3f} m: "
                    f"geometry.hip_link {kin.l2:g} + knee_link {kin.l3:g} + foot_radius {kin.foot_radius:g})"
                    if height > top - 1e-9 else
                    f"is below what the folded legs reach (at least "
                    f"{kin.foot_radius + abs(kin.l2 - kin.l3):.3f} m)")
        else:
            worst = outside[0][1]
            more = f" and {len(outside) - 1} more" if len(outside) > 1 else ""
            what = f"puts {worst}{more}"
        out.append(f"{key}: {who} at {height:g} m {what}; {within}, or check the link lengths and joint_limits")
    return out


# -- gaits ------------------------------------------------------------------------------
def _timing(gait: GaitDefinition, table: dict[int, GaitDefinition]) -> GaitDefinition:
    """Whose contact table runs at the window's top speed: an auto-switch
    gait's fastest timing, else the gait's own."""
    return table[gait.auto[-1]] if gait.auto else gait


def _swing_speeds(kin: QuadrupedKinematics, height: float, com_x: float, stride: np.ndarray,
                  lift: float, seconds: float) -> np.ndarray:
    """Peak joint speeds (legs, 3), rad/s, of a swing of `seconds` moving each
    foot by `stride` (x, y) and lifting it by `lift`: the generator's
    minimum-jerk path and bump (csrc/gait.c), through the inverse kinematics."""
    s = np.linspace(0.0, 1.0, 201)
    m = s ** 3 * (10.0 + s * (-15.0 + 6.0 * s))
    bump = 64.0 * (s * (1.0 - s)) ** 3
    nominal = kin.stance_feet(height, com_x)
    q = []
    for k in range(len(s)):
        p = nominal.copy()
        p[:, 0] += stride[0] * (m[k] - 0.5)
        p[:, 1] += stride[1] * (m[k] - 0.5)
        p[:, 2] += lift * bump[k]
        q.append(kin.inverse(p)[0])
    path = np.array(q)                                  # (samples, legs, 3)
    return np.abs(np.diff(path, axis=0)).max(axis=0) / (seconds * (s[1] - s[0]))


def gaits(cfg: Config, kin: QuadrupedKinematics) -> list[str]:
    """Gaits whose window the stride or the joints' speed cannot carry."""
    loco = cfg.locomotion
    if loco is None:
        return []
    try:
        table = load_gaits(loco.gaits_dir, len(cfg.legs), loco.windows)
    except GaitError as exc:
        return [f"locomotion.gaits: {exc} (mode 11 will not start)"]
    rx, ry = loco.half_stride
    segment = max(1, round(SEGMENT_MS / 1000.0 * cfg.tick_hz)) / cfg.tick_hz
    nominal = kin.stance_feet(loco.body_height, loco.com_x)[:, :2]
    out = []
    try:
        spin = rapid_gait(loco.gaits_dir, len(cfg.legs))
    except (GaitError, ValueError) as exc:
        out.append(f"locomotion.gaits: {RAPID_DIR}/: {exc} (mode 81 will not start)")
        spin = None
    for gait in sorted(table.values(), key=lambda g: g.id) + ([spin] if spin is not None else []):
        if gait.stand:
            continue
        timing = gait if gait is spin else _timing(gait, table)
        stance = float(timing.stance_segments().max()) * segment
        swing = float(np.min(timing.run_length[~timing.contact])) * segment if (~timing.contact).any() else 0.0
        top = np.maximum(-gait.window_min, gait.window_max)    # vx, vy, wz
        name = (f"mode 81's spin ({gait.name}, {RAPID_DIR}/{Path(gait.source).name})" if gait is spin
                else f"gait {gait.id} ({gait.name}, {Path(gait.source).name})")
        via = f" (the timing of gait {timing.id})" if timing is not gait else ""
        # The stride at the window's top speed on each axis, as the generator measures it.
        radius = float(np.max(np.hypot(nominal[:, 1] / rx, nominal[:, 0] / ry)))  # a turn's stride, ellipse units
        reach = {"vx": 2.0 * rx / stance, "vy": 2.0 * ry / stance, "wz": 2.0 / (stance * radius)}
        over = []
        for axis, unit, fastest, cap, half in (("vx", "m/s", top[0], reach["vx"], "half_stride[0]"),
                                               ("vy", "m/s", top[1], reach["vy"], "half_stride[1]"),
                                               ("wz", "rad/s", top[2], reach["wz"], "half_stride")):
            if fastest > cap * (1 + 1e-6):
                size = 2 * (rx if axis == "vx" else ry)
                stride = ("the feet's turn leaves the half_stride ellipse" if axis == "wz" else
                          f"a {fastest * stance:.3f} m stride, the feet reach 2 x locomotion.{half} = {size:.3f} m")
                over.append(f"{axis} {fastest:g} > {cap:.2f} {unit} ({stride})")
        if over:
            out.append(f"{name}: its window is faster than a stance of {stance:.3f} s{via} can step: "
                       f"{'; '.join(over)}; the generator caps the speed there: lower the window, shorten "
                       "the stance, or raise locomotion.half_stride if the legs reach further")
        if swing <= 0.0:
            continue
        vx = min(top[0], reach["vx"])
        vy = min(top[1], reach["vy"])
        lift = gait.step_height(1.0)        # the highest step the rule allows
        # At full vx the generator halves the lateral allowance (CROSS_COUPLING).
        cases = [np.array([vx, vy * (1.0 - CROSS_COUPLING)]) * stance, np.array([0.0, vy]) * stance]
        peaks = [_swing_speeds(kin, loco.body_height, loco.com_x, c, lift, swing).max(axis=0) for c in cases]
        worst = int(np.argmax([np.max(p / cfg.v_max[:3]) for p in peaks]))
        travel, peak = cases[worst], peaks[worst]
        vmax = cfg.v_max[:3]
        for j, joint in enumerate(JOINTS):
            if peak[j] > vmax[j]:
                out.append(f"{name}: a swing of {swing:.3f} s{via} moving the foot {float(np.hypot(*travel)):.3f} m "
                           f"at the window's top speed and lifting it {lift:.3f} m needs the {joint} at "
                           f"{peak[j]:.1f} rad/s, over joint_velocity_limit[{j}] {vmax[j]:g}: the kernel "
                           "slows the joint and the foot lands late; lengthen the swing (period - stance) "
                           "or lower the window or the step height")
    return out


# -- torques ---------------------------------------------------------------------------
def torques(cfg: Config, kin: QuadrupedKinematics) -> list[str]:
    """The torque the stand needs against torque_limit: the weight shared by
    four feet (and by two, as a trot carries it)."""
    geo = cfg.geometry
    assert isinstance(geo, Geometry)
    q, clipped = kin.inverse(kin.stance_feet(cfg.stand_height, cfg.stand_com_x))
    if clipped.any():
        return []            # heights() already says the stand is out of reach
    mass, source = (cfg.balance.mass, "balance.mass") if cfg.balance is not None else (geo.mass, "geometry.mass")
    jac = kin.jacobian(q)
    limit = cfg.torque_limit[:3]
    out = []
    for feet, what in ((4, "standing"), (2, "trotting (two feet carry the body)")):
        force = np.array([0.0, 0.0, mass * GRAVITY / feet])
        tau = np.abs(np.einsum("lij,i->lj", jac, force)).max(axis=0)   # J^T f per leg, worst leg
        for j, joint in enumerate(JOINTS):
            if tau[j] > limit[j]:
                out.append(f"torque_limit: {what} at poses.stand_height {cfg.stand_height:g} m, the {joint}s need "
                           f"{tau[j]:.1f} N m to carry {source} {mass:g} kg ({mass * GRAVITY / feet:.1f} N a foot "
                           f"through the stand pose's Jacobian, J^T f) but torque_limit for the {joint} is "
                           f"{limit[j]:g} N m: check the motors' figure (datasheet x gear ratio), the mass, "
                           "or stand lower or with the feet nearer under the knees")
        if out:
            break            # a robot that cannot stand need not hear it cannot trot
    return out


# -- the physics figures -----------------------------------------------------------------
def physics(cfg: Config) -> list[str]:
    """No physics file (and no own MJCF), or a balance mass far from the
    robot's total: the MJCF's when the config names one, else the physics
    file's."""
    own = mjcf_path(cfg.path, cfg.sim)
    if own is not None:
        return _own_mass(cfg, own)
    path = physics_path(cfg.path, cfg.robot, cfg.sim)
    if not path.is_file():
        return [f"sim.physics: no physics figures ({path} does not exist): the robot cannot be scored in "
                "physics (make physics) or simulated as a MuJoCo body, and balance cannot derive its mass; "
                "write them (`motionctl new-robot` makes a skeleton, docs/NEW_ROBOT.md)"]
    try:
        total = total_mass(load_figures(path), len(cfg.legs), path)
    except ConfigError as exc:
        return [f"sim.physics: {exc}"]
    return _mass_against(cfg, total, f"the physics figures ({path.name})") + placeholders(
        path, f" (physics figures, {path})")


def _own_mass(cfg: Config, own: Path) -> list[str]:
    """The robot's own MJCF's mass (every body the free joint carries)
    against balance.mass; a model that does not compile is the model
    check's finding (controller/sim/model_check.py), not repeated here."""
    try:
        model = compile_mjcf(own, f"{cfg.path}: sim.mjcf")
        trunk = floating_body(model, f"{cfg.path}: sim.mjcf")
    except ConfigError:
        return []
    return _mass_against(cfg, float(model.body_subtreemass[trunk]), f"the bodies of its own MJCF ({own.name})")


def _mass_against(cfg: Config, total: float, source: str) -> list[str]:
    if cfg.balance is None or "mass" in cfg.balance.derived:
        return []
    mass = cfg.balance.mass
    if abs(mass - total) <= MASS_TOLERANCE * total:
        return []
    return [f"balance.mass: {mass:g} kg, but {source} add up to {total:.3f} kg "
            f"({100 * (mass - total) / total:+.0f} %): the MPC would push for a robot of another weight; "
            "weigh the robot and correct one of them, or leave balance.mass out to derive it"]


# -- placeholders ------------------------------------------------------------------------
def placeholders(path: Path, where: str = "") -> list[str]:
    """A warning for every value in the YAML file `path` whose line carries
    PLACEHOLDER_MARK, naming its key path (and `where`, the file's role)."""
    try:
        text = path.read_text()
    except OSError:
        return []
    marked = {n for n, line in enumerate(text.splitlines()) if PLACEHOLDER_MARK in line}
    if not marked:
        return []
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    found: list[tuple[int, str, Any]] = []
    _walk(root, "", marked, found)
    return [f"{key}{where}: {value} is still CyberDog 2's figure (a placeholder): measure yours and take "
            "the mark off its line" for _, key, value in sorted(found)]


def _walk(node: Any, key: str, marked: set[int], found: list[tuple[int, str, Any]]) -> None:
    """Key paths of the values on a marked line: a scalar, a [...] or {...}
    written in flow style (one value, even over several lines), or a block
    whose key is on the marked line."""
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.flow_style \
            and any(line in marked for line in range(node.start_mark.line, node.end_mark.line + 1)):
        found.append((node.start_mark.line, key, _flow(node)))
        return
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            path = f"{key}.{k.value}" if key else str(k.value)
            if k.start_mark.line in marked and not isinstance(v, yaml.ScalarNode) and not v.flow_style \
                    and v.start_mark.line != k.start_mark.line:
                found.append((k.start_mark.line, path, "the block"))
                continue
            _walk(v, path, marked, found)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _walk(v, f"{key}[{i}]", marked, found)
    elif isinstance(node, yaml.ScalarNode) and node.start_mark.line in marked:
        found.append((node.start_mark.line, key, node.value))


def _flow(node: Any) -> str:
    if isinstance(node, yaml.SequenceNode):
        return "[" + ", ".join(_flow(v) for v in node.value) + "]"
    if isinstance(node, yaml.MappingNode):
        return "{" + ", ".join(f"{k.value}: {_flow(v)}" for k, v in node.value) + "}"
    return str(node.value)
