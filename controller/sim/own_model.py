"""A robot's own MJCF as the physics body (`sim.mjcf`), instead of the model
generated from the config (controller/sim/model.py).

A user with a MuJoCo model of their robot (from its vendor, or converted
from its URDF) points the config at it and names its joints in the wire
order (`sim.mjcf_joints`, the order of `joint_map.wire_order`). Such a model
is in the robot's own joint convention, so the simulated body's joints ARE
the wire's: the controller's joint map turns them into its convention, and
a wrong map shows in simulation as it would on the robot.

What the simulator needs of any model is added or renamed here, through
MjSpec, and nothing else is touched (masses, shapes, contacts, joint
friction stay the user's):

* the physics step (0.5 ms, the motor law runs at every one) and the
  implicit-fast integrator;
* the floating body, renamed `trunk` with every reference to it (a light,
  a camera, a contact exclusion, a sensor, an equality, an actuator); a
  floor plane unless a geom is named `floor`;
* one motor per joint (the driver's law as in the generated model, clipped to
  the config's torque limits), replacing the model's actuators;
* the IMU: a site `imu` on the trunk (kept if the model has one, else at
  `sim.mjcf_imu`) and its quaternion, gyro and accelerometer sensors;
* the feet: the geom `sim.mjcf_feet.<leg>` names (without it, the collision
  geom at the end of each leg) is renamed `<leg>_foot`, with a site of that
  name at its centre (the scorecard's foot metrics). A humanoid's legs are
  `right` and `left` (its `sim.mjcf_feet` names both), and the site is its
  sole, `<side>_sole`: on the sole's plane (the lowest face of the foot's
  collision geoms) straight below where the ankle's two axes cross, which
  is where the controller's kinematics puts the sole.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from controller.robot.config import Config, ConfigError
from controller.robot.config.joint_map import JointMap
from controller.robot.mjcf_figures import end_geom, leg_end_slots, maker_spec, mjcf_joint_names, reach_below
from controller.sim.model import TIMESTEP


def own_model_path(cfg: Config) -> Path | None:
    """The config's own MJCF (`sim.mjcf`, relative to the config), or None."""
    name = cfg.sim.get("mjcf")
    return None if name is None else (cfg.path.parent / str(name)).resolve()


def model_joints(cfg: Config) -> tuple[list[str], JointMap]:
    """The physics model's joint names in the order a map's wire slots take
    them, and the map from the controller's joint arrays to the model's: the
    generated model is in the controller's own order and convention (the
    identity); a robot's own MJCF in the robot's (the config's joint map)."""
    if own_model_path(cfg) is None:
        return list(cfg.joint_names), JointMap(cfg.joint_names)
    return mjcf_joint_names(cfg.sim, str(cfg.path), cfg.num_joints), cfg.joint_map.copy()


def own_mjcf(cfg: Config) -> str:
    """The robot's own MJCF with what the simulator needs (module docstring),
    as an XML string that compiles anywhere (asset directories made absolute)."""
    path = own_model_path(cfg)
    assert path is not None
    spec, _ = maker_spec(path, f"{cfg.path}: sim.mjcf")
    names, jm = model_joints(cfg)
    spec.option.timestep = TIMESTEP
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    trunk = _floating_body(spec, cfg)
    _rename_body(spec, trunk, "trunk")
    _motors(spec, cfg, names, jm)
    _imu(spec, cfg, trunk)
    _feet(spec, cfg, names, jm)
    if not any(g.name == "floor" for g in spec.geoms):
        spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])
    return str(spec.to_xml())


def _floating_body(spec: Any, cfg: Config) -> Any:
    free = [j for j in spec.joints if j.type == mujoco.mjtJoint.mjJNT_FREE]
    if len(free) != 1:
        raise ConfigError(f"{cfg.path}: sim.mjcf: the model needs exactly one free joint (the trunk's), "
                          f"it has {len(free)}")
    return free[0].parent


