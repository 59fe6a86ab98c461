"""The whole quadruped as one rigid body, from its physics figures.

The MPC's body model (`balance.mass`, `balance.inertia`, `balance.com_offset`)
can be derived instead of written down: the trunk, the rotors and every
leg's three links, each placed at the stand pose by the legs' forward
kinematics, summed into one mass, one centre of mass and one inertia about
it (parallel-axis theorem). The figures come from the robot's physics file
(`config/physics/<robot>.yaml`, or the config's `sim.physics`), the one the
MuJoCo model is built from (controller/sim/model.py), so the controller and
the simulated body weigh the same robot.

Plain numpy: the controller's core does not depend on the simulator. The
legs' frames are those of controller/robot/kinematics.py and the MuJoCo
model: the abad turns about +x at the hip offset, the hip about -y at the
abad link's end (0, s l1, 0), the knee about -y at the thigh's end (0, 0, -l2).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from controller.robot.config.quadruped import Geometry
from controller.robot.config.reader import ConfigError, load_yaml
from controller.robot.config.two_leg import MassModel
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.mjcf_figures import compile_mjcf, mjcf_joint_names, mjcf_path, posed_body
from controller.robot.resources import CONFIG_DIR


@dataclass(frozen=True)
class Inertial:
    mass: float
    com: np.ndarray         # (3,) in the frame it is given in
    inertia: np.ndarray     # (3, 3) about the centre of mass

    def mirrored_y(self) -> Inertial:
        """The same link on the other side of the robot (y -> -y)."""
        m = np.diag([1.0, -1.0, 1.0])
        return Inertial(self.mass, m @ self.com, m @ self.inertia @ m)

    def mirrored_x(self) -> Inertial:
        m = np.diag([-1.0, 1.0, 1.0])
        return Inertial(self.mass, m @ self.com, m @ self.inertia @ m)

    def placed(self, position: np.ndarray, rotation: np.ndarray) -> Inertial:
        """The same part seen from a frame in which its own frame sits at
        `position`, turned by `rotation`."""
        return Inertial(self.mass, position + rotation @ self.com, rotation @ self.inertia @ rotation.T)


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


def physics_path(config_path: Path, robot: str, sim: dict[str, Any]) -> Path:
    """The robot's physics file: `sim.physics` relative to the config, else
    config/physics/<robot>.yaml (as controller/sim/model.py finds it)."""
    name = sim.get("physics") if isinstance(sim, dict) else None
    if name is not None:
        return (config_path.parent / str(name)).resolve()
    return CONFIG_DIR / "physics" / f"{robot}.yaml"


def load_figures(path: Path) -> dict[str, Any]:
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def link_inertial(data: Any, path: Path, where: str) -> Inertial:
    """One `trunk` or `links.<link>` entry of a physics file."""
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


def stand_angles(geometry: Geometry, height: float, com_x: float = 0.0) -> np.ndarray:
    """Joint angles (legs, 3) of the stand: a level body at `height` (body
    origin over the ground) with the feet under the hips, shifted back by
    `com_x`, by the legs' one inverse kinematics (controller/robot/kinematics.py).
    NaN where a leg cannot reach."""
    kin = QuadrupedKinematics(geometry)
    q, clipped = kin.inverse(kin.stance_feet(height, com_x))
    q[clipped] = np.nan
    return q


def _rot_x(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _rot_minus_y(a: float) -> np.ndarray:
    """A turn by `a` about -y: a positive angle swings -z toward +x."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])


def abad_rotor_at(hip: np.ndarray, rotors: dict[str, Any]) -> np.ndarray:
    """Where a leg's abad rotor sits in the trunk: `rotors.abad` from its hip
    (given for a front leg; a rear leg's mirrors x)."""
    toward_middle = np.array(rotors.get("abad", [0.0, 0.0, 0.0]), dtype=float)
    toward_middle[0] *= 1.0 if hip[0] > 0 else -1.0
    return np.asarray(hip, dtype=float) + toward_middle


def whole_body(figures: dict[str, Any], geometry: Geometry, q: np.ndarray, path: Path) -> Inertial:
    """The robot at joint angles q (legs, 3) as one rigid body in the body
    frame: the trunk, the abad rotors in the trunk, and per leg the abad link
    (with the hip rotor), the thigh (with the knee rotor) and the shank, the
    left legs' figures mirrored for the right legs and the abad link's for the
    rear legs, as controller/sim/model.py builds the MuJoCo model."""
    links = figures.get("links", {})
    rotors = figures.get("rotors", {}) or {}
    if not isinstance(links, dict) or not isinstance(rotors, dict):
        raise ConfigError(f"{path}: links and rotors must be mappings")
    rotor_mass = float(rotors.get("mass", 0.0))
    abad_fig = link_inertial(links.get("abad"), path, "links.abad")
    hip_fig = link_inertial(links.get("hip"), path, "links.hip")
    knee_fig = link_inertial(links.get("knee"), path, "links.knee")
    if rotor_mass:
        abad_fig = combine([abad_fig, point_mass(rotor_mass, np.array(rotors.get("hip", [0, 0, 0]), float))])
        hip_fig = combine([hip_fig, point_mass(rotor_mass, np.array(rotors.get("knee", [0, 0, 0]), float))])
    parts = [link_inertial(figures.get("trunk"), path, "trunk")]
    l1, l2 = geometry.abad_link, geometry.hip_link
    for i, hip in enumerate(geometry.hip_offsets):
        s = float(geometry.side_sign[i])
        front = hip[0] > 0
        if rotor_mass:
            parts.append(point_mass(rotor_mass, abad_rotor_at(hip, rotors)))
        abad, thigh, shank = abad_fig, hip_fig, knee_fig
        if s < 0:
            abad, thigh, shank = abad.mirrored_y(), thigh.mirrored_y(), shank.mirrored_y()
        if not front:
            abad = abad.mirrored_x()
        r_abad = _rot_x(q[i, 0])
        r_thigh = r_abad @ _rot_minus_y(q[i, 1])
        r_shank = r_thigh @ _rot_minus_y(q[i, 2])
        p_thigh = hip + r_abad @ np.array([0.0, s * l1, 0.0])
        p_shank = p_thigh + r_thigh @ np.array([0.0, 0.0, -l2])
        parts += [abad.placed(np.asarray(hip, dtype=float), r_abad),
                  thigh.placed(p_thigh, r_thigh), shank.placed(p_shank, r_shank)]
    return combine(parts)


