"""Mode 11 LOCOMOTION on a biped: the open-loop quintic walk
(controller/motion/biped_walk.py) streams the leg joints every tick.

Gait ids: 1 stands in place (the walk finishes its step and closes with both
feet side by side); the config's `walk_gaits` walk at vel_des, which the walk
clamps to its velocity window and rate-limits step by step; any other id is
refused with BAN_TRANS, as the quadruped refuses a gait it has no definition
for. Arms and head hold their stand pose; every joint uses the `walk` gains.

Entry: the walk starts at rest in the stand pose (robot/config/walk.py checks that the
walk's rest pose is the stand pose). Entered from another pose (a 21 height
or body pose), the joints first move there in joint space; the walk waits.

Leaving: every hand-over out of 11 is `when_ready`, and ready means the walk
has stopped with both feet down (SPEC §5.4's "only once stopped" for a biped);
meanwhile the FSM reports TRANSITIONING. The reported gait id is the walk gait
while walking and turns to 1 only once the walk has stopped, so a stand
request shows TRANSITIONING until then too.
"""
from __future__ import annotations

import math

import numpy as np

from controller.behaviours.base import (
    Behaviour,
    BlockClock,
    HumanoidRobot,
    TickContext,
    percent,
)
from controller.motion.biped_balance import WalkFeedback
from controller.motion.biped_walk import QuinticWalk, WalkFrame
from controller.protocol.block import Block
from controller.robot.native import LINEAR

STAND = 1
LIMIT_MARGIN = 0.02           # rad inside the joint limits
BLEND_SPEED = 1.0             # rad/s: fastest joint while moving to the walk's rest pose
MIN_BLEND_TICKS = 50
AT_REST = 1e-3                # rad: closer than this to the rest pose needs no blend
RIGHT_SOLE, LEFT_SOLE = 0b01, 0b10
ANKLE = {"right": (4, 5), "left": (10, 11)}   # ankle pitch, roll among the 12 leg joints


class BipedLocomotion(Behaviour):
    mode = 11
    keeps_target = True   # a pending 11 -> x completes even if 11 is re-requested
    robot: HumanoidRobot

    def __init__(self, robot: HumanoidRobot) -> None:
        super().__init__(robot)
        walk = self.cfg.walk
        assert walk is not None
        self.walk_gaits = walk.walk_gaits
        self.walk = QuinticWalk(walk.params, robot.kin)
        self.feedback = WalkFeedback(walk.params, robot.dt)
        self.rest = robot.stand_pose()   # = the walk's rest pose (checked by robot/config/walk.py)
        self.q_prev = self.rest.copy()
        self.frame: WalkFrame | None = None
        self.gait_id = STAND
        self.blend_ticks = 0
        self.clock = BlockClock()

    def refuses(self, block: Block) -> str | None:
        if block.mode == self.mode and block.gait_id != STAND \
                and block.gait_id not in self.walk_gaits:
            return (f"gait {block.gait_id} is not a gait of this biped "
                    f"(1 stands, {sorted(self.walk_gaits)} walk)")
        return None

    def enter(self, ctx: TickContext) -> None:
        self.walk.reset(standing=True)
        self.feedback.reset()
        self.frame = None
        self.gait_id = STAND
        self.clock = BlockClock()
        start = self.kernel.pos.copy()
        distance = float(np.max(np.abs(self.rest - start)))
        self.blend_ticks = 0 if distance < AT_REST else \
            max(MIN_BLEND_TICKS, math.ceil(distance / BLEND_SPEED / self.robot.dt))
        self.kernel.move(start, self.rest, ctx.t, self.blend_ticks * self.robot.dt, LINEAR)
        self.q_prev = self.rest.copy()
        kp, kd = self.robot.gains("walk")
        self.kernel.set_gains(kp, kd)
        self.kernel.tau_ff[:] = 0.0
        self.run(ctx)

    def run(self, ctx: TickContext) -> None:
        block = ctx.block
        ours = block.mode == self.mode
        if ours:
            self.clock.advance(block)
        if self.blend_ticks > 0:
            self.blend_ticks -= 1
            return
        # Leaving, a stand or a refused gait: zero velocity, the walk stops.
        walking = ours and block.gait_id in self.walk_gaits
        command = block.vel_des if walking else (0.0, 0.0, 0.0)
        dt = self.robot.dt
        frame = self.frame = self.walk.step(dt, command)
        q = self.rest.copy()
        imu = ctx.imu
        if imu is None or not self.feedback.enabled:
            q[self.cfg.leg_indices] = self.walk.joint_targets(frame)
        else:
            # Closed loop: the swing foot placed from the measured torso, the
            # support ankle damped by the gyro (controller/motion/biped_balance.py).
            soles = ctx.soles if ctx.soles is not None else self.robot.feet(ctx.q)
            right, left, ankle = self.feedback.adjust(
                frame, self.walk, (imu.roll, imu.pitch), imu.gyro, soles)
            legs, _ = self.robot.legs_for((right, left))
            if frame.support != "both":
                pitch, roll = ANKLE[frame.support]
                legs[pitch] += ankle[0]
                legs[roll] += ankle[1]
            q[self.cfg.leg_indices] = legs
        q = self.robot.inside_limits(q, LIMIT_MARGIN, ctx.q)
        # Stream as one-tick segments from t - dt, whose velocity feed-forward
        # is lost whenever (t - (t - dt)) / dt rounds to 1.0 (most ticks after
        # t = 8 s). The walk's figures were tuned with this; with the
        # feed-forward kept (Kernel.stream) humanoid20's walk at its top speed
        # tilts past its row and a minute of random commands falls, so this
        # stays until the walk is tuned again (README "Physics").
        self.kernel.move(self.q_prev, q, ctx.t - dt, dt, LINEAR)
        self.q_prev = q
        # Walk gaits take over at once (one engine); the stand once stopped.
        if walking or (ours and block.gait_id == STAND and self.walk.is_stopped()):
            self.gait_id = block.gait_id

    def ready(self) -> bool:
        return self.blend_ticks == 0 and self.walk.is_stopped()

    def progress(self, ctx: TickContext) -> int:
        block = ctx.block
        if block.mode != self.mode or block.duration <= 0:
            return 100
        return percent(self.clock.count, block.duration)

    def reported_gait(self, ctx: TickContext) -> int:
        return self.gait_id

    def body_velocity(self) -> np.ndarray | None:
        return None if self.frame is None else np.array(self.frame.velocity)

    def planned_contact(self) -> int | None:
        frame = self.frame
        if frame is None or frame.double_support:
            return None
        return RIGHT_SOLE if frame.support == "right" else LEFT_SOLE

    def limbs_in_use(self) -> frozenset[str]:
        return self.robot.LEG_LIMBS   # the walk swings no arms
