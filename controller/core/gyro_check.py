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

Samples with three or more loaded feet count on every axis, but only the
ones some single rate fits within SLIDE: a slide there reads as a bias on
any axis (a trot up a slope, the two-leg stand on its hind feet, hops
landing: each did when two feet counted on every axis). A pair alone (a
trot's diagonal) cannot show that neither foot slides, so it counts for
the yaw alone, in sums and a weight of its own, and only while the body
is near level (LEVEL) and the pair's feet move against each other slower
than PAIR_SLIDE (no slide, no fast turn): of its equations the rows along
the body's x and y, their yaw term (the pair's height difference times the
roll and pitch bias is left out, and a soft foot's vertical wobble does
not enter). That yaw stands where three feet did not see one. Without it
a trot, whose moments on three feet weigh too little, never saw a yaw
bias (a 0.2 rad/s one went on for the whole row on every robot); with it,
found in 0.67 s. With a true gyro the largest yaw bias it read, trotting
on the flat, slopes, stairs, ice, a soft floor and rough ground and
pacing, bounding, turning and sidestepping (CyberDog 2, Go2, Go1, Barkour
vB), was 0.06 rad/s. (Counted with the three-feet sums, a pair's samples
made up the window's weight while a few sliding three-feet samples set the
pitch: CyberDog 2's two-leg stand, landing on its rear pair, read a 0.19
rad/s pitch bias.) The feet are balls: a loaded foot rolls, its centre
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
MIN_FEET = 3                # loaded feet a sample needs on every axis: two cannot show that neither slides
LEVEL = 0.95                # a pair alone counts while the body's z axis is this near the world's (18 degrees)
PAIR_SLIDE = 0.15           # m/s: a pair alone whose feet move against each other faster is left out
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
        # A pair alone's evidence, for the yaw only: its own sums and weight.
        self.yaw_normal = self.yaw_rhs = self.yaw_weight = 0.0
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
            self.yaw_normal *= self.decay
            self.yaw_rhs *= self.decay
            self.yaw_weight *= self.decay
            loaded = np.flatnonzero(trust >= LOADED)
            if len(loaded) >= MIN_FEET or (len(loaded) == 2 and rot[2, 2] > LEVEL):
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
        w = 1.0 / (1.0 + (float(np.linalg.norm(gyro)) / TURN) ** 2)
        if len(feet) == 2:
            # A pair alone: its rows along the body's x and y, their yaw
            # column only (the roll and pitch terms, the pair's height
            # difference times the bias, are left out), in sums of their own.
            if float(np.abs(v[i] - v[j])[:2].max()) <= PAIR_SLIDE:
                z = a[0, :2, 2]
                self.yaw_normal += w * float(z @ z)
                self.yaw_rhs += w * float(z @ y[0, :2])
                self.yaw_weight += w * SAMPLE * self.dt
            return
        if self._slides(a, y):
            return
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
        self._solve_feet()
        # The yaw from pairs alone where three feet did not show it.
        if np.isnan(self.bias[2]) and self.yaw_weight >= 0.5 * self.c.gyro_window_s and self.yaw_normal > 0.0:
            self.bias[2] = self.yaw_rhs / self.yaw_normal

    def _solve_feet(self) -> None:
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
