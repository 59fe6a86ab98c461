"""What the simulated robot's sensors report: the physics body's true state
with the imperfections of real sensors, so a controller tuned in simulation
meets on the robot what it met here.

- encoders: Gaussian noise on angle and speed;
- gyro: Gaussian noise plus a constant bias per axis, drawn once at start
  (what remains after the IMU's own calibration);
- accelerometer: Gaussian noise;
- orientation: the IMU's attitude filter, modelled as the true attitude with
  a little roll/pitch noise and a yaw that drifts with the gyro's z bias;
- delay: every reading reaches the controller `delay_ticks` ticks late.

All noise comes from one generator seeded from the config, so a run is
reproducible bit for bit. The figures live in the config's `sim.sensors`
section (docs/CONFIG.md); `enabled: false` makes every sensor ideal and
undelayed.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from controller.robot.angles import quat_product, rotation_quat
from controller.robot.config.reader import Reader


@dataclass(frozen=True)
class SensorConfig:
    enabled: bool = True
    seed: int = 0
    delay_ticks: int = 1
    encoder_noise: float = 1e-4         # rad, one sigma
    encoder_velocity_noise: float = 0.02  # rad/s
    gyro_noise: float = 0.004           # rad/s
    gyro_bias: float = 0.005            # rad/s, sigma of the per-axis bias
    accel_noise: float = 0.03           # m/s^2
    orientation_noise: float = 0.002    # rad, roll and pitch

    @staticmethod
    def from_sim(sim: dict[str, Any], path: Path) -> SensorConfig:
        """The `sim.sensors` section; errors name the file and the key."""
        r = Reader(path, sim, "sim")
        if "sensors" not in sim:
            return SensorConfig()
        s = r.sub("sensors")
        d = SensorConfig()
        return SensorConfig(
            enabled=s.get("enabled", bool, d.enabled),
            seed=int(s.number("seed", 0, 2**32 - 1, d.seed)),
            delay_ticks=int(s.number("delay_ticks", 0, 50, d.delay_ticks)),
            encoder_noise=s.number("encoder_noise", 0.0, 0.1, d.encoder_noise),
            encoder_velocity_noise=s.number("encoder_velocity_noise", 0.0, 10.0,
                                            d.encoder_velocity_noise),
            gyro_noise=s.number("gyro_noise", 0.0, 10.0, d.gyro_noise),
            gyro_bias=s.number("gyro_bias", 0.0, 1.0, d.gyro_bias),
            accel_noise=s.number("accel_noise", 0.0, 100.0, d.accel_noise),
            orientation_noise=s.number("orientation_noise", 0.0, 0.5, d.orientation_noise),
        )


@dataclass(frozen=True)
class Reading:
    """One sample of every sensor, as the controller receives it."""
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    quaternion: np.ndarray      # w x y z
    gyro: np.ndarray
    accel: np.ndarray


class Sensors:
    """Turns true states into readings and delays them."""

    def __init__(self, config: SensorConfig, dt: float) -> None:
        self.config = config
        self.dt = dt
        self.rng = np.random.default_rng(config.seed)
        on = config.enabled
        self.bias = self.rng.normal(0.0, config.gyro_bias, 3) if on else np.zeros(3)
        self.yaw_drift = 0.0
        self.delay = config.delay_ticks if on else 0
        self.line: deque[Reading] = deque(maxlen=self.delay + 1)
        self.sigma: np.ndarray | None = None
        # Broken sensors (controller/sim/faults.py): joint readings held at a
        # value, and the whole imu sample held at its last.
        self.hold_q: dict[int, float] = {}
        self.hold_imu = False

    def _sigmas(self, n: int) -> np.ndarray:
        """Per drawn number: roll, pitch, n angles, n speeds, 3 gyro, 3 accel."""
        c = self.config
        return np.concatenate([[c.orientation_noise] * 2, [c.encoder_noise] * n,
                               [c.encoder_velocity_noise] * n, [c.gyro_noise] * 3,
                               [c.accel_noise] * 3])

    def measure(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, quaternion: np.ndarray,
                gyro: np.ndarray, accel: np.ndarray) -> None:
        """Sample the true state once (call once per tick, after the physics)."""
        n = len(q)
        if self.sigma is None:
            self.sigma = self._sigmas(n)
        # One draw per tick for every sensor (zero noise when disabled).
        e = self.rng.standard_normal(len(self.sigma)) * self.sigma * float(self.config.enabled)
        self.yaw_drift += float(self.bias[2]) * self.dt
        seen = quat_product(quat_product(rotation_quat(0.0, 0.0, self.yaw_drift), quaternion.tolist()),
                            rotation_quat(float(e[0]), float(e[1]), 0.0))
        seen_q = np.array(seen)
        q_seen = q + e[2:2 + n]
        for j, held in self.hold_q.items():
            q_seen[j] = held
        reading = Reading(
            q=q_seen,
            qd=qd + e[2 + n:2 + 2 * n],
            tau=tau.copy(),
            quaternion=seen_q / math.sqrt(seen_q.dot(seen_q)),
            gyro=gyro + self.bias + e[2 + 2 * n:5 + 2 * n],
            accel=accel + e[5 + 2 * n:8 + 2 * n],
        )
        if self.hold_imu and self.line:
            last = self.line[-1]
            reading = Reading(reading.q, reading.qd, reading.tau, last.quaternion, last.gyro, last.accel)
        if not self.line:
            self.line.extend([reading] * (self.delay + 1))
        else:
            self.line.append(reading)

    @property
    def reading(self) -> Reading:
        """What the controller receives now: the sample of `delay_ticks` ago."""
        return self.line[0]
