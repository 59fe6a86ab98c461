"""How far a robot's loaded feet sink into the floor, measured on its own
MJCF (`geometry.foot_sink` when the config does not write it).

A maker may model a rubber foot as a soft contact (Menagerie's Go1:
solimp 0.015 1 0.031, "softened to approximate the effect of rubber"):
standing, the foot sphere then sits well into the floor, and a body held at
its height over the feet's lowest points stands that much lower. How much
depends on the contact settings and on the mass the contact sees through
the leg (MuJoCo scales a soft contact's give by it), so it is measured, not
derived from the solimp figures: the simulated body, joints held at the
stand pose by a stiff driver's law, stood on the flat floor for SETTLE_S;
the feet's mean depth below their lowest point is the figure.

Read at config load (controller/robot/config/loader.py), once; it is a
figure of the model, as its masses are, never the running simulation's.
"""
from __future__ import annotations

import numpy as np

from controller.robot.config import Config, Geometry
from controller.robot.kinematics import QuadrupedKinematics

SETTLE_S = 1.5          # s of standing before the depth is read
HOLD_KP, HOLD_KD = 400.0, 10.0     # N m/rad, N m s/rad: the joints held at the stand


def measured_foot_sink(cfg: Config) -> float:
    """Metres the feet stand below their lowest point, on the flat floor, at
    the config's stand pose (0 when they do not sink)."""
    from controller.sim.physics import PhysicsRobot
    robot = PhysicsRobot(cfg)
    assert isinstance(cfg.geometry, Geometry)
    kin = QuadrupedKinematics(cfg.geometry)
    q, _ = kin.inverse(kin.stance_feet(cfg.stand_height, cfg.stand_com_x))
    q = np.asarray(q, dtype=float).reshape(-1)
    robot.place(q)
    n = cfg.num_joints
    zero, kp, kd = np.zeros(n), np.full(n, HOLD_KP), np.full(n, HOLD_KD)
    for _ in range(int(round(SETTLE_S * cfg.tick_hz))):
        robot.step(q, zero, kp, kd, zero, cfg.dt)
    model, data = robot.model, robot.data
    depths = []
    for leg in cfg.legs:
        g = model.geom(f"{leg}_foot").id
        depths.append(robot._extent(g) - float(data.geom_xpos[g][2]))
    return max(0.0, float(np.mean(depths)))
