"""What both kinds of body share: gain sets, the poses and gains each kind
needs, the joint velocity range and the `pose_height_range` key."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from controller.robot.config.reader import Reader

VMAX_RANGE = (0.1, 100.0)   # rad/s: a joint's velocity limit (quadruped and humanoid)
# Poses each kind needs: the damper's lie-down target, the sim's start pose,
# and for the humanoid the stand-up's waypoint and goal.
REQUIRED_POSES = {"quadruped": ("fold", "lie"), "humanoid": ("fold", "crouch", "stand", "lie")}
REQUIRED_GAINS = {
    "quadruped": ("pose", "pose_swing_compliant", "recovery", "lie_down", "damper",
                  "motor_ctrl_lost", "posture", "stance", "swing"),
    "humanoid": ("pose", "recovery", "lie_down", "damper"),   # + walk with a locomotion
}


@dataclass(frozen=True)
class Gains:
    kp: np.ndarray  # per joint, wire order
    kd: np.ndarray


def check_gains(r: Reader, kind: str, gains: dict[str, Gains]) -> None:
    for needed in REQUIRED_GAINS[kind]:
        if needed not in gains:
            raise r.sub("gains").fail(needed, "missing")


def check_poses(pr: Reader, kind: str, poses: dict[str, np.ndarray], names: list[str],
                 q_min: np.ndarray, q_max: np.ndarray) -> None:
    for needed in REQUIRED_POSES[kind]:
        if needed not in poses:
            raise pr.fail(needed, "missing")
    for pose_name, pose in poses.items():
        outside = (pose < q_min) | (pose > q_max)
        if outside.any():
            bad = [names[i] for i in np.flatnonzero(outside)]
            raise pr.fail(pose_name, f"outside the joint limits at {bad}")


def height_range(r: Reader, default: tuple[float, float], key: str = "pose_height_range") -> tuple[float, float]:
    if key not in r.data:
        return default
    lo, hi = r.vector(key, 2)
    if not 0.02 <= lo < hi <= 3.0:
        raise r.fail(key, f"expected 0.02 <= min < max <= 3, got {[lo, hi]}")
    return float(lo), float(hi)
