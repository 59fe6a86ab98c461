"""Modes that replay keyframe scripts, and the script mode.

A scripted mode (config `scripts.modes`, `kind: scripts`) maps each gait id
to keyframe scripts (checked at load against the joint limits and velocity
limits) played back to back from the entry pose, with the stages'
progress rule (`progress: parts` or `end`) and an optional IMU check of a
rear-up (`rear_check`). CyberDog 2's own dynamic modes are not scripts: 64
balances on the rear feet (two_leg.py), 16 replays optimised trajectories
(jump.py), 22 is force control (force_jump.py).

The same behaviour is the robot's script mode (config `scripts.mode`, e.g.
60 SCRIPT on the humanoid): it plays whatever full-body script request the
director put in the block.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from controller.behaviours.base import Behaviour, Robot, TickContext, replay_refusal
from controller.motion.playback import ScriptPlayback
from controller.motion.script_library import ScriptLibrary
from controller.motion.scripts import Script
from controller.protocol.block import Block
from controller.robot.config import ScriptedModeConfig

if TYPE_CHECKING:
    from controller.robot.native import Kernel


class ScriptStarter(Protocol):
    """What starts a requested script in the script mode (the director):
    plays `run` into `kernel` from the commanded pose `q_cmd`."""

    def begin(self, run: Any, tick: int, q_cmd: np.ndarray, q_meas: np.ndarray,
              kernel: Kernel) -> None: ...

ENTRY_TOLERANCE = np.radians(8.0)   # as modes 21 and 3: no jump on entry


class ScriptedMode(Behaviour):
    def __init__(self, robot: Robot, mode: int, mode_cfg: ScriptedModeConfig | None,
                 library: ScriptLibrary, director: ScriptStarter | None = None) -> None:
        super().__init__(robot)
        self.mode = mode
        self.mode_cfg = mode_cfg
        self.keeps_target = bool(mode_cfg and mode_cfg.keeps_target)
        self.director = director
        self.name = robot.cfg.fsm.name(mode)
        self.joint_index = {n: i for i, n in enumerate(robot.cfg.joint_names)}
        # Every gait's chain is built and checked once, at start.
        self.chains: dict[int, Script] = {}
        self.errors: dict[int, str] = {}
        for gait, names in (mode_cfg.gaits if mode_cfg else {}).items():
            try:
                self.chains[gait] = library.build(names)
            except ValueError as exc:
                self.errors[gait] = str(exc)
        settle_ms = mode_cfg.settle_ms if mode_cfg else 0.0
        self.settle_ticks = math.ceil(settle_ms * robot.cfg.tick_hz / 1000.0 - 1e-9)
        self.playback: ScriptPlayback | None = None
        self.run_limbs: frozenset[str] | None = None
        self.active = False
        self.gait = 0
        self.tick = 0
        self.done_tick: int | None = None
        self.rear_judged = False
        self.failed: str | None = None
        self.failed_bar = 0

    def refuses(self, block: Block) -> str | None:
        if self.mode_cfg is None:
            if block.script is None:
                return f"{self.name} plays script requests (script_request), not commands"
            return None
        return replay_refusal(self.name, self.gait if self.active else None, block.gait_id,
                              self.errors, self.chains)

    def enter(self, ctx: TickContext) -> None:
        self.active = True
        self.gait = ctx.block.gait_id
        self.rear_judged = False
        self.failed = None
        self.tick = ctx.tick
        self.done_tick = None
        start = self.entry_pose(ctx, ENTRY_TOLERANCE)
        self.kernel.hold(start)          # joints the script does not name stay put
        self.kernel.tau_ff[:] = 0.0
        run = ctx.block.script
        if self.mode_cfg is None and run is not None and self.director is not None:
            self.director.begin(run, ctx.tick, start, ctx.q, self.kernel)
            self.playback = run.playback
            self.run_limbs = run.limbs
        else:
            self.playback = ScriptPlayback(self.chains[self.gait], self.joint_index,
                                           self.robot.dt)
            self.playback.start(self.kernel, ctx.tick, start, ctx.q)
            self.run_limbs = None

    def run(self, ctx: TickContext) -> None:
        self.tick = ctx.tick
        run = ctx.block.script
        if self.mode_cfg is None and run is not None and run.playback is not self.playback:
            self.enter(ctx)    # a new full-body request while playing one
            return
        if self.playback is None:
            return
        self.playback.step(ctx.tick, ctx.q)
        if self.playback.done and self.done_tick is None:
            self.done_tick = ctx.tick
        self._check_rear(ctx)

    def _check_rear(self, ctx: TickContext) -> None:
        """Config `rear_check`: the tick the named script has played, the
        IMU's nose-up pitch must be at least min_pitch (64: the rear-up);
        without a state estimate nothing is judged."""
        check = self.mode_cfg.rear_check if self.mode_cfg else None
        pb = self.playback
        if check is None or pb is None or self.rear_judged or ctx.body is None:
            return
        names = [p.name for p in pb.script.parts]
        if check[0] not in names or pb.parts_done(ctx.tick) <= names.index(check[0]):
            return
        self.rear_judged = True
        nose_up = math.asin(max(-1.0, min(1.0, float(ctx.body.rot[2, 0]))))
        if nose_up < check[1]:
            self.failed_bar = self.progress(ctx)
            self.failed = (f"did not rear up: the nose was {nose_up:.2f} rad up after {check[0]} "
                           f"(rear_check.min_pitch {check[1]:g})")

    def failure(self) -> str | None:
        return self.failed

    def finished(self) -> bool:
        """The last frame has played and the settle time (landing) is over."""
        return self.done_tick is not None and self.tick - self.done_tick >= self.settle_ticks

    def ready(self) -> bool:
        return self.playback is None or self.finished()

    def exit(self) -> None:
        self.active = False

    def progress(self, ctx: TickContext) -> int:
        pb = self.playback
        if pb is None:
            return 100
        if self.mode_cfg is None:
            return pb.position.progress
        if self.failed is not None:
            return self.failed_bar          # it plays on to land, but never reports done
        if self.mode_cfg.progress == "parts":
            parts = len(pb.script.parts)
            return 100 * pb.parts_done(ctx.tick) // parts if not self.finished() else 100
        return 100 if self.finished() else 0

    def reported_gait(self, ctx: TickContext) -> int:
        return self.gait

    def limbs_in_use(self) -> frozenset[str] | None:
        return self.run_limbs
