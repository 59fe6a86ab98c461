"""Mode 21 lifting a foot (contact mask with a leg up): the body first moves
its centre of mass inside the triangle of the other three feet, then the
foot lifts (controller/behaviours/pose.py). In physics, judged on ground
truth: lifting any single foot 5 cm leaves the robot on its three feet,
nothing else touching the ground."""
from __future__ import annotations

import numpy as np
import pytest

from controller.behaviours.pose import inside_support
from controller.robot.config import Geometry, load_config
from controller.sim.trial import Trial

CFG = load_config()
assert isinstance(CFG.geometry, Geometry)
FOOT_RADIUS = CFG.geometry.foot_radius
LEGS = ("FR", "FL", "RR", "RL")


def test_a_point_outside_the_support_moves_the_least_way_to_the_margin():
    feet = np.array([[0.2, 0.1], [-0.2, -0.1], [-0.2, 0.1]])    # FL, RR, RL of a box
    p = inside_support(feet, np.array([0.05, 0.0]), 0.03)
    # The diagonal FL-RR is the edge it crosses: it ends 3 cm inside it...
    edge = feet[1] - feet[0]
    normal = np.array([-edge[1], edge[0]]) / np.linalg.norm(edge)
    assert abs(abs(float((p - feet[0]) @ normal)) - 0.03) < 1e-9
    # ...moved along that edge's normal only.
    moved = p - np.array([0.05, 0.0])
    assert abs(float(moved @ edge)) < 1e-9


def test_a_point_well_inside_stays_where_it_is():
    feet = np.array([[0.2, 0.1], [-0.2, -0.1], [-0.2, 0.1]])
    inner = np.array([-0.1, 0.05])
    np.testing.assert_array_equal(inside_support(feet, inner, 0.03), inner)


@pytest.mark.parametrize("leg", range(4), ids=LEGS)
def test_lifting_any_one_foot_leaves_the_robot_on_the_other_three(leg):
    trial = Trial(CFG)
    trial.send(12)
    trial.run(3.0)
    contact = 0b1111 & ~(1 << leg)
    trial.send(21, gait_id=0, contact=contact, foot_pose=[0, 0, 0.05], duration=1500)
    trial.run(2.5)
    down = {f"{name}_foot" for i, name in enumerate(LEGS) if i != leg}
    truth = trial.robot.truth()
    assert truth.contacts == down, f"{LEGS[leg]} up, the others down, nothing else"
    roll, pitch, _ = truth.rpy
    assert max(abs(roll), abs(pitch)) < 0.15
    lifted = trial.trace.feet[-1][trial.feet.index(f"{LEGS[leg]}_foot")][2] - FOOT_RADIUS
    assert lifted > 0.01, f"the {LEGS[leg]} foot is {lifted:.3f} m off the ground"
