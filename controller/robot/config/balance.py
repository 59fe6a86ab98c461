"""The quadruped's `balance` section: the single-rigid-body model and weights
of the convex MPC that chooses stance foot forces in mode 11, and the gains
and foot placement that go with it (controller/motion/mpc.py,
controller/behaviours/locomotion.py, docs/LOCOMOTION.md). Absent, mode 11
runs its gaits open loop."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from controller.robot.config.reader import Reader


@dataclass(frozen=True)
class BalanceConfig:
    mass: float                   # kg, the whole robot as the MPC models it
    inertia: np.ndarray           # (3,) kg m^2, principal moments in the body frame
    com_offset: np.ndarray        # (3,) m, centre of mass from the body origin
    friction: float               # friction cone the forces stay inside
    force_max: float              # N, largest normal force of one foot
    weights: np.ndarray           # (12,) roll pitch yaw, x y z, wx wy wz, vx vy vz
    regularisation: float         # weight on the forces themselves
    step: float                   # s, one MPC step (the gait segment)
    horizon: int                  # steps
    latency_ticks: int            # a plan is used this many ticks after its state was sampled
    position_slack: float         # m, how far the reference position may lead the estimate
    stance_kp: np.ndarray         # (3,) per joint type: soft joint gains on stance legs
    stance_kd: np.ndarray
    placement_gain: float         # s: landing point moves by this x (v_est - v_cmd)


def load_balance(r: Reader) -> BalanceConfig | None:
    if "balance" not in r.data:
        return None
    b = r.sub("balance")
    config = BalanceConfig(
        mass=b.number("mass", 0.1, 1000.0),
        inertia=b.vector("inertia", 3),
        com_offset=b.vector("com_offset", 3),
        friction=b.number("friction", 0.05, 2.0),
        force_max=b.number("force_max", 1.0, 10000.0),
        weights=b.vector("weights", 12),
        regularisation=b.number("regularisation", 1e-9, 1.0),
        step=b.number("step", 0.005, 0.2),
        horizon=int(b.number("horizon", 2, 40)),
        latency_ticks=int(b.number("latency_ticks", 0, 20, 2)),
        position_slack=b.number("position_slack", 0.0, 1.0, 0.1),
        stance_kp=b.vector("stance_kp", 3),
        stance_kd=b.vector("stance_kd", 3),
        placement_gain=b.number("placement_gain", 0.0, 1.0, 0.1),
    )
    if np.any(config.inertia <= 0.0):
        raise b.fail("inertia", f"{config.inertia.tolist()}: every moment must be positive")
    if np.any(config.weights < 0.0):
        raise b.fail("weights", "weights cannot be negative")
    if np.any(config.stance_kp < 0.0) or np.any(config.stance_kd < 0.0):
        raise b.fail("stance_kp", "gains cannot be negative")
    return config
