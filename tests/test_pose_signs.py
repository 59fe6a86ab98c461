"""The signs of the pose commands, judged in physics on the body's true attitude
(SPEC §6.1, §12.F): the official basic_motion example sends mode 21 gait 0
with rpy_des [0, 0.3, 0] and the comment "Head up", so mode 21 turns the body
by -rpy_des about the point -ctrl_point while it moves by +pos_des; mode 3
turns it by +rpy_des (pitch > 0 nose down).

Estimator and truth angles are ZYX Euler angles with x forward, y left, z up:
pitch > 0 is nose down, roll > 0 left side up, yaw > 0 turned left."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from controller.robot.config import load_config
from controller.robot.kinematics import rotation_rpy
from controller.sim.trial import Trial


@pytest.fixture(scope="module")
def stood() -> Trial:
    trial = Trial(load_config())
    trial.send(12)
    trial.run(3.0)
    return trial


def posed(stood: Trial, mode: int, gait: int, seconds: float = 1.0, **fields: Any) -> Trial:
    """A fresh trial stood the same way (physics is deterministic), then the
    pose command, run until it has settled."""
    trial = Trial(load_config())
    trial.send(12)
    trial.run(3.0)
    np.testing.assert_allclose(trial.robot.truth().rpy, stood.robot.truth().rpy, atol=1e-9)
    trial.send(mode, gait, **fields)
    trial.run(seconds)
    return trial


def turned(stood: Trial, trial: Trial) -> np.ndarray:
    return np.asarray(trial.robot.truth().rpy) - np.asarray(stood.robot.truth().rpy)


def test_head_up_as_the_official_example_says(stood: Trial) -> None:
    # basic_motion/main.py: mode 21, gait 0, rpy_des [0, 0.3, 0], 500 ms, "Head up".
    trial = posed(stood, 21, 0, duration=500, rpy_des=[0.0, 0.3, 0.0])
    d = turned(stood, trial)
    assert d[1] < -0.22, f"pitch changed by {d[1]:+.3f} rad: the head went down, not up"
    assert abs(d[0]) < 0.03 and abs(d[2]) < 0.03
    # ...and its "Head down" (-0.3 over 300 ms) brings the body back level (SPEC §10.6).
    trial.send(21, 0, duration=300, rpy_des=[0.0, -0.3, 0.0])
    trial.run(0.8)
    assert abs(turned(stood, trial)[1]) < 0.03


def test_roll_lowers_the_left_side_and_yaw_turns_right(stood: Trial) -> None:
    rolled = turned(stood, posed(stood, 21, 0, duration=600, rpy_des=[0.2, 0.0, 0.0]))
    assert rolled[0] < -0.14, f"roll changed by {rolled[0]:+.3f}: the left side went up"
    yawed = turned(stood, posed(stood, 21, 0, duration=600, rpy_des=[0.0, 0.0, 0.3]))
    assert yawed[2] < -0.2, f"yaw changed by {yawed[2]:+.3f}: the body turned left"


def test_the_body_pivots_about_minus_ctrl_point(stood: Trial) -> None:
    """Lift the head 0.2 rad about ctrl_point (0.15, 0, 0): the pivot is 0.15 m behind
    the body origin (SPEC §12.F.1), so that point stays where it was while the
    point 0.15 m ahead rises."""
    trial = posed(stood, 21, 0, duration=600, rpy_des=[0.0, 0.2, 0.0], ctrl_point=[0.15, 0.0, 0.0])
    before, after = stood.robot.truth(), trial.robot.truth()

    def world(truth: object, point: list[float]) -> np.ndarray:
        rot = rotation_rpy(*truth.rpy)       # type: ignore[attr-defined]
        return np.asarray(truth.position) + rot @ np.asarray(point)  # type: ignore[attr-defined]

    behind = world(after, [-0.15, 0, 0]) - world(before, [-0.15, 0, 0])
    ahead = world(after, [0.15, 0, 0]) - world(before, [0.15, 0, 0])
    assert turned(stood, trial)[1] < -0.15
    assert np.linalg.norm(behind) < 0.015, f"the pivot moved {behind}"
    assert ahead[2] > 0.045, f"the point ahead of the pivot rose only {ahead[2]:.3f} m"


def test_pose_moves_the_body_by_plus_pos_des(stood: Trial) -> None:
    trial = posed(stood, 21, 0, duration=600, pos_des=[0.03, 0.0, -0.04])
    moved = np.asarray(trial.robot.truth().position) - np.asarray(stood.robot.truth().position)
    assert moved[0] > 0.02 and moved[2] < -0.03


def test_mode_3_turns_the_body_by_plus_rpy_des(stood: Trial) -> None:
    # Mode 3 absolute posture: pitch > 0 is nose down, the opposite of mode 21.
    trial = posed(stood, 3, 0, seconds=1.5, rpy_des=[0.0, 0.2, 0.0], pos_des=[0.0, 0.0, 0.24])
    assert turned(stood, trial)[1] > 0.15
