"""A quadruped's config figures read off its maker's MuJoCo model
(`motionctl new-robot NAME --mjcf FILE`, issue 42 item 8).

The model is compiled as MuJoCo reads it and looked at with every joint at
its zero, in the floating body's frame. Its four legs are the four chains of
three hinge joints below that body; each is named by where it is (front or
rear, right or left of the body's origin). Per leg, with A, H, K the abad,
hip and knee joints' anchors and F the foot's centre (the collision geom at
the leg's end, found as the simulator finds it):

- `hip_offsets`: A's y, and H's x and z (the hip axis crosses the abad
  plane there); `abad_link`: F's distance sideways from A (offsets along the
  hip and knee axes do not move the foot as they turn);
- `hip_link`, `knee_link`: H to K and K to F in the leg's plane (x, z);
- `joint_map.direction`: the abad axis along +x is +1; hip and knee axes
  along -y are +1 (the controller's), along +y -1;
- `joint_map.offset`: the model's zero against the controller's (the leg
  straight down): the angles the model's zero pose has in the controller's
  convention, so q_wire = direction x q + offset holds;
- `joint_limits`: the model's ranges through that map; `torque_limit` the
  actuators' force ranges (the larger side, the largest of each joint type);
  `mass` every body the free joint carries; `poses.stand_height` the trunk's
  height in a keyframe named home or stand (else the first keyframe).

What the model does not hold (joint speed limits, a keyframe, limits) is
left to the skeleton's placeholder, and listed in `missing`. Nothing here
needs the simulator: only the compiled model."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from controller.robot.config.reader import ConfigError
from controller.robot.mjcf_figures import compile_mjcf, end_geom, floating_body, subtree

TYPES = ("abad", "hip", "knee")
ALIGNED = 0.95      # an axis this close (cosine) to x or y is along it
FLAT = 1e-4         # rad or m: below this an offset is none


@dataclass
class MakerQuadruped:
    """The figures a quadruped config takes from its maker's model."""
    legs: list[str]                          # FR, FL, RR, RL
    mjcf_joints: list[str]                   # the model's leg joints in its own (the wire's) order
    wire_order: list[str]                    # the controller's names of those joints
    direction: dict[str, int]                # per joint type, or per joint name where legs differ
    offset: dict[str, float]                 # per joint name, rad; empty when the zeros agree
    joint_limits: dict[str, list[list[float]]]
    torque_limit: list[float] | None         # abad, hip, knee; None: the model has no actuator limits
    hip_offsets: dict[str, list[float]]
    abad_link: float
    hip_link: float
    knee_link: float
    foot_radius: float | None                # None: the foot is not a sphere
    mass: float
    stand_height: float | None               # None: no keyframe
    feet: dict[str, str] | None              # the foot geoms' names; None: unnamed (found by place)
    missing: list[str] = field(default_factory=list)     # keys left to the skeleton, with why


