"""The state estimate's per-tick arithmetic in C (csrc/odometry.c, driven by
controller/core/estimator.py) against the same quantities written out in
numpy from their definitions, on random joints, torques and IMU samples."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from controller.core.estimator import SUSPECT, QuadrupedEstimator
from controller.motion.forces import GRAVITY
from controller.robot.angles import quat_to_rotation
from controller.robot.config import Geometry, load_config
from controller.robot.kinematics import QuadrupedKinematics

CFG = load_config()


def numpy_forward(kin: QuadrupedKinematics, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Feet and Jacobians from the formulas in kinematics.py's docstring, the
    Jacobian by central differences."""
    def feet(q: np.ndarray) -> np.ndarray:
        h = kin.l2 * np.cos(q[:, 1]) + kin.l3 * np.cos(q[:, 1] + q[:, 2])
        ly = kin.side * kin.l1
        return kin.hip + np.column_stack([
            kin.l2 * np.sin(q[:, 1]) + kin.l3 * np.sin(q[:, 1] + q[:, 2]),
            ly * np.cos(q[:, 0]) + h * np.sin(q[:, 0]),
            ly * np.sin(q[:, 0]) - h * np.cos(q[:, 0])])
    J = np.zeros((len(q), 3, 3))
    for j in range(3):
        d = np.zeros_like(q)
        d[:, j] = 1e-6
        J[:, :, j] = (feet(q + d) - feet(q - d)) / 2e-6
    return feet(q), J


@pytest.mark.parametrize(("seed", "sink"), [(0, 0.0), (1, 0.0), (2, 0.0), (3, 0.0), (4, 0.012)])
def test_one_step_matches_its_definition_in_numpy(seed: int, sink: float) -> None:
    """`sink`: a soft foot whose loaded centre stands that much lower than
    its radius: the height measure takes it, the rolling its own radius."""
    rng = np.random.default_rng(seed)
    assert isinstance(CFG.geometry, Geometry)
    kin = QuadrupedKinematics(replace(CFG.geometry, foot_sink=sink))
    assert kin.roll_radius == CFG.geometry.foot_radius and kin.foot_radius == CFG.geometry.foot_radius - sink
    est = QuadrupedEstimator(kin, 4, CFG.dt, CFG.estimator)
    q = np.column_stack([rng.uniform(-0.3, 0.3, 4), rng.uniform(-1.2, 0.2, 4), rng.uniform(0.8, 2.2, 4)])
    qd, tau = rng.normal(size=(4, 3)), rng.normal(scale=8.0, size=(4, 3))
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    gyro, accel = rng.normal(size=3), rng.normal(size=3) + [0.0, 0.0, 9.81]
    planned = 0b1011
    est.step(q.reshape(-1), qd.reshape(-1), tau.reshape(-1), quat, gyro, accel, planned)

    rot = quat_to_rotation(quat)                     # no bias learned yet: no yaw drift
    feet, J = numpy_forward(kin, q)
    np.testing.assert_allclose(est.rot, rot, atol=1e-12)
    np.testing.assert_allclose(est.feet, feet, atol=1e-12)
    np.testing.assert_allclose(est.jacobian, J, atol=1e-8)
    # The ground's force on each foot: the leg pushes with f, J^T f = tau.
    push = np.linalg.solve(np.transpose(J, (0, 2, 1)), tau[..., None])[..., 0]
    np.testing.assert_allclose(est.force, -push @ rot.T, atol=1e-6)
    c = CFG.estimator
    trust = np.clip((est.force[:, 2] - (c.contact_force - c.contact_band)) / c.contact_band, 0, 1)
    trust *= [1.0, 1.0, 0.0, 1.0]
    np.testing.assert_allclose(est.trust, trust, atol=1e-9)
    # The first step sets the body above the feet, then predicts with the IMU.
    world_feet = feet @ rot.T
    a = rot @ accel + GRAVITY
    z0 = -world_feet[:, 2].mean() + kin.foot_radius
    dt = CFG.dt
    v_seen = -(np.einsum("lij,lj->li", J, qd) + np.cross(gyro, feet))
    # The measurements:
    np.testing.assert_allclose(est.y[:12], world_feet.reshape(-1), atol=1e-12)
    rolling = np.zeros((4, 3))
    down = -kin.roll_radius * rot[2]
    for i in range(4):
        spin = gyro + [qd[i, 0], -(qd[i, 1] + qd[i, 2]) * np.cos(q[i, 0]),
                       -(qd[i, 1] + qd[i, 2]) * np.sin(q[i, 0])]
        rolling[i] = np.cross(spin, down)
    np.testing.assert_allclose(est.y[12:24], ((v_seen - rolling) @ rot.T).reshape(-1), atol=1e-6)
    np.testing.assert_allclose(est.y[24:], kin.foot_radius)
    distrust = 1.0 + (1.0 - trust) * SUSPECT
    np.testing.assert_allclose(est.R[:12], np.repeat(distrust, 3) * c.sensor_position)
    np.testing.assert_allclose(est.R[24:], distrust * c.sensor_height)
    swing = np.where(trust < 0.5, distrust * SUSPECT, 1.0)
    np.testing.assert_allclose(est.Q[6:], np.repeat(swing, 3) * dt * c.process_foot)
    # Position and velocity before the update: x0 + v dt + a dt^2 / 2, v = a dt.
    before = QuadrupedEstimator(kin, 4, CFG.dt, CFG.estimator)
    before.kf.update = lambda: True                   # type: ignore[method-assign]
    before.step(q.reshape(-1), qd.reshape(-1), tau.reshape(-1), quat, gyro, accel, planned)
    np.testing.assert_allclose(before.x[3:6], a * dt, atol=1e-12)
    np.testing.assert_allclose(before.x[0:3], [0.0, 0.0, z0] + 0.5 * dt * dt * a, atol=1e-12)
    np.testing.assert_allclose(before.x[6:], (world_feet + [0.0, 0.0, z0]).reshape(-1), atol=1e-12)


