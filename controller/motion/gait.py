"""The open-loop gait generator of mode 11 (SPEC §6.4).

Each tick it turns the commanded body velocity, step height and pitch into
foot positions in the body frame:

* the commanded velocity is clamped to the gait's window (with a simple
  cross-coupling: at full forward speed the lateral and yaw allowances are
  halved) and rate-limited by the gait's acceleration limits; the limited
  velocity is what the body does, so it is also what odometry integrates;
* a leg in stance keeps its foot fixed in the world, so in the body frame the
  foot moves against the body's velocity and yaw rate;
* a leg in swing moves from where it lifted off to a Raibert-style landing
  point (the nominal foot plus half a stance's travel at the current
  velocity), horizontally on a minimum-jerk profile and vertically on a bump
  of height step_height; both have zero velocity at lift-off and touch-down;
* a swing, once started, finishes on its own timing, so a gait switch never
  leaves a foot hanging in the air or drops one from a height.

Gait changes wait for a cycle boundary of the current timing (any tick in a
stand) where the current velocity already fits the new gait's window; until
then the velocity target is clamped into both windows, so the robot slows to
a speed the new gait can carry. A stand is only entered below leave_speed.
All timing is in whole ticks.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from controller.motion.gait_table import SEGMENT_MS, GaitDefinition
from controller.robot.config import LocomotionConfig
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.native import double_ptr, ffi, lib

CROSS_COUPLING = 0.5        # at full |vx| the vy and yaw allowances shrink by half
PITCH_RATE = 0.5            # rad/s: a new pitch command is approached smoothly
HEIGHT_RATE = 0.1           # m/s: body height changes (vertical-leg bit, entry)
MIN_SWING_SHARE = 0.5       # a late-starting swing keeps at least this share of its run


def _clamp(x: float, lo: float, hi: float) -> float:
    """Scalar clip (np.clip costs microseconds on a scalar; this runs every tick)."""
    return lo if x < lo else min(x, hi)


@dataclass
class GaitCommand:
    """What the active block asks of the generator this tick."""
    gait: GaitDefinition
    velocity: np.ndarray       # (3,) vx, vy, yaw rate
    step_height: float         # commanded step_height[0], m
    pitch: float               # rpy_des[1], rad
    vertical_legs: bool = False  # value bit1: body pinned low, no lateral offsets
    # User gaits (SPEC §8.4): per-leg swing heights, landing offsets (legs, 2)
    # from the nominal foot, and a body height; None = the gait's own rule.
    leg_heights: np.ndarray | None = None
    landing_offset: np.ndarray | None = None
    height: float | None = None


class GaitGenerator:
    def __init__(self, kin: QuadrupedKinematics, params: LocomotionConfig, dt: float,
                 gaits: Mapping[int, GaitDefinition]) -> None:
        self.kin = kin
        self.gaits = gaits
        self.params = params
        self.dt = dt
        self.segment_ticks = max(1, round(SEGMENT_MS / 1000.0 / dt))
        legs = len(kin.hip)
        self.legs = legs
        self.nominal = kin.stance_feet(params.body_height, params.com_x)[:, :2].copy()
        self.v = np.zeros(3)
        self.feet = np.zeros((legs, 2))        # foot xy in the level, yaw-aligned body frame
        self.swinging = np.zeros(legs, dtype=bool)
        self.swing_tick = np.zeros(legs, dtype=np.int64)
        self.swing_ticks = np.ones(legs, dtype=np.int64)
        self.lift = np.zeros((legs, 2))
        self.landing = np.zeros((legs, 2))
        self.apex = np.zeros(legs)             # step height for swings starting now
        self.landing_offset: np.ndarray | None = None
        # Closed loop (controller/motion/balance.py): every landing moves by
        # this much more, level frame, from the velocity error.
        self.feedback = np.zeros(2)
        self.swing_apex = np.zeros(legs)       # each swing keeps the apex it lifted with
        self.height = params.body_height
        self.pitch = 0.0
        self.gait: GaitDefinition | None = None    # the gait in force (reported)
        self.timing: GaitDefinition | None = None  # whose contact table runs
        self.phase = 0                              # ticks into the timing's cycle
        self.boundary = True                        # this tick starts a cycle
        self.switches = 0
        self._half_cache: dict[int, tuple[GaitDefinition, np.ndarray, list[float]]] = {}
        self._nominal = [tuple(row) for row in self.nominal.tolist()]
        self._native_legs(params)

    # -- setup ---------------------------------------------------------------
    def start(self, q: np.ndarray, gait: GaitDefinition) -> None:
        """Begin from joint positions q (legs, 3): feet where they are, at rest."""
        p = self.kin.forward(q)
        self.feet[:] = p[:, :2]
        self.height = _clamp(self.kin.height_over(p[:, 2]),
                             0.5 * self.params.height_range[0], self.params.height_range[1])
        self.v[:] = 0.0
        self.pitch = 0.0
        self.swinging[:] = False
        self.gait = self.timing = gait
        self.phase = 0
        self.boundary = True

    @property
    def cycle_ticks(self) -> int:
        assert self.timing is not None
        return self.timing.segments * self.segment_ticks

    def airborne(self) -> np.ndarray:
        """Legs whose foot is off the ground right now."""
        return self.swinging & (self.swing_tick > 0) & (self.swing_tick < self.swing_ticks)

    def speed(self) -> float:
        return float(np.hypot(self.v[0], self.v[1]))

    # -- one tick ---------------------------------------------------------------
    def step(self, cmd: GaitCommand) -> np.ndarray:
        """Advance one tick; return the feet (legs, 3) in the body frame."""
        assert self.gait is not None and self.timing is not None
        self._advance_phase()
        target = self._target(cmd)
        self._maybe_switch(cmd.gait, target)
        schedule = self._schedule()
        self._accelerate(self._stride_limited(target, schedule))
        self._body_pose(cmd)
        return self._legs(schedule)

    def _schedule(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per leg from the timetable: stance now?, ticks into the current
        stance/swing run, and that run's length in ticks."""
        timing = self.timing
        assert timing is not None
        seg_t = self.segment_ticks
        segment = self.phase // seg_t
        elapsed = timing.run_start[segment] * seg_t + self.phase % seg_t
        return timing.contact[segment], elapsed, timing.run_length[segment] * seg_t

    def _advance_phase(self) -> None:
        self.phase += 1
        self.boundary = self.phase >= self.cycle_ticks
        if self.boundary:
            self.phase = 0

    def _maybe_switch(self, wanted: GaitDefinition, target: np.ndarray) -> None:
        assert self.gait is not None
        in_stand = self.gait.stand
        if not (self.boundary or in_stand):
            return
        if wanted is not self.gait:
            ok = self.speed() <= self.params.leave_speed and abs(self.v[2]) <= 0.5 \
                if wanted.stand else wanted.inside_window(self.v)
            # A stand starts only with every foot down once this tick's landings are done.
            landing_now = self.swinging & (self.swing_tick + 1 >= self.swing_ticks)
            if ok and not (wanted.stand and (self.airborne() & ~landing_now).any()):
                self.gait = wanted
                self.switches += 1
                if in_stand:
                    self.phase = 0
        timing = self._timing_for(self.gait, np.maximum(np.abs(self.v), np.abs(target)))
        if timing is not self.timing:
            self.timing = timing
            self.phase = 0

    def _timing_for(self, gait: GaitDefinition, speed: np.ndarray) -> GaitDefinition:
        """The contact table to run: an auto-switch gait takes the slowest
        timing whose window and stride can carry `speed` (per-axis magnitudes)."""
        if not gait.auto:
            return gait
        for gait_id in gait.auto:
            g = self.gaits[gait_id]
            fits = np.all(speed <= np.minimum(-g.window_min, g.window_max) + 1e-9)
            if fits and self._stride_ratio(g, speed) <= 1.0:
                return g
        return self.gaits[gait.auto[-1]]

    def _half_stance(self, timing: GaitDefinition) -> np.ndarray:
        """Per leg, half the stance time in seconds (cached per timing)."""
        return self._half_of(timing)[1]

    def _half_of(self, timing: GaitDefinition) -> tuple[GaitDefinition, np.ndarray, list[float]]:
        half = self._half_cache.get(timing.id)
        if half is None or half[0] is not timing:
            seconds = 0.5 * timing.stance_segments() * self.segment_ticks * self.dt
            half = (timing, seconds, seconds.tolist())
            self._half_cache[timing.id] = half
        return half

    def _stride_ratio(self, timing: GaitDefinition, v: np.ndarray) -> float:
        """How far the feet would travel in half a stance at velocity v, as a
        share of the reachable half-stride ellipse (1 = at its edge). Plain
        floats: a few legs, several times a tick."""
        half = self._half_of(timing)[2]
        rx, ry = self.params.half_stride
        vx, vy, wz = float(v[0]), float(v[1]), float(v[2])
        most = 0.0
        for (nx, ny), h in zip(self._nominal, half):
            dx = (vx - wz * ny) * (h / rx)
            dy = (vy + wz * nx) * (h / ry)
            most = max(most, dx * dx + dy * dy)
        return math.sqrt(most)

    def _target(self, cmd: GaitCommand) -> np.ndarray:
        """The commanded velocity inside the gait's window (SPEC §6.4), with the
        cross-coupling: at full |vx| the vy and yaw allowances are halved."""
        assert self.gait is not None
        gait = self.gait
        pending = cmd.gait is not gait
        if gait.stand and not pending or pending and cmd.gait.stand:
            return np.zeros(3)
        lo, hi = gait.window_min.copy(), gait.window_max.copy()
        if pending:
            lo, hi = np.maximum(lo, cmd.gait.window_min), np.minimum(hi, cmd.gait.window_max)
        if gait.stand:  # starting to step: the new gait's window
            lo, hi = cmd.gait.window_min, cmd.gait.window_max
        target = np.minimum(np.maximum(cmd.velocity, lo), hi)     # np.clip, without its wrapper
        x_max = max(-lo[0], hi[0], 1e-9)
        share = 1.0 - CROSS_COUPLING * min(1.0, abs(target[0]) / x_max)
        side = target[1:]
        np.maximum(side, lo[1:] * share, out=side)
        np.minimum(side, hi[1:] * share, out=side)
        return target

    def _stride_limited(self, target: np.ndarray,
                        schedule: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
        """Scale the target down so no stance foot travels beyond the reachable
        half-stride: in steady state with the timing in force, and for each
        foot now on the ground until its lift-off (open loop cannot step faster)."""
        assert self.timing is not None
        if self.timing.stand:
            return target
        ratio = self._stride_ratio(self.timing, target)
        if ratio > 1.0:
            target = target / ratio
        stance_now, elapsed, run_len = schedule
        down = (~self.swinging & stance_now).tolist()
        if not any(down):
            return target
        # Foot path until lift-off: p - s * u * tau for a velocity scale s;
        # in units of the ellipse, find the largest s that stays inside
        # (a quadratic in s per foot). Plain floats: four legs, every tick.
        rx, ry = self.params.half_stride
        tx, ty, tw = float(target[0]), float(target[1]), float(target[2])
        dt = self.dt
        scale = 1.0
        length, width = self.timing.length, self.timing.width
        for leg, (px, py), (nx, ny), left in zip(range(self.legs), self.feet.tolist(),
                                                 self._nominal, (run_len - elapsed).tolist()):
            if not down[leg]:
                continue
            tau = left * dt
            wx, wy = (tx - tw * py) * tau / rx, (ty + tw * px) * tau / ry
            dx, dy = (px - nx * length) / rx, (py - ny * width) / ry
            a = wx * wx + wy * wy
            b = dx * wx + dy * wy
            c = dx * dx + dy * dy - 1.0
            if c > 0.0:          # already outside: allow only motion back inward
                s = 0.0 if b > 0.0 else 1.0
            elif a > 1e-12:
                s = (b + math.sqrt(max(b * b - a * c, 0.0))) / a
            else:
                s = 1.0
            scale = min(scale, s)
        return target * _clamp(scale, 0.0, 1.0)

    def _accelerate(self, target: np.ndarray) -> None:
        """Rate-limit the body velocity toward target (the gait's accelerations)."""
        assert self.gait is not None
        acc = self.gait.accel
        dt = self.dt
        vx, vy, wz = float(self.v[0]), float(self.v[1]), float(self.v[2])
        tx, ty, tw = float(target[0]), float(target[1]), float(target[2])
        growing = abs(tx) > abs(vx) and tx * vx >= 0
        ax = (acc.x_up if growing else acc.x_down) * dt
        self.v[0] = vx + _clamp(tx - vx, -ax, ax)
        self.v[1] = vy + _clamp(ty - vy, -acc.y * dt, acc.y * dt)
        self.v[2] = wz + _clamp(tw - wz, -acc.yaw * dt, acc.yaw * dt)

    def _body_pose(self, cmd: GaitCommand) -> None:
        p = self.params
        height = p.vertical_leg_height if cmd.vertical_legs else \
            cmd.height if cmd.height is not None else p.body_height
        height = _clamp(height, *p.height_range)
        step = HEIGHT_RATE * self.dt
        self.height += _clamp(height - self.height, -step, step)
        pitch = _clamp(cmd.pitch, -p.pitch_limit, p.pitch_limit)
        step = PITCH_RATE * self.dt
        self.pitch += _clamp(pitch - self.pitch, -step, step)
        assert self.gait is not None
        if self.gait.stand:
            self.apex[:] = 0.0
        elif cmd.leg_heights is not None:
            self.apex[:] = np.clip(cmd.leg_heights, 0.0, 0.06 * cmd.gait.step_ratio)
        else:
            self.apex[:] = cmd.gait.step_height(cmd.step_height)
        self.landing_offset = cmd.landing_offset

    def _native_legs(self, params: LocomotionConfig) -> None:
        """The buffers csrc/gait.c's mk_gait_legs reads and writes (the
        generator's own state arrays among them), made once."""
        legs = self.legs
        self._in = {"nominal": self.nominal, "half": np.zeros(legs), "offset": np.zeros((legs, 2)),
                    "apex": self.apex, "stance_now": np.zeros(legs), "run_start": np.zeros(legs),
                    "run_len": np.zeros(legs), "feet": self.feet, "lift": self.lift,
                    "landing": self.landing, "swing_apex": self.swing_apex, "out": np.zeros((legs, 3))}
        ptr = {name: double_ptr(a) for name, a in self._in.items()}
        ptr["swinging"] = ffi.cast("uint8_t *", ffi.from_buffer(self.swinging))
        ptr["swing_tick"] = ffi.cast("int64_t *", ffi.from_buffer(self.swing_tick))
        ptr["swing_ticks"] = ffi.cast("int64_t *", ffi.from_buffer(self.swing_ticks))
        rx, ry = params.half_stride
        self._native = ffi.new("mk_gait *", {
            "legs": legs, "dt": self.dt, "rx": rx, "ry": ry, "min_swing_share": MIN_SWING_SHARE,
            "foot_radius": self.kin.foot_radius, **ptr})

    def _legs(self, schedule: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
        """Advance every leg one tick (csrc/gait.c); return the feet (legs, 3)
        in the pitched body frame."""
        timing = self.timing
        assert timing is not None
        g, buf = self._native, self._in
        stance_now, run_start, run_len = schedule
        buf["stance_now"][:] = stance_now
        buf["run_start"][:] = run_start
        buf["run_len"][:] = run_len
        buf["half"][:] = self._half_stance(timing)
        g.length, g.width = timing.length, timing.width
        g.vx, g.vy, g.wz = self.v.tolist()
        g.fbx, g.fby = self.feedback.tolist()
        g.height, g.pitch = self.height, self.pitch
        g.has_offset = self.landing_offset is not None
        if self.landing_offset is not None:
            buf["offset"][:] = self.landing_offset
        lib.mk_gait_legs(g)
        return buf["out"].copy()
