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
  the height is over the floor's surface: a foot that sinks into the floor
  under load (geometry.foot_sink, a soft rubber foot) first rises that much
  over the first 15 % of its swing, while the minimum-jerk stride has moved
  some 3 %, and sinks back over the last 15 % (csrc/gait.c), so it neither
  ploughs forward through the floor at lift-off nor lands sliding;
* a swing, once started, finishes on its own timing, so a gait switch never
  leaves a foot hanging in the air or drops one from a height.

Gait changes wait for a cycle boundary of the current timing (any tick in a
stand) where the current velocity already fits the new gait's window; until
then the velocity target is clamped into both windows, so the robot slows to
a speed the new gait can carry. A stand is only entered below leave_speed.
All timing is in whole ticks.
"""
from __future__ import annotations

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
    # Motion gaits (SPEC §12.A): their own pitch bound instead of the config's.
    pitch_limit: float | None = None
    height_range: tuple[float, float] | None = None   # None: the locomotion's height_range


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
        # feedback[0:2] more, level frame, from the velocity error; a swing
        # foot rises by -feedback[2], the body's height error (0 but in the
        # motion and user gaits that lift every foot at once).
        self.feedback = np.zeros(3)
        self.swing_apex = np.zeros(legs)       # each swing keeps the apex it lifted with
        self.apex_floor = 0.0                  # the least apex of a step (terrain adaptation, m)
        self.height = params.body_height
        self.pitch = 0.0
        self.gait: GaitDefinition | None = None    # the gait in force (reported)
        self.timing: GaitDefinition | None = None  # whose contact table runs
        self.phase = 0                              # ticks into the timing's cycle
        self.boundary = True                        # this tick starts a cycle
        # Motion gaits (SPEC §12.A.1): they may be left at any tick with every
        # foot down (free_switch), and while one stops no foot lifts (hold_down).
        self.free_switch = False
        self.hold_down = False
        self.switches = 0
        self._half_cache: dict[int, tuple[GaitDefinition, np.ndarray]] = {}
        self._windows: dict[tuple[int, int], tuple] = {}
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
        """Advance one tick; return the feet (legs, 3) in the body frame.
        The arithmetic is csrc/gait.c's: the target velocity (mk_gait_target),
        then its stride limit, the rate limits and the legs (mk_gait_step);
        the gait's timetable and switches are kept here."""
        assert self.gait is not None and self.timing is not None
        self._advance_phase()
        target = self._target(cmd)
        self._maybe_switch(cmd.gait, target)
        self._body_pose(cmd)
        return self._legs()

    def _advance_phase(self) -> None:
        self.phase += 1
        self.boundary = self.phase >= self.cycle_ticks
        if self.boundary:
            self.phase = 0

    def _maybe_switch(self, wanted: GaitDefinition, target: np.ndarray) -> None:
        assert self.gait is not None
        in_stand = self.gait.stand
        if not (self.boundary or in_stand or self.free_switch and not self.airborne().any()):
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
        half = self._half_cache.get(timing.id)
        if half is None or half[0] is not timing:
            half = (timing, 0.5 * timing.stance_segments() * self.segment_ticks * self.dt)
            self._half_cache[timing.id] = half
        return half[1]

    def _stride_ratio(self, timing: GaitDefinition, v: np.ndarray) -> float:
        """How far the feet would travel in half a stance at velocity v, as a
        share of the reachable half-stride ellipse (1 = at its edge)."""
        buf = self._in
        buf["probe_half"][:] = self._half_stance(timing)
        buf["probe"][:] = v
        return float(lib.mk_gait_stride_ratio(self._native, *self._probe))

    def _target(self, cmd: GaitCommand) -> np.ndarray:
        """The commanded velocity inside the gait's window (SPEC §6.4), with the
        cross-coupling: at full |vx| the vy and yaw allowances are halved."""
        g = self._native
        window = self._window(cmd.gait)
        g.zero_target = window[0]
        g.lo, g.hi = window[1], window[2]
        self._in["cmd"][:] = cmd.velocity
        lib.mk_gait_target(g)
        return self._in["target"]

    def _window(self, wanted: GaitDefinition) -> tuple[bool, object, object]:
        """The window the target is clamped into (zero target?, lo, hi), for
        the gait in force and the one commanded; made once per pair."""
        gait = self.gait
        assert gait is not None
        key = (id(gait), id(wanted))
        hit = self._windows.get(key)
        if hit is not None and hit[0] is gait and hit[1] is wanted:
            return hit[2]
        pending = wanted is not gait
        zero = gait.stand and not pending or pending and wanted.stand
        lo, hi = gait.window_min.copy(), gait.window_max.copy()
        if pending:
            lo, hi = np.maximum(lo, wanted.window_min), np.minimum(hi, wanted.window_max)
        if gait.stand:  # starting to step: the new gait's window
            lo, hi = wanted.window_min.copy(), wanted.window_max.copy()
        lo, hi = np.ascontiguousarray(lo, dtype=float), np.ascontiguousarray(hi, dtype=float)
        window = (bool(zero), double_ptr(lo), double_ptr(hi))
        if len(self._windows) > 64:            # user gaits replaced many times
            self._windows.clear()
        self._windows[key] = (gait, wanted, window, lo, hi)   # lo, hi kept alive for C
        return window

    def _body_pose(self, cmd: GaitCommand) -> None:
        p = self.params
        height = p.vertical_leg_height if cmd.vertical_legs else \
            cmd.height if cmd.height is not None else p.body_height
        height = _clamp(height, *(cmd.height_range or p.height_range))
        step = HEIGHT_RATE * self.dt
        self.height += _clamp(height - self.height, -step, step)
        limit = p.pitch_limit if cmd.pitch_limit is None else cmd.pitch_limit
        pitch = _clamp(cmd.pitch, -limit, limit)
        step = PITCH_RATE * self.dt
        self.pitch += _clamp(pitch - self.pitch, -step, step)
        assert self.gait is not None
        if self.gait.stand:
            self.apex[:] = 0.0
        elif cmd.leg_heights is not None:
            self.apex[:] = np.clip(cmd.leg_heights, 0.0, 0.06 * cmd.gait.step_ratio)
        else:
            self.apex[:] = cmd.gait.step_height(cmd.step_height)
        if self.apex_floor > 0.0 and not self.gait.stand:
            np.maximum(self.apex, self.apex_floor, out=self.apex)
        self.landing_offset = cmd.landing_offset

    def _native_legs(self, params: LocomotionConfig) -> None:
        """The buffers csrc/gait.c reads and writes (the generator's own state
        arrays among them), made once."""
        legs = self.legs
        self._in = {"nominal": self.nominal, "half": np.zeros(legs), "offset": np.zeros((legs, 2)),
                    "apex": self.apex, "feet": self.feet, "lift": self.lift,
                    "landing": self.landing, "swing_apex": self.swing_apex, "out": np.zeros((legs, 3)),
                    "cmd": np.zeros(3), "target": np.zeros(3), "feedback": self.feedback, "v": self.v,
                    "probe": np.zeros(3), "probe_half": np.zeros(legs)}
        ptr = {name: double_ptr(a) for name, a in self._in.items()}
        self._probe = (ptr.pop("probe_half"), ptr.pop("probe"))
        ptr["swinging"] = ffi.cast("uint8_t *", ffi.from_buffer(self.swinging))
        ptr["swing_tick"] = ffi.cast("int64_t *", ffi.from_buffer(self.swing_tick))
        ptr["swing_ticks"] = ffi.cast("int64_t *", ffi.from_buffer(self.swing_ticks))
        rx, ry = params.half_stride
        self._native = ffi.new("mk_gait *", {
            "legs": legs, "dt": self.dt, "rx": rx, "ry": ry, "min_swing_share": MIN_SWING_SHARE,
            "foot_radius": self.kin.foot_radius, "sink": self.kin.sink, "cross_coupling": CROSS_COUPLING,
            "segment_ticks": self.segment_ticks, **ptr})
        self._accel_of: GaitDefinition | None = None
        self._table_of: tuple[GaitDefinition, np.ndarray, np.ndarray, np.ndarray] | None = None

    def _legs(self) -> np.ndarray:
        """The target's stride and rate limits and every leg one tick, by the
        timing's timetable (csrc/gait.c); return the feet (legs, 3) in the
        pitched body frame."""
        timing, gait = self.timing, self.gait
        assert timing is not None and gait is not None
        g, buf = self._native, self._in
        if self._table_of is None or self._table_of[0] is not timing:
            tables = (np.ascontiguousarray(timing.contact, dtype=np.uint8),
                      np.ascontiguousarray(timing.run_start, dtype=np.int64),
                      np.ascontiguousarray(timing.run_length, dtype=np.int64))
            g.contact = ffi.cast("uint8_t *", ffi.from_buffer(tables[0]))
            g.run_start, g.run_length = (ffi.cast("int64_t *", ffi.from_buffer(t)) for t in tables[1:])
            buf["half"][:] = self._half_stance(timing)
            g.timing_stand = timing.stand
            g.length, g.width = timing.length, timing.width
            self._table_of = (timing, *tables)       # kept alive while C reads them
        g.phase = self.phase
        if gait is not self._accel_of:
            acc = gait.accel
            g.ax_up, g.ax_down, g.ay, g.ayaw = acc.x_up, acc.x_down, acc.y, acc.yaw
            self._accel_of = gait
        g.height, g.pitch = self.height, self.pitch
        g.has_offset = self.landing_offset is not None
        g.hold_down = self.hold_down
        if self.landing_offset is not None:
            buf["offset"][:] = self.landing_offset
        lib.mk_gait_step(g)
        return buf["out"].copy()
