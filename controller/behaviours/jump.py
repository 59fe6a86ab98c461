"""Modes that replay optimised joint trajectories with torque feed-forward:
CyberDog's mode-16 jumps (SPEC §6.7).

Each gait id names a trajectory file (controller/motion/trajectory.py), found
in config `scripts.trajectories` and made for the robot's dynamics by
`motionctl optimise` (controller/sim/motion_optimiser.py). The file is
played from the entry pose; its phases carry the targets, the gains and the
feed-forward torques. Progress is 0 until the last phase has played, the feet
have touched down (every foot's estimated load over the estimator's
contact_force, when a state estimate runs) and the body has been still and
upright for `settle_ms`; then 100. A landing that does not end upright and
still within LAND_TIMEOUT_S is a failure (logged as `motion_failed` with what
was wrong, controller_status.last_error), never reported as done; the orientation check (fsm.py) also runs in this mode,
so a jump that ends on its side or back trips the ESTOP with ori_error.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from controller.behaviours.base import Behaviour, Robot, TickContext, landed, replay_refusal
from controller.motion.trajectory import Trajectory, TrajectoryError, TrajectoryPlayback, find
from controller.protocol.block import Block
from controller.robot.config import ScriptedModeConfig

ENTRY_TOLERANCE = np.radians(8.0)   # as modes 21 and 3: no jump on entry
STILL_RATE = 0.6                    # rad/s: the body counts as still below this turn rate
UPRIGHT = 0.3                       # rad: roll and pitch within this after a landing
LAND_TIMEOUT_S = 2.0                # after the last phase, a landing must settle by then
# Phases in which the joints are meant to be far from their targets (pushed
# by feed-forward, or thrown by the landing): the tracking check waits.
DYNAMIC_PHASES = ("push", "flight", "land")


class TrajectoryMode(Behaviour):
    def __init__(self, robot: Robot, mode: int, mode_cfg: ScriptedModeConfig,
                 directories: tuple[Path, ...]) -> None:
        super().__init__(robot)
        self.mode = mode
        self.mode_cfg = mode_cfg
        self.keeps_target = mode_cfg.keeps_target
        self.name = robot.cfg.fsm.name(mode)
        self.trajectories: dict[int, Trajectory] = {}
        self.errors: dict[int, str] = {}
        cfg = robot.cfg
        for gait, names in mode_cfg.gaits.items():
            try:
                if len(names) != 1:
                    raise TrajectoryError(f"gait {gait} names {len(names)} trajectories; "
                                          "a trajectory mode plays one per gait")
                self.trajectories[gait] = find(names[0], directories, cfg, cfg.torque_limit)
            except TrajectoryError as exc:
                self.errors[gait] = str(exc)
        self.settle_ticks = math.ceil(mode_cfg.settle_ms * cfg.tick_hz / 1000.0 - 1e-9)
        self.playback: TrajectoryPlayback | None = None
        self.active = False
        self.gait = 0
        self.tick = 0
        self.end_tick = 0
        self.still = 0          # ticks landed, still and upright in a row
        self.done = False
        self.failed: str | None = None

    @property
    def checks_tracking(self) -> bool:   # type: ignore[override]
        phase = self.playback.phase if self.playback is not None else None
        return phase is None or phase.name not in DYNAMIC_PHASES

    def refuses(self, block: Block) -> str | None:
        return replay_refusal(self.name, self.gait if self.active else None, block.gait_id,
                              self.errors, self.trajectories)

    def enter(self, ctx: TickContext) -> None:
        self.active = True
        self.gait = ctx.block.gait_id
        self.tick = ctx.tick
        self.still = 0
        self.done = False
        self.failed = None
        traj = self.trajectories[self.gait]
        self.playback = TrajectoryPlayback(traj, self.robot.dt)
        self.playback.start(self.kernel, ctx.tick, self.entry_pose(ctx, ENTRY_TOLERANCE))
        self.end_tick = ctx.tick + traj.total_ticks

    def run(self, ctx: TickContext) -> None:
        self.tick = ctx.tick
        if self.playback is None:
            return
        self.playback.step(ctx.tick)
        if self.done or self.failed or ctx.tick <= self.end_tick:
            return     # the landing is watched from the tick after the last phase's end
        body = ctx.body
        if body is None:
            # No state estimate (no IMU): the trajectory's end and settle_ms.
            self.still += 1
        else:
            rot = body.rot
            tilt = max(abs(math.atan2(rot[2, 1], rot[2, 2])), abs(math.asin(max(-1.0, min(1.0, -rot[2, 0])))))
            down = landed(body, self.cfg.estimator.contact_force, STILL_RATE)
            self.still = self.still + 1 if down and tilt < UPRIGHT else 0
            if ctx.tick - self.end_tick > LAND_TIMEOUT_S * self.cfg.tick_hz and self.still == 0:
                loads = ", ".join(f"{f:.0f}" for f in body.force[:, 2])
                self.failed = (f"not settled on four feet {LAND_TIMEOUT_S:g} s after the jump: "
                               f"tilt {tilt:.2f} rad, foot loads {loads} N, turn rate "
                               f"{float(np.linalg.norm(body.gyro)):.2f} rad/s")
                return
        if self.still >= max(1, self.settle_ticks):
            self.done = True

    def finished(self) -> bool:
        return self.done

    def failure(self) -> str | None:
        return self.failed

    def ready(self) -> bool:
        return self.playback is None or self.done or self.failed is not None

    def exit(self) -> None:
        self.active = False

    def progress(self, ctx: TickContext) -> int:
        return 100 if self.playback is None or self.done else 0

    def status(self) -> tuple[str, int]:
        """For controller_status: "<trajectory> <phase>" (or "landing" after
        the last phase until settled) and the share of the trajectory played."""
        pb = self.playback
        if pb is None:
            return "", 0
        total = pb.trajectory.total_ticks
        played = min(total, max(0, self.tick - pb.t0))
        phase = pb.phase
        where = phase.name if phase is not None else ("landed" if self.done else "landing")
        return f"{pb.trajectory.name} {where}", played * 100 // max(1, total)

    def reported_gait(self, ctx: TickContext) -> int:
        return self.gait
