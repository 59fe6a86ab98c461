"""The robot's MuJoCo model as Foxglove scene primitives, and its pose as
frame transforms (used by controller/service/foxglove_feed.py).

Every body of the model is a frame named after it; its geoms are one scene
entity in that frame, sent once (and again for viewers that join later),
with the model's own sizes and colours. Each pose then only moves the frames:
`mj_kinematics` on the posed model gives every body's place in the world.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from foxglove import messages as fm

from controller.robot.config import Config
from controller.sim.mjcf import robot_mjcf
from controller.sim.own_model import model_joints

WORLD = "world"


def stamp(ns: int) -> fm.Timestamp:
    """A nanosecond time as Foxglove's timestamp, exactly."""
    return fm.Timestamp(int(ns) // 1_000_000_000, int(ns) % 1_000_000_000)


def _quat(quat_wxyz: np.ndarray) -> fm.Quaternion:
    return fm.Quaternion(x=float(quat_wxyz[1]), y=float(quat_wxyz[2]),
                         z=float(quat_wxyz[3]), w=float(quat_wxyz[0]))


def _pose(pos: np.ndarray, quat_wxyz: np.ndarray) -> fm.Pose:
    return fm.Pose(position=_vec(pos), orientation=_quat(quat_wxyz))


def _color(rgba: np.ndarray) -> fm.Color:
    return fm.Color(r=float(rgba[0]), g=float(rgba[1]), b=float(rgba[2]), a=float(rgba[3]))


def rpy_to_quat(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Z-Y-X Euler angles (the odometry's rpy) as a w x y z quaternion."""
    cr, sr = np.cos(roll / 2), np.sin(roll / 2)
    cp, sp = np.cos(pitch / 2), np.sin(pitch / 2)
    cy, sy = np.cos(yaw / 2), np.sin(yaw / 2)
    return np.array([cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
                     cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy])


@dataclass
class Primitives:
    """One body's geoms, by Foxglove primitive kind."""
    cubes: list[fm.CubePrimitive]
    spheres: list[fm.SpherePrimitive]
    cylinders: list[fm.CylinderPrimitive]
    triangles: list[fm.TriangleListPrimitive]

    def empty(self) -> bool:
        return not (self.cubes or self.spheres or self.cylinders or self.triangles)


class Scene:
    """The robot's model, posed on demand in the controller's joint convention."""

    def __init__(self, cfg: Config) -> None:
        self.model = mujoco.MjModel.from_xml_string(robot_mjcf(cfg))
        self.data = mujoco.MjData(self.model)
        names, self.model_map = model_joints(cfg)
        self.qadr = np.array([self.model.jnt_qposadr[self.model.joint(n).id] for n in names])
        self.bodies = [self.model.body(b).name or f"body{b}" for b in range(self.model.nbody)]
        self.geom_names = {self.model.geom(g).name: g for g in range(self.model.ngeom)
                           if self.model.geom(g).name}
        self.pose_default()

    def pose_default(self) -> None:
        """The model's own reference pose (before any state is heard)."""
        self.data.qpos[:] = self.model.qpos0
        mujoco.mj_kinematics(self.model, self.data)

    def entities(self, timestamp_ns: int) -> fm.SceneUpdate:
        """Every robot body's geoms as a scene entity locked to the body's frame."""
        when = stamp(timestamp_ns)
        entities = []
        for b in range(1, self.model.nbody):            # body 0 is the world: the floor
            prims = self._primitives(b)
            if prims.empty():
                continue
            entities.append(fm.SceneEntity(
                timestamp=when, frame_id=self.bodies[b], id=f"robot/{self.bodies[b]}",
                frame_locked=True, cubes=prims.cubes, spheres=prims.spheres,
                cylinders=prims.cylinders, triangles=prims.triangles))
        return fm.SceneUpdate(entities=entities)

    def _primitives(self, body: int) -> Primitives:
        m = self.model
        out = Primitives([], [], [], [])
        for g in np.flatnonzero(m.geom_bodyid == body):
            rgba = m.mat_rgba[m.geom_matid[g]] if m.geom_matid[g] >= 0 else m.geom_rgba[g]
            if rgba[3] == 0:
                continue                                 # invisible: a collision-only helper
            pose, color, size = _pose(m.geom_pos[g], m.geom_quat[g]), _color(rgba), m.geom_size[g]
            kind = mujoco.mjtGeom(int(m.geom_type[g]))
            if kind == mujoco.mjtGeom.mjGEOM_BOX:
                out.cubes.append(fm.CubePrimitive(pose=pose, color=color, size=fm.Vector3(
                    x=2 * float(size[0]), y=2 * float(size[1]), z=2 * float(size[2]))))
            elif kind in (mujoco.mjtGeom.mjGEOM_SPHERE, mujoco.mjtGeom.mjGEOM_ELLIPSOID):
                radii = size if kind == mujoco.mjtGeom.mjGEOM_ELLIPSOID else [size[0]] * 3
                out.spheres.append(fm.SpherePrimitive(pose=pose, color=color, size=fm.Vector3(
                    x=2 * float(radii[0]), y=2 * float(radii[1]), z=2 * float(radii[2]))))
            elif kind in (mujoco.mjtGeom.mjGEOM_CYLINDER, mujoco.mjtGeom.mjGEOM_CAPSULE):
                d, h = 2 * float(size[0]), 2 * float(size[1])
                out.cylinders.append(fm.CylinderPrimitive(
                    pose=pose, color=color, size=fm.Vector3(x=d, y=d, z=h), bottom_scale=1.0, top_scale=1.0))
                if kind == mujoco.mjtGeom.mjGEOM_CAPSULE:   # a cylinder with a ball at each end
                    axis = _rotate(m.geom_quat[g], np.array([0.0, 0.0, size[1]]))
                    for end in (m.geom_pos[g] + axis, m.geom_pos[g] - axis):
                        out.spheres.append(fm.SpherePrimitive(
                            pose=_pose(end, m.geom_quat[g]), color=color, size=fm.Vector3(x=d, y=d, z=d)))
            elif kind == mujoco.mjtGeom.mjGEOM_MESH:
                out.triangles.append(self._mesh(int(m.geom_dataid[g]), pose, color))
        return out

    def _mesh(self, mesh: int, pose: fm.Pose, color: fm.Color) -> fm.TriangleListPrimitive:
        m = self.model
        v0, nv = m.mesh_vertadr[mesh], m.mesh_vertnum[mesh]
        f0, nf = m.mesh_faceadr[mesh], m.mesh_facenum[mesh]
        verts = m.mesh_vert[v0:v0 + nv]
        faces = m.mesh_face[f0:f0 + nf].reshape(-1)
        points = [fm.Point3(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in verts[faces]]
        return fm.TriangleListPrimitive(pose=pose, color=color, points=points)

    def pose(self, position: np.ndarray, quaternion_wxyz: np.ndarray, q: np.ndarray) -> None:
        """Pose the model: the base in the world, the joints in the controller's convention."""
        self.data.qpos[0:3] = position
        self.data.qpos[3:7] = quaternion_wxyz
        self.data.qpos[self.qadr] = self.model_map.positions_to_wire(np.asarray(q, dtype=float))
        mujoco.mj_kinematics(self.model, self.data)

    def transforms(self, timestamp_ns: int) -> fm.FrameTransforms:
        """Every robot body's frame in the world, as last posed."""
        when = stamp(timestamp_ns)
        return fm.FrameTransforms(transforms=[
            fm.FrameTransform(timestamp=when, parent_frame_id=WORLD, child_frame_id=self.bodies[b],
                              translation=_vec(self.data.xpos[b]), rotation=_quat(self.data.xquat[b]))
            for b in range(1, self.model.nbody)])

    def geom_positions(self, names: list[str]) -> list[np.ndarray]:
        """The world positions of the named geoms (unknown names are skipped)."""
        return [self.data.geom_xpos[self.geom_names[n]].copy() for n in names if n in self.geom_names]


def _vec(p: np.ndarray) -> fm.Vector3:
    return fm.Vector3(x=float(p[0]), y=float(p[1]), z=float(p[2]))


def _rotate(quat_wxyz: np.ndarray, v: np.ndarray) -> np.ndarray:
    out = np.zeros(3)
    mujoco.mju_rotVecQuat(out, v, np.asarray(quat_wxyz, dtype=float))
    return out
