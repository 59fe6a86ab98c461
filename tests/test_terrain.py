"""The blind terrain adaptation of mode 11 (controller/motion/terrain.py),
each part against its definition on made-up feet: the ground plane from
the footholds, flat ground left exactly alone, the feet put on the plane,
a stumble's retraction, a missing step reached for."""
from __future__ import annotations

import math

import numpy as np
import pytest

from controller.motion.terrain import REACH_AFTER_S, REWIND_SHARE, TerrainAdapter, TerrainConfig

DT = 0.002
LEGS = 4
# Feet of a standing quadruped, body frame (FR, FL, RR, RL), 0.25 m below the body.
STAND = np.array([[0.2, -0.1, -0.25], [0.2, 0.1, -0.25], [-0.2, -0.1, -0.25], [-0.2, 0.1, -0.25]])


class FakeGait:
    """What the adapter reads and writes of the gait generator."""

    def __init__(self) -> None:
        self.swinging = np.zeros(LEGS, dtype=bool)
        self.swing_tick = np.zeros(LEGS, dtype=np.int64)
        self.swing_ticks = np.full(LEGS, 100, dtype=np.int64)
        self.lift = np.zeros((LEGS, 2))
        self.landing = np.zeros((LEGS, 2))
        self.swing_apex = np.full(LEGS, 0.06)

    def airborne(self) -> np.ndarray:
        return self.swinging & (self.swing_tick > 0) & (self.swing_tick < self.swing_ticks)


def _pitch_rot(pitch: float) -> np.ndarray:
    """Body to world for a body pitched by `pitch` (> 0 nose down)."""
    c, s = math.cos(pitch), math.sin(pitch)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _loaded() -> np.ndarray:
    force = np.zeros((LEGS, 3))
    force[:, 2] = 20.0
    return force


def _feet_on_slope(slope: float, pitch: float) -> np.ndarray:
    """Body-frame feet of a body pitched `pitch` standing on ground that
    rises `slope` (rise over run) ahead."""
    world = STAND.copy()
    world[:, 2] += slope * world[:, 0]
    return world @ _pitch_rot(pitch)          # world -> body: R^T x, row-wise x R


def test_on_flat_ground_the_plane_is_flat_and_the_feet_are_the_generators_exactly() -> None:
    rng = np.random.default_rng(1)
    t = TerrainAdapter(TerrainConfig(), LEGS, DT)
    gen = FakeGait()
    for _ in range(2000):
        feet = STAND + rng.normal(0.0, 0.003, STAND.shape)
        t.observe(_pitch_rot(rng.normal(0.0, 0.02)), feet, _loaded(), gen)
    assert not t.slope.any() and t.pitch == 0.0
    target = STAND + 0.01
    assert t.feet(target, 0.05) is target


