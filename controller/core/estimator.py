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
  (its measurement noise grows SUSPECT times, its foot is free to move);
  a foot that has just landed is believed more and more over `settle_time`
  of carrying load, since a landing foot may still slide.

Every tick, on preallocated arrays. Inputs are the measured joint state and
the IMU; the simulator's ground truth never enters.
"""
from __future__ import annotations

import math

import numpy as np

from controller.motion.forces import GRAVITY
from controller.robot.config.estimator import EstimatorConfig
from controller.robot.kinematics import QuadrupedKinematics, leg_mask_table
from controller.robot.native import KalmanArithmetic, double_ptr, ffi, lib

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
        self.accel = np.zeros(3)
        self.trust = np.zeros(legs)          # 0 swinging .. 1 standing, per leg
        self.contact_age = np.zeros(legs)    # ticks each foot has carried load in a row
        self.force = np.zeros((legs, 3))     # estimated ground force on each foot, world frame
        self.y = np.zeros(m)
        self.Q = np.zeros(n)
        self.R = np.zeros(m)
        # Planned-contact mask -> per-leg 0/1, for every mask of these legs.
        self.all_legs = (1 << legs) - 1
        self.bits = leg_mask_table(legs)
        self.kf = KalmanArithmetic(self.x, self.P, self.A, self.Q, self.H, self.R, self.y)
        self._jacobian = np.zeros((legs, 3, 3))  # each leg's, at the measured joints
        self._leg_force = np.zeros((legs, 3))    # the force each leg pushes with, body frame
        self.feet = np.zeros((legs, 3))      # body frame, from the measured joints (for the MPC too)
        self.rejected_updates = 0            # innovation covariance not positive definite: skipped
        self._inputs = {"q": np.zeros(3 * legs), "qd": np.zeros(3 * legs), "tau": np.zeros(3 * legs),
                        "quat": np.zeros(4), "accel": self.accel, "planned": np.zeros(legs)}
        arrays = {**self._inputs, "gyro": self.gyro, "Q0": self.Q0, "R0": self.R0, "x": self.x,
                  "rot": self.rot, "feet": self.feet, "jacobian": self._jacobian,
                  "leg_force": self._leg_force, "force": self.force, "trust": self.trust,
                  "contact_age": self.contact_age, "y": self.y, "R": self.R, "Q": self.Q}
        self._native = ffi.new("mk_odometry *", {
            "geometry": kin.native, "dt": dt, "gravity": -float(GRAVITY[2]),
            "contact_force": self.c.contact_force, "contact_band": self.c.contact_band,
            "suspect": SUSPECT, "initialised": 0,
            "settle_ticks": self.c.settle_time / dt,
            **{name: double_ptr(a) for name, a in arrays.items()}})
        self._keep = arrays                  # C holds their addresses

    # -- outputs ----------------------------------------------------------------------
    @property
    def initialised(self) -> bool:
        """True once a step has set the state from the feet."""
        return bool(self._native.initialised)

    @property
    def position(self) -> np.ndarray:
        return self.x[0:3]

    @property
    def jacobian(self) -> np.ndarray:
        """(legs, 3, 3): each leg's Jacobian at the measured joints, body frame."""
        return self._jacobian

    @property
    def joints(self) -> tuple[np.ndarray, np.ndarray]:
        """The joint angles and speeds the last step's feet and Jacobians came from."""
        return self._inputs["q"], self._inputs["qd"]

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
        yaw = math.atan2(r[1, 0], r[0, 0])
        c, s = math.cos(yaw), math.sin(yaw)
        vx, vy = float(self.x[3]), float(self.x[4])
        g = self.gyro
        wz = float(r[2, 0] * g[0] + r[2, 1] * g[1] + r[2, 2] * g[2])
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
        swinging leg's torques can look like load. The arithmetic is
        csrc/odometry.c's (orientation, feet, loads, trust, the prediction
        and the measurement) and csrc/kalman.c's (the covariances)."""
        inputs = self._inputs
        inputs["q"][:] = q.reshape(-1)
        inputs["qd"][:] = qd.reshape(-1)
        inputs["tau"][:] = tau.reshape(-1)
        inputs["quat"][:] = quaternion
        inputs["accel"][:] = accel
        inputs["planned"][:] = self.bits[self.all_legs if planned is None else planned & self.all_legs]
        np.subtract(gyro, self.gyro_bias, out=self.gyro)
        self.yaw_drift += float(self.gyro_bias[2]) * self.dt
        native = self._native
        native.yaw_drift = self.yaw_drift
        lib.mk_odometry_step(native)
        self.kf.predict()
        if not self.kf.update():
            self.rejected_updates += 1
        if planned is None or planned & self.all_legs == self.all_legs:
            self._learn_bias(self.gyro)

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
