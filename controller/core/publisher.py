"""What a tick publishes after the joint command: the response at the SPEC's
cadence (§1.8) and on every change, motor_ctrl_state in mode 15, the
odometry, the motion events, controller_status; and what the log and
last_error say of mode changes, failures, safety stops and refusals."""
from __future__ import annotations

from typing import Any

import numpy as np

from controller import msgs
from controller.behaviours.jump import TrajectoryMode
from controller.behaviours.scripted import ScriptedMode
from controller.behaviours.two_leg import TwoLegStand
from controller.core.fault_checks import FaultChecks
from controller.core.fsm import BAN_TRANS, EDAMP, ESTOP
from controller.core.gait_uploads import LOCOMOTION, GaitUploads
from controller.core.goals import to_msg
from controller.core.outbox import Outbox, Timing
from controller.core.sources import CommandSources
from controller.core.tick_state import TickState
from controller.protocol.block import FROM_TIMEOUT, Block
from controller.protocol.constants import MOTION_MODE

BOTH_FEET = 0b11              # humanoid contact: bit0 right sole, bit1 left sole
RESPONSE_EVERY = 10           # ticks: the 50 Hz baseline (SPEC §1.8)
ODOMETRY_EVERY = 10           # global_to_robot at 50 Hz (SPEC §1.8)
CONTACT_FORCE_N = 5.0


def _i32(x: int) -> int:
    """Counters wrap inside int32 rather than break the status encoder."""
    return x & 0x7FFFFFFF


