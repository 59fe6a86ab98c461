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
from controller.protocol.block import Block
from controller.robot.kinematics import rotation_rpy

INCREMENTAL_GAITS = (1, 3)
CONTINUOUS_PERIOD = 1000
RPY_MIN = np.array([-0.47, -0.25, -0.65])
RPY_MAX = np.array([0.47, 0.30, 0.65])
ANG_RATE, ANG_ACC = 2.0, 10.0
LIN_RATE, LIN_ACC = 0.5, 3.0
LIMIT_MARGIN = 0.04
ENTRY_TOLERANCE = np.radians(8.0)   # as mode 21 (SPEC §6.1): no jump on entry


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
    # 0 absolute posture, 1 and 3 incremental (SPEC §5.3). The reference runs any
    # other id as absolute posture but reports gait 0, so status 1 for ever and a
    # timed block that never expires (SPEC §5.7): refused instead.
    gaits = frozenset({0, *INCREMENTAL_GAITS})
    keeps_target = True

    def foot_workspace(self) -> tuple[float, float]:
        return 60.0, 1.0 / 12.0

    def enter(self, ctx: TickContext) -> None:
        kin = self.robot.kin
        legs = len(self.cfg.legs)
        start = self.entry_pose(ctx, ENTRY_TOLERANCE)
        q0 = start.reshape(legs, 3)
        self.feet = kin.forward(q0)          # world = the entry body frame
        self.height0 = kin.body_height(q0)
        # One body pose for both kinds of posture, so switching between them
        # (e.g. the 3/1 filler after a 3/0 block) continues from where the body is:
        # x, y, z (from the entry pose) and roll, pitch, yaw; and its rate.
        self.pose = np.zeros(6)
        self.rate = np.zeros(6)
        self.safe_pose = self.pose.copy()
        self.swing = np.zeros((legs, 3))
        self.period_start = (self.pose.copy(), self.swing.copy())
        self.clock = BlockClock()
        self.period_tick = 0
        self.safe_q = start.copy()
        kp, kd = self.robot.gains("posture")
        self.kernel.set_gains(kp, kd)
        self.kernel.tau_ff[:] = 0.0
        self.kernel.hold(start)
        self.run(ctx)  # the entry tick is the block's first tick

    def _incremental(self, ctx: TickContext) -> bool:
        return ctx.block.gait_id in INCREMENTAL_GAITS

    def run(self, ctx: TickContext) -> None:
        block = ctx.block
        if block.mode != self.mode or ctx.refused:
            self.kernel.hold(self.safe_q)  # a refused request: the body stays put
            return
        new_block = self.clock.advance(block)
        if self._incremental(ctx):
            self._incremental_step(block, new_block)
        else:
            self._absolute_step(block)
        feet = (self.feet - self.pose[:3]) @ rotation_rpy(*self.pose[3:]) + self.swing
        q, unreachable = self.robot.kin.inverse(feet)
        q = q.reshape(-1)
        inside = np.all(q >= self.cfg.q_min + LIMIT_MARGIN) and np.all(q <= self.cfg.q_max - LIMIT_MARGIN)
        if not unreachable.any() and inside and np.all(np.isfinite(q)):
            self.safe_q = q
            self.safe_pose = self.pose.copy()
        else:
            # Outside the safe range the last safe pose is held (SPEC §6.3), and
            # the body pose itself stops there, so it resumes without a jump.
            self.pose = self.safe_pose.copy()
            self.rate[:] = 0.0
        self.kernel.hold(self.safe_q)
        # The stance legs carry the weight by feed-forward: no sag of weight / kp.
        down = stance_mask(block.contact, len(self.cfg.legs)) if self._incremental(ctx) \
            else np.ones(len(self.cfg.legs), dtype=bool)
        self.robot.weight_support(ctx.body, down, self.kernel.tau_ff)

    def _incremental_step(self, block: Block, new_block: bool) -> None:
        period = block.duration if block.duration > 0 else CONTINUOUS_PERIOD
        if new_block or self.period_tick >= period:
            self.period_start = (self.pose.copy(), self.swing.copy())
            self.period_tick = 0
        self.period_tick += 1
        s = quintic(self.period_tick / period)
        base, base_swing = self.period_start
        yaw = base[5]
        c, si = np.cos(yaw), np.sin(yaw)
        dx, dy, dz = block.pos_des
        step = np.array([c * dx - si * dy, si * dx + c * dy, dz, *block.rpy_des])
        previous = self.pose
        self.pose = base + s * step
        self.rate = (self.pose - previous) / self.robot.dt
        legs = len(self.cfg.legs)
        swing_legs = ~stance_mask(block.contact, legs)
        lift = np.where(swing_legs[:, None], np.asarray(block.foot_pose[:3]), 0.0)
        self.swing = base_swing + s * lift

    def _absolute_step(self, block: Block) -> None:
        dt = self.robot.dt
        target = np.zeros(6)
        target[2] = float(np.clip(block.pos_des[2], *self.cfg.posture_height_range)) - self.height0
        target[3:] = np.clip(np.asarray(block.rpy_des), RPY_MIN, RPY_MAX)
        lin, lin_rate = rate_limited(self.pose[:3], self.rate[:3], target[:3], LIN_RATE, LIN_ACC, dt)
        ang, ang_rate = rate_limited(self.pose[3:], self.rate[3:], target[3:], ANG_RATE, ANG_ACC, dt)
        self.pose = np.concatenate([lin, ang])
        self.rate = np.concatenate([lin_rate, ang_rate])

    def progress(self, ctx: TickContext) -> int:
        if not self._incremental(ctx):
            return 100
        period = ctx.block.duration if ctx.block.duration > 0 else CONTINUOUS_PERIOD
        return percent(self.period_tick, period)

    def reported_gait(self, ctx: TickContext) -> int:
        return ctx.block.gait_id if ctx.block.gait_id in INCREMENTAL_GAITS else 0
