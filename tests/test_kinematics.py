import numpy as np
import pytest

from controller.robot.config import Geometry, load_config
from controller.robot.kinematics import QuadrupedKinematics, rotation_rpy


@pytest.fixture(scope="module")
def kin() -> QuadrupedKinematics:
    geometry = load_config().geometry
    assert isinstance(geometry, Geometry)
    return QuadrupedKinematics(geometry)


def test_ik_round_trip_over_the_workspace(kin):
    rng = np.random.default_rng(1)
    for _ in range(200):
        q = np.column_stack([rng.uniform(-0.6, 0.6, 4), rng.uniform(-2.0, 0.8, 4),
                             rng.uniform(0.6, 2.5, 4)])
        p = kin.forward(q)
        q2, clipped = kin.inverse(p)
        assert not clipped.any()
        np.testing.assert_allclose(kin.forward(q2), p, atol=1e-9)
        # With the foot below the abad axis (h > 0) the knee-backward solution
        # is unique, so IK must give back the very angles.
        h = kin.l2 * np.cos(q[:, 1]) + kin.l3 * np.cos(q[:, 1] + q[:, 2])
        below = h > 0.02
        np.testing.assert_allclose(q2[below], q[below], atol=1e-9)


def test_unreachable_target_is_flagged_and_stays_finite(kin):
    p = kin.hip + np.array([0.0, 0.0, -1.0])
    q, clipped = kin.inverse(p)
    assert clipped.all() and np.isfinite(q).all()


def test_jacobian_matches_finite_differences(kin):
    q = np.tile([0.2, -0.8, 1.5], (4, 1))
    J = kin.jacobian(q)
    eps = 1e-6
    for j in range(3):
        dq = q.copy()
        dq[:, j] += eps
        np.testing.assert_allclose(J[:, :, j], (kin.forward(dq) - kin.forward(q)) / eps, atol=1e-5)


def test_stance_pose_has_the_requested_height(kin):
    q, _ = kin.inverse(kin.stance_feet(0.24))
    assert kin.body_height(q) == pytest.approx(0.24, abs=1e-9)


def test_rotation_is_zyx():
    r = rotation_rpy(0.0, 0.0, np.pi / 2)
    np.testing.assert_allclose(r @ [1, 0, 0], [0, 1, 0], atol=1e-12)
    r = rotation_rpy(0.0, 0.3, 0.0)
    np.testing.assert_allclose(r @ [1, 0, 0], [np.cos(0.3), 0, -np.sin(0.3)], atol=1e-12)


def test_a_foot_that_sinks_is_stood_on_from_the_height_it_sinks_to() -> None:
    """geometry.foot_sink: a loaded foot sits that far into the floor, so the
    body's height over it is taken from a contact that much above the foot
    sphere's bottom, and a stand at height h reaches the feet that much
    further down."""
    from dataclasses import replace
    cfg = load_config()
    geometry = cfg.geometry
    assert isinstance(geometry, Geometry)
    hard = QuadrupedKinematics(geometry)
    soft = QuadrupedKinematics(replace(geometry, foot_sink=0.015))
    h = cfg.stand_height
    assert soft.stance_feet(h)[:, 2] == pytest.approx(hard.stance_feet(h)[:, 2] - 0.015)
    q = hard.inverse(hard.stance_feet(h))[0]
    assert soft.body_height(q) == pytest.approx(hard.body_height(q) - 0.015)
