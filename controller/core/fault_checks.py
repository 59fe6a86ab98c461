"""Faults of the robot side that damp the robot on their own
(docs/RELIABILITY.md): joint_state or imu lost, a robot bridge's fault, a
joint far from its target, and the broken parts only the readings show
(sensor_watch.py, gyro_check.py). A fault's block (the damper, or OFF from
OFF) holds the robot until a new command; the motors' flag words
(motor_error) as the response and controller_status carry them."""
from __future__ import annotations

from typing import Any

import numpy as np

from controller.core.faults import JointStateWatch, RobotFaultWatch, TrackingWatch
from controller.core.fsm import EDAMP, ESTOP
from controller.core.goals import Event, EventKind
from controller.core.gyro_check import GyroCheck
from controller.core.sensor_watch import Finding, SensorWatch
from controller.core.tick_state import TickState
from controller.protocol.block import FROM_FAULT, Block

MOTOR_OFFLINE = 1             # motor_error bit0 (SPEC §5.9): set on every joint while
                              # joint_state is missing
# motiond's own motor_error bits (bits the driver's word leaves unused,
# docs/PROTOCOL.md): the sensor watch found this joint's encoder or motor
# broken; held until a new command replaces the fault's damper.
FOUND_ENCODER = 1 << 18
FOUND_MOTOR = 1 << 19
FOUND_BITS = FOUND_ENCODER | FOUND_MOTOR


