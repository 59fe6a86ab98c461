"""Mode 12 RECOVERY_STAND on a humanoid: stand up from wherever the joints are.

Whole-body linear joint-space segments (as SPEC §6.2), first to the config's
`crouch` pose, then to its `stand` pose. The crouch plays the part of the
quadruped's folded legs, so progress follows SPEC §5.11: 0 on entry, 80 once
the crouch has settled, 99 once standing has settled, 100 five ticks later.
From at or above the crouch height (e.g. after a 21/5 height or a walk) it
stands straight up: 0, 99, 100. The stage runner, with its stuck check that
holds the stage clock while a joint lags, is the quadruped's (recovery.py).

A stage lasts long enough that no joint moves faster than STAGE_SPEED.
Gaits 17 / 18 (lie down on a side) are refused: a biped lies down with 7/1.
"""
from __future__ import annotations

import math

import numpy as np

from controller.behaviours.base import HumanoidRobot, TickContext
from controller.behaviours.recovery import (
    FOLD_SETTLE_TICKS,
    LIE_SIDE_GAITS,
    STAND_SETTLE_TICKS,
    RecoveryStand,
    Stage,
)
from controller.protocol.block import Block

STAGE_SPEED = 1.0           # rad/s, the fastest joint of a stage
MIN_STAGE_TICKS = 250
CROUCH_TOLERANCE = 0.01     # m: this close below the crouch height counts as crouching


class HumanoidStand(RecoveryStand):
    robot: HumanoidRobot
    gaits = frozenset({0})

    def refuses(self, block: Block) -> str | None:
        if block.mode == self.mode and block.gait_id in LIE_SIDE_GAITS:
            return (f"gait {block.gait_id} (lie down on a side) needs a roll a biped cannot "
                    "make; use mode 7 gait 1")
        return super().refuses(block)

    def _wants_side(self, ctx: TickContext) -> bool:
        return False

    def _ticks(self, start: np.ndarray, end: np.ndarray) -> int:
        slowest = float(np.max(np.abs(end - start))) / STAGE_SPEED
        return max(MIN_STAGE_TICKS, math.ceil(slowest / self.robot.dt))

    def _stages(self, q: np.ndarray, lie_side: bool) -> list[Stage]:
        crouch = self.cfg.poses["crouch"].copy()
        stand = self.robot.stand_pose()
        stages: list[Stage] = []
        start = q
        if self.robot.body_height(q) < self.robot.body_height(crouch) - CROUCH_TOLERANCE:
            stages += [Stage(crouch, self._ticks(q, crouch)),
                       Stage(crouch, FOLD_SETTLE_TICKS, bar_after=80)]
            start = crouch
        return stages + [Stage(stand, self._ticks(start, stand)),
                         Stage(stand, STAND_SETTLE_TICKS, bar_after=99)]

    def _stage_target(self, target: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # No abad rule on a biped: the target only stays inside the limits.
        return self.robot.inside_limits(target, 0.0, start), self.kp

    def limbs_in_use(self) -> frozenset[str] | None:
        # Every joint while standing up; once standing, only the legs hold.
        return self.robot.LEG_LIMBS if self.ready() else None
