"""Mode 3 QP_STAND: body posture with all four feet fixed (SPEC §6.3).

The reference balances this with whole-body force control; motiond reaches
the same body poses kinematically (leg IK, position control).

Absolute posture (gait not 1 or 3): roll, pitch, yaw and height follow the
command through a rate limiter (|w| <= 2 rad/s, |a| <= 10 rad/s^2; height
0.5 m/s, 3 m/s^2) inside the SPEC windows. Yaw is relative to the entry yaw.
Incremental posture (gait 1 or 3): each period of D ticks (1000 when D = 0)
adds the commanded offsets along a quintic (minimum-jerk) profile; offsets
accumulate from period to period.
"""
from __future__ import annotations

import numpy as np

from controller.behaviours.base import Behaviour, BlockClock, TickContext, percent
from controller.behaviours.pose import stance_mask
from controller.kinematics import rotation_rpy

INCREMENTAL_GAITS = (1, 3)
CONTINUOUS_PERIOD = 1000
RPY_MIN = np.array([-0.47, -0.25, -0.65])
RPY_MAX = np.array([0.47, 0.30, 0.65])
HEIGHT_RANGE = (0.15, 0.35)
ANG_RATE, ANG_ACC = 2.0, 10.0
LIN_RATE, LIN_ACC = 0.5, 3.0
LIMIT_MARGIN = 0.04


def rate_limited(x: np.ndarray, v: np.ndarray, target: np.ndarray, vmax: float,
                 amax: float, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """One step of a second-order approach to `target` that can stop in time."""
    err = target - x
    v_goal = np.sign(err) * np.minimum(vmax, np.sqrt(2.0 * amax * np.abs(err)))
    v = v + np.clip(v_goal - v, -amax * dt, amax * dt)
    x_next = x + v * dt
    # Never overshoot: land on the target when the step would cross it.
    crossed = np.sign(target - x_next) != np.sign(err)
    x_next = np.where(crossed, target, x_next)
    v = np.where(crossed, 0.0, v)
    return x_next, v


def quintic(s: float) -> float:
    s = min(max(s, 0.0), 1.0)
    return s * s * s * (10.0 + s * (-15.0 + 6.0 * s))


class QpStand(Behaviour):
    mode = 3
    keeps_target = True
    checks_foot_workspace = True

    def enter(self, ctx: TickContext) -> None:
        kin = self.robot.kin
        legs = len(self.cfg.legs)
        q0 = ctx.q.reshape(legs, 3)
        self.feet = kin.forward(q0)          # world = the entry body frame
        self.height0 = kin.body_height(q0)
        self.rpy = np.zeros(3)
        self.rpy_rate = np.zeros(3)
        self.height = self.height0
        self.height_rate = np.zeros(1)
        self.offset = np.zeros(6)             # incremental: x y z roll pitch yaw
        self.swing = np.zeros((legs, 3))
        self.period_start = (self.offset.copy(), self.swing.copy())
        self.clock = BlockClock()
        self.period_tick = 0
        self.safe_q = ctx.q.copy()
        kp, kd = self.robot.gains("posture")
        self.kernel.set_gains(kp, kd)
        self.kernel.tau_ff[:] = 0.0
        self.kernel.hold(ctx.q)
        self.run(ctx)  # the entry tick is the block's first tick

    def _incremental(self, ctx: TickContext) -> bool:
        return ctx.block.gait_id in INCREMENTAL_GAITS

    def run(self, ctx: TickContext) -> None:
        block = ctx.block
        if block.mode != self.mode:
            self.kernel.hold(self.safe_q)
            return
        new_block = self.clock.advance(block)
        dt = self.robot.dt
        legs = len(self.cfg.legs)
        swing_legs = ~stance_mask(block.contact, legs)
        if self._incremental(ctx):
            period = block.duration if block.duration > 0 else CONTINUOUS_PERIOD
            if new_block or self.period_tick >= period:
                self.period_start = (self.offset.copy(), self.swing.copy())
                self.period_tick = 0
            self.period_tick += 1
            s = quintic(self.period_tick / period)
            base, base_swing = self.period_start
            yaw = base[5]
            c, si = np.cos(yaw), np.sin(yaw)
            dx, dy, dz = block.pos_des
            step = np.array([c * dx - si * dy, si * dx + c * dy, dz, *block.rpy_des])
            self.offset = base + s * step
            lift = np.where(swing_legs[:, None], np.asarray(block.foot_pose[:3]), 0.0)
            self.swing = base_swing + s * lift
            shift = self.offset[:3]
            rpy = self.offset[3:]
        else:
            target = np.clip(np.asarray(block.rpy_des), RPY_MIN, RPY_MAX)
            self.rpy, self.rpy_rate = rate_limited(self.rpy, self.rpy_rate, target,
                                                   ANG_RATE, ANG_ACC, dt)
            h_target = np.clip(block.pos_des[2], *HEIGHT_RANGE)
            h, self.height_rate = rate_limited(np.array([self.height]), self.height_rate,
                                               np.array([h_target]), LIN_RATE, LIN_ACC, dt)
            self.height = float(h[0])
            shift = np.array([0.0, 0.0, self.height - self.height0])
            rpy = self.rpy
        feet = (self.feet - shift) @ rotation_rpy(*rpy) + self.swing
        q, unreachable = self.robot.kin.inverse(feet)
        q = q.reshape(-1)
        inside = np.all(q >= self.cfg.q_min + LIMIT_MARGIN) and np.all(q <= self.cfg.q_max - LIMIT_MARGIN)
        if not unreachable.any() and inside and np.all(np.isfinite(q)):
            self.safe_q = q
        # Outside the safe range the last safe pose is held (SPEC §6.3).
        self.kernel.hold(self.safe_q)

    def progress(self, ctx: TickContext) -> int:
        if not self._incremental(ctx):
            return 100
        period = ctx.block.duration if ctx.block.duration > 0 else CONTINUOUS_PERIOD
        return percent(self.period_tick, period)

    def reported_gait(self, ctx: TickContext) -> int:
        return ctx.block.gait_id if ctx.block.gait_id in INCREMENTAL_GAITS else 0
