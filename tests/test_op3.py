"""ROBOTIS OP3 driven by motiond on its maker's model (issue 42 item 7):
config/op3.yaml names config/physics/op3.xml as its simulated body
(`sim.mjcf`), and the controller's humanoid kinematics, through the
config's joint map, must put each sole where the model does. Then the robot
stands up and walks in physics, judged on the model's ground truth."""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

from controller.robot.config import load_config
from controller.robot.humanoid_kinematics import LEG_SIDES, HumanoidGeometry, HumanoidLegKinematics
from controller.robot.resources import CONFIG_DIR
from controller.sim.physics import PhysicsRobot
from controller.sim.scorecard import expand, humanoid_limbs, load_card, run_row
from controller.sim.trial import Trial

CFG = load_config(CONFIG_DIR / "op3.yaml")
assert isinstance(CFG.geometry, HumanoidGeometry)
GEOMETRY = CFG.geometry


@pytest.fixture(scope="module")
def robot() -> PhysicsRobot:
    return PhysicsRobot(CFG)


def test_the_controllers_leg_kinematics_put_each_sole_where_the_model_does(robot: PhysicsRobot) -> None:
    """200 random leg poses, set on the model's joints through the joint map
    (OP3's mirrored pitch joints, reversed hip yaw and roll): the sole site
    the simulator puts under each ankle is where the controller's forward
    kinematics says, position and orientation, in the torso frame, to the
    0.1 mm the model's hip yaw axis misses the hip centre by."""
    m, d = robot.model, robot.data
    kin = HumanoidLegKinematics(GEOMETRY)
    legs = CFG.leg_indices
    rng = np.random.default_rng(3)
    trunk = m.body("trunk").id
    worst_position = worst_angle = 0.0
    for _ in range(200):
        q = np.zeros(CFG.num_joints)
        q[legs] = rng.uniform(-0.6, 0.6, 12)
        q[legs[[3, 9]]] = rng.uniform(0.0, 1.6, 2)          # the knees bend one way
        d.qpos[:] = 0.0
        d.qpos[3] = 1.0
        d.qpos[robot.qadr] = robot.model_map.positions_to_wire(q)
        mujoco.mj_kinematics(m, d)
        r_trunk = d.xmat[trunk].reshape(3, 3)
        for i, side in enumerate(LEG_SIDES):
            fk = kin.forward(q[legs][6 * i:6 * i + 6], side)
            site = d.site(f"{side}_sole")
            position = r_trunk.T @ (site.xpos - d.xpos[trunk])
            rotation = r_trunk.T @ site.xmat.reshape(3, 3)
            worst_position = max(worst_position, float(np.abs(position - fk.position).max()))
            cos = (np.trace(rotation.T @ np.asarray(fk.rotation)) - 1.0) / 2.0
            worst_angle = max(worst_angle, float(np.arccos(np.clip(cos, -1.0, 1.0))))
    assert worst_position < 1.5e-4, worst_position
    assert worst_angle < 1e-6, worst_angle


def test_the_simulators_motors_are_not_held_to_the_makers_control_range(robot: PhysicsRobot) -> None:
    """op3.xml's top-level default gives every position actuator a control
    range of +-pi; the simulator's motors (the driver's law, ctrl = kp q_des
    + ...) replace the maker's and must not take it: a ctrl clipped at pi
    held OP3's legs 5 N m off zero error and the robot never stood."""
    m = robot.model
    assert len(robot.act) == CFG.num_joints
    for a in robot.act:
        assert not m.actuator_ctrllimited[a], m.actuator(a).name
        assert m.actuator_forcelimited[a] and m.actuator_forcerange[a][1] == 5.0
    # Held at the fold pose in the air for one tick, no joint is pushed.
    fresh = PhysicsRobot(CFG)
    q = np.asarray(CFG.poses["fold"], dtype=float)
    z = np.zeros(CFG.num_joints)
    fresh.step(q, z, np.full(CFG.num_joints, 21.1), np.full(CFG.num_joints, 0.1), z, CFG.dt)
    assert np.abs(fresh.tau).max() < 1.0, fresh.tau


def test_op3_stands_up_and_walks_forward_in_physics() -> None:
    """From the fold, the stand (12) lifts the torso to the stand height,
    upright; the walk (11/3) at 0.1 m/s goes 0.1 m/s forward (the card's
    3 cm/s), on its feet: every contact on a foot's body (OP3's feet are two
    boxes each). Ground truth only."""
    trial = Trial(CFG)
    soles, legs = humanoid_limbs(trial)
    assert {"right_foot", "left_foot", "r_foot_wide", "l_foot_wide"} <= soles <= legs
    trial.send(12)
    trial.run(3.0)
    tr = trial.trace
    assert tr.mode[-1] == 12
    assert abs(tr.position[-1][2] - CFG.stand_height) < 0.005, tr.position[-1][2]
    assert max(abs(a) for a in tr.rpy[-1][:2]) < 0.03, tr.rpy[-1]
    trial.send(11, 3, vel_des=[0.1, 0.0, 0.0], step_height=[0.02, 0.02])
    trial.run(2.0)
    start = len(tr.t)
    trial.run(4.0)
    assert tr.mode[-1] == 11
    speed = (tr.position[-1][0] - tr.position[start][0]) / (tr.t[-1] - tr.t[start])
    assert 0.07 < speed < 0.13, speed
    assert np.abs(np.array(tr.rpy[start:])[:, :2]).max() < 0.15
    # A foot is always down, and nothing but the feet touches (at 3 steps a
    # second both feet left the floor for a few ms at 4.8 % of the ticks).
    bad = [sorted(c) for c in tr.contacts[start:] if not c or not c <= soles]
    assert not bad, bad[:5]


@pytest.mark.parametrize("row", ["StandUpFront after a forward fall", "StandUpBack after a backward fall"])
def test_op3_gets_up_after_a_real_fall(row: str) -> None:
    """The card's rows: standing, pushed over at 0.8 m/s forward or backward
    (the controller sees the fall, braces and goes limp), the damper, then
    config/scripts/op3/StandUpFront.yaml or StandUpBack.yaml: the robot ends
    standing at the stand height, upright, on its feet alone, within the
    card's 5 s. Ground truth only."""
    rows = {r.name: r for r in expand("op3", load_card()["robots"]["op3"])}
    done = run_row(rows[row])
    assert done.error == ""
    m = done.metrics
    assert m["fall_detected_s"] < 1.0, m["fall_detected_s"]     # it did fall
    assert m["end_on_feet"] == 1.0
    assert m["height_error"] < 0.01 and m["tilt"] < 0.05, (m["height_error"], m["tilt"])
    assert m["getup_s"] <= 5.0, m["getup_s"]
    assert done.passed, done.verdicts
