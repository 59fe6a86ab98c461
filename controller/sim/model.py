"""The MuJoCo model of a robot, generated from its config at load.

The kinematic tree (hip offsets, link lengths, joint axes, joint limits,
torque limits, foot radius) comes from the robot config, the same numbers
the controller's kinematics use, so the model and the controller cannot
disagree about where a foot is. The physical figures the config does not
carry (link masses, centres of mass, inertias, rotors, collision shapes,
joint friction) come from the robot's physics file, `config/physics/<robot>.yaml`,
written down from published figures with their source.

The humanoids' tree is built in controller/sim/humanoid_model.py.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np

from controller.robot.config import Config, ConfigError, Geometry
from controller.robot.mass_properties import Inertial, combine, point_mass
from controller.robot.mass_properties import link_inertial as _inertial
from controller.robot.mass_properties import physics_path as figures_path

TIMESTEP = 0.0005           # s: the physics step; the motor law runs at every one
FLOOR_GROUP = 2             # contype/conaffinity bits: the robot touches the floor, not itself
ROBOT_GROUP = 1


def physics_path(cfg: Config) -> Path:
    """The robot's physics file: `sim.physics` relative to the config, else
    config/physics/<robot>.yaml."""
    return figures_path(cfg.path, cfg.robot, cfg.sim)


def _vec(values: np.ndarray | list[float]) -> str:
    return " ".join(f"{float(v):.9g}" for v in values)


def _inertial_xml(i: Inertial) -> str:
    t = i.inertia
    full = [t[0, 0], t[1, 1], t[2, 2], t[0, 1], t[0, 2], t[1, 2]]
    return f'<inertial pos="{_vec(i.com)}" mass="{i.mass:.9g}" fullinertia="{_vec(full)}"/>'


def _joint_xml(name: str, axis: str, lo: float, hi: float) -> str:
    return f'<joint name={quoteattr(name)} class="leg" axis="{axis}" range="{lo:.9g} {hi:.9g}"/>'


def quadruped_mjcf(cfg: Config, figures: dict[str, Any], path: Path) -> str:
    """MJCF of a 3-DoF-leg quadruped: the trunk on a free joint, per leg an
    abad body (axis x), a thigh (axis -y) and a shank (axis -y) ending in
    the foot sphere, as controller/robot/kinematics.py has them."""
    geo = cfg.geometry
    assert isinstance(geo, Geometry)
    trunk_fig = figures.get("trunk", {})
    links = figures.get("links", {})
    rotors = figures.get("rotors", {})
    contact = figures.get("contact", {})
    act = figures.get("actuator", {})
    rotor_mass = float(rotors.get("mass", 0.0))
    friction = float(contact.get("friction", 0.6))
    abad_fig = _inertial(links.get("abad", {}), path, "links.abad")
    hip_fig = _inertial(links.get("hip", {}), path, "links.hip")
    knee_fig = _inertial(links.get("knee", {}), path, "links.knee")

    trunk_parts = [_inertial(trunk_fig, path, "trunk")]
    for i in range(len(cfg.legs)):
        hip = geo.hip_offsets[i]
        toward_middle = np.array(rotors.get("abad", [0.0, 0.0, 0.0]), dtype=float)
        toward_middle[0] *= 1.0 if hip[0] > 0 else -1.0
        if rotor_mass:
            trunk_parts.append(point_mass(rotor_mass, hip + toward_middle))
    trunk = combine(trunk_parts)
    shell = np.array(trunk_fig.get("shell_size", [0.3, 0.1, 0.08]), dtype=float) / 2.0
    shell_at = np.array(trunk_fig.get("shell_center", [0.0, 0.0, 0.0]), dtype=float)

    look = _appearance(figures.get("appearance", {}), path)
    legs_rgba = f' rgba="{_vec(look["legs"])}"' if "legs" in look else ""
    feet_rgba = f' rgba="{_vec(look["feet"])}"' if "feet" in look else ""
    l1, l2, l3, r_foot = geo.abad_link, geo.hip_link, geo.knee_link, geo.foot_radius
    knee_r = float(contact.get("knee_radius", 0.02))
    hip_r = float(contact.get("hip_radius", 0.025))
    legs_xml = []
    for i, leg in enumerate(cfg.legs):
        s = float(geo.side_sign[i])
        front = geo.hip_offsets[i][0] > 0
        abad, hip, knee = abad_fig, hip_fig, knee_fig
        parts_abad, parts_hip = [abad], [hip]
        if rotor_mass:
            parts_abad.append(point_mass(rotor_mass, np.array(rotors.get("hip", [0, 0, 0]), dtype=float)))
            parts_hip.append(point_mass(rotor_mass, np.array(rotors.get("knee", [0, 0, 0]), dtype=float)))
        abad, hip = combine(parts_abad), combine(parts_hip)
        if s < 0:
            abad, hip, knee = abad.mirrored_y(), hip.mirrored_y(), knee.mirrored_y()
        if not front:
            abad = abad.mirrored_x()
        j = 3 * i
        lo, hi = cfg.q_min[j:j + 3], cfg.q_max[j:j + 3]
        legs_xml.append(f"""
      <body name="{leg}_abad" pos="{_vec(geo.hip_offsets[i])}">
        {_inertial_xml(abad)}
        {_joint_xml(f"{leg}_abad", "1 0 0", lo[0], hi[0])}
        <body name="{leg}_hip" pos="0 {s * l1:.9g} 0">
          {_inertial_xml(hip)}
          {_joint_xml(f"{leg}_hip", "0 -1 0", lo[1], hi[1])}
          <geom name="{leg}_hip_cover" type="sphere" size="{hip_r:.9g}" class="robot"/>
          <geom name="{leg}_thigh" type="capsule" fromto="0 0 0 0 0 {-l2:.9g}" size="0.015" class="robot"{legs_rgba}/>
          <body name="{leg}_knee" pos="0 0 {-l2:.9g}">
            {_inertial_xml(knee)}
            {_joint_xml(f"{leg}_knee", "0 -1 0", lo[2], hi[2])}
            <geom name="{leg}_knee_pad" type="sphere" size="{knee_r:.9g}" class="robot"/>
            <geom name="{leg}_shank" type="capsule" fromto="0 0 0 0 0 {-(l3 - r_foot):.9g}" size="0.008"
                  class="robot"{legs_rgba}/>
            <geom name="{leg}_foot" type="sphere" pos="0 0 {-l3:.9g}" size="{r_foot:.9g}" class="robot"{feet_rgba}/>
            <site name="{leg}_foot" pos="0 0 {-l3:.9g}"/>
          </body>
        </body>
      </body>""")

    leg_defaults = f"""    <default class="leg">
      <joint armature="{float(act.get('armature', 0.0)):.9g}" damping="{float(act.get('damping', 0.0)):.9g}"
             frictionloss="{float(act.get('frictionloss', 0.0)):.9g}"/>
    </default>"""
    trunk_xml = f"""{_inertial_xml(trunk)}
      <geom name="trunk_shell" type="box" pos="{_vec(shell_at)}" size="{_vec(shell)}" class="robot"/>{_looks(look)}
      <site name="imu" pos="0 0 0"/>{"".join(legs_xml)}"""
    return mjcf_document(cfg, friction, leg_defaults, trunk_xml)


def _appearance(spec: Any, path: Path) -> dict[str, Any]:
    """The figures' `appearance`: colours (rgba) of the legs and feet, and
    boxes drawn on the trunk (head, face: size as full sides, pos, rgba)."""
    if not isinstance(spec, dict):
        raise ConfigError(f"{path}: appearance: expected a mapping")
    out: dict[str, Any] = {}
    try:
        for key in ("legs", "feet"):
            if key in spec:
                out[key] = _rgba(spec[key])
        out["boxes"] = [(name, np.array(box["size"], dtype=float) / 2.0, np.array(box["pos"], dtype=float),
                         _rgba(box["rgba"])) for name, box in spec.get("boxes", {}).items()]
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: appearance: {exc!r} (legs/feet: rgba; boxes: name: "
                          "{size: [x, y, z], pos: [x, y, z], rgba: [r, g, b, a]})") from None
    if any(b[1].shape != (3,) or b[2].shape != (3,) or (b[1] <= 0).any() for b in out["boxes"]):
        raise ConfigError(f"{path}: appearance.boxes: size and pos are 3 numbers, sizes positive")
    return out


def _rgba(values: Any) -> np.ndarray:
    rgba = np.array(values, dtype=float)
    if rgba.shape != (4,) or (rgba < 0).any() or (rgba > 1).any():
        raise ValueError(f"rgba {values!r}: four numbers 0-1")
    return rgba


def _looks(look: dict[str, Any]) -> str:
    """The trunk's drawn-only boxes: they touch nothing (contype and
    conaffinity 0) and weigh nothing (every body's inertial is given)."""
    return "".join(f"""
      <geom name="look_{name}" type="box" size="{_vec(half)}" pos="{_vec(pos)}" rgba="{_vec(rgba)}"
            contype="0" conaffinity="0" group="1"/>""" for name, half, pos, rgba in look["boxes"])


def mjcf_document(cfg: Config, friction: float, defaults: str, trunk: str) -> str:
    """The whole MJCF around a robot's tree: physics options, the floor and
    the lights, one motor per config joint, the IMU sensors at the trunk's
    `imu` site. Each motor is the driver's law, evaluated by MuJoCo at every
    physics step: force = ctrl - kp q - kd qd, ctrl = tau_ff + kp q_des +
    kd qd_des, kp and kd set per tick in its bias (physics.py), the force
    clipped to the joint's torque limit. `defaults` are the
    robot's joint classes; `trunk` the trunk body's content (inertial,
    geoms, the imu site and the limbs)."""
    limit = cfg.torque_limit
    motors = "\n".join(
        f'    <general name={quoteattr(name)} joint={quoteattr(name)} gaintype="fixed" gainprm="1" '
        f'biastype="affine" biasprm="0 0 0" forcelimited="true" '
        f'forcerange="{-limit[k]:.9g} {limit[k]:.9g}"/>'
        for k, name in enumerate(cfg.joint_names))
    return f"""<mujoco model={quoteattr(cfg.robot)}>
  <compiler angle="radian" autolimits="true"/>
  <option timestep="{TIMESTEP}" integrator="implicitfast"/>
  <visual>
    <global offwidth="640" offheight="480"/>
    <headlight ambient="0.35 0.35 0.35" diffuse="0.5 0.5 0.5"/>
  </visual>
  <asset>
    <texture name="sky" type="skybox" builtin="gradient" rgb1="0.75 0.82 0.9" rgb2="0.95 0.96 0.98"
             width="64" height="64"/>
    <texture name="grid" type="2d" builtin="checker" rgb1="0.86 0.86 0.82" rgb2="0.72 0.72 0.7"
             width="256" height="256"/>
    <material name="grid" texture="grid" texrepeat="4 4" texuniform="true"/>
  </asset>
  <default>
{defaults}
    <default class="robot">
      <geom contype="{ROBOT_GROUP}" conaffinity="{FLOOR_GROUP}" friction="{friction:.9g} 0.005 0.0001"
            rgba="0.22 0.32 0.52 1"/>
    </default>
  </default>
  <worldbody>
    <light pos="1 -1 3" dir="-0.3 0.3 -1" directional="true" diffuse="0.6 0.6 0.6"/>
    <geom name="floor" type="plane" size="0 0 0.05" contype="{FLOOR_GROUP}" conaffinity="{ROBOT_GROUP}"
          friction="{friction:.9g} 0.005 0.0001" material="grid"/>
    <body name="trunk" pos="0 0 0.5">
      <freejoint name="root"/>
      {trunk}
    </body>
  </worldbody>
  <actuator>
{motors}
  </actuator>
  <sensor>
    <framequat name="imu_quat" objtype="site" objname="imu"/>
    <gyro name="imu_gyro" site="imu"/>
    <accelerometer name="imu_acc" site="imu"/>
  </sensor>
</mujoco>
"""