class FaultChecks:
    def __init__(self, ctl: TickState) -> None:
        self.ctl = ctl
        cfg = ctl.cfg
        n = cfg.num_joints
        self.joint_watch = JointStateWatch(cfg.safety.joint_state_timeout_ms, cfg.tick_hz)
        self.imu_watch = JointStateWatch(cfg.safety.imu_timeout_ms, cfg.tick_hz)
        self.tracking = TrackingWatch(cfg.safety, n, cfg.tick_hz)
        self.sensor_watch = SensorWatch(cfg.safety.sensors, cfg.joint_names, cfg.torque_limit,
                                        cfg.safety.tracking_min_kp, cfg.tick_hz, max(1, len(cfg.legs)),
                                        v_max=cfg.v_max)
        # The gyro against the loaded feet (a quadruped's, with its estimate).
        self.gyro_check = GyroCheck(cfg.safety.sensors, len(cfg.legs), ctl.kin.roll_radius, cfg.dt) \
            if ctl.estimator is not None else None
        self.fresh_joints = self.fresh_imu = False    # taken in this tick (the sensor watch's)
        # When the sensor watch last had each (ns; None: not since a reset): a
        # bridge forwards a robot state once, when it comes, and a late
        # daemon skips ticks, so readings are judged over the time between.
        self.joints_ns: int | None = None
        self.imu_ns: int | None = None
        self.tick_ns = 1e9 / cfg.tick_hz
        self.robot_faults = RobotFaultWatch(cfg.joint_names, cfg.tick_hz)
        self.block = Block(mode=7, source=FROM_FAULT)
        # Motor fault bits per joint (the controller's order), published in
        # the wire's (joint_map): controller_status carries every joint's, the
        # response's motor_error[12] the leg joints' (cfg.leg_indices),
        # wherever they are. The sim reports no faults.
        self.motor_error = np.zeros(n, dtype=np.int32)
        self.errors_changed = True     # since the publisher last showed them

    def check(self, now_ns: int) -> bool:
        """True when a fault trips this tick: the robot goes to the damper
        (EDAMP) or, from OFF, stays OFF, and the fault's block replaces the
        command until a new one arrives."""
        ctl = self.ctl
        if self.joint_watch.check(now_ns):
            gap_ms = self.joint_watch.gap_ns(now_ns) / 1e6
            self.mark_offline(True)
            self.trip(now_ns, "joint_state_lost",
                      f"no joint_state for {gap_ms:.0f} ms "
                      f"(safety.joint_state_timeout_ms {ctl.cfg.safety.joint_state_timeout_ms:g})",
                      gap_ms=round(gap_ms, 3))
            return True
        if self.imu_watch.check(now_ns):
            gap_ms = self.imu_watch.gap_ns(now_ns) / 1e6
            self.trip(now_ns, "imu_lost",
                      f"no imu for {gap_ms:.0f} ms "
                      f"(safety.imu_timeout_ms {ctl.cfg.safety.imu_timeout_ms:g})",
                      gap_ms=round(gap_ms, 3))
            return True
        robot_fault = self.robot_faults.check(now_ns)
        if robot_fault is not None:
            self.trip(now_ns, "robot_fault", robot_fault)
            return True
        state = ctl.fsm.state
        if self.joint_watch.lost or not ctl.fsm.measured or not state.checks_tracking \
                or ctl.fsm.operating in (EDAMP, ESTOP):
            self._reset_watches()
            self.fresh_joints = self.fresh_imu = False
            return False
        if self.check_sensors(now_ns):
            return True
        k = ctl.kernel
        found = self.tracking.check(ctl.q, k.pos, k.kp)
        if found is None:
            return False
        joint, error = found
        name = ctl.cfg.joint_names[joint]
        s = ctl.cfg.safety
        self.trip(now_ns, "tracking_error",
                  f"{name} is {error:.2f} rad from its target for {s.tracking_error_ms:g} ms "
                  f"(safety.tracking_error_rad {s.tracking_error_rad:g}) in {ctl.cfg.fsm.name(state.mode)}",
                  joint=name, error_rad=round(error, 3), target=round(float(k.pos[joint]), 3),
                  measured=round(float(ctl.q[joint]), 3))
        self.tracking.reset()
        return True

    def check_sensors(self, now_ns: int) -> bool:
        """Broken parts only the readings show (controller/core/sensor_watch.py),
        on what came in this tick against the previous tick's command."""
        ctl = self.ctl
        watch, k = self.sensor_watch, ctl.kernel
        found = None
        if self.fresh_joints:
            found = watch.joints(ctl.q, ctl.qd, ctl.tau, k.pos, k.vel, k.kp, k.kd, k.tau,
                                 self._ticks_since(self.joints_ns, now_ns))
            self.joints_ns = now_ns
        if self.fresh_imu:
            if found is None:
                found = watch.imu(ctl.imu_quat, ctl.imu_gyro, ctl.imu_accel, ctl.q,
                                  self._ticks_since(self.imu_ns, now_ns))
            self.imu_ns = now_ns
        if found is None:
            found = watch.battery(ctl.battery_v)
        if found is None and self.gyro_check is not None and ctl.estimator is not None \
                and ctl.estimator.initialised:
            e = ctl.estimator
            lie = self.gyro_check.step(e.gyro, e.rot, e.feet, e.jacobian, *e.joints, e.trust)
            if lie is not None:
                found = Finding("gyro_bias", lie)
        self.fresh_joints = self.fresh_imu = False
        if found is None:
            return False
        fields: dict[str, Any] = {}
        if found.joint is not None:
            fields["joint"] = ctl.cfg.joint_names[found.joint]
            self.motor_error[found.joint] |= FOUND_ENCODER if found.event.startswith("encoder") \
                else FOUND_MOTOR
            self.show_motor_errors()
        self.trip(now_ns, found.event, found.text, joint_index=found.joint, **fields)
        self._reset_watches()
        return True

    def _ticks_since(self, then_ns: int | None, now_ns: int) -> int:
        """Whole ticks from the last reading to this one, on the tick's
        clock (at least 1)."""
        if then_ns is None:
            return 1
        return max(1, int(round((now_ns - then_ns) / self.tick_ns)))

    def _reset_watches(self) -> None:
        """The running counts of every reading check start over."""
        self.tracking.reset()
        self.sensor_watch.reset()
        self.joints_ns = self.imu_ns = None
        if self.gyro_check is not None:
            self.gyro_check.reset()

    def trip(self, now_ns: int, event: str, text: str, joint_index: int | None = None,
             **fields: Any) -> None:
        ctl = self.ctl
        off = ctl.fsm.mode == 0
        action = "staying OFF" if off else "damping (EDAMP)"
        self.block = Block(mode=0 if off else 7, source=FROM_FAULT)
        if ctl.goals.active:
            ctl.events += ctl.goals.preempt(now_ns, f"{event}: {text}", ctl.odom)
        ctl.counters.last_error = f"{text}: {action} until a new command"
        suppressed = ctl.limit.allow(event, now_ns)
        if suppressed is not None:
            # The log line and the FAULT event at the same bounded rate: a
            # client resending commands into a broken part trips it again each time.
            ctl.log.warning(event, **fields, action=action, state=ctl.cfg.fsm.name(ctl.fsm.mode),
                            suppressed=suppressed)
            ctl.events.append(Event(EventKind.FAULT, 0, 0, x=ctl.odom.x, y=ctl.odom.y,
                                    yaw=ctl.odom.yaw,
                                    value=-1.0 if joint_index is None else float(joint_index),
                                    text=f"{event}: {text}: {action}"))

    def released(self) -> None:
        """Something other than the fault's block drives the robot (a new
        command took over from the damper): motiond's found-broken bits go."""
        if (self.motor_error & FOUND_BITS).any():
            self.motor_error &= ~FOUND_BITS
            self.show_motor_errors()

    def joint_state_back(self, now_ns: int, outage_ns: int) -> None:
        ctl = self.ctl
        self.mark_offline(False)
        outage_ms = outage_ns / 1e6
        held = ctl.cfg.fsm.name(self.block.mode)
        ctl.counters.last_error = (f"joint_state back after {outage_ms:.0f} ms: "
                                   f"{held} until a new command")
        suppressed = ctl.limit.allow("joint_state_back", now_ns)
        if suppressed is not None:
            ctl.log.info("joint_state_back", outage_ms=round(outage_ms, 3), holding=held,
                         suppressed=suppressed)

    def joint_state_missing(self, now_ns: int) -> str | None:
        """Why nothing may be commanded now (joint_state lost, a robot fault
        standing), or None."""
        if self.robot_faults.faulted:
            return self.robot_faults.reason
        if not self.joint_watch.lost:
            return None
        return f"no joint_state for {self.joint_watch.gap_ns(now_ns) / 1e6:.0f} ms"

    def damped_by_fault(self) -> str | None:
        ctl = self.ctl
        if ctl.fsm.operating not in (EDAMP, ESTOP):
            return None
        return (f"the robot is in {'EDAMP' if ctl.fsm.operating == EDAMP else 'ESTOP'}: "
                f"a recovery stand (12) first")

    def mark_offline(self, offline: bool) -> None:
        if offline:
            self.motor_error |= MOTOR_OFFLINE
        else:
            self.motor_error &= ~MOTOR_OFFLINE
        self.show_motor_errors()

    def show_motor_errors(self) -> None:
        """The flag words changed: the publisher puts them in the next
        response and status it builds (publisher.py)."""
        self.errors_changed = True

    def wire_errors(self) -> np.ndarray:
        """motor_error in the wire's joint order (the robot numbers its motors):
        motiond's own bits and the robot's flag words (bridge_status)."""
        ctl = self.ctl
        return (self.motor_error | self.robot_faults.flags)[ctl.joint_map.order]