def read_maker_quadruped(path: Path) -> MakerQuadruped:
    """The figures of the quadruped model at `path`; a ConfigError saying
    what does not fit a 12-joint abad-hip-knee quadruped."""
    import mujoco
    where = str(path)
    model = compile_mjcf(path, where)
    data = mujoco.MjData(model)
    data.qpos[:] = model.qpos0
    mujoco.mj_kinematics(model, data)
    trunk = floating_body(model, where)
    origin = data.xpos[trunk].copy()
    turn = data.xmat[trunk].reshape(3, 3).T.copy()     # world -> trunk frame

    def local(p: np.ndarray) -> np.ndarray:
        return turn @ (p - origin)

    chains = _leg_chains(model, trunk, where)
    legs: dict[str, list[int]] = {}
    for chain in chains:
        a = local(data.xanchor[chain[0]])
        name = ("F" if a[0] > 0 else "R") + ("L" if a[1] > 0 else "R")
        if name in legs:
            raise ConfigError(f"{where}: two legs sit at {name} (their abad joints' anchors)")
        legs[name] = chain
    order = ["FR", "FL", "RR", "RL"]
    missing: list[str] = []
    directions: dict[str, int] = {}
    offsets: dict[str, float] = {}
    limits: dict[str, list[list[float]]] = {}
    hips: dict[str, list[float]] = {}
    links: dict[str, list[float]] = {"abad": [], "hip": [], "knee": []}
    feet: dict[str, int] = {}
    for leg in order:
        joints = legs[leg]
        foot = end_geom(model, data, joints[-1])
        if foot is None:
            raise ConfigError(f"{where}: no collision geom below {model.joint(joints[-1]).name} "
                              f"to stand on for leg {leg}")
        feet[leg] = foot
        A, H, K = (local(data.xanchor[j]) for j in joints)
        F = local(data.geom_xpos[foot])
        axes = [turn @ data.xaxis[j] for j in joints]
        signs = [_along(axes[0], 0, model.joint(joints[0]).name, "x", where)]
        signs += [-_along(ax, 1, model.joint(j).name, "y", where) for ax, j in zip(axes[1:], joints[1:])]
        # The controller's angles of the model's zero pose (the leg's plane
        # is y = F.y; its angles are taken in x-z).
        side = 1.0 if A[1] > 0 else -1.0
        l1 = abs(F[1] - A[1])
        q1 = math.atan2(K[0] - H[0], -(K[2] - H[2]))
        q2 = math.atan2(F[0] - K[0], -(F[2] - K[2])) - q1
        reach = math.hypot(F[1] - A[1], F[2] - A[2])
        h = math.sqrt(max(reach ** 2 - l1 ** 2, 0.0))
        q0 = math.atan2(F[2] - A[2], F[1] - A[1]) - math.atan2(-h, side * l1)
        for jt, j, sign, zero in zip(TYPES, joints, signs, (q0, q1, q2)):
            name = f"{leg}_{jt}"
            directions[name] = sign
            if abs(zero) > FLAT:
                offsets[name] = round(-sign * zero, 4)
            if not model.jnt_limited[j]:
                missing.append(f"joint_limits.{leg}: {model.joint(j).name} has no range in the model")
            lo, hi = (float(v) for v in model.jnt_range[j])
            lo_c, hi_c = sorted(((lo + sign * zero) * sign, (hi + sign * zero) * sign))
            limits.setdefault(leg, []).append([round(lo_c, 4), round(hi_c, 4)])
        hips[leg] = [round(float(H[0]), 5), round(float(A[1]), 5), round(float(A[2]), 5)]
        if abs(H[2] - A[2]) > 1e-3:
            missing.append(f"geometry.hip_offsets.{leg}: the hip axis is {abs(H[2] - A[2]) * 1000:.0f} mm "
                           "above or below the abad axis, which the controller's leg does not have")
        links["abad"].append(l1)
        links["hip"].append(math.hypot(K[0] - H[0], K[2] - H[2]))
        links["knee"].append(math.hypot(F[0] - K[0], F[2] - K[2]))
    for key, values in links.items():
        if max(values) - min(values) > 1e-3:
            missing.append(f"geometry.{key}_link: the legs differ ({', '.join(f'{v:.4f}' for v in values)} m); "
                           "the mean is written")
    wire = sorted((j for leg in order for j in legs[leg]), key=lambda j: int(model.jnt_qposadr[j]))
    names = {j: f"{leg}_{jt}" for leg in order for j, jt in zip(legs[leg], TYPES)}
    return MakerQuadruped(
        legs=order,
        mjcf_joints=[model.joint(j).name for j in wire],
        wire_order=[names[j] for j in wire],
        direction=_per_type(directions, order),
        offset=offsets,
        joint_limits=limits,
        torque_limit=_torques(model, legs, order, missing),
        hip_offsets=hips,
        abad_link=round(float(np.mean(links["abad"])), 5),
        hip_link=round(float(np.mean(links["hip"])), 5),
        knee_link=round(float(np.mean(links["knee"])), 5),
        foot_radius=_foot_radius(model, feet, missing),
        mass=round(float(sum(model.body_mass[b] for b in subtree(model, trunk))), 4),
        stand_height=_stand_height(model, trunk, missing),
        feet=({leg: model.geom(g).name for leg, g in feet.items()}
              if all(model.geom(g).name for g in feet.values()) else None),
        missing=missing,
    )


