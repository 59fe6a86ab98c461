"""Scale-free defaults for a quadruped (issue 42 item 3): the figures a
config may leave out, taken from the robot they were tuned on (CyberDog 2,
config/cyberdog2.yaml) and scaled to this robot by its mass and leg length.

With the mass M and the leg length L of a robot over the reference's:
- a force (the most one foot pushes, the load that makes a foot a stance
  foot) grows with the weight: x M;
- a joint stiffness (N m/rad) with the torque the weight makes about the
  joint: x M L, so a leg under its share of the weight gives as many radians;
- a joint damping (N m s/rad) keeps its damping ratio: the stiffness times
  the leg's time scale sqrt(L/g), x M L^1.5;
- the MPC's weight on the forces themselves is set against state errors
  that do not scale, while the forces grow with M: / M^2.

Measured (docs/CONFIG.md "Scale-free defaults"): Unitree Go1's own model
scaled to 5, 12.7 and 50 kg trots at 1.03-1.05 of its command from these;
with CyberDog 2's unscaled figures the 50 kg one does not stand up."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

REFERENCE = "CyberDog 2's"
REFERENCE_MASS = 8.0             # kg: config/cyberdog2.yaml geometry.mass
REFERENCE_LEG = 0.12 + 0.17391   # m: its hip_link + knee_link
REFERENCE_STAND = 0.24           # m: its poses.stand_height

# CyberDog 2's joint gain sets, kp and kd per joint type (abad hip knee).
GAINS: dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    "pose": ((40, 30, 30), (2.0, 1.5, 1.5)),
    "pose_swing_compliant": ((40, 0.5, 0.5), (2.0, 0.05, 0.05)),
    "recovery": ((60, 80, 60), (2.5, 2.0, 1.5)),
    "lie_down": ((60, 80, 60), (2.0, 2.0, 1.5)),
    "damper": ((0, 0, 0), (1.75, 3.5, 3.5)),
    "motor_ctrl_lost": ((0, 0, 0), (4.0, 4.0, 4.0)),
    "posture": ((40, 30, 30), (2.0, 1.5, 1.5)),
    "stance": ((60, 60, 60), (2.0, 2.0, 1.5)),
    "swing": ((30, 30, 30), (1.0, 1.0, 1.0)),
}
# Its balance, estimator and terrain figures, by how each scales.
FORCES = {"balance.force_max": 150.0, "estimator.contact_force": 12.0,
          "estimator.contact_band": 8.0, "balance.terrain.load": 12.0}
STIFFNESS = {"balance.stance_kp": (10.0, 10.0, 10.0)}
DAMPING = {"balance.stance_kd": (1.0, 1.0, 1.0)}
REGULARISATION = 4.0e-5          # balance.regularisation


@dataclass(frozen=True)
class Scale:
    """This robot against the reference: mass and leg-length ratios."""
    mass: float
    leg: float

    @classmethod
    def of(cls, mass: float, hip_link: float, knee_link: float) -> Scale:
        return cls(mass / REFERENCE_MASS, (hip_link + knee_link) / REFERENCE_LEG)

    def force(self, key: str) -> float:
        return FORCES[key] * self.mass

    def kp(self, values: tuple[float, ...] | np.ndarray) -> np.ndarray:
        return np.asarray(values, dtype=float) * (self.mass * self.leg)

    def kd(self, values: tuple[float, ...] | np.ndarray) -> np.ndarray:
        return np.asarray(values, dtype=float) * (self.mass * self.leg ** 1.5)

    def regularisation(self) -> float:
        return REGULARISATION / self.mass ** 2

    def gains(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        kp, kd = GAINS[name]
        return self.kp(kp), self.kd(kd)

    def describe(self) -> str:
        return (f"{REFERENCE} figures x mass {self.mass:.3g}, leg length {self.leg:.3g} "
                f"(kp x {self.mass * self.leg:.3g}, kd x {self.mass * self.leg ** 1.5:.3g}, "
                f"forces x {self.mass:.3g})")


def scaled_keys(data: dict[str, Any]) -> tuple[str, ...]:
    """The keys a quadruped's raw config leaves out that take scaled figures
    (what check-config lists)."""
    def has(path: str) -> bool:
        node: Any = data
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    keys = [f"gains.{name}" for name in GAINS if not has(f"gains.{name}")]
    if has("balance"):
        keys += [key for key in (*FORCES, *STIFFNESS, *DAMPING, "balance.regularisation")
                 if key.startswith("balance.") and not has(key)]
    keys += [key for key in FORCES if key.startswith("estimator.") and not has(key)]
    return tuple(keys)
