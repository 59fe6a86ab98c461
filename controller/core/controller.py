"""Controller.step: every decision of one 2 ms tick, as a pure function of the
injected time and the packets received since the last tick.

No sockets, no clock reads, no sleeping: the runtime drains LCM into the
inbox, calls step and publishes the outbox. Tests run it on a fake clock.

Order of work in a tick (SPEC conventions): measured state; command intake and
queue processing (which see the previous tick's switch_status); the
unresponsive-safety check (§3.5, applied next tick); OFF handling or the FSM;
the kernel; the response, joint command and status.
"""
from __future__ import annotations

import math
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from controller import msgs
from controller.behaviours.base import (
    Behaviour,
    HumanoidRobot,
    Imu,
    MotorCommand,
    QuadrupedRobot,
    TickContext,
    make_robot,
)
from controller.behaviours.biped_locomotion import BipedLocomotion
from controller.behaviours.damper import Damper
from controller.behaviours.force_jump import ForceJump
from controller.behaviours.humanoid_pose import HumanoidPose
from controller.behaviours.humanoid_stand import HumanoidStand
from controller.behaviours.jump import TrajectoryMode
from controller.behaviours.lifted import Lifted
from controller.behaviours.locomotion import Locomotion
from controller.behaviours.motor import MotorCtrl
from controller.behaviours.off import Off
from controller.behaviours.pose import PoseCtrl
from controller.behaviours.posture import QpStand
from controller.behaviours.recovery import RecoveryStand
from controller.behaviours.rl_rapid import RlRapid, rapid_gait
from controller.behaviours.rl_reset import RlReset
from controller.behaviours.scripted import ScriptedMode
from controller.behaviours.two_leg import TwoLegStand
from controller.core.biped_estimator import BipedEstimator
from controller.core.director import SAFETY_MODES, Director, ScriptRun
from controller.core.estimator import QuadrupedEstimator
from controller.core.fall import FallDetector
from controller.core.faults import JointStateWatch, RobotFaultWatch, TrackingWatch
from controller.core.fsm import BAN_TRANS, EDAMP, ESTOP, NORMAL, Fsm
from controller.core.goals import (
    Event,
    EventKind,
    GoalExecutor,
    Reason,
    SpeedProfile,
    to_msg,
)
from controller.core.gyro_check import GyroCheck
from controller.core.odometry import Odometry
from controller.core.sensor_watch import Finding, SensorWatch
from controller.logs import RateLimit, debug_enabled, get_logger
from controller.motion.gait_table import GaitDefinition
from controller.motion.motions import MotionLibrary
from controller.motion.mpc import ConvexMpc
from controller.motion.planner import InlinePlanner, Planner
from controller.motion.playback import ScriptPlayback
from controller.motion.user_gait_files import UserGaitFiles, load_user_gaits
from controller.motion.usergait import (
    DEF_HEADER,
    PARAMS_HEADER,
    parse_gait_def,
    parse_gait_params,
)
from controller.protocol.block import (
    COMMAND_WIRE,
    FROM_FAULT,
    FROM_GOAL,
    FROM_MOTOR,
    FROM_SCRIPT,
    FROM_TIMEOUT,
    Block,
)
from controller.protocol.constants import MOTION_MODE, USER_GAIT
from controller.protocol.intake import Intake
from controller.protocol.queue import CommandQueue
from controller.robot.angles import quat_rpy
from controller.robot.config import Config
from controller.robot.humanoid_kinematics import FootPose
from controller.robot.native import Kernel, Payload

# One behaviour per mode, per robot kind; a mode the kind lacks is refused.
# Mode 11 only where the config has a locomotion (a gait generator or a walk).
BEHAVIOURS: dict[str, tuple[type[Behaviour], ...]] = {
    "quadruped": (Off, Damper, RecoveryStand, PoseCtrl, QpStand, MotorCtrl, Lifted, RlReset),
    "humanoid": (Off, Damper, HumanoidStand, HumanoidPose),
}
BOTH_FEET = 0b11              # humanoid contact: bit0 right sole, bit1 left sole
RESPONSE_EVERY = 10           # ticks: the 50 Hz baseline (SPEC §1.8)
ODOMETRY_EVERY = 10           # global_to_robot at 50 Hz (SPEC §1.8)
GOAL_STEP_HEIGHT = 0.04       # m, swing clearance of goal-driven walking
STAND_GAIT = 1
STILL = (0.0, 0.0, 0.0)
MOTOR_CTRL_LOST_NS = 500_000_000
MOVE_GOALS = (1, 2)           # motion_goal_t kinds that walk (need the legs)
CONTACT_FORCE_N = 5.0
OVERRIDE_OFF_TICKS = 10       # SPEC §3.5
OVERRIDE_DAMPER_TICKS = 25
USER_GAIT_HEADERS = {DEF_HEADER: "def", PARAMS_HEADER: "params"}
LOCOMOTION = 11
MOTOR_OFFLINE = 1             # motor_error bit0 (SPEC §5.9): set on every joint while
                              # joint_state is missing
# motiond's own motor_error bits (bits the driver's word leaves unused,
# docs/PROTOCOL.md): the sensor watch found this joint's encoder or motor
# broken; held until a new command replaces the fault's damper.
FOUND_ENCODER = 1 << 18
FOUND_MOTOR = 1 << 19
FOUND_BITS = FOUND_ENCODER | FOUND_MOTOR


@dataclass
class Counters:
    commands_accepted: int = 0
    heartbeats: int = 0
    packets_rejected: int = 0
    commands_rejected: int = 0
    timeouts: int = 0
    last_error: str = ""


@dataclass
class Timing:
    """Loop telemetry the runtime measures; copied into controller_status."""
    lateness_p50_us: float = 0.0
    lateness_p99_us: float = 0.0
    lateness_max_us: float = 0.0
    loop_p99_us: float = 0.0
    tick_overruns: int = 0


@dataclass
class Outbox:
    """Encoded messages to publish: (port name, channel, bytes-like). The
    controller reuses its outbox and the joint command's buffer, so both are
    valid until the next step: publish them, or copy what you keep."""
    messages: list[tuple[str, str, Payload]] = field(default_factory=list)

    def add(self, port: str, channel: str, data: Payload) -> None:
        self.messages.append((port, channel, data))

    def get(self, channel: str) -> Payload | None:
        for _, ch, data in self.messages:
            if ch == channel:
                return data
        return None


# Types whose encoding has one size; any other length is rejected before decoding.
STAND_MODE = 12              # where the robot goes when a full-body script ends
DAMPER_MODE = 7              # ... when a getup failed twice
GETUP_UPRIGHT = 0.35         # rad: a getup that ends further from upright left the robot down
# Which config `priorities` entry each block source counts as.
SOURCE_PRIORITY = {FROM_MOTOR: "motor_ctrl", FROM_GOAL: "motion_goal"}
# Each fixed-size type's encoded size (docs/VALIDATION.md); robot_control_cmd_lcmt is
# read by _unpack with COMMAND_WIRE, whose layout tests/test_intake.py checks against lcm-gen.
FIXED_SIZES = {kind: len(kind().encode()) for kind in (
    msgs.robot_control_cmd_lcmt, msgs.motor_ctrl_lcmt, msgs.motion_goal_t)}


def _i32(x: int) -> int:
    """Counters wrap inside int32 rather than break the status encoder."""
    return x & 0x7FFFFFFF


def _finite(values: Any) -> bool:
    return all(map(math.isfinite, values))