def _leg_chains(model: Any, trunk: int, where: str) -> list[list[int]]:
    """Per body hung on the trunk that carries joints, its hinge joints in
    tree order: four chains of three."""
    import mujoco
    chains = []
    for child in (b for b in range(model.nbody) if int(model.body_parentid[b]) == trunk and b != trunk):
        joints = [j for b in subtree(model, child) for j in range(model.njnt) if int(model.jnt_bodyid[j]) == b]
        if not joints:
            continue
        if any(model.jnt_type[j] != mujoco.mjtJoint.mjJNT_HINGE for j in joints) or len(joints) != 3:
            raise ConfigError(f"{where}: body {model.body(child).name!r} carries {len(joints)} joints; "
                              "a quadruped's leg is three hinges (abad, hip, knee)")
        chains.append(joints)
    if len(chains) != 4:
        raise ConfigError(f"{where}: {len(chains)} legs hang on the floating body; a quadruped has four")
    return chains


def _along(axis: np.ndarray, index: int, joint: str, name: str, where: str) -> int:
    if abs(axis[index]) < ALIGNED:
        raise ConfigError(f"{where}: joint {joint!r} turns about {np.round(axis, 3).tolist()} in the trunk's "
                          f"frame, not about its {name} axis: not an abad-hip-knee leg")
    return 1 if axis[index] > 0 else -1


def _per_type(directions: dict[str, int], legs: list[str]) -> dict[str, int]:
    """Per joint type where every leg agrees, else per joint name."""
    out: dict[str, int] = {}
    for jt in TYPES:
        values = {directions[f"{leg}_{jt}"] for leg in legs}
        if len(values) == 1:
            out[jt] = values.pop()
        else:
            out.update({f"{leg}_{jt}": directions[f"{leg}_{jt}"] for leg in legs})
    return out


def _torques(model: Any, legs: dict[str, list[int]], order: list[str], missing: list[str]) -> list[float] | None:
    """The most each joint type's actuators (or the joints' own actuator
    force ranges) give, N m."""
    import mujoco
    limit: dict[int, float] = {}
    for a in range(model.nu):
        if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT and model.actuator_forcelimited[a]:
            limit[int(model.actuator_trnid[a][0])] = float(np.max(np.abs(model.actuator_forcerange[a])))
    for j in range(model.njnt):
        if model.jnt_actfrclimited[j]:
            limit.setdefault(j, float(np.max(np.abs(model.jnt_actfrcrange[j]))))
    per_type = []
    for i, _ in enumerate(TYPES):
        values = [limit.get(legs[leg][i]) for leg in order]
        if any(v is None for v in values):
            missing.append("torque_limit: the model's actuators give no force range")
            return None
        per_type.append(round(max(v for v in values if v is not None), 4))
    return per_type


def _foot_radius(model: Any, feet: dict[str, int], missing: list[str]) -> float | None:
    import mujoco
    if any(model.geom_type[g] != mujoco.mjtGeom.mjGEOM_SPHERE for g in feet.values()):
        missing.append("geometry.foot_radius: the feet are not spheres")
        return None
    return round(float(max(model.geom_size[g][0] for g in feet.values())), 5)


def _stand_height(model: Any, trunk: int, missing: list[str]) -> float | None:
    """The trunk's height in the keyframe named home or stand, else the first."""
    if model.nkey == 0:
        missing.append("poses.stand_height: the model has no keyframe")
        return None
    names = [model.key(k).name for k in range(model.nkey)]
    key = next((names.index(n) for n in ("home", "stand") if n in names), 0)
    free = next(j for j in range(model.njnt) if int(model.jnt_bodyid[j]) == trunk)
    return round(float(model.key_qpos[key][int(model.jnt_qposadr[free]) + 2]), 4)
