"""Mode 11 LOCOMOTION: open-loop gaits (SPEC §6.4).

The gait generator (controller/motion/gait.py) gives the feet every tick; the leg IK
turns them into joint targets that the kernel streams. Stance legs get stiff
gains, swing legs softer ones.

Leaving mode 11 (SPEC §5.4): the robot keeps stepping with the leave gait
(trot 10-5), slows below leave_speed, walks one more full cycle and hands over
at a cycle boundary with every foot on the ground. From a stand it hands over
as soon as the body is still. Meanwhile the FSM reports TRANSITIONING.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from controller.behaviours.base import (
    Behaviour,
    BlockClock,
    Robot,
    TickContext,
    percent,
)
from controller.motion.balance import BalanceController
from controller.motion.gait import GaitCommand, GaitGenerator
from controller.motion.gait_table import GaitDefinition, GaitError, load_gaits
from controller.motion.motion_gaits import DEFAULT_TIMING, FIRST_MOTION_GAIT, MotionGaitShaper
from controller.motion.terrain import TerrainAdapter
from controller.motion.usergait import USER_GAIT_IDS, decode_user_gait
from controller.protocol.block import Block
from controller.protocol.constants import USER_GAIT

STAND = 1
BOUND = 7
MOTION_GAITS_DIR = "motion"   # under the gaits directory: the motion gaits (SPEC §12.A)
LIMIT_MARGIN = 0.02           # rad inside the joint limits
VERTICAL_LEGS = 0x2           # value bit1
STILL = 1e-3                  # m/s, rad/s


def load_motion_gaits(gaits_dir: Path, legs: int,
                      others: dict[int, GaitDefinition]) -> dict[int, GaitDefinition]:
    """The motion gaits (ids >= 50, not user gaits) in `gaits_dir`/motion, if
    that folder exists; an id there must be a motion-gait id and new."""
    directory = gaits_dir / MOTION_GAITS_DIR
    if not directory.is_dir():
        return {}
    gaits = load_gaits(directory, legs)
    for gait in gaits.values():
        if not Locomotion.motion_gait(gait.id) or gait.id in others:
            raise GaitError(f"{gait.source}: id: {gait.id} is not a free motion-gait id "
                            f"(>= {FIRST_MOTION_GAIT}, not a user gait 80-100 or 110, "
                            f"not defined in {gaits_dir})")
    return gaits


class Locomotion(Behaviour):
    mode = 11
    keeps_target = True   # a pending 11 -> x completes even if 11 is re-requested

    def __init__(self, robot: Robot) -> None:
        super().__init__(robot)
        loco = self.cfg.locomotion
        assert loco is not None
        self.loco = loco
        self.legs = len(self.cfg.legs)
        self.definitions: dict[int, GaitDefinition] = load_gaits(loco.gaits_dir, self.legs, loco.windows)
        self.definitions.update(load_motion_gaits(loco.gaits_dir, self.legs, self.definitions))
        self._default_motion: dict[int, GaitDefinition] = {}
        self.shaper = MotionGaitShaper(robot.dt)
        for needed in (STAND, loco.leave_gait, loco.default_gait):
            if needed not in self.definitions:
                raise ValueError(f"{loco.gaits_dir}: no definition for gait {needed}, "
                                 f"which {self.cfg.path} needs")
        self.user_gaits: dict[int, GaitDefinition] = {}   # uploaded (110) or from disk
        self.gen = GaitGenerator(robot.kin, loco, robot.dt, self._all_gaits())
        self.clock = BlockClock()
        self.slow_ticks = 0
        self.q_prev = np.zeros(self.cfg.num_joints)
        self._q_spare = (np.zeros(self.cfg.num_joints), np.zeros(self.cfg.num_joints))
        self._user_block: Block | None = None
        self._stance_kp, self._stance_kd = robot.gains("stance")
        self._swing_kp, self._swing_kd = robot.gains("swing")
        # The swing pattern the kernel's gains were last set for (bytes of
        # gen.swinging; b"": set them on the next tick whatever it is).
        self._gain_key = bytes(self.legs)
        # Closed loop (the config's `balance` section and a planner): stance
        # legs carry the body by MPC forces with soft gains while the state
        # estimate is live; open loop with stiff stance gains otherwise.
        self.balance: BalanceController | None = None
        if self.cfg.balance is not None and robot.planner is not None:
            self.balance = BalanceController(self.cfg.balance, robot.kin, self.legs, robot.dt,
                                             robot.planner, self.cfg.torque_limit, self.kernel.tau_ff,
                                             robot.deferred)
            self.terrain = TerrainAdapter(self.cfg.balance.terrain, self.legs, robot.dt)
            self._soft_kp = np.tile(self.cfg.balance.stance_kp, self.legs)
            self._soft_kd = np.tile(self.cfg.balance.stance_kd, self.legs)
        self.closed = False        # this tick ran closed loop
        self._held: tuple[GaitDefinition | None, GaitDefinition | None, tuple[bool, bool]] = (
            None, None, (False, False))
        self._user_cmd: GaitCommand | None = None
        self._block_cmd: tuple[Block, GaitCommand] | None = None   # the last block's command
        self.sanitised: tuple[str, ...] = ()   # the last user-gait values clamped, for a log line

    def _all_gaits(self) -> dict[int, GaitDefinition]:
        return {**self.definitions, **self.user_gaits}

    def set_user_gait(self, gait: GaitDefinition) -> None:
        self.user_gaits[gait.id] = gait
        self.gen.gaits = self._all_gaits()

    def gait(self, gait_id: int) -> GaitDefinition | None:
        found = self.user_gaits.get(gait_id) or self.definitions.get(gait_id)
        if found is None and self.motion_gait(gait_id) and DEFAULT_TIMING in self.definitions:
            # A motion-gait id without a case of its own runs the defaults on
            # trot in-out's timing, as the reference does (SPEC §12.A.1).
            found = self._default_motion.get(gait_id)
            if found is None:
                found = replace(self.definitions[DEFAULT_TIMING], id=gait_id,
                                name=f"motion gait {gait_id} (defaults)")
                self._default_motion[gait_id] = found
        return found

    @staticmethod
    def motion_gait(gait_id: int) -> bool:
        """Ids >= 50 other than the user gaits run the motion-gait rules."""
        return gait_id >= FIRST_MOTION_GAIT and gait_id not in USER_GAIT_IDS

    def foot_workspace(self) -> tuple[float, float]:
        """SPEC §5.8: x within L sin 60 deg (45 in bound), z below -L/6 (-L/12 in bound)."""
        gait = self.gen.gait
        return (45.0, 1.0 / 12.0) if gait is not None and gait.id == BOUND else (60.0, 1.0 / 6.0)

    def refuses(self, block: Block) -> str | None:
        if block.mode == self.mode and self.gait(block.gait_id) is None:
            if block.gait_id == USER_GAIT:
                return "gait 110 needs a Gait Def uploaded on user_gait_file first"
            return (f"gait {block.gait_id} has no definition in "
                    f"{self.loco.gaits_dir.name}/ (known: {sorted(self._all_gaits())})")
        return None

    # -- the state ----------------------------------------------------------
    def enter(self, ctx: TickContext) -> None:
        legs = self.legs
        self.q_prev = self.kernel.pos.copy()
        self.gen.start(self.q_prev.reshape(legs, 3), self.definitions[STAND])
        self.kernel.tau_ff[:] = 0.0
        self.closed = False
        if self.balance is not None:
            self.balance.reset()
            self.terrain.reset()
        self.shaper.reset(0.0, self.gen.height)
        self.clock = BlockClock()
        self.slow_ticks = 0
        self.run(ctx)
        self._gains(force=True)

    def _command(self, ctx: TickContext) -> GaitCommand:
        block = ctx.block
        gen = self.gen
        wanted = self.gait(block.gait_id) if block.mode == self.mode else None
        if wanted is None:
            # Leaving, or a refused gait: stop where we are. Stepping gaits
            # slow down in the leave gait (motion gaits in their own).
            assert gen.gait is not None
            current = gen.gait
            if current.stand or current.id >= FIRST_MOTION_GAIT:
                wanted = current
            else:
                wanted = self.definitions[self.loco.leave_gait]
            return GaitCommand(wanted, np.zeros(3), block.step_height[0], 0.0)
        if block.gait_id in self.user_gaits:
            return self._user_gait_command(wanted, block)
        made = self._block_cmd
        if made is not None and made[0] is block and made[1].gait is wanted:
            return made[1]          # a block is immutable: its command is made once
        cmd = GaitCommand(wanted, np.asarray(block.vel_des, dtype=float),
                          float(block.step_height[0]), float(block.rpy_des[1]),
                          bool(block.value & VERTICAL_LEGS))
        self._block_cmd = (block, cmd)
        return cmd

    def _user_gait_command(self, gait: GaitDefinition, block: Block) -> GaitCommand:
        """A user-gait step's packed fields (SPEC §8.4), decoded once per block."""
        if self._user_block is not block:
            params = decode_user_gait(block)
            self._user_block = block
            self._user_cmd = GaitCommand(
                gait, np.array(params.body_velocity), 0.0, params.pitch,
                bool(block.value & VERTICAL_LEGS),
                leg_heights=np.array(params.step_heights),
                landing_offset=np.array(params.landing_offsets),
                height=params.body_height, height_range=self.loco.user_height_range)
            if params.sanitised:
                self.sanitised = params.sanitised
        assert self._user_cmd is not None   # decoded above for this block
        return self._user_cmd

    def run(self, ctx: TickContext) -> None:
        gen = self.gen
        if ctx.block.mode == self.mode:
            self.clock.advance(ctx.block)
        cmd = self._command(ctx)
        assert gen.gait is not None
        motion = self.motion_gait(gen.gait.id)
        # A motion gait is left at a tick with every foot down (SPEC §12.A.1's
        # switch point); on its way to a stand or out of mode 11 no foot lifts.
        gen.free_switch = motion
        gen.hold_down = motion and (cmd.gait.stand or ctx.block.mode != self.mode)
        if motion:
            cmd = self.shaper.command(cmd)
        feet = gen.step(cmd)
        if self.motion_gait(gen.gait.id):
            self.shaper.after_step(gen)
        self._balance(ctx)
        if self.closed:
            feet = self._terrain(ctx, feet)
        # IK, the limits and the kernel's set points in one C call, into the
        # one of two kept buffers that is not last tick's q_prev.
        q = self._q_spare[0] if self.q_prev is not self._q_spare[0] else self._q_spare[1]
        self.robot.stream_feet(feet, ctx.q, LIMIT_MARGIN, self.q_prev, q)
        self.q_prev = q
        self._gains()
        self.slow_ticks = self.slow_ticks + 1 if gen.speed() <= self.loco.leave_speed else 0

    def _balance(self, ctx: TickContext) -> None:
        """Closed loop while the state estimate is live: stance torques from
        the MPC's forces (limited to the motors' torque), landings moved by
        the velocity error (used from the next tick)."""
        gen = self.gen
        closed = self.balance is not None and ctx.body is not None
        if closed != self.closed:
            self.closed = closed
            self.kernel.tau_ff[:] = 0.0
            gen.feedback[:] = 0.0
            if self.balance is not None:
                self.balance.reset()
            self._gain_key = b""                          # the stance gains change now
        if not closed:
            return
        assert self.balance is not None and ctx.body is not None
        motion, hold = self.motion_family(gen.gait, gen.timing)
        # A motion gait that lifts every foot at once (a pronk) levels its
        # swings over the ground instead: the body sinks in the flight.
        self.balance.motion, self.balance.hold, self.balance.level = motion, hold, motion and not hold
        self.balance.tick(ctx.tick, ctx.body, gen)     # into kernel.tau_ff and gen.feedback

    def _terrain(self, ctx: TickContext, feet: np.ndarray) -> np.ndarray:
        """Blind terrain adaptation (controller/motion/terrain.py): the feet
        onto the ground plane the footholds give, stumbles retracted and
        lifted again, missing steps reached for; the ground's pitch goes to
        the MPC's reference from the next tick."""
        gen, body, terrain = self.gen, ctx.body, self.terrain
        assert body is not None and self.balance is not None and gen.gait is not None
        # The dances and user gaits (motion_family): shows on a floor, as written
        # (a moonwalk's feet drag back by design, which the stumble reflex took for trips).
        if self.motion_family(gen.gait, gen.timing)[0]:
            if terrain.started:
                terrain.reset()
                gen.apex_floor = 0.0
                self.balance.terrain_pitch = 0.0
            return feet
        terrain.observe(body.rot, body.feet, body.force, gen)
        feet = terrain.feet(feet, gen.pitch)
        terrain.stumble(feet, body.feet, gen)
        gen.apex_floor = terrain.apex_floor
        self.balance.terrain_pitch = terrain.pitch

        return feet

    def motion_family(self, gait: GaitDefinition | None, timing: GaitDefinition | None) -> tuple[bool, bool]:
        """(motion, hold): whether `gait` is a motion gait or one of the user
        gaits (dances whose steps say where the body should end: the MPC then
        weighs with balance.motion_weights), and whether the closed loop also
        lands the feet against the body's lead on its reference
        (balance.position_gain): in those gaits, but not in one whose
        timetable moves every leg in unison (a pronk: there a moved landing
        drove the body rather than stopped it). Kept per gait and timing
        (compared by identity); mode 81's spin, a user-gait id, is neither."""
        held = self._held
        if held[0] is not gait or held[1] is not timing:
            motion = hold = False
            if gait is not None and timing is not None:
                motion = self.motion_gait(gait.id) or self.user_gaits.get(gait.id) is gait
                hold = motion and not timing.in_unison()
            self._held = held = (gait, timing, (motion, hold))
        return held[2]

    def exit(self) -> None:
        self.kernel.tau_ff[:] = 0.0
        self.gen.feedback[:] = 0.0

    def _gains(self, force: bool = False) -> None:
        """Stance gains on legs on the ground, swing gains on lifted ones; the
        kernel is only told when a leg changes between the two."""
        swinging = self.gen.swinging
        key = swinging.tobytes()
        if not force and key == self._gain_key:
            return
        self._gain_key = key
        swing = np.repeat(swinging, 3)
        stance_kp, stance_kd = (self._soft_kp, self._soft_kd) if self.closed else \
            (self._stance_kp, self._stance_kd)
        self.kernel.set_gains(np.where(swing, self._swing_kp, stance_kp),
                              np.where(swing, self._swing_kd, stance_kd))

    def ready(self) -> bool:
        gen = self.gen
        assert gen.gait is not None
        if gen.airborne().any():
            return False
        if gen.gait.stand:
            return bool(np.all(np.abs(gen.v) < STILL))
        if gen.speed() > self.loco.leave_speed:
            return False
        if self.motion_gait(gen.gait.id):
            return True             # every foot is down: a switch point
        if not gen.boundary:
            return False
        return gen.gait.id >= FIRST_MOTION_GAIT or self.slow_ticks >= gen.cycle_ticks

    def progress(self, ctx: TickContext) -> int:
        block = ctx.block
        if block.mode != self.mode or block.duration <= 0:
            return 100
        if block.gait_id == USER_GAIT:
            return ctx.motion_bar if ctx.motion_bar > 0 else 100
        return percent(self.clock.count, block.duration)

    def body_velocity(self) -> np.ndarray:
        return self.gen.v

    def planned_contact(self) -> int | None:
        """The legs whose foot the gait has on the ground now."""
        mask = 0
        for leg, up in enumerate(self.gen.airborne().tolist()):
            if not up:
                mask |= 1 << leg
        return mask

    def reported_gait(self, ctx: TickContext) -> int:
        gait = self.gen.gait
        return gait.id if gait is not None else STAND
