"""Broken parts only the readings show (docs/RELIABILITY.md "Broken parts"):
what a real controller can tell from joint_state and imu alone, checked
every tick while the robot holds its joints stiff (the states the tracking
check runs in). Each finding damps the robot (EDAMP) as the other faults do.

- encoder jump: a joint's angle moves further in one tick than the joint
  can (`encoder_jump_rad`): its encoder slipped or glitched;
- frozen encoder: a joint's angle repeats to the last bit for
  `encoder_freeze_ms` while it is stiff and away from its target by more
  than `encoder_freeze_error_rad` (a live encoder's count moves under a
  torque that large);
- weak or dead motor: over `torque_ms` of ticks with the driver's law asking
  for at least `torque_min` N m (at joint speeds under `torque_speed`, where
  the motor can give its full torque, or at any speed if it gives next to
  nothing), the torque the motor reports is under `torque_share` of it on
  average;
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

DEAD_SHARE = 0.1           # a motor giving under this share of what it is asked gives nothing
IMU_FREEZE_MOTION = 0.01    # rad: a joint moved this far while the imu repeated itself


@dataclass(frozen=True)
class Finding:
    event: str              # the log event
    text: str               # what last_error says
    joint: int | None = None


class SensorWatch:
    def __init__(self, limits: SensorLimits, joint_names: list[str], torque_limit: np.ndarray,
                 min_kp: float, tick_hz: float) -> None:
        self.c = limits
        self.names = joint_names
        n = len(joint_names)
        self.limit = np.broadcast_to(np.asarray(torque_limit, dtype=float), (n,)).copy()
        self.min_kp = min_kp
        self.freeze_ticks = ms_to_ticks(limits.encoder_freeze_ms, tick_hz)
        self.torque_ticks = ms_to_ticks(limits.torque_ms, tick_hz)
        self.imu_ticks = ms_to_ticks(limits.imu_freeze_ms, tick_hz)
        self.battery_ticks = ms_to_ticks(limits.battery_ms, tick_hz)
        self.q_prev: np.ndarray | None = None
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
        self.same[:] = 0
        self.counted[:] = 0
        self.imu_prev = None
        self.imu_same = 0
        self.low_battery = 0

    def joints(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, pos: np.ndarray, vel: np.ndarray,
               kp: np.ndarray, kd: np.ndarray, tau_ff: np.ndarray) -> Finding | None:
        """This tick's joint_state against the previous tick's command (pos,
        vel, kp, kd, tau_ff: what the driver's law ran on since)."""
        c = self.c
        prev, self.q_prev = self.q_prev, q.copy()
        if prev is None:
            return None
        step = np.abs(q - prev)
        jumped = int(np.argmax(step))
        if step[jumped] > c.encoder_jump_rad:
            return Finding("encoder_jump", f"{self.names[jumped]} moved {step[jumped]:.2f} rad in one "
                           f"tick (safety.encoder_jump_rad {c.encoder_jump_rad:g}): its encoder", jumped)
        stiff = kp >= self.min_kp
        self.same = np.where((q == prev) & stiff, self.same + 1, 0)
        frozen = np.flatnonzero((self.same >= self.freeze_ticks) & (np.abs(pos - q) > c.encoder_freeze_error_rad))
        if len(frozen):
            j = int(frozen[0])
            return Finding("encoder_frozen", f"{self.names[j]} has read {q[j]:.4f} rad to the last bit for "
                           f"{c.encoder_freeze_ms:g} ms, {abs(pos[j] - q[j]):.2f} rad from its target "
                           "(safety.encoder_freeze_ms): its encoder", j)
        asked = np.abs(np.clip(tau_ff + kp * (pos - q) + kd * (vel - qd), -self.limit, self.limit))
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

    def imu(self, quaternion: np.ndarray, gyro: np.ndarray, accel: np.ndarray, q: np.ndarray) -> Finding | None:
        """An imu sample that arrived this tick, and the joints now: frozen
        when it repeats while the joints move (a robot lying perfectly still
        in a noiseless simulation repeats itself too)."""
        sample = np.concatenate([quaternion, gyro, accel])
        if self.imu_prev is not None and np.array_equal(sample, self.imu_prev):
            self.imu_same += 1
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
