"""The quadruped schema (config/cyberdog2.yaml): legs, per-leg joint limits,
per-joint-type velocity limits, gains and poses, the leg geometry and the
`motor_ctrl` (mode 15) limits."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from controller.robot.config.body import VMAX_RANGE, Gains, check_gains, check_poses, height_range
from controller.robot.config.locomotion import load_locomotion
from controller.robot.config.reader import Reader, indices
from controller.robot.config.scale import GAINS, Scale
from controller.robot.config.two_leg import load_mass_model, load_two_leg


@dataclass(frozen=True)
class Geometry:
    hip_offsets: np.ndarray  # (legs, 3)
    side_sign: np.ndarray    # (legs,) +1 left, -1 right
    abad_link: float
    hip_link: float
    knee_link: float
    foot_radius: float
    mass: float
    # m a loaded foot sinks into the floor (a rubber foot's give): heights
    # are taken from a contact this much above the foot sphere's bottom.
    foot_sink: float = 0.0


def torque_limits(r: Reader) -> np.ndarray:
    """`torque_limit`: one figure for every joint, or [abad, hip, knee] (many
    robots' knee motor has a larger gear than the others)."""
    value = r.get("torque_limit", (int, float, list))
    limits = np.full(3, float(value)) if not isinstance(value, list) else r.vector("torque_limit", 3)
    if not ((limits >= 0.1) & (limits <= 1000.0)).all():
        raise r.fail("torque_limit", f"each must be in [0.1, 1000] N m, got {limits.tolist()}")
    return limits


def load_quadruped(r: Reader, path: Path) -> dict[str, Any]:
    """The quadruped schema (config/cyberdog2.yaml): per-leg limits, one
    per-joint-type triple for velocity limits, gains and poses, tiled over
    the legs here so that everything downstream is per joint."""
    legs = r.get("legs", list)
    leg_joints = r.get("leg_joints", list)
    if len(leg_joints) != 3:
        raise r.fail("leg_joints", "a quadruped leg has 3 joints: abad, hip, knee")
    names = [f"{leg}_{j}" for leg in legs for j in leg_joints]
    lim = r.sub("joint_limits")
    q_min, q_max = [], []
    for leg in legs:
        rows = lim.get(leg, list)
        if len(rows) != 3:
            raise lim.fail(leg, "expected 3 [min, max] pairs")
        for j, row in enumerate(rows):
            lo, hi = lim.vector(f"{leg}[{j}]", 2, row)
            if not lo < hi:
                raise lim.fail(f"{leg}[{j}]", f"min {lo} is not below max {hi}")
            q_min.append(lo)
            q_max.append(hi)

    def tile(per_type: np.ndarray) -> np.ndarray:
        return np.tile(per_type, len(legs))

    # The kernel's per-tick step limit is this velocity x one tick, and a
    # limit of 0 (or below) would switch the step limit off: refuse it.
    v_max = r.vector("joint_velocity_limit", 3)
    if not ((v_max >= VMAX_RANGE[0]) & (v_max <= VMAX_RANGE[1])).all():
        raise r.fail("joint_velocity_limit", f"each must be in [{VMAX_RANGE[0]:g}, "
                                             f"{VMAX_RANGE[1]:g}] rad/s, got {v_max.tolist()}")

    gr = r.sub("geometry")
    hips = gr.sub("hip_offsets")
    hip_offsets = np.array([hips.vector(leg, 3) for leg in legs])
    geometry = Geometry(
        hip_offsets=hip_offsets,
        side_sign=np.where(hip_offsets[:, 1] > 0, 1.0, -1.0),
        abad_link=gr.number("abad_link", 0.0, 1.0),
        hip_link=gr.number("hip_link", 0.01, 2.0),
        knee_link=gr.number("knee_link", 0.01, 2.0),
        foot_radius=gr.number("foot_radius", 0.0, 0.2),
        mass=gr.number("mass", 0.1, 500.0),
        foot_sink=gr.number("foot_sink", 0.0, 0.05, 0.0),
    )

    pr = r.sub("poses")
    lie_r = pr.sub("lie")
    poses = {"fold": tile(pr.vector("fold", 3)),
             "lie": np.concatenate([lie_r.vector(leg, 3) for leg in legs])}
    q_min_a, q_max_a = np.array(q_min), np.array(q_max)
    check_poses(pr, "quadruped", poses, names, q_min_a, q_max_a)

    # A gain set the config leaves out is CyberDog 2's, scaled to this
    # robot's mass and legs (controller/robot/config/scale.py).
    scale = Scale.of(geometry.mass, geometry.hip_link, geometry.knee_link)
    gains = {name: Gains(tile(kp), tile(kd)) for name in GAINS for kp, kd in [scale.gains(name)]}
    g = r.sub("gains") if "gains" in r.data else Reader(r.path, {}, "gains")
    for name in g.data:
        e = g.sub(name)
        kp, kd = e.vector("kp", 3), e.vector("kd", 3)
        if (kp < 0).any() or (kd < 0).any():
            raise e.fail("kp", "gains must not be negative")
        gains[name] = Gains(tile(kp), tile(kd))
    check_gains(r, "quadruped", gains)

    mr = r.sub("motor_ctrl")
    return {
        "limbs": {leg: tuple(range(3 * i, 3 * i + 3)) for i, leg in enumerate(legs)},
        "legs": legs,
        "joint_names": names,
        "leg_indices": indices(range(len(names))),   # every joint is a leg joint
        "q_min": q_min_a,
        "q_max": q_max_a,
        "v_max": tile(v_max),
        "torque_limit": tile(torque_limits(r)),
        "geometry": geometry,
        "poses": poses,
        "stand_height": pr.number("stand_height", 0.05, 1.0),
        "stand_com_x": pr.number("stand_com_x", -0.2, 0.2),
        "gains": gains,
        "scale": scale,
        "pose_height_range": height_range(r, (0.10, 0.30)),   # SPEC §6.1
        "posture_height_range": height_range(r, (0.15, 0.35), "posture_height_range"),   # mode 3, SPEC §6
        "motor_ctrl_mutation_limit": tile(np.radians(mr.vector("mutation_limit_deg", 3))),
        "motor_ctrl_limit_margin": mr.number("limit_margin", 0.0, 0.5),
        "locomotion": load_locomotion(r, path) if "locomotion" in r.data else None,
        "mass_model": load_mass_model(r),
        "two_leg": load_two_leg(r),
    }
