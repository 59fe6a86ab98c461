"""Static foot-force distribution: the least-squares forces a set of feet on
the ground must push with to give the body a wanted force and moment, and
the joint torques that produce them (the force jump, and the pose modes'
weight support).

Pure numpy, no state: callers hand in the feet, the leg Jacobians and the
body's orientation from the state estimate.
"""
from __future__ import annotations

import numpy as np

GRAVITY = np.array([0.0, 0.0, -9.81])   # m/s^2, world frame (the estimator's too)


def wrench_forces(r: np.ndarray, force: np.ndarray, torque: np.ndarray, friction: float) -> np.ndarray:
    """Forces (k, 3), world frame, of feet at r (k, 3: each foot from the
    centre of mass, world frame) that sum to `force` with moment `torque`
    about the centre of mass, least squares (minimum norm); each then kept
    pushing (fz >= 0) and inside its friction pyramid."""
    k = len(r)
    A = np.zeros((6, 3 * k))
    for j, ri in enumerate(r):
        A[:3, 3 * j:3 * j + 3] = np.eye(3)
        A[3:, 3 * j:3 * j + 3] = np.array([[0.0, -ri[2], ri[1]], [ri[2], 0.0, -ri[0]],
                                           [-ri[1], ri[0], 0.0]])
    f = (np.linalg.pinv(A) @ np.concatenate([force, torque])).reshape(k, 3)
    f[:, 2] = np.maximum(f[:, 2], 0.0)
    horizontal = np.linalg.norm(f[:, :2], axis=1)
    cap = friction * f[:, 2]
    f[:, :2] *= np.where(horizontal > cap, cap / np.maximum(horizontal, 1e-9), 1.0)[:, None]
    return f


def weight_forces(r: np.ndarray, weight: float) -> np.ndarray:
    """Vertical forces (k, 3), world frame, of feet at r (k, 3: from the
    centre of mass, world frame) that carry `weight` N with no moment about
    the centre of mass, least squares, each kept pushing: no sideways push, so
    nothing for the feet to slip on.

    The minimum-norm solution of A fz = (weight, 0, 0), A's rows 1, x, y:
    fz = A^T c with (A A^T) c = (weight, 0, 0), the 3 x 3 solved in closed
    form (the stance modes run it every tick: a third of the time numpy's
    SVD pseudo-inverse took); the pseudo-inverse where A A^T is singular
    (fewer than three feet, or all in a line)."""
    k = len(r)
    f = np.zeros((k, 3))
    if k >= 3:
        xs, ys = r[:, 0].tolist(), r[:, 1].tolist()
        sx, sy = sum(xs), sum(ys)
        sxx, syy = sum(x * x for x in xs), sum(y * y for y in ys)
        sxy = sum(x * y for x, y in zip(xs, ys))
        # The first column of adj(A A^T): c is weight / det times it.
        c0, c1, c2 = sxx * syy - sxy * sxy, sy * sxy - sx * syy, sx * sxy - sy * sxx
        det = k * c0 + sx * c1 + sy * c2
        if abs(det) > 1e-9 * (k + sxx + syy) ** 3:
            s = weight / det
            f[:, 2] = np.maximum(s * (c0 + c1 * r[:, 0] + c2 * r[:, 1]), 0.0)
            return f
    A = np.vstack([np.ones(k), r[:, 0], r[:, 1]])
    f[:, 2] = np.maximum(np.linalg.pinv(A) @ np.array([weight, 0.0, 0.0]), 0.0)
    return f


def leg_torques(jacobian: np.ndarray, rot: np.ndarray, forces: np.ndarray, legs: np.ndarray | slice,
                out: np.ndarray) -> np.ndarray:
    """Joint torques (legs x 3, into `out`, zero for the other legs) with which
    legs[i] pushes the ground with forces[i] (world frame): the ground pushes
    back with f, so tau = -J^T R^T f."""
    tau = out.reshape(len(jacobian), 3)
    tau[:] = 0.0
    push = -(forces @ rot)                      # each foot's push on the ground, body frame
    tau[legs] = np.einsum("lji,lj->li", jacobian[legs], push)
    return out
