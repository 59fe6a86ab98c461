"""The built-in simulated robot: every joint follows its command through the
motor law tau = tau_ff + kp (q_des - q) + kd (qd_des - qd), limited to the
joint's torque limit, driving a rigid joint inertia with viscous friction.

The body's weight rests on the feet while the body is above its resting
height (belly, or a humanoid's seat, clear of the ground). The feet within
CONTACT_BAND of the lowest one share it equally (a lifted swing foot carries
nothing); the force reaches the leg joints through the foot Jacobian. So an
unpowered robot sags onto its belly or seat, a standing one has to hold
itself up, and a walking one loads its stance feet in turn. The body itself
does not move in the world: the sim is for joints, and odometry integrates
the commanded (limited) velocity. The load is vertical in the body frame:
a humanoid's walking lean (0.1 rad) and its balance are not modelled, and
its arms and head carry no weight.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from controller.robot.config import Config
from controller.robot.humanoid_kinematics import LEG_SIDES, HumanoidLegKinematics
from controller.robot.kinematics import QuadrupedKinematics
from controller.sim.bridge import WireBridge

GRAVITY = 9.81
SUBSTEPS = 4
LOAD_BLEND = 0.02  # m over which the load moves from belly to feet
CONTACT_BAND = 0.005  # m: feet this close to the lowest one touch the ground

# (body height, foot heights (legs,), foot Jacobians (legs, 3, joints per leg))
# from the leg joint angles (the config's leg_indices, in the leg IK's order).
Support = tuple[float, np.ndarray, np.ndarray]


def _quadruped_support(kin: QuadrupedKinematics, q_legs: np.ndarray) -> Support:
    legs = q_legs.reshape(4, 3)
    z = kin.forward(legs)[:, 2]
    return kin.height_over(z), z, kin.jacobian(legs)


def _humanoid_support(kin: HumanoidLegKinematics, q_legs: np.ndarray) -> Support:
    legs = q_legs.reshape(2, 6)
    (right, jr), (left, jl) = (kin.sole_jacobian(legs[i], side) for i, side in enumerate(LEG_SIDES))
    z = np.array([right[2], left[2]])
    return float(-z.min()), z, np.stack([jr, jl])


class SimRobot:
    def __init__(self, cfg: Config, kin: QuadrupedKinematics | HumanoidLegKinematics) -> None:
        self.cfg = cfg
        self.kin = kin
        self._support: Callable[[Any, np.ndarray], Support] = (
            _humanoid_support if isinstance(kin, HumanoidLegKinematics) else _quadruped_support)
        sim = cfg.sim
        pose = sim.get("start_pose", "fold")
        start = cfg.poses.get(pose)
        if start is None:
            raise ValueError(f"{cfg.path}: sim.start_pose: {pose!r} is not one of the "
                             f"poses {sorted(cfg.poses)}")
        self.q = start.copy()
        self.qd = np.zeros(cfg.num_joints)
        self.tau = np.zeros(cfg.num_joints)
        self.inertia = float(sim.get("joint_inertia", 0.02))
        self.friction = float(sim.get("joint_friction", 0.05))
        self.rest_height = float(sim.get("rest_height", 0.10))
        # A bridge may report the battery; the sim reports a settable value.
        self.battery_voltage = float(sim.get("battery_voltage", 25.2))
        self.bridge = WireBridge(cfg)     # joint_state out, joint_cmd in: the robot's convention

    def _load_torque(self) -> np.ndarray:
        load = np.zeros_like(self.q)
        legs = self.cfg.leg_indices
        height, z, jac = self._support(self.kin, self.q[legs])
        share = np.clip((height - self.rest_height) / LOAD_BLEND, 0.0, 1.0)
        if share <= 0.0:
            return load
        down = z <= z.min() + CONTACT_BAND
        force = np.zeros((len(z), 3))
        force[down, 2] = share * self.cfg.geometry.mass * GRAVITY / down.sum()
        load[legs] = np.einsum("lji,lj->li", jac, force).reshape(-1)
        return load

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

    def command(self, data: bytes) -> None:
        """One tick under a joint_cmd as the robot's bridge receives it;
        ValueError if it is not one this robot takes."""
        c = self.bridge.command(data)
        self.step(c.q, c.qd, c.kp, c.kd, c.tau, self.cfg.dt)

    def joint_state(self, utime: int) -> bytes:
        return self.bridge.joint_state(utime, self.q, self.qd, self.tau, self.battery_voltage)

    def messages(self, utime: int, truth: bool = True) -> list[tuple[str, bytes]]:
        """What the sim publishes before a tick, by channel key: joint angles
        only (no body, so no IMU and no ground truth)."""
        return [("joint_state", self.joint_state(utime))]
