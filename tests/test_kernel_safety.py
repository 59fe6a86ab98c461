"""Output safety of the C kernel (csrc/kernel.c), whatever it is asked to do.

For every call of mk_step, on every joint:

* every output (position, velocity, kp, kd, torque) is finite;
* the position is inside [q_min, q_max];
* |velocity| <= v_max;
* the position moved by at most step_max since the previous call (the
  kernel reads its previous output from the `pos` buffer).

The inputs are stepped set points, seeded random segments and gains, named
adversarial cases (huge jumps, NaN/Inf anywhere in a segment, zero, negative
and denormal durations, times far before and after the segment, a target
that alternates every tick, huge velocities, unknown profiles) and
hypothesis-generated segments, each run for many ticks. The limits are the
ones the controller configures for each shipped robot (step_max = v_max x
one tick), plus random ones.

`Kernel.track` (limp states: OFF, the passive damper, motor_ctrl lost) sets
the `pos` buffer to the measured angles and so moves the step limit's
reference on purpose; it is not used here.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from shipped_configs import robot_configs

from controller.core.controller import Controller
from controller.robot.config import ConfigError, load_config
from controller.robot.native import CUBIC, LINEAR, QUINTIC, Kernel

ROOT = Path(__file__).resolve().parent.parent
SEGMENT = ("t0", "dur", "q0", "q1", "v0", "v1")
GAIN = ("g_t0", "g_dur", "kp0", "kp1", "kd0", "kd1", "tau_ff")
NASTY = (np.nan, np.inf, -np.inf, 1e300, -1e300, 1e-320, -1e-320, 0.0, -0.0,
         np.finfo(np.float64).max, -np.finfo(np.float64).max)
TICKS = 1500


@pytest.fixture(scope="module", params=robot_configs(), ids=lambda p: p.name)
def configured(request: pytest.FixtureRequest) -> Kernel:
    """The kernel exactly as the controller configures it for a shipped robot."""
    return Controller(load_config(request.param)).kernel


def fresh(k: Kernel) -> Kernel:
    """A new kernel with `k`'s limits (so a test starts from untouched buffers)."""
    return Kernel(k.q_min.copy(), k.q_max.copy(), k.v_max.copy(), step_max=k.step_max.copy())


class Checker:
    """Steps a kernel and checks the four properties after every call."""

    def __init__(self, k: Kernel) -> None:
        self.k = k
        self.prev: np.ndarray | None = None
        self.calls = 0
        self.max_move = np.zeros(k.n)      # largest |pos - prev| seen, per joint
        self.lowest = np.full(k.n, np.inf)     # range of positions seen, per joint
        self.highest = np.full(k.n, -np.inf)

    def step(self, t: float) -> None:
        k = self.k
        before = k.pos.copy()
        k.step(t)
        where = f"call {self.calls} at t={t!r}"
        for name in ("pos", "vel", "kp", "kd", "tau"):
            value = getattr(k, name)
            assert np.isfinite(value).all(), f"{name} not finite, {where}: {value}"
        assert (k.pos >= k.q_min).all() and (k.pos <= k.q_max).all(), \
            f"position outside the limits, {where}: {k.pos}"
        assert (np.abs(k.vel) <= k.v_max).all(), f"velocity above v_max, {where}: {k.vel}"
        assert (k.kp >= 0).all() and (k.kd >= 0).all(), f"negative gain, {where}"
        if self.prev is not None:
            # The kernel's reference is the buffer it read: the previous output.
            np.testing.assert_array_equal(before, self.prev)
            move = np.abs(k.pos - self.prev)
            limited = k.step_max > 0
            assert (move[limited] <= k.step_max[limited] + 1e-12).all(), \
                f"moved {move} > step_max {k.step_max}, {where}"
            self.max_move = np.maximum(self.max_move, move)
        self.prev = k.pos.copy()
        self.lowest = np.minimum(self.lowest, k.pos)
        self.highest = np.maximum(self.highest, k.pos)
        self.calls += 1

    def run(self, ticks: int, dt: float, before: Callable[[int, float], None] | None = None,
            t0: float = 0.0) -> None:
        for i in range(ticks):
            t = t0 + i * dt
            if before is not None:
                before(i, t)
            self.step(t)


