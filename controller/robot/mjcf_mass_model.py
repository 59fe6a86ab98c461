"""A quadruped's `mass_model` (mode 64's balance: where its mass sits at any
joint angles) from the robot's own MJCF (`sim.mjcf`), or from its physics
file (controller/robot/mass_properties.py figures_mass_model).

The model is split where the controller's legs are: per leg, the abad link
is what the abad joint moves and the hip joint does not, the thigh what
the hip joint moves and the knee does not, the shank everything the knee
joint moves (a foot body included); the trunk is every other body under
the floating one. A link's centre of mass is taken on its line (hip axis
to knee axis, knee axis to the foot's collision geom, the one the
simulator stands on: mjcf_figures.end_geom) at the distance it lies along
it; the four legs are averaged. Read from the compiled model at its
reference pose: the simulator's own figures, nothing of its state.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from controller.robot.config.reader import ConfigError
from controller.robot.config.two_leg import MassModel
from controller.robot.mass_properties import figures_mass_model, load_figures, physics_path
from controller.robot.mjcf_figures import (
    compile_mjcf,
    end_geom,
    floating_body,
    joint_ids,
    mjcf_joint_names,
    mjcf_path,
    subtree,
)

if TYPE_CHECKING:
    import mujoco


def _part(model: mujoco.MjModel, data: mujoco.MjData, bodies: set[int]) -> tuple[float, np.ndarray]:
    """Mass and centre of mass (world frame) of `bodies`."""
    mass = float(sum(model.body_mass[b] for b in bodies))
    if mass <= 0.0:
        return 0.0, np.zeros(3)
    return mass, sum(model.body_mass[b] * data.xipos[b] for b in bodies) / mass


def _along(com: np.ndarray, start: np.ndarray, end: np.ndarray) -> float:
    """How far down the line start -> end the point `com` lies (m, >= 0)."""
    axis = end - start
    length = float(np.linalg.norm(axis))
    return max(0.0, float((com - start) @ axis) / length) if length > 1e-9 else 0.0


def mass_model_from_mjcf(model: mujoco.MjModel, joints: list[str], order: Any, where: str) -> MassModel:
    """The MassModel of the robot `model` compiles: `joints` are the model's
    joint names in wire order (sim.mjcf_joints), `order` maps each wire slot
    to the controller's joint (JointMap.order: leg-major, abad hip knee)."""
    import mujoco
    slots = [int(i) for i in order]
    if len(slots) != len(joints) or len(slots) % 3:
        raise ConfigError(f"{where}: sim.mjcf_joints names {len(joints)} joints, the joint map {len(slots)}")
    ids = joint_ids(model, joints, where)
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    trunk_id = floating_body(model, where)
    legs = len(slots) // 3
    links: list[tuple[float, float, float, float, float]] = []   # abad, thigh, at, shank, at
    in_legs: set[int] = set()
    for leg in range(legs):
        abad_id, hip, knee = (ids[slots.index(3 * leg + k)] for k in range(3))
        below = [set(subtree(model, int(model.jnt_bodyid[j]))) for j in (abad_id, hip, knee)]
        in_legs |= below[0]
        foot = end_geom(model, data, knee)
        if foot is None:
            raise ConfigError(f"{where}: joint {joints[slots.index(3 * leg + 2)]!r} moves no collision geom "
                              "(a foot)")
        thigh_mass, thigh_com = _part(model, data, below[1] - below[2])
        shank_mass, shank_com = _part(model, data, below[2])
        links.append((_part(model, data, below[0] - below[1])[0],
                      thigh_mass, _along(thigh_com, data.xanchor[hip], data.xanchor[knee]),
                      shank_mass, _along(shank_com, data.xanchor[knee], data.geom_xpos[foot])))
    trunk_mass, trunk_com = _part(model, data, set(subtree(model, trunk_id)) - in_legs)
    if trunk_mass <= 0.0:
        raise ConfigError(f"{where}: the trunk weighs nothing")
    turn = data.xmat[trunk_id].reshape(3, 3).T
    com = turn @ (trunk_com - data.xpos[trunk_id])
    abad, thigh, thigh_at, shank, shank_at = (float(v) for v in np.mean(np.array(links), axis=0))
    return MassModel(trunk=trunk_mass, trunk_com=(float(com[0]), float(com[1]), float(com[2])),
                     abad=abad, thigh=thigh, thigh_at=thigh_at, shank=shank, shank_at=shank_at)


def derived_mass_model(config_path: Path, robot: str, sim: dict[str, Any], geometry: Any,
                       joint_map: Any) -> MassModel:
    """The mass model of the robot's own MJCF (`sim.mjcf`, `sim.mjcf_joints`)
    or else of its physics file, for a config that plays the two-leg stand
    without a `mass_model` section; a ConfigError saying what is missing."""
    own = mjcf_path(config_path, sim)
    where = f"{config_path}: mass_model"
    if own is None:
        path = physics_path(config_path, robot, sim)
        if not path.is_file():
            raise ConfigError(f"{where}: missing (the two-leg stand needs it), and the robot has neither "
                              f"its own MJCF (sim.mjcf) nor a physics file ({path}) to read it from")
        return figures_mass_model(load_figures(path), geometry, path)
    joints = mjcf_joint_names(sim, str(config_path))
    return mass_model_from_mjcf(compile_mjcf(own, f"{config_path}: sim.mjcf"), joints, joint_map.order, where)
