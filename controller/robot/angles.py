"""Angles: the one place a heading is folded into [-pi, pi), and the one
place for unit quaternions (w x y z, body to world): to and from roll,
pitch and yaw (R = Rz(yaw) Ry(pitch) Rx(roll)), to a rotation matrix,
products and rotation vectors."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def wrap_angle(angle: float) -> float:
    """`angle` folded into [-pi, pi)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def quat_to_rotation(q: Sequence[float] | np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The body-to-world rotation matrix of unit quaternion q, into `out`
    (a (3, 3) array, reused on the hot path) or a new array."""
    w, x, y, z = (float(c) for c in q)
    r = np.empty((3, 3)) if out is None else out
    r[0, 0] = 1 - 2 * (y * y + z * z)
    r[0, 1] = 2 * (x * y - w * z)
    r[0, 2] = 2 * (x * z + w * y)
    r[1, 0] = 2 * (x * y + w * z)
    r[1, 1] = 1 - 2 * (x * x + z * z)
    r[1, 2] = 2 * (y * z - w * x)
    r[2, 0] = 2 * (x * z - w * y)
    r[2, 1] = 2 * (y * z + w * x)
    r[2, 2] = 1 - 2 * (x * x + y * y)
    return r


def quat_rpy(q: Sequence[float] | np.ndarray) -> tuple[float, float, float]:
    """Roll, pitch and yaw of unit quaternion q."""
    w, x, y, z = (float(c) for c in q)
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return roll, pitch, yaw


Quat = tuple[float, float, float, float]


def quat_product(a: Sequence[float], b: Sequence[float]) -> Quat:
    """The product a b of two quaternions, in plain floats (the simulated
    IMU's hot path: a few times faster than on numpy arrays of four)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw)


def quat_multiply(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> np.ndarray:
    return np.array(quat_product([float(c) for c in a], [float(c) for c in b]))


def rotation_quat(rx: float, ry: float, rz: float) -> Quat:
    """The unit quaternion of the rotation vector (rx, ry, rz), in plain floats."""
    v = np.array((rx, ry, rz))
    angle = math.sqrt(v.dot(v))     # summed as np.linalg.norm sums (its BLAS's order)
    if angle < 1e-12:
        return (1.0, 0.0, 0.0, 0.0)
    s = math.sin(angle / 2)
    return (math.cos(angle / 2), s * rx / angle, s * ry / angle, s * rz / angle)


def small_rotation(rx: float, ry: float, rz: float) -> np.ndarray:
    """The unit quaternion of the rotation vector (rx, ry, rz)."""
    return np.array(rotation_quat(float(rx), float(ry), float(rz)))


def rpy_quat(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """The unit quaternion of roll, pitch and yaw (the inverse of quat_rpy)."""
    return quat_multiply(quat_multiply(small_rotation(0.0, 0.0, yaw), small_rotation(0.0, pitch, 0.0)),
                         small_rotation(roll, 0.0, 0.0))
