"""The whole quadruped as one rigid body, from the robot's own MJCF.

A config whose `sim.mjcf` points at a maker's MuJoCo model (the simulated
body, controller/sim/own_model.py) weighs the robot from that model: the
model's every body below the floating one, posed at the stand (the config's
stand angles, turned into the model's joint convention by the config's
joint map and `sim.mjcf_joints`), summed into one mass, centre of mass and
inertia about it in the trunk's frame. The physics file is then not needed
for `balance`'s body figures: the masses and inertias the simulator moves
are the ones the MPC plans with, read from the one file that holds them.

MuJoCo reads the model (its compiler turns every `diaginertia` + `quat`,
`fullinertia` or geom-inferred inertia into the same principal form), so
whatever way the maker wrote the figures, they are read as the simulator
reads them. Only the compiled model is used: nothing of the simulator's.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from controller.robot.config.reader import ConfigError

if TYPE_CHECKING:
    import mujoco

# MuJoCo is imported where a model is read, not with this module: a config
# without `sim.mjcf` loads without it (and a renderer chooses its GL backend
# before MuJoCo is first imported).


def mjcf_path(config_path: Path, sim: dict[str, Any]) -> Path | None:
    """The config's own MJCF (`sim.mjcf`, relative to the config), or None."""
    name = sim.get("mjcf") if isinstance(sim, dict) else None
    return None if name is None else (config_path.parent / str(name)).resolve()


def maker_spec(path: Path, where: str) -> tuple[Any, list[str]]:
    """The model at `path` as an MjSpec, asset directories made absolute,
    and what was left out of it: a maker's model is often shared without its
    mesh and texture files (they give its look, not its physics). A mesh
    whose file is missing is dropped with the geoms that draw it when every
    one of them is visual (no contact) on a body whose mass is written out
    (an explicit inertial); a missing texture is dropped from its materials.
    A missing mesh that collides or weighs is a ConfigError naming it."""
    import mujoco
    if not path.is_file():
        raise ConfigError(f"{where}: {path} is not a file")
    try:
        spec = mujoco.MjSpec.from_file(str(path))
    except Exception as exc:  # noqa: BLE001 - MuJoCo's parser says what is wrong
        raise ConfigError(f"{where}: {path} does not load: {exc}") from exc
    for attr in ("meshdir", "texturedir"):
        setattr(spec, attr, str((path.parent / (getattr(spec, attr) or "")).resolve()))
    left_out: list[str] = []
    for mesh in list(spec.meshes):
        if not mesh.file or (Path(spec.meshdir) / mesh.file).is_file():
            continue
        users = [g for g in spec.geoms if g.meshname == mesh.name]
        for g in users:
            if g.contype or g.conaffinity:
                raise ConfigError(f"{where}: mesh file {Path(spec.meshdir) / mesh.file} is missing and geom "
                                  f"{g.name or '(unnamed)'} of body {g.parent.name!r} collides with it: "
                                  "put the mesh file there, or give the body a primitive collision geom")
            if not g.parent.explicitinertial:
                raise ConfigError(f"{where}: mesh file {Path(spec.meshdir) / mesh.file} is missing and body "
                                  f"{g.parent.name!r} takes its mass from that mesh (no <inertial>): "
                                  "put the mesh file there")
        for g in users:
            spec.delete(g)
        spec.delete(mesh)
        left_out.append(f"mesh {mesh.file} ({len(users)} visual geom{'s' * (len(users) != 1)})" if users
                        else f"mesh {mesh.file} (unused)")
    for texture in list(spec.textures):
        if not texture.file or (Path(spec.texturedir) / texture.file).is_file():
            continue
        for material in spec.materials:
            material.textures = ["" if t == texture.name else t for t in material.textures]
        spec.delete(texture)
        left_out.append(f"texture {texture.file}")
    return spec, left_out


def compile_mjcf(path: Path, where: str) -> mujoco.MjModel:
    """The model at `path` compiled as MuJoCo reads it (mesh and texture
    directories relative to the file; missing look-only files left out, see
    maker_spec); a ConfigError saying why not."""
    spec, _ = maker_spec(path, where)
    try:
        return spec.compile()
    except Exception as exc:  # noqa: BLE001 - MuJoCo's compiler says what is wrong
        raise ConfigError(f"{where}: {path} does not load: {exc}") from exc


def mjcf_joint_names(sim: dict[str, Any], where: str, count: int | None = None) -> list[str]:
    """`sim.mjcf_joints`: the model's leg joints in the wire order
    (joint_map.wire_order), `count` of them when given, each once; a
    ConfigError saying what is wrong (`where`: the config's path)."""
    names = sim.get("mjcf_joints")
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)
            and (count is None or len(names) == count)):
        many = "" if count is None else f"{count} "
        raise ConfigError(f"{where}: sim.mjcf_joints: expected the model's {many}joint names in the wire order "
                          f"(joint_map.wire_order), got {names!r}")
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}: sim.mjcf_joints: a joint is named twice")
    return list(names)


