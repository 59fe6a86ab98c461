"""Balance on the two rear feet (CyberDog mode 64's greeting): the body as
one rigid body on massless legs, pushed by the ground at two points.

In the sagittal plane the two feet act as one point, so the ground's force F
sets the centre of mass's acceleration (F / m) and, through its lever about
the centre of mass, the trunk's pitch acceleration: with the centre of mass x
ahead of the feet and h above them, m x'' = Fx and I pitch'' = m g x - h Fx
(pitch positive nose down). The pitch is then a reaction wheel of limited
travel: pushing the centre of mass back over the feet tips the trunk, and an
LQR on (x, pitch, x', pitch') with Fx as the input balances both, with the
gains tabled over h. Height, sideways position, roll and heading are plain
PD: the two feet, a foot-width apart, turn any roll or yaw moment and share
the force between them (the moment about the line through the feet is the
one they cannot choose; the LQR owns it).

Everything comes from the state estimate (the IMU's attitude and rates, the
legs' kinematics from the measured joints), never from a simulator.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from controller.motion.forces import GRAVITY, leg_torques
from controller.robot.config.two_leg import MassModel, TwoLegGains
from controller.robot.kinematics import QuadrupedKinematics

ROLL_FILTER_S = 0.1     # s: low-pass of a shank's turn on the floor (_rolling_moment)
ROLL_RATE = 0.3         # rad/s: a shank turning this fast rolls its foot at 76 % of the full moment


def lqr_gain(A: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray, dt: float,
             tolerance: float = 1e-12, iterations: int = 100) -> np.ndarray:
    """The discrete-time LQR gain K (u = -K x) of x' = A x + B u sampled at dt
    (forward Euler): P of the discrete Riccati equation by the doubling
    algorithm (each step squares the horizon, so some 20 steps reach what a
    fixed-point iteration needs thousands for), then K from P."""
    n = len(A)
    Ad = np.eye(n) + A * dt
    Bd = B * dt
    # P = Q + Ad' P Ad - Ad' P Bd (R + Bd' P Bd)^-1 Bd' P Ad: with
    # G = Bd R^-1 Bd', iterate A <- A W^-1 A, G <- G + A W^-1 G A',
    # H <- H + A' H W^-1 A, W = I + G H; H tends to P.
    a, g, h = Ad.copy(), Bd @ np.linalg.solve(R, Bd.T), Q.astype(float).copy()
    for _ in range(iterations):
        try:
            with np.errstate(over="ignore", invalid="ignore"):    # an uncontrollable model diverges
                w = np.eye(n) + g @ h
                wa = np.linalg.solve(w, a)
                wg = np.linalg.solve(w, g)
                h_next = h + a.T @ h @ wa
                g, a = g + a @ wg @ a.T, a @ wa
        except np.linalg.LinAlgError:
            break
        if not np.all(np.isfinite(h_next)):
            break
        done = np.max(np.abs(h_next - h)) <= tolerance * max(1.0, float(np.max(np.abs(h_next))))
        h = h_next
        if done:
            BtP = Bd.T @ h
            return np.linalg.solve(R + BtP @ Bd, BtP @ Ad)
    raise ValueError("the Riccati equation has no stabilising solution: is the model controllable?")


def _sagittal_a(m: float, iyy: float) -> np.ndarray:
    """A of the sagittal model x' = A x + B Fx, x = (x, pitch, x', pitch')."""
    A = np.zeros((4, 4))
    A[0, 2] = A[1, 3] = 1.0
    A[3, 0] = m * -GRAVITY[2] / iyy
    return A


def _sagittal_b(m: float, iyy: float, h: float) -> np.ndarray:
    """B of the sagittal model, as a vector, for a centre of mass h above the feet."""
    return np.array([0.0, 0.0, 1.0 / m, -h / iyy])


@functools.lru_cache(maxsize=32)
def _gain_table(m: float, iyy: float, dt: float, q_x: float, q_pitch: float, q_vx: float,
                q_pitch_rate: float, r_force: float, heights: tuple[float, ...]) -> np.ndarray:
    """The LQR rows of the sagittal model x' = A x + B Fx, x = (x, pitch, x',
    pitch'), for each centre-of-mass height; the same figures give the same
    (read-only) table, solved once."""
    Q = np.diag([1 / q_x ** 2, 1 / q_pitch ** 2, 1 / q_vx ** 2, 1 / q_pitch_rate ** 2])
    R = np.array([[1 / r_force ** 2]])
    table = np.array([lqr_gain(_sagittal_a(m, iyy), _sagittal_b(m, iyy, h)[:, None], Q, R, dt)[0]
                      for h in heights])
    table.flags.writeable = False
    return table


