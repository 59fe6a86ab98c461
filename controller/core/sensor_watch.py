"""Broken parts only the readings show (docs/RELIABILITY.md "Broken parts"):
what a real controller can tell from joint_state and imu alone, checked
every tick while the robot holds its joints stiff (the states the tracking
check runs in). Each finding damps the robot (EDAMP) as the other faults do.

- encoder jump: a joint's angle moves further in one tick than the joint
  can (`encoder_jump_rad`): its encoder slipped or glitched. Where readings
  came some ticks apart (a bridge forwards each robot state once, and a
  robot or a simulator that runs late sends them unevenly), the joint may
  also have moved at its speed limit (the config's joint_velocity_limit)
  over the ticks between them beyond the first;
- frozen encoder: a joint's angle repeats to the last bit, reading after
  reading, for `encoder_freeze_ms` while it is stiff and away from its target by more
  than `encoder_freeze_error_rad` (a live encoder's count moves under a
  torque that large);
- weak or dead motor: over `torque_ms` of ticks with the driver's law asking
  for at least `torque_min` N m (at joint speeds under `torque_speed`, or at
  any speed if it gives next to nothing), the torque the motor reports is
  under `torque_share` of it on average. What the law asks is that of the
  last command or of the one before, the smaller (a driver acts on a command
  a bus delay after it is sent), first cut to
  what the motor can give at the joint's speed when the config knows its
  torque-speed envelope (`motor_knee_speed`, `motor_no_load_speed`;
  controller/robot/motors.py): a motor giving all its envelope allows is
  not weak;
- frozen IMU: the imu repeats its orientation, rate and acceleration to the
  last bit for `imu_freeze_ms` while the joints move (a live sensor's noise
  never repeats);
- battery: joint_state's battery voltage under `battery_critical_v` for
  `battery_ms` (0 V: not checked).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from controller.motion.scripts import ms_to_ticks
from controller.robot.config.safety import SensorLimits
from controller.robot.motors import per_joint
from controller.robot.native import double_ptr, ffi, lib

DEAD_SHARE = 0.1           # a motor giving under this share of what it is asked gives nothing
IMU_FREEZE_MOTION = 0.01    # rad: a joint moved this far while the imu repeated itself


@dataclass(frozen=True)
class Finding:
    event: str              # the log event
    text: str               # what last_error says
    joint: int | None = None


class SensorWatch:
    def __init__(self, limits: SensorLimits, joint_names: list[str], torque_limit: np.ndarray,
                 min_kp: float, tick_hz: float, legs: int = 1, *, v_max: np.ndarray | float) -> None:
        self._limits = limits
        self.names = joint_names
        n = len(joint_names)
        # rad a joint can move per tick at its speed limit: a reading some
        # ticks after the last may have moved this much more per tick between.
        self.per_tick = np.broadcast_to(np.asarray(v_max, dtype=float), (n,)) / tick_hz
        self.limit = np.broadcast_to(np.asarray(torque_limit, dtype=float), (n,)).copy()
        # The motors' envelope, per joint (None: not known).
        self.knee = self.no_load = None
        if limits.motor_knee_speed is not None and limits.motor_no_load_speed is not None:
            self.knee = np.ascontiguousarray(per_joint(limits.motor_knee_speed, n, legs))
            self.no_load = np.ascontiguousarray(per_joint(limits.motor_no_load_speed, n, legs))
        self.min_kp = min_kp
        self.freeze_ticks = ms_to_ticks(limits.encoder_freeze_ms, tick_hz)
        self.torque_ticks = ms_to_ticks(limits.torque_ms, tick_hz)
        self.imu_ticks = ms_to_ticks(limits.imu_freeze_ms, tick_hz)
        self.battery_ticks = ms_to_ticks(limits.battery_ms, tick_hz)
        # The joint checks run in C (csrc/watch.c) on this state and these
        # buffers, kept for life (the struct points into them).
        self.prev = np.zeros(n)            # the last reading's angles
        self.before = np.zeros((5, n))     # the command before the last: pos, vel, kp, kd, tau_ff
        # The torque range a motor can give this tick (the limit, or its
        # envelope at the joints' speeds), and the laws' buffers.
        self.low, self.high = -self.limit, self.limit.copy()
        self.law_now, self.law_before, self.scratch = np.zeros(n), np.zeros(n), np.zeros(n)
        self.same = np.zeros(n, dtype=np.int64)        # ticks each angle has repeated
        # The last torque_ticks of |torque| the law asked for and the motor
        # reported, per joint, and how many ticks in a row have counted.
        self.asked_line = np.zeros((self.torque_ticks, n))
        self.given_line = np.zeros((self.torque_ticks, n))
        self.counted = np.zeros(n, dtype=np.int64)
        self.detail = np.zeros(2)
        self._c_detail = double_ptr(self.detail)
        self._joint = ffi.new("int32_t *")
        self._bound_to: tuple[np.ndarray, ...] | None = None
        self._c_in: tuple[object, ...] = ()
        self._c = self._bind(n, limits, min_kp)
        self.imu_prev: np.ndarray | None = None
        self.imu_same = 0
        self.imu_q0 = np.zeros(n)                      # the joints when the imu last changed
        self.low_battery = 0

    @property
    def c(self) -> SensorLimits:
        return self._limits

    @c.setter
    def c(self, limits: SensorLimits) -> None:
        """New thresholds for the checks from the next reading on (their
        windows, in ticks, stay those the watch was made with)."""
        self._limits = limits
        self._set_thresholds(self._c, limits)

    def _set_thresholds(self, w: Any, limits: SensorLimits) -> None:
        w.jump_rad, w.freeze_error = limits.encoder_jump_rad, limits.encoder_freeze_error_rad
        w.torque_min, w.torque_speed, w.torque_share = limits.torque_min, limits.torque_speed, limits.torque_share

    def _bind(self, n: int, limits: SensorLimits, min_kp: float) -> Any:
        w = ffi.new("mk_sensor_watch *")
        w.n, w.freeze_ticks, w.torque_ticks = n, self.freeze_ticks, self.torque_ticks
        w.min_kp, w.dead_share = min_kp, DEAD_SHARE
        self._set_thresholds(w, limits)
        self.per_tick = np.ascontiguousarray(self.per_tick, dtype=float)
        w.per_tick, w.limit = double_ptr(self.per_tick), double_ptr(self.limit)
        w.knee = double_ptr(self.knee) if self.knee is not None else ffi.NULL
        w.no_load = double_ptr(self.no_load) if self.no_load is not None else ffi.NULL
        for name in ("prev", "before", "asked_line", "given_line", "low", "high", "law_now",
                     "law_before", "scratch"):
            setattr(w, name, double_ptr(getattr(self, name)))
        w.same = ffi.cast("int64_t *", ffi.from_buffer(self.same))
        w.counted = ffi.cast("int64_t *", ffi.from_buffer(self.counted))
        return w

    def reset(self) -> None:
        """Forget the running counts (the robot left the stiff states)."""
        self._c.have_prev = self._c.have_before = 0
        self.same[:] = 0
        self.counted[:] = 0
        self.imu_prev = None
        self.imu_same = 0
        self.low_battery = 0

    def joints(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, pos: np.ndarray, vel: np.ndarray,
               kp: np.ndarray, kd: np.ndarray, tau_ff: np.ndarray, ticks: int = 1) -> Finding | None:
        """The joint_state that arrived this tick against the previous tick's
        command (pos, vel, kp, kd, tau_ff: what the driver's law ran on
        since); `ticks` since the reading before it (1: one every tick).
        Float64 arrays of the joints; the counting is csrc/watch.c's."""
        c, n = self.c, len(self.names)
        arrays = (q, qd, tau, pos, vel, kp, kd, tau_ff)
        bound = self._bound_to
        # The controller passes the same arrays every tick: checked and turned
        # into C pointers once, again only when one of them is another object.
        if bound is None or any(a is not b for a, b in zip(arrays, bound)):
            for a in arrays:
                if a.dtype != np.float64 or a.shape != (n,) or not a.flags.c_contiguous:
                    raise ValueError(f"sensor watch: {n} contiguous float64 values expected")
            self._bound_to = arrays
            self._c_in = tuple(double_ptr(a) for a in arrays)
        found = lib.mk_sensor_joints(self._c, *self._c_in, ticks, self._joint, self._c_detail)
        if found == lib.MK_SENSOR_OK:
            return None
        j = int(self._joint[0])
        if found == lib.MK_SENSOR_JUMP:
            moved, step = float(self.detail[0]), float(self.detail[1])
            span = "in one tick" if ticks <= 1 else \
                f"in {ticks} ticks (its speed limit allows {moved - step:.2f} more than one tick's)"
            return Finding("encoder_jump", f"{self.names[j]} moved {moved:.2f} rad {span} "
                           f"(safety.encoder_jump_rad {c.encoder_jump_rad:g}): its encoder", j)
        if found == lib.MK_SENSOR_FROZEN:
            return Finding("encoder_frozen", f"{self.names[j]} has read {q[j]:.4f} rad to the last bit for "
                           f"{c.encoder_freeze_ms:g} ms, {abs(pos[j] - q[j]):.2f} rad from its target "
                           "(safety.encoder_freeze_ms): its encoder", j)
        # Fast, a real motor gives less than its law asks by design; but one
        # that gives next to nothing at any speed is dead.
        return Finding("motor_weak", f"{self.names[j]} gave {float(self.detail[0]):.0%} of the torque its "
                       f"law asked for over {c.torque_ms:g} ms (safety.torque_share {c.torque_share:g}): "
                       "its motor or driver", j)

    def imu(self, quaternion: np.ndarray, gyro: np.ndarray, accel: np.ndarray, q: np.ndarray,
            ticks: int = 1) -> Finding | None:
        """An imu sample that arrived this tick, `ticks` after the one before,
        and the joints now: frozen when it repeats while the joints move (a
        robot lying perfectly still in a noiseless simulation repeats itself
        too)."""
        sample = np.concatenate([quaternion, gyro, accel])
        if self.imu_prev is not None and np.array_equal(sample, self.imu_prev):
            self.imu_same += ticks
        else:
            self.imu_same = 0
            self.imu_q0[:] = q
        self.imu_prev = sample
        if self.imu_same >= self.imu_ticks and np.abs(q - self.imu_q0).max() > IMU_FREEZE_MOTION:
            self.imu_same = 0
            return Finding("imu_frozen", f"the imu has repeated itself to the last bit for "
                           f"{self.c.imu_freeze_ms:g} ms (safety.imu_freeze_ms)")
        return None

    def battery(self, volts: float | None) -> Finding | None:
        critical = self.c.battery_critical_v
        if critical <= 0.0 or volts is None:
            return None
        self.low_battery = self.low_battery + 1 if volts < critical else 0
        if self.low_battery >= self.battery_ticks:
            self.low_battery = 0
            return Finding("battery_critical", f"the battery has been at {volts:.1f} V, under "
                           f"safety.battery_critical_v {critical:g}, for {self.c.battery_ms:g} ms")
        return None
