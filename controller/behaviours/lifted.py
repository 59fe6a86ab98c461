"""Mode 9 LIFTED: the robot was picked up (SPEC §5.4, §5.6, §5.8).

Detection (LiftDetector, asked by the FSM in modes 11 and 3): the feet the
motion has on the ground carry almost nothing (the ground forces the state
estimate infers from the joint torques, summed over those feet, under
`lift_load` of the weight) while the body is not falling freely (the IMU's
specific force at least half a g; in a fall or a jump's flight it is near
zero), on UNLOADED_SHARE of the ticks of the last `lift_ms` (ticks where the
gait has every foot in the air, a flight phase, are not counted either
way). Landing: the feet carry more than `land_load` of the weight for
`lift_ms`.

Only the feet planned down count: a swinging leg's tracking torques look
like load. In closed-loop mode 11, measured in physics: trotting (gaits 3,
5, 10 at up to 1 m/s, pace, bound, pronk) at most 18 % of any 100 ms had the
planned feet under 15 % of the weight; held in the air, at least 68 %.
Lifted, the estimate sees the body high over its outstretched legs and the
MPC asks the hanging legs for almost no force, so their torques stay low.

While lifted the legs move, over half a second, to the stand pose with the
recovery stand's gains and no feed-forward (nothing kicks the person
holding the robot), ready to carry it when it is put down. The FSM keeps
the LIFTED operating mode for 2 s, then the table's rules apply
(config/cyberdog_fsm.yaml): 0, 7 and 12 at once, 3, 11 and 80 once the
feet have landed.
"""
from __future__ import annotations

import math

import numpy as np

from controller.behaviours.base import Behaviour, BodyEstimate, Robot, TickContext
from controller.robot.kinematics import leg_mask_table
from controller.robot.native import QUINTIC

GRAVITY = 9.81
UNLOADED_SHARE = 0.5    # of the counted ticks of the last lift_ms
FREE_FALL = 0.5         # g: below this specific force the body is falling, not held
LIMB_MOVE_S = 0.5
NO_ESTIMATE, FLIGHT, MEASURED = 0, 1, 2    # what measure() found this tick
GAINS = "recovery"      # firm enough to carry the body when it is put down


class LiftDetector:
    def __init__(self, robot: Robot) -> None:
        c = robot.cfg.safety
        balance = robot.cfg.balance
        # The weight of the body model the MPC uses; without one, no detection.
        self.weight = balance.mass * GRAVITY if balance is not None else None
        self.lift_share = c.lift_load
        self.land_share = c.land_load
        self.ticks_needed = max(1, round(c.lift_ms / 1000.0 * robot.cfg.tick_hz))
        legs = len(robot.cfg.legs)
        self.all_legs = (1 << legs) - 1
        self.bits = leg_mask_table(legs)
        self.window = bytearray(self.ticks_needed)   # 1: unloaded, per counted tick
        self.slot = 0
        self.counted = 0
        self.unloaded = 0
        self.loaded_ticks = 0
        self.evidence = NO_ESTIMATE       # this tick's, from measure()
        self.load = 0.0
        self.falling = False

    def reset(self) -> None:
        if not self.counted:
            return          # nothing counted since the last reset: all zero (every tick without an estimate)
        self.window[:] = bytes(self.ticks_needed)
        self.slot = self.counted = self.unloaded = self.loaded_ticks = 0

    def measure(self, body: BodyEstimate | None, planned: int | None) -> None:
        """This tick's evidence, booked by count(): the load on the feet
        `planned` down (None: all) and whether the body falls freely. It reads
        only the state estimate and the running motion's contacts, so the
        controller takes it before the tick's commands (Fsm.sample)."""
        if body is None or self.weight is None:
            self.evidence = NO_ESTIMATE
            return
        mask = self.bits[self.all_legs if planned is None else planned & self.all_legs]
        if not mask.any():
            self.evidence = FLIGHT                  # a flight phase: no evidence
            return
        self.load = float(body.force[:, 2] @ mask)
        ax, ay, az = body.accel.tolist()
        self.falling = math.sqrt(ax * ax + ay * ay + az * az) < FREE_FALL * GRAVITY
        self.evidence = MEASURED

    def count(self) -> None:
        """Book the evidence measure() took, once a tick (by the FSM)."""
        if self.evidence == NO_ESTIMATE:
            self.reset()
            return
        if self.evidence == FLIGHT:
            return
        load, weight = self.load, self.weight
        assert weight is not None                   # measured: there is a body model
        unloaded = load < self.lift_share * weight and not self.falling
        self.unloaded += unloaded - self.window[self.slot]
        self.window[self.slot] = unloaded
        self.slot = (self.slot + 1) % self.ticks_needed
        self.counted = min(self.counted + 1, self.ticks_needed)
        self.loaded_ticks = self.loaded_ticks + 1 if load > self.land_share * weight else 0

    @property
    def lifted(self) -> bool:
        return self.counted >= self.ticks_needed and self.unloaded >= UNLOADED_SHARE * self.ticks_needed

    @property
    def landed(self) -> bool:
        return self.loaded_ticks >= self.ticks_needed


class Lifted(Behaviour):
    mode = 9

    def __init__(self, robot: Robot) -> None:
        super().__init__(robot)
        self.detector = LiftDetector(robot)

    def enter(self, ctx: TickContext) -> None:
        kp, kd = self.robot.gains(GAINS)
        self.kernel.set_gains(kp, kd)
        self.kernel.tau_ff[:] = 0.0
        start = self.entry_pose(ctx, np.radians(8.0))
        self.kernel.move(start, self.robot.stand_pose(), ctx.t, LIMB_MOVE_S, QUINTIC)

    def ready(self) -> bool:
        return self.detector.landed

    def reported_gait(self, ctx: TickContext) -> int:
        return 0
