"""Open-loop quintic-spline walk for a biped (NUbots-style humanoid).

The walk is a sequence of steps of fixed duration 1/step_frequency. Each step
has one support foot, fixed on the ground, and one swing foot, which stays
down for the first `double_support_ratio` of the step (weight shift) and then
flies to its landing pose. Everything is planned once per step as quintic
splines (position, velocity and acceleration meet at every knot) in an
odometry frame on the ground, and evaluated every tick:

- the nominal trunk (x, y, yaw) moves by the step's velocity (a constant
  body twist), start and end velocity matching the neighbouring steps;
- the trunk sways sideways over the support foot by `trunk_swing`;
- the swing foot follows x, y, yaw splines during single support and a z
  spline 0 -> foot_rise -> 0 with zero vertical velocity at lift-off and
  touch-down;
- the trunk pitch blends in over the first step and out over the last.

Feet stay flat on the ground plane: their targets in the torso frame carry
the inverse of the trunk's pitch and yaw. Start and stop: from rest the first
step starts from zero trunk velocity and a small, acceleration-limited step;
a zero command finishes the running step, then one closing step puts the
swing foot beside the support foot, the trunk comes to rest over the middle
and upright, and the engine reports `is_stopped()`.

The foot-placement rule keeps the feet apart: sideways steps and turns move
the outer foot first (the foot on the side the robot moves or turns to) by
twice the per-step amount, the inner foot only follows back to the nominal
`foot_distance`.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from controller.robot.angles import wrap_angle

# The walk file's parameters are part of the robot config; importable from here too.
from controller.robot.config.walk import AXES as AXES
from controller.robot.config.walk import Vec3, WalkParams
from controller.robot.config.walk import load_walk_params as load_walk_params
from controller.robot.humanoid_kinematics import (
    FootPose,
    HumanoidLegKinematics,
)

LEFT, RIGHT = 1, -1           # also the side's sign along y
SIDE_NAME = {LEFT: "left", RIGHT: "right"}
MOVING_EPS = 1e-6             # a command component below this counts as zero

Knot = tuple[float, float, float, float]  # t, position, velocity, acceleration


# ------------------------------------------------------------------- splines

class Quintic:
    """p(t) on [t0, t1] with position, velocity and acceleration given at both ends."""
    __slots__ = ("c", "t0", "t1")

    def __init__(self, start: Knot, end: Knot) -> None:
        t0, p0, v0, a0 = start
        t1, p1, v1, a1 = end
        T = t1 - t0
        if T <= 0.0:
            raise ValueError(f"quintic segment needs t1 > t0, got [{t0}, {t1}]")
        d = p1 - p0
        self.t0, self.t1 = t0, t1
        self.c = (
            p0, v0, a0 / 2.0,
            (20 * d - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T * T) / (2 * T ** 3),
            (-30 * d + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T * T) / (2 * T ** 4),
            (12 * d - 6 * (v1 + v0) * T + (a1 - a0) * T * T) / (2 * T ** 5),
        )

    def pos(self, t: float) -> float:
        c0, c1, c2, c3, c4, c5 = self.c
        s = t - self.t0
        return c0 + s * (c1 + s * (c2 + s * (c3 + s * (c4 + s * c5))))

    def vel(self, t: float) -> float:
        _, c1, c2, c3, c4, c5 = self.c
        s = t - self.t0
        return c1 + s * (2 * c2 + s * (3 * c3 + s * (4 * c4 + s * 5 * c5)))


class Spline:
    """Piecewise quintic through knots (t, p, v, a), so C2 wherever knots meet.
    Outside the knots it holds the end values; one knot is a constant."""
    __slots__ = ("first", "last", "segments")

    def __init__(self, knots: Sequence[Knot]) -> None:
        self.segments = [Quintic(a, b) for a, b in itertools.pairwise(knots)]
        self.first, self.last = knots[0], knots[-1]

    def pos(self, t: float) -> float:
        if t <= self.first[0] or not self.segments:
            return self.first[1]
        for seg in self.segments:
            if t <= seg.t1:
                return seg.pos(t)
        return self.last[1]

    def vel(self, t: float) -> float:
        if t <= self.first[0] or not self.segments:
            return self.first[2]
        for seg in self.segments:
            if t <= seg.t1:
                return seg.vel(t)
        return self.last[2]


# ------------------------------------------------------- planar poses (SE(2))

def _compose(a: Vec3, b: Vec3) -> Vec3:
    """Pose b, given in the frame of pose a, in a's parent frame."""
    c, s = math.cos(a[2]), math.sin(a[2])
    return a[0] + c * b[0] - s * b[1], a[1] + s * b[0] + c * b[1], a[2] + b[2]


