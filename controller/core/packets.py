"""Intake: every packet of a tick into the controller's state, or counted
and refused with a reason (docs/VALIDATION.md). The robot side's
joint_state, imu and bridge_status (Controller.sense); the clients'
robot_control_cmd into the block queue, motor_ctrl, user gait uploads,
motion goals and script requests (Controller.act)."""
from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np

from controller import msgs
from controller.core.fault_checks import FaultChecks
from controller.core.gait_uploads import LOCOMOTION, USER_GAIT_HEADERS, GaitUploads
from controller.core.goals import Event, EventKind, Reason
from controller.core.outbox import Outbox
from controller.core.reports import Reports
from controller.core.sources import CommandSources
from controller.core.tick_state import TickState
from controller.logs import debug_enabled
from controller.protocol.block import COMMAND_WIRE

MOVE_GOALS = (1, 2)           # motion_goal_t kinds that walk (need the legs)
# Each fixed-size type's encoded size (docs/VALIDATION.md); robot_control_cmd_lcmt is
# read by unpack with COMMAND_WIRE, whose layout tests/test_intake.py checks against lcm-gen.
FIXED_SIZES = {kind: len(kind().encode()) for kind in (
    msgs.robot_control_cmd_lcmt, msgs.motor_ctrl_lcmt, msgs.motion_goal_t)}


def _finite(values: Any) -> bool:
    return all(map(math.isfinite, values))


