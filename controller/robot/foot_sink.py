"""How far a robot's loaded feet sink into the floor, measured on its own
MJCF (`geometry.foot_sink` when the config does not write it).

A maker may model a rubber foot as a soft contact (Menagerie's Go1:
solimp 0.015 1 0.031, "softened to approximate the effect of rubber"):
standing, the foot sphere then sits well into the floor, and a body held at
its height over the feet's lowest points stands that much lower. How much
depends on the contact settings and on the mass the contact sees through
the leg (MuJoCo scales a soft contact's give by it), so it is measured, not
derived from the solimp figures: the model compiled by MuJoCo on a flat
floor, its joints held at the stand pose (through the joint map) by a stiff
PD of our own (its actuators silenced), stood for SETTLE_S; the feet's mean
depth below their lowest point is the figure. The feet are the geoms
`sim.mjcf_feet` names; without it, the collision geom at each leg's end (as
the simulator finds a maker's unnamed feet).

Read at config load, once: a figure of the model, as its masses are
(controller/robot/mjcf_figures.py), never the running simulation's. So is
the feet's rolling friction (feet_rolling_friction), which the two-leg
stand's balance allows for (`two_leg.balance.foot_rolling`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from controller.robot.config.quadruped import Geometry
from controller.robot.config.reader import ConfigError
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.mjcf_figures import compile_mjcf, end_geom, floating_body, leg_end_slots, maker_spec

SETTLE_S = 1.5                     # s of standing before the depth is read
HOLD_KP, HOLD_KD = 400.0, 10.0     # N m/rad, N m s/rad: the joints held at the stand


def measured_foot_sink(path: Path, sim: dict[str, Any], legs: list[str], geometry: Geometry,
                       stand_height: float, stand_com_x: float, joint_map: Any) -> float:
    """Metres the feet stand below their lowest point on a flat floor at the
    stand pose (0 when they do not sink). The feet are the geoms
    `sim.mjcf_feet` names, else the collision geom at each leg's end."""
    import mujoco
    feet, joints = sim.get("mjcf_feet"), sim.get("mjcf_joints")
    if not isinstance(joints, list):
        return 0.0
    own = (path.parent / str(sim["mjcf"])).resolve()
    where = f"{path}: sim.mjcf"
    spec, _ = maker_spec(own, where)
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[5.0, 5.0, 0.1])
    try:
        model = spec.compile()
    except Exception as exc:  # noqa: BLE001 - MuJoCo's compiler says what is wrong
        raise ConfigError(f"{where}: {own} does not load: {exc}") from exc
    data = mujoco.MjData(model)
    ids = [model.joint(str(n)).id for n in joints]      # checked by joint_damping's loader
    foot_ids = foot_geoms(model, data, path, feet, legs, ids, joint_map)
    if foot_ids is None:
        return 0.0                                      # the simulator says why, when it builds the body
    qadr = np.array([model.jnt_qposadr[j] for j in ids])
    dadr = np.array([model.jnt_dofadr[j] for j in ids])
    kin = QuadrupedKinematics(geometry)
    q, _ = kin.inverse(kin.stance_feet(stand_height, stand_com_x))
    wire = joint_map.positions_to_wire(np.asarray(q, dtype=float).reshape(-1))
    model.actuator_gainprm[:] = 0.0
    model.actuator_biasprm[:] = 0.0
    data.qpos[:] = model.qpos0
    trunk = floating_body(model, where)
    base = model.jnt_qposadr[next(j for j in range(model.njnt) if int(model.jnt_bodyid[j]) == trunk)]
    data.qpos[base:base + 7] = [0.0, 0.0, stand_height + 0.005, 1.0, 0.0, 0.0, 0.0]
    data.qpos[qadr] = wire
    for _ in range(int(round(SETTLE_S / model.opt.timestep))):
        data.qfrc_applied[dadr] = HOLD_KP * (wire - data.qpos[qadr]) - HOLD_KD * data.qvel[dadr]
        mujoco.mj_step(model, data)
    depths = [float(model.geom_size[g][0]) - float(data.geom_xpos[g][2]) for g in foot_ids]
    return max(0.0, float(np.mean(depths)))


def foot_geoms(model: Any, data: Any, path: Path, feet: Any, legs: list[str], joint_ids: list[int],
               joint_map: Any) -> list[int] | None:
    """The feet's geom ids, one per leg: the geoms `sim.mjcf_feet` names,
    else (Menagerie's unnamed `class="foot"`) the collision geom at each
    leg's end, as the simulator finds them (sim/own_model.py); None when a
    leg has none."""
    import mujoco
    if isinstance(feet, dict):
        out = []
        for leg in legs:
            g = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, str(feet.get(leg)))
            if g < 0:
                raise ConfigError(f"{path}: sim.mjcf_feet.{leg}: no geom named {feet.get(leg)!r} in the model")
            out.append(g)
        return out
    mujoco.mj_forward(model, data)
    ends = [end_geom(model, data, joint_ids[slot]) for slot in leg_end_slots(len(legs), joint_map.order)]
    return None if any(g is None for g in ends) else [int(g) for g in ends if g is not None]


def feet_rolling_friction(path: Path, sim: dict[str, Any], legs: list[str], joint_map: Any) -> float:
    """The rolling friction (m: the moment per newton of load that resists a
    foot rolling on the floor) of the robot's feet in its own MJCF: the
    third friction figure of a foot geom whose contacts have six dimensions
    (condim 6, Menagerie's Go1: 0.01), their mean; 0 when the feet do not
    roll against friction (condim under 6) or are not found."""
    import mujoco
    joints = sim.get("mjcf_joints")
    if not isinstance(joints, list):
        return 0.0
    own = (path.parent / str(sim["mjcf"])).resolve()
    model = compile_mjcf(own, f"{path}: sim.mjcf")
    data = mujoco.MjData(model)
    ids = [model.joint(str(n)).id for n in joints]
    foot_ids = foot_geoms(model, data, path, sim.get("mjcf_feet"), legs, ids, joint_map)
    if not foot_ids:
        return 0.0
    rolling = [float(model.geom_friction[g][2]) if int(model.geom_condim[g]) >= 6 else 0.0 for g in foot_ids]
    return float(np.mean(rolling))
