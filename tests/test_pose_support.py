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


def test_a_step_that_folds_a_knee_to_its_limit_does_not_move_where_the_next_starts():
    """The reference keeps its feet as state and clamps only the joint targets
    (SPEC §6.1): relative steps that sum to nothing end where they began even
    when one of them asks a leg past its limit (the hi-five's sit folds a rear
    knee to it). Judged on ground truth: back level, where it started."""
    trial = Trial(CFG)
    trial.send(12)
    trial.run(3.0)
    start = trial.robot.truth()
    # Nose up 0.45, 5 cm back, 4 cm right and 4 cm down: the right rear knee reaches its limit.
    trial.send(21, gait_id=1, rpy_des=[0, 0.45, 0], pos_des=[-0.05, -0.04, -0.04], duration=800)
    trial.run(1.2)
    knee = 3 * 2 + 2
    assert abs(trial.ctl.kernel.pos[knee] - (CFG.q_max[knee] - 0.06)) < 1e-6, "RR's knee clamps"
    trial.send(21, gait_id=1, rpy_des=[0, -0.45, 0], pos_des=[0.05, 0.04, 0.04], duration=800)
    trial.run(1.5)
    end = trial.robot.truth()
    roll, pitch, _ = end.rpy
    # (Rebuilt from the clamped joints instead, it ended 0.02 rad off in both.)
    assert abs(pitch - start.rpy[1]) < 0.01 and abs(roll - start.rpy[0]) < 0.01, (roll, pitch)


def test_a_turning_block_moves_the_body_along_the_reference_s_per_tick_path():
    """Every tick the reference turns the feet by R = Ry(pitch / D) and then
    moves them by -pos_des / D (SPEC §12.F.1): each tick's move is made in
    the frame the body has turned to so far, so a move of 8 cm back while
    the nose lifts 0.4 rad also lowers the body. Judged on ground truth
    against that formula iterated here: after D ticks the body origin is
    at (R^D)^T (R^0 + ... + R^(D-1)) pos_des / D in the start frame."""
    trial = Trial(CFG)
    trial.send(12)
    trial.run(3.0)
    start = trial.robot.truth()
    ticks = 400
    pos = np.array([-0.08, 0.0, 0.0])
    step = np.array([[np.cos(0.4 / ticks), 0, np.sin(0.4 / ticks)], [0, 1, 0],
                     [-np.sin(0.4 / ticks), 0, np.cos(0.4 / ticks)]])
    power, total = np.eye(3), np.zeros((3, 3))
    for _ in range(ticks):
        total, power = total + power, power @ step
    want = power.T @ total @ pos / ticks
    assert abs(want[2]) > 0.012          # the naive straight move would keep the height
    trial.send(21, gait_id=1, rpy_des=[0, 0.4, 0], pos_des=pos.tolist(), duration=2 * ticks)
    trial.run(1.2)
    end = trial.robot.truth()
    yaw = start.rpy[2]
    world = np.asarray(end.position) - np.asarray(start.position)
    got = np.array([np.cos(yaw) * world[0] + np.sin(yaw) * world[1],
                    -np.sin(yaw) * world[0] + np.cos(yaw) * world[1], world[2]])
    np.testing.assert_allclose(got, want, atol=0.006)
