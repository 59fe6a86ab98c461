"""The mode state machine (SPEC §5.6-§5.10).

The transition table is data (config/cyberdog_fsm.yaml); each mode's motion is
a behaviour module. The FSM runs the safety checks a behaviour declares, so no
behaviour can forget one.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from controller.behaviours.base import Behaviour, BodyEstimate, TickContext
from controller.behaviours.damper import Damper
from controller.behaviours.lifted import LiftDetector, Lifted
from controller.behaviours.off import Off
from controller.core.fall import FallDetector
from controller.protocol.block import Block

# Operating modes NORMAL, TRANSITIONING, ESTOP, EDAMP and LIFTED share their
# numbers with the switch_status codes 0-4.
from controller.protocol.constants import BAN_TRANS, EDAMP, ESTOP, LIFTED, TRANSITIONING
from controller.protocol.constants import DONE as NORMAL
from controller.protocol.constants import MOTION_MODE as MOTION
from controller.robot.config import FsmTable
from controller.robot.native import ffi, lib

OFF, DAMPER, RL_RESET = 0, 7, 80
EDAMP_HOLD_TICKS = 1550
ESTOP_HOLD_TICKS = 2000
# Orientation ESTOP (SPEC §5.8): in these states, unless the command is 12,
# a roll or pitch this large means the robot has fallen. motiond adds the jumps
# (16) and the poses (21, which mode-62 motions are mostly made of; README
# "Where motiond differs"): a motion that ends on its side or back must not
# end silently. Not 64: its rear-up is meant to pitch the body 1.2 rad.
ORIENTATION_CHECKED = (11, 3, 16, 21, 81)
ORIENTATION_LIMIT = 1.3          # rad
RECOVERY_STAND = 12
# LIFTED (SPEC §5.6, §5.8): checked in these states; the lifted state is
# held this long before the table's rules for leaving it apply.
LIFT_CHECKED = (11, 3)
LIFTED_HOLD_TICKS = 1000


class Fsm:
    def __init__(self, table: FsmTable, behaviours: Mapping[int, Behaviour]) -> None:
        self.table = table
        self.behaviours = behaviours
        self.state: Behaviour = behaviours[OFF]
        self.operating = NORMAL
        self.target: int | None = None
        self.ban = 0
        self.hold_ticks = 0           # ticks spent in EDAMP or ESTOP
        self.footpos_error = 0
        self.ori_error = 0
        self._feet: np.ndarray | None = None   # the workspace check's feet without an estimate
        self._feet_ptr: object = ffi.NULL
        # The sensor-only checks of a tick (sample()): for which tick and
        # state, and the workspace bits found (the lift evidence is the
        # detector's).
        self._sampled: tuple[int, Behaviour] | None = None
        self._workspace_bits = 0
        self.refusal: str | None = None  # why the last request was refused
        self.measured = False            # joint_state has arrived at least once
        # Roll and pitch as the IMU measures them (the controller sets them
        # each tick); None without a fresh IMU, and no orientation check then.
        self.attitude: tuple[float, float] | None = None
        # A humanoid's fall detector (config `fall`; the controller sets it):
        # a fall stops the motion into ESTOP with the protective posture.
        self.fall: FallDetector | None = None
        self.fell = False               # a fall was detected this tick
        self.estop_from = OFF           # the state a fall stopped
        lifted = behaviours.get(Lifted.mode)
        self.lift: LiftDetector | None = lifted.detector if isinstance(lifted, Lifted) else None

    @property
    def mode(self) -> int:
        return self.state.mode

    # -- transitions ----------------------------------------------------------
    def why_refused(self, requested: int, block: Block | None = None) -> str | None:
        """None if the current state may hand over to `requested` (and the
        target accepts `block`'s parameters, e.g. its gait id), else why not."""
        current = self.state.mode
        if requested == current:
            return self.state.refuses(block) if block is not None else None
        name = self.table.name
        if not self.table.allowed(current, requested):
            if requested not in self.table.names:
                return f"mode {requested} is not a known mode"
            return f"{name(current)} cannot switch to {name(requested)} (transition table)"
        if requested not in self.behaviours:
            return f"{name(requested)} (mode {requested}) is not implemented yet"
        if not self.measured:
            return "no joint_state has been received yet"
        return self.behaviours[requested].refuses(block) if block is not None else None

    def _next_state(self, block: Block) -> int:
        """The state to be in for this command; sets `refusal` when it is refused."""
        current = self.state.mode
        if block.mode == current and self.operating == TRANSITIONING \
                and self.state.keeps_target and self.target is not None:
            self.refusal = None
            return self.target
        self.refusal = self.why_refused(block.mode, block)
        return current if self.refusal or block.mode == current else block.mode

    def _damper(self) -> Damper:
        damper = self.behaviours[DAMPER]
        assert isinstance(damper, Damper), "mode 7 is the damper behaviour"
        return damper

    def _switch(self, ctx: TickContext, mode: int) -> None:
        self.state.exit()
        self.state = self.behaviours[mode]
        self.state.enter(ctx)

    # -- the tick -----------------------------------------------------------------
    def reset_off(self, ctx: TickContext) -> None:
        """OFF handling (SPEC §5.6.1): the command is 0, the FSM is reset to OFF."""
        if self.state.mode != OFF:
            self._switch(ctx, OFF)
        else:
            self.state.run(ctx)
        self.operating = NORMAL
        self.target = None
        self.ban = 0
        self.hold_ticks = 0
        self.footpos_error = 0

    def damp(self, ctx: TickContext) -> None:
        """The passive damper at once, whatever the transition table says: the
        daemon is shutting down, and a pending hand-over (a trot slowing down,
        a jump landing) or the stiff active lie-down must not be its last word."""
        damper = self._damper()
        if self.state is damper and not damper.active:
            damper.run(ctx)
        else:
            self.state.exit()
            self.state = damper
            damper.enter_passive(ctx)
        if self.operating == TRANSITIONING:
            self.operating = NORMAL
        self.target = None
        self.ban = 0

    def estop(self, ctx: TickContext) -> None:
        """Enter ESTOP: passive at once (SPEC §5.6.4)."""
        if self.operating != ESTOP:
            self.operating = ESTOP
            self.hold_ticks = 0
            self._switch(ctx, OFF)

    def sample(self, tick: int, body: BodyEstimate | None, q: np.ndarray) -> None:
        """The tick's checks that read only the sensors (the lift detector's
        evidence, the foot workspace bits), for the state running now. The
        controller takes them before the tick's last commands (Controller.sense),
        so that the time from those to the joint command is shorter; step()
        uses them if the state is still the one sampled, and takes them itself
        otherwise. Reads nothing a command changes: the same figures either way."""
        state = self.state
        if self.lift is not None:
            self.lift.measure(body, state.planned_contact())
        workspace = state.foot_workspace()
        self._workspace_bits = 0 if workspace is None else \
            self._foot_workspace_bits(body, q, *workspace)
        self._sampled = (tick, state)

    def step(self, ctx: TickContext, fault: bool = False) -> None:
        """One tick; `fault`: a fault the controller watches (joint_state lost,
        a tracking error) tripped this tick, and the robot enters EDAMP."""
        requested = ctx.block.mode
        self.fell = False
        sampled = self._sampled
        if sampled is None or sampled[0] != ctx.tick or sampled[1] is not self.state:
            self.sample(ctx.tick, ctx.body, ctx.q)
        self._sampled = None
        if self.lift is not None:
            self.lift.count()
        self._pre_check(ctx, fault)
        if self.operating == ESTOP:
            self._estop_tick(ctx)
        elif self.operating == EDAMP:
            self._edamp_tick(ctx, requested)
        elif self.operating == LIFTED:
            self._lifted_tick(ctx, requested)
        else:
            self._normal_tick(ctx, requested)

    def _normal_tick(self, ctx: TickContext, requested: int) -> None:
        current = self.state.mode
        if self.operating == NORMAL or requested != self.target:
            nxt = self._next_state(ctx.block)
            if nxt != current:
                self.operating = TRANSITIONING
                self.target = nxt
                self.ban = 0
            else:
                self.operating = NORMAL
                self.target = None
                self.ban = BAN_TRANS if self.refusal else 0
                ctx.refused = self.refusal is not None
                self.state.run(ctx)
        if self.operating == TRANSITIONING:
            assert self.target is not None
            done = True
            if self.table.waits(current, self.target):
                self.state.run(ctx)  # the old state keeps control until it is ready
                done = self.state.ready()
            if done:
                self._switch(ctx, self.target)
                self.operating = NORMAL
                self.target = None

    def _edamp_tick(self, ctx: TickContext, requested: int) -> None:
        """EDAMP: damp for 1550 ticks, then leave by a normal transition (SPEC §5.6)."""
        self.hold_ticks += 1
        if self.hold_ticks > EDAMP_HOLD_TICKS or requested == RL_RESET:
            nxt = self._next_state(ctx.block)
            if nxt != self.state.mode:
                self._switch(ctx, nxt)
                self.operating = NORMAL
                self.footpos_error = 0
                return
        self.state.run(ctx)

    def _lifted_tick(self, ctx: TickContext, requested: int) -> None:
        """LIFTED: the lifted state for LIFTED_HOLD_TICKS, then the table's
        rules (SPEC §5.6); the modes it leaves for at once are taken any time."""
        self.hold_ticks += 1
        if self.hold_ticks >= LIFTED_HOLD_TICKS or requested in self.table.immediate.get(self.state.mode, ()):
            self.operating = NORMAL
            self._normal_tick(ctx, requested)
            return
        self.state.run(ctx)

    def _estop_tick(self, ctx: TickContext) -> None:
        self.hold_ticks += 1
        self.state.run(ctx)
        if self.hold_ticks >= ESTOP_HOLD_TICKS:
            self.operating = NORMAL

    def _pre_check(self, ctx: TickContext, fault: bool) -> None:
        if self.operating in (ESTOP, EDAMP):
            return   # keep the bits that caused it
        if self.fall is not None and self.fall.falling() and self.state.mode not in (OFF, DAMPER) \
                and not self._tips_on_purpose(ctx):
            # A humanoid tipping over: stop the motion, brace, then go limp
            # before the impact (the OFF state's protective posture).
            self.ori_error = 1
            self.fell = True
            self.estop_from = self.state.mode
            self.estop(ctx)
            if isinstance(self.state, Off):
                self.state.protect(ctx, self.fall.forward)
            return
        if self._fallen(ctx):
            self.estop(ctx)
            return
        if self.lift is not None and self.lift.lifted and self.state.mode in LIFT_CHECKED \
                and self.operating != LIFTED:
            self._enter_lifted(ctx)
            return
        self.footpos_error = self._workspace_bits   # 0 in states without the check (SPEC §5.9)
        if self.footpos_error or fault:
            self._enter_edamp(ctx)

    def _tips_on_purpose(self, ctx: TickContext) -> bool:
        """A script of the fall config's except_scripts (a getup) is playing."""
        assert self.fall is not None
        run = ctx.block.script
        script = getattr(run.playback, "script", None) if run is not None else None
        parts = {p.name for p in script.parts} if script is not None else set()
        return bool(parts & self.fall.cfg.except_scripts)

    def _fallen(self, ctx: TickContext) -> bool:
        """The orientation check (SPEC §5.8, §5.9): in a checked state with a
        command other than 12, ori_error follows the measured tilt; a tilt
        beyond the limit is a fall."""
        if self.attitude is None or self.state.mode not in ORIENTATION_CHECKED \
                or ctx.block.mode == RECOVERY_STAND:
            return False
        roll, pitch = self.attitude
        self.ori_error = int(abs(roll) >= ORIENTATION_LIMIT or abs(pitch) >= ORIENTATION_LIMIT)
        return bool(self.ori_error)

    def _enter_edamp(self, ctx: TickContext) -> None:
        """The passive damper at once, held for EDAMP_HOLD_TICKS (SPEC §5.6)."""
        self.operating = EDAMP
        self.hold_ticks = 0
        self.target = None
        self.ban = 0   # the damper's own refusal flag starts clear
        damper = self._damper()
        self.state.exit()
        self.state = damper
        damper.enter_passive(ctx)

    def _enter_lifted(self, ctx: TickContext) -> None:
        self.operating = LIFTED
        self.hold_ticks = 0
        self.target = None
        self.ban = 0
        self._switch(ctx, Lifted.mode)

    def _foot_workspace_bits(self, body: BodyEstimate | None, q: np.ndarray,
                             x_angle_deg: float, z_share: float) -> int:
        """footpos_error bits (SPEC §5.8, §5.9): bit 3i = leg i x, 3i+2 = z.
        The feet are the estimate's when there is one (the same measured
        joints' kinematics, computed once a tick)."""
        kin = self.state.robot.kin
        legs = len(kin.hip)
        if body is not None:
            feet = body.feet
            if feet.shape != (legs, 3):
                raise ValueError(f"foot workspace: {legs} feet expected, got {feet.shape}")
            feet_ptr = ffi.from_buffer("double[]", np.ascontiguousarray(feet, dtype=np.float64))
        else:
            # The measured joints' forward kinematics (as kin.forward), into
            # a buffer kept for the next tick.
            if self._feet is None or len(self._feet) != legs:
                self._feet = np.empty((legs, 3))
                self._feet_ptr = ffi.from_buffer("double[]", self._feet)
            q = np.ascontiguousarray(q, dtype=np.float64)
            if q.shape != (3 * legs,):
                raise ValueError(f"foot workspace: {3 * legs} joint angles expected, got {q.shape}")
            lib.mk_leg_forward(kin.native, ffi.from_buffer("double[]", q), self._feet_ptr, ffi.NULL)
            feet_ptr = self._feet_ptr
        reach = kin.reach
        return int(lib.mk_foot_workspace_bits(
            legs, feet_ptr, kin.native.hip, reach * math.sin(math.radians(x_angle_deg)),
            -reach * z_share, (reach + 1e-3) ** 2))

    # -- what the response reports ----------------------------------------------
    def reported(self, ctx: TickContext, motion_running: bool, motion_id: int,
                 motion_bar: int) -> tuple[int, int, int, int]:
        """(mode, gait_id, switch_status, order_process_bar) for the response."""
        mode = self.state.mode
        if motion_running and mode not in (OFF, DAMPER):
            mode, gait, bar = MOTION, motion_id, motion_bar
        else:
            gait = self.state.reported_gait(ctx)
            bar = self.state.progress(ctx)
        if self.ban > 0:
            status = self.ban
        else:
            status = self.operating
            if status == NORMAL and gait != ctx.block.gait_id and mode != MOTION:
                status = TRANSITIONING
        return mode, gait, status, bar
