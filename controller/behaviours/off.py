"""Mode 0 OFF: zero gains and zero torque (SPEC §5.6 step 1, §7).

A humanoid that falls (config `fall`, controller/core/fall.py) enters OFF
through ESTOP bracing first: the joints move to the protective posture for
the fall's direction (arms out ahead or behind, knees bent) with the fall
gains, and go limp once the torso's tilt passes `passive_tilt`, before the
impact, or at the latest PROTECT_MAX_S after the fall was seen."""
from __future__ import annotations

import math

import numpy as np

from controller.behaviours.base import Behaviour, TickContext
from controller.robot.native import LINEAR

PROTECT_MAX_S = 1.5


class Off(Behaviour):
    mode = 0
    checks_tracking = False
    protect_until: float | None = None   # bracing for a fall until this time (s)
    last_command: np.ndarray | None = None  # the joint targets when OFF was entered

    def enter(self, ctx: TickContext) -> None:
        self.protect_until = None
        self.last_command = self.kernel.pos.copy()
        self.go_limp(ctx)

    def protect(self, ctx: TickContext, forward: bool) -> None:
        """Brace for a fall forward (or backward): the protective posture,
        from the joint targets the fall interrupted (entering OFF took the
        measured joints as its output; a stiff joint's target must not jump
        there in one tick: the step limit)."""
        fall = self.cfg.fall
        if fall is None:
            return
        start = self.last_command if self.last_command is not None else ctx.q.copy()
        self.kernel.track(start)
        self.kernel.set_gains(fall.gains.kp, fall.gains.kd)
        self.kernel.move(start.copy(), fall.front if forward else fall.back, ctx.t,
                         fall.protect_s, LINEAR)
        self.protect_until = ctx.t + PROTECT_MAX_S

    def run(self, ctx: TickContext) -> None:
        if self.protect_until is not None:
            fall = self.cfg.fall
            tilt = ctx.imu.tilt if ctx.imu is not None else math.inf
            if fall is not None and tilt < fall.passive_tilt and ctx.t < self.protect_until:
                return
            self.protect_until = None
        # The joints are passive: report where they are, with no stiffness.
        self.go_limp(ctx)
