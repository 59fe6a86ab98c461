"""The 20-servo humanoid through the whole controller (config/humanoid20.yaml):
the same robot_control_cmd commands as the quadruped, on the fake clock with
the simulated robot (tests/harness.py). No sockets."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from harness import Rig

from controller import msgs
from controller.behaviours.base import HumanoidRobot
from controller.behaviours.biped_locomotion import BipedLocomotion
from controller.behaviours.damper import Damper
from controller.robot.humanoid_kinematics import rpy_of
from controller.robot.kinematics import rotation_rpy
from controller.sim.physics import PhysicsRobot

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "config" / "humanoid20.yaml"
LEGS = slice(0, 12)


def humanoid(record_joints: bool = False, sim: bool | str = True) -> Rig:
    return Rig(config_path=str(CONFIG), record_joints=record_joints, sim=sim)


@pytest.fixture
def standing() -> Rig:
    rig = humanoid()
    rig.stand()
    return rig


def walk_to_stand(rig: Rig) -> None:
    """From a walk (or a stand in 11) back to a finished mode-12 stand."""
    rig.send(12)
    rig.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 6000)


def decode_last(rig: Rig, channel: str, kind: type[Any]) -> Any:
    assert rig.last_out is not None
    data = rig.last_out.get(rig.ch[channel])
    return None if data is None else kind.decode(data)


# -- boot, stand, messages --------------------------------------------------------------
def test_boots_off_and_stands_through_the_crouch() -> None:
    rig = humanoid()
    rig.run(20)
    assert rig.mode == 0 and rig.last.mode == 0 and rig.last.bar == 100
    assert rig.body_height() == pytest.approx(0.20, abs=0.01)    # sitting in the fold
    rig.send(12)
    rig.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 5000)
    bars = [r.bar for r in rig.responses if r.mode == 12]
    assert bars[0] == 0
    assert sorted(set(bars)) == [0, 80, 99, 100]
    assert bars == sorted(bars)                                   # never goes back
    np.testing.assert_allclose(rig.ctl.kernel.pos, rig.cfg.poses["stand"], atol=1e-9)
    rig.run(300)
    # The sim carries the body's weight: the measured pose sags a little.
    assert rig.robot is not None
    np.testing.assert_allclose(rig.robot.q, rig.cfg.poses["stand"], atol=0.06)
    assert rig.body_height() == pytest.approx(rig.cfg.stand_height, abs=0.01)


def test_messages_carry_20_joints_and_12_motor_errors(standing: Rig) -> None:
    rig = standing
    rig.tick()
    cmd = decode_last(rig, "joint_cmd", msgs.joint_command_t)
    assert cmd.num_joints == 20 and len(cmd.position) == len(cmd.kp) == 20
    response = status = None
    for _ in range(60):
        rig.tick()
        response = decode_last(rig, "response", msgs.robot_control_response_lcmt) or response
        status = decode_last(rig, "status", msgs.controller_status_t) or status
    assert response is not None and len(response.motor_error) == 12
    assert status is not None and status.num_joints == 20 and list(status.motor_error) == [0] * 20
    assert status.mode_name == "RECOVERY_STAND"
    assert response.contact == 0b11   # both soles down while standing


def test_the_quadruped_status_carries_its_12_joints() -> None:
    rig = Rig()
    status = None
    for _ in range(60):
        rig.tick()
        status = decode_last(rig, "status", msgs.controller_status_t) or status
    assert status is not None
    assert status.num_joints == 12 and len(status.motor_error) == 12


def test_stand_from_a_lower_height_skips_the_crouch(standing: Rig) -> None:
    rig = standing
    rig.send(21, 5, duration=600, pos_des=(0.0, 0.0, 0.33))
    rig.run(1400)
    rig.responses.clear()
    walk_to_stand(rig)
    assert sorted({r.bar for r in rig.responses if r.mode == 12}) == [0, 99, 100]


def test_lie_side_gaits_are_refused(standing: Rig) -> None:
    rig = standing
    rig.send(12, 17)
    rig.run(40)
    assert rig.last.switch_status == 5 and rig.mode == 12


# -- mode 21 ----------------------------------------------------------------------------
def test_pose_gait5_reaches_a_lower_height_with_flat_feet(standing: Rig) -> None:
    rig = standing
    rig.send(21, 5, duration=1000, pos_des=(0.0, 0.0, 0.32))
    rig.run_until(lambda r: r.last.mode == 21 and r.last.bar == 100, 1500)
    robot = rig.ctl.robot
    assert isinstance(robot, HumanoidRobot)
    q = rig.ctl.kernel.pos
    assert robot.body_height(q) == pytest.approx(0.32, abs=1e-6)
    for sole in robot.feet(q):
        np.testing.assert_allclose(sole.rotation, np.eye(3), atol=1e-6)
    np.testing.assert_allclose(q[12:], rig.cfg.poses["stand"][12:])   # arms and head hold
    rig.run(500)
    assert rig.body_height() == pytest.approx(0.32, abs=0.01)          # the sim follows


def test_pose_height_is_clamped_into_the_range(standing: Rig) -> None:
    rig = standing
    rig.send(21, 5, duration=800, pos_des=(0.0, 0.0, 0.05))
    rig.run(900)
    assert rig.ctl.robot.body_height(rig.ctl.kernel.pos) == pytest.approx(
        rig.cfg.pose_height_range[0], abs=1e-6)


def test_relative_pose_turns_the_torso_over_fixed_feet(standing: Rig) -> None:
    rig = standing
    robot = rig.ctl.robot
    assert isinstance(robot, HumanoidRobot)
    before = robot.feet(rig.ctl.kernel.pos)
    rpy, shift = np.array([0.05, 0.15, 0.1]), np.array([0.01, 0.0, -0.03])
    rig.send(21, 0, duration=1000, rpy_des=rpy, pos_des=shift)
    rig.run_until(lambda r: r.last.mode == 21 and r.last.bar == 100, 1500)
    after = robot.feet(rig.ctl.kernel.pos)
    rot = rotation_rpy(*rpy)
    for b, a in zip(before, after, strict=True):
        # Back in the world (the torso's start frame) each sole is where it was.
        np.testing.assert_allclose(rot @ a.position + shift, b.position, atol=1e-6)
        np.testing.assert_allclose(rot @ a.rotation, b.rotation, atol=1e-6)
    # A second block accumulates on top of the first.
    rig.send(21, 0, duration=500, rpy_des=(0.0, -0.15, 0.0))
    rig.run(600)   # the 21/3 filler that follows holds the pose
    pitch = rpy_of(robot.feet(rig.ctl.kernel.pos)[0].rotation)[1]
    assert pitch == pytest.approx(rpy_of(after[0].rotation)[1] + 0.15, abs=0.02)


# -- mode 11 ----------------------------------------------------------------------------
def test_walk_advances_the_odometry_with_flat_feet_inside_the_limits() -> None:
    # The joint-space sim has no IMU: the walk runs open loop, so its joint
    # targets are exactly the planned geometry (tests/test_biped_balance.py
    # checks what the feedback changes).
    rig = humanoid(record_joints=True, sim="joint")
    rig.stand()
    cfg, robot = rig.cfg, rig.ctl.robot
    assert isinstance(robot, HumanoidRobot) and cfg.walk is not None
    params = cfg.walk.params
    x0 = rig.ctl.odom.x
    rig.joint_cmds.clear()
    rig.send(11, 3, vel_des=(0.1, 0.0, 0.0))
    rig.run(5000)
    assert rig.last.mode == 11 and rig.last.gait_id == 3 and rig.last.switch_status == 0
    # 0.1 m/s is within one step's acceleration quantum (0.25 m/s^2 x 0.4 s).
    assert rig.ctl.odom.x - x0 == pytest.approx(0.5, abs=0.02)
    assert abs(rig.ctl.odom.y) < 1e-9 and abs(rig.ctl.odom.yaw) < 1e-9
    contacts = {r.contact for r in rig.responses if r.mode == 11}
    assert contacts == {0b01, 0b10, 0b11}                             # right, left, both
    positions = np.array([c.position for c in rig.joint_cmds])
    assert positions.shape[1] == 20
    tol = 1e-5                                                        # float32 on the wire
    assert np.all(positions >= cfg.q_min - tol) and np.all(positions <= cfg.q_max + tol)
    speed = np.abs(np.diff(positions, axis=0)) / cfg.dt
    assert np.all(speed <= cfg.v_max + tol / cfg.dt)
    assert speed[:, LEGS].max() > 0.3                                 # the legs did move
    np.testing.assert_allclose(positions[:, 12:], np.tile(cfg.poses["stand"][12:], (len(positions), 1)),
                               atol=tol)                              # arms and head hold
    # Past the first step the trunk leans by trunk_pitch: the soles, level in
    # the world, are pitched back by it in the torso frame and never rolled.
    first_step = round(params.step_duration / cfg.dt) + 5
    for q in positions[first_step::7]:
        for sole in robot.feet(q):
            roll, pitch, _ = rpy_of(sole.rotation)
            assert abs(roll) < 1e-3
            assert pitch == pytest.approx(-params.trunk_pitch, abs=1e-3)


def test_leaving_the_walk_waits_for_it_to_stop(standing: Rig) -> None:
    rig = standing
    rig.send(11, 3, vel_des=(0.2, 0.0, 0.2))
    rig.run(2000)
    rig.responses.clear()
    rig.send(12)
    rig.run_until(lambda r: r.mode == 12, 2000)
    walk_resp = [r for r in rig.responses if r.mode == 11]
    # At most the running step plus the closing step, reported TRANSITIONING.
    assert len(walk_resp) >= 2
    assert all(r.switch_status == 1 for r in walk_resp)
    assert rig.cfg.walk is not None
    assert walk_resp[-1].t_ns - walk_resp[0].t_ns <= 2 * rig.cfg.walk.params.step_duration * 1e9
    x = rig.ctl.odom.x
    rig.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 2000)
    assert rig.ctl.odom.x == x                                        # no travel after the stop
    np.testing.assert_allclose(rig.ctl.kernel.pos, rig.cfg.poses["stand"], atol=1e-9)


def test_stand_gait_stops_the_walk_and_reports_transitioning_meanwhile(standing: Rig) -> None:
    rig = standing
    rig.send(11, 3, vel_des=(0.1, 0.0, 0.0))
    rig.run(1500)
    rig.responses.clear()
    rig.send(11, 1)
    rig.run(1200)
    gaits = [(r.gait_id, r.switch_status) for r in rig.responses]
    assert gaits[0] == (3, 1) and gaits[-1] == (1, 0)
    assert isinstance(rig.ctl.fsm.state, BipedLocomotion)
    assert rig.ctl.fsm.state.walk.is_stopped()


def test_unknown_gait_is_refused_with_ban_trans(standing: Rig) -> None:
    rig = standing
    rig.send(11, 7, vel_des=(0.1, 0.0, 0.0))
    rig.run(40)
    assert rig.mode == 12 and rig.last.switch_status == 5
    rig.send(11, 3)
    rig.run(40)
    assert rig.mode == 11 and rig.last.switch_status == 0
    rig.send(11, 9)
    rig.run(40)
    assert rig.last.switch_status == 5 and rig.last.gait_id == 3


def test_walk_entered_from_a_lower_pose_moves_to_the_stand_first(standing: Rig) -> None:
    rig = standing
    rig.send(21, 5, duration=500, pos_des=(0.0, 0.0, 0.34))
    rig.run(800)
    rig.send(11, 3, vel_des=(0.1, 0.0, 0.0))
    rig.run(20)
    assert rig.mode == 11
    assert rig.ctl.odom.vx == 0.0                                     # not walking yet
    rig.run(2000)
    assert rig.ctl.odom.x > 0.1


# -- mode 7 and the timeout -------------------------------------------------------------
def test_active_lie_down_reaches_the_lie_pose(standing: Rig) -> None:
    rig = standing
    rig.send(7, 1)
    rig.run(1300)
    assert rig.last.mode == 7 and rig.last.gait_id == 1 and rig.last.bar == 100
    np.testing.assert_allclose(rig.ctl.kernel.pos, rig.cfg.lie_pose, atol=1e-9)
    assert not rig.ctl.kernel.kp.any()                                # damping only


def test_passive_damper_keeps_damping_every_joint(standing: Rig) -> None:
    rig = standing
    rig.send(7, 0)
    rig.run(5000)
    # The quadruped releases its abad damping after 2400 ticks; a biped has
    # no abad, so every joint stays damped until the 3000-tick end.
    assert isinstance(rig.ctl.fsm.state, Damper)
    assert rig.mode == 7 and rig.ctl.fsm.state.count > 2400
    assert not rig.ctl.kernel.kp.any() and np.all(rig.ctl.kernel.kd > 0)


def test_command_timeout_sits_the_humanoid_down_and_holds_the_sit(standing: Rig) -> None:
    # A biped limp falls onto its back: after the timeout's lie-down it keeps
    # holding the lie pose (its seat) with the lie_down gains, reporting 7/0.
    rig = standing
    rig.run(700, heartbeat=False)
    assert rig.mode == 7 and rig.last.mode == 7
    rig.run(8000, heartbeat=False)          # well past the quadruped's passive phase
    assert rig.ctl.last_reported[:2] == (7, 0)
    np.testing.assert_allclose(rig.ctl.kernel.pos, rig.cfg.lie_pose, atol=1e-9)
    kp, _ = rig.ctl.fsm.state.robot.gains("lie_down")
    np.testing.assert_array_equal(rig.ctl.kernel.kp, kp)


def test_motor_ctrl_is_not_available(standing: Rig) -> None:
    rig = standing
    rig.send(15)
    rig.run(40)
    assert rig.mode == 12 and rig.last.switch_status == 5


def test_a_motion_goal_walks_the_humanoid_and_stops_with_both_feet_down(standing: Rig) -> None:
    rig = standing
    goal = msgs.motion_goal_t()
    goal.kind, goal.goal_id, goal.distance, goal.timeout = 1, 7, 0.4, 20.0   # MOVE_DISTANCE
    rig.raw(rig.ch["motion_goal"], goal.encode())
    events: list[msgs.motion_event_t] = []
    for _ in range(10000):
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        assert rig.last_out is not None
        events += [msgs.motion_event_t.decode(data) for _, ch, data in rig.last_out.messages
                   if ch == rig.ch["motion_event"]]
        if any(e.kind == 1 for e in events):
            break
    assert [(e.goal_id, e.kind, e.reason) for e in events] == [(7, 5, 0), (7, 1, 1)]   # REACHED
    assert rig.cfg.walk is not None
    assert rig.last.gait_id == rig.cfg.walk.default_gait
    rig.run(1500)
    assert isinstance(rig.ctl.fsm.state, BipedLocomotion)
    assert rig.ctl.fsm.state.walk.is_stopped() and rig.last.gait_id == 1
    # The odometry is the legs' (controller/core/biped_estimator.py): it ends
    # where the body (ground truth) is. The walk closes with one more step
    # after the goal and walks a little faster than it is told: up to a
    # step past the target.
    params = rig.cfg.walk.params
    step = params.velocity_max[0] * params.step_duration
    assert isinstance(rig.robot, PhysicsRobot)
    assert rig.ctl.odom.x == pytest.approx(float(rig.robot.truth().position[0]), abs=0.02)
    assert 0.4 - 0.01 <= rig.ctl.odom.x <= 0.4 + step
