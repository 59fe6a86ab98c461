"""Mode 81 RL_RAPID: a fast spin in place (SPEC §12.C.2).

The reference runs a learned policy; motiond turns with its own closed loop
(the MPC and the state estimate of mode 11) in a short trot made for it
(gaits/quadruped/rapid/spin.yaml). What a client sees is the reference's:

* the linear velocity of the command is ignored; vel_des[2] is normalised:
  x 7 when positive, x 8 otherwise, plus a 0.15 rad/s offset, clamped to
  [-8, 7] rad/s and rate-limited to 3 rad/s^2 in 20 ms steps (a target within
  0.02 rad/s is taken at once);
* the response reports gait 0 and progress 100 throughout; the orientation
  and foot-workspace checks run, lift detection does not;
* leaving (to 0, 7, 11, 12 or 80: the table's `when_ready`), the yaw command
  is forced to 0 (the offset remains) and the state keeps turning until the
  limited command is within 0.03 rad/s of the offset; motiond then also waits
  for every foot to be down. Re-requesting 81 meanwhile re-enables the
  command.

The policy's x offset (-0.15) is an input bias of the learned network, not a
velocity the reference's robot walks at, so motiond's own spin does not walk.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from controller.behaviours.base import Robot, TickContext
from controller.behaviours.locomotion import Locomotion
from controller.motion.gait import GaitCommand
from controller.motion.gait_table import GaitDefinition, load_gaits
from controller.protocol.block import Block

RAPID_DIR = "rapid"          # under the gaits directory: the spin's gait
COMMAND_PERIOD_S = 0.020     # the reference's policy step
YAW_GAIN_POSITIVE, YAW_GAIN_NEGATIVE = 7.0, 8.0
YAW_OFFSET = 0.15            # rad/s
YAW_MIN, YAW_MAX = -8.0, 7.0
YAW_ACCEL = 3.0              # rad/s^2
YAW_SNAP = 0.02              # rad/s: a target this close is taken at once
LEAVE_WITHIN = 0.03          # rad/s of the offset: the exit completes
STEP_HEIGHT = 0.05           # m (the reference's rl_rapid steps write 0.06; unused there)


def rapid_gait(gaits_dir: Path, legs: int) -> GaitDefinition | None:
    """The spin's gait, if the robot's gaits directory has one."""
    directory = gaits_dir / RAPID_DIR
    if not directory.is_dir():
        return None
    found = load_gaits(directory, legs)
    if len(found) != 1:
        raise ValueError(f"{directory}: want exactly one gait definition, found {sorted(found)}")
    return next(iter(found.values()))


def yaw_target(normalised: float) -> float:
    """SPEC §12.C.2: vel_des[2] as a yaw rate target, rad/s."""
    gain = YAW_GAIN_POSITIVE if normalised > 0.0 else YAW_GAIN_NEGATIVE
    return min(YAW_MAX, max(YAW_MIN, normalised * gain + YAW_OFFSET))


def limited(current: float, target: float, step_s: float) -> float:
    """One rate-limited step of the yaw command toward `target`."""
    if abs(target - current) < YAW_SNAP:
        return target
    reach = YAW_ACCEL * step_s
    return current + min(reach, max(-reach, target - current))


class RlRapid(Locomotion):
    mode = 81
    keeps_target = False      # re-requesting 81 while leaving cancels the exit
    gaits = None              # the gait id is not used; 0 is reported

    def __init__(self, robot: Robot) -> None:
        super().__init__(robot)
        spin = rapid_gait(self.loco.gaits_dir, self.legs)
        if spin is None:
            raise ValueError(f"{self.loco.gaits_dir / RAPID_DIR}: no spin gait for mode 81")
        self.spin = replace(spin, id=self.mode)
        self.gen.gaits = {**self._all_gaits(), self.spin.id: self.spin}
        self.period = max(1, round(COMMAND_PERIOD_S / robot.dt))
        self.yaw = YAW_OFFSET
        self.entry_tick = 0

    def refuses(self, block: Block) -> str | None:
        return None

    def enter(self, ctx: TickContext) -> None:
        self.yaw = 0.0
        self.entry_tick = ctx.tick
        self._cmd = GaitCommand(self.spin, np.zeros(3), STEP_HEIGHT, 0.0)
        super().enter(ctx)

    def _command(self, ctx: TickContext) -> GaitCommand:
        if (ctx.tick - self.entry_tick) % self.period == 0:
            leaving = ctx.block.mode != self.mode or ctx.refused
            target = YAW_OFFSET if leaving else yaw_target(float(ctx.block.vel_des[2]))
            self.yaw = limited(self.yaw, target, self.period * self.robot.dt)
            self._cmd.velocity[2] = self.yaw
        return self._cmd

    def ready(self) -> bool:
        return abs(self.yaw - YAW_OFFSET) <= LEAVE_WITHIN and not self.gen.airborne().any()

    def progress(self, ctx: TickContext) -> int:
        return 100

    def reported_gait(self, ctx: TickContext) -> int:
        return 0
