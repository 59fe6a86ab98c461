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

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import mujoco
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


# -- a changed world, for one scorecard row ------------------------------------------
TERRAIN_WIDTH = 2.0         # m across the path (y), centred on the start
RAMP_LENGTH = 4.0           # m along the incline
TERRAIN_THICKNESS = 0.1     # m: a ramp is a tilted box this thick
STEP_DEPTH = 4.0            # m: the step is a platform this long
OBSTACLE = "obstacle"        # the mocap body of World.obstacle
OBSTACLE_PARK = 10.0        # m to the side where it waits
OBSTACLE_SOFTNESS = 0.05    # s: its contact's time constant (a hand, not a wall)
PLATFORM_BACK = 2.0         # m behind the start: where a downhill row's start platform begins
WORLD_KEYS = ("friction", "trunk_mass_scale", "slope", "step", "drop", "at", "obstacle")


@dataclass(frozen=True)
class World:
    """What one scorecard row changes in the world, and nothing else. The
    default (all fields at their defaults) is the unchanged model.

    friction: the sliding friction of the floor and any terrain (None: the
    physics file's); it is the contact's, whatever the robot's geoms say
    (the ground's geoms get the higher priority). trunk_mass_scale: the
    trunk body's mass and inertia times this, its centre of mass unchanged.
    slope: a ramp at this many degrees (> 0 up, < 0 down) starting `at` m
    ahead of the start (+x); downhill, the robot starts on a platform as
    high as the ramp descends. step: a platform this high (m) from `at` on.
    drop: the robot starts on a platform this high (m) that ends `at` m
    ahead; the floor beyond (a stair down). obstacle: a fixed box in the
    air, (x, y, z, half x, half y, half z) in m from the start on the floor
    (a thing a swinging leg may hit).
    """
    friction: float | None = None
    trunk_mass_scale: float = 1.0
    slope: float = 0.0          # degrees
    step: float = 0.0           # m
    drop: float = 0.0           # m
    at: float = 0.5             # m ahead of the start
    obstacle: tuple[float, ...] = ()

    @classmethod
    def from_spec(cls, spec: dict[str, Any] | None, where: str) -> World:
        spec = spec or {}
        unknown = sorted(set(spec) - set(WORLD_KEYS))
        if unknown:
            raise ConfigError(f"{where}: world: unknown keys {unknown} (known: {list(WORLD_KEYS)})")
        d = cls()
        try:
            friction = spec.get("friction", d.friction)
            world = cls(friction=None if friction is None else float(friction),
                        trunk_mass_scale=float(spec.get("trunk_mass_scale", d.trunk_mass_scale)),
                        slope=float(spec.get("slope", d.slope)), step=float(spec.get("step", d.step)),
                        drop=float(spec.get("drop", d.drop)), at=float(spec.get("at", d.at)),
                        obstacle=tuple(float(v) for v in spec.get("obstacle", d.obstacle)))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: world: {exc}") from exc
        if world.trunk_mass_scale <= 0 or (world.friction is not None and world.friction <= 0):
            raise ConfigError(f"{where}: world: friction and trunk_mass_scale must be positive")
        if abs(world.slope) >= 45 or world.step < 0 or world.drop < 0:
            raise ConfigError(f"{where}: world: slope must be within ±45 degrees, step and drop not negative")
        if world.obstacle and (len(world.obstacle) != 6 or min(world.obstacle[3:]) <= 0):
            raise ConfigError(f"{where}: world: obstacle is [x, y, z, half x, half y, half z], halves positive")
        if world.drop and world.slope < 0:
            raise ConfigError(f"{where}: world: a drop and a downhill slope both need the start platform")
        return world

    @property
    def changed(self) -> bool:
        return self != World()

    @property
    def label(self) -> str:
        """What differs from the unchanged world, e.g. "friction 0.5"."""
        d = World()
        parts = [f"friction {self.friction:g}" if self.friction != d.friction else "",
                 f"trunk mass x{self.trunk_mass_scale:g}" if self.trunk_mass_scale != 1.0 else "",
                 f"slope {self.slope:g} deg" if self.slope else "",
                 f"step {self.step:g} m" if self.step else "",
                 f"drop {self.drop:g} m" if self.drop else "",
                 "an obstacle" if self.obstacle else ""]
        return ", ".join(p for p in parts if p) or "unchanged"

    @property
    def start_height(self) -> float:
        """Height of the ground under the start (m): the downhill platform's."""
        if self.drop:
            return self.drop
        return RAMP_LENGTH * math.sin(math.radians(-self.slope)) if self.slope < 0 else 0.0


