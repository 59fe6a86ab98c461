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

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np

from controller.robot.config import Config, ConfigError, Geometry
from controller.robot.config.reader import load_yaml
from controller.robot.resources import CONFIG_DIR

TIMESTEP = 0.0005           # s: the physics step; the motor law runs at every one
FLOOR_GROUP = 2             # contype/conaffinity bits: the robot touches the floor, not itself
ROBOT_GROUP = 1


@dataclass(frozen=True)
class Inertial:
    mass: float
    com: np.ndarray         # (3,) in the body frame
    inertia: np.ndarray     # (3, 3) about the centre of mass

    def mirrored_y(self) -> Inertial:
        """The same link on the other side of the robot (y -> -y)."""
        m = np.diag([1.0, -1.0, 1.0])
        return Inertial(self.mass, m @ self.com, m @ self.inertia @ m)

    def mirrored_x(self) -> Inertial:
        m = np.diag([-1.0, 1.0, 1.0])
        return Inertial(self.mass, m @ self.com, m @ self.inertia @ m)


def inertia_matrix(values: list[float]) -> np.ndarray:
    """[xx, yy, zz, xy, xz, yz] -> the symmetric 3x3 tensor."""
    xx, yy, zz, xy, xz, yz = values
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)


def point_mass(mass: float, at: np.ndarray) -> Inertial:
    return Inertial(mass, np.asarray(at, dtype=float), np.zeros((3, 3)))


def combine(parts: list[Inertial]) -> Inertial:
    """One rigid body of several parts: total mass, common centre of mass,
    inertia about it (parallel-axis theorem)."""
    mass = sum(p.mass for p in parts)
    com = sum((p.mass * p.com for p in parts), np.zeros(3)) / mass
    inertia = np.zeros((3, 3))
    for p in parts:
        d = p.com - com
        inertia += p.inertia + p.mass * (d @ d * np.eye(3) - np.outer(d, d))
    return Inertial(mass, com, inertia)


def physics_path(cfg: Config) -> Path:
    """The robot's physics file: `sim.physics` relative to the config, else
    config/physics/<robot>.yaml."""
    name = cfg.sim.get("physics")
    if name is not None:
        return (cfg.path.parent / str(name)).resolve()
    return CONFIG_DIR / "physics" / f"{cfg.robot}.yaml"


def load_figures(path: Path) -> dict[str, Any]:
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def _inertial(data: dict[str, Any], path: Path, where: str) -> Inertial:
    try:
        mass = float(data["mass"])
        com = np.array(data["com"], dtype=float).reshape(3)
        inertia = inertia_matrix([float(x) for x in data["inertia"]])
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: {where}: expected mass, com [3] and inertia "
                          f"[xx, yy, zz, xy, xz, yz] ({exc})") from exc
    if mass <= 0 or np.linalg.eigvalsh(inertia).min() < 0:
        raise ConfigError(f"{path}: {where}: mass must be positive and the inertia positive semi-definite")
    return Inertial(mass, com, inertia)


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
          <geom name="{leg}_thigh" type="capsule" fromto="0 0 0 0 0 {-l2:.9g}" size="0.015" class="robot"/>
          <body name="{leg}_knee" pos="0 0 {-l2:.9g}">
            {_inertial_xml(knee)}
            {_joint_xml(f"{leg}_knee", "0 -1 0", lo[2], hi[2])}
            <geom name="{leg}_knee_pad" type="sphere" size="{knee_r:.9g}" class="robot"/>
            <geom name="{leg}_shank" type="capsule" fromto="0 0 0 0 0 {-(l3 - r_foot):.9g}" size="0.008"
                  class="robot"/>
            <geom name="{leg}_foot" type="sphere" pos="0 0 {-l3:.9g}" size="{r_foot:.9g}" class="robot"/>
            <site name="{leg}_foot" pos="0 0 {-l3:.9g}"/>
          </body>
        </body>
      </body>""")

    leg_defaults = f"""    <default class="leg">
      <joint armature="{float(act.get('armature', 0.0)):.9g}" damping="{float(act.get('damping', 0.0)):.9g}"
             frictionloss="{float(act.get('frictionloss', 0.0)):.9g}"/>
    </default>"""
    trunk_xml = f"""{_inertial_xml(trunk)}
      <geom name="trunk_shell" type="box" pos="{_vec(shell_at)}" size="{_vec(shell)}" class="robot"/>
      <site name="imu" pos="0 0 0"/>{"".join(legs_xml)}"""
    return mjcf_document(cfg, friction, leg_defaults, trunk_xml)


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
