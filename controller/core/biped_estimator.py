"""A biped's torso motion from its legs and the IMU (issue 19's estimator):
leg odometry, never the simulator's truth.

The support sole does not move while it carries the robot. So the torso's
position is the support sole's (fixed) place less the sole as seen from the
torso, turned into the world by the IMU's orientation:

    p_torso = p_sole - R p_sole_in_torso(q)

with q the measured leg joints. The support sole is the walk's (its
planned contact: the stance foot of the running step; in double support
the last one); at rest, the lower sole in the world. When the support
changes, the new sole is anchored where the legs and the IMU put it at that
tick, and the chain walks on from there: the torso's velocity is the
difference of p_torso from tick to tick, turned into the heading frame for
the odometry and low-passed over a quarter step, as is the gyro's yaw
rate: the torso sways back and forth within every step, and a goal that
walks by the odometry wants the walk's progress, not the sway (a low-pass
keeps the integral: the odometry arrives where the torso went, a little
later). A sole that slides or pivots is not seen
(as with any leg odometry); the IMU's yaw drift is the yaw's error."""
from __future__ import annotations

import math

import numpy as np

from controller.robot.angles import quat_to_rotation

RIGHT_SOLE, LEFT_SOLE = 0b01, 0b10
VELOCITY_FILTER_S = 0.1       # time constant of the velocities' low-pass (a quarter step)


class BipedEstimator:
    def __init__(self, dt: float) -> None:
        self.dt = dt
        self.alpha = dt / (VELOCITY_FILTER_S + dt)
        self.rot = np.eye(3)
        self.reset()

    def reset(self) -> None:
        self.initialised = False
        self.position = np.zeros(3)      # torso origin, world
        self.velocity = np.zeros(3)      # world, filtered
        self.anchor = np.zeros(3)        # the support sole, world
        self.support = 0                 # 0 right, 1 left
        self.yaw_rate = 0.0              # world z, filtered

    def step(self, soles: tuple[np.ndarray, np.ndarray], quat: np.ndarray, gyro: np.ndarray,
             contact: int | None) -> None:
        """One tick: the (right, left) sole positions in the torso frame from
        the measured joints, the IMU, and the walk's planned contact (None:
        double support or not walking)."""
        rot = quat_to_rotation(quat, self.rot)
        self.yaw_rate += self.alpha * (float(rot[2] @ gyro) - self.yaw_rate)
        seen = (rot @ soles[0], rot @ soles[1])        # torso -> sole, world axes
        if contact == RIGHT_SOLE:
            support = 0
        elif contact == LEFT_SOLE:
            support = 1
        elif not self.initialised:
            support = 0 if seen[0][2] <= seen[1][2] else 1
        else:
            support = self.support
        if not self.initialised:
            self.anchor = -seen[support].copy()
            self.anchor[2] = 0.0
            self.position = self.anchor - seen[support]
            self.support = support
            self.initialised = True
            return
        if support != self.support:
            self.anchor = self.position + seen[support]
            self.support = support
        position = self.anchor - seen[support]
        self.velocity += self.alpha * ((position - self.position) / self.dt - self.velocity)
        self.position = position

    def heading_twist(self) -> tuple[float, float, float]:
        """(vx, vy, wz): the velocity along and across the heading (the
        torso's yaw) and the yaw rate, for the odometry."""
        r = self.rot
        yaw = math.atan2(float(r[1, 0]), float(r[0, 0]))
        c, s = math.cos(yaw), math.sin(yaw)
        vx, vy = float(self.velocity[0]), float(self.velocity[1])
        return c * vx + s * vy, -s * vx + c * vy, self.yaw_rate