def _rename_body(spec: Any, body: Any, name: str) -> None:
    """Rename `body` and every reference to it by name (a light or camera
    aimed at it, a contact exclusion, a sensor, an equality, an actuator),
    which MjSpec leaves pointing at the old name."""
    old = body.name
    if old == name:
        return
    body.name = name
    if not old:
        return
    for item in [*spec.lights, *spec.cameras]:
        if item.targetbody == old:
            item.targetbody = name
    for exclude in spec.excludes:
        exclude.bodyname1 = name if exclude.bodyname1 == old else exclude.bodyname1
        exclude.bodyname2 = name if exclude.bodyname2 == old else exclude.bodyname2
    bodies = (mujoco.mjtObj.mjOBJ_BODY, mujoco.mjtObj.mjOBJ_XBODY)
    for sensor in spec.sensors:
        if sensor.objtype in bodies and sensor.objname == old:
            sensor.objname = name
        if sensor.reftype in bodies and sensor.refname == old:
            sensor.refname = name
    for equality in spec.equalities:
        if equality.objtype in bodies:
            equality.name1 = name if equality.name1 == old else equality.name1
            equality.name2 = name if equality.name2 == old else equality.name2
    for actuator in spec.actuators:
        if actuator.trntype == mujoco.mjtTrn.mjTRN_BODY and actuator.target == old:
            actuator.target = name


def _motors(spec: Any, cfg: Config, names: list[str], jm: JointMap) -> None:
    """One motor per named joint (named after it), the model's own removed."""
    known = {j.name for j in spec.joints}
    missing = [n for n in names if n not in known]
    if missing:
        raise ConfigError(f"{cfg.path}: sim.mjcf_joints: {missing} are not joints of {own_model_path(cfg)}")
    for actuator in list(spec.actuators):
        spec.delete(actuator)
    limit = cfg.torque_limit[jm.order]          # per wire slot
    for k, name in enumerate(names):
        # Every attribute the model's default class could give it is set: a
        # maker's top-level default (OP3's position servos' ctrlrange of +-pi)
        # would clip the driver's law.
        spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT,
                          dyntype=mujoco.mjtDyn.mjDYN_NONE, gear=[1.0] + [0.0] * 5,
                          gaintype=mujoco.mjtGain.mjGAIN_FIXED, gainprm=[1.0] + [0.0] * 9,
                          biastype=mujoco.mjtBias.mjBIAS_AFFINE, biasprm=[0.0] * 10,
                          ctrllimited=mujoco.mjtLimited.mjLIMITED_FALSE, ctrlrange=[0.0, 0.0],
                          actlimited=mujoco.mjtLimited.mjLIMITED_FALSE,
                          forcelimited=mujoco.mjtLimited.mjLIMITED_TRUE,
                          forcerange=[-float(limit[k]), float(limit[k])])


def _imu(spec: Any, cfg: Config, trunk: Any) -> None:
    if not any(s.name == "imu" for s in spec.sites):
        at = np.asarray(cfg.sim.get("mjcf_imu", [0.0, 0.0, 0.0]), dtype=float)
        trunk.add_site(name="imu", pos=at.tolist())
    existing = {s.name for s in spec.sensors}
    for name, kind in (("imu_quat", mujoco.mjtSensor.mjSENS_FRAMEQUAT),
                       ("imu_gyro", mujoco.mjtSensor.mjSENS_GYRO),
                       ("imu_acc", mujoco.mjtSensor.mjSENS_ACCELEROMETER)):
        if name not in existing:
            spec.add_sensor(name=name, type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE, objname="imu")


