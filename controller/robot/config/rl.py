"""A quadruped's `rl_reset` section: mode 80's recovered pose and, when the
user names one, the robot's own learned recovery policy (SPEC §12.C.1) with
the joint normalisation it was trained with. Every key is optional; the
defaults are CyberDog 2's figures."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from controller.robot.config.reader import Reader

# The training order of the reference's policies, by leg name (SPEC §12.C.1).
POLICY_LEG_ORDER = ("FL", "FR", "RL", "RR")


def _deg(*values: float) -> np.ndarray:
    return np.radians(np.array(values, dtype=float))


@dataclass(frozen=True)
class RlResetConfig:
    # A weight file in the reference's format (controller/motion/mlp.py);
    # None: motiond's own model-based recovery runs instead.
    policy: Path | None = None
    # The crouched stand mode 80 ends in, per leg (abad, hip, knee), rad: the
    # progress bar's q_rec and the own recovery's last pose.
    crouch: np.ndarray = field(default_factory=lambda: np.array([0.0, -0.88, 1.44]))
    # The policy's joint normalisation: q = action x range + mid.
    mid_front: np.ndarray = field(default_factory=lambda: _deg(0.0, -42.0, 87.5))
    mid_rear: np.ndarray = field(default_factory=lambda: _deg(0.0, -62.0, 87.5))
    range: np.ndarray = field(default_factory=lambda: _deg(39.0, 118.0, 57.5))


KEYS = ("policy", "crouch", "mid_front_deg", "mid_rear_deg", "range_deg")


def load_rl_reset(r: Reader, path: Path, legs: list[str]) -> RlResetConfig:
    if "rl_reset" not in r.data:
        return RlResetConfig()
    s = r.sub("rl_reset")
    unknown = sorted(set(s.data) - set(KEYS))
    if unknown:
        raise s.fail(unknown[0], f"unknown key (known: {', '.join(KEYS)})")
    default = RlResetConfig()
    policy: Path | None = None
    name = s.get("policy", (str, type(None)), None)
    if name is not None:
        policy = (path.parent / Path(name).expanduser()).resolve()
        if not policy.is_file():
            raise s.fail("policy", f"{policy} is not a file (the path is relative to this config)")
        if sorted(legs) != sorted(POLICY_LEG_ORDER):
            raise s.fail("policy", f"the policy's legs are {list(POLICY_LEG_ORDER)}; this robot has {legs}")
    ranges = np.radians(s.vector("range_deg", 3, s.data.get("range_deg", list(np.degrees(default.range)))))
    if (ranges <= 0).any():
        raise s.fail("range_deg", "each must be positive")

    def deg(key: str, fallback: np.ndarray) -> np.ndarray:
        return np.radians(s.vector(key, 3, s.data.get(key, list(np.degrees(fallback)))))

    return RlResetConfig(policy=policy,
                         crouch=s.vector("crouch", 3, s.data.get("crouch", list(default.crouch))),
                         mid_front=deg("mid_front_deg", default.mid_front),
                         mid_rear=deg("mid_rear_deg", default.mid_rear), range=ranges)
