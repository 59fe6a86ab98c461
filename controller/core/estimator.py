"""The quadruped's state estimate from its own sensors: the IMU and the legs.

Orientation and body rate come from the IMU (its attitude filter: roll and
pitch absolute, yaw drifting with the gyro's bias). The gyro's yaw-rate
bias is learned while the robot stands still (four loaded feet, no
velocity, no turning: the true yaw rate is zero, so the mean rate is the
bias) and taken off the rate; the yaw drift it causes is taken off the
orientation by integrating the learned bias, as a 6-axis attitude filter
drifts. Roll and pitch rates keep their bias: their attitude is held by
gravity, and a body settling after a stand still pitches slowly enough to
teach a wrong one. Position and velocity come from a linear
Kalman filter in the world frame, the formulation legged robots of the MIT
Cheetah family run:

- state: body position p, body velocity v, and the world position of each
  foot (3 + 3 + 3 x legs);
- prediction: p += v dt, v += a dt, with a the IMU's specific force turned
  into the world frame plus gravity; the feet stay where they are;
- measurements, per leg: the foot relative to the body (R x leg kinematics),
  the body velocity seen from that foot (-R (J qd + w x r)) if it stands
  still, and its height above the ground (the foot radius);
- trust: a leg that carries load (its force estimated from its joint
  torques through the leg Jacobian) is believed, a swinging one is not
  (its measurement noise grows SUSPECT times, its foot is free to move).

Every tick, on preallocated arrays. Inputs are the measured joint state and
the IMU; the simulator's ground truth never enters.
"""
from __future__ import annotations

import numpy as np

from controller.motion.forces import GRAVITY
from controller.robot.angles import quat_to_rotation
from controller.robot.config.estimator import EstimatorConfig
from controller.robot.kinematics import QuadrupedKinematics, leg_mask_table
from controller.robot.native import KalmanArithmetic, LegStatics

SUSPECT = 100.0        # how much less a leg without load is believed
STILL_SPEED = 0.02     # m/s: below this estimated speed (and ...
STILL_RATE = 0.02      # rad/s: ... a corrected body rate below this on every axis) it stands still


