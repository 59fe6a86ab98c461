"""Mode 12 RECOVERY_STAND: stand up from whatever pose the legs are in (SPEC §6.2).

A plan is a list of linear joint-space stages. From a crouch the robot stands
straight up; from a folded or sprawled pose it first folds the legs. While
the legs rise into the stand, and from then on, they carry the weight by
feed-forward (faded in over the rise), so the body stands at stand_height
rather than weight / kp below it. Progress
(SPEC §5.11): 0 on entry, 80 when the legs are folded, 99 once standing has
settled, 100 five ticks later. While any joint lags its target by more than
the stuck threshold, the stage clock stops, so a blocked leg is not rushed.

A fallen robot rolls over first (SPEC: "rolls over first if fallen"): with a
state estimate (a fresh IMU), a body more than 60 degrees from upright (on
entry, or any tick of the stand plan: the IMU may come in late, the body may
fall) plays
the config's roll-over (`scripts.recovery.roll_back`, optimised in physics by
`motionctl optimise roll-back`; CyberDog 2 lying on a side with its legs
folded falls onto its back, so one roll-over serves both; a robot that stays
on its side starts with the mirror image when it lies on the side the
roll-over does not turn through, `scripts.recovery.roll_through`). After each roll
the IMU is read again, and a robot still down rolls again the other way (the
mirror image), up to MAX_ROLLS rolls; then the stand plan runs from wherever
the legs are. Progress stays 0 while rolling; a robot
still not upright after MAX_ROLLS rolls keeps its legs folded at 0 % and
`failed` says why (the controller logs it).

Gaits 17 / 18 (lie down on the left / right side) need a roll the kinematic
controller cannot make; motiond lowers the body onto its belly in the lie pose
instead, reporting the SPEC milestones.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from controller.behaviours.base import Behaviour, Robot, TickContext
from controller.motion.trajectory import (
    Trajectory,
    TrajectoryError,
    TrajectoryPlayback,
    find,
    mirror_map,
    mirrored,
)
from controller.robot.native import LINEAR

STAND_TICKS = 350
STAND_SETTLE_TICKS = 50
FOLD_SETTLE_TICKS = 100
PREPARE_TICKS = 1500
FINAL_BAR_DELAY = 5
STANDING_HEIGHT_LEG_SHARE = 0.42     # StandUp straight from above 0.42 (hip + knee link)
STANDING_HEIGHT_MAX = 0.45           # m
ENTRY_TOLERANCE = np.radians(8.0)
ABAD_MARGIN = 0.05
ABAD_CLIPPED_KP_SCALE = 0.3
STUCK_THRESHOLD = np.radians(10.0)
FOLDABLE_HIP = (-2.0, 0.6)           # rad: outside, prepare before folding
LIE_SIDE_GAITS = (17, 18)
CROUCH_HEIGHT = 0.18
# Roll-overs: the body's z axis must have a world-z component above this to
# stand up (60 degrees from upright).
ROLL_UP_LIMIT = 0.5
MAX_ROLLS = 4
SIDE_MARGIN = 0.5          # rad from the back or the belly: a body counts as on a side
ROLL_SETTLE_TICKS = 100


@dataclass
class Stage:
    target: np.ndarray
    ticks: int
    bar_after: int | None = None   # progress once this stage completes


class RecoveryStand(Behaviour):
    mode = 12
    gaits = frozenset({0, *LIE_SIDE_GAITS})

    def __init__(self, robot: Robot) -> None:
        super().__init__(robot)
        self.rolls: dict[str, Trajectory] = {}
        self.errors: list[str] = []        # roll-overs that could not be loaded (logged at start)
        sc = robot.cfg.scripts
        if sc is not None and sc.rolls:
            try:
                back = find(sc.rolls["back"], sc.trajectories, robot.cfg, robot.cfg.torque_limit)
                swap, sign = mirror_map(robot.cfg.joint_names, sc.mirror_pairs, sc.mirror_negate)
                # Every other attempt rolls the other way (the mirror image).
                self.rolls = {"back": back, "mirrored": mirrored(back, back.name + " mirrored", swap, sign)}
            except TrajectoryError as exc:
                self.errors.append(str(exc))
        self.stages: list[Stage] = []
        self.index = 0
        self.lie_side = False
        self.roll: TrajectoryPlayback | None = None
        self.roll_end = 0
        self.rolled = 0
        self.mirror_first = False     # the first roll is the mirror image
        self.failed: str | None = None

    @property
    def checks_tracking(self) -> bool:   # type: ignore[override]
        return self.roll is None        # a roll throws the legs against the ground

    def enter(self, ctx: TickContext) -> None:
        kp, kd = self.robot.gains("recovery")
        self.kp, self.kd = kp, kd
        self.kernel.tau_ff[:] = 0.0
        self.bar = 0
        self.side_gait = 0
        self.rolled = 0
        self.mirror_first = False
        self.failed = None
        self.roll = None
        if not self._wants_side(ctx) and self._start_roll(ctx):
            self.lie_side = False
            return
        self._plan(ctx, lie_side=self._wants_side(ctx))

    # -- rolling over -------------------------------------------------------
    def _fallen(self, ctx: TickContext) -> bool:
        """More than ROLL_UP_LIMIT from upright by the state estimate (never
        without one: no IMU, no roll-over)."""
        body = ctx.body
        return body is not None and bool(self.rolls) and float(body.rot[2, 2]) <= ROLL_UP_LIMIT

    def _start_roll(self, ctx: TickContext) -> bool:
        if not self._fallen(ctx):
            return False
        if self.rolled >= MAX_ROLLS:
            self.failed = f"still lying on its back or side after {MAX_ROLLS} roll-overs"
            return False
        if self.rolled == 0:
            self.mirror_first = self._short_way_is_mirrored(ctx)
        mirrored = (self.rolled % 2 == 1) != self.mirror_first
        traj = self.rolls["mirrored" if mirrored else "back"]
        self.roll = TrajectoryPlayback(traj, self.robot.dt)
        self.roll.start(self.kernel, ctx.tick, self.entry_pose(ctx, ENTRY_TOLERANCE))
        self.roll_end = ctx.tick + traj.total_ticks + ROLL_SETTLE_TICKS
        self.rolled += 1
        return True

    def _short_way_is_mirrored(self, ctx: TickContext) -> bool:
        """A body lying on the side the roll-over does not turn through
        (`scripts.recovery.roll_through`) starts with the mirror image: the
        roll-over would first throw it onto its back and then have to turn
        it 270 degrees."""
        sc, body = self.robot.cfg.scripts, ctx.body
        if sc is None or not sc.roll_through or body is None:
            return False
        roll = math.atan2(float(body.rot[2, 1]), float(body.rot[2, 2]))
        return -math.pi + SIDE_MARGIN < sc.roll_through * roll < -SIDE_MARGIN

    def _run_roll(self, ctx: TickContext) -> None:
        assert self.roll is not None
        self.roll.step(ctx.tick)
        if ctx.tick < self.roll_end:
            return
        self.roll = None
        if self._start_roll(ctx):
            return
        if self.failed is not None:
            self._hold_fold(ctx)
            return
        self._plan(ctx, lie_side=False)

    def _hold_fold(self, ctx: TickContext) -> None:
        """Given up: the legs folded, at 0 %."""
        self.stages = []
        self.index = 0
        self.kernel.move(self.kernel.pos.copy(), self.cfg.fold_pose, ctx.t, 0.5, LINEAR)
        self.kernel.set_gains(self.kp, self.kd)

    # -- planning -----------------------------------------------------------
    def _wants_side(self, ctx: TickContext) -> bool:
        return ctx.block.mode == self.mode and ctx.block.gait_id in LIE_SIDE_GAITS

    def _goal_pose(self) -> np.ndarray:
        """Where the plan ends: the stand (mode 80 ends crouched)."""
        return self.robot.stand_pose()

    def _crouch_pose(self) -> np.ndarray:
        return self.robot.height_pose(CROUCH_HEIGHT)

    def _fold_stages(self, q: np.ndarray) -> list[Stage]:
        fold = self.cfg.fold_pose
        err = np.max(np.abs(fold - q))
        total = 501 if err < np.radians(30) else 801 if err < np.radians(100) else 999
        third = total // 3
        first = q.copy()
        # Hip and knee two-thirds of the way toward (fold hip + 30 deg, fold knee), abad held.
        aim = fold.copy()
        aim[1::3] += np.radians(30.0)
        for j in (1, 2):
            first[j::3] = q[j::3] + (aim[j::3] - q[j::3]) * 2.0 / 3.0
        second = first.copy()
        second[0::3] = 0.0
        return [Stage(first, third), Stage(second, third), Stage(fold.copy(), total - 2 * third),
                Stage(fold.copy(), FOLD_SETTLE_TICKS, bar_after=80)]

    def _prepare_stages(self, q: np.ndarray) -> list[Stage]:
        fold = self.cfg.fold_pose
        knees_in = q.copy()
        knees_in[2::3] = fold[2::3]
        knees_in[0::3] = 0.0
        hips_in = knees_in.copy()
        hips_in[1::3] = fold[1::3]
        half = PREPARE_TICKS // 2
        return [Stage(knees_in, half), Stage(hips_in, PREPARE_TICKS - half),
                Stage(hips_in, 100)]

    def _plan(self, ctx: TickContext, lie_side: bool) -> None:
        # From the current command when the legs follow it, else from the
        # measured pose (a limp robot): no jump in the joint targets either way.
        q = self.entry_pose(ctx, ENTRY_TOLERANCE)
        self.side_gait = ctx.block.gait_id if lie_side else 0
        self.lie_side = lie_side
        self.stages = self._stages(q, lie_side)
        self.index = 0
        self.stage_tick = 0
        self.done_ticks = 0
        self.bar = 0
        self._start_stage(ctx, q)

    def _stages(self, q: np.ndarray, lie_side: bool) -> list[Stage]:
        """The plan from joint angles q: stand up, or lie on a side."""
        stages: list[Stage] = []
        if lie_side:
            crouch, lie = self._crouch_pose(), self.cfg.lie_pose.copy()
            halfway = 0.5 * (crouch + lie)
            stages = [Stage(crouch, 200, bar_after=20), Stage(halfway, 150, bar_after=40),
                      Stage(lie, 150, bar_after=50), Stage(lie, 50, bar_after=60),
                      Stage(lie, 50, bar_after=70), Stage(lie, 50, bar_after=80)]
        else:
            kin = self.robot.kin
            height = self.robot.body_height(q)
            if not STANDING_HEIGHT_LEG_SHARE * kin.reach <= height <= STANDING_HEIGHT_MAX:
                hips = q[1::3]
                if np.any(hips < FOLDABLE_HIP[0]) or np.any(hips > FOLDABLE_HIP[1]):
                    stages += self._prepare_stages(q)
                    stages += self._fold_stages(stages[-1].target)
                else:
                    stages += self._fold_stages(q)
            stand = self._goal_pose()
            stages += [Stage(stand, STAND_TICKS), Stage(stand, STAND_SETTLE_TICKS, bar_after=99)]
        return stages

    def _stage_target(self, target: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A stage's joint target and kp: abad targets stay 0.05 rad inside
        their range, with kp scaled down where clipped (SPEC §6.2)."""
        lo, hi = self.cfg.q_min, self.cfg.q_max
        abad = slice(0, None, 3)
        inner = np.clip(target[abad], lo[abad] + ABAD_MARGIN, hi[abad] - ABAD_MARGIN)
        clipped = inner != target[abad]
        target[abad] = inner
        kp = self.kp.copy()
        kp[abad] = np.where(clipped, kp[abad] * ABAD_CLIPPED_KP_SCALE, kp[abad])
        return self.robot.inside_limits(target, 0.0, start), kp

    def _start_stage(self, ctx: TickContext, start: np.ndarray) -> None:
        stage = self.stages[self.index]
        target, kp = self._stage_target(stage.target.copy(), start)
        self.kernel.move(start, target, ctx.t, stage.ticks * self.robot.dt, LINEAR)
        self.kernel.set_gains(kp, self.kd)

    # -- running ------------------------------------------------------------
    def run(self, ctx: TickContext) -> None:
        if ctx.block.mode == self.mode and self._wants_side(ctx) != self.lie_side:
            self.roll = None
            self._plan(ctx, lie_side=not self.lie_side)
            return
        if self.roll is not None:
            self._run_roll(ctx)
            return
        if self.failed is not None:
            return
        if not self.lie_side and self._start_roll(ctx):
            self.bar = 0       # the IMU came in, or the body fell: roll over first
            return
        self._support_weight(ctx)
        if self.index >= len(self.stages):
            self.done_ticks += 1
            if self.done_ticks >= FINAL_BAR_DELAY:
                self.bar = 100
            return
        # Stuck check: hold the stage clock while a joint lags its command.
        if np.max(np.abs(self.kernel.pos - ctx.q)) > STUCK_THRESHOLD:
            self.kernel.shift(self.robot.dt)
            return
        self.stage_tick += 1
        stage = self.stages[self.index]
        if self.stage_tick < stage.ticks:
            return
        if stage.bar_after is not None:
            self.bar = stage.bar_after
        self.index += 1
        self.stage_tick = 0
        if self.index < len(self.stages):
            self._start_stage(ctx, self.kernel.q1.copy())

    def _support_weight(self, ctx: TickContext) -> None:
        """Standing (the last two stages, feet on the ground, and after), the
        legs carry the weight by feed-forward, faded in over the rise: the body
        stands at stand_height, not weight / kp below it, and a pose that
        follows adds no sudden push that would slide the feet."""
        first = len(self.stages) - 2
        if self.lie_side or self.index < first:
            self.kernel.tau_ff[:] = 0.0
            return
        share = min(1.0, self.stage_tick / STAND_TICKS) if self.index == first else 1.0
        down = np.ones(len(self.cfg.legs), dtype=bool)
        self.robot.weight_support(ctx.body, down, self.kernel.tau_ff)
        self.kernel.tau_ff *= share

    def ready(self) -> bool:
        return self.bar == 100 and not self.lie_side and self.roll is None

    def failure(self) -> str | None:
        return self.failed

    def progress(self, ctx: TickContext) -> int:
        return self.bar

    def reported_gait(self, ctx: TickContext) -> int:
        return self.side_gait
