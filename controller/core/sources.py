"""Which source drives the robot this tick (SPEC §2.2, §2.5, §11): a fault's
damper, motor_ctrl (mode 15), a motion goal, a full-body script, the
commanded blocks, or the heartbeat timeout's fallback; the priorities
between them; and the unresponsive-safety overrides (§3.5)."""
from __future__ import annotations

from typing import Any

from controller.behaviours.base import MotorCommand
from controller.core.director import SAFETY_MODES
from controller.core.fault_checks import FaultChecks
from controller.core.fsm import EDAMP, ESTOP, NORMAL
from controller.core.goals import EventKind
from controller.core.reports import Reports
from controller.core.tick_state import TickState
from controller.protocol.block import FROM_FAULT, FROM_GOAL, FROM_MOTOR, FROM_SCRIPT, FROM_TIMEOUT, Block

GOAL_STEP_HEIGHT = 0.04       # m, swing clearance of goal-driven walking
STAND_GAIT = 1
MOTOR_CTRL_LOST_NS = 500_000_000
OVERRIDE_OFF_TICKS = 10       # SPEC §3.5
OVERRIDE_DAMPER_TICKS = 25
# Which config `priorities` entry each block source counts as.
SOURCE_PRIORITY = {FROM_MOTOR: "motor_ctrl", FROM_GOAL: "motion_goal"}


class CommandSources:
    def __init__(self, ctl: TickState, reports: Reports, faults: FaultChecks) -> None:
        self.ctl = ctl
        self.reports = reports
        self.faults = faults
        self.motor_msg: Any = None
        self.motor_rx_ns = 0
        self.timed_out = False
        # Set when the heartbeat lapsed and the robot was laid down; a command
        # the fallback state refuses says so (cleared by the next mode change
        # a command makes).
        self.lapsed: str | None = None
        self.override_count = 0

    def motor_command(self, now_ns: int) -> MotorCommand | None:
        ctl = self.ctl
        msg = self.motor_msg
        if msg is None:
            return None
        jm = ctl.joint_map     # the client speaks the robot's convention, as joint_cmd does
        return MotorCommand(jm.positions_from_wire(msg.q_des), jm.signed_from_wire(msg.qd_des),
                            jm.plain_from_wire(msg.kp_des), jm.plain_from_wire(msg.kd_des),
                            jm.signed_from_wire(msg.tau_des), (now_ns - self.motor_rx_ns) / 1e6)

    def select(self, now_ns: int) -> None:
        ctl = self.ctl
        if ctl.shutting_down:
            ctl.queue.replace_all(Block(mode=7 if ctl.fsm.mode != 0 else 0, source=FROM_TIMEOUT))
            return
        if ctl.fault_now or self.faults.joint_watch.lost or self.faults.robot_faults.faulted:
            # Nothing else may command the robot until the fault is gone; the
            # fault's block then stays until a new command replaces it.
            if ctl.queue.blocks[0] is not self.faults.block:
                ctl.queue.replace_all(self.faults.block)
            return
        if ctl.queue.blocks[0] is not self.faults.block:
            self.faults.released()
        motor_fresh = self.motor_msg is not None and now_ns - self.motor_rx_ns < MOTOR_CTRL_LOST_NS
        if motor_fresh and self.outranked_by_script("motor_ctrl", 15):
            motor_fresh = False
        if motor_fresh:
            refusal = ctl.fsm.why_refused(15)
            if refusal is None:
                ctl.queue.replace_all(Block(mode=15, source=FROM_MOTOR))
                self.timed_out = False
                return
            self.reports.error(now_ns, f"motor_ctrl ignored: {refusal}", "motor_ctrl_ignored")
        if self.goal_source(now_ns):
            return
        body = ctl.director.body
        if body is not None and not body.ended and ctl.last_active.script is body:
            self.timed_out = False      # a full-body script keeps the robot commanded
            return
        if ctl.intake.fresh(now_ns):
            self.timed_out = False
            return
        mode = 7 if ctl.last_active.mode != 0 and ctl.fsm.mode != 0 else 0
        if not self.timed_out and ctl.intake.last_rx_ns is not None:
            ctl.counters.timeouts += 1
            self.lapsed = (f"the heartbeat lapsed (no command for {ctl.cfg.command_timeout_ms:g} ms), "
                           f"so the robot was sent to {ctl.cfg.fsm.name(mode)} ({mode})")
            ctl.counters.last_error = self.lapsed
            ctl.log.warning("command_timeout", fallback_mode=mode,
                            timeout_ms=ctl.cfg.command_timeout_ms)
        self.timed_out = True
        ctl.queue.replace_all(Block(mode=mode, pos_des=(0.0, 0.0, 0.24),
                                    step_height=(0.07, 0.03), source=FROM_TIMEOUT))

    def goal_source(self, now_ns: int) -> bool:
        """A running motion goal drives mode 11 (True). When a move ends, the
        robot is left in a locomotion stand and the command timeout starts
        over from that moment, as if the goal had been the last command."""
        ctl = self.ctl
        velocity, events = ctl.goals.step(now_ns, ctl.odom, ctl.battery_v)
        ctl.events += events
        if velocity is not None:
            ctl.queue.replace_all(Block(mode=11, gait_id=ctl.goal_gait, vel_des=velocity,
                                        step_height=(GOAL_STEP_HEIGHT,) * 2, source=FROM_GOAL))
            self.timed_out = False
            return True
        if any(e.kind == EventKind.GOAL_DONE for e in events) \
                and ctl.last_active.source == FROM_GOAL:
            ctl.queue.replace_all(Block(mode=11, gait_id=STAND_GAIT, source=FROM_GOAL))
            ctl.intake.last_rx_ns = now_ns
            self.timed_out = False
            return True
        return False

    def safety_override(self, active: Block, status: int, reported_mode: int) -> None:
        """Unresponsive-safety overrides (SPEC §3.5), applied at the next tick."""
        ctl = self.ctl
        if (status == ESTOP and active.mode != 0) or \
                (status == NORMAL and reported_mode == 0 and active.mode == 12):
            self.override_count += 1
            if self.override_count > OVERRIDE_OFF_TICKS:
                ctl.queue.override = 0
        elif status == EDAMP and active.mode != 7:
            self.override_count += 1
            if self.override_count > OVERRIDE_DAMPER_TICKS:
                ctl.queue.override = 7
        else:
            self.override_count = 0
            ctl.queue.override = None

    def priority(self, block: Block) -> int | None:
        """The priority of the motion `block` drives; None for the safety
        fallbacks (timeout, OFF, damper), which nothing outranks."""
        ctl = self.ctl
        if block.source in (FROM_TIMEOUT, FROM_FAULT) or block.mode == 0 or ctl.shutting_down:
            return None
        if block.script is not None:
            return int(block.script.priority)
        if block.source == FROM_SCRIPT:
            return ctl.cfg.scripts.default_priority if ctl.cfg.scripts else None
        return ctl.cfg.priorities[SOURCE_PRIORITY.get(block.source, "robot_control_cmd")]

    def outranked_by_script(self, source: str, mode: int) -> str | None:
        """Why `source` may not take over now (a full-body script of equal or
        higher priority plays), or None. OFF and the damper are never refused."""
        ctl = self.ctl
        body = ctl.director.body
        if mode in SAFETY_MODES or body is None or body.ended:
            return None
        mine = ctl.cfg.priorities[source]
        if body.priority < mine:
            return None
        return (f"script {body.name} (request {body.request_id}) plays at priority "
                f"{body.priority}, {source} has {mine}")