class PacketIntake:
    def __init__(self, ctl: TickState, reports: Reports, faults: FaultChecks, sources: CommandSources,
                 gaits: GaitUploads) -> None:
        self.ctl = ctl
        self.reports = reports
        self.faults = faults
        self.sources = sources
        self.gaits = gaits

    def decode(self, now_ns: int, channel: str, kind: Any, data: bytes) -> Any:
        """The decoded message, or None after counting a bad packet."""
        size = FIXED_SIZES.get(kind)
        if size is not None and len(data) != size:
            self.reports.reject_packet(now_ns, channel, f"{len(data)} bytes, a {kind.__name__} has {size}")
            return None
        try:
            msg = kind.decode(data)
        except Exception as exc:  # wrong fingerprint, truncated: never raise out of the tick
            self.reports.reject_packet(now_ns, channel, f"not a valid {kind.__name__} ({exc})")
            return None
        if size is None and len(msg.encode()) != len(data):
            self.reports.reject_packet(now_ns, channel, f"{len(data)} bytes with trailing data")
            return None
        return msg

    def unpack(self, now_ns: int, channel: str, kind: Any, layout: struct.Struct,
               data: bytes) -> tuple[Any, ...] | None:
        """A fixed-layout type read with one unpack (`layout`: the fingerprint,
        then every field): the field values, or None after counting a bad
        packet as decode does."""
        if len(data) != layout.size:
            self.reports.reject_packet(now_ns, channel, f"{len(data)} bytes, a {kind.__name__} has {layout.size}")
            return None
        values = layout.unpack(data)
        if values[0] != kind._get_packed_fingerprint():
            self.reports.reject_packet(now_ns, channel, f"not a valid {kind.__name__} (wrong fingerprint)")
            return None
        return values[1:]

    def joint_state(self, now_ns: int, data: bytes) -> bool:
        """Take in a joint_state; True if it was valid."""
        ctl = self.ctl
        msg = self.decode(now_ns, ctl.ch["joint_state"], msgs.joint_state_t, data)
        if msg is None:
            return False
        n = ctl.cfg.num_joints
        if msg.num_joints != n:
            self.reports.reject_packet(now_ns, ctl.ch["joint_state"],
                                      f"{msg.num_joints} joints, this robot has {n}")
            return False
        if not (_finite(msg.position) and _finite(msg.velocity) and _finite(msg.torque)):
            self.reports.reject_packet(now_ns, ctl.ch["joint_state"], "a value is not finite")
            return False
        jm = ctl.joint_map
        jm.positions_from_wire(msg.position, out=ctl.q)
        jm.signed_from_wire(msg.velocity, out=ctl.qd)
        jm.signed_from_wire(msg.torque, out=ctl.tau)
        volts = float(msg.battery_voltage)
        ctl.battery_v = volts if math.isfinite(volts) and volts > 0.0 else None
        ctl.fsm.measured = True
        self.faults.fresh_joints = True
        outage_ns = self.faults.joint_watch.received(now_ns)
        if outage_ns is not None:
            self.faults.joint_state_back(now_ns, outage_ns)
        return True

    def imu(self, now_ns: int, data: bytes) -> None:
        ctl = self.ctl
        msg = self.decode(now_ns, ctl.ch["imu"], msgs.imu_t, data)
        if msg is None:
            return
        if not (_finite(msg.quaternion) and _finite(msg.gyro) and _finite(msg.accel)):
            self.reports.reject_packet(now_ns, ctl.ch["imu"], "a value is not finite")
            return
        norm = math.sqrt(sum(c * c for c in msg.quaternion))
        if abs(norm - 1.0) > 0.01:
            self.reports.reject_packet(now_ns, ctl.ch["imu"], f"quaternion norm {norm:.3f}, not 1")
            return
        ctl.imu_quat[:] = msg.quaternion
        ctl.imu_quat /= norm
        ctl.imu_gyro[:] = msg.gyro
        ctl.imu_accel[:] = msg.accel
        self.faults.fresh_imu = True
        outage_ns = self.faults.imu_watch.received(now_ns)
        if outage_ns is not None and ctl.limit.allow("imu_back", now_ns) is not None:
            ctl.log.info("imu_back", outage_ms=round(outage_ns / 1e6, 3))

    def bridge_status(self, now_ns: int, data: bytes) -> None:
        """A robot bridge's report: its motors' flag words join motor_error,
        and its faults damp the robot (RobotFaultWatch)."""
        ctl = self.ctl
        msg = self.decode(now_ns, ctl.ch["bridge_status"], msgs.bridge_status_t, data)
        if msg is None:
            return
        if msg.num_joints != ctl.cfg.num_joints:
            self.reports.reject_packet(now_ns, ctl.ch["bridge_status"],
                                      f"{msg.num_joints} joints, this robot has {ctl.cfg.num_joints}")
            return
        flags = np.zeros(ctl.cfg.num_joints, dtype=np.int32)
        flags[ctl.joint_map.order] = msg.motor_flags
        fault = (msg.reason or "no reason given") if msg.state == msgs.bridge_status_t.FAULT else ""
        self.faults.robot_faults.received(now_ns, flags, fault)
        self.faults.show_motor_errors()

    def command(self, now_ns: int, data: bytes, late: bool) -> None:
        # One unpack of the command's fixed layout: a flood of them is taken
        # in on the tick's path. late: it arrived while this tick ran (act()).
        ctl = self.ctl
        values = self.unpack(now_ns, ctl.ch["command"], msgs.robot_control_cmd_lcmt, COMMAND_WIRE, data)
        if values is None:
            return
        result = ctl.intake.receive_values(values, now_ns, late)
        if result.heartbeat:
            ctl.counters.heartbeats += 1
        elif result.error:
            ctl.counters.commands_rejected += 1
            self.reports.error(now_ns, result.error, "command_rejected")
        elif result.block is not None:
            ctl.counters.commands_accepted += 1
            block = result.block
            if debug_enabled():
                ctl.log.debug("command", mode=block.mode, gait=block.gait_id,
                              life_count=block.life_count, duration_ticks=block.duration)
            outranked = self.faults.joint_state_missing(now_ns) \
                or self.sources.outranked_by_script("robot_control_cmd", block.mode)
            if outranked:
                ctl.counters.commands_rejected += 1
                self.reports.error(now_ns, f"command mode {block.mode} refused: {outranked}",
                                  "command_refused")
                return
            if ctl.goals.active:
                ctl.events += ctl.goals.preempt(
                    now_ns, f"robot_control_cmd mode {block.mode} took over", ctl.odom)
            dropped = ctl.queue.enqueue(block)
            if dropped:
                ctl.counters.commands_rejected += 1
                self.reports.error(now_ns, f"command mode {block.mode} dropped: {dropped}", "command_dropped")

    def motor_ctrl(self, now_ns: int, data: bytes) -> None:
        ctl = self.ctl
        msg = self.decode(now_ns, ctl.ch["motor_ctrl"], msgs.motor_ctrl_lcmt, data)
        if msg is None:
            return
        if not all(_finite(getattr(msg, f)) for f in ("q_des", "qd_des", "kp_des", "kd_des", "tau_des")):
            ctl.counters.commands_rejected += 1
            self.reports.error(now_ns, "motor_ctrl rejected: a value is not finite", "command_rejected")
            return
        self.sources.motor_msg = msg
        self.sources.motor_rx_ns = now_ns

    def user_gait(self, now_ns: int, data: bytes, out: Outbox) -> None:
        """An upload on user_gait_file (SPEC §8.1): stored by its header and
        parsed at once, so a malformed file is answered 1 with a log line
        instead of failing when it is run (SPEC §11)."""
        ctl = self.ctl
        msg = self.decode(now_ns, ctl.ch["user_gait_file"], msgs.file_send_lcmt, data)
        if msg is None:
            return
        kind = next((k for h, k in USER_GAIT_HEADERS.items() if msg.data.startswith(h)), None)
        warnings: list[str] = []
        error: str | None = "the text starts with neither '# Gait Def' nor '# Gait Params'"
        if kind == "def":
            error = self.gaits.load_def(msg.data, warnings)
        elif kind == "params":
            error = self.gaits.load_params(msg.data, warnings)
        result = msgs.file_recv_lcmt()
        result.result = 0 if error is None else 1
        if error is None:
            assert kind is not None   # no header, no success
            self.gaits.user_gait[kind] = msg.data
            ctl.log.info("user_gait_file", kind=kind, size=len(msg.data), warnings=warnings[:5])
        else:
            ctl.counters.commands_rejected += 1
            self.reports.error(now_ns, f"user_gait_file upload refused: {error}", "user_gait_refused")
        out.add("command", ctl.ch["user_gait_result"], result.encode())

    def goal(self, now_ns: int, data: bytes) -> None:
        ctl = self.ctl
        msg = self.decode(now_ns, ctl.ch["motion_goal"], msgs.motion_goal_t, data)
        if msg is None:
            return
        outranked = self.faults.joint_state_missing(now_ns) or self.faults.damped_by_fault() \
            or self.sources.outranked_by_script("motion_goal", 11) or self.cannot_walk()
        if outranked and msg.kind in MOVE_GOALS:
            text = f"refused: {outranked}"
            ctl.counters.commands_rejected += 1
            self.reports.error(now_ns, f"motion goal {msg.goal_id}: {text}", "goal_refused")
            ctl.events.append(Event(EventKind.GOAL_DONE, msg.goal_id, msg.kind, Reason.REFUSED,
                                    text=text[:200]))
            return
        events = ctl.goals.on_goal(msg, now_ns, ctl.odom)
        for e in events:
            # Only a refusal is an error: the same call also ends a running
            # move (CANCELLED by a STOP, PREEMPTED by a new move) as asked.
            if e.kind == EventKind.GOAL_DONE and e.reason == Reason.REFUSED:
                ctl.counters.commands_rejected += 1
                self.reports.error(now_ns, f"motion goal {e.goal_id}: {e.text}", "goal_refused")
        ctl.events += events

    def script_request(self, now_ns: int, data: bytes) -> None:
        ctl = self.ctl
        msg = self.decode(now_ns, ctl.ch["script_request"], msgs.script_request_t, data)
        if msg is None:
            return
        refusal = ctl.director.request(msg, now_ns, ctl.epoch_offset_ns)
        if refusal:
            ctl.counters.commands_rejected += 1
            self.reports.error(now_ns, f"script request {msg.request_id} refused: {refusal}",
                              "script_refused")

    def cannot_walk(self) -> str | None:
        """Why a move goal cannot start from the current state (a lying
        robot: locomotion is not reachable from it), said at once rather
        than after an ACCEPTED."""
        ctl = self.ctl
        why = ctl.fsm.why_refused(LOCOMOTION)
        return None if why is None else f"{why}: stand the robot up first (mode 12)"
