"""The C Kalman arithmetic (csrc/kalman.c, controller/robot/native.py's
KalmanArithmetic) against the same filter written out in numpy."""
from __future__ import annotations

import numpy as np
import pytest

from controller.robot.native import KalmanArithmetic


def problem(seed: int, n: int = 18, m: int = 28) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    root = rng.normal(size=(n, n))
    P = root @ root.T + np.eye(n)
    A = np.eye(n)
    A[0:3, 3:6] = np.eye(3) * 0.002
    q = rng.uniform(1e-6, 1e-2, n)
    H = np.zeros((m, n))                     # two nonzeros a row, as the estimator's
    for i in range(m):
        a, b = rng.choice(n, 2, replace=False)
        H[i, a], H[i, b] = rng.choice([-1.0, 1.0]), 1.0
    r = rng.uniform(1e-3, 10.0, m)
    y = rng.normal(size=m)
    return x, P, A, q, H, r, y


@pytest.mark.parametrize("seed", range(5))
def test_predict_and_update_match_the_numpy_filter(seed: int) -> None:
    x, P, A, q, H, r, y = problem(seed)
    # numpy
    Pn = A @ P @ A.T + np.diag(q)
    S = H @ Pn @ H.T + np.diag(r)
    K = Pn @ H.T @ np.linalg.inv(S)
    xn = x + K @ (y - H @ x)
    Pn = Pn - K @ H @ Pn
    # C, in place on the same arrays
    kf = KalmanArithmetic(x, P, A, q, H, r, y)
    kf.predict()
    assert kf.update()
    assert np.allclose(x, xn, rtol=1e-9, atol=1e-9)
    assert np.allclose(P, Pn, rtol=1e-9, atol=1e-9)
    assert np.array_equal(P, P.T)


def test_an_indefinite_innovation_is_refused_and_changes_nothing() -> None:
    x, P, A, q, H, r, y = problem(7)
    r[:] = -1e6                              # no covariance is negative
    before = (x.copy(), P.copy())
    kf = KalmanArithmetic(x, P, A, q, H, r, y)
    assert not kf.update()
    assert np.array_equal(x, before[0]) and np.array_equal(P, before[1])


def test_arrays_of_the_wrong_shape_or_layout_are_refused() -> None:
    x, P, A, q, H, r, y = problem(1)
    with pytest.raises(ValueError, match="P: want"):
        KalmanArithmetic(x, P.T, A, q, H, r, y)          # Fortran-ordered view
    with pytest.raises(ValueError, match="r: want"):
        KalmanArithmetic(x, P, A, q, H, r[:-1], y)