def world_model(xml: str, world: World) -> Any:
    """The compiled MjModel of a robot's MJCF with `world`'s changes."""
    spec = mujoco.MjSpec.from_string(xml)
    floor = spec.geom("floor")
    ground = [_terrain_box(spec, name, centre, half, pitch, floor)
              for name, centre, half, pitch in terrain(world)]
    if world.friction is not None:
        for geom in [floor, *ground]:
            geom.friction = [world.friction, *list(geom.friction)[1:]]
            geom.priority = 1
    if world.obstacle:
        x, y, z, hx, hy, hz = world.obstacle
        body = spec.worldbody.add_body(name=OBSTACLE, mocap=True, pos=[x, y + OBSTACLE_PARK, z])
        body.add_geom(name="terrain_obstacle", type=mujoco.mjtGeom.mjGEOM_BOX, size=[hx, hy, hz],
                      contype=floor.contype, conaffinity=floor.conaffinity, friction=list(floor.friction),
                      rgba=[0.8, 0.3, 0.2, 1.0], priority=2, solref=[OBSTACLE_SOFTNESS, 1.0])
    if world.trunk_mass_scale != 1.0:
        trunk = spec.body("trunk")
        trunk.mass *= world.trunk_mass_scale
        trunk.fullinertia = [v * world.trunk_mass_scale for v in trunk.fullinertia]
    return spec.compile()


def terrain(world: World) -> list[tuple[str, np.ndarray, np.ndarray, float]]:
    """The boxes `world` puts on the floor: (name, centre, half sizes, pitch
    in rad, > 0 rising along +x); their names start with `terrain`."""
    boxes = []
    half_w = TERRAIN_WIDTH / 2.0
    if world.step > 0:
        boxes.append(("terrain_step", np.array([world.at + STEP_DEPTH / 2, 0.0, world.step / 2]),
                      np.array([STEP_DEPTH / 2, half_w, world.step / 2]), 0.0))
    if world.drop > 0:
        length = world.at + PLATFORM_BACK
        boxes.append(("terrain_platform", np.array([world.at - length / 2, 0.0, world.drop / 2]),
                      np.array([length / 2, half_w, world.drop / 2]), 0.0))
    if world.slope != 0:
        theta = math.radians(world.slope)
        top = world.start_height
        along = np.array([math.cos(theta), 0.0, math.sin(theta)])
        normal = np.array([-math.sin(theta), 0.0, math.cos(theta)])
        centre = np.array([world.at, 0.0, top]) + along * RAMP_LENGTH / 2 - normal * TERRAIN_THICKNESS / 2
        boxes.append(("terrain_ramp", centre,
                      np.array([RAMP_LENGTH / 2, half_w, TERRAIN_THICKNESS / 2]), theta))
        if top > 0:
            length = world.at + PLATFORM_BACK
            boxes.append(("terrain_platform", np.array([world.at - length / 2, 0.0, top / 2]),
                          np.array([length / 2, half_w, top / 2]), 0.0))
    return boxes


def _terrain_box(spec: Any, name: str, centre: np.ndarray, half: np.ndarray, pitch: float,
                 floor: Any) -> Any:
    """A static box of ground: collides with the robot as the floor does."""
    # A rotation of -pitch about y tilts the box's +x end up by pitch.
    quat = [math.cos(-pitch / 2), 0.0, math.sin(-pitch / 2), 0.0]
    return spec.worldbody.add_geom(
        name=name, type=mujoco.mjtGeom.mjGEOM_BOX, pos=centre.tolist(), quat=quat, size=half.tolist(),
        contype=floor.contype, conaffinity=floor.conaffinity, friction=list(floor.friction),
        rgba=[0.62, 0.6, 0.55, 1.0])