def joint_ids(model: mujoco.MjModel, names: list[str], where: str) -> list[int]:
    """The ids of the joints `names` (sim.mjcf_joints) in `model`; a
    ConfigError naming every one the model lacks."""
    import mujoco
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name) for name in names]
    missing = [name for name, joint in zip(names, ids) if joint < 0]
    if missing:
        raise ConfigError(f"{where}: {missing} are not joints of the model (sim.mjcf_joints)")
    return ids


def floating_body(model: mujoco.MjModel, where: str) -> int:
    """The id of the body the model's one free joint carries."""
    import mujoco
    free = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    if len(free) != 1:
        raise ConfigError(f"{where}: the model needs exactly one free joint (the trunk's), it has {len(free)}")
    return int(model.jnt_bodyid[free[0]])


def subtree(model: mujoco.MjModel, body: int) -> list[int]:
    """`body` and every body below it (MuJoCo numbers a parent before its children)."""
    out = [body]
    for b in range(body + 1, model.nbody):
        if int(model.body_parentid[b]) in out:
            out.append(b)
    return out


def posed_body(model: mujoco.MjModel, wire_q: np.ndarray, joints: list[str],
               where: str) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, centre of mass and inertia about it (3x3), in the floating
    body's frame, of that body and every body below it, with the joints
    `joints` at the angles `wire_q` (the model's convention) and the others
    at their reference."""
    import mujoco
    trunk = floating_body(model, where)
    data = mujoco.MjData(model)
    for joint, angle in zip(joint_ids(model, joints, where), wire_q):
        data.qpos[model.jnt_qposadr[joint]] = angle
    mujoco.mj_kinematics(model, data)
    below = subtree(model, trunk)
    origin, turn = data.xpos[trunk].copy(), data.xmat[trunk].reshape(3, 3).T.copy()
    mass = float(sum(model.body_mass[b] for b in below))
    if mass <= 0.0:
        raise ConfigError(f"{where}: the robot's bodies weigh nothing")
    com_world = sum(model.body_mass[b] * data.xipos[b] for b in below) / mass
    inertia = np.zeros((3, 3))
    for b in below:
        rot = data.ximat[b].reshape(3, 3)
        d = data.xipos[b] - com_world
        inertia += rot @ np.diag(model.body_inertia[b]) @ rot.T
        inertia += model.body_mass[b] * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, turn @ (com_world - origin), turn @ inertia @ turn.T


def joint_damping(model: mujoco.MjModel, joints: list[str], where: str) -> np.ndarray:
    """The viscous damping (N m s/rad) the model puts on each of `joints`."""
    return np.array([float(model.dof_damping[model.jnt_dofadr[j]]) for j in joint_ids(model, joints, where)])


def end_geom(model: mujoco.MjModel, data: mujoco.MjData, joint: int) -> int | None:
    """Of the collision geoms `joint` moves (its body and the bodies below),
    the one whose centre is furthest from it in `data`'s pose: the foot of a
    leg that stands on its end (a shank's capsule centres half way down).
    None when it moves no collision geom."""
    below = set(subtree(model, int(model.jnt_bodyid[joint])))
    candidates = [g for g in range(model.ngeom) if int(model.geom_bodyid[g]) in below
                  and (model.geom_contype[g] or model.geom_conaffinity[g])]
    if not candidates:
        return None
    anchor = data.xanchor[joint]
    return max(candidates, key=lambda g: float(np.linalg.norm(data.geom_xpos[g] - anchor)))


def leg_end_slots(legs: int, order: Any) -> list[int]:
    """Per leg, the wire slot of its last joint (the one a foot found by
    end_geom hangs from): the controller's joints are leg-major, `order`
    maps each wire slot to one of them (JointMap.order)."""
    slots = [int(i) for i in order]
    per = len(slots) // legs
    return [slots.index((k + 1) * per - 1) for k in range(legs)]


def reach_below(model: mujoco.MjModel, data: mujoco.MjData, g: int) -> float:
    """How far geom g reaches below its centre in `data`'s pose (m): a
    sphere its radius, a capsule its radius and half its tilted length, any
    other shape its box's half-sizes projected on the vertical."""
    import mujoco

    size = model.geom_size[g]
    kind = model.geom_type[g]
    if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        return float(size[0])
    rot = data.geom_xmat[g].reshape(3, 3)
    if kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
        return float(size[0] + abs(rot[2, 2]) * size[1])
    return float(np.abs(rot[2]) @ size[:3])
