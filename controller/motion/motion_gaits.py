"""The motion gaits of mode 11 (gait ids >= 50, SPEC §12.A): what each does
beyond its contact schedule.

A motion gait's timetable, velocity window and (absent) acceleration limit
are data (gaits/quadruped/motion/*.yaml). What the reference's motion-gait
MPC adds per gait is here, as rules of its step counters (SPEC §12.A.1):

* *step*: FR swings started since the gait began (the first swing is 1);
* *leg-step(i)*: swings started by leg i;
* *toggle*: flips sign at each FR swing start (it is not reset by a new gait).

Each rule gives, for the counters now, the per-leg step heights, the per-leg
landing offsets (body axes, from the nominal foot), the body pitch (the
estimator's sense: + = nose down) and the body height, and how fast the pitch
and height follow (a first-order filter per tick, f). Everything a motion
gait does not set is the default of SPEC §12.A.1: step height 0.05 m, no
offset, pitch 0, height 0.225 m, f 0.01. The commanded rpy_des, pos_des,
step_height and the rest are ignored (only user gaits read them).

Not modelled: the mid-point swing path of 55, 63 and 67 (they swing on the
ordinary path), the per-gait WBC weights and friction (motiond's balance
has its own, one set of MPC weights for every motion gait: motion_weights),
the internal yaw rates of 52, 53 and 72 (all 0 in the reference's
parameters), and the ballet's per-robot speed calibration (0 there too).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from controller.motion.gait import GaitCommand, GaitGenerator

FIRST_MOTION_GAIT = 50
FR, FL, RR, RL = range(4)
X_SIGN = np.array([1.0, 1.0, -1.0, -1.0])     # front +1, rear -1
Y_SIGN = np.array([-1.0, 1.0, -1.0, 1.0])     # right -1, left +1
SIGNS = np.stack([X_SIGN, Y_SIGN], axis=1)    # "x s": a spread / outward offset
STEP_HEIGHT = 0.05           # m, SPEC §12.A.1
BODY_HEIGHT = 0.225          # m
PITCH_LIMIT = 0.2            # rad
FILTER = 0.01                # per tick
DEFAULT_TIMING = 56          # ids >= 50 without a case run trot in-out's timing


@dataclass
class Counters:
    step: int = 0
    leg_steps: np.ndarray = field(default_factory=lambda: np.zeros(4, dtype=np.int64))
    toggle: int = 1
    ticks: int = 0             # ticks since the gait began

    def odd(self, leg: int) -> bool:
        return bool(self.leg_steps[leg] % 2 == 1)


@dataclass
class Shape:
    """What a motion gait asks of the body and the feet now."""
    heights: np.ndarray = field(default_factory=lambda: np.full(4, STEP_HEIGHT))
    offsets: np.ndarray = field(default_factory=lambda: np.zeros((4, 2)))
    pitch: float = 0.0
    height: float = BODY_HEIGHT
    filter: float = FILTER


Rule = Callable[[Counters, float], Shape]


def _signed(x: float, y: float, legs: tuple[int, ...] = (FR, FL, RR, RL)) -> np.ndarray:
    """(x, y) times each leg's signs for the given legs, 0 for the others."""
    out = np.zeros((4, 2))
    for leg in legs:
        out[leg] = (x * X_SIGN[leg], y * Y_SIGN[leg])
    return out


def _special_pronk(c: Counters, dt: float) -> Shape:
    # Diagonal pairs alternate high / low each jump and scissor fore and aft.
    up_a = 0.025 if c.toggle > 0 else 0.0
    up_b = 0.025 if c.toggle < 0 else 0.0
    reach = c.toggle * (0.025 if c.step <= 1 else 0.05)
    heights = np.array([0.01 + up_a, 0.01 + up_b, 0.01 + up_b, 0.01 + up_a])
    offsets = np.zeros((4, 2))
    offsets[[FR, RL], 0] = reach
    offsets[[FL, RR], 0] = -reach
    return Shape(heights=heights, offsets=offsets, height=BODY_HEIGHT + 0.03)


def _special_trot(c: Counters, dt: float) -> Shape:
    heights = np.full(4, 0.005 if c.ticks * dt < 0.3 else STEP_HEIGHT)
    reaching = FR if c.step % 4 in (0, 1) else FL
    offsets = _signed(-0.03, -0.03)
    offsets[reaching] = (0.03 * X_SIGN[reaching], 0.03 * Y_SIGN[reaching])
    return Shape(heights=heights, offsets=offsets)


