"""Unitree Go1 (issue 42's test robot): config/go1.yaml is `motionctl
new-robot go1` with only the maker's figures put in, and its body is the
maker's MJCF (config/physics/go1.xml, MuJoCo Menagerie's figures) as the
simulator builds it. What it scores is docs/robots/go1.md."""
from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from controller.robot.config import load_config
from controller.sim.mjcf import robot_mjcf
from controller.sim.trial import Trial

CFG = load_config(Path(__file__).resolve().parents[1] / "config" / "go1.yaml")
MAKER = CFG.path.parent / "physics" / "go1.xml"


def test_the_simulated_body_keeps_every_figure_of_the_makers_model() -> None:
    """The simulator swaps the actuators for its motors and adds the floor,
    the IMU's sensors and the foot sites; the bodies, joints and collision
    shapes stay as the maker's file gives them."""
    maker = mujoco.MjModel.from_xml_path(str(MAKER))
    sim = mujoco.MjModel.from_xml_string(robot_mjcf(CFG))
    for name in [maker.body(i).name for i in range(1, maker.nbody)]:
        ours = "trunk" if name == "trunk" else name
        for field in ("mass", "inertia", "ipos", "iquat", "pos", "quat"):
            np.testing.assert_array_equal(getattr(sim.body(ours), field), getattr(maker.body(name), field),
                                          err_msg=f"{name}.{field}")
    for j in range(1, maker.njnt):
        name = maker.joint(j).name
        for field in ("range", "axis"):
            np.testing.assert_array_equal(getattr(sim.joint(name), field), getattr(maker.joint(name), field))
        ours, theirs = sim.joint(name).dofadr[0], maker.joint(name).dofadr[0]
        for field in ("dof_damping", "dof_armature", "dof_frictionloss"):
            assert getattr(sim, field)[ours] == getattr(maker, field)[theirs], (name, field)
    for leg in CFG.legs:                                   # the maker's feet, renamed <leg>_foot
        foot, theirs = sim.geom(f"{leg}_foot"), maker.geom(leg)
        for field in ("size", "pos", "friction", "solimp", "solref", "condim", "priority", "margin"):
            np.testing.assert_array_equal(getattr(foot, field), getattr(theirs, field), err_msg=f"{leg}.{field}")
    assert sim.opt.cone == maker.opt.cone and sim.opt.impratio == maker.opt.impratio
    assert sum(sim.body_mass) == pytest.approx(12.743448)


def test_go1_stands_from_new_robots_defaults_and_the_makers_figures() -> None:
    t = Trial(CFG)
    t.send(12)
    t.run(3.0)
    truth = t.robot.truth()
    # The maker's feet are soft (solimp 0.015): they sink a little under 12.7 kg.
    assert truth.position[2] == pytest.approx(CFG.stand_height, abs=0.025)
    assert max(abs(a) for a in truth.rpy[:2]) < 0.05
    assert truth.contacts == {f"{leg}_foot" for leg in CFG.legs}
    assert t.trace.bar[-1] == 100
