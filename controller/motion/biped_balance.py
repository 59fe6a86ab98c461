"""Feedback from the IMU and the legs on the biped walk (mode 11 on a humanoid).

The quintic walk (biped_walk.py) plans where the trunk and the feet go in
its odometry frame, the reference. On the real body the trunk strays from
it: the stance leg gives at the hip, the torso rolls and pitches, the robot
falls a little toward its swing side. This layer measures the stray every
tick, never from the simulator's truth:

- the torso's tilt from the IMU (roll and pitch, level frame with the yaw
  taken out);
- the trunk's offset e from its reference: the vector from the support sole
  to the torso, from the measured joints turned by the measured tilt,
  against the planned one; and its rate de/dt, a filtered difference;

and places the swing foot, in the level frame, where the reference puts it
plus the capture-point step: d = capture_gain * (e + de/dt / omega),
omega = sqrt(g / trunk_height), the linear inverted pendulum's. The foot's
target in the torso frame is that point seen from the measured torso
(tilt_gain of the tilt error made up) less e, so it lands where it should
whatever the torso does. Both fade in over the first half of the swing, so
the swing foot's target does not jump at lift-off. At touch-down the walk
is told where the foot went (QuinticWalk.shift_landing) and steps on from
there. The support ankle adds a damping term from the gyro (ankle_gyro).

All gains zero (the default of a walk file without `balance`) is the
open-loop walk.
"""
from __future__ import annotations

import math

import numpy as np

from controller.motion.biped_walk import QuinticWalk, WalkFrame
from controller.robot.config.walk import WalkParams
from controller.robot.humanoid_kinematics import FootPose
from controller.robot.kinematics import rotation_rpy

GRAVITY = 9.81
RATE_FILTER_S = 0.03          # time constant of the offset rate's low-pass
RAMP_SHARE = 0.5              # share of the swing over which the corrections fade in


def _smoothstep(x: float) -> float:
    x = min(1.0, max(0.0, x))
    return x * x * (3.0 - 2.0 * x)


class WalkFeedback:
    """Per tick: `adjust(frame, walk, tilt_rp, gyro, measured)` returns the
    (right, left) sole targets for the IK and the support ankle's (pitch,
    roll) offsets."""

    def __init__(self, params: WalkParams, dt: float) -> None:
        self.b = params.balance
        self.dt = dt
        self.omega = math.sqrt(GRAVITY / params.trunk_height)
        self.alpha = dt / (RATE_FILTER_S + dt)
        self.enabled = self.b.tilt_gain > 0.0 or any(self.b.capture_gain) \
            or any(self.b.ankle_gyro)
        self.reset()

    def reset(self) -> None:
        self.offset = np.zeros(3)       # e: the trunk's stray from its reference (level frame)
        self.rate = np.zeros(3)         # de/dt, filtered
        self.support: str | None = None
        self.shift = np.zeros(2)        # the landing correction of the running step (heading frame)

    def adjust(self, frame: WalkFrame, walk: QuinticWalk, tilt_rp: tuple[float, float],
               gyro: np.ndarray, measured: tuple[FootPose, FootPose],
               ) -> tuple[FootPose, FootPose, tuple[float, float]]:
        plan = {"right": frame.right, "left": frame.left}
        if frame.support == "both":
            self.reset()
            return frame.right, frame.left, (0.0, 0.0)
        b = self.b
        # The torso's tilt, level frame (the heading's yaw out): Ry(pitch) Rx(roll).
        plan_tilt = rotation_rpy(frame.trunk[3], frame.trunk[4], 0.0)
        meas_tilt = rotation_rpy(tilt_rp[0], tilt_rp[1], 0.0)
        # The trunk's stray, from the support sole (measured joints and tilt).
        sup = frame.support
        m = measured[0 if sup == "right" else 1].position
        offset = plan_tilt @ plan[sup].position - meas_tilt @ m
        if sup == self.support:
            self.rate += self.alpha * ((offset - self.offset) / self.dt - self.rate)
        self.support = sup
        self.offset = offset
        # Ankle damping on the support foot, from the body rates.
        ankle = (b.ankle_gyro[0] * float(gyro[1]), b.ankle_gyro[1] * float(gyro[0]))
        if frame.double_support:
            return frame.right, frame.left, ankle
        w = _smoothstep(walk.swing_progress() / RAMP_SHARE)
        capture = offset[:2] + self.rate[:2] / self.omega
        d = np.array([b.capture_gain[0] * capture[0], b.capture_gain[1] * capture[1]])
        lim = b.max_shift
        np.clip(d, -lim, lim, out=d)
        # The swing target: the reference's point, the capture step added and
        # the stray taken off, seen from the torso as tilted now.
        k = w * b.tilt_gain
        seen = rotation_rpy(frame.trunk[3] + k * (tilt_rp[0] - frame.trunk[3]),
                            frame.trunk[4] + k * (tilt_rp[1] - frame.trunk[4]), 0.0)
        swing = "left" if sup == "right" else "right"
        p = plan[swing]
        level = plan_tilt @ p.position
        level[:2] += w * (d - offset[:2])
        level[2] -= k * offset[2]
        pose = FootPose(seen.T @ level, seen.T @ plan_tilt @ p.rotation)
        # Where it lands, in the walk's frame: off the reference by the capture step.
        self.shift = w * d
        yaw = frame.trunk[5]
        c, s = math.cos(yaw), math.sin(yaw)
        walk.shift_landing(c * self.shift[0] - s * self.shift[1],
                           s * self.shift[0] + c * self.shift[1])
        if swing == "left":
            return frame.right, pose, ankle
        return pose, frame.left, ankle

