"""A quadruped's lower legs on its simulated body: what may touch the ground
besides the feet without counting as a fall. The scorecard (shank_contact_s,
apart from trunk_contact_s) and the motion optimiser (a jump's landing) judge
a touch of the ground by this one definition."""
from __future__ import annotations

from typing import Any

from controller.robot.config import Config
from controller.sim.own_model import model_joints
from controller.sim.physics import geom_labels

KNEE_GEOMS = ("_knee_pad", "_thigh", "_hip_cover")   # a quadruped's leg above the shank


def lower_leg_geoms(model: Any, cfg: Config, order: list[int], feet: set[int]) -> frozenset[int]:
    """The geoms (ids) on the bodies each leg's last joint moves (a calf, a
    shin guard) and their children, but not a foot (`feet`, ids) and not a
    knee (KNEE_GEOMS); found from the model's tree, so a maker's unnamed calf
    capsule is one. `order`: the simulated body's wire slot -> the
    controller's joint (PhysicsRobot.model_map.order). Empty for a humanoid."""
    if cfg.kind != "quadruped":
        return frozenset()
    names, _ = model_joints(cfg)
    moved: set[int] = set()
    for leg in cfg.legs:
        last = max(i for i, n in enumerate(cfg.joint_names) if n.startswith(f"{leg}_"))
        moved.add(int(model.jnt_bodyid[model.joint(names[order.index(last)]).id]))
    for b in range(model.nbody):
        if int(model.body_parentid[b]) in moved:
            moved.add(b)
    labels = geom_labels(model)
    return frozenset(g for g in range(model.ngeom)
                     if int(model.geom_bodyid[g]) in moved and g not in feet
                     and not labels[g].endswith(KNEE_GEOMS))
