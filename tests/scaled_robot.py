"""A quadruped of another size for the scale-free defaults' tests: Unitree
Go1's own model (config/physics/go1.xml) grown or shrunk geometrically by a
factor s, and its config as a newcomer gets it, `motionctl new-robot
--mjcf`. Lengths go as s, masses as s^3, inertias as s^5, times as sqrt(s)
(the same gravity): torques as s^4, joint damping as s^4.5."""
from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from controller.cli import motionctl

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
    """Go1's model grown by `s` in `out`/config/physics/dog.xml, and the
    config `motionctl new-robot dog --mjcf` writes from it (everything else
    new-robot's defaults); the config's path."""
    (out / "config" / "physics").mkdir(parents=True, exist_ok=True)
    model = out / "config" / "physics" / "dog.xml"
    scale_mjcf(ROOT / "config" / "physics" / "go1.xml", model, s)
    path = out / "config" / "dog.yaml"
    if motionctl.main(["new-robot", "dog", "--mjcf", str(model), "-o", str(path)]) != 0:
        raise RuntimeError(f"new-robot --mjcf {model} failed")
    return path