def _diagonal(lead: int, pair: tuple[int, int]) -> Rule:
    def rule(c: Counters, dt: float) -> Shape:
        return Shape(offsets=_signed(0.03, 0.02, pair) if c.odd(lead) else np.zeros((4, 2)))
    return rule


def _trot_in_out(c: Counters, dt: float) -> Shape:
    return Shape(offsets=_signed(0.0, -0.06) if c.step % 4 in (0, 1) else _signed(0.03, 0.02))


def _trot_pitch(c: Counters, dt: float) -> Shape:
    forward = c.step % 4 in (1, 2)
    offsets = _signed(-0.05, 0.0)
    if forward:
        offsets[[FR, FL], 0] = 0.05
    return Shape(offsets=offsets, pitch=-0.15 if forward else 0.15)


def _moonwalk(fast: tuple[int, int], slow: tuple[int, int], slow_lead: int, fast_lead: int,
              reach: float, high: float, low: float, four_step: bool) -> Rule:
    """58, 59, 74, 75: the slow pair glides back and forth (x raw) by its
    lead's parity; in 58 / 59 the quick pair also walks a four-step cycle."""
    def rule(c: Counters, dt: float) -> Shape:
        heights = np.zeros(4)
        heights[list(slow)] = high
        heights[list(fast)] = low
        offsets = np.zeros((4, 2))
        offsets[list(slow), 0] = reach if c.odd(slow_lead) else -reach
        if four_step:          # 58 / 59: the quick pair's four-step cycle
            offsets[list(fast), 0] = {1: 0.0, 2: -reach, 3: 0.0, 0: reach}[int(c.leg_steps[fast_lead] % 4)]
        return Shape(heights=heights, offsets=offsets)
    return rule


def _walk_wave(c: Counters, dt: float) -> Shape:
    return Shape(offsets=_signed(0.0, -0.05), pitch=0.15 if c.step % 2 == 1 else -0.15,
                 height=BODY_HEIGHT + 0.02)


def _front_lift_in(c: Counters, dt: float) -> Shape:
    y = 0.01 if c.step % 2 == 1 else -0.05
    return Shape(offsets=_signed(0.0, y, (FR, FL)), pitch=-0.05, height=0.235, filter=0.9)


def _front_lift_left(c: Counters, dt: float) -> Shape:
    offsets = np.zeros((4, 2))
    odd = c.step % 2 == 1
    offsets[FR, 0] = 0.02 if odd else -0.04
    offsets[FL, 0] = -0.04 if odd else 0.02
    return Shape(offsets=offsets, pitch=-0.05, height=0.235, filter=0.9)


def _lift_switch(pitch: float) -> Rule:
    def rule(c: Counters, dt: float) -> Shape:
        return Shape(offsets=_signed(0.0, -0.05), pitch=pitch, height=0.235, filter=0.9)
    return rule


def _rear_lift_in(c: Counters, dt: float) -> Shape:
    y = 0.01 if c.odd(RR) else -0.05
    return Shape(offsets=_signed(0.0, y, (RR, RL)), pitch=0.05, height=0.235, filter=0.9)


def _rear_lift_left(c: Counters, dt: float) -> Shape:
    offsets = np.zeros((4, 2))
    offsets[RR, 0] = -0.04 if c.odd(RR) else 0.02
    offsets[RL, 0] = 0.02 if c.odd(RL) else -0.04
    return Shape(offsets=offsets, pitch=0.05, height=0.235, filter=0.9)


def _ballet(c: Counters, dt: float) -> Shape:
    offsets = np.stack([-0.06 * Y_SIGN, -0.10 * Y_SIGN], axis=1)
    return Shape(heights=np.full(4, 0.010), offsets=offsets, height=BODY_HEIGHT + 0.04)


def _ballet_transition(c: Counters, dt: float) -> Shape:
    return Shape(heights=np.full(4, 0.02), offsets=_signed(0.0, -0.033))


def _pitch_down(leg: int) -> Rule:
    def rule(c: Counters, dt: float) -> Shape:
        offsets = np.zeros((4, 2))
        odd = c.odd(leg)
        if odd:
            offsets[leg, 0] = 0.06
        return Shape(offsets=offsets, pitch=0.12 if odd else -0.12, filter=0.1)
    return rule


def _pace_stride_left(c: Counters, dt: float) -> Shape:
    offsets = np.zeros((4, 2))
    offsets[:, 1] = (0.02, -0.02, 0.02, -0.02)
    return Shape(offsets=offsets)