class Publisher:
    def __init__(self, ctl: TickState, faults: FaultChecks, sources: CommandSources, gaits: GaitUploads) -> None:
        self.ctl = ctl
        self.faults = faults
        self.sources = sources
        self.gaits = gaits
        cfg = ctl.cfg
        self.failure_logged: str | None = None   # the current state's failure, once logged
        # The quadruped estimates foot forces from joint torques (SPEC §5.10);
        # the humanoid reports the feet its motion plans on the ground.
        self.contact = self.estimated_contact if cfg.kind == "quadruped" else self.planned_contact
        self.status_every = max(1, round(cfg.tick_hz / cfg.lcm.status_hz))
        self.response = msgs.robot_control_response_lcmt()
        self.motor_state = msgs.motor_ctrl_state_lcmt()   # published every tick in mode 15
        self.status = msgs.controller_status_t()
        self.status.num_joints = cfg.num_joints
        self.show_motor_errors()
        self.localization = msgs.localization_lcmt()

    def log_changes(self, now_ns: int, previous_state: int, active: Block,
                    reported: tuple[int, int, int, int]) -> None:
        ctl = self.ctl
        if ctl.fsm.mode != previous_state:
            if active.source != FROM_TIMEOUT:
                self.sources.lapsed = None
            ctl.log.info("mode_change", **{"from": ctl.cfg.fsm.name(previous_state)},
                         to=ctl.cfg.fsm.name(ctl.fsm.mode), tick=ctl.tick)
        failure = ctl.fsm.state.failure()
        if failure is not None and failure != self.failure_logged:
            ctl.counters.last_error = f"{ctl.cfg.fsm.name(ctl.fsm.mode)} failed: {failure}"
            ctl.log.error("motion_failed", mode=ctl.fsm.mode, reason=failure, tick=ctl.tick)
        self.failure_logged = failure
        if reported[2] in (EDAMP, ESTOP) and ctl.last_reported[2] != reported[2] \
                and not ctl.fault_now and not ctl.fsm.fell:   # a fall logs its own
            reason = self.safety_reason()
            ctl.counters.last_error = f"{'EDAMP' if reported[2] == EDAMP else 'ESTOP'}: {reason}"
            ctl.log.warning("safety_stop", status=reported[2], reason=reason, tick=ctl.tick)
        refused = reported[2] == BAN_TRANS
        new_block = active.uid != ctl.last_active.uid
        if refused and (ctl.last_reported[2] != BAN_TRANS or new_block):
            reason = self.refusal(active)
            ctl.counters.last_error = f"mode {active.mode} refused: {reason}"
            suppressed = ctl.limit.allow("mode_refused", now_ns)
            if suppressed is not None:
                ctl.log.warning("mode_refused", requested=active.mode, gait=active.gait_id,
                                state=ctl.cfg.fsm.name(ctl.fsm.mode), reason=reason,
                                suppressed=suppressed)

    def safety_reason(self) -> str:
        """Why the FSM's own checks stopped the robot (SPEC §5.8, §5.9): the
        feet outside their workspace (footpos_error bits 3i x, 3i+2 z of leg
        i) or the tilt (ori_error). Faults of the robot side log their own."""
        ctl = self.ctl
        fsm = ctl.fsm
        bits = fsm.footpos_error
        if bits:
            legs = ctl.cfg.legs
            out = [f"{legs[i] if i < len(legs) else i} {axis}" for i in range(len(legs))
                   for axis, bit in (("x", 0), ("z", 2)) if bits >> (3 * i + bit) & 1]
            return f"foot outside its workspace ({', '.join(out)}; footpos_error {bits:#x})"
        if fsm.ori_error and fsm.attitude is not None:
            roll, pitch = fsm.attitude
            return f"tilted: roll {roll:+.2f} rad, pitch {pitch:+.2f} rad (limit 1.3)"
        return "safety check"

    def refusal(self, active: Block) -> str:
        """Why `active` is refused: the FSM's reason, or for a motion why it
        did not expand, or for a user gait without a definition why its
        on-disk file was refused."""
        ctl = self.ctl
        reason = ctl.fsm.refusal or "refused"
        if self.sources.lapsed is not None and active.source != FROM_TIMEOUT:
            reason = f"{reason}: {self.sources.lapsed}"
        if active.mode == MOTION_MODE and self.gaits.motion_refusal:
            return self.gaits.motion_refusal
        loco = self.gaits.locomotion()
        if active.mode == LOCOMOTION and self.gaits.disk_gaits is not None and loco is not None \
                and reason == loco.refuses(active):
            return self.gaits.disk_gaits.refusal(active.gait_id) or reason
        return reason

    def publish(self, now_ns: int, out: Outbox, reported: tuple[int, int, int, int],
                timing: Timing | None) -> None:
        ctl = self.ctl
        self.show_motor_errors()
        mode, gait, status, bar = reported
        prev_mode, prev_gait, prev_status, prev_bar = ctl.last_reported
        utime = (now_ns + ctl.epoch_offset_ns) // 1000
        # The joint command is already in `out` (act()).

        # SPEC §1.8 cadence, plus (motiond) a message whenever the reported mode
        # or gait changes, so a client sees e.g. the timeout damper at once.
        changed = (mode, gait, status) != (prev_mode, prev_gait, prev_status)
        due = changed or ctl.tick % RESPONSE_EVERY == 0 or (bar >= 95 and prev_bar != 100)
        if due:
            r = self.response
            r.mode, r.gait_id, r.switch_status, r.order_process_bar = mode, gait, status, bar
            r.contact = self.contact()
            r.ori_error = ctl.fsm.ori_error
            r.footpos_error = ctl.fsm.footpos_error
            out.add("response", ctl.ch["response"], r.encode())

        if ctl.fsm.mode == 15:
            st = self.motor_state
            behaviour = ctl.fsm.state
            st.err_flag = int(getattr(behaviour, "err_flag", 0))
            age = getattr(behaviour, "age_ms", 0.0)
            st.ctrl_topic_interval = float(min(age, 1e9))
            out.add("joint", ctl.ch["motor_ctrl_state"], st.encode())

        if ctl.tick % ODOMETRY_EVERY == 0:
            ctl.odom.fill(self.localization, now_ns + ctl.epoch_offset_ns)
            out.add("joint", ctl.ch["global_to_robot"], self.localization.encode())
        for event in ctl.events + ctl.director.take_events():
            out.add("command", ctl.ch["motion_event"], to_msg(event, utime).encode())
        ctl.events.clear()

        # Status at its rate, and on every change of mode, gait or switch_status
        # so that tools see the exact tick of each change.
        if changed or ctl.tick % self.status_every == 0:
            out.add("joint", ctl.ch["status"], self.status_message(utime, reported, timing).encode())

    def show_motor_errors(self) -> None:
        """The motors' flag words (fault_checks.py) into the response (the
        leg joints') and the status (every joint's), in the wire's order,
        when they have changed."""
        faults = self.faults
        if faults.errors_changed:
            wire = faults.wire_errors()
            self.response.motor_error = wire[self.ctl.cfg.leg_indices].tolist()
            self.status.motor_error = wire.tolist()
            faults.errors_changed = False

    def planned_contact(self) -> int:
        """Humanoid: bit0 right sole, bit1 left sole, set while the running
        motion plans that foot on the ground (the walk's support foot; both
        in double support and whenever the robot is not walking). There is no
        force estimate: the measured leg torques are not used."""
        ctl = self.ctl
        planned = ctl.fsm.state.planned_contact()
        return BOTH_FEET if planned is None else planned

    def estimated_contact(self) -> int:
        """Bit i set when leg i's estimated foot force exceeds 5 N (SPEC §5.10)."""
        ctl = self.ctl
        legs = len(ctl.cfg.legs)
        q = ctl.q.reshape(legs, 3)
        tau = ctl.tau.reshape(legs, 3)
        jt = np.transpose(ctl.kin.jacobian(q), (0, 2, 1))
        try:
            force = np.linalg.solve(jt, tau[..., None])[..., 0]
        except np.linalg.LinAlgError:   # a singular leg (fully stretched): least squares
            force = np.einsum("lij,lj->li", np.linalg.pinv(jt), tau)
        mask = 0
        for i, f in enumerate(np.linalg.norm(force, axis=1)):
            if f > CONTACT_FORCE_N:
                mask |= 1 << i
        return mask

    def status_message(self, utime: int, reported: tuple[int, int, int, int],
                       timing: Timing | None) -> Any:
        ctl = self.ctl
        mode, gait, status, bar = reported
        s = self.status
        c = ctl.counters
        s.utime = utime
        s.tick = ctl.tick
        s.mode, s.gait_id, s.switch_status, s.progress = mode, gait, status, bar
        s.mode_name = ctl.cfg.fsm.name(mode)
        s.queue_depth = min(len(ctl.queue), 32767)
        s.block_remaining_ms = int(ctl.queue.remaining_ticks() * 1000 / ctl.cfg.tick_hz)
        s.last_life_count = ctl.intake.last_life_count
        s.commands_accepted = _i32(c.commands_accepted)
        s.heartbeats = _i32(c.heartbeats)
        s.packets_rejected = _i32(c.packets_rejected)
        s.commands_rejected = _i32(c.commands_rejected)
        s.timeouts = _i32(c.timeouts)
        tm = timing or ctl.timing
        s.tick_overruns = _i32(tm.tick_overruns)
        s.lateness_p50_us = tm.lateness_p50_us
        s.lateness_p99_us = tm.lateness_p99_us
        s.lateness_max_us = tm.lateness_max_us
        s.loop_p99_us = tm.loop_p99_us
        s.last_error = c.last_error[:200]
        s.script, s.script_progress = ctl.director.status()
        state = ctl.fsm.state
        if not s.script and isinstance(state, ScriptedMode) and state.playback is not None:
            pos = state.playback.position   # a scripted mode (64, 16, 22)
            s.script, s.script_progress = f"{pos.part} frame {pos.frame}", pos.progress
        elif not s.script and isinstance(state, (TrajectoryMode, TwoLegStand)):
            s.script, s.script_progress = state.status()   # a jump (16), the two-leg stand (64)
        return s