# -- the configured limits -----------------------------------------------------------

@pytest.mark.parametrize("path", robot_configs(), ids=lambda p: p.name)
def test_every_shipped_joint_has_a_step_limit(path: Path) -> None:
    """step_max <= 0 means "no limit" in the kernel: no shipped joint may have it."""
    cfg = load_config(path)
    k = Controller(cfg).kernel
    assert k.n == cfg.num_joints
    assert np.isfinite(k.step_max).all() and (k.step_max > 0).all(), \
        f"{path.name}: joints without a step limit: " \
        f"{[cfg.joint_names[i] for i in np.flatnonzero(~(k.step_max > 0))]}"
    # The documented rule (README): velocity limit x one tick.
    np.testing.assert_allclose(k.step_max, cfg.v_max * cfg.dt)
    assert (k.v_max > 0).all() and (k.q_min < k.q_max).all()


@pytest.mark.parametrize("limit", [0.0, -5.0])
def test_a_quadruped_velocity_limit_that_would_switch_the_step_limit_off_is_refused(
        tmp_path: Path, limit: float) -> None:
    data = yaml.safe_load((ROOT / "config" / "cyberdog2.yaml").read_text())
    data["joint_velocity_limit"] = [limit, 30.0, 30.0]
    # Relative paths (fsm, gaits, user gaits, scripts) must still resolve: write beside the original.
    data["fsm"] = str(ROOT / "config" / data["fsm"])
    for section, key in (("locomotion", "gaits"), ("locomotion", "user_gaits"), ("motions", "directory")):
        data[section][key] = str((ROOT / "config" / data[section][key]).resolve())
    for key in ("directories", "trajectories"):
        if key in data["scripts"]:
            data["scripts"][key] = [str((ROOT / "config" / d).resolve()) for d in data["scripts"][key]]
    path = tmp_path / "dog.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"joint_velocity_limit: each must be in \[0.1, 100\]"):
        load_config(path)
    data["joint_velocity_limit"] = [12.0, 30.0, 30.0]     # the same file with a valid limit loads
    path.write_text(yaml.safe_dump(data))
    assert load_config(path).v_max[0] == 12.0


# -- stepped, random, adversarial ---------------------------------------------------------

