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
(controller/robot/mjcf_figures.py), never the running simulation's.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from controller.robot.config.quadruped import Geometry
from controller.robot.config.reader import ConfigError
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.mjcf_figures import end_geom, floating_body, leg_end_slots, maker_spec

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
    foot_ids = []
    if isinstance(feet, dict):
        for leg in legs:
            g = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, str(feet.get(leg)))
            if g < 0:
                raise ConfigError(f"{path}: sim.mjcf_feet.{leg}: no geom named {feet.get(leg)!r} in the model")
            foot_ids.append(g)
    else:
        # Unnamed feet (Menagerie's `class="foot"`): the collision geom at
        # each leg's end, as the simulator finds them (sim/own_model.py).
        mujoco.mj_forward(model, data)
        for slot in leg_end_slots(len(legs), joint_map.order):
            g = end_geom(model, data, ids[slot])
            if g is None:
                return 0.0                              # the simulator says why, when it builds the body
            foot_ids.append(g)
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