def _feet(spec: Any, cfg: Config, names: list[str], jm: JointMap) -> None:
    """Each leg's foot geom named `<leg>_foot`, with a site of that name at
    its centre: the geom `sim.mjcf_feet.<leg>` names, or, without
    `sim.mjcf_feet` (a maker's model whose feet are unnamed), the collision
    geom at the leg's end (_end_geoms)."""
    feet = cfg.sim.get("mjcf_feet")
    if feet is None and cfg.kind == "humanoid":
        raise ConfigError(f"{cfg.path}: sim.mjcf_feet: a humanoid names its foot geoms: "
                          f"{{right: NAME, left: NAME}}")
    if feet is None:
        found = _end_geoms(spec, cfg, names, jm)
    else:
        if not isinstance(feet, dict) or set(feet) != set(cfg.legs):
            raise ConfigError(f"{cfg.path}: sim.mjcf_feet: expected the foot geom's name per leg "
                              f"{cfg.legs}, got {feet!r}")
        geoms = {g.name: g for g in spec.geoms if g.name}
        found = {}
        for leg, name in feet.items():
            geom = geoms.get(str(name))
            if geom is None:
                raise ConfigError(f"{cfg.path}: sim.mjcf_feet.{leg}: no geom named {name!r} in the model")
            found[leg] = geom
    soles = _soles(spec, cfg, names, jm, found) if cfg.kind == "humanoid" else {}
    for leg, geom in found.items():
        geom.name = f"{leg}_foot"
        if leg in soles:
            geom.parent.add_site(name=f"{leg}_sole", pos=soles[leg].tolist())
        else:
            geom.parent.add_site(name=f"{leg}_foot", pos=list(geom.pos))


def _soles(spec: Any, cfg: Config, names: list[str], jm: JointMap, feet: dict[str, Any]) -> dict[str, np.ndarray]:
    """Per side, the sole point in its foot body's frame, in the model's
    own pose (every joint at zero, the foot flat): where the ankle's pitch
    and roll axes cross (the midpoint of their closest approach), lowered
    to the bottom of the foot body's lowest collision geom."""
    model = spec.copy().compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    order = list(jm.order)
    soles = {}
    for side, geom in feet.items():
        leg = cfg.limbs[f"{side}_leg"]              # hip yaw ... ankle pitch, ankle roll
        pitch, roll = (model.joint(names[order.index(j)]).id for j in leg[4:6])
        ankle = _axes_meet(data.xanchor[pitch], data.xaxis[pitch], data.xanchor[roll], data.xaxis[roll])
        body = model.body(geom.parent.name).id
        bottom = min(float(data.geom_xpos[g][2]) - reach_below(model, data, g) for g in range(model.ngeom)
                     if int(model.geom_bodyid[g]) == body and (model.geom_contype[g] or model.geom_conaffinity[g]))
        sole = np.array([ankle[0], ankle[1], bottom])
        soles[side] = data.xmat[body].reshape(3, 3).T @ (sole - data.xpos[body])
    return soles


def _axes_meet(p: np.ndarray, u: np.ndarray, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The midpoint of the closest approach of the lines p + s u and q + t v
    (not parallel)."""
    w, b = p - q, float(u @ v)
    s = (b * float(v @ w) - float(u @ w)) / (1.0 - b * b)
    t = (float(v @ w) - b * float(u @ w)) / (1.0 - b * b)
    return (p + s * u + q + t * v) / 2.0


def _end_geoms(spec: Any, cfg: Config, names: list[str], jm: JointMap) -> dict[str, Any]:
    """Per leg, of the collision geoms the leg's last joint moves (its body
    and the bodies below), the one whose centre is furthest from that
    joint, in the model's own pose: the foot of a leg that stands on its
    end (a shank's capsule centres half way down). Found in a compiled
    copy, named in the spec by its body and its place among that body's
    geoms."""
    model = spec.copy().compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    found = {}
    for leg, slot in zip(cfg.legs, leg_end_slots(len(cfg.legs), jm.order)):
        joint = model.joint(names[slot])
        end = end_geom(model, data, joint.id)
        if end is None:
            raise ConfigError(f"{cfg.path}: sim.mjcf: no collision geom below {joint.name} to stand on "
                              f"for leg {leg}: name its foot in sim.mjcf_feet.{leg}")
        body = model.body(int(model.geom_bodyid[end]))
        place = sum(1 for g in range(end) if int(model.geom_bodyid[g]) == body.id)
        found[leg] = spec.body(body.name).geoms[place]
    return found
