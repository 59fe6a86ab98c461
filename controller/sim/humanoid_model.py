"""The MuJoCo model of a humanoid, generated from its config at load
(controller/sim/model.py does the quadruped; this is the same idea for kind
`humanoid`).

From the config: the leg chain (hip offsets, thigh, shank, ankle height),
the joint names, limits and torque limits. The legs are built exactly as
controller/robot/humanoid_kinematics.py computes them, so MuJoCo's sole sites
are where the controller's forward kinematics puts the soles:

    trunk -> hip_yaw (z, at the hip centre) -> hip_roll (x) -> hip_pitch (y)
    -> thigh -> knee (y) -> shank -> ankle_pitch (y) -> ankle_roll (x)
    -> ankle_height along the foot's -z -> sole

both legs with the same axes (the config's joint signs are not mirrored).
The trunk body's origin is the controller's torso frame: midway between the
hip centres, x forward, y left, z up.

From the robot's physics file (config/physics/<robot>.yaml): link masses,
centres of mass and inertias, collision sizes, joint armature / damping /
dry friction per actuator type, and what the controller has no kinematics
for: the arm and head chains (joint positions and axes). One optional leg
entry overrides the controller's kinematics: `legs.hip_yaw_axis`, for a
robot whose first leg joint is not about the vertical (NAO's hip yaw-pitch).

The physics file's schema (lengths in m, masses in kg, inertias about the
centre of mass in kg m^2 as [xx, yy, zz, xy, xz, yz]; a link is either
{mass, com, inertia}, {mass, com, box: [full sizes]} -- the inertia of a
solid box of that mass -- or {parts: [link, ...]}, combined):

    trunk:     link + shell_size, shell_center (the collision box), imu (site)
    legs:      links: {hip_yaw, hip_roll, thigh, shank, ankle, foot} of the
               LEFT leg, each in the frame after its joint (hip_yaw, hip_roll,
               thigh at the hip centre, shank at the knee axis, ankle and foot
               at the ankle axes); the right leg mirrors y.
               thigh_radius, shank_radius (capsules), foot_thickness,
               foot_center [x, y] (the foot box's centre under the ankle, left
               foot), optional hip_yaw_axis {left: [x, y, z], right: [x, y, z]}.
    arm:       chain of the LEFT arm: [{joint, pos, axis, link, geoms}] with
               joint the config's name without its side prefix, pos in the
               parent body's frame (the trunk for the first), geoms
               [{name, type: capsule|sphere|box, fromto | pos, size}]; the
               right arm mirrors y (same axes: the config's signs are not mirrored).
    head:      chain as for the arm, not mirrored.
    actuators: name -> {armature, damping, frictionloss, joints: [names
               without side prefix]}; every joint in exactly one.
    contact:   friction (floor and robot).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np

from controller.robot.config import Config, ConfigError
from controller.robot.humanoid_kinematics import LEG_SIDES, HumanoidGeometry
from controller.sim.model import (
    Inertial,
    _inertial,
    _inertial_xml,
    _vec,
    combine,
    mjcf_document,
)

# The body each leg joint moves (humanoid_kinematics.LEG_JOINTS order) and the joint's axis, as
# humanoid_kinematics.forward has them.
LEG_LINKS = ("hip_yaw", "hip_roll", "thigh", "shank", "ankle", "foot")
LEG_AXES = ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0),
            (0.0, 1.0, 0.0), (1.0, 0.0, 0.0))
ARM_GROUPS = {"left_arm": ("left", False), "right_arm": ("right", True)}   # side, mirrored
MIRROR_Y = np.array([1.0, -1.0, 1.0])


def box_inertial(mass: float, com: np.ndarray, size: np.ndarray) -> Inertial:
    """A solid box of `mass` and full sizes `size`, centred on `com`."""
    x, y, z = np.asarray(size, dtype=float)
    return Inertial(mass, np.asarray(com, dtype=float),
                    mass / 12.0 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y]))


def link_inertial(data: Any, path: Path, where: str) -> Inertial:
    """A link of the physics file: {mass, com, inertia}, {mass, com, box} or
    {parts: [...]} (combined with the parallel-axis theorem)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: {where}: expected a mapping")
    if "parts" in data:
        parts = data["parts"]
        if not isinstance(parts, list) or not parts:
            raise ConfigError(f"{path}: {where}.parts: expected a non-empty list")
        return combine([link_inertial(p, path, f"{where}.parts[{k}]") for k, p in enumerate(parts)])
    if "box" in data:
        try:
            mass = float(data["mass"])
            com = np.array(data["com"], dtype=float).reshape(3)
            size = np.array(data["box"], dtype=float).reshape(3)
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{path}: {where}: expected mass, com [3] and box [3] ({exc})") from exc
        if mass <= 0 or (size <= 0).any():
            raise ConfigError(f"{path}: {where}: mass and box sizes must be positive")
        return box_inertial(mass, com, size)
    return _inertial(data, path, where)


