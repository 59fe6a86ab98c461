"""A gyro that lies (docs/RELIABILITY.md "Broken parts"): the body's rate
told by the loaded feet against the rate the gyro reports.

A foot that carries load does not move over the ground, so two loaded feet
i and j, at p_i and p_j in the body frame with velocities v_i and v_j
relative to the body (the leg Jacobian times the joint speeds), satisfy
v_i - v_j = (p_i - p_j) x w for the body's true rate w. With the gyro g =
w + b, each pair gives [d]x b = [d]x g - dv (d = p_i - p_j): three equations
in the bias b, of which the component along d is unseen. Summed over every
loaded pair and over a window (exponential, `gyro_window_s`), the normal
equations give b along every direction the pairs have seen.

Only samples with three or more loaded feet count, and of those only the
ones some single rate fits within SLIDE: two feet cannot show that neither
slides, and the full card showed what that costs (a trot up a slope, the
two-leg stand on its hind feet, hops landing: each read a slide as a
bias). So a stand sees the gyro at once and a trot only in its moments on
three or four feet. The feet are balls: a loaded foot rolls, its centre
moving by (w + w_leg) x (r n) (n up, r the foot's radius, w_leg the
shank's rate from the joints), which is taken off. Samples count less the
faster the gyro says the body turns (a weight 1 / (1 + (|g| / TURN)^2)),
and a window without enough weight says nothing. A bias over
`gyro_bias_rad_s` for `gyro_bias_ms` is a fault. Sampled every SAMPLE
ticks and solved on others: the check costs a tick a few tens of us.
"""
from __future__ import annotations

import numpy as np

from controller.robot.config.safety import SensorLimits

TURN = 0.5                  # rad/s: a sample at this gyro rate counts half
SAMPLE = 5                  # ticks between samples (a bias changes slower than a step)
EVERY = 10                  # ticks between solutions of the normal equations, on other ticks
OBSERVABLE = 0.1            # a direction seen with this share of the best one's weight
SLIDE = 0.03               # m/s: pairs of loaded feet disagreeing by more on one rate: a foot slides
MIN_FEET = 3                # loaded feet a sample needs: two cannot show that neither slides
LOADED = 1.0                # the estimator's trust of a foot that carries load and is planned down
UP = np.array([0.0, 0.0, 1.0])


def skew(d: np.ndarray) -> np.ndarray:
    """(k, 3) vectors -> (k, 3, 3) matrices of the cross product d x ."""
    out = np.zeros(d.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -d[..., 2], d[..., 1]
    out[..., 1, 0], out[..., 1, 2] = d[..., 2], -d[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -d[..., 1], d[..., 0]
    return out


class GyroCheck:
    def __init__(self, limits: SensorLimits, legs: int, foot_radius: float, dt: float) -> None:
        self.c = limits
        self.foot_radius = foot_radius
        self.dt = dt
        self.decay = float(np.exp(-SAMPLE * dt / limits.gyro_window_s))
        self.pairs = [np.triu_indices(k, 1) for k in range(legs + 1)]
        self.bias = np.zeros(3)         # the last solution, rad/s (NaN where unseen)
        self.reset()

    def reset(self) -> None:
        self.normal = np.zeros((3, 3))
        self.rhs = np.zeros(3)
        self.weight = 0.0               # s of full-weight evidence in the window
        self.over = 0                   # ticks the bias has been over the bound
        self.ticks = 0
        self.bias[:] = np.nan

    def step(self, gyro: np.ndarray, rot: np.ndarray, feet: np.ndarray, jacobian: np.ndarray,
             q: np.ndarray, qd: np.ndarray, trust: np.ndarray) -> str | None:
        """One tick of the estimator's view (its gyro, orientation, feet and
        Jacobians in the body frame, and the joints they came from): the
        finding's text, or None."""
        c = self.c
        if c.gyro_bias_rad_s <= 0.0:
            return None
        self.ticks += 1
        if self.ticks % SAMPLE == 0:
            self.normal *= self.decay
            self.rhs *= self.decay
            self.weight *= self.decay
            loaded = np.flatnonzero(trust >= LOADED)
            if len(loaded) >= MIN_FEET:
                self._add(gyro, rot, feet[loaded], jacobian[loaded], q.reshape(-1, 3)[loaded],
                          qd.reshape(-1, 3)[loaded])
            return None
        if self.ticks % EVERY != SAMPLE // 2:
            return None
        self._solve()
        worst = float(np.nanmax(np.abs(self.bias))) if np.isfinite(self.bias).any() else 0.0
        self.over = self.over + EVERY if worst > c.gyro_bias_rad_s else 0
        if self.over * self.dt * 1000.0 < c.gyro_bias_ms:
            return None
        axis = "xyz"[int(np.nanargmax(np.abs(self.bias)))]
        return (f"the gyro's {axis} rate is off by {worst:.2f} rad/s from what the loaded feet show "
                f"for {c.gyro_bias_ms:g} ms (safety.gyro_bias_rad_s {c.gyro_bias_rad_s:g}): the imu")

    def _add(self, gyro: np.ndarray, rot: np.ndarray, feet: np.ndarray, jacobian: np.ndarray,
             q: np.ndarray, qd: np.ndarray) -> None:
        v = np.einsum("lij,lj->li", jacobian, qd)
        # The shank's rate relative to the body: the ab/ad joint about x, hip
        # and knee about the ab/ad-turned y axis; the ball's centre rolls.
        pitch = qd[:, 1] + qd[:, 2]
        leg_rate = np.stack([qd[:, 0], pitch * np.cos(q[:, 0]), pitch * np.sin(q[:, 0])], axis=-1)
        v = v - np.cross(gyro + leg_rate, self.foot_radius * (rot.T @ UP))
        i, j = self.pairs[len(feet)]
        a = skew(feet[i] - feet[j])
        y = a @ gyro - (v[i] - v[j])
        if self._slides(a, y):
            return
        w = 1.0 / (1.0 + (float(np.linalg.norm(gyro)) / TURN) ** 2)
        self.normal += w * np.einsum("kji,kjl->il", a, a)
        self.rhs += w * np.einsum("kji,kj->i", a, y)
        self.weight += w * SAMPLE * self.dt

    @staticmethod
    def _slides(a: np.ndarray, y: np.ndarray) -> bool:
        """Three or more loaded feet say more than the rate needs: when no
        one rate fits all their pairs within SLIDE (m/s), a foot slides (a
        landing, a foot dragged by the motion) and the sample is left out."""
        rows = a.reshape(-1, 3)
        fit, *_ = np.linalg.lstsq(rows, y.reshape(-1), rcond=None)
        return float(np.abs(rows @ fit - y.reshape(-1)).max()) > SLIDE

    def _solve(self) -> None:
        self.bias[:] = np.nan
        if self.weight < 0.5 * self.c.gyro_window_s:
            return
        lam, vec = np.linalg.eigh(self.normal)
        seen = lam > OBSERVABLE * lam[-1]
        if not seen.any():
            return
        b = vec[:, seen] @ ((vec[:, seen].T @ self.rhs) / lam[seen])
        # A direction none of the pairs has seen is left unknown.
        unseen = vec[:, ~seen]
        self.bias[:] = b
        if unseen.shape[1]:
            self.bias[np.abs(unseen).max(axis=1) > 0.5] = np.nan