def test_stepped_set_points_far_outside_the_limits_slew_at_the_step_limit(configured: Kernel) -> None:
    k = fresh(configured)
    c = Checker(k)
    span = k.q_max - k.q_min
    phase = int(np.ceil(np.max(span / k.step_max))) + 20    # time to cross the widest range

    def jump(i: int, t: float) -> None:
        if i % phase == 0:   # alternate far above and far below, as set points and as segments
            far = k.q_max + 10 * span if (i // phase) % 2 == 0 else k.q_min - 10 * span
            k.move(k.pos.copy(), far, t, 0.0 if (i // (2 * phase)) % 2 == 0 else 0.004, LINEAR)

    c.run(4 * phase, 0.002, jump)
    # Not vacuous: the joints did move, by exactly the step limit while slewing,
    # and reached both ends of their range.
    np.testing.assert_allclose(c.max_move, k.step_max, rtol=1e-9)
    np.testing.assert_array_equal(c.lowest, k.q_min)
    np.testing.assert_array_equal(c.highest, k.q_max)


def test_a_target_alternating_every_tick_never_jumps(configured: Kernel) -> None:
    k = fresh(configured)
    c = Checker(k)
    low, high = k.q_min - 1.0, k.q_max + 1.0

    def flip(i: int, t: float) -> None:
        k.move(high if i % 2 else low, low if i % 2 else high, t, 0.0, [LINEAR, CUBIC, QUINTIC][i % 3])

    c.run(TICKS, 0.002, flip)
    assert (c.max_move > 0).all()


@pytest.mark.parametrize("seed", range(4))
def test_random_segments_and_gains(configured: Kernel, seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = fresh(configured)
    n = k.n
    c = Checker(k)

    def value(size: int) -> np.ndarray:
        kind = rng.integers(0, 4)
        if kind == 0:
            return rng.normal(0.0, 3.0, size)
        if kind == 1:
            return rng.choice(NASTY, size)
        if kind == 2:
            return rng.uniform(-1e6, 1e6, size)
        return np.where(rng.random(size) < 0.3, rng.choice(NASTY, size), rng.normal(0, 1, size))

    def scramble(i: int, t: float) -> None:
        if rng.random() < 0.3:
            idx = rng.random(n) < 0.5
            for name in SEGMENT + GAIN:
                getattr(k, name)[idx] = value(int(idx.sum()))
            k.profile[idx] = rng.integers(-3, 6, int(idx.sum()))   # unknown profiles too

    c.run(TICKS, 0.002, scramble)
    assert (c.max_move > 0).any()


def adversarial_cases() -> dict[str, Callable[[Kernel, float], None]]:
    """Name -> a function writing the case's segment at time t."""
    def seg(**fields: float) -> Callable[[Kernel, float], None]:
        def write(k: Kernel, t: float) -> None:
            k.move(k.q_min, k.q_max, t, 0.5, LINEAR)   # a sane segment, then the poison
            for name, value in fields.items():
                getattr(k, name)[:] = value
        return write

    return {
        "huge jump, set point": seg(q1=1e12, dur=0.0),
        "huge jump, segment": seg(q0=-1e12, q1=1e12, dur=0.002),
        "nan end": seg(q1=np.nan),
        "nan start and end": seg(q0=np.nan, q1=np.nan),
        "inf end": seg(q1=np.inf),
        "-inf start": seg(q0=-np.inf),
        "nan start time": seg(t0=np.nan),
        "nan duration": seg(dur=np.nan),
        "inf duration": seg(dur=np.inf),
        "zero duration": seg(dur=0.0),
        "negative duration": seg(dur=-1.0),
        "denormal duration": seg(dur=1e-320),
        "start far after now": seg(t0=1e9),
        "start far before now": seg(t0=-1e9),
        "huge set-point velocity": seg(dur=0.0, v1=1e300),
        "inf set-point velocity": seg(dur=0.0, v1=-np.inf),
        "huge cubic tangents": seg(profile=CUBIC, v0=1e300, v1=-1e300),
        "nan cubic tangent": seg(profile=CUBIC, v0=np.nan),
        "quintic over 1 ns": seg(profile=QUINTIC, dur=1e-9),
        "unknown profile": seg(profile=99),
        "negative profile": seg(profile=-7),
        "nan gains": seg(kp0=np.nan, kp1=np.nan, kd0=np.inf, kd1=-np.inf, tau_ff=np.nan),
        "negative gains": seg(kp0=-5.0, kp1=-5.0, kd0=-1.0, kd1=-1.0),
        "nan gain ramp": seg(g_t0=np.nan, g_dur=np.nan, kp0=0.0, kp1=1e300),
    }


@pytest.mark.parametrize("case", sorted(adversarial_cases()))
def test_adversarial_segments(configured: Kernel, case: str) -> None:
    write = adversarial_cases()[case]
    k = fresh(configured)
    c = Checker(k)
    c.run(200, 0.002)                      # settle at the start position first
    write(k, 0.4)
    c.run(400, 0.002, t0=0.4)             # the poisoned segment, tick by tick
    for t in (-1e12, 1e12, np.nan, np.inf, -np.inf, 0.0):   # and at absurd times
        c.step(t)


@pytest.mark.parametrize("t", [-1e15, -1.0, 1e15, np.nan])
def test_time_far_from_every_segment(configured: Kernel, t: float) -> None:
    """Times far before and after a segment (and a NaN clock) hold an end point."""
    k = fresh(configured)
    c = Checker(k)
    c.run(100, 0.002)
    k.move(k.q_min, k.q_max, 0.0, 1.0, QUINTIC)
    for _ in range(300):
        c.step(t)


# -- generated segments ----------------------------------------------------------------------

# Mixed limits: a narrow joint, a wide one, a slow one and one with a step
# limit larger than its range.
GENERATED_LIMITS = Kernel(np.array([-0.1, -3.0, 0.5, -1.0]), np.array([0.1, 3.0, 2.5, 1.0]),
                          np.array([1.0, 30.0, 0.1, 100.0]),
                          step_max=np.array([0.002, 0.06, 0.0002, 5.0]))
floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                   st.floats(-10.0, 10.0), st.sampled_from(NASTY))
profiles = st.integers(-2, 5)


@st.composite
def plans(draw: st.DrawFn) -> list[tuple[int, dict[str, float | int], float]]:
    """A few (ticks to run, fields to write into every joint, time step) phases."""
    phases = []
    for _ in range(draw(st.integers(1, 4))):
        fields: dict[str, float | int] = {name: draw(floats) for name in
                                          draw(st.sets(st.sampled_from(SEGMENT + GAIN), min_size=1))}
        if draw(st.booleans()):
            fields["profile"] = draw(profiles)
        phases.append((draw(st.integers(1, 150)), fields, draw(st.sampled_from([0.002, 0.0, -0.002, 1e6]))))
    return phases


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(plan=plans())
def test_generated_segments(plan: list[tuple[int, dict[str, float | int], float]]) -> None:
    k = fresh(GENERATED_LIMITS)
    c = Checker(k)
    t = 0.0
    for ticks, fields, dt in plan:
        for name, value in fields.items():
            getattr(k, name)[:] = value
        for _ in range(ticks):
            c.step(t)
            t += dt



# -- the behaviours' clamp of their targets (Robot.inside_limits, csrc/limits.c) -------------

def _inside_limits_reference(q: np.ndarray, margin: float, fallback: np.ndarray,
                             q_min: np.ndarray, q_max: np.ndarray) -> np.ndarray:
    """The numpy rule the C replaced: non-finite -> fallback, then max, then min."""
    out = np.where(np.isfinite(q), q, fallback)
    np.maximum(out, q_min + margin, out=out)
    return np.minimum(out, q_max - margin, out=out)


@pytest.mark.parametrize("path", robot_configs(), ids=lambda p: p.name)
def test_inside_limits_replaces_what_is_not_finite_and_clamps_bit_for_bit(path: Path) -> None:
    cfg = load_config(path)
    robot = Controller(cfg).robot
    n, rng = cfg.num_joints, np.random.default_rng(11)
    span = cfg.q_max - cfg.q_min
    for trial in range(400):
        q = cfg.q_min - span + 3.0 * span * rng.random(n)
        fallback = cfg.q_min + span * rng.random(n)
        nasty = rng.random(n) < 0.2
        q[nasty] = rng.choice(NASTY, int(nasty.sum()))
        if trial % 5 == 0:
            fallback[0], q[0] = np.nan, np.inf          # no finite value at all: NaN out
        margin = float(rng.choice([0.0, 0.02, 0.1]))
        got = robot.inside_limits(q, margin, fallback)
        want = _inside_limits_reference(q, margin, fallback, cfg.q_min, cfg.q_max)
        assert got.tobytes() == want.tobytes(), trial     # -0.0 and NaN included
        assert got is not q and got is not fallback
    with pytest.raises(ValueError, match=f"{n} joint values"):
        robot.inside_limits(np.zeros(n + 1), 0.0, np.zeros(n + 1))
