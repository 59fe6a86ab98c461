"""A quadruped of another size for the scale-free defaults' tests: Unitree
Go1's own model (config/physics/go1.xml) and config/go1.yaml grown or shrunk
geometrically by a factor s. Lengths go as s, masses as s^3, inertias as
s^5, times as sqrt(s) (the same gravity): torques as s^4, joint damping as
s^4.5, joint speeds as 1/sqrt(s). Every figure the config writes from the
maker's model is scaled with it; what it leaves to new-robot's defaults is
left out, as new-robot leaves it."""
from __future__ import annotations

import math
import shutil
from pathlib import Path

import mujoco
import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent


def scale_mjcf(src: Path, dst: Path, s: float) -> None:
    spec = mujoco.MjSpec.from_file(str(src))
    for body in spec.bodies:
        if body.name == "world":
            continue
        body.pos = np.array(body.pos) * s
        body.ipos = np.array(body.ipos) * s
        body.mass = body.mass * s ** 3
        body.inertia = np.array(body.inertia) * s ** 5
        for geom in body.geoms:
            geom.size = np.array(geom.size) * s
            geom.pos = np.array(geom.pos) * s
            if not np.any(np.isnan(geom.fromto)):
                geom.fromto = np.array(geom.fromto) * s
            solimp = np.array(geom.solimp)
            solimp[2] *= s                      # the contact's width is a length
            geom.solimp = solimp
            geom.margin *= s
        for joint in body.joints:
            joint.damping *= s ** 4.5
            joint.armature *= s ** 5
            joint.frictionloss *= s ** 4
        for site in body.sites:
            site.pos = np.array(site.pos) * s
    for actuator in spec.actuators:
        actuator.forcerange = np.array(actuator.forcerange) * s ** 4
        actuator.gainprm = np.array(actuator.gainprm) * s ** 4
        actuator.biasprm = np.array(actuator.biasprm) * s ** 4
    for key in spec.keys:
        qpos = np.array(key.qpos)
        qpos[:3] *= s
        key.qpos = qpos
    dst.write_text(spec.to_xml())


def scaled_go1(s: float, out: Path) -> Path:
    """config/go1.yaml and its model grown by `s`, in `out`; the config's path."""
    shutil.copytree(ROOT / "config", out / "config", dirs_exist_ok=True)
    shutil.copytree(ROOT / "gaits", out / "gaits", dirs_exist_ok=True)
    scale_mjcf(ROOT / "config" / "physics" / "go1.xml", out / "config" / "physics" / "go1.xml", s)
    path = out / "config" / "go1.yaml"
    data = yaml.safe_load(path.read_text())
    geometry = data["geometry"]
    geometry["hip_offsets"] = {leg: [x * s for x in v] for leg, v in geometry["hip_offsets"].items()}
    for key in ("abad_link", "hip_link", "knee_link", "foot_radius"):
        geometry[key] *= s
    geometry["mass"] *= s ** 3
    data["torque_limit"] = [t * s ** 4 for t in data["torque_limit"]]
    data["joint_velocity_limit"] = [v / math.sqrt(s) for v in data["joint_velocity_limit"]]
    poses = data["poses"]
    poses["stand_height"] *= s
    poses["stand_com_x"] *= s
    data["pose_height_range"] = [h * s for h in data["pose_height_range"]]
    walk = data["locomotion"]
    for key in ("body_height", "vertical_leg_height", "com_x"):
        walk[key] *= s
    for key in ("height_range", "half_stride"):
        walk[key] = [h * s for h in walk[key]]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