def _relative(a: Vec3, b: Vec3) -> Vec3:
    """Pose b in the frame of pose a."""
    c, s = math.cos(a[2]), math.sin(a[2])
    dx, dy = b[0] - a[0], b[1] - a[1]
    return c * dx + s * dy, -s * dx + c * dy, b[2] - a[2]


def _exp(v: Vec3, T: float) -> Vec3:
    """Displacement after moving with the constant body twist v for T seconds."""
    th = v[2] * T
    if abs(th) < 1e-9:
        return v[0] * T, v[1] * T, th
    s, c1 = math.sin(th), 1.0 - math.cos(th)
    return (v[0] * s - v[1] * c1) / v[2], (v[0] * c1 + v[1] * s) / v[2], th


def _log(d: Vec3, T: float) -> Vec3:
    """The constant body twist that makes displacement d in T seconds."""
    th = d[2]
    if abs(th) < 1e-9:
        return d[0] / T, d[1] / T, th / T
    s, c1 = math.sin(th), 1.0 - math.cos(th)
    k = (th / T) / (s * s + c1 * c1)
    return k * (s * d[0] + c1 * d[1]), k * (-c1 * d[0] + s * d[1]), th / T


# --------------------------------------------------------------------- frames

@dataclass(frozen=True, slots=True)
class WalkFrame:
    left: FootPose       # sole targets in the torso frame
    right: FootPose
    support: str         # stance foot of the current step, "left"/"right"; "both" at rest
    double_support: bool  # both feet on the ground (always true at rest)
    phase: float         # 0..1 through the current step; 0 at rest
    velocity: Vec3       # executed (vx, vy, yaw rate), body frame, averaged over the tick:
                         # integrated, it gives exactly the trunk's planned motion
    trunk: tuple[float, float, float, float, float, float]  # x y z roll pitch yaw, odometry frame


@dataclass(frozen=True, slots=True)
class _Step:
    """One planned step: which foot swings, from where to where, and every spline."""
    support: int             # LEFT or RIGHT; the other foot swings
    duration: float
    lift_off: float          # end of double support (s into the step)
    closing: bool            # the last step before rest
    twist: Vec3              # executed body velocity during the step
    trunk_to: Vec3           # nominal trunk pose at the end (odometry frame)
    trunk_end_vel: Vec3      # its odometry-frame velocity there
    sway_end_vel: float
    posture_to: float
    support_pose: Vec3       # the support foot (x, y, yaw), fixed
    swing_to: Vec3           # where the swing foot lands
    trunk_x: Spline
    trunk_y: Spline
    trunk_yaw: Spline
    sway: Spline             # sideways trunk offset, toward the support foot
    posture: Spline          # 0 upright .. 1 leaning by trunk_pitch
    swing_x: Spline
    swing_y: Spline
    swing_yaw: Spline
    swing_z: Spline

    @property
    def swing(self) -> int:
        return -self.support


# --------------------------------------------------------------------- engine