@dataclass(frozen=True)
class Ref:
    """A reference and its first two derivatives."""
    value: float
    rate: float = 0.0
    acc: float = 0.0


def min_jerk(t: float, duration: float, start: float, end: float) -> Ref:
    """The minimum-jerk move start -> end over `duration` s, at time t."""
    u = min(max(t / duration, 0.0), 1.0) if duration > 0 else 1.0
    d = end - start
    s = u * u * u * (10.0 - 15.0 * u + 6.0 * u * u)
    if u <= 0.0 or u >= 1.0:
        return Ref(start + d * s)
    return Ref(start + d * s, d * 30.0 * u * u * (1 - u) ** 2 / duration,
               d * 60.0 * u * (1 - u) * (1 - 2 * u) / duration ** 2)


def link_points(model: MassModel, hip: np.ndarray, ly: float, l2: float,
                q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One leg's thigh and shank centres of mass in the body frame, for its
    joint angles q (3): the leg plane (as csrc/legs.c) turned by the abad."""
    q0, q1, q2 = q
    s0, c0 = math.sin(q0), math.cos(q0)
    s1, c1 = math.sin(q1), math.cos(q1)
    s12, c12 = math.sin(q1 + q2), math.cos(q1 + q2)
    out = []
    for x, h in ((model.thigh_at * s1, model.thigh_at * c1),
                 (l2 * s1 + model.shank_at * s12, l2 * c1 + model.shank_at * c12)):
        out.append(hip + np.array([x, ly * c0 + h * s0, ly * s0 - h * c0]))
    return out[0], out[1]


def centre_of_mass(model: MassModel, hip: np.ndarray, side: np.ndarray, l1: float, l2: float,
                   q: np.ndarray) -> np.ndarray:
    """The whole robot's centre of mass in the body frame for joint angles q (12)."""
    total = np.array(model.trunk_com) * model.trunk
    for leg in range(len(hip)):
        thigh, shank = link_points(model, hip[leg], side[leg] * l1, l2, q[3 * leg:3 * leg + 3])
        total += model.abad * hip[leg] + model.thigh * thigh + model.shank * shank
    return total / model.total


def leg_weight_torques(model: MassModel, hip: np.ndarray, ly: float, l2: float, q: np.ndarray,
                       gravity_body: np.ndarray, step: float = 1e-6) -> np.ndarray:
    """The joint torques (3) that hold one leg's own thigh and shank up
    against gravity (gravity_body: g in the body frame), by the links'
    Jacobians (finite differences): -sum J_i^T m_i g."""
    base = link_points(model, hip, ly, l2, q)
    tau = np.zeros(3)
    for j in range(3):
        dq = q.copy()
        dq[j] += step
        moved = link_points(model, hip, ly, l2, dq)
        for mass, p0, p1 in zip((model.thigh, model.shank), base, moved):
            tau[j] -= mass * float((p1 - p0) @ gravity_body) / step
    return tau


class TwoLegBalance:
    """The rear-feet balance law: ground forces and their joint torques per tick."""

    LEGS = np.array([2, 3])     # RR, RL

    def __init__(self, kin: QuadrupedKinematics, masses: MassModel, inertia: np.ndarray,
                 dt: float, gains: TwoLegGains) -> None:
        self.kin = kin
        self.masses = masses
        self.m = masses.total
        self.inertia = np.diag(inertia)
        self.com = np.zeros(3)
        self.com_rate = np.zeros(3)
        self.dt = dt
        self.started = False
        self.foot_radius = kin.foot_radius
        self.friction = gains.friction
        self.g = gains
        self.heights = np.linspace(0.12, 0.5, 20)
        self.iyy = float(inertia[1])
        self.a_model = _sagittal_a(self.m, self.iyy)    # the latency prediction's A, every tick
        self.alpha = dt / (dt + gains.velocity_filter_s)
        self.table = _gain_table(self.m, self.iyy, dt, gains.q_x, gains.q_pitch, gains.q_vx,
                                 gains.q_pitch_rate, gains.r_force, tuple(self.heights))
        self.fx = 0.0         # N: the last sagittal force asked for
        self.forces = np.zeros((4, 3))          # world frame, the ground on each foot
        self.tau = np.zeros(12)
        # The state, heading frame, for logs and the behaviour's checks.
        self.x = self.h = self.y = 0.0
        self.vx = self.vz = self.vy = 0.0
        self.pitch = self.roll = self.yaw = 0.0
        self.rates = np.zeros(3)
        self.shank_rates = np.zeros(len(self.LEGS))   # rad/s, low-passed (_rolling_moment)

    def gain(self, h: float) -> np.ndarray:
        """The LQR row for a centre of mass h above the feet (interpolated)."""
        hs = self.heights
        h = min(max(h, float(hs[0])), float(hs[-1]))
        i = min(int(np.searchsorted(hs, h)), len(hs) - 1)
        if i == 0:
            return self.table[0]
        a = (h - hs[i - 1]) / (hs[i] - hs[i - 1])
        return self.table[i - 1] * (1 - a) + self.table[i] * a

    def centre_of_mass(self, q: np.ndarray) -> np.ndarray:
        k = self.kin
        return centre_of_mass(self.masses, k.hip, k.side, k.l1, k.l2, q)

    def reset(self) -> None:
        """The next `measure` starts the centre of mass's rate afresh."""
        self.started = False
        self.fx = 0.0
        self.shank_rates[:] = 0.0

    def measure(self, rot: np.ndarray, gyro: np.ndarray, feet: np.ndarray,
                jacobian: np.ndarray, q: np.ndarray, qd: np.ndarray) -> None:
        """The state from the estimate: the centre of mass against the rear
        feet's contact points and its velocity, in the heading frame (world
        turned by the body's yaw), and the attitude."""
        # The heading from the body's y axis, which stays level however far
        # the nose is up (the x axis is near vertical on two legs).
        yaw = math.atan2(-rot[0, 1], rot[1, 1])
        c, s = math.cos(yaw), math.sin(yaw)
        heading = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])   # world -> heading
        rh = heading @ rot
        w = rh @ gyro
        com = self.centre_of_mass(q)
        self.com_rate = (com - self.com) / self.dt if self.started else np.zeros(3)
        self.com = com
        rate = self.com_rate
        if not self.started:
            self.vx = self.vy = self.vz = 0.0
            self.rates = rh @ gyro
            self.started = True
        r = np.zeros(3)
        v = np.zeros(3)
        for leg in self.LEGS:
            p = feet[leg] - self.com
            r += rh @ p
            v += rh @ (np.cross(gyro, p) + jacobian[leg] @ qd[3 * leg:3 * leg + 3] - rate)
        r /= len(self.LEGS)
        v /= len(self.LEGS)
        r[2] -= self.foot_radius
        self.x, self.y, self.h = -r[0], -r[1], -r[2]
        # The velocities come from joint rates and the gyro, both noisy: a
        # first-order low-pass (velocity_filter_s) keeps the noise out of the force.
        a = self.alpha
        self.vx += a * (-v[0] - self.vx)
        self.vy += a * (-v[1] - self.vy)
        self.vz += a * (-v[2] - self.vz)
        w = self.rates + a * (w - self.rates)
        self.pitch = math.atan2(-rh[2, 0], rh[0, 0])
        self.roll = math.asin(max(-1.0, min(1.0, rh[2, 1])))     # the y axis's tilt
        self.yaw = yaw
        self.rates = w
        self._heading = heading
        self._rh = rh
        if self.g.foot_rolling > 0.0:
            self.x += self._rolling_moment(qd) / (self.m * -GRAVITY[2])

    def _rolling_moment(self, qd: np.ndarray) -> float:
        """The pitch moment (nose down positive) the rear feet's rolling
        resistance puts on the robot: each foot's load times `foot_rolling`
        against the way its shank turns on the floor (the trunk's pitch rate
        less the leg's hip and knee rates, low-passed over ROLL_FILTER_S so
        that the trunk's own quick turns do not feed back through it; tanh
        over ROLL_RATE: a foot at rest holds whatever moment it must, which
        is not known, so none is assumed). The ground pushes at the centre of
        pressure, moment / weight behind (nose up) or ahead of the foot's
        centre: the centre of mass is measured from there. Without it Go1's
        rubber toes (0.01 m) turned the trunk nose up past the vertical as
        its legs straightened on two legs (docs/SCRIPTS.md "Two-leg stand")."""
        a = self.dt / (self.dt + ROLL_FILTER_S)
        moment = 0.0
        for i, leg in enumerate(self.LEGS):
            turn = float(self.rates[1]) - float(qd[3 * leg + 1]) - float(qd[3 * leg + 2])
            self.shank_rates[i] += a * (turn - self.shank_rates[i])
            load = max(float(self.forces[leg, 2]), 0.0)
            moment -= self.g.foot_rolling * load * math.tanh(self.shank_rates[i] / ROLL_RATE)
        return moment

    def step(self, rot: np.ndarray, feet: np.ndarray, jacobian: np.ndarray, q: np.ndarray,
             pitch: Ref, height: Ref, x_ref: float, yaw_ref: float,
             torque_limit: np.ndarray | float) -> np.ndarray:
        """Ground forces on the rear feet for the references (after `measure`)
        and the joint torques that push them, into self.forces / self.tau.

        A pitch reference that turns the trunk needs the centre of mass off
        the feet by I pitch'' / (m g) (gravity supplies the turning moment):
        that is the x reference's feed-forward."""
        g = self.g
        m, grav = self.m, -GRAVITY[2]
        k = self.gain(self.h)
        x_ff = self.iyy * pitch.acc / (m * grav)
        state = np.array([self.x - x_ref - x_ff, self.pitch - pitch.value, self.vx,
                          self.rates[1] - pitch.rate])
        if g.latency_s > 0.0:
            # Where the state will be when this force acts: the model's
            # x' = A x + B u over latency_s, u the last force.
            state = state + g.latency_s * (self.a_model @ state
                                           + _sagittal_b(self.m, self.iyy, self.h) * self.fx)
        fx = -float(k @ state)
        self.fx = fx
        fz = m * (grav + height.acc + g.height_kp * (height.value - self.h)
                  + g.height_kd * (height.rate - self.vz))
        fy = m * (-g.side_kp * self.y - g.side_kd * self.vy)
        fz = max(fz, 0.2 * m * grav)
        force = np.array([fx, fy, fz])
        # Roll and heading: the moment about the centre of mass, heading frame.
        rh = self._rh
        inertia = rh @ self.inertia @ rh.T
        yaw_err = (self.yaw - yaw_ref + math.pi) % (2 * math.pi) - math.pi
        alpha = np.array([-g.roll_kp * self.roll - g.roll_kd * self.rates[0], 0.0,
                          -g.yaw_kp * yaw_err - g.yaw_kd * self.rates[2]])
        moment = inertia @ alpha
        r = np.array([rh @ (feet[leg] - self.com) for leg in self.LEGS])
        r[:, 2] -= self.foot_radius
        mid = r.mean(axis=0)
        d = r[0] - r[1]
        e = moment - np.cross(mid, force)
        dd = float(d @ d)
        e -= d * float(d @ e) / dd                  # the moment the feet cannot turn
        delta = np.cross(e, d) / dd
        f = np.array([force / 2 + delta, force / 2 - delta])
        # Each foot pushing, inside its friction pyramid.
        f[:, 2] = np.maximum(f[:, 2], 2.0)
        cap = self.friction * f[:, 2]
        f[:, 0] = np.clip(f[:, 0], -cap, cap)
        f[:, 1] = np.clip(f[:, 1], -cap, cap)
        self.forces[:] = 0.0
        self.forces[self.LEGS] = f @ self._heading       # heading -> world (rows)
        leg_torques(jacobian, rot, self.forces[self.LEGS], self.LEGS, self.tau)
        self._legs_real(rot, q)
        np.clip(self.tau, -torque_limit, torque_limit, out=self.tau)
        return self.tau

    def _legs_real(self, rot: np.ndarray, q: np.ndarray) -> None:
        """What J^T f at the ball's centre leaves out: the ground pushes at the
        ball's bottom, a foot radius below its centre, so the push also turns
        the shank (each joint's axis . (offset x push)); and the thigh and
        shank weigh something, held up by their own joints."""
        k = self.kin
        gravity = rot.T @ GRAVITY
        offset = rot.T @ np.array([0.0, 0.0, -self.foot_radius])
        for leg in self.LEGS:
            ql = q[3 * leg:3 * leg + 3]
            push = -(rot.T @ self.forces[leg])
            moment = np.cross(offset, push)
            c0, s0 = math.cos(ql[0]), math.sin(ql[0])
            turn = -(c0 * moment[1] + s0 * moment[2])          # hip and knee axis -(0, c0, s0)
            extra = np.array([moment[0], turn, turn])
            extra += leg_weight_torques(self.masses, k.hip[leg], k.side[leg] * k.l1, k.l2, ql.copy(),
                                        gravity)
            self.tau[3 * leg:3 * leg + 3] += extra