def test_the_footholds_plane_is_numpys_least_squares_fit_for_any_feet_in_a_line_too() -> None:
    """The plane's closed form (2x2 normal equations on centred points)
    against numpy's lstsq, for random footholds, two to four feet down, and
    feet in a line (the lstsq fallback)."""
    rng = np.random.default_rng(7)
    t = TerrainAdapter(TerrainConfig(), LEGS, DT)
    for i in range(3000):
        t.footholds = rng.normal(0.0, 1.0, (LEGS, 3)) * [0.3, 0.15, 0.05]
        if i % 4 == 0:                       # in a line through the heading frame
            t.footholds[:, 1] = 0.7 * t.footholds[:, 0]
        if i % 4 == 1:                       # two feet on one spot
            t.footholds[1] = t.footholds[0]
        t.ground = rng.normal(0.0, 0.05, 3)
        yaw = float(rng.uniform(-math.pi, math.pi))
        p = t.footholds - t.ground
        cy, sy = math.cos(yaw), math.sin(yaw)
        a = np.column_stack([np.ones(LEGS), cy * p[:, 0] + sy * p[:, 1], -sy * p[:, 0] + cy * p[:, 1]])
        expected = np.linalg.lstsq(a, p[:, 2], rcond=None)[0][1:]
        np.testing.assert_allclose(t._plane(yaw), expected, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("degrees", [10.0, 20.0, -20.0])
def test_the_ground_slope_is_the_footholds_plane_past_the_dead_band(degrees: float) -> None:
    c = TerrainConfig()
    t = TerrainAdapter(c, LEGS, DT)
    gen = FakeGait()
    rise = math.tan(math.radians(degrees))
    feet = _feet_on_slope(rise, -math.radians(degrees) / 2)
    for _ in range(int(10 * c.filter_s / DT)):
        t.observe(_pitch_rot(-math.radians(degrees) / 2), feet, _loaded(), gen)
    expected = float(np.clip(rise - math.copysign(c.dead_band, rise), -math.tan(c.pitch_limit),
                             math.tan(c.pitch_limit)))
    assert t.slope[0] == pytest.approx(expected, abs=1e-3)
    assert t.slope[1] == 0.0
    assert t.pitch == pytest.approx(-math.atan(expected), abs=1e-3)


def test_the_feet_go_onto_the_plane_at_the_pitch_the_ground_asks_for() -> None:
    t = TerrainAdapter(TerrainConfig(), LEGS, DT)
    t.slope[0] = 0.2
    gen_pitch = 0.05
    target = STAND @ _pitch_rot(gen_pitch)            # the generator's feet at its pitch
    out = t.feet(target, gen_pitch)
    level = out @ _pitch_rot(gen_pitch + t.pitch).T    # back to the level frame at the new pitch
    np.testing.assert_allclose(level[:, 0], STAND[:, 0], atol=1e-12)
    np.testing.assert_allclose(level[:, 2], STAND[:, 2] + 0.2 * STAND[:, 0], atol=1e-12)


def test_a_swing_foot_held_back_is_retracted_and_lifted_again_once_per_swing() -> None:
    c = TerrainConfig()
    t = TerrainAdapter(c, LEGS, DT)
    gen = FakeGait()
    gen.swinging[0] = True
    gen.swing_tick[0] = 60
    gen.lift[0] = (0.15, -0.1)
    gen.landing[0] = (0.25, -0.1)
    target = STAND.copy()
    measured = STAND.copy()
    measured[0, 0] -= c.stumble_lag * 0.9                 # within the lag: nothing
    t.stumble(target, measured, gen)
    assert t.stumbles == 0 and gen.swing_tick[0] == 60
    measured[0, 0] = target[0, 0] - c.stumble_lag * 1.5   # held back
    t.stumble(target, measured, gen)
    assert t.stumbles == 1
    assert gen.swing_tick[0] == int(REWIND_SHARE * gen.swing_ticks[0])
    assert gen.swing_apex[0] == c.stumble_apex and t.apex_floor == c.stumble_apex
    gen.swing_tick[0] = 60                                # held back again in the same swing
    t.stumble(target, measured, gen)
    assert t.stumbles == 1
    for _ in range(int(round(c.adapt_s / DT))):          # the raised swings last adapt_s
        t.stumble(target, target, gen)
    assert t.apex_floor == 0.0


def test_a_foot_down_by_the_timetable_without_load_reaches_down_until_it_finds_ground() -> None:
    c = TerrainConfig()
    t = TerrainAdapter(c, LEGS, DT)
    gen = FakeGait()
    force = _loaded()
    force[2, 2] = 0.0                                     # RR finds nothing under it
    t.observe(np.eye(3), STAND, force, gen)
    ticks = int(REACH_AFTER_S / DT) + 50
    for _ in range(ticks):
        t.observe(np.eye(3), STAND, force, gen)
    assert t.reach[2] == pytest.approx((ticks - int(REACH_AFTER_S / DT) - 1) * c.reach_rate * DT, rel=0.05)
    assert t.reach[[0, 1, 3]].max() == 0.0
    for _ in range(2000):
        t.observe(np.eye(3), STAND, force, gen)
    assert t.reach[2] == pytest.approx(c.reach_down)
    out = t.feet(STAND.copy(), 0.0)
    assert out[2, 2] == pytest.approx(STAND[2, 2] - c.reach_down)
    force[2, 2] = 30.0                                    # found: it stays where it stands
    for _ in range(5):
        t.observe(np.eye(3), STAND, force, gen)
    assert t.reach[2] < c.reach_down
