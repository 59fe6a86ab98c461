"""The robot as a MuJoCo physics body (model: controller/sim/model.py).

Each 2 ms tick takes the kernel's joint command (position, velocity, gains,
feed-forward torque) and runs the motor law as a motor driver does, at every
0.5 ms physics step: tau = tau_ff + kp (q_des - q) + kd (qd_des - qd),
clipped to the joint's torque limit. The command's gains act from the tick
they arrive. The controller sees only joint_state (measured angles, speeds
and torques); the base pose, velocity and contacts are ground truth for
tests and tools (`truth()`), never for the controller.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from controller import msgs
from controller.robot.config import Config
from controller.sim.model import robot_mjcf

DROP_MARGIN = 0.002   # m: the robot starts this far above the floor


@dataclass(frozen=True)
class Truth:
    """Ground truth of the physics body, for tests and tools."""
    position: np.ndarray          # base origin in the world (m)
    quaternion: np.ndarray        # base orientation, w x y z
    velocity: np.ndarray          # base linear velocity in the world (m/s)
    angular_velocity: np.ndarray  # base angular velocity in the base frame (rad/s)
    contacts: frozenset[str]      # robot geoms touching the floor

    @property
    def rpy(self) -> tuple[float, float, float]:
        w, x, y, z = self.quaternion
        roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
        pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
        yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        return float(roll), float(pitch), float(yaw)


class PhysicsRobot:
    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.model = mujoco.MjModel.from_xml_string(robot_mjcf(cfg))
        self.data = mujoco.MjData(self.model)
        ticks = cfg.dt / self.model.opt.timestep
        if abs(ticks - round(ticks)) > 1e-9:
            raise ValueError(f"{cfg.path}: tick {cfg.dt} s is not a multiple of the physics "
                             f"step {self.model.opt.timestep} s")
        self.substeps = int(round(ticks))
        ids = [self.model.joint(n).id for n in cfg.joint_names]
        self.qadr = np.array([self.model.jnt_qposadr[i] for i in ids])
        self.vadr = np.array([self.model.jnt_dofadr[i] for i in ids])
        self.act = np.array([self.model.actuator(n).id for n in cfg.joint_names])
        self.limit = cfg.torque_limit.astype(float)
        self.floor = self.model.geom("floor").id
        pose = cfg.sim.get("start_pose", "fold")
        start = cfg.poses.get(pose)
        if start is None:
            raise ValueError(f"{cfg.path}: sim.start_pose: {pose!r} is not one of the "
                             f"poses {sorted(cfg.poses)}")
        self._place(start)
        self.tau = np.zeros(cfg.num_joints)
        self.battery_voltage = float(cfg.sim.get("battery_voltage", 25.2))
        self.msg = msgs.joint_state_t()
        self.msg.num_joints = cfg.num_joints

    def _place(self, q: np.ndarray) -> None:
        """Joints at q, the base level and just above the floor."""
        d = self.data
        d.qpos[:] = 0.0
        d.qpos[3] = 1.0
        d.qpos[self.qadr] = q
        mujoco.mj_kinematics(self.model, d)
        lowest = min(float(d.geom_xpos[g][2] - self._extent(g)) for g in range(self.model.ngeom)
                     if g != self.floor)
        d.qpos[2] -= lowest - DROP_MARGIN
        d.qvel[:] = 0.0
        mujoco.mj_forward(self.model, d)

    def _extent(self, g: int) -> float:
        """How far geom g reaches below its centre (upright base)."""
        m = self.model
        size = m.geom_size[g]
        kind = m.geom_type[g]
        if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
            return float(size[0])
        if kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
            axis = self.data.geom_xmat[g].reshape(3, 3)[:, 2]
            return float(size[0] + abs(axis[2]) * size[1])
        rot = self.data.geom_xmat[g].reshape(3, 3)
        return float(np.abs(rot[2]) @ size[:3])

    @property
    def q(self) -> np.ndarray:
        return self.data.qpos[self.qadr].copy()

    @property
    def qd(self) -> np.ndarray:
        return self.data.qvel[self.vadr].copy()

    def step(self, q_des: np.ndarray, qd_des: np.ndarray, kp: np.ndarray, kd: np.ndarray,
             tau_ff: np.ndarray, dt: float) -> None:
        """One controller tick of physics under the given joint command."""
        if abs(dt - self.cfg.dt) > 1e-12:
            raise ValueError(f"physics runs at the config's tick {self.cfg.dt} s, not {dt} s")
        m, d = self.model, self.data
        ctrl = np.zeros(m.nu)
        for _ in range(self.substeps):
            q = d.qpos[self.qadr]
            qd = d.qvel[self.vadr]
            tau = np.clip(tau_ff + kp * (q_des - q) + kd * (qd_des - qd), -self.limit, self.limit)
            ctrl[self.act] = tau
            d.ctrl[:] = ctrl
            mujoco.mj_step(m, d)
        self.tau = tau

    def joint_state(self, utime: int) -> bytes:
        msg = self.msg
        msg.utime = utime
        msg.position = self.q.tolist()
        msg.velocity = self.qd.tolist()
        msg.torque = self.tau.tolist()
        msg.battery_voltage = self.battery_voltage
        return msg.encode()

    def truth(self) -> Truth:
        d, m = self.data, self.model
        touching = set()
        for c in d.contact[:d.ncon]:
            for g, other in ((c.geom1, c.geom2), (c.geom2, c.geom1)):
                if other == self.floor and g != self.floor:
                    touching.add(m.geom(g).name)
        return Truth(d.qpos[0:3].copy(), d.qpos[3:7].copy(), d.qvel[0:3].copy(),
                     d.qvel[3:6].copy(), frozenset(touching))
