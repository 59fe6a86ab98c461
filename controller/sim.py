"""The built-in simulated robot: every joint follows its command through the
motor law tau = tau_ff + kp (q_des - q) + kd (qd_des - qd), torque-limited,
driving a rigid joint inertia with viscous friction.

The body's weight rests on the feet while the body is above its resting
height (belly clear of the ground). The feet within CONTACT_BAND of the
lowest one share it equally (a lifted swing foot carries nothing); the force
reaches the joints through the leg Jacobian. So an unpowered robot sags onto
its belly, a standing one has to hold itself up, and a trotting one loads
each diagonal pair in turn. The body itself does not move in the world: the
sim is for joints, and odometry integrates the commanded (limited) velocity.
"""
from __future__ import annotations

import numpy as np

from controller import msgs
from controller.config import Config
from controller.kinematics import QuadrupedKinematics

GRAVITY = 9.81
SUBSTEPS = 4
LOAD_BLEND = 0.02  # m over which the load moves from belly to feet
CONTACT_BAND = 0.005  # m: feet this close to the lowest one touch the ground


class SimRobot:
    def __init__(self, cfg: Config, kin: QuadrupedKinematics) -> None:
        self.cfg = cfg
        self.kin = kin
        sim = cfg.sim
        pose = sim.get("start_pose", "fold")
        start = {"fold": cfg.fold_pose, "lie": cfg.lie_pose}.get(pose)
        if start is None:
            raise ValueError(f"{cfg.path}: sim.start_pose: {pose!r} is not 'fold' or 'lie'")
        self.q = start.copy()
        self.qd = np.zeros(cfg.num_joints)
        self.tau = np.zeros(cfg.num_joints)
        self.inertia = float(sim.get("joint_inertia", 0.02))
        self.friction = float(sim.get("joint_friction", 0.05))
        self.rest_height = float(sim.get("rest_height", 0.10))
        # A bridge may report the battery; the sim reports a settable value.
        self.battery_voltage = float(sim.get("battery_voltage", 25.2))
        self.msg = msgs.joint_state_t()
        self.msg.num_joints = cfg.num_joints

    def _load_torque(self) -> np.ndarray:
        legs = len(self.cfg.legs)
        q = self.q.reshape(legs, 3)
        height = self.kin.body_height(q)
        share = np.clip((height - self.rest_height) / LOAD_BLEND, 0.0, 1.0)
        if share <= 0.0:
            return np.zeros_like(self.q)
        z = self.kin.forward(q)[:, 2]
        down = z <= z.min() + CONTACT_BAND
        force = np.zeros((legs, 3))
        force[down, 2] = share * self.cfg.geometry.mass * GRAVITY / down.sum()
        jac = self.kin.jacobian(q)
        return np.einsum("lji,lj->li", jac, force).reshape(-1)

    def step(self, q_des: np.ndarray, qd_des: np.ndarray, kp: np.ndarray, kd: np.ndarray,
             tau_ff: np.ndarray, dt: float) -> None:
        h = dt / SUBSTEPS
        limit = self.cfg.torque_limit
        load = self._load_torque()
        for _ in range(SUBSTEPS):
            tau = tau_ff + kp * (q_des - self.q) + kd * (qd_des - self.qd)
            tau = np.clip(tau, -limit, limit)
            acc = (tau + load - self.friction * self.qd) / self.inertia
            self.qd += acc * h
            self.q += self.qd * h
            # Hard stops at the joint limits.
            low, high = self.q < self.cfg.q_min, self.q > self.cfg.q_max
            self.q = np.clip(self.q, self.cfg.q_min, self.cfg.q_max)
            self.qd[low | high] = 0.0
        self.tau = tau

    def joint_state(self, utime: int) -> bytes:
        m = self.msg
        m.utime = utime
        m.position = self.q.tolist()
        m.velocity = self.qd.tolist()
        m.torque = self.tau.tolist()
        m.battery_voltage = self.battery_voltage
        return m.encode()
