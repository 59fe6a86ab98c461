"""The `safety` section: robot-side faults that put the robot in the damper."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from controller.robot.config.reader import Reader


@dataclass(frozen=True)
class SensorLimits:
    """Broken parts the readings show (controller/core/sensor_watch.py)."""
    encoder_jump_rad: float = 0.25
    encoder_freeze_ms: float = 100.0
    encoder_freeze_error_rad: float = 0.1
    torque_ms: float = 60.0
    torque_share: float = 0.6
    torque_min: float = 3.0           # N m
    torque_speed: float = 10.0        # rad/s
    imu_freeze_ms: float = 50.0
    battery_critical_v: float = 0.0   # V; 0: not checked
    battery_ms: float = 500.0
    gyro_bias_rad_s: float = 0.12     # the gyro against the loaded feet; 0: not checked
    gyro_bias_ms: float = 200.0
    gyro_window_s: float = 0.5
    # The motors' torque-speed envelope (controller/robot/motors.py), per
    # joint type or per joint: full torque to motor_knee_speed, none at
    # motor_no_load_speed (rad/s). None: not known, the check trusts
    # torque_speed alone.
    motor_knee_speed: tuple[float, ...] | None = None
    motor_no_load_speed: tuple[float, ...] | None = None


@dataclass(frozen=True)
class SafetyConfig:
    """Faults of the robot side that put the robot in the damper (EDAMP) on
    their own (docs/RELIABILITY.md): the joint_state stream stopping, the
    imu stream stopping once it has started, and a joint that stays far from
    its target; and when the robot counts as picked up (mode 9 LIFTED)."""
    joint_state_timeout_ms: float = 50.0
    tracking_error_rad: float = 0.8     # measured vs commanded position, per joint
    tracking_error_ms: float = 20.0     # for this long without a break
    tracking_min_kp: float = 1.0        # N m/rad: softer joints are compliant by design
    imu_timeout_ms: float = 50.0
    # LIFTED (SPEC §5.8): the feet carry under lift_load of the weight while
    # the IMU feels about one g, for lift_ms; landed above land_load.
    lift_load: float = 0.15
    land_load: float = 0.6
    lift_ms: float = 100.0
    # Broken parts the readings show (controller/core/sensor_watch.py).
    sensors: SensorLimits = SensorLimits()


def load_safety(r: Reader) -> SafetyConfig:
    if "safety" not in r.data:
        return SafetyConfig()
    sr = r.sub("safety")
    d = SafetyConfig()
    return SafetyConfig(
        joint_state_timeout_ms=sr.number("joint_state_timeout_ms", 4.0, 5000.0,
                                         d.joint_state_timeout_ms),
        imu_timeout_ms=sr.number("imu_timeout_ms", 4.0, 5000.0, d.imu_timeout_ms),
        tracking_error_rad=sr.number("tracking_error_rad", 0.05, 6.3, d.tracking_error_rad),
        tracking_error_ms=sr.number("tracking_error_ms", 0.0, 1000.0, d.tracking_error_ms),
        tracking_min_kp=sr.number("tracking_min_kp", 0.0, 10000.0, d.tracking_min_kp),
        lift_load=sr.number("lift_load", 0.0, 1.0, d.lift_load),
        land_load=sr.number("land_load", 0.0, 1.0, d.land_load),
        lift_ms=sr.number("lift_ms", 2.0, 5000.0, d.lift_ms),
        sensors=_sensor_limits(sr),
    )


def _sensor_limits(sr: Reader) -> SensorLimits:
    d = SensorLimits()
    return SensorLimits(
        encoder_jump_rad=sr.number("encoder_jump_rad", 0.01, 6.3, d.encoder_jump_rad),
        encoder_freeze_ms=sr.number("encoder_freeze_ms", 4.0, 10000.0, d.encoder_freeze_ms),
        encoder_freeze_error_rad=sr.number("encoder_freeze_error_rad", 0.0, 6.3, d.encoder_freeze_error_rad),
        torque_ms=sr.number("torque_ms", 4.0, 10000.0, d.torque_ms),
        torque_share=sr.number("torque_share", 0.0, 1.0, d.torque_share),
        torque_min=sr.number("torque_min", 0.0, 1000.0, d.torque_min),
        torque_speed=sr.number("torque_speed", 0.0, 1000.0, d.torque_speed),
        imu_freeze_ms=sr.number("imu_freeze_ms", 4.0, 10000.0, d.imu_freeze_ms),
        battery_critical_v=sr.number("battery_critical_v", 0.0, 1000.0, d.battery_critical_v),
        battery_ms=sr.number("battery_ms", 2.0, 60000.0, d.battery_ms),
        gyro_bias_rad_s=sr.number("gyro_bias_rad_s", 0.0, 10.0, d.gyro_bias_rad_s),
        gyro_bias_ms=sr.number("gyro_bias_ms", 4.0, 60000.0, d.gyro_bias_ms),
        gyro_window_s=sr.number("gyro_window_s", 0.05, 60.0, d.gyro_window_s),
        **_motor_envelope(sr),
    )


def _motor_envelope(sr: Reader) -> dict[str, tuple[float, ...] | None]:
    """`motor_knee_speed` and `motor_no_load_speed`: both or neither, each
    one number, one per leg joint type or one per joint (the count is
    checked against the robot's joints when the watch is built), with
    0 <= knee < no load."""
    keys = ("motor_knee_speed", "motor_no_load_speed")
    given = [k for k in keys if k in sr.data]
    if not given:
        return {}
    if len(given) == 1:
        raise sr.fail(given[0], f"give both {keys[0]} and {keys[1]} (the motors' torque-speed envelope)")
    out: dict[str, tuple[float, ...] | None] = {}
    for key in keys:
        raw = sr.data[key]
        values = raw if isinstance(raw, list) else [raw]
        if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise sr.fail(key, f"expected a number or a list of numbers (rad/s), got {raw!r}")
        out[key] = tuple(float(v) for v in values)
    try:
        knee, no_load = np.broadcast_arrays(np.array(out[keys[0]]), np.array(out[keys[1]]))
    except ValueError:
        raise sr.fail(keys[1], f"{len(out[keys[1]] or ())} speeds against {len(out[keys[0]] or ())} "
                      "knee speeds") from None
    if np.any(knee < 0) or np.any(knee >= no_load):
        raise sr.fail(keys[0], "each must be 0 or more and under its motor_no_load_speed")
    return out
