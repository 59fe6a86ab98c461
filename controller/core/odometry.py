"""Planar odometry: the body pose integrated from its body-frame velocity.

Runs every tick (500 Hz), so `integrate` does a handful of float operations
and allocates nothing beyond Python floats. The pose feeds `global_to_robot`
(localization_lcmt, SPEC §1.6) and the goal executor (controller.core.goals).

Besides the pose, three counters that `set()` never touches, so that a client
re-zeroing its odometry in the middle of a move does not disturb the move:

- `path_length`: total distance travelled, m (always grows);
- `forward`: signed distance along the body x axis, m (integral of vx);
- `turned`: signed, unwrapped yaw turned, rad (integral of wz).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from controller.robot.angles import wrap_angle

# Below this |wz * dt| the arc formulas lose precision to cancellation; their
# Taylor series is then exact to float precision.
_SMALL_TURN = 1e-4


class Odometry:
    """Pose x, y, yaw in the odometry frame, with the last body and world velocity.

    `integrate` is exact for a twist that is constant over dt (arc
    integration): the body moves along a circle of radius v/wz, not along a
    chord, so a robot walking a circle closes it whatever the tick length.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Everything back to zero, as at start-up."""
        self.x = 0.0
        self.y = 0.0
        self.yaw = 0.0          # rad, wrapped to [-pi, pi)
        # Not estimated without an IMU and a height estimate; the controller
        # may set them (e.g. body height from leg kinematics) before fill().
        self.z = 0.0
        self.roll = 0.0
        self.pitch = 0.0
        self.vx = 0.0           # body frame, m/s
        self.vy = 0.0
        self.wz = 0.0           # rad/s
        self.path_length = 0.0
        self.forward = 0.0
        self.turned = 0.0

    def integrate(self, v_body: Sequence[float] | np.ndarray, dt: float) -> None:
        """Advance by dt seconds at body twist v_body = (vx, vy, wz) (m/s, m/s, rad/s)."""
        vx, vy, wz = float(v_body[0]), float(v_body[1]), float(v_body[2])
        theta = wz * dt
        if abs(theta) < _SMALL_TURN:
            # sin(t)/t and (1 - cos t)/t to third order.
            t2 = theta * theta
            s = dt * (1.0 - t2 / 6.0)
            c = dt * (theta / 2.0 - theta * t2 / 24.0)
        else:
            s = math.sin(theta) / wz
            c = (1.0 - math.cos(theta)) / wz
        # Displacement in the body frame at the start of the interval, then rotated.
        dx_b = s * vx - c * vy
        dy_b = c * vx + s * vy
        cos_y, sin_y = math.cos(self.yaw), math.sin(self.yaw)
        self.x += cos_y * dx_b - sin_y * dy_b
        self.y += sin_y * dx_b + cos_y * dy_b
        self.yaw = wrap_angle(self.yaw + theta)
        self.vx, self.vy, self.wz = vx, vy, wz
        # For a constant twist the speed is constant along the arc.
        self.path_length += math.hypot(vx, vy) * dt
        self.forward += vx * dt
        self.turned += theta

    def set(self, x: float, y: float, yaw: float) -> None:
        """Move the odometry frame so the body is at (x, y, yaw); velocities and counters stay."""
        self.x, self.y, self.yaw = float(x), float(y), wrap_angle(float(yaw))

    @property
    def vx_world(self) -> float:
        """Body velocity in the odometry frame (derived: read at 50 Hz, not every tick)."""
        return math.cos(self.yaw) * self.vx - math.sin(self.yaw) * self.vy

    @property
    def vy_world(self) -> float:
        return math.sin(self.yaw) * self.vx + math.cos(self.yaw) * self.vy

    def fill(self, msg: Any, timestamp_ns: int) -> Any:
        """Write the state into a msgs.localization_lcmt (in place, no new lists) and return it.

        xyz = (x, y, z), rpy = (roll, pitch, yaw), vxyz = world velocity with
        vz = 0, vBody = (vx, vy, 0), omegaBody = (0, 0, wz): a planar model.
        """
        _put3(msg.xyz, self.x, self.y, self.z)
        _put3(msg.vxyz, self.vx_world, self.vy_world, 0.0)
        _put3(msg.rpy, self.roll, self.pitch, self.yaw)
        _put3(msg.omegaBody, 0.0, 0.0, self.wz)
        _put3(msg.vBody, self.vx, self.vy, 0.0)
        msg.timestamp = int(timestamp_ns)
        return msg


def _put3(target: list[float], a: float, b: float, c: float) -> None:
    target[0], target[1], target[2] = a, b, c
