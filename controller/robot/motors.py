"""A motor's torque-speed envelope: what a real servo can give at a joint
speed. Used by the physics body's real actuators (controller/sim/actuators.py)
and by the weak-motor check (controller/core/sensor_watch.py), which must not
call a motor weak for giving what its envelope allows."""
from __future__ import annotations

import numpy as np


def envelope(qd: np.ndarray, limit: np.ndarray, knee: np.ndarray, no_load: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """The torque range (low, high) a motor can give at joint speed qd: full
    `limit` braking; driving, `limit` up to `knee`, falling straight to 0
    at `no_load` and beyond."""
    driving = limit * np.clip((no_load - np.abs(qd)) / (no_load - knee), 0.0, 1.0)
    high = np.where(qd > 0.0, driving, limit)
    low = np.where(qd < 0.0, -driving, -limit)
    return low, high


def per_joint(value: object, num_joints: int, legs: int) -> np.ndarray:
    """One number for every joint, one per leg joint (abad hip knee)
    repeated per leg, or one per joint; ValueError otherwise."""
    values = np.atleast_1d(np.asarray(value, dtype=float))
    if values.size == 1:
        return np.full(num_joints, float(values[0]))
    if values.size == num_joints:
        return values
    per_leg = num_joints // max(1, legs)
    if values.size != per_leg or num_joints != per_leg * legs:
        raise ValueError(f"expected one number or {per_leg} (one per leg joint), not {values.size}")
    return np.tile(values, legs)