@dataclass(frozen=True)
class BodyFigures:
    """What `balance` may take from the physics figures."""
    mass: float              # kg
    inertia: np.ndarray      # (3,) kg m^2: the diagonal of the inertia about the centre of mass
    com_offset: np.ndarray   # (3,) m from the body origin
    source: Path             # the physics file, or the robot's own MJCF


def stand_body(config_path: Path, robot: str, sim: dict[str, Any], geometry: Geometry,
               stand_height: float, stand_com_x: float, to_wire: Any = None) -> BodyFigures:
    """The whole robot standing (poses.stand_height, poses.stand_com_x): from
    its own MJCF when the config names one (`sim.mjcf`; `to_wire`, the
    config's JointMap, turns the stand angles into the model's convention),
    else from its physics file; ConfigError if there is neither or the legs
    cannot reach."""
    q = stand_angles(geometry, stand_height, stand_com_x)
    if np.isnan(q).any():
        raise ConfigError(f"{config_path}: poses.stand_height: {stand_height} m is out of the legs' reach")
    own = mjcf_path(config_path, sim)
    if own is not None:
        return _mjcf_stand(config_path, own, sim, q, to_wire)
    path = physics_path(config_path, robot, sim)
    if not path.is_file():
        raise ConfigError(f"{path}: no physics figures (the file does not exist)")
    body = whole_body(load_figures(path), geometry, q, path)
    return BodyFigures(float(body.mass), np.diag(body.inertia).copy(), body.com.copy(), path)


def _mjcf_stand(config_path: Path, own: Path, sim: dict[str, Any], q: np.ndarray, to_wire: Any) -> BodyFigures:
    """The stand's body figures from the robot's own MJCF
    (controller/robot/mjcf_figures.py)."""
    joints = mjcf_joint_names(sim, str(config_path), q.size)
    if to_wire is None:
        raise ConfigError(f"{config_path}: sim.mjcf: the joint map is needed to pose the model")
    where = f"{config_path}: sim.mjcf"
    model = compile_mjcf(own, where)
    mass, com, inertia = posed_body(model, to_wire.positions_to_wire(q.reshape(-1)), joints, where)
    return BodyFigures(mass, np.diag(inertia).copy(), com, own)


def total_mass(figures: dict[str, Any], legs: int, path: Path) -> float:
    """The mass of the trunk, `legs` legs' links and every rotor (3 a leg)."""
    links = figures.get("links", {}) or {}
    rotors = figures.get("rotors", {}) or {}
    mass = link_inertial(figures.get("trunk"), path, "trunk").mass
    for name in ("abad", "hip", "knee"):
        mass += legs * link_inertial(links.get(name), path, f"links.{name}").mass
    return mass + 3 * legs * float(rotors.get("mass", 0.0))


def figures_mass_model(figures: dict[str, Any], geometry: Geometry, path: Path) -> MassModel:
    """The two-leg stand's mass model (controller/robot/config/two_leg.py)
    of a physics file, its parts as whole_body places them: the trunk with
    the abad rotors, the abad link with the hip rotor, the thigh with the
    knee rotor (its centre taken on the thigh's line), the shank."""
    links = figures.get("links", {})
    rotors = figures.get("rotors", {}) or {}
    if not isinstance(links, dict) or not isinstance(rotors, dict):
        raise ConfigError(f"{path}: links and rotors must be mappings")
    rotor = float(rotors.get("mass", 0.0))
    trunk_parts = [link_inertial(figures.get("trunk"), path, "trunk")]
    if rotor:
        trunk_parts += [point_mass(rotor, abad_rotor_at(hip, rotors)) for hip in geometry.hip_offsets]
    trunk = combine(trunk_parts)
    thigh = link_inertial(links.get("hip"), path, "links.hip")
    if rotor:
        thigh = combine([thigh, point_mass(rotor, np.array(rotors.get("knee", [0, 0, 0]), float))])
    shank = link_inertial(links.get("knee"), path, "links.knee")
    return MassModel(trunk=float(trunk.mass), trunk_com=(float(trunk.com[0]), float(trunk.com[1]), float(trunk.com[2])),
                     abad=link_inertial(links.get("abad"), path, "links.abad").mass + rotor,
                     thigh=float(thigh.mass), thigh_at=max(0.0, -float(thigh.com[2])),
                     shank=float(shank.mass), shank_at=max(0.0, -float(shank.com[2])))