class QuadrupedEstimator:
    def __init__(self, kin: QuadrupedKinematics, legs: int, dt: float,
                 config: EstimatorConfig | None = None) -> None:
        self.kin = kin
        self.legs = legs
        self.dt = dt
        self.c = config or EstimatorConfig()
        n, m = 6 + 3 * legs, 7 * legs
        self.n, self.m = n, m
        self.x = np.zeros(n)
        self.P = np.eye(n) * 100.0
        self.A = np.eye(n)
        self.A[0:3, 3:6] = np.eye(3) * dt
        self.H = np.zeros((m, n))
        for i in range(legs):
            f = 6 + 3 * i
            self.H[3 * i:3 * i + 3, 0:3] = -np.eye(3)        # foot relative to the body
            self.H[3 * i:3 * i + 3, f:f + 3] = np.eye(3)
            v = 3 * legs + 3 * i
            self.H[v:v + 3, 3:6] = np.eye(3)                   # body velocity seen from the foot
            self.H[6 * legs + i, f + 2] = 1.0                  # foot height
        self.Q0 = np.zeros(n)
        self.Q0[0:3] = dt / 20.0 * self.c.process_position
        self.Q0[3:6] = dt * 9.81 / 20.0 * self.c.process_velocity
        self.Q0[6:] = dt * self.c.process_foot
        self.R0 = np.zeros(m)
        self.R0[0:3 * legs] = self.c.sensor_position
        self.R0[3 * legs:6 * legs] = self.c.sensor_velocity
        self.R0[6 * legs:] = self.c.sensor_height
        self.rot = np.eye(3)
        self.gyro = np.zeros(3)              # body rate, the learned bias taken off
        self.gyro_bias = np.zeros(3)         # rad/s, learned while standing still (z only)
        self.still_samples = 0               # how many still ticks the bias has learned from
        self.yaw_drift = 0.0                 # rad: the IMU's yaw drift, the bias integrated
        self._rows = np.zeros((2, 3))
        self.accel = np.zeros(3)
        self.trust = np.zeros(legs)          # 0 swinging .. 1 standing, per leg
        self.force = np.zeros((legs, 3))     # estimated ground force on each foot, world frame
        self.y = np.zeros(m)
        self.Q = np.zeros(n)
        self.R = np.zeros(m)
        # Planned-contact mask -> per-leg 0/1, for every mask of these legs.
        self.all_legs = (1 << legs) - 1
        self.bits = leg_mask_table(legs)
        self.kf = KalmanArithmetic(self.x, self.P, self.A, self.Q, self.H, self.R, self.y)
        self.statics = LegStatics(legs)
        self.feet = np.zeros((legs, 3))      # body frame, from the measured joints (for the MPC too)
        self.rejected_updates = 0            # innovation covariance not positive definite: skipped
        self.initialised = False

    # -- outputs ----------------------------------------------------------------------
    @property
    def position(self) -> np.ndarray:
        return self.x[0:3]

    @property
    def jacobian(self) -> np.ndarray:
        """(legs, 3, 3): each leg's Jacobian at the measured joints, body frame."""
        return self.statics.jacobian

    @property
    def velocity(self) -> np.ndarray:
        """Body velocity in the world frame."""
        return self.x[3:6]

    @property
    def body_velocity(self) -> np.ndarray:
        """Body velocity in the body frame."""
        return self.rot.T @ self.x[3:6]

    def heading_twist(self) -> tuple[float, float, float]:
        """Planar twist for odometry: the velocity along and across the
        heading (the body's yaw) and the yaw rate, from the estimate and
        the gyro."""
        r = self.rot
        yaw = float(np.arctan2(r[1, 0], r[0, 0]))
        c, s = np.cos(yaw), np.sin(yaw)
        vx, vy = float(self.x[3]), float(self.x[4])
        wz = float(r[2] @ self.gyro)
        return c * vx + s * vy, -s * vx + c * vy, wz

    @property
    def rpy(self) -> tuple[float, float, float]:
        r = self.rot
        return (float(np.arctan2(r[2, 1], r[2, 2])), float(np.arcsin(np.clip(-r[2, 0], -1.0, 1.0))),
                float(np.arctan2(r[1, 0], r[0, 0])))

    # -- the step -----------------------------------------------------------------------
    def step(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, quaternion: np.ndarray,
             gyro: np.ndarray, accel: np.ndarray, planned: int | None = None) -> None:
        """One tick: the joint state and the IMU sample of this tick, and the
        legs the running motion plans on the ground (bit i = leg i; None:
        all). A leg is trusted when it is planned down and carries load: a
        swinging leg's torques can look like load."""
        legs, c = self.legs, self.c
        rot = quat_to_rotation(quaternion, self.rot)
        np.subtract(gyro, self.gyro_bias, out=self.gyro)
        self._unwind_yaw(rot)
        gyro = self.gyro
        self.accel[:] = accel
        ql = q.reshape(legs, 3)
        statics = self.statics
        J = statics.jacobian
        feet, J[:] = self.kin.forward_jacobian(ql)        # body frame
        self.feet = feet
        # tau = J^T f for the force f each leg pushes with; the ground pushes back with -f.
        statics.tau[:] = tau.reshape(legs, 3)
        statics.solve()
        np.matmul(statics.force, -rot.T, out=self.force)
        trust = self.trust
        np.clip((self.force[:, 2] - (c.contact_force - c.contact_band)) / c.contact_band, 0.0, 1.0,
                out=trust)
        if planned is not None:
            trust *= self.bits[planned & self.all_legs]
        feet_world = feet @ rot.T
        foot_vel = np.matmul(J, qd.reshape(legs, 3, 1))[..., 0]
        wx, wy, wz = float(gyro[0]), float(gyro[1]), float(gyro[2])
        foot_vel[:, 0] += wy * feet[:, 2] - wz * feet[:, 1]          # + gyro x foot
        foot_vel[:, 1] += wz * feet[:, 0] - wx * feet[:, 2]
        foot_vel[:, 2] += wx * feet[:, 1] - wy * feet[:, 0]
        # The foot is a ball that rolls: the point standing still is its
        # contact point, a foot radius below its centre, and the shank's
        # turning moves the centre over it (about r / leg length of the body's
        # speed, 7 % on CyberDog 2). The shank turns with the body, the abad
        # (about x) and hip + knee (about the abad-turned y axis, negative:
        # a positive hip rate swings the foot forward).
        q0 = ql[:, 0]
        bend = qd.reshape(legs, 3)
        bend_rate = -(bend[:, 1] + bend[:, 2])
        sx = wx + bend[:, 0]
        sy = wy + bend_rate * np.cos(q0)
        sz = wz + bend_rate * np.sin(q0)
        down = -self.kin.foot_radius * rot[2]           # centre -> contact, body frame
        foot_vel[:, 0] += sy * down[2] - sz * down[1]
        foot_vel[:, 1] += sz * down[0] - sx * down[2]
        foot_vel[:, 2] += sx * down[1] - sy * down[0]
        x = self.x
        if not self.initialised:
            x[:] = 0.0
            x[2] = float(-np.mean(feet_world[:, 2])) + self.kin.foot_radius
            x[6:] = (feet_world + x[0:3]).reshape(-1)
            self.initialised = True
        # Predict.
        dt = self.dt
        a_world = rot @ accel + GRAVITY
        x[0:3] += x[3:6] * dt + (0.5 * dt * dt) * a_world
        x[3:6] += a_world * dt
        distrust = 1.0 + (1.0 - trust) * SUSPECT
        swing = np.where(trust < 0.5, distrust * SUSPECT, 1.0)
        Q = self.Q
        Q[0:6] = self.Q0[0:6]
        Q[6:] = self.Q0[6:] * np.repeat(swing, 3)
        self.kf.predict()
        # Measure.
        y = self.y
        y[0:3 * legs] = feet_world.reshape(-1)
        y[3 * legs:6 * legs] = -(foot_vel @ rot.T).reshape(-1)
        y[6 * legs:] = self.kin.foot_radius
        R = self.R
        d3 = np.repeat(distrust, 3)
        R[0:3 * legs] = self.R0[0:3 * legs] * d3
        R[3 * legs:6 * legs] = self.R0[3 * legs:6 * legs] * d3
        R[6 * legs:] = self.R0[6 * legs:] * distrust
        if not self.kf.update():
            self.rejected_updates += 1
        if planned is None or planned & self.all_legs == self.all_legs:
            self._learn_bias(gyro)

    def _unwind_yaw(self, rot: np.ndarray) -> None:
        """Take the yaw the IMU's orientation has drifted by off `rot`, in place:
        rot = Rz(-drift) rot."""
        self.yaw_drift += float(self.gyro_bias[2]) * self.dt
        c, s = np.cos(self.yaw_drift), np.sin(self.yaw_drift)
        rows = self._rows
        rows[:] = rot[0:2]
        rot[0] = c * rows[0] + s * rows[1]
        rot[1] = c * rows[1] - s * rows[0]

    def _learn_bias(self, rate: np.ndarray) -> None:
        """While every foot carries load, the body does not move and the
        corrected rate is small, the measured rate is the bias: its running
        mean at first, then an average over the last `bias_time` seconds."""
        if float(self.trust.min()) < 1.0 or float(self.x[3:6] @ self.x[3:6]) > STILL_SPEED ** 2 \
                or float(np.abs(rate).max()) > STILL_RATE:
            return
        self.still_samples += 1
        weight = max(1.0 / self.still_samples, self.dt / self.c.bias_time)
        self.gyro_bias[2] += weight * float(rate[2])   # rate is gyro - bias: the bias's error