class QuinticWalk:
    """The walk engine. Call `reset`, then `step(dt, (vx, vy, yaw_rate))`
    every tick; `joint_targets(frame)` turns a frame into the 12 leg joint
    angles in wire order (right leg then left leg)."""

    def __init__(self, params: WalkParams, kin: HumanoidLegKinematics) -> None:
        self.params = params
        self.kin = kin
        self.ik_clipped = False  # whether the last joint_targets had to clip a foot
        self.reset()

    # -- public

    def reset(self, standing: bool = True) -> None:
        """Start at rest in the odometry origin: feet side by side at
        foot_distance, trunk over their middle at trunk_height, stopped.

        standing=True: the trunk is upright (pitch 0), the config's stand pose
        when stand_height == trunk_height; the first step leans it forward.
        standing=False: the trunk already leans by trunk_pitch (a behaviour has
        interpolated there itself); the closing step still ends upright."""
        half = self.params.foot_distance / 2.0
        self._feet: dict[int, Vec3] = {LEFT: (0.0, half, 0.0), RIGHT: (0.0, -half, 0.0)}
        self._trunk: Vec3 = (0.0, 0.0, 0.0)      # nominal trunk at the step start
        self._trunk_vel: Vec3 = (0.0, 0.0, 0.0)  # its odometry-frame velocity there
        self._sway_vel = 0.0
        self._posture = 0.0 if standing else 1.0  # 0 upright .. 1 leaning by trunk_pitch
        self._velocity: Vec3 = (0.0, 0.0, 0.0)   # twist of the last finished step
        self._last_support = RIGHT
        self._plan: _Step | None = None
        self._t = 0.0
        self._landing_shift: tuple[float, float] = (0.0, 0.0)

    def is_stopped(self) -> bool:
        """At rest with both feet down side by side (no step planned)."""
        return self._plan is None

    def step(self, dt: float, vel_cmd: Sequence[float]) -> WalkFrame:
        """Advance by dt seconds under the commanded (vx, vy, yaw rate)."""
        cmd = self._window(vel_cmd)
        moving = any(abs(c) > MOVING_EPS for c in cmd)
        if self._plan is None:
            if not moving:
                return self._rest_frame()
            self._plan, self._t = self._plan_walk(cmd, first=True), 0.0
        # Walk through every step boundary inside this tick, weighting each
        # step's twist by the time spent in it, so that the reported velocity
        # integrates exactly to the planned displacement.
        left = max(0.0, dt)
        moved = [0.0, 0.0, 0.0]
        plan: _Step | None = self._plan
        while plan is not None:
            room = plan.duration - self._t
            if left < room:
                self._t += left
                _add(moved, plan.twist, left)
                break
            _add(moved, plan.twist, room)
            left -= room
            self._land(plan)
            if plan.closing and not moving:
                plan = None
            elif plan.closing:
                plan = self._plan_walk(cmd, first=True)
            elif moving:
                plan = self._plan_walk(cmd, first=False)
            else:
                plan = self._plan_close()
            self._plan, self._t = plan, 0.0
        velocity = (moved[0] / dt, moved[1] / dt, moved[2] / dt) if dt > 0.0 else (
            plan.twist if plan is not None else (0.0, 0.0, 0.0))
        if plan is None:
            return self._rest_frame(velocity)
        return self._frame(plan, self._t, velocity)

    def shift_landing(self, dx: float, dy: float) -> None:
        """The running step's swing foot is being put down (dx, dy) off its
        plan (odometry frame) by a balance correction: it lands there, and
        the following steps start from where it is. Each new step starts
        with no shift."""
        self._landing_shift = (dx, dy)

    def swing_progress(self) -> float:
        """0 at lift-off .. 1 at touch-down of the running step's swing foot;
        0 in double support and at rest."""
        st = self._plan
        if st is None or self._t <= st.lift_off:
            return 0.0
        return min(1.0, (self._t - st.lift_off) / (st.duration - st.lift_off))

    def joint_targets(self, frame: WalkFrame) -> np.ndarray:
        """The 12 leg joint angles, right leg then left leg, each hip yaw, hip
        roll, hip pitch, knee, ankle pitch, ankle roll. Sets `ik_clipped`."""
        q, self.ik_clipped = self.kin.inverse_legs(frame.right, frame.left)
        return q

    # -- planning

    def _window(self, vel_cmd: Sequence[float]) -> Vec3:
        """Clamp the command into the velocity window; non-finite counts as 0."""
        p = self.params
        out = []
        for i in range(3):
            v = float(vel_cmd[i])
            v = v if math.isfinite(v) else 0.0
            out.append(min(p.velocity_max[i], max(p.velocity_min[i], v)))
        return out[0], out[1], out[2]

    def _accelerate(self, cmd: Vec3, prev: Vec3) -> Vec3:
        T, amax = self.params.step_duration, self.params.acceleration_max
        v = [min(prev[i] + amax[i] * T, max(prev[i] - amax[i] * T, cmd[i])) for i in range(3)]
        return v[0], v[1], v[2]

    def _plan_walk(self, cmd: Vec3, first: bool) -> _Step:
        p = self.params
        T, fd = p.step_duration, p.foot_distance
        v = self._accelerate(cmd, (0.0, 0.0, 0.0) if first else self._velocity)
        if first:
            # Start with the outer foot when moving sideways or turning.
            side_cmd = cmd[1] if abs(cmd[1]) > MOVING_EPS else cmd[2]
            swing = LEFT if side_cmd > MOVING_EPS else RIGHT
        else:
            swing = -self._last_support
        support = -swing
        trunk_to = _compose(self._trunk, _exp(v, T))
        dx, dy, dth = v[0] * T, v[1] * T, v[2] * T
        # The outer foot carries the sideways and turning share of both feet.
        y = swing * fd / 2.0 + (dy if swing * dy > 0 else 0.0)
        yaw = dth if swing * dth > 0 else 0.0
        # Never land closer than foot_distance to the support foot (a
        # sideways speed-up would otherwise pull the inner foot in).
        sup = _relative(trunk_to, self._feet[support])
        if swing * (y - sup[1]) < fd:
            y = sup[1] + swing * fd
        swing_to = _compose(trunk_to, (dx / 2.0, y, yaw))
        c, s = math.cos(trunk_to[2]), math.sin(trunk_to[2])
        end_vel = (c * v[0] - s * v[1], s * v[0] + c * v[1], v[2])
        return self._make_step(support, v, trunk_to, end_vel, swing_to,
                               sway_end_vel=-support * self._sway_speed(), posture_to=1.0,
                               closing=False)

    def _plan_close(self) -> _Step:
        """The last step: the swing foot lands beside the support foot, the
        trunk comes to rest upright over their middle."""
        T, fd = self.params.step_duration, self.params.foot_distance
        support = self._last_support
        swing = -support
        sup = self._feet[support]
        trunk_to = _compose(sup, (0.0, swing * fd / 2.0, 0.0))
        swing_to = _compose(sup, (0.0, swing * fd, 0.0))
        twist = _log(_relative(self._trunk, trunk_to), T)
        return self._make_step(support, twist, trunk_to, (0.0, 0.0, 0.0), swing_to,
                               sway_end_vel=0.0, posture_to=0.0, closing=True)

    def _sway_speed(self) -> float:
        """Sideways trunk speed as it crosses the middle between two steps,
        that of a sine through the sway's peaks."""
        return self.params.trunk_swing * math.pi * self.params.step_frequency

    def _make_step(self, support: int, twist: Vec3, trunk_to: Vec3, trunk_end_vel: Vec3,
                   swing_to: Vec3, sway_end_vel: float, posture_to: float,
                   closing: bool) -> _Step:
        p = self.params
        T = p.step_duration
        lift_off = p.double_support_ratio * T
        apex = (lift_off + T) / 2.0
        t0, v0 = self._trunk, self._trunk_vel
        trunk = [Spline([(0.0, t0[i], v0[i], 0.0), (T, trunk_to[i], trunk_end_vel[i], 0.0)])
                 for i in range(3)]
        # Sway peaks over the support foot in the middle of single support,
        # curving like a sine there so the peak is smooth.
        amp = support * p.trunk_swing
        curve = -amp * (math.pi * p.step_frequency) ** 2
        sway = Spline([(0.0, 0.0, self._sway_vel, 0.0), (apex, amp, 0.0, curve),
                       (T, 0.0, sway_end_vel, 0.0)])
        # The swing foot waits on the ground through double support, then
        # flies with zero velocity and acceleration at lift-off and touch-down.
        start = self._feet[-support]
        swing = [Spline([(0.0, start[i], 0.0, 0.0), (lift_off, start[i], 0.0, 0.0),
                         (T, swing_to[i], 0.0, 0.0)]) for i in range(3)]
        return _Step(
            support=support, duration=T, lift_off=lift_off, closing=closing, twist=twist,
            trunk_to=trunk_to, trunk_end_vel=trunk_end_vel, sway_end_vel=sway_end_vel,
            posture_to=posture_to, support_pose=self._feet[support], swing_to=swing_to,
            trunk_x=trunk[0], trunk_y=trunk[1], trunk_yaw=trunk[2], sway=sway,
            posture=Spline([(0.0, self._posture, 0.0, 0.0), (T, posture_to, 0.0, 0.0)]),
            swing_x=swing[0], swing_y=swing[1], swing_yaw=swing[2],
            swing_z=Spline([(0.0, 0.0, 0.0, 0.0), (lift_off, 0.0, 0.0, 0.0),
                            (apex, p.foot_rise, 0.0, 0.0), (T, 0.0, 0.0, 0.0)]),
        )

    def _land(self, st: _Step) -> None:
        """The step is over: the swing foot is down and supports next."""
        dx, dy = self._landing_shift
        self._landing_shift = (0.0, 0.0)
        to = st.swing_to
        self._feet[st.swing] = (to[0] + dx, to[1] + dy, to[2])
        self._trunk, self._trunk_vel = st.trunk_to, st.trunk_end_vel
        self._sway_vel, self._posture = st.sway_end_vel, st.posture_to
        self._velocity = (0.0, 0.0, 0.0) if st.closing else st.twist
        self._last_support = st.swing

    # -- evaluation

    def _frame(self, st: _Step, t: float, velocity: Vec3) -> WalkFrame:
        p = self.params
        yaw = st.trunk_yaw.pos(t)
        sway = st.sway.pos(t)
        c, s = math.cos(yaw), math.sin(yaw)
        trunk = (st.trunk_x.pos(t) - s * sway, st.trunk_y.pos(t) + c * sway, p.trunk_height)
        pitch = p.trunk_pitch * st.posture.pos(t)
        sp = st.support_pose
        feet = {
            st.support: self._to_torso((sp[0], sp[1], 0.0), sp[2], trunk, yaw, pitch),
            st.swing: self._to_torso((st.swing_x.pos(t), st.swing_y.pos(t), st.swing_z.pos(t)),
                                     st.swing_yaw.pos(t), trunk, yaw, pitch),
        }
        return WalkFrame(
            left=feet[LEFT], right=feet[RIGHT], support=SIDE_NAME[st.support],
            double_support=t < st.lift_off, phase=t / st.duration, velocity=velocity,
            trunk=(trunk[0], trunk[1], trunk[2], 0.0, pitch, wrap_angle(yaw)))

    def _rest_frame(self, velocity: Vec3 = (0.0, 0.0, 0.0)) -> WalkFrame:
        p = self.params
        tr = self._trunk
        pitch = p.trunk_pitch * self._posture
        trunk = (tr[0], tr[1], p.trunk_height)
        left, right = self._feet[LEFT], self._feet[RIGHT]
        return WalkFrame(
            left=self._to_torso((left[0], left[1], 0.0), left[2], trunk, tr[2], pitch),
            right=self._to_torso((right[0], right[1], 0.0), right[2], trunk, tr[2], pitch),
            support="both", double_support=True, phase=0.0, velocity=velocity,
            trunk=(trunk[0], trunk[1], trunk[2], 0.0, pitch, wrap_angle(tr[2])))

    @staticmethod
    def _to_torso(foot: tuple[float, float, float], foot_yaw: float,
                  trunk: tuple[float, float, float], yaw: float, pitch: float) -> FootPose:
        """A flat foot (odometry frame) seen from a trunk turned by yaw and
        pitched by pitch: R = Ry(-pitch) Rz(-yaw), so the foot stays level."""
        cy, sy = math.cos(yaw), math.sin(yaw)
        cp, sp = math.cos(pitch), math.sin(pitch)
        dx, dy, dz = foot[0] - trunk[0], foot[1] - trunk[1], foot[2] - trunk[2]
        hx, hy = cy * dx + sy * dy, -sy * dx + cy * dy
        pos = (cp * hx - sp * dz, hy, sp * hx + cp * dz)
        cf, sf = math.cos(foot_yaw - yaw), math.sin(foot_yaw - yaw)
        rot = ((cp * cf, -cp * sf, -sp), (sf, cf, 0.0), (sp * cf, -sp * sf, cp))
        return FootPose(np.array(pos), np.array(rot))


def _add(acc: list[float], v: Vec3, seconds: float) -> None:
    for i in range(3):
        acc[i] += v[i] * seconds


