"""The gyro against the loaded feet (controller/core/gyro_check.py): feet
fixed on the ground under a moving body tell its rate; a gyro that says
otherwise by more than the bound for long enough is found."""
from __future__ import annotations

import numpy as np
import pytest

from controller.core.gyro_check import GyroCheck, skew
from controller.robot.config.safety import SensorLimits

DT = 0.002
WALK = np.array([0.3, 0.0, 0.0])
LEVEL = np.eye(3)
FEET = np.array([[0.24, -0.1, -0.25], [0.24, 0.1, -0.25], [-0.24, -0.1, -0.25], [-0.24, 0.1, -0.25]])


def drive(check: GyroCheck, rate: np.ndarray, bias: np.ndarray, trust: np.ndarray,
          seconds: float, rot: np.ndarray = LEVEL) -> tuple[str | None, int]:
    """Feet on the ground under a body (turned by `rot`) moving at WALK
    and turning at `rate` (body frame); the leg Jacobians are the identity,
    so the joint speeds are the feet's velocities relative to the body."""
    jac = np.broadcast_to(np.eye(3), (4, 3, 3))
    q = np.zeros(12)
    for k in range(int(round(seconds / DT))):
        v = -WALK - np.cross(rate, FEET)
        found = check.step(rate + bias, rot, FEET, jac, q, v.reshape(-1), trust)
        if found is not None:
            return found, k + 1
    return None, int(round(seconds / DT))


def test_the_cross_product_matrix_is_the_cross_product() -> None:
    rng = np.random.default_rng(3)
    d, w = rng.normal(size=(5, 3)), rng.normal(size=3)
    assert np.allclose(skew(d) @ w, np.cross(d, w))


def test_a_true_gyro_under_four_loaded_feet_is_never_found_and_its_bias_solves_to_zero() -> None:
    check = GyroCheck(SensorLimits(), 4, 0.0, DT)
    found, _ = drive(check, np.array([0.1, -0.2, 0.3]), np.zeros(3), np.ones(4), 3.0)
    assert found is None
    assert np.allclose(check.bias, 0.0, atol=1e-9)


def test_a_biased_gyro_is_found_on_its_axis_when_the_window_has_seen_it_for_the_time() -> None:
    for axis in range(3):
        limits = SensorLimits()
        check = GyroCheck(limits, 4, 0.0, DT)
        bias = np.zeros(3)
        bias[axis] = 0.2
        found, ticks = drive(check, np.array([0.0, 0.0, 0.1]), bias, np.ones(4), 3.0)
        assert found is not None and f"gyro's {'xyz'[axis]} rate" in found, found
        assert np.allclose(check.bias, bias, atol=1e-9)
        # Half the window's weight before any solution, then the bound for gyro_bias_ms.
        earliest = (0.5 * limits.gyro_window_s * np.log(2) + limits.gyro_bias_ms / 1000.0) / DT
        assert earliest - 20 <= ticks <= earliest + 200, ticks


def test_a_bias_under_the_bound_is_not_a_fault() -> None:
    check = GyroCheck(SensorLimits(), 4, 0.0, DT)
    found, _ = drive(check, np.zeros(3), np.array([0.0, 0.0, 0.1]), np.ones(4), 3.0)
    assert found is None and abs(check.bias[2] - 0.1) < 1e-9