class Controller:
    def __init__(self, cfg: Config, epoch_offset_ns: int = 0, planner: Planner | None = None) -> None:
        self.cfg = cfg
        # now_ns is a monotonic clock; message utimes are now + this offset.
        self.epoch_offset_ns = epoch_offset_ns
        self.shutting_down = False
        self.log = get_logger("motiond.controller")
        # No joint target moves faster than its velocity limit, even when a
        # command or a segment would make it jump.
        self.kernel = Kernel(cfg.q_min, cfg.q_max, cfg.v_max, step_max=cfg.v_max * cfg.dt)
        # The bridge-facing messages speak the robot's own joint convention.
        self.joint_map = cfg.joint_map
        if not self.joint_map.identity:
            self.kernel.set_joint_map(self.joint_map.order, self.joint_map.direction_wire,
                                      self.joint_map.offset_wire)
        self.robot = make_robot(cfg, self.kernel)
        self.kin = self.robot.kin
        # The MPC of closed-loop mode 11: solved inline (deterministic, the
        # tests and in-process trials) unless the caller hands in a worker.
        if planner is None and cfg.balance is not None:
            planner = InlinePlanner(ConvexMpc(cfg.balance, len(cfg.legs)), cfg.balance.latency_ticks)
        self.planner = planner
        self.robot.planner = planner
        kinds = BEHAVIOURS[cfg.kind] + ((Locomotion,) if cfg.locomotion is not None else ()) \
            + ((BipedLocomotion,) if cfg.walk is not None else ()) \
            + ((ForceJump,) if cfg.kind == "quadruped" and cfg.balance is not None else ()) \
            + ((RlRapid,) if cfg.locomotion is not None and cfg.balance is not None
               and rapid_gait(cfg.locomotion.gaits_dir, len(cfg.legs)) is not None else ())
        self.director = Director(cfg, self.kernel)
        self.fsm = Fsm(cfg.fsm, {b.mode: b(self.robot) for b in kinds} | self._scripted_modes())
        if cfg.fall is not None:
            self.fsm.fall = FallDetector(cfg.fall, cfg.dt)
        # The quadruped estimates foot forces from joint torques (SPEC §5.10);
        # the humanoid reports the feet its motion plans on the ground.
        self._contact = self._estimated_contact if cfg.kind == "quadruped" else self._planned_contact
        self.queue = CommandQueue(cfg.command_queue_capacity, expand_motion=self._expand_motion)
        self.user_params: list[Block] = []
        self.motion_refusal = ""      # why the last mode-62 block could not expand
        self.failure_logged: str | None = None   # the current state's failure, once logged
        for error in getattr(self.fsm.behaviours.get(12), "errors", []):
            self.log.error("roll_over_refused", reason=error)
        self.motions = MotionLibrary(cfg.motions.directory, cfg.motions.files,
                                     1000.0 / cfg.tick_hz, cfg.motions.unmapped,
                                     cfg.motions.refused) if cfg.motions else None
        if self.motions is not None:
            for motion_id, error in sorted(self.motions.errors.items()):
                self.log.error("motion_refused", motion=motion_id, reason=error)
        for err in self.director.mof_errors:
            self.log.error("mof_refused", file=err.source, line=err.line, reason=err.reason)
        self.now_ns = 0
        # Until a command arrives the controller resolves to OFF (SPEC §2.5); the
        # queue is never empty, even when the first packet queues nothing.
        self.queue.replace_all(Block(mode=0, source=FROM_TIMEOUT))
        tick_ms = 1000.0 / cfg.tick_hz
        self.intake = Intake(int(cfg.command_timeout_ms * 1e6), tick_ms)
        self.ch = cfg.lcm.channels
        self.tick = 0
        self.counters = Counters()
        self.timing = Timing()
        self.limit = RateLimit()
        n = cfg.num_joints
        self.q = np.zeros(n)
        self.qd = np.zeros(n)
        self.tau = np.zeros(n)
        self.motor_msg: Any = None
        self.motor_rx_ns = 0
        self.user_gait: dict[str, str] = {}
        # User gaits as mode 11 runs them (SPEC §8.2): the on-disk ones
        # (config locomotion.user_gaits: 80-100 and 110's default), read once
        # here, and the last Def uploaded for 110.
        self.uploaded_gait: GaitDefinition | None = None
        self.disk_gaits = self._load_disk_gaits()
        self.timed_out = False
        # Set when the heartbeat lapsed and the robot was laid down; a command
        # the fallback state refuses says so (cleared by the next mode change
        # a command makes).
        self.lapsed: str | None = None
        self.override_count = 0
        # Faults that damp the robot on their own (controller/core/faults.py): the
        # damper (or OFF) block a fault holds the robot in until a new command.
        self.joint_watch = JointStateWatch(cfg.safety.joint_state_timeout_ms, cfg.tick_hz)
        self.imu_watch = JointStateWatch(cfg.safety.imu_timeout_ms, cfg.tick_hz)
        self.tracking = TrackingWatch(cfg.safety, n, cfg.tick_hz)
        self.sensor_watch = SensorWatch(cfg.safety.sensors, cfg.joint_names, cfg.torque_limit,
                                        cfg.safety.tracking_min_kp, cfg.tick_hz)
        self._fresh_joints = self._fresh_imu = False    # taken in this tick (the sensor watch's)
        self.robot_faults = RobotFaultWatch(cfg.joint_names, cfg.tick_hz)
        self.fault_block = Block(mode=7, source=FROM_FAULT)
        self.fault_now = False        # a fault tripped this tick: the FSM enters EDAMP
        self.status_every = max(1, round(cfg.tick_hz / cfg.lcm.status_hz))
        self.response = msgs.robot_control_response_lcmt()
        # Motor fault bits per joint (the controller's order), published in
        # the wire's (joint_map): controller_status carries every joint's, the
        # response's motor_error[12] the leg joints' (cfg.leg_indices),
        # wherever they are. The sim reports no faults.
        self.motor_error = np.zeros(n, dtype=np.int32)
        self.response.motor_error = self._wire_errors()[cfg.leg_indices].tolist()
        self.joint_cmd_fingerprint = int.from_bytes(msgs.joint_command_t._get_packed_fingerprint(), "big")
        self.out = Outbox()
        self.motor_state = msgs.motor_ctrl_state_lcmt()   # published every tick in mode 15
        self.status = msgs.controller_status_t()
        self.status.num_joints = n
        self.status.motor_error = self._wire_errors().tolist()
        # The previous tick's active block and (mode, gait, switch_status, bar):
        # intake, the cadence and the overrides all look one tick back (SPEC).
        self.last_active: Block = self.queue.blocks[0]
        self.last_reported = (0, 0, NORMAL, 100)
        # Odometry integrates the body velocity the locomotion drives; goals
        # walk by it (SPEC §1.6; the Motion Module API of the seeds).
        self.odom = Odometry()
        # The IMU (imu_t, from the robot bridge or the physics sim) and, on a
        # quadruped, the state estimate from it and the legs
        # (controller/core/estimator.py); odometry walks by the estimate while
        # the IMU is fresh (imu_watch: no older than safety.imu_timeout_ms),
        # by the commanded velocity otherwise.
        self.imu_quat = np.array([1.0, 0.0, 0.0, 0.0])
        self.imu_gyro = np.zeros(3)
        self.imu_accel = np.zeros(3)
        self.imu = Imu()            # the behaviours' view of it (TickContext.imu)
        self.estimator = QuadrupedEstimator(self.kin, len(cfg.legs), cfg.dt, cfg.estimator) \
            if cfg.kind == "quadruped" else None
        # The gyro against the loaded feet (controller/core/gyro_check.py).
        self.gyro_check = GyroCheck(cfg.safety.sensors, len(cfg.legs), self.kin.foot_radius, cfg.dt) \
            if self.estimator is not None else None
        # A biped's leg odometry (controller/core/biped_estimator.py).
        self.biped = BipedEstimator(cfg.dt) if cfg.kind == "humanoid" else None
        self.soles: tuple[FootPose, FootPose] | None = None   # its measured soles (TickContext)
        self.localization = msgs.localization_lcmt()
        loco = cfg.locomotion or cfg.walk
        self.goals = GoalExecutor(SpeedProfile(*loco.goal_profile) if loco else None)
        self.goal_gait = loco.default_gait if loco else STAND_GAIT
        self.events: list = []
        self.battery_v: float | None = None
        self.script_holds: set[int] = set()   # overlays already logged as outranking the mode
        self.script_state: Behaviour = self.fsm.state

    def _scripted_modes(self) -> dict[int, Behaviour]:
        """Modes that replay scripts (64, 16, 22) and the script mode; each
        script and chain is checked now, and a bad one is logged and refused."""
        sc = self.cfg.scripts
        for error in self.director.library.errors:
            self.log.error("script_refused", file=error.where, reason=str(error))
        if sc is None:
            return {}
        modes: dict[int, Behaviour] = {}
        for mode, mode_cfg in sc.modes.items():
            behaviour: ScriptedMode | TrajectoryMode
            if mode_cfg.kind == "two_leg":
                assert isinstance(self.robot, QuadrupedRobot)
                modes[mode] = TwoLegStand(self.robot, gaits=frozenset(mode_cfg.gaits))
                continue
            if mode_cfg.kind == "trajectory":
                behaviour = TrajectoryMode(self.robot, mode, mode_cfg, sc.trajectories)
            else:
                behaviour = ScriptedMode(self.robot, mode, mode_cfg, self.director.library)
            for gait, reason in sorted(behaviour.errors.items()):
                self.log.error("scripted_gait_refused", mode=mode, gait=gait, reason=reason)
            modes[mode] = behaviour
        if sc.mode is not None:
            modes[sc.mode] = ScriptedMode(self.robot, sc.mode, None, self.director.library,
                                          self.director)
        return modes

    # -- intake ------------------------------------------------------------------
    def _reject_packet(self, now_ns: int, channel: str, reason: str) -> None:
        self.counters.packets_rejected += 1
        self._error(now_ns, f"packet on {channel} dropped: {reason}", "packet_rejected")

    def _error(self, now_ns: int, text: str, event: str) -> None:
        self.counters.last_error = text
        suppressed = self.limit.allow(event, now_ns)
        if suppressed is not None:
            self.log.warning(event, reason=text, suppressed=suppressed)

    def _decode(self, now_ns: int, channel: str, kind: Any, data: bytes) -> Any:
        """The decoded message, or None after counting a bad packet."""
        size = FIXED_SIZES.get(kind)
        if size is not None and len(data) != size:
            self._reject_packet(now_ns, channel, f"{len(data)} bytes, a {kind.__name__} has {size}")
            return None
        try:
            msg = kind.decode(data)
        except Exception as exc:  # wrong fingerprint, truncated: never raise out of the tick
            self._reject_packet(now_ns, channel, f"not a valid {kind.__name__} ({exc})")
            return None
        if size is None and len(msg.encode()) != len(data):
            self._reject_packet(now_ns, channel, f"{len(data)} bytes with trailing data")
            return None
        return msg

    def _unpack(self, now_ns: int, channel: str, kind: Any, layout: struct.Struct,
                data: bytes) -> tuple[Any, ...] | None:
        """A fixed-layout type read with one unpack (`layout`: the fingerprint,
        then every field): the field values, or None after counting a bad
        packet as _decode does."""
        if len(data) != layout.size:
            self._reject_packet(now_ns, channel, f"{len(data)} bytes, a {kind.__name__} has {layout.size}")
            return None
        values = layout.unpack(data)
        if values[0] != kind._get_packed_fingerprint():
            self._reject_packet(now_ns, channel, f"not a valid {kind.__name__} (wrong fingerprint)")
            return None
        return values[1:]

    def _on_joint_state(self, now_ns: int, data: bytes) -> bool:
        """Take in a joint_state; True if it was valid."""
        msg = self._decode(now_ns, self.ch["joint_state"], msgs.joint_state_t, data)
        if msg is None:
            return False
        n = self.cfg.num_joints
        if msg.num_joints != n:
            self._reject_packet(now_ns, self.ch["joint_state"],
                                f"{msg.num_joints} joints, this robot has {n}")
            return False
        if not (_finite(msg.position) and _finite(msg.velocity) and _finite(msg.torque)):
            self._reject_packet(now_ns, self.ch["joint_state"], "a value is not finite")
            return False
        jm = self.joint_map
        jm.positions_from_wire(msg.position, out=self.q)
        jm.signed_from_wire(msg.velocity, out=self.qd)
        jm.signed_from_wire(msg.torque, out=self.tau)
        volts = float(msg.battery_voltage)
        self.battery_v = volts if math.isfinite(volts) and volts > 0.0 else None
        self.fsm.measured = True
        self._fresh_joints = True
        outage_ns = self.joint_watch.received(now_ns)
        if outage_ns is not None:
            self._joint_state_back(now_ns, outage_ns)
        return True

    def _on_imu(self, now_ns: int, data: bytes) -> None:
        msg = self._decode(now_ns, self.ch["imu"], msgs.imu_t, data)
        if msg is None:
            return
        if not (_finite(msg.quaternion) and _finite(msg.gyro) and _finite(msg.accel)):
            self._reject_packet(now_ns, self.ch["imu"], "a value is not finite")
            return
        norm = math.sqrt(sum(c * c for c in msg.quaternion))
        if abs(norm - 1.0) > 0.01:
            self._reject_packet(now_ns, self.ch["imu"], f"quaternion norm {norm:.3f}, not 1")
            return
        self.imu_quat[:] = msg.quaternion
        self.imu_quat /= norm
        self.imu_gyro[:] = msg.gyro
        self.imu_accel[:] = msg.accel
        self._fresh_imu = True
        outage_ns = self.imu_watch.received(now_ns)
        if outage_ns is not None and self.limit.allow("imu_back", now_ns) is not None:
            self.log.info("imu_back", outage_ms=round(outage_ns / 1e6, 3))

    def _on_bridge_status(self, now_ns: int, data: bytes) -> None:
        """A robot bridge's report: its motors' flag words join motor_error,
        and its faults damp the robot (RobotFaultWatch)."""
        msg = self._decode(now_ns, self.ch["bridge_status"], msgs.bridge_status_t, data)
        if msg is None:
            return
        if msg.num_joints != self.cfg.num_joints:
            self._reject_packet(now_ns, self.ch["bridge_status"],
                                f"{msg.num_joints} joints, this robot has {self.cfg.num_joints}")
            return
        flags = np.zeros(self.cfg.num_joints, dtype=np.int32)
        flags[self.joint_map.order] = msg.motor_flags
        fault = (msg.reason or "no reason given") if msg.state == msgs.bridge_status_t.FAULT else ""
        self.robot_faults.received(now_ns, flags, fault)
        self._show_motor_errors()

    def _estimating(self, now_ns: int) -> bool:
        """A quadruped with a fresh IMU: the estimate is live."""
        return self.estimator is not None and self.imu_watch.fresh(now_ns)

    def _body_estimate(self, now_ns: int) -> QuadrupedEstimator | None:
        """The estimate for the behaviours, while it is live."""
        est = self.estimator
        return est if est is not None and est.initialised and self.imu_watch.fresh(now_ns) else None

    def _take_attitude(self, now_ns: int, measured: bool) -> None:
        """Once per tick, after the sensors: the state estimate (a quadruped
        with a fresh IMU and a new joint_state), and the roll and pitch the
        orientation check and the odometry report (None without a fresh IMU)."""
        if not self.imu_watch.fresh(now_ns):
            self.fsm.attitude = None
            if self.fsm.fall is not None:
                self.fsm.fall.update(None)
            if self.biped is not None:
                self.biped.reset()
            return
        roll, pitch, _ = quat_rpy(self.imu_quat)
        self.fsm.attitude = roll, pitch
        imu = self.imu
        imu.roll, imu.pitch = roll, pitch
        imu.gyro[:] = self.imu_gyro
        if self.fsm.fall is not None:
            self.fsm.fall.update(imu)
        biped = self.biped
        if biped is not None and measured and isinstance(self.robot, HumanoidRobot):
            right, left = self.soles = self.robot.feet(self.q)
            biped.step((right.position, left.position), self.imu_quat, self.imu_gyro,
                       self.fsm.state.planned_contact())
            self.odom.z, self.odom.roll, self.odom.pitch = float(biped.position[2]), roll, pitch
        est = self.estimator
        if est is None:
            return
        if measured:
            est.step(self.q, self.qd, self.tau, self.imu_quat, self.imu_gyro, self.imu_accel,
                     self.fsm.state.planned_contact())
        self.odom.z, self.odom.roll, self.odom.pitch = float(est.position[2]), roll, pitch

    def _on_command(self, now_ns: int, data: bytes, late: bool) -> None:
        # One unpack of the command's fixed layout: a flood of them is taken
        # in on the tick's path. late: it arrived while this tick ran (act()).
        values = self._unpack(now_ns, self.ch["command"], msgs.robot_control_cmd_lcmt, COMMAND_WIRE, data)
        if values is None:
            return
        result = self.intake.receive_values(values, now_ns, late)
        if result.heartbeat:
            self.counters.heartbeats += 1
        elif result.error:
            self.counters.commands_rejected += 1
            self._error(now_ns, result.error, "command_rejected")
        elif result.block is not None:
            self.counters.commands_accepted += 1
            block = result.block
            if debug_enabled():
                self.log.debug("command", mode=block.mode, gait=block.gait_id,
                               life_count=block.life_count, duration_ticks=block.duration)
            outranked = self._joint_state_missing(now_ns) \
                or self._outranked_by_script("robot_control_cmd", block.mode)
            if outranked:
                self.counters.commands_rejected += 1
                self._error(now_ns, f"command mode {block.mode} refused: {outranked}",
                            "command_refused")
                return
            if self.goals.active:
                self.events += self.goals.preempt(
                    now_ns, f"robot_control_cmd mode {block.mode} took over", self.odom)
            dropped = self.queue.enqueue(block)
            if dropped:
                self.counters.commands_rejected += 1
                self._error(now_ns, f"command mode {block.mode} dropped: {dropped}", "command_dropped")

    def _on_motor_ctrl(self, now_ns: int, data: bytes) -> None:
        msg = self._decode(now_ns, self.ch["motor_ctrl"], msgs.motor_ctrl_lcmt, data)
        if msg is None:
            return
        if not all(_finite(getattr(msg, f)) for f in ("q_des", "qd_des", "kp_des", "kd_des", "tau_des")):
            self.counters.commands_rejected += 1
            self._error(now_ns, "motor_ctrl rejected: a value is not finite", "command_rejected")
            return
        self.motor_msg = msg
        self.motor_rx_ns = now_ns

    def _on_user_gait(self, now_ns: int, data: bytes, out: Outbox) -> None:
        """An upload on user_gait_file (SPEC §8.1): stored by its header and
        parsed at once, so a malformed file is answered 1 with a log line
        instead of failing when it is run (SPEC §11)."""
        msg = self._decode(now_ns, self.ch["user_gait_file"], msgs.file_send_lcmt, data)
        if msg is None:
            return
        kind = next((k for h, k in USER_GAIT_HEADERS.items() if msg.data.startswith(h)), None)
        warnings: list[str] = []
        error: str | None = "the text starts with neither '# Gait Def' nor '# Gait Params'"
        if kind == "def":
            error = self._load_gait_def(msg.data, warnings)
        elif kind == "params":
            error = self._load_gait_params(msg.data, warnings)
        result = msgs.file_recv_lcmt()
        result.result = 0 if error is None else 1
        if error is None:
            assert kind is not None   # no header, no success
            self.user_gait[kind] = msg.data
            self.log.info("user_gait_file", kind=kind, size=len(msg.data), warnings=warnings[:5])
        else:
            self.counters.commands_rejected += 1
            self._error(now_ns, f"user_gait_file upload refused: {error}", "user_gait_refused")
        out.add("command", self.ch["user_gait_result"], result.encode())

    def _load_gait_def(self, text: str, warnings: list[str]) -> str | None:
        loco = self._locomotion()
        if loco is None:
            return "this robot has no locomotion that takes user gaits"
        try:
            gait_def = parse_gait_def(text, warnings=warnings)
        except ValueError as exc:
            return str(exc)
        self.uploaded_gait = gait_def.definition(USER_GAIT, "uploaded user gait", "user_gait_file")
        loco.set_user_gait(self.uploaded_gait)
        return None

    def _locomotion(self) -> Locomotion | None:
        loco = self.fsm.behaviours.get(LOCOMOTION)
        return loco if isinstance(loco, Locomotion) else None

    def _load_disk_gaits(self) -> UserGaitFiles | None:
        """The on-disk user gaits (controller/motion/user_gait_files.py), each
        registered with mode 11; a refused file is logged with its reason."""
        loco = self._locomotion()
        directory = self.cfg.locomotion.user_gaits if self.cfg.locomotion is not None else None
        if loco is None or directory is None:
            return None
        found = load_user_gaits(directory)
        for gait_id, reason in sorted(found.errors.items()):
            self.log.error("disk_user_gait_refused", gait=gait_id, reason=reason)
        for gait in found.gaits.values():
            loco.set_user_gait(gait)
        return found

    def _select_user_gait(self, active: Block) -> None:
        """SPEC §8.2: the commanded mode-11 gait turning to 110 loads the
        uploaded Def (again: leaving OFF put the on-disk default back)."""
        was = self.last_active
        if self.uploaded_gait is not None and (active.mode, active.gait_id) == (LOCOMOTION, USER_GAIT) \
                and (was.mode, was.gait_id) != (LOCOMOTION, USER_GAIT):
            loco = self._locomotion()
            assert loco is not None        # there is an upload
            loco.set_user_gait(self.uploaded_gait)

    def _left_off(self) -> None:
        """SPEC §8.2: leaving OFF reloads the on-disk user gaits, and 110 is
        the on-disk default until the commanded gait next turns to 110. Only
        110 can have changed: 80-100 are the files read at start (motiond
        reads no file inside a tick; a changed file needs a restart)."""
        default = self.disk_gaits.gaits.get(USER_GAIT) if self.disk_gaits is not None else None
        loco = self._locomotion()
        if default is not None and loco is not None:
            loco.set_user_gait(default)

    def _load_gait_params(self, text: str, warnings: list[str]) -> str | None:
        try:
            blocks = parse_gait_params(text, 1000.0 / self.cfg.tick_hz, warnings=warnings)
        except ValueError as exc:
            return str(exc)
        self.user_params = blocks
        return None

    def _expand_motion(self, block: Block) -> list[Block] | None:
        """The steps of a mode-62 motion (SPEC §4.1): 110 runs the uploaded
        Gait Params, other ids the configured motion library."""
        if block.gait_id == USER_GAIT:
            if not self.user_params:
                self.motion_refusal = "motion 110 needs Gait Params uploaded on user_gait_file"
                return None
            return [b.again() for b in self.user_params]
        if self.motions is None:
            self.motion_refusal = "this robot has no motion library"
            return None
        steps = self.motions.expand(block.gait_id, self.queue.motion_id)
        if steps is None:
            self.motion_refusal = self.motions.why_missing(block.gait_id)
        return steps

    def _on_goal(self, now_ns: int, data: bytes) -> None:
        msg = self._decode(now_ns, self.ch["motion_goal"], msgs.motion_goal_t, data)
        if msg is None:
            return
        outranked = self._joint_state_missing(now_ns) or self._damped_by_fault() \
            or self._outranked_by_script("motion_goal", 11) or self._cannot_walk()
        if outranked and msg.kind in MOVE_GOALS:
            text = f"refused: {outranked}"
            self.counters.commands_rejected += 1
            self._error(now_ns, f"motion goal {msg.goal_id}: {text}", "goal_refused")
            self.events.append(Event(EventKind.GOAL_DONE, msg.goal_id, msg.kind, Reason.REFUSED,
                                     text=text[:200]))
            return
        events = self.goals.on_goal(msg, now_ns, self.odom)
        for e in events:
            # Only a refusal is an error: the same call also ends a running
            # move (CANCELLED by a STOP, PREEMPTED by a new move) as asked.
            if e.kind == EventKind.GOAL_DONE and e.reason == Reason.REFUSED:
                self.counters.commands_rejected += 1
                self._error(now_ns, f"motion goal {e.goal_id}: {e.text}", "goal_refused")
        self.events += events

    def _cannot_walk(self) -> str | None:
        """Why a move goal cannot start from the current state (a lying
        robot: locomotion is not reachable from it), said at once rather
        than after an ACCEPTED."""
        why = self.fsm.why_refused(LOCOMOTION)
        return None if why is None else f"{why}: stand the robot up first (mode 12)"

    # -- source selection (SPEC §2.2, §2.5, §11) --------------------------------------
    def _motor_command(self, now_ns: int) -> MotorCommand | None:
        msg = self.motor_msg
        if msg is None:
            return None
        jm = self.joint_map     # the client speaks the robot's convention, as joint_cmd does
        return MotorCommand(jm.positions_from_wire(msg.q_des), jm.signed_from_wire(msg.qd_des),
                            jm.plain_from_wire(msg.kp_des), jm.plain_from_wire(msg.kd_des),
                            jm.signed_from_wire(msg.tau_des), (now_ns - self.motor_rx_ns) / 1e6)

    def shutdown(self) -> None:
        """From now on command the passive damper, whatever arrives (SIGTERM)."""
        self.shutting_down = True

    def _select_source(self, now_ns: int) -> None:
        if self.shutting_down:
            self.queue.replace_all(Block(mode=7 if self.fsm.mode != 0 else 0, source=FROM_TIMEOUT))
            return
        if self.fault_now or self.joint_watch.lost or self.robot_faults.faulted:
            # Nothing else may command the robot until the fault is gone; the
            # fault's block then stays until a new command replaces it.
            if self.queue.blocks[0] is not self.fault_block:
                self.queue.replace_all(self.fault_block)
            return
        if self.queue.blocks[0] is not self.fault_block and (self.motor_error & FOUND_BITS).any():
            self.motor_error &= ~FOUND_BITS     # a new command took over from the fault's damper
            self._show_motor_errors()
        motor_fresh = self.motor_msg is not None and now_ns - self.motor_rx_ns < MOTOR_CTRL_LOST_NS
        if motor_fresh and self._outranked_by_script("motor_ctrl", 15):
            motor_fresh = False
        if motor_fresh:
            refusal = self.fsm.why_refused(15)
            if refusal is None:
                self.queue.replace_all(Block(mode=15, source=FROM_MOTOR))
                self.timed_out = False
                return
            self._error(now_ns, f"motor_ctrl ignored: {refusal}", "motor_ctrl_ignored")
        if self._goal_source(now_ns):
            return
        body = self.director.body
        if body is not None and not body.ended and self.last_active.script is body:
            self.timed_out = False      # a full-body script keeps the robot commanded
            return
        if self.intake.fresh(now_ns):
            self.timed_out = False
            return
        mode = 7 if self.last_active.mode != 0 and self.fsm.mode != 0 else 0
        if not self.timed_out and self.intake.last_rx_ns is not None:
            self.counters.timeouts += 1
            self.lapsed = (f"the heartbeat lapsed (no command for {self.cfg.command_timeout_ms:g} ms), "
                           f"so the robot was sent to {self.cfg.fsm.name(mode)} ({mode})")
            self.counters.last_error = self.lapsed
            self.log.warning("command_timeout", fallback_mode=mode,
                             timeout_ms=self.cfg.command_timeout_ms)
        self.timed_out = True
        self.queue.replace_all(Block(mode=mode, pos_des=(0.0, 0.0, 0.24),
                                     step_height=(0.07, 0.03), source=FROM_TIMEOUT))

    def _goal_source(self, now_ns: int) -> bool:
        """A running motion goal drives mode 11 (True). When a move ends, the
        robot is left in a locomotion stand and the command timeout starts
        over from that moment, as if the goal had been the last command."""
        velocity, events = self.goals.step(now_ns, self.odom, self.battery_v)
        self.events += events
        if velocity is not None:
            self.queue.replace_all(Block(mode=11, gait_id=self.goal_gait, vel_des=velocity,
                                         step_height=(GOAL_STEP_HEIGHT,) * 2, source=FROM_GOAL))
            self.timed_out = False
            return True
        if any(e.kind == EventKind.GOAL_DONE for e in events) \
                and self.last_active.source == FROM_GOAL:
            self.queue.replace_all(Block(mode=11, gait_id=STAND_GAIT, source=FROM_GOAL))
            self.intake.last_rx_ns = now_ns
            self.timed_out = False
            return True
        return False

    def _safety_override(self, active: Block, status: int, reported_mode: int) -> None:
        """Unresponsive-safety overrides (SPEC §3.5), applied at the next tick."""
        if (status == ESTOP and active.mode != 0) or \
                (status == NORMAL and reported_mode == 0 and active.mode == 12):
            self.override_count += 1
            if self.override_count > OVERRIDE_OFF_TICKS:
                self.queue.override = 0
        elif status == EDAMP and active.mode != 7:
            self.override_count += 1
            if self.override_count > OVERRIDE_DAMPER_TICKS:
                self.queue.override = 7
        else:
            self.override_count = 0
            self.queue.override = None

    # -- faults of the robot side (controller/core/faults.py, docs/RELIABILITY.md) -------------
    def _check_faults(self, now_ns: int) -> bool:
        """True when a fault trips this tick: the robot goes to the damper
        (EDAMP) or, from OFF, stays OFF, and the fault's block replaces the
        command until a new one arrives."""
        if self.joint_watch.check(now_ns):
            gap_ms = self.joint_watch.gap_ns(now_ns) / 1e6
            self._mark_offline(True)
            self._trip(now_ns, "joint_state_lost",
                       f"no joint_state for {gap_ms:.0f} ms "
                       f"(safety.joint_state_timeout_ms {self.cfg.safety.joint_state_timeout_ms:g})",
                       gap_ms=round(gap_ms, 3))
            return True
        if self.imu_watch.check(now_ns):
            gap_ms = self.imu_watch.gap_ns(now_ns) / 1e6
            self._trip(now_ns, "imu_lost",
                       f"no imu for {gap_ms:.0f} ms "
                       f"(safety.imu_timeout_ms {self.cfg.safety.imu_timeout_ms:g})",
                       gap_ms=round(gap_ms, 3))
            return True
        robot_fault = self.robot_faults.check(now_ns)
        if robot_fault is not None:
            self._trip(now_ns, "robot_fault", robot_fault)
            return True
        state = self.fsm.state
        if self.joint_watch.lost or not self.fsm.measured or not state.checks_tracking \
                or self.fsm.operating in (EDAMP, ESTOP):
            self.tracking.reset()
            self.sensor_watch.reset()
            if self.gyro_check is not None:
                self.gyro_check.reset()
            self._fresh_joints = self._fresh_imu = False
            return False
        if self._check_sensors(now_ns):
            return True
        k = self.kernel
        found = self.tracking.check(self.q, k.pos, k.kp)
        if found is None:
            return False
        joint, error = found
        name = self.cfg.joint_names[joint]
        s = self.cfg.safety
        self._trip(now_ns, "tracking_error",
                   f"{name} is {error:.2f} rad from its target for {s.tracking_error_ms:g} ms "
                   f"(safety.tracking_error_rad {s.tracking_error_rad:g}) in {self.cfg.fsm.name(state.mode)}",
                   joint=name, error_rad=round(error, 3), target=round(float(k.pos[joint]), 3),
                   measured=round(float(self.q[joint]), 3))
        self.tracking.reset()
        return True

    def _check_sensors(self, now_ns: int) -> bool:
        """Broken parts only the readings show (controller/core/sensor_watch.py),
        on what came in this tick against the previous tick's command."""
        watch, k = self.sensor_watch, self.kernel
        found = None
        if self._fresh_joints:
            found = watch.joints(self.q, self.qd, self.tau, k.pos, k.vel, k.kp, k.kd, k.tau)
        if found is None and self._fresh_imu:
            found = watch.imu(self.imu_quat, self.imu_gyro, self.imu_accel, self.q)
        if found is None:
            found = watch.battery(self.battery_v)
        if found is None and self.gyro_check is not None and self.estimator is not None \
                and self.estimator.initialised:
            e = self.estimator
            lie = self.gyro_check.step(e.gyro, e.rot, e.feet, e.jacobian, *e.joints, e.trust)
            if lie is not None:
                found = Finding("gyro_bias", lie)
        self._fresh_joints = self._fresh_imu = False
        if found is None:
            return False
        fields: dict[str, Any] = {}
        if found.joint is not None:
            fields["joint"] = self.cfg.joint_names[found.joint]
            self.motor_error[found.joint] |= FOUND_ENCODER if found.event.startswith("encoder") \
                else FOUND_MOTOR
            self._show_motor_errors()
        self._trip(now_ns, found.event, found.text, joint_index=found.joint, **fields)
        watch.reset()
        if self.gyro_check is not None:
            self.gyro_check.reset()
        self.tracking.reset()
        return True

    def _trip(self, now_ns: int, event: str, text: str, joint_index: int | None = None,
              **fields: Any) -> None:
        off = self.fsm.mode == 0
        action = "staying OFF" if off else "damping (EDAMP)"
        self.fault_block = Block(mode=0 if off else 7, source=FROM_FAULT)
        if self.goals.active:
            self.events += self.goals.preempt(now_ns, f"{event}: {text}", self.odom)
        self.counters.last_error = f"{text}: {action} until a new command"
        suppressed = self.limit.allow(event, now_ns)
        if suppressed is not None:
            # The log line and the FAULT event at the same bounded rate: a
            # client resending commands into a broken part trips it again each time.
            self.log.warning(event, **fields, action=action, state=self.cfg.fsm.name(self.fsm.mode),
                             suppressed=suppressed)
            self.events.append(Event(EventKind.FAULT, 0, 0, x=self.odom.x, y=self.odom.y,
                                     yaw=self.odom.yaw,
                                     value=-1.0 if joint_index is None else float(joint_index),
                                     text=f"{event}: {text}: {action}"))

    def _joint_state_back(self, now_ns: int, outage_ns: int) -> None:
        self._mark_offline(False)
        outage_ms = outage_ns / 1e6
        held = self.cfg.fsm.name(self.fault_block.mode)
        self.counters.last_error = (f"joint_state back after {outage_ms:.0f} ms: "
                                    f"{held} until a new command")
        suppressed = self.limit.allow("joint_state_back", now_ns)
        if suppressed is not None:
            self.log.info("joint_state_back", outage_ms=round(outage_ms, 3), holding=held,
                          suppressed=suppressed)

    def _joint_state_missing(self, now_ns: int) -> str | None:
        """Why nothing may be commanded now (joint_state lost, a robot fault
        standing), or None."""
        if self.robot_faults.faulted:
            return self.robot_faults.reason
        if not self.joint_watch.lost:
            return None
        return f"no joint_state for {self.joint_watch.gap_ns(now_ns) / 1e6:.0f} ms"

    def _damped_by_fault(self) -> str | None:
        if self.fsm.operating not in (EDAMP, ESTOP):
            return None
        return (f"the robot is in {'EDAMP' if self.fsm.operating == EDAMP else 'ESTOP'}: "
                f"a recovery stand (12) first")

    def _mark_offline(self, offline: bool) -> None:
        if offline:
            self.motor_error |= MOTOR_OFFLINE
        else:
            self.motor_error &= ~MOTOR_OFFLINE
        self._show_motor_errors()

    def _show_motor_errors(self) -> None:
        wire = self._wire_errors()
        self.response.motor_error = wire[self.cfg.leg_indices].tolist()
        self.status.motor_error = wire.tolist()

    def _wire_errors(self) -> np.ndarray:
        """motor_error in the wire's joint order (the robot numbers its motors):
        motiond's own bits and the robot's flag words (bridge_status)."""
        return (self.motor_error | self.robot_faults.flags)[self.joint_map.order]

    # -- scripts (controller/core/director.py) ------------------------------------------------
    def _on_script_request(self, now_ns: int, data: bytes) -> None:
        msg = self._decode(now_ns, self.ch["script_request"], msgs.script_request_t, data)
        if msg is None:
            return
        refusal = self.director.request(msg, now_ns, self.epoch_offset_ns)
        if refusal:
            self.counters.commands_rejected += 1
            self._error(now_ns, f"script request {msg.request_id} refused: {refusal}",
                        "script_refused")

    def _priority(self, block: Block) -> int | None:
        """The priority of the motion `block` drives; None for the safety
        fallbacks (timeout, OFF, damper), which nothing outranks."""
        if block.source in (FROM_TIMEOUT, FROM_FAULT) or block.mode == 0 or self.shutting_down:
            return None
        if block.script is not None:
            return int(block.script.priority)
        if block.source == FROM_SCRIPT:
            return self.cfg.scripts.default_priority if self.cfg.scripts else None
        return self.cfg.priorities[SOURCE_PRIORITY.get(block.source, "robot_control_cmd")]

    def _outranked_by_script(self, source: str, mode: int) -> str | None:
        """Why `source` may not take over now (a full-body script of equal or
        higher priority plays), or None. OFF and the damper are never refused."""
        body = self.director.body
        if mode in SAFETY_MODES or body is None or body.ended:
            return None
        mine = self.cfg.priorities[source]
        if body.priority < mine:
            return None
        return (f"script {body.name} (request {body.request_id}) plays at priority "
                f"{body.priority}, {source} has {mine}")

    def _safety_state(self) -> bool:
        return self.fsm.mode in SAFETY_MODES or self.fsm.operating in (EDAMP, ESTOP) \
            or self.shutting_down

    def _start_scripts(self, now_ns: int) -> None:
        """Start the script requests whose time has come, or refuse them."""
        for run in self.director.due(now_ns):
            refusal = self._start_script(run, now_ns)
            if refusal:
                self.director.refuse(run, refusal)
                self.counters.commands_rejected += 1
                self._error(now_ns, f"script request {run.request_id} refused: {refusal}",
                            "script_refused")

    def _start_script(self, run: ScriptRun, now_ns: int) -> str | None:
        fsm = self.fsm
        name = self.cfg.fsm.name(fsm.mode)
        if fsm.mode == 0 or fsm.operating in (EDAMP, ESTOP) or self.shutting_down \
                or self.last_active.source in (FROM_TIMEOUT, FROM_FAULT):
            # A commanded damper (7) is not refused here: a full-body script
            # that outranks the command may start from it (get up).
            return f"the robot is in {name} ({self.last_active.source}); no script may start"
        if not fsm.measured:
            return "no joint_state has been received yet"
        blocked = self.director.blocking(run)
        if blocked:
            return blocked
        busy = fsm.state.limbs_in_use()
        busy = self.director.all_limbs if busy is None else busy
        if not run.limbs & busy:
            self.director.preempt_for(run)
            self.director.start_overlay(run, self.tick, self.q)
            return None
        limbs = ", ".join(sorted(run.limbs & busy))
        mode_priority = self._priority(self.last_active)
        if mode_priority is not None and mode_priority >= run.priority:
            return (f"{limbs}: driven by {name} from {self.last_active.source} "
                    f"(priority {mode_priority} >= {run.priority})")
        script_mode = self.cfg.scripts.mode if self.cfg.scripts else None
        if script_mode is None:
            return f"{limbs}: driven by {name}, and this robot has no script mode"
        if fsm.mode != script_mode:
            refusal = fsm.why_refused(script_mode, Block(mode=script_mode, script=run))
            if refusal:
                return refusal
        self.director.preempt_for(run, everything_of_body=True)
        run.overlay = False
        self.director.body = run
        if self.goals.active:
            self.events += self.goals.preempt(now_ns, f"script {run.name} took over", self.odom)
        self.queue.replace_all(Block(mode=script_mode, source=FROM_SCRIPT, script=run))
        return None

    def _still_down(self, run: ScriptRun) -> str | None:
        """Why a getup (config fall.except_scripts) that played to its end
        left the robot down (the IMU's tilt), or None: not a getup, upright,
        or no IMU to tell."""
        fall = self.cfg.fall
        script = getattr(run.playback, "script", None)
        if fall is None or script is None or self.fsm.attitude is None \
                or not {p.name for p in script.parts} & fall.except_scripts:
            return None
        tilt = self.imu.tilt
        return None if tilt <= GETUP_UPRIGHT else f"the torso is {tilt:.2f} rad from upright"

    def _retry_getup(self, run: ScriptRun, down: str, now_ns: int) -> None:
        """Play a getup that left the robot down once more, as the same request."""
        assert isinstance(run.playback, ScriptPlayback)
        again = ScriptRun(run.request_id, ScriptPlayback(run.playback.script, self.director.joint_index,
                                                         self.cfg.dt),
                          run.priority, run.limbs, now_ns, overlay=False, retried=True)
        self.director.body = again
        self.queue.replace_all(Block(mode=self.fsm.mode, source=FROM_SCRIPT, script=again))
        self.log.warning("getup_retry", script=run.name, reason=down, tick=self.tick)

    def _script_tick(self, now_ns: int, ctx: TickContext, active: Block) -> None:
        """After the state has run: the full-body script's end, safety
        cancels, and the overlays on top of the state's joints."""
        director = self.director
        if self.fsm.state is not self.script_state:
            self.script_state = self.fsm.state
            director.release()
        safety = self._safety_state()
        if safety:
            director.cancel(0, f"the robot entered {self.cfg.fsm.name(self.fsm.mode)}")
        body = director.body
        if body is not None:
            after = STAND_MODE
            if body.ended:
                director.body = None
            elif active.script is not body:
                director.body = None
                director.end(body, Reason.PREEMPTED,
                               f"{active.source} mode {active.mode} took over")
            elif body.started and body.playback.done and self.fsm.state.ready():
                director.body = None
                down = self._still_down(body)
                if down is not None and not body.retried:
                    self._retry_getup(body, down, now_ns)
                elif down is not None:
                    after = DAMPER_MODE
                    director.end(body, Reason.FAILED, f"still down after a retry: {down}")
                    self.counters.last_error = f"getup {body.name} failed: {down}"
                    self.log.error("getup_failed", script=body.name, reason=down, tick=self.tick)
                else:
                    director.end(body, Reason.FINISHED, "played to its last frame")
            if director.body is None and active.script is body:
                # Finished or cancelled: stand, and the command timeout starts now;
                # a getup that failed twice leaves the robot in the damper.
                self.queue.replace_all(Block(mode=after, source=FROM_SCRIPT))
                self.intake.last_rx_ns = now_ns
        if not director.overlays and not director.holding.any():
            return          # nothing plays over the state: step_overlays would do nothing
        name = self.cfg.fsm.name(self.fsm.mode)
        limbs = self.fsm.state.limbs_in_use()
        limbs = director.all_limbs if limbs is None else limbs
        priority = None if safety else self._priority(active)
        for run in director.overlays:
            if run.limbs & limbs and priority is not None and run.priority > priority \
                    and run.request_id not in self.script_holds:
                self.script_holds.add(run.request_id)
                self.log.info("script_keeps_limbs", script=run.name, request=run.request_id,
                              limbs=sorted(run.limbs & limbs), mode=name,
                              priority=run.priority, mode_priority=priority)
        director.step_overlays(ctx.tick, ctx.q, limbs, priority, f"mode {self.fsm.mode} {name}")

    # -- the tick ---------------------------------------------------------------------
    def step(self, now_ns: int, inbox: list[tuple[str, bytes]],
             timing: Timing | None = None, late_from: int | None = None) -> Outbox:
        """One tick: sense() then act() on the same inbox."""
        self.sense(now_ns, inbox)
        return self.act(now_ns, inbox, timing, late_from=late_from)

    def sense(self, now_ns: int, inbox: list[tuple[str, bytes]]) -> None:
        """The tick's first half, which no command changes: the odometry of the
        tick that just ended, the sensor packets in `inbox` (joint_state, imu;
        the rest is left to act()), the state estimate and the FSM's checks
        that read only these (Fsm.sample: lift, foot workspace). The runtime drains
        the command port only after this (controller/service/runtime.py), so a
        command that arrives meanwhile still makes this tick."""
        ch = self.ch
        self.now_ns = now_ns
        # Odometry: the body twist of the tick that just ended (zero when the
        # state does not travel, which also zeroes the reported velocity).
        velocity = self.fsm.state.body_velocity()
        if velocity is None:
            self.odom.integrate(STILL, self.cfg.dt)
        elif self._estimating(now_ns):
            assert self.estimator is not None
            self.odom.integrate(self.estimator.heading_twist(), self.cfg.dt)
        elif self.biped is not None and self.biped.initialised and self.imu_watch.fresh(now_ns):
            vx, vy, wz = self.biped.heading_twist()
            # Standing in place (the walk's velocity zero) the heading holds:
            # the gyro's bias would turn it.
            self.odom.integrate((vx, vy, wz if any(velocity) else 0.0), self.cfg.dt)
        else:
            self.odom.integrate(velocity, self.cfg.dt)
        # The measured state first, whatever order the packets came in (DESIGN
        # principle 6): a command in the same inbox starts from this pose.
        measured = False
        for channel, data in inbox:
            if channel == ch["joint_state"]:
                measured = self._on_joint_state(now_ns, data) or measured
            elif channel == ch["imu"]:
                self._on_imu(now_ns, data)
            elif channel == ch["bridge_status"]:
                self._on_bridge_status(now_ns, data)
        if measured:
            self.kernel.seed(self.q)
        self._take_attitude(now_ns, measured)
        # The FSM's sensor-only checks, before the runtime's last drain: they
        # no longer stand between a late command and its joint command.
        self.fsm.sample(self.tick, self._body_estimate(now_ns), self.q)
        if self.planner is not None:
            self.planner.receive()       # a worker's plans that are back, likewise

    def act(self, now_ns: int, inbox: list[tuple[str, bytes]],
            timing: Timing | None = None,
            send_first: Callable[[Outbox], None] | None = None,
            late_from: int | None = None) -> Outbox:
        """The tick's second half, after sense() at the same now_ns: the other
        packets in `inbox` in arrival order (commands, motor_ctrl, user gaits,
        goals, script requests; sensor packets are sense()'s), faults, the
        block queue, the mode's behaviour, the kernel, and the outputs, the
        joint command first. `send_first` (the runtime's) is handed the outbox
        as soon as the joint command is in it, before the tick's reports
        (response, odometry, status, events) are built: the robot gets its
        command that much sooner, and the bus sees the same order; the work
        behaviours defer (Robot.deferred: an MPC request) runs then too.
        `late_from`: the index in `inbox` from which packets arrived while
        this tick ran (None: none did). They are taken in now, but seen by the
        next tick: a robot_control_cmd among them starts its receive timer
        at the next tick's time (SPEC §2.1, controller/protocol/intake.py)."""
        out = self.out
        out.messages.clear()
        ch = self.ch
        late_from = len(inbox) if late_from is None else late_from
        self.intake.begin_tick(now_ns)
        for i, (channel, data) in enumerate(inbox):
            if channel == ch["command"]:
                self._on_command(now_ns, data, i >= late_from)
            elif channel == ch["motor_ctrl"]:
                self._on_motor_ctrl(now_ns, data)
            elif channel == ch["user_gait_file"]:
                self._on_user_gait(now_ns, data, out)
            elif channel == ch["motion_goal"]:
                self._on_goal(now_ns, data)
            elif channel == ch["script_request"]:
                self._on_script_request(now_ns, data)
        self.fault_now = self._check_faults(now_ns)
        self._start_scripts(now_ns)
        self._select_source(now_ns)
        previous_status = self.last_reported[2]
        active = self.queue.process(previous_status)
        self._safety_override(active, previous_status, self.last_reported[0])

        t = self.tick * self.cfg.dt
        ctx = TickContext(self.tick, t, self.q, self.qd, self.tau, active,
                          self._motor_command(now_ns) if active.mode == 15 else None,
                          self.queue.motion_progress(),
                          body=self._body_estimate(now_ns),
                          imu=self.imu if self.fsm.attitude is not None else None,
                          soles=self.soles)
        previous_state = self.fsm.mode
        self._select_user_gait(active)
        if active.mode == 0:
            self.fsm.reset_off(ctx)
        elif self.shutting_down:
            self.fsm.damp(ctx)
        else:
            self.fsm.step(ctx, fault=self.fault_now)
        if previous_state == 0 and self.fsm.mode != 0:
            self._left_off()
        if self.fsm.fell:
            self._report_fall(now_ns)
        self._script_tick(now_ns, ctx, active)
        self.kernel.step(t)
        utime = (now_ns + self.epoch_offset_ns) // 1000
        out.add("joint", self.ch["joint_cmd"],
                self.kernel.encode_joint_command(self.joint_cmd_fingerprint, utime, self.tick))
        if send_first is not None:
            send_first(out)
        self._run_deferred()

        reported = self.fsm.reported(ctx, self.queue.motion_trigger > 0, self.queue.motion_id,
                                     ctx.motion_bar)
        if self.goals.active and active.source == FROM_GOAL and reported[2] == BAN_TRANS:
            self.events += self.goals.refuse(now_ns, self.fsm.refusal or "mode 11 refused", self.odom)
        self._log_changes(now_ns, previous_state, active, reported)
        self._publish(now_ns, out, reported, timing)
        self.last_active = active
        self.last_reported = reported
        self.tick += 1
        return out

    def _run_deferred(self) -> None:
        """What the behaviours left for after the joint command (Robot.deferred)."""
        deferred = self.robot.deferred
        try:
            for job in deferred:
                job()
        finally:
            deferred.clear()

    def _report_fall(self, now_ns: int) -> None:
        """A humanoid is falling (controller/core/fall.py): say so in the log,
        controller_status's last_error and a FALL motion_event."""
        fall = self.fsm.fall
        assert fall is not None and fall.tilt is not None
        way = fall.direction
        text = (f"falling {way}: tilt {fall.tilt:.2f} rad at {fall.rate:.1f} rad/s; "
                f"the motion stopped, protective posture, limp before the impact; "
                f"stand up (12, or a getup script from 7) before walking")
        self.counters.last_error = text
        self.log.error("fall_detected", direction=way, tilt=round(fall.tilt, 3),
                       tilt_rate=round(fall.rate, 2), mode_before=self.fsm.estop_from,
                       tick=self.tick)
        self.events.append(Event(EventKind.FALL, 0, 0, x=self.odom.x, y=self.odom.y,
                                 yaw=self.odom.yaw, value=fall.tilt, text=f"falling {way}"))

    @property
    def plan_tick(self) -> int:
        """After a step: the tick whose state the MPC plan that step used was
        sampled on; -1 when it asked for none or none was ready (tick_trace_t,
        so that a replay uses the same plans)."""
        stats = self.planner.stats if self.planner is not None else None
        return stats.used if stats is not None and stats.asked == self.tick - 1 else -1

    def _log_changes(self, now_ns: int, previous_state: int, active: Block,
                     reported: tuple[int, int, int, int]) -> None:
        if self.fsm.mode != previous_state:
            if active.source != FROM_TIMEOUT:
                self.lapsed = None
            self.log.info("mode_change", **{"from": self.cfg.fsm.name(previous_state)},
                          to=self.cfg.fsm.name(self.fsm.mode), tick=self.tick)
        failure = self.fsm.state.failure()
        if failure is not None and failure != self.failure_logged:
            self.counters.last_error = f"{self.cfg.fsm.name(self.fsm.mode)} failed: {failure}"
            self.log.error("motion_failed", mode=self.fsm.mode, reason=failure, tick=self.tick)
        self.failure_logged = failure
        if reported[2] in (EDAMP, ESTOP) and self.last_reported[2] != reported[2] \
                and not self.fault_now and not self.fsm.fell:   # a fall logs its own
            reason = self._safety_reason()
            self.counters.last_error = f"{'EDAMP' if reported[2] == EDAMP else 'ESTOP'}: {reason}"
            self.log.warning("safety_stop", status=reported[2], reason=reason, tick=self.tick)
        refused = reported[2] == BAN_TRANS
        new_block = active.uid != self.last_active.uid
        if refused and (self.last_reported[2] != BAN_TRANS or new_block):
            reason = self._refusal(active)
            self.counters.last_error = f"mode {active.mode} refused: {reason}"
            suppressed = self.limit.allow("mode_refused", now_ns)
            if suppressed is not None:
                self.log.warning("mode_refused", requested=active.mode, gait=active.gait_id,
                                 state=self.cfg.fsm.name(self.fsm.mode), reason=reason,
                                 suppressed=suppressed)

    def _safety_reason(self) -> str:
        """Why the FSM's own checks stopped the robot (SPEC §5.8, §5.9): the
        feet outside their workspace (footpos_error bits 3i x, 3i+2 z of leg
        i) or the tilt (ori_error). Faults of the robot side log their own."""
        fsm = self.fsm
        bits = fsm.footpos_error
        if bits:
            legs = self.cfg.legs
            out = [f"{legs[i] if i < len(legs) else i} {axis}" for i in range(len(legs))
                   for axis, bit in (("x", 0), ("z", 2)) if bits >> (3 * i + bit) & 1]
            return f"foot outside its workspace ({', '.join(out)}; footpos_error {bits:#x})"
        if fsm.ori_error and fsm.attitude is not None:
            roll, pitch = fsm.attitude
            return f"tilted: roll {roll:+.2f} rad, pitch {pitch:+.2f} rad (limit 1.3)"
        return "safety check"

    def _refusal(self, active: Block) -> str:
        """Why `active` is refused: the FSM's reason, or for a motion why it
        did not expand, or for a user gait without a definition why its
        on-disk file was refused."""
        reason = self.fsm.refusal or "refused"
        if self.lapsed is not None and active.source != FROM_TIMEOUT:
            reason = f"{reason}: {self.lapsed}"
        if active.mode == MOTION_MODE and self.motion_refusal:
            return self.motion_refusal
        loco = self._locomotion()
        if active.mode == LOCOMOTION and self.disk_gaits is not None and loco is not None \
                and reason == loco.refuses(active):
            return self.disk_gaits.refusal(active.gait_id) or reason
        return reason

    def _publish(self, now_ns: int, out: Outbox, reported: tuple[int, int, int, int],
                 timing: Timing | None) -> None:
        mode, gait, status, bar = reported
        prev_mode, prev_gait, prev_status, prev_bar = self.last_reported
        utime = (now_ns + self.epoch_offset_ns) // 1000
        # The joint command is already in `out` (act()).

        # SPEC §1.8 cadence, plus (motiond) a message whenever the reported mode
        # or gait changes, so a client sees e.g. the timeout damper at once.
        changed = (mode, gait, status) != (prev_mode, prev_gait, prev_status)
        due = changed or self.tick % RESPONSE_EVERY == 0 or (bar >= 95 and prev_bar != 100)
        if due:
            r = self.response
            r.mode, r.gait_id, r.switch_status, r.order_process_bar = mode, gait, status, bar
            r.contact = self._contact()
            r.ori_error = self.fsm.ori_error
            r.footpos_error = self.fsm.footpos_error
            out.add("response", self.ch["response"], r.encode())

        if self.fsm.mode == 15:
            st = self.motor_state
            behaviour = self.fsm.state
            st.err_flag = int(getattr(behaviour, "err_flag", 0))
            age = getattr(behaviour, "age_ms", 0.0)
            st.ctrl_topic_interval = float(min(age, 1e9))
            out.add("joint", self.ch["motor_ctrl_state"], st.encode())

        if self.tick % ODOMETRY_EVERY == 0:
            self.odom.fill(self.localization, now_ns + self.epoch_offset_ns)
            out.add("joint", self.ch["global_to_robot"], self.localization.encode())
        for event in self.events + self.director.take_events():
            out.add("command", self.ch["motion_event"], to_msg(event, utime).encode())
        self.events.clear()

        # Status at its rate, and on every change of mode, gait or switch_status
        # so that tools see the exact tick of each change.
        if changed or self.tick % self.status_every == 0:
            out.add("joint", self.ch["status"], self._status(utime, reported, timing).encode())

    def _planned_contact(self) -> int:
        """Humanoid: bit0 right sole, bit1 left sole, set while the running
        motion plans that foot on the ground (the walk's support foot; both
        in double support and whenever the robot is not walking). There is no
        force estimate: the measured leg torques are not used."""
        planned = self.fsm.state.planned_contact()
        return BOTH_FEET if planned is None else planned

    def _estimated_contact(self) -> int:
        """Bit i set when leg i's estimated foot force exceeds 5 N (SPEC §5.10)."""
        legs = len(self.cfg.legs)
        q = self.q.reshape(legs, 3)
        tau = self.tau.reshape(legs, 3)
        jt = np.transpose(self.kin.jacobian(q), (0, 2, 1))
        try:
            force = np.linalg.solve(jt, tau[..., None])[..., 0]
        except np.linalg.LinAlgError:   # a singular leg (fully stretched): least squares
            force = np.einsum("lij,lj->li", np.linalg.pinv(jt), tau)
        mask = 0
        for i, f in enumerate(np.linalg.norm(force, axis=1)):
            if f > CONTACT_FORCE_N:
                mask |= 1 << i
        return mask

    def _status(self, utime: int, reported: tuple[int, int, int, int],
                timing: Timing | None) -> Any:
        mode, gait, status, bar = reported
        s = self.status
        c = self.counters
        s.utime = utime
        s.tick = self.tick
        s.mode, s.gait_id, s.switch_status, s.progress = mode, gait, status, bar
        s.mode_name = self.cfg.fsm.name(mode)
        s.queue_depth = min(len(self.queue), 32767)
        s.block_remaining_ms = int(self.queue.remaining_ticks() * 1000 / self.cfg.tick_hz)
        s.last_life_count = self.intake.last_life_count
        s.commands_accepted = _i32(c.commands_accepted)
        s.heartbeats = _i32(c.heartbeats)
        s.packets_rejected = _i32(c.packets_rejected)
        s.commands_rejected = _i32(c.commands_rejected)
        s.timeouts = _i32(c.timeouts)
        tm = timing or self.timing
        s.tick_overruns = _i32(tm.tick_overruns)
        s.lateness_p50_us = tm.lateness_p50_us
        s.lateness_p99_us = tm.lateness_p99_us
        s.lateness_max_us = tm.lateness_max_us
        s.loop_p99_us = tm.loop_p99_us
        s.last_error = c.last_error[:200]
        s.script, s.script_progress = self.director.status()
        state = self.fsm.state
        if not s.script and isinstance(state, ScriptedMode) and state.playback is not None:
            pos = state.playback.position   # a scripted mode (64, 16, 22)
            s.script, s.script_progress = f"{pos.part} frame {pos.frame}", pos.progress
        elif not s.script and isinstance(state, (TrajectoryMode, TwoLegStand)):
            s.script, s.script_progress = state.status()   # a jump (16), the two-leg stand (64)
        return s
