"""The front feet's gestures of mode 64 on two legs (SPEC §12.E.2).

Each gesture is the front feet's path in time: (FR, FL) positions in metres
from each front leg's abad axis, in body axes, as the SPEC gives them per
gait id. Moves between the SPEC's points are minimum-jerk (smooth starts and
stops); the heart is traced as the SPEC's parametric curve. Gait ids 0 and
10 ("Thanks") are motiond's wave (controller/behaviours/two_leg.py), not a
path here; 6 and 7 (the obstacle swings) are driven by the behaviour, which
freezes or rewinds their clock on contact (`swing_point`).
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from controller.robot.config.quadruped import Geometry
from controller.robot.config.two_leg import MassModel
from controller.robot.kinematics import QuadrupedKinematics

# Where every gesture starts and ends: under each hip, (0, -+0.09, -0.24).
HOME = np.array([[0.0, -0.09, -0.24], [0.0, 0.09, -0.24]])
SWING_PERIOD = 1.1                 # s: gestures 6 and 7
# m along the swing's direction: the SPEC's 0.3 m would end the foot level
# with the abad axis (0.213 m ahead, 0.027 m below it), where the leg's abad
# is singular and the joints whip round; 0.25 m stays 7 cm below it.
SWING_LENGTH = 0.25
SWING_PITCH = 0.79                 # rad forward-up from the body's x axis
SWING_S = 11.0
HEART_START = np.array([[0.15, 0.03, -0.20], [0.15, -0.03, -0.20]])   # feet crossed


def _pair(x: float, y: float, z: float) -> np.ndarray:
    """FR at (x, y, z), FL its mirror image (y negated)."""
    return np.array([[x, y, z], [x, -y, z]])


def _mj(s: float) -> float:
    s = min(1.0, max(0.0, s))
    return s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)


def _path(points: list[tuple[float, np.ndarray]], t: float, start: np.ndarray) -> np.ndarray:
    """Piecewise minimum-jerk moves: (duration, end) one after the other from `start`."""
    at = start
    for duration, end in points:
        if t < duration:
            return at + (end - at) * _mj(t / duration)
        t -= duration
        at = end
    return at


def _heart(s: float) -> np.ndarray:
    """The heart's halves at share s of its 3 T (a from 90 to -90 degrees): y
    out by 0.18 cos a from the crossed start, x = 0.1 (sin a + cos^(2/3) a +
    0.2), z up to -0.12 at the middle and down to -0.27 at the end."""
    a = math.radians(90.0 - 180.0 * s)
    x = 0.1 * (math.sin(a) + abs(math.cos(a)) ** (2.0 / 3.0) + 0.2)
    z = -0.20 + 0.08 * (s / 0.5) if s < 0.5 else -0.12 - 0.15 * ((s - 0.5) / 0.5)
    out = 0.18 * math.cos(a)
    # The crossed start's x (0.15) eases onto the curve's (0.12) over the first tenth.
    x += (0.15 - 0.1 * 1.2) * (1.0 - _mj(s / 0.1))
    return np.array([[x, 0.03 - out, z], [x, -0.03 + out, z]])


def length(gait: int) -> float:
    """How long gesture `gait` lasts, s (SPEC §12.E.2)."""
    if gait in (3, 13):
        return 1.4
    if gait in (6, 7):
        return SWING_S
    return 3.5


def feet(gait: int, t: float) -> np.ndarray:
    """(FR, FL) at t s into gesture `gait` (not 0, 10, 6 or 7)."""
    kind = gait % 10 if gait > 10 else gait
    if kind == 1:                                        # Heart
        T = 0.5
        if t < T:
            return _path([(T, HEART_START)], t, HOME)
        if t < 4 * T:
            return _heart((t - T) / (3 * T))
        end = _heart(1.0)
        return _path([(T, _pair(-0.07, 0.03, -0.27)), (2 * T, HOME)], t - 4 * T, end)
    if kind == 2:                                        # Welcome
        apart, crossed = _pair(0.0, -0.08, -0.2), _pair(0.0, 0.04, -0.2)
        return _path([(0.5, apart), (0.5, crossed), (0.5, apart), (0.5, crossed), (0.5, apart),
                      (0.5, _pair(0.0, -0.09, -0.25)), (0.5, _pair(0.0, -0.09, -0.25))], t, HOME)
    if kind == 3:                                        # Hand up and down
        one = np.array([[-0.15, -0.03, -0.22], [0.15, 0.03, -0.14]])
        other = np.array([[0.15, -0.03, -0.14], [-0.15, 0.03, -0.22]])
        return _path([(0.2, one), (0.2, one), (0.2, other), (0.2, other), (0.2, one), (0.2, one),
                      (0.2, HOME)], t, HOME)
    hold = _pair(0.0, -0.1, -0.3)                         # 4, 5, 8, 9, 14: no case of their own
    return _path([(0.5, hold)], t, HOME)


def swing_point(phase: float) -> np.ndarray:
    """FR of gestures 6 and 7 at `phase` (0-1 of a swing period): out along
    the forward-up direction and back, sinusoidally."""
    direction = np.array([math.cos(SWING_PITCH), 0.0, math.sin(SWING_PITCH)])
    reach = SWING_LENGTH * 0.5 * (1.0 - math.cos(2.0 * math.pi * phase))
    return HOME[0] + direction * reach


# Gestures 6 and 7 feel for an obstacle in the joint torques (SPEC §12.E.2).
CONTACT_RANGE = (-0.25, 0.5)       # N m: a filtered torque outside it ...
CONTACT_TICKS = 5                  # ... this many ticks in a row is a contact
CLEAR_TORQUE = 0.2                 # N m: gesture 6 resumes once inside it ...
CLEAR_TICKS = 500                  # ... for this many ticks
REBOUND_TICKS = 100                # gesture 7: the swing turns back this long after a contact
DEAF_TICKS = 150                   # ... and hears no contact for this long after that
FILTER_S = 0.01                    # s: the torques' low-pass
ARMATURE = 0.0029                  # kg m^2: a CyberGear rotor's inertia through its gear
FRICTION_VELOCITY = 0.1            # rad/s: the dry friction is taken as smooth across zero speed


class ContactWatch:
    """An obstacle in a front leg's swing, from its hip and knee torques.

    The torques the motors spend on a free leg are its weight, its
    acceleration and its joints' dry friction, so the watch takes those away
    (the mass model's thigh and shank as point masses and the rotors'
    inertia, at the joints' angles, the trunk's attitude and the targets'
    acceleration), low-passes what is left and compares it with the SPEC's
    window, widened near standstill by the friction's full range (there it
    may take any value up to its limit)."""

    def __init__(self, geometry: Geometry, mass_model: MassModel, dt: float, leg: int,
                 friction: float, filter_s: float = FILTER_S) -> None:
        self.leg = leg
        # The links' centres as if each were a leg's end: the thigh's at
        # `thigh_at` down the thigh, the shank's `shank_at` down the shank.
        self.thigh = QuadrupedKinematics(replace(geometry, hip_link=mass_model.thigh_at, knee_link=1e-6))
        self.shank = QuadrupedKinematics(replace(geometry, knee_link=mass_model.shank_at))
        self.masses = (mass_model.thigh, mass_model.shank)
        self.friction = friction
        self.alpha = dt / (filter_s + dt)
        self.reset()

    def reset(self) -> None:
        self.filtered: np.ndarray | None = None
        self.unsure = np.zeros(2)
        self.outside = 0
        self.inside = 0

    def weight_torque(self, q: np.ndarray, rot: np.ndarray) -> np.ndarray:
        """Hip and knee torques (2,) that hold the leg's links against gravity."""
        g_body = rot.T @ np.array([0.0, 0.0, -9.81])
        legs = np.zeros((4, 3))
        legs[self.leg] = q
        tau = np.zeros(3)
        for kin, mass in zip((self.thigh, self.shank), self.masses, strict=True):
            _, jac = kin.forward_jacobian(legs)
            assert jac is not None
            tau -= jac[self.leg].T @ (mass * g_body)
        return tau[1:]

    def inertia_torque(self, q: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Hip and knee torques (2,) that accelerate the links (as point
        masses) and the rotors (`ARMATURE`) at qdd."""
        legs = np.zeros((4, 3))
        legs[self.leg] = q
        mass = np.diag(np.full(3, ARMATURE))
        for kin, m in zip((self.thigh, self.shank), self.masses, strict=True):
            _, jac = kin.forward_jacobian(legs)
            assert jac is not None
            mass += m * jac[self.leg].T @ jac[self.leg]
        return (mass @ qdd)[1:]

    def residual(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, rot: np.ndarray,
                 qdd: np.ndarray) -> np.ndarray:
        """The filtered hip and knee torques beyond the leg's weight and the
        commanded acceleration (qdd, the targets' second difference) need,
        and the joints' dry friction at their velocity qd."""
        moving = np.tanh(qd[1:] / FRICTION_VELOCITY)
        r = tau[1:] - self.weight_torque(q, rot) - self.inertia_torque(q, qdd) - self.friction * moving
        # Near standstill dry friction takes any value up to its limit: that
        # much of the residual is not evidence of a contact.
        self.unsure = self.friction * (1.0 - np.abs(moving))
        self.filtered = r if self.filtered is None else self.filtered + self.alpha * (r - self.filtered)
        return self.filtered

    def touched(self, residual: np.ndarray) -> bool:
        lo, hi = CONTACT_RANGE
        out = (residual < lo - self.unsure) | (residual > hi + self.unsure)
        self.outside = self.outside + 1 if bool(np.any(out)) else 0
        return self.outside >= CONTACT_TICKS

    def clear(self, residual: np.ndarray) -> bool:
        self.inside = self.inside + 1 if bool(np.all(np.abs(residual) <= CLEAR_TORQUE + self.unsure)) else 0
        return self.inside >= CLEAR_TICKS
