"""Mode 7 PURE_DAMPER (SPEC §6.5).

Gait 0: passive damping for 3000 ticks (abad damping off after 2400; a
humanoid has no abad, so all its joints stay damped), then a zero command.
Gait 1 (while the command stays 7): interpolate to the config's lie pose over
600 ticks, then 400 ticks of damping only.

The command timeout's damper (a FROM_TIMEOUT block, SPEC §2.5: 7 gait 0)
lies the robot down actively, as gait 1 does, and then continues as the
passive damper on the same tick counter, reporting gait 0 and gait 0's
progress throughout (docs/DIFFERENCES.md): the client is gone but
the robot is healthy, and the passive collapse drops the body onto the
ground (CyberDog 2 in physics: 0.40 m/s). A biped (Robot.holds_lie_pose)
does not go passive after it: it keeps holding the lie pose (a sit on its
seat) with the lie_down gains, since a limp humanoid falls onto its back.
The fault path (EDAMP) stays passive.
"""
from __future__ import annotations

import numpy as np

from controller.behaviours.base import Behaviour, TickContext
from controller.protocol.block import FROM_TIMEOUT

PASSIVE_TICKS = 3000
PASSIVE_ABAD_OFF_TICKS = 2400
PASSIVE_FULL_BAR_TICKS = 2000
LIE_TICKS = 600
LIE_DAMP_TICKS = 400
ENTRY_TOLERANCE = np.radians(4.0)


class Damper(Behaviour):
    mode = 7
    checks_tracking = False   # gait 1 lies down stiffly, but the damper is the fallback
    gaits = frozenset({0, 1})    # passive, active lie-down
    active = False    # running the active lie-down (gait 1, or the timeout's)
    soft = False      # ...for the command timeout, reported as gait 0
    count = 0
    latched_gait = 0

    def enter(self, ctx: TickContext) -> None:
        timeout = ctx.block.source == FROM_TIMEOUT
        if ctx.block.gait_id != 1 and not timeout:
            self.enter_passive(ctx)
            return
        self.latched_gait = 0 if timeout else 1
        self.count = 0
        self.active = True  # running the active lie-down
        self.soft = timeout
        start = self.entry_pose(ctx, ENTRY_TOLERANCE)
        self.kernel.move(start, self.cfg.lie_pose, ctx.t, LIE_TICKS * self.robot.dt)
        kp, kd = self.robot.gains("lie_down")
        self.kernel.set_gains(kp, kd)
        self.kernel.tau_ff[:] = 0.0

    def enter_passive(self, ctx: TickContext) -> None:
        """Enter as the passive damper (gait 0): the timeout and EDAMP path."""
        self.latched_gait = 0
        self.count = 0
        self.active = False
        self.soft = False
        self._passive(ctx)
        self.kernel.tau_ff[:] = 0.0

    def _passive(self, ctx: TickContext) -> None:
        self.kernel.track(ctx.q)   # kp is 0: the position target drives nothing
        _, kd = self.robot.gains("damper")
        if self.count >= PASSIVE_TICKS:
            kd = np.zeros_like(kd)
        elif self.count >= PASSIVE_ABAD_OFF_TICKS:
            kd = kd.copy()
            kd[self.robot.damper_early_release] = 0.0
        self.kernel.set_gains(np.zeros_like(kd), kd)

    def run(self, ctx: TickContext) -> None:
        self.count += 1
        if self.active and (ctx.block.mode != self.mode
                            or self.soft and self.count >= LIE_TICKS + LIE_DAMP_TICKS
                            and not self.robot.holds_lie_pose):
            self.active = False  # the command left 7, or the timeout's lie-down is over:
            self.soft = False    # continue as the passive damper
        if not self.active:
            self._passive(ctx)
        elif self.count == LIE_TICKS:
            kp, kd = self.robot.gains("lie_down")
            self.kernel.hold(self.cfg.lie_pose)
            held = self.soft and self.robot.holds_lie_pose
            self.kernel.set_gains(kp if held else np.zeros_like(kd), kd)

    def ready(self) -> bool:
        if self.active and not self.soft:
            return self.count >= LIE_TICKS + LIE_DAMP_TICKS
        return self.count >= PASSIVE_TICKS

    def progress(self, ctx: TickContext) -> int:
        if self.active and not self.soft:
            return min(100, self.count * 100 // LIE_TICKS)
        if self.count >= PASSIVE_FULL_BAR_TICKS:
            return 100
        return self.count * 100 // PASSIVE_TICKS

    def reported_gait(self, ctx: TickContext) -> int:
        return self.latched_gait
