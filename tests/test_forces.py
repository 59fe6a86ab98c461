"""Static foot-force distribution (controller/motion/forces.py): the forces
sum to the wanted force and moment, push, stay in their friction pyramids."""
from __future__ import annotations

import numpy as np

from controller.motion.forces import leg_torques, weight_forces, wrench_forces

FEET = np.array([[0.2, -0.12, -0.24], [0.2, 0.12, -0.24], [-0.16, -0.12, -0.24], [-0.16, 0.12, -0.24]])


def moment(r: np.ndarray, f: np.ndarray) -> np.ndarray:
    return np.cross(r, f).sum(axis=0)


def test_the_wrench_is_met_exactly_when_the_feet_can_give_it():
    force, torque = np.array([5.0, -3.0, 160.0]), np.array([1.0, -2.0, 0.5])
    f = wrench_forces(FEET, force, torque, friction=1.0)
    np.testing.assert_allclose(f.sum(axis=0), force, atol=1e-9)
    np.testing.assert_allclose(moment(FEET, f), torque, atol=1e-9)


def test_forces_never_pull_and_stay_inside_the_friction_pyramid():
    f = wrench_forces(FEET, np.array([60.0, 0.0, 20.0]), np.zeros(3), friction=0.4)
    assert np.all(f[:, 2] >= 0.0)
    assert np.all(np.linalg.norm(f[:, :2], axis=1) <= 0.4 * f[:, 2] + 1e-9)


def test_the_weight_is_carried_vertically_with_no_moment_about_an_off_centre_mass():
    r = FEET - np.array([0.03, 0.01, 0.0])          # the centre of mass ahead and left
    f = weight_forces(r, 82.0)
    assert np.all(f[:, :2] == 0.0) and abs(f[:, 2].sum() - 82.0) < 1e-9
    np.testing.assert_allclose(moment(r, f)[:2], 0.0, atol=1e-9)
    assert f[1, 2] > f[2, 2], "the front-left foot, nearest the mass, carries the most"


def test_the_weight_split_is_the_minimum_norm_one_for_every_set_of_feet():
    """The closed form equals the pseudo-inverse's minimum-norm split: four
    feet, any three, two (a trot's diagonal: singular, so the
    pseudo-inverse), three in a line, one."""
    import itertools
    rng = np.random.default_rng(5)
    feet = FEET + rng.normal(scale=0.02, size=FEET.shape)
    line = np.array([[0.2, 0.1, -0.24], [0.0, 0.1, -0.24], [-0.2, 0.1, -0.24]])
    sets = [feet[list(c)] for n in (1, 2, 3, 4) for c in itertools.combinations(range(4), n)] + [line]
    for r in sets:
        A = np.vstack([np.ones(len(r)), r[:, 0], r[:, 1]])
        want = np.maximum(np.linalg.pinv(A) @ np.array([82.0, 0.0, 0.0]), 0.0)
        np.testing.assert_allclose(weight_forces(r, 82.0)[:, 2], want, atol=1e-9)


def test_leg_torques_are_the_jacobian_transpose_of_the_push_and_zero_elsewhere():
    rng = np.random.default_rng(3)
    J = rng.normal(size=(4, 3, 3))
    rot = np.eye(3)
    f = np.array([[0.0, 0.0, 20.0], [1.0, 0.0, 25.0]])
    out = np.full(12, 9.0)
    leg_torques(J, rot, f, np.array([0, 2]), out)
    tau = out.reshape(4, 3)
    np.testing.assert_allclose(tau[0], J[0].T @ -f[0])
    np.testing.assert_allclose(tau[2], J[2].T @ -f[1])
    assert not tau[1].any() and not tau[3].any()