def _number(data: dict[str, Any], key: str, path: Path, where: str, default: float | None = None) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
        raise ConfigError(f"{path}: {where}.{key}: expected a non-negative number, got {value!r}")
    return float(value)


def _vector(value: Any, n: int, path: Path, where: str) -> np.ndarray:
    try:
        out = np.array(value, dtype=float).reshape(n)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: {where}: expected [{n} numbers], got {value!r}") from exc
    if not np.isfinite(out).all():
        raise ConfigError(f"{path}: {where}: expected finite numbers, got {value!r}")
    return out


def _unit(value: Any, path: Path, where: str) -> np.ndarray:
    axis = _vector(value, 3, path, where)
    norm = float(np.linalg.norm(axis))
    if norm < 1e-9:
        raise ConfigError(f"{path}: {where}: a joint axis must not be zero")
    return axis / norm


def _geom_xml(spec: Any, name: str, mirrored: bool, path: Path, where: str) -> str:
    """One collision geom of a chain link, mirrored in y for the right side."""
    if not isinstance(spec, dict):
        raise ConfigError(f"{path}: {where}: expected a mapping")
    kind = spec.get("type")
    flip = MIRROR_Y if mirrored else np.ones(3)
    if kind == "capsule":
        ends = _vector(spec.get("fromto"), 6, path, f"{where}.fromto")
        place = f'fromto="{_vec(np.concatenate([ends[:3] * flip, ends[3:] * flip]))}"'
        size = _vector(spec.get("size"), 1, path, f"{where}.size")
    elif kind in ("sphere", "box"):
        place = f'pos="{_vec(_vector(spec.get("pos", [0, 0, 0]), 3, path, f"{where}.pos") * flip)}"'
        size = _vector(spec.get("size"), 1 if kind == "sphere" else 3, path, f"{where}.size")
    else:
        raise ConfigError(f"{path}: {where}.type: expected capsule, sphere or box, got {kind!r}")
    if (size <= 0).any():
        raise ConfigError(f"{path}: {where}.size: must be positive")
    return f'<geom name={quoteattr(name)} type="{kind}" {place} size="{_vec(size)}" class="robot"/>'


