"""`joint_damping`: the viscous damping of each joint beyond its motor
(N m s/rad; a quadruped's [abad, hip, knee]), which the controller adds
back to every stiff joint's feed-forward torque as damping x the target
speed (controller/core/controller.py), so that a joint that loses torque to
its own damping still moves at the speed its plan asks (and to the two-leg
stand's torque-controlled rear joints as damping x their measured speed,
controller/behaviours/two_leg.py).

Not written, it is the robot's own MJCF's when the config names one
(`sim.mjcf`: each `sim.mjcf_joints` joint's `damping`; the figure the
simulated body runs with), else none: a real joint's friction is the
maker's figure, and 0 adds nothing."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from controller.robot.config.reader import Reader
from controller.robot.mjcf_figures import compile_mjcf, joint_damping, mjcf_joint_names, mjcf_path

DAMPING_MAX = 50.0      # N m s/rad


def given_back(damping: np.ndarray | None) -> np.ndarray | None:
    """The damping the controller gives back (a float array per joint), or
    None for a robot whose joints have none (all zeros): the controller's
    stiff joints, the force jump's push and the motion optimiser's rollouts
    all ask this one question."""
    if damping is None or not (np.asarray(damping) > 0.0).any():
        return None
    return np.asarray(damping, dtype=float)


def load_joint_damping(r: Reader, path: Path, joints: int, joint_map: Any) -> np.ndarray:
    """Per joint, in the controller's order."""
    if "joint_damping" in r.data:
        per_type = r.vector("joint_damping", 3)
        if not ((per_type >= 0.0) & (per_type <= DAMPING_MAX)).all():
            raise r.fail("joint_damping", f"each must be in [0, {DAMPING_MAX:g}] N m s/rad, "
                                          f"got {per_type.tolist()}")
        return np.tile(per_type, joints // 3)
    sim = r.data.get("sim")
    own = mjcf_path(path, sim) if isinstance(sim, dict) else None
    if own is None:
        return np.zeros(joints)
    assert isinstance(sim, dict)
    names = mjcf_joint_names(sim, str(path), joints)
    model = compile_mjcf(own, f"{path}: sim.mjcf")
    wire = joint_damping(model, names, f"{path}: sim.mjcf")
    return np.asarray(joint_map.plain_from_wire(wire), dtype=float)
