"""Controller.step: every decision of one 2 ms tick, as a pure function of the
injected time and the packets received since the last tick.

No sockets, no clock reads, no sleeping: the runtime drains LCM into the
inbox, calls step and publishes the outbox. Tests run it on a fake clock.

The Controller holds the tick's shared state (tick_state.py says what its
parts may use) and reads as the tick's outline; each part does one thing,
in its own module:
- packets.py: every packet in, or counted and refused (reports.py);
- fault_checks.py: the faults that damp the robot on their own;
- sources.py, script_source.py: which source drives the robot this tick;
- gait_uploads.py: user gaits and the steps of a mode-62 motion;
- publisher.py: the response, odometry, events and status after the joint
  command, and what the log says of mode changes and refusals.

Order of work in a tick (SPEC conventions): measured state; command intake and
queue processing (which see the previous tick's switch_status); the
unresponsive-safety check (§3.5, applied next tick); OFF handling or the FSM;
the kernel; the response, joint command and status.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from controller import msgs
from controller.behaviours.base import (
    Behaviour,
    HumanoidRobot,
    Imu,
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
from controller.core.director import Director
from controller.core.estimator import QuadrupedEstimator
from controller.core.fall import FallDetector
from controller.core.fault_checks import FaultChecks
from controller.core.fsm import BAN_TRANS, NORMAL, Fsm
from controller.core.gait_uploads import GaitUploads
from controller.core.goals import Event, EventKind, GoalExecutor, SpeedProfile
from controller.core.odometry import Odometry
from controller.core.outbox import Outbox, Timing
from controller.core.packets import PacketIntake
from controller.core.publisher import Publisher
from controller.core.reports import Reports
from controller.core.script_source import ScriptSource
from controller.core.sources import STAND_GAIT, CommandSources
from controller.logs import get_logger
from controller.motion.motions import MotionLibrary
from controller.motion.mpc import ConvexMpc
from controller.motion.planner import InlinePlanner, Planner
from controller.protocol.block import FROM_GOAL, FROM_TIMEOUT, Block
from controller.protocol.intake import Intake
from controller.protocol.queue import CommandQueue
from controller.robot.angles import quat_rpy
from controller.robot.config import Config
from controller.robot.config.damping import given_back
from controller.robot.humanoid_kinematics import FootPose
from controller.robot.native import Kernel

# One behaviour per mode, per robot kind; a mode the kind lacks is refused.
# Mode 11 only where the config has a locomotion (a gait generator or a walk).
BEHAVIOURS: dict[str, tuple[type[Behaviour], ...]] = {
    "quadruped": (Off, Damper, RecoveryStand, PoseCtrl, QpStand, MotorCtrl, Lifted, RlReset),
    "humanoid": (Off, Damper, HumanoidStand, HumanoidPose),
}
STILL = (0.0, 0.0, 0.0)


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
        # The joints' own damping, added back on stiff joints (config
        # joint_damping); None when the robot has none.
        self.damping_ff = given_back(cfg.joint_damping)
        self._ff = np.zeros(cfg.num_joints)
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
        # User gaits and motions (gait_uploads.py): the mode-62 expansion the
        # queue calls back.
        self.gaits = GaitUploads(self)
        self.queue = CommandQueue(cfg.command_queue_capacity, expand_motion=self.gaits.expand_motion)
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
        # What went wrong (reports.py); counters and limit are its, named
        # here too for the tools and tests that read them.
        self.reports = Reports(self.log)
        self.counters = self.reports.counters
        self.limit = self.reports.limit
        self.timing = Timing()
        n = cfg.num_joints
        self.q = np.zeros(n)
        self.qd = np.zeros(n)
        self.tau = np.zeros(n)
        self.fault_now = False        # a fault tripped this tick: the FSM enters EDAMP
        self.joint_cmd_fingerprint = int.from_bytes(msgs.joint_command_t._get_packed_fingerprint(), "big")
        self.out = Outbox()
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
        # A biped's leg odometry (controller/core/biped_estimator.py).
        self.biped = BipedEstimator(cfg.dt) if cfg.kind == "humanoid" else None
        self.soles: tuple[FootPose, FootPose] | None = None   # its measured soles (TickContext)
        loco = cfg.locomotion or cfg.walk
        self.goals = GoalExecutor(SpeedProfile(*loco.goal_profile) if loco else None)
        self.goal_gait = loco.default_gait if loco else STAND_GAIT
        self.events: list = []
        self.battery_v: float | None = None
        # The tick's parts, each in its module: faults that damp the robot on
        # their own (fault_checks.py) and the motors' flag words; the packets
        # in (packets.py); which source drives the robot (sources.py) and the
        # scripts among them (script_source.py); what goes out (publisher.py).
        self.faults = FaultChecks(self)
        self.motor_error = self.faults.motor_error
        self.sources = CommandSources(self, self.reports, self.faults)
        self.scripts = ScriptSource(self, self.reports, self.sources)
        self.packets = PacketIntake(self, self.reports, self.faults, self.sources, self.gaits)
        self.publisher = Publisher(self, self.faults, self.sources, self.gaits)
        self.response = self.publisher.response
        self.status = self.publisher.status

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

    def _estimating(self, now_ns: int) -> bool:
        """A quadruped with a fresh IMU: the estimate is live."""
        return self.estimator is not None and self.faults.imu_watch.fresh(now_ns)

    def _body_estimate(self, now_ns: int) -> QuadrupedEstimator | None:
        """The estimate for the behaviours, while it is live."""
        est = self.estimator
        return est if est is not None and est.initialised and self.faults.imu_watch.fresh(now_ns) else None

    def _take_attitude(self, now_ns: int, measured: bool) -> None:
        """Once per tick, after the sensors: the state estimate (a quadruped
        with a fresh IMU and a new joint_state), and the roll and pitch the
        orientation check and the odometry report (None without a fresh IMU)."""
        if not self.faults.imu_watch.fresh(now_ns):
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

    def shutdown(self) -> None:
        """From now on command the passive damper, whatever arrives (SIGTERM)."""
        self.shutting_down = True

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
        elif self.biped is not None and self.biped.initialised and self.faults.imu_watch.fresh(now_ns):
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
                measured = self.packets.joint_state(now_ns, data) or measured
            elif channel == ch["imu"]:
                self.packets.imu(now_ns, data)
            elif channel == ch["bridge_status"]:
                self.packets.bridge_status(now_ns, data)
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
                self.packets.command(now_ns, data, i >= late_from)
            elif channel == ch["motor_ctrl"]:
                self.packets.motor_ctrl(now_ns, data)
            elif channel == ch["user_gait_file"]:
                self.packets.user_gait(now_ns, data, out)
            elif channel == ch["motion_goal"]:
                self.packets.goal(now_ns, data)
            elif channel == ch["script_request"]:
                self.packets.script_request(now_ns, data)
        self.fault_now = self.faults.check(now_ns)
        self.scripts.start_due(now_ns)
        self.sources.select(now_ns)
        previous_status = self.last_reported[2]
        active = self.queue.process(previous_status)
        self.sources.safety_override(active, previous_status, self.last_reported[0])

        t = self.tick * self.cfg.dt
        ctx = TickContext(self.tick, t, self.q, self.qd, self.tau, active,
                          self.sources.motor_command(now_ns) if active.mode == 15 else None,
                          self.queue.motion_progress(),
                          body=self._body_estimate(now_ns),
                          imu=self.imu if self.fsm.attitude is not None else None,
                          soles=self.soles)
        previous_state = self.fsm.mode
        self.gaits.select(active)
        if active.mode == 0:
            self.fsm.reset_off(ctx)
        elif self.shutting_down:
            self.fsm.damp(ctx)
        else:
            self.fsm.step(ctx, fault=self.fault_now)
        if previous_state == 0 and self.fsm.mode != 0:
            self.gaits.left_off()
        if self.fsm.fell:
            self._report_fall(now_ns)
        self.scripts.tick(now_ns, ctx, active)
        self.kernel.step(t)
        if self.damping_ff is not None:
            self.kernel.add_damping(self.damping_ff, self.cfg.torque_limit, self._ff)
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
        self.publisher.log_changes(now_ns, previous_state, active, reported)
        self.publisher.publish(now_ns, out, reported, timing)
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