def test_a_landed_foot_is_believed_over_its_settle_time() -> None:
    """With `settle_time`, a foot's trust is its load's times the share of
    the settle time it has carried load in a row; losing the load (or the
    plan) starts it again."""
    from dataclasses import replace
    assert isinstance(CFG.geometry, Geometry)
    kin = QuadrupedKinematics(CFG.geometry)
    config = replace(CFG.estimator, settle_time=0.01)      # 5 ticks at 500 Hz
    est = QuadrupedEstimator(kin, 4, CFG.dt, config)
    settle = config.settle_time / CFG.dt
    q = np.tile([0.0, -0.8, 1.6], (4, 1))
    _, J = numpy_forward(kin, q)
    load = np.array([0.0, 0.0, -config.contact_force * 2.0])   # the leg pushes down: fully loaded
    tau = np.einsum("lji,j->li", J, load)                          # J^T f
    quat = np.array([1.0, 0.0, 0.0, 0.0])
    zero, accel = np.zeros(3), np.array([0.0, 0.0, 9.81])
    plans = [0b1111] * 7 + [0b1101] + [0b1111] * 3
    expected_age = np.zeros(4)
    for planned in plans:
        est.step(q.reshape(-1), np.zeros(12), tau.reshape(-1), quat, zero, accel, planned)
        down = np.array([(planned >> i) & 1 for i in range(4)], dtype=float)
        expected_age = np.where(down > 0, expected_age + 1.0, 0.0)
        np.testing.assert_allclose(est.contact_age, expected_age)
        np.testing.assert_allclose(est.trust, down * np.minimum(1.0, expected_age / settle), atol=1e-12)
    assert est.trust[0] == 1.0 and est.trust[1] == pytest.approx(3 / settle)
