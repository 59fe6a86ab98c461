"""The humanoid schema (documented at the top of config/humanoid20.yaml;
config/nao22.yaml's header lists what it may add): one entry per joint,
torque limits and gains per joint group, named poses per joint name, an
optional walk and optional .mof motion nets."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from controller.robot.config.body import Gains, check_gains, check_poses, height_range
from controller.robot.config.fall import load_optional_fall
from controller.robot.config.mof import load_mof
from controller.robot.config.reader import ConfigError, Reader, indices
from controller.robot.config.walk import load_optional_walk
from controller.robot.humanoid_kinematics import (
    LEG_JOINTS,
    LEG_SIDES,
    HumanoidConfigError,
    HumanoidGeometry,
)

# The leg IK's order: right leg then left leg, each group's joints in config
# order (hip_yaw hip_roll hip_pitch knee ankle_pitch ankle_roll).
HUMANOID_LEG_GROUPS = ("right_leg", "left_leg")


def load_humanoid(r: Reader, path: Path) -> dict[str, Any]:
    """The humanoid schema (documented at the top of config/humanoid20.yaml;
    config/nao22.yaml's header lists what it may add): one entry per joint,
    torque limits and gains per joint group, named poses per joint name. The
    legs are found by group wherever they are in wire order; a walk and .mof
    motion nets are optional."""
    names, groups, q_min_a, q_max_a, v_max = _humanoid_joints(r, path)
    members = {g: [i for i, x in enumerate(groups) if x == g] for g in dict.fromkeys(groups)}
    legs = _leg_indices(r, members)

    tr = r.sub("torque_limit")
    torque = np.zeros(len(names))
    for group, idx in members.items():
        torque[idx] = tr.number(group, 0.1, 1000.0)

    try:
        geometry = HumanoidGeometry.from_mapping(r.get("geometry", dict))
    except HumanoidConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc

    poses = _humanoid_poses(r, names, q_min_a, q_max_a)
    gains = _group_gains(r, members, len(names))
    stand_height = r.number("stand_height", 0.05, 3.0)
    walk = load_optional_walk(r, path, geometry, stand_height, gains)
    return {
        "limbs": {g: tuple(idx) for g, idx in members.items()},
        "legs": list(LEG_SIDES),
        "joint_names": names,
        "leg_indices": legs,
        "q_min": q_min_a,
        "q_max": q_max_a,
        "v_max": v_max,
        "torque_limit": torque,
        "geometry": geometry,
        "poses": poses,
        "stand_height": stand_height,
        "stand_com_x": 0.0,
        "gains": gains,
        "pose_height_range": height_range(r, (0.8 * stand_height, stand_height)),
        "walk": walk,
        "mof": load_mof(r, path, names, (q_min_a, q_max_a, v_max), gains),
        "fall": load_optional_fall(r, poses, gains),
    }


def _humanoid_joints(r: Reader, path: Path) -> tuple[list[str], list[str], np.ndarray,
                                                      np.ndarray, np.ndarray]:
    """`joints`: names, groups, and min, max, vmax per joint, in wire order."""
    names: list[str] = []
    groups: list[str] = []
    rows: list[tuple[float, float, float]] = []
    for i, entry in enumerate(r.get("joints", list)):
        if not isinstance(entry, dict):
            raise r.fail(f"joints[{i}]", "expected {name, group, min, max, vmax}")
        jr = Reader(path, entry, f"joints[{i}]")
        name = jr.get("name", str)
        if name in names:
            raise jr.fail("name", f"{name!r} is listed twice")
        lo, hi = jr.number("min", -7.0, 7.0), jr.number("max", -7.0, 7.0)
        if not lo < hi:
            raise jr.fail("max", f"min {lo} is not below max {hi}")
        names.append(name)
        groups.append(jr.get("group", str))
        rows.append((lo, hi, jr.number("vmax", 0.1, 100.0)))   # VMAX_RANGE
    q_min, q_max, v_max = np.array(rows, dtype=float).reshape(-1, 3).T.copy()
    return names, groups, q_min, q_max, v_max


def _leg_indices(r: Reader, members: dict[str, list[int]]) -> np.ndarray:
    """The leg joints, found by group wherever they are in wire order: the
    right_leg's then the left_leg's, each group in config order, which must be
    the leg IK's (LEG_JOINTS)."""
    legs: list[int] = []
    for group in HUMANOID_LEG_GROUPS:
        idx = members.get(group, [])
        if len(idx) != len(LEG_JOINTS):
            raise r.fail("joints", f"group {group} has {len(idx)} joints; a leg has "
                                   f"{len(LEG_JOINTS)}: {' '.join(LEG_JOINTS)}, in that order")
        legs += idx
    return indices(legs)


def _humanoid_poses(r: Reader, names: list[str], q_min: np.ndarray,
                    q_max: np.ndarray) -> dict[str, np.ndarray]:
    """`poses`: every joint by name, inside its limits."""
    pr = r.sub("poses")
    poses = {}
    for pose_name in pr.data:
        pe = pr.sub(pose_name)
        unknown = sorted(set(pe.data) - set(names))
        if unknown:
            raise pr.fail(pose_name, f"unknown joints {unknown}")
        poses[str(pose_name)] = np.array([pe.number(n, -7.0, 7.0) for n in names])
    check_poses(pr, "humanoid", poses, names, q_min, q_max)
    return poses


def _group_gains(r: Reader, members: dict[str, list[int]], n: int) -> dict[str, Gains]:
    """`gains`: per set and joint group, kp and kd in the group's joint order."""
    gains = {}
    g = r.sub("gains")
    for gain_name in g.data:
        e = g.sub(gain_name)
        kp, kd = np.zeros(n), np.zeros(n)
        for group, idx in members.items():
            ge = e.sub(group)
            kp[idx] = ge.vector("kp", len(idx))
            kd[idx] = ge.vector("kd", len(idx))
            if (kp[idx] < 0).any() or (kd[idx] < 0).any():
                raise ge.fail("kp", "gains must not be negative")
        gains[str(gain_name)] = Gains(kp, kd)
    check_gains(r, "humanoid", gains)
    return gains