def test_three_loaded_feet_see_every_axis_and_a_pair_only_the_yaw_while_level() -> None:
    """Three feet (a trot's moment on three, a foot lifted): the bias on
    each axis. A diagonal pair alone (a trot): the yaw, from its rows along
    the body's x and y, but not roll or pitch (two feet cannot show that
    neither slides; a soft foot's vertical wobble would read as either);
    and nothing while the body is tilted (the two-leg stand's hind feet)
    or the pair's feet move against each other fast (a slide, a fast
    turn)."""
    diagonal = np.array([1.0, 0.0, 0.0, 1.0])
    for axis in range(3):
        check = GyroCheck(SensorLimits(), 4, 0.0, DT)
        bias = np.zeros(3)
        bias[axis] = 0.2
        found, _ = drive(check, np.zeros(3), bias, np.array([1.0, 1.0, 1.0, 0.0]), 2.0)
        assert found is not None and f"{'xyz'[axis]} rate" in found
    check = GyroCheck(SensorLimits(), 4, 0.0, DT)
    found, ticks = drive(check, np.zeros(3), np.array([0.0, 0.0, 0.2]), diagonal, 2.0)
    assert found is not None and "z rate" in found and ticks * DT < 1.0
    assert check.bias[2] == pytest.approx(0.2) and np.isnan(check.bias[:2]).all()
    for roll_or_pitch in ([0.3, 0.0, 0.0], [0.0, 0.3, 0.0]):
        check = GyroCheck(SensorLimits(), 4, 0.0, DT)
        found, _ = drive(check, np.zeros(3), np.array(roll_or_pitch), diagonal, 2.0)
        # A pair's evidence counts for the yaw alone, never for the other axes.
        assert found is None and check.yaw_weight > 0.0 and check.weight == 0.0
        assert np.isnan(check.bias[:2]).all() and check.bias[2] == pytest.approx(0.0)
    pitched = np.array([[np.cos(1.0), 0.0, np.sin(1.0)], [0.0, 1.0, 0.0], [-np.sin(1.0), 0.0, np.cos(1.0)]])
    check = GyroCheck(SensorLimits(), 4, 0.0, DT)
    found, _ = drive(check, np.zeros(3), np.array([0.0, 0.0, 0.5]), np.array([0.0, 0.0, 1.0, 1.0]), 2.0, pitched)
    assert found is None and check.yaw_weight == 0.0
    check = GyroCheck(SensorLimits(), 4, 0.0, DT)
    found, _ = drive(check, np.array([0.0, 0.0, 0.4]), np.array([0.0, 0.0, 0.5]), diagonal, 2.0)
    assert found is None and check.yaw_weight == 0.0


def test_fewer_than_two_loaded_feet_and_fast_turns_weigh_too_little_to_say_anything() -> None:
    check = GyroCheck(SensorLimits(), 4, 0.0, DT)
    found, _ = drive(check, np.zeros(3), np.array([0.0, 0.0, 0.3]), np.array([1.0, 0.0, 0.0, 0.0]), 2.0)
    assert found is None and np.isnan(check.bias).all()
    check = GyroCheck(SensorLimits(), 4, 0.0, DT)
    found, _ = drive(check, np.array([0.0, 0.0, 2.0]), np.array([0.0, 0.0, 0.3]), np.ones(4), 2.0)
    assert found is None and np.isnan(check.bias).all()


def test_a_rolling_ball_foot_is_not_a_lying_gyro() -> None:
    """A loaded ball foot whose shank pitches rolls: its centre moves by
    (w + w_leg) x (r n) though nothing slides. Taken off, a true gyro stays
    true; left on, right shanks pitching against the left fit no rate, so
    every sample would be left out as a sliding foot."""
    radius = 0.02
    jac = np.tile(np.eye(3), (4, 1, 1))
    jac[:, :, 1] = [radius, 0.0, 0.0]        # the hip's speed moves the ball's centre as it rolls
    qd = np.zeros((4, 3))
    qd[:, 1] = 5.0 * np.array([1.0, -1.0, 1.0, -1.0])      # right shanks against the left
    for foot_radius, seen in [(radius, True), (0.0, False)]:
        check = GyroCheck(SensorLimits(), 4, foot_radius, DT)
        for _ in range(1500):
            assert check.step(np.zeros(3), np.eye(3), FEET, jac, np.zeros(12), qd.reshape(-1),
                              np.ones(4)) is None
        if seen:
            assert np.allclose(check.bias, 0.0, atol=1e-9)
        else:
            assert check.weight == 0.0 and np.isnan(check.bias).all()


def test_a_sliding_foot_among_three_or_more_is_left_out() -> None:
    """One of four loaded feet sliding at 0.1 m/s under a body that does not
    turn fits no rate: left out, nothing found (with two feet loaded the same
    slide would read as a 0.5 rad/s turn: why two say nothing)."""
    jac = np.broadcast_to(np.eye(3), (4, 3, 3))
    slide = np.zeros((4, 3))
    slide[0, 0] = 0.1                                   # FR slides forward
    for trust in (np.ones(4), np.array([1.0, 1.0, 1.0, 0.0])):
        check = GyroCheck(SensorLimits(), 4, 0.0, DT)
        for _ in range(1500):
            assert check.step(np.zeros(3), np.eye(3), FEET, jac, np.zeros(12), slide.reshape(-1), trust) is None
        assert check.weight == 0.0
