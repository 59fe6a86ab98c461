"""Fall detection for a humanoid, from the IMU alone (config `fall`).

The torso's tilt is its angle from upright, theta = acos(z_body . z_world),
from the attitude filter's rotation with the yaw left out. A fall is a tilt
beyond `tilt` that is still growing at `tilt_rate` or faster (a filtered
difference of theta): a robot leaning on purpose, or lying still on the
floor, or rising from it (theta shrinking), is not falling. The direction
is forward when the torso's x axis points below the horizon (nose down),
backward otherwise."""
from __future__ import annotations

import math

import numpy as np

from controller.robot.config.fall import FallConfig

RATE_FILTER_S = 0.02        # time constant of the tilt rate's low-pass


class FallDetector:
    def __init__(self, cfg: FallConfig, dt: float) -> None:
        self.cfg = cfg
        self.dt = dt
        self.alpha = dt / (RATE_FILTER_S + dt)
        self.reset()

    def reset(self) -> None:
        self.tilt: float | None = None   # rad from upright; None without an IMU
        self.rate = 0.0                  # d tilt / dt, rad/s, filtered
        self.forward = True

    def update(self, level: np.ndarray | None) -> None:
        """Once a tick: `level` the IMU's rotation without yaw (Imu.tilt), or
        None when the IMU is not fresh (the rate starts over when it returns)."""
        if level is None:
            self.reset()
            return
        tilt = math.acos(max(-1.0, min(1.0, float(level[2, 2]))))
        if self.tilt is not None:
            self.rate += self.alpha * ((tilt - self.tilt) / self.dt - self.rate)
        self.tilt = tilt
        self.forward = float(level[2, 0]) < 0.0

    def falling(self) -> bool:
        c = self.cfg
        return self.tilt is not None and self.tilt >= c.tilt and self.rate >= c.tilt_rate