class _Builder:
    """Collects what the MJCF needs from the config and the physics file."""

    def __init__(self, cfg: Config, figures: dict[str, Any], path: Path) -> None:
        self.cfg, self.figures, self.path = cfg, figures, path
        self.index = {name: k for k, name in enumerate(cfg.joint_names)}
        self.joint_class = self._actuator_classes()

    # -- joints ------------------------------------------------------------------------
    def _actuator_classes(self) -> dict[str, str]:
        acts = self.figures.get("actuators")
        if not isinstance(acts, dict) or not acts:
            raise ConfigError(f"{self.path}: actuators: expected name -> {{armature, damping, "
                              "frictionloss, joints}}")
        owner: dict[str, str] = {}
        for cls, spec in acts.items():
            joints = spec.get("joints") if isinstance(spec, dict) else None
            if not isinstance(joints, list) or not joints:
                raise ConfigError(f"{self.path}: actuators.{cls}.joints: expected a list of joint names")
            for name in self.cfg.joint_names:
                if any(name == j or name.endswith("_" + str(j)) for j in joints):
                    if name in owner:
                        raise ConfigError(f"{self.path}: actuators: joint {name} is in both "
                                          f"{owner[name]} and {cls}")
                    owner[name] = str(cls)
        missing = [n for n in self.cfg.joint_names if n not in owner]
        if missing:
            raise ConfigError(f"{self.path}: actuators: no actuator type for joints {missing}")
        return owner

    def defaults_xml(self) -> str:
        out = []
        for cls, spec in self.figures["actuators"].items():
            where = f"actuators.{cls}"
            out.append(
                f'    <default class={quoteattr("act_" + str(cls))}>\n'
                f'      <joint armature="{_number(spec, "armature", self.path, where):.9g}" '
                f'damping="{_number(spec, "damping", self.path, where):.9g}" '
                f'frictionloss="{_number(spec, "frictionloss", self.path, where):.9g}"/>\n'
                f'    </default>')
        return "\n".join(out)

    def joint_xml(self, name: str, axis: np.ndarray) -> str:
        k = self.index[name]
        return (f'<joint name={quoteattr(name)} class={quoteattr("act_" + self.joint_class[name])} '
                f'axis="{_vec(axis)}" range="{self.cfg.q_min[k]:.9g} {self.cfg.q_max[k]:.9g}"/>')

    # -- bodies ------------------------------------------------------------------------
    def trunk(self) -> tuple[Inertial, str, np.ndarray]:
        fig = self.figures.get("trunk")
        if not isinstance(fig, dict):
            raise ConfigError(f"{self.path}: trunk: expected a mapping")
        inertial = link_inertial(fig, self.path, "trunk")
        half = _vector(fig.get("shell_size"), 3, self.path, "trunk.shell_size") / 2.0
        centre = _vector(fig.get("shell_center", [0, 0, 0]), 3, self.path, "trunk.shell_center")
        shell = f'<geom name="trunk_shell" type="box" pos="{_vec(centre)}" size="{_vec(half)}" class="robot"/>'
        imu = _vector(fig.get("imu", [0, 0, 0]), 3, self.path, "trunk.imu")
        return inertial, shell, imu

    def leg(self, i: int, side: str, pad: str) -> str:
        geo = self.cfg.geometry
        assert isinstance(geo, HumanoidGeometry)
        fig = self.figures.get("legs")
        if not isinstance(fig, dict) or not isinstance(fig.get("links"), dict):
            raise ConfigError(f"{self.path}: legs.links: expected {{{', '.join(LEG_LINKS)}}}")
        mirrored = side == "right"
        links = []
        for link in LEG_LINKS:
            inertial = link_inertial(fig["links"].get(link), self.path, f"legs.links.{link}")
            links.append(inertial.mirrored_y() if mirrored else inertial)
        names = [self.cfg.joint_names[int(k)] for k in self.cfg.leg_indices[6 * i:6 * i + 6]]
        axes = [np.array(a) for a in LEG_AXES]
        yaw_axes = fig.get("hip_yaw_axis")
        if yaw_axes is not None:
            if not isinstance(yaw_axes, dict) or side not in yaw_axes:
                raise ConfigError(f"{self.path}: legs.hip_yaw_axis: expected {{left: [x, y, z], "
                                  "right: [x, y, z]}")
            axes[0] = _unit(yaw_axes[side], self.path, f"legs.hip_yaw_axis.{side}")
        r_thigh = _number(fig, "thigh_radius", self.path, "legs")
        r_shank = _number(fig, "shank_radius", self.path, "legs")
        thick = _number(fig, "foot_thickness", self.path, "legs")
        centre = _vector(fig.get("foot_center", [0, 0]), 2, self.path, "legs.foot_center")
        if mirrored:
            centre = centre * np.array([1.0, -1.0])
        h = geo.ankle_height
        if thick <= 0 or thick > h or r_thigh <= 0 or r_shank <= 0:
            raise ConfigError(f"{self.path}: legs: thigh_radius and shank_radius must be positive, "
                              "foot_thickness in (0, ankle_height]")
        foot_pos = np.array([centre[0], centre[1], -h + thick / 2.0])
        foot_half = np.array([geo.foot_length / 2.0, geo.foot_width / 2.0, thick / 2.0])
        hip = np.array(geo.hip_offset[side])
        positions = [hip, np.zeros(3), np.zeros(3), np.array([0.0, 0.0, -geo.thigh]),
                     np.array([0.0, 0.0, -geo.shank]), np.zeros(3)]
        extra = {
            "thigh": [f'<geom name="{side}_thigh" type="capsule" fromto="0 0 0 0 0 {-geo.thigh:.9g}" '
                      f'size="{r_thigh:.9g}" class="robot"/>'],
            "shank": [f'<geom name="{side}_shank" type="capsule" fromto="0 0 0 0 0 {-geo.shank:.9g}" '
                      f'size="{r_shank:.9g}" class="robot"/>'],
            "foot": [f'<geom name="{side}_foot" type="box" pos="{_vec(foot_pos)}" size="{_vec(foot_half)}" '
                     f'class="robot"/>',
                     f'<site name="{side}_sole" pos="0 0 {-h:.9g}"/>'],
        }
        bodies = [(f"{side}_{link}", positions[j], self.joint_xml(names[j], axes[j]), links[j],
                   extra.get(link, [])) for j, link in enumerate(LEG_LINKS)]
        return _nest(bodies, pad)

    def chain(self, group: str, key: str, side: str | None, mirrored: bool, pad: str) -> str:
        """An arm or the head: the physics file's chain on the config's joints."""
        spec = self.figures.get(key)
        if not isinstance(spec, list) or not spec:
            raise ConfigError(f"{self.path}: {key}: expected a list of {{joint, pos, axis, link, geoms}}")
        names = [self.cfg.joint_names[k] for k in self.cfg.limbs[group]]
        if len(names) != len(spec):
            raise ConfigError(f"{self.path}: {key}: {len(spec)} joints, the config's {group} has "
                              f"{len(names)}: {' '.join(names)}")
        flip = MIRROR_Y if mirrored else np.ones(3)
        bodies = []
        for j, (name, entry) in enumerate(zip(names, spec)):
            where = f"{key}[{j}]"
            if not isinstance(entry, dict):
                raise ConfigError(f"{self.path}: {where}: expected a mapping")
            base = str(entry.get("joint"))
            if name != base and not name.endswith("_" + base):
                raise ConfigError(f"{self.path}: {where}.joint: {base!r} is not the config's {name}")
            inertial = link_inertial(entry.get("link"), self.path, f"{where}.link")
            geoms = entry.get("geoms", [])
            if not isinstance(geoms, list):
                raise ConfigError(f"{self.path}: {where}.geoms: expected a list")
            prefix = f"{side}_" if side else ""
            xml = []
            for n, g in enumerate(geoms):
                label = g.get("name", f"{base}_{n}") if isinstance(g, dict) else ""
                xml.append(_geom_xml(g, f"{prefix}{label}", mirrored, self.path, f"{where}.geoms[{n}]"))
            bodies.append((name, _vector(entry.get("pos"), 3, self.path, f"{where}.pos") * flip,
                           self.joint_xml(name, _unit(entry.get("axis"), self.path, f"{where}.axis")),
                           inertial.mirrored_y() if mirrored else inertial, xml))
        return _nest(bodies, pad)


