"""Mode 0 OFF: zero gains and zero torque (SPEC §5.6 step 1, §7)."""
from __future__ import annotations

from controller.behaviours.base import Behaviour, TickContext


class Off(Behaviour):
    mode = 0
    checks_tracking = False

    def enter(self, ctx: TickContext) -> None:
        self.go_limp(ctx)

    def run(self, ctx: TickContext) -> None:
        # The joints are passive: report where they are, with no stiffness.
        self.go_limp(ctx)
