"""Fall detection for a humanoid, from the IMU alone (config `fall`).

The torso's tilt is its angle from upright, theta = acos(z_body . z_world)
= acos(cos roll cos pitch), from the attitude filter (Imu.tilt). A fall is a tilt
beyond `tilt` that is still growing at `tilt_rate` or faster (a filtered
difference of theta): a robot leaning on purpose, or lying still on the
floor, or rising from it (theta shrinking), is not falling. The direction
is where the torso's up axis leans, the larger of its forward and sideways
parts: forward, backward, left or right."""
from __future__ import annotations

import math

from controller.behaviours.base import Imu
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
        self.direction = "forward"

    def update(self, imu: Imu | None) -> None:
        """Once a tick: the IMU, or None when it is not fresh (the rate
        starts over when it returns)."""
        if imu is None:
            self.reset()
            return
        tilt = imu.tilt
        if self.tilt is not None:
            self.rate += self.alpha * ((tilt - self.tilt) / self.dt - self.rate)
        self.tilt = tilt
        # The up axis in the level frame: Ry(pitch) Rx(roll) (0, 0, 1).
        ahead, left = math.sin(imu.pitch) * math.cos(imu.roll), -math.sin(imu.roll)
        if abs(ahead) >= abs(left):
            self.direction = "forward" if ahead > 0.0 else "backward"
        else:
            self.direction = "left" if left > 0.0 else "right"

    @property
    def forward(self) -> bool:
        """Falling forward: the `front` posture; any other way the `back` one."""
        return self.direction == "forward"

    def falling(self) -> bool:
        c = self.cfg
        return self.tilt is not None and self.tilt >= c.tilt and self.rate >= c.tilt_rate