def _nest(bodies: list[tuple[str, np.ndarray, str, Inertial, list[str]]], pad: str) -> str:
    """Bodies each the child of the one before: (name, pos in the parent,
    joint xml, inertial, geoms and sites)."""
    opening, closing = [], []
    for depth, (name, pos, joint, inertial, extra) in enumerate(bodies):
        p = pad + "  " * depth
        inner = "\n".join(f"{p}  {x}" for x in [_inertial_xml(inertial), joint, *extra])
        opening.append(f"{p}<body name={quoteattr(name)} pos=\"{_vec(pos)}\">\n{inner}")
        closing.append(f"{p}</body>")
    return "\n".join(opening + closing[::-1])


def humanoid_mjcf(cfg: Config, figures: dict[str, Any], path: Path) -> str:
    """MJCF of a humanoid: the trunk on a free joint, two 6-joint legs as the
    controller's kinematics has them (sole sites `<side>_sole`), the arms and
    head from the physics file, one motor per config joint (named as the
    joint, its force range the torque limit), an imu site with the quadruped
    model's three sensors, and the floor."""
    if not isinstance(cfg.geometry, HumanoidGeometry):
        raise ConfigError(f"{cfg.path}: kind {cfg.kind!r}: not a humanoid")
    b = _Builder(cfg, figures, path)
    trunk, shell, imu = b.trunk()
    contact = figures.get("contact", {})
    friction = _number(contact if isinstance(contact, dict) else {}, "friction", path, "contact", 0.6)
    pad = " " * 6
    limbs = [b.leg(i, side, pad) for i, side in enumerate(LEG_SIDES)]
    for group in cfg.limbs:
        if group in ("right_leg", "left_leg"):
            continue
        if group in ARM_GROUPS:
            side, mirrored = ARM_GROUPS[group]
            limbs.append(b.chain(group, "arm", side, mirrored, pad))
        elif group == "head":
            limbs.append(b.chain(group, "head", None, False, pad))
        else:
            raise ConfigError(f"{path}: the config's joint group {group!r} has no model "
                              "(right_leg, left_leg, right_arm, left_arm, head)")
    body = "\n".join(limbs)
    trunk_xml = f"""{_inertial_xml(trunk)}
      {shell}
      <site name="imu" pos="{_vec(imu)}"/>
{body}"""
    return mjcf_document(cfg, friction, b.defaults_xml(), trunk_xml)