def _plain(c: Counters, dt: float) -> Shape:
    return Shape()


RULES: dict[int, Rule] = {
    50: _special_pronk,
    51: _special_trot,
    52: _diagonal(FR, (FR, RL)),
    53: _diagonal(FL, (FL, RR)),
    55: _plain,
    56: _trot_in_out,
    57: _trot_pitch,
    58: _moonwalk(fast=(FL, RR), slow=(FR, RL), slow_lead=FR, fast_lead=FL,
                  reach=0.065, high=0.05, low=0.015, four_step=True),
    59: _moonwalk(fast=(FR, RL), slow=(FL, RR), slow_lead=FL, fast_lead=FR,
                  reach=0.065, high=0.05, low=0.015, four_step=True),
    60: _walk_wave,
    61: _front_lift_in,
    62: _front_lift_left,
    63: _lift_switch(-0.05),
    65: _rear_lift_in,
    66: _rear_lift_left,
    67: _lift_switch(0.05),
    68: _ballet,
    69: _ballet_transition,
    70: _pitch_down(FL),
    71: _pitch_down(FR),
    72: _pace_stride_left,
    73: _plain,
    74: _moonwalk(fast=(FL, RR), slow=(FR, RL), slow_lead=FR, fast_lead=FL,
                  reach=0.0325, high=0.025, low=0.0075, four_step=False),
    75: _moonwalk(fast=(FR, RL), slow=(FL, RR), slow_lead=FL, fast_lead=FR,
                  reach=0.0325, high=0.025, low=0.0075, four_step=False),
}


TIMED_RULES = frozenset({51})    # rules that read Counters.ticks as well


class MotionGaitShaper:
    """Keeps a motion gait's counters from the generator's swings and turns
    the block's command into the gait's own each tick (SPEC §12.A)."""

    def __init__(self, dt: float) -> None:
        self.dt = dt
        self.counters = Counters()
        self.gait_id: int | None = None
        self.shape = Shape()
        self.pitch = 0.0
        self.height = BODY_HEIGHT
        self._was_swinging = np.zeros(4, dtype=bool)
        self._cmd: GaitCommand | None = None

    def reset(self, pitch: float, height: float) -> None:
        """Entering mode 11: no gait yet; the body's pitch and height now."""
        self.gait_id = None
        self.pitch, self.height = pitch, height
        self._was_swinging[:] = False

    def command(self, cmd: GaitCommand) -> GaitCommand:
        """The command with this motion gait's heights, offsets, pitch and height."""
        out = self._cmd
        if out is None or out.gait is not cmd.gait or out.velocity is not cmd.velocity:
            out = self._cmd = replace(cmd, step_height=0.0, vertical_legs=False,
                                      pitch_limit=PITCH_LIMIT)
        out.leg_heights = self.shape.heights
        out.landing_offset = self.shape.offsets
        out.pitch = self.pitch
        out.height = self.height
        return out

    def after_step(self, gen: GaitGenerator) -> None:
        """Count the swings that started this tick and shape the next one."""
        gait = gen.gait
        assert gait is not None
        c = self.counters
        new_gait = gait.id != self.gait_id
        if new_gait:
            # Counters restart with a new gait; the toggle carries on.
            self.gait_id = gait.id
            c.step, c.ticks = 0, 0
            c.leg_steps[:] = 0
        c.ticks += 1
        swinging = gen.swinging[:4]
        started = swinging & ~self._was_swinging
        self._was_swinging[:] = swinging
        lifted = bool(started.any())
        if lifted:
            c.leg_steps += started
            if started[FR]:
                c.step += 1
                c.toggle = -c.toggle
        # A rule reads the counters (and 51 the time): the shape only changes
        # when a swing starts, so it is made then, not every tick.
        if new_gait or lifted or gait.id in TIMED_RULES:
            self.shape = RULES.get(gait.id, _plain)(c, self.dt)
        if lifted:
            # A swing that lifted this tick takes the height its counters give
            # (its foot is still on the ground: the bump is 0 at lift-off).
            gen.swing_apex[:4] = np.where(started, self.shape.heights, gen.swing_apex[:4])
        f = self.shape.filter
        pitch = min(max(self.shape.pitch, -PITCH_LIMIT), PITCH_LIMIT)
        self.pitch += (pitch - self.pitch) * f
        self.height += (self.shape.height - self.height) * f
