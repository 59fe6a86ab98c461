"""What the test robots' tests (tests/test_go1.py, tests/test_barkour_vb.py)
hold the simulated body to: the maker's MJCF as the simulator builds it
keeps every body, joint and foot figure of the maker's file."""
from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from controller.robot.config import Config
from controller.sim.mjcf import robot_mjcf


def assert_the_body_keeps_the_makers_figures(cfg: Config, maker_path: Path, trunk: str,
                                             feet: dict[str, str]) -> mujoco.MjModel:
    """The simulator swaps the actuators for its motors and adds the floor,
    the IMU's sensors and the foot sites; the bodies (the maker's `trunk`
    renamed trunk), joints and feet (`feet`: leg -> the maker's geom,
    renamed <leg>_foot) stay as the maker's file gives them. The
    simulated model, for more checks."""
    maker = mujoco.MjModel.from_xml_path(str(maker_path))
    sim = mujoco.MjModel.from_xml_string(robot_mjcf(cfg))
    for name in [maker.body(i).name for i in range(1, maker.nbody)]:
        ours = "trunk" if name == trunk else name
        for field in ("mass", "inertia", "ipos", "iquat", "pos", "quat"):
            np.testing.assert_array_equal(getattr(sim.body(ours), field), getattr(maker.body(name), field),
                                          err_msg=f"{name}.{field}")
    for j in range(1, maker.njnt):
        name = maker.joint(j).name
        for field in ("range", "axis"):
            np.testing.assert_array_equal(getattr(sim.joint(name), field), getattr(maker.joint(name), field))
        ours_dof, theirs = sim.joint(name).dofadr[0], maker.joint(name).dofadr[0]
        for field in ("dof_damping", "dof_armature", "dof_frictionloss"):
            assert getattr(sim, field)[ours_dof] == getattr(maker, field)[theirs], (name, field)
    for leg, name in feet.items():
        foot, theirs_geom = sim.geom(f"{leg}_foot"), maker.geom(name)
        for field in ("size", "pos", "friction", "solimp", "solref", "condim", "priority", "margin"):
            np.testing.assert_array_equal(getattr(foot, field), getattr(theirs_geom, field),
                                          err_msg=f"{leg}.{field}")
    assert sim.opt.cone == maker.opt.cone and sim.opt.impratio == maker.opt.impratio
    return sim
