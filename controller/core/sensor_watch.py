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

import numpy as np

from controller.motion.scripts import ms_to_ticks
from controller.robot.config.safety import SensorLimits
from controller.robot.motors import envelope, per_joint

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
        self.c = limits
        self.names = joint_names
        n = len(joint_names)
        # rad a joint can move per tick at its speed limit: a reading some
        # ticks after the last may have moved this much more per tick between.
        self.per_tick = np.broadcast_to(np.asarray(v_max, dtype=float), (n,)) / tick_hz
        self.limit = np.broadcast_to(np.asarray(torque_limit, dtype=float), (n,)).copy()
        # The motors' envelope, per joint (None: not known).
        self.knee = self.no_load = None
        if limits.motor_knee_speed is not None and limits.motor_no_load_speed is not None:
            self.knee = per_joint(limits.motor_knee_speed, n, legs)
            self.no_load = per_joint(limits.motor_no_load_speed, n, legs)
        self.min_kp = min_kp
        self.freeze_ticks = ms_to_ticks(limits.encoder_freeze_ms, tick_hz)
        self.torque_ticks = ms_to_ticks(limits.torque_ms, tick_hz)
        self.imu_ticks = ms_to_ticks(limits.imu_freeze_ms, tick_hz)
        self.battery_ticks = ms_to_ticks(limits.battery_ms, tick_hz)
        self.q_prev: np.ndarray | None = None
        self.before = np.zeros((5, n))     # the command before the last: pos, vel, kp, kd, tau_ff
        self.have_before = False
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
        self.slot = 0
        self.imu_prev: np.ndarray | None = None
        self.imu_same = 0
        self.imu_q0 = np.zeros(n)                      # the joints when the imu last changed
        self.low_battery = 0

    def reset(self) -> None:
        """Forget the running counts (the robot left the stiff states)."""
        self.q_prev = None
        self.have_before = False
        self.same[:] = 0
        self.counted[:] = 0
        self.imu_prev = None
        self.imu_same = 0
        self.low_battery = 0

    def joints(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, pos: np.ndarray, vel: np.ndarray,
               kp: np.ndarray, kd: np.ndarray, tau_ff: np.ndarray, ticks: int = 1) -> Finding | None:
        """The joint_state that arrived this tick against the previous tick's
        command (pos, vel, kp, kd, tau_ff: what the driver's law ran on
        since); `ticks` since the reading before it (1: one every tick)."""
        c = self.c
        prev, self.q_prev = self.q_prev, q.copy()
        if prev is None:
            return None
        step = np.abs(q - prev)
        if ticks > 1:
            step -= (ticks - 1) * self.per_tick     # what its speed allowed between
        jumped = int(np.argmax(step))
        if step[jumped] > c.encoder_jump_rad:
            moved = abs(q[jumped] - prev[jumped])
            span = "in one tick" if ticks <= 1 else \
                f"in {ticks} ticks (its speed limit allows {moved - step[jumped]:.2f} more than one tick's)"
            return Finding("encoder_jump", f"{self.names[jumped]} moved {moved:.2f} rad {span} "
                           f"(safety.encoder_jump_rad {c.encoder_jump_rad:g}): its encoder", jumped)
        stiff = kp >= self.min_kp
        self.same = np.where((q == prev) & stiff, self.same + ticks, 0)
        frozen = np.flatnonzero((self.same >= self.freeze_ticks) & (np.abs(pos - q) > c.encoder_freeze_error_rad))
        if len(frozen):
            j = int(frozen[0])
            return Finding("encoder_frozen", f"{self.names[j]} has read {q[j]:.4f} rad to the last bit for "
                           f"{c.encoder_freeze_ms:g} ms, {abs(pos[j] - q[j]):.2f} rad from its target "
                           "(safety.encoder_freeze_ms): its encoder", j)
        # The driver runs its law on a command a tick or so after it was
        # sent (the bus): what it gave since the last reading may be the law
        # of this command or of the one before, so the smaller of the two is
        # what it was asked (on real motors with a 2-3 ms delay Go2's trot
        # read 50-56 % against this command alone, 70-75 % against either).
        if self.knee is not None and self.no_load is not None:
            self.low, self.high = envelope(qd, self.limit, self.knee, self.no_load)
        asked = self._law(q, qd, pos, vel, kp, kd, tau_ff, self.law_now)
        if self.have_before:
            b = self.before
            np.minimum(asked, self._law(q, qd, b[0], b[1], b[2], b[3], b[4], self.law_before), out=asked)
        b = self.before
        b[0], b[1], b[2], b[3], b[4] = pos, vel, kp, kd, tau_ff
        self.have_before = True
        # Fast, a real motor gives less than its law asks by design; but one
        # that gives next to nothing at any speed is dead.
        nothing = np.abs(tau) < DEAD_SHARE * asked
        counting = stiff & (asked >= c.torque_min) & ((np.abs(qd) < c.torque_speed) | nothing)
        self.counted = np.where(counting, self.counted + 1, 0)
        self.asked_line[self.slot] = asked
        self.given_line[self.slot] = np.abs(tau)
        self.slot = (self.slot + 1) % self.torque_ticks
        full = self.counted >= self.torque_ticks
        if not full.any():
            return None
        asked_sum, given_sum = self.asked_line.sum(axis=0), self.given_line.sum(axis=0)
        weak = np.flatnonzero(full & (given_sum < c.torque_share * asked_sum))
        if len(weak):
            j = int(weak[0])
            share = given_sum[j] / asked_sum[j]
            return Finding("motor_weak", f"{self.names[j]} gave {share:.0%} of the torque its law asked for "
                           f"over {c.torque_ms:g} ms (safety.torque_share {c.torque_share:g}): its motor "
                           "or driver", j)
        return None

    def _law(self, q: np.ndarray, qd: np.ndarray, pos: np.ndarray, vel: np.ndarray, kp: np.ndarray,
             kd: np.ndarray, tau_ff: np.ndarray, out: np.ndarray) -> np.ndarray:
        """|torque| the driver's law gives for this command at q, qd, into
        `out`: inside the torque limit and, when the config knows it, the
        motor's torque-speed envelope at this tick's speeds (self.low/high)."""
        t = self.scratch
        np.subtract(vel, qd, out=t)
        np.multiply(kd, t, out=t)
        np.subtract(pos, q, out=out)
        np.multiply(kp, out, out=out)
        out += t
        out += tau_ff
        np.clip(out, self.low, self.high, out=out)
        return np.abs(out, out=out)

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
