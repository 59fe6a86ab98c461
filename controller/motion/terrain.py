"""Blind terrain adaptation of closed-loop mode 11: stairs, slopes, curbs
and steps down, from what the legs feel (the measured joints and their
torques; no map, no camera, never the simulator's truth).

Each tick, with the state estimate's feet (body frame) and orientation:

- footholds: where each foot last stood, in a ground frame carried by leg
  odometry (the body moves against its stance feet, height included, so a
  foot on a step sits higher than one on the floor);
- the ground plane under the body: a least-squares plane through the four
  footholds, its slope in the heading frame (along and across) past a dead
  band (flat ground stays flat exactly), low-pass filtered;
- the feet: the gait generator's targets (on a plane parallel to the body)
  are tilted onto the ground plane, and turned into the body frame at the
  commanded pitch plus the ground's: on a slope the body pitches with it
  (the MPC's pitch reference, balance.py) and the feet land on the ground;
- a stumble: a swinging foot held back by something (it lags its target by
  more than `stumble_lag` along the swing) is retracted and lifted again,
  its swing rewound to its rise with the high `stumble_apex`; every swing
  then lifts that high for `adapt_s` (the step-height adaptation: a stair's
  riser is met again at the next step);
- a missing step: a foot whose swing is over but that carries no load
  reaches further down, `reach_rate` m/s, at most `reach_down` below the
  plane, until it finds the ground (a stair down, a curb's far side).

It runs in the ordinary gaits; the motion and user gaits (dances, shows
written for a floor) run as written. Every figure is the config's
`balance.terrain` (docs/CONFIG.md).
"""
from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from controller.robot.config.balance import TerrainConfig


class Swings(Protocol):
    """What the adapter reads and writes of the gait generator (gait.py)."""
    swinging: np.ndarray
    swing_tick: np.ndarray
    swing_ticks: np.ndarray
    lift: np.ndarray
    landing: np.ndarray
    swing_apex: np.ndarray

    def airborne(self) -> np.ndarray: ...

REWIND_SHARE = 0.3       # a stumbling swing starts over from this share of its run (rising)
STUMBLE_FROM, STUMBLE_TO = 0.25, 0.9    # the share of a swing a stumble is looked for in
REACH_AFTER_S = 0.04     # s a foot down by the timetable carries nothing before it reaches down


class TerrainAdapter:
    def __init__(self, c: TerrainConfig, legs: int, dt: float) -> None:
        self.c = c
        self.legs = legs
        self.dt = dt
        self.ground = np.zeros(3)              # leg odometry: the body in the ground frame
        self.footholds = np.zeros((legs, 3))   # ground frame
        self.rel = np.zeros((legs, 3))         # foot from body, world orientation
        self.raw = np.zeros(2)                 # filtered d z / d x, d z / d y, heading frame
        self.slope = np.zeros(2)               # the same past the dead band and the limit
        self.unloaded = np.zeros(legs, dtype=np.int64)   # ticks down by the timetable without load
        self.reach = np.zeros(legs)            # m each foot reaches below the plane
        self.adapt_ticks = 0                   # ticks left of the raised swings
        self.stumbles = 0
        self.rewound = np.zeros(legs, dtype=bool)   # this swing started over once already
        self.started = False

    def reset(self) -> None:
        self.started = False
        self.raw[:] = 0.0
        self.slope[:] = 0.0
        self.reach[:] = 0.0
        self.unloaded[:] = 0
        self.adapt_ticks = 0

    @property
    def pitch(self) -> float:
        """The body pitch the ground asks for (rad, > 0 nose down)."""
        return -math.atan(self.slope[0])

    def observe(self, rot: np.ndarray, feet: np.ndarray, force: np.ndarray, gen: Swings) -> None:
        """Move the footholds and the plane on by this tick's measurement."""
        rel = feet @ rot.T
        airborne = gen.airborne()
        if not self.started:
            self.ground[:] = 0.0
            self.footholds[:] = rel
            self.rel[:] = rel
            self.started = True
            return
        loaded = force[:, 2] > self.c.load
        stance = ~airborne & loaded
        if stance.any():
            self.ground += (self.rel[stance] - rel[stance]).mean(axis=0)
            self.footholds[stance] = self.ground + rel[stance]
        self.rel[:] = rel
        yaw = math.atan2(rot[1, 0], rot[0, 0])
        self.raw += (self._plane(yaw) - self.raw) * min(1.0, self.dt / self.c.filter_s)
        band, limit = self.c.dead_band, math.tan(self.c.pitch_limit)
        self.slope[:] = np.clip(self.raw - np.clip(self.raw, -band, band), -limit, limit)
        self.slope[1] = 0.0     # along only: across, a stair's treads under the left and right feet look like a roll
        # A foot whose swing is over reaches down once it has carried no load
        # for REACH_AFTER_S.
        step = self.c.reach_rate * self.dt
        self.unloaded = np.where(~airborne & ~loaded & ~gen.swinging, self.unloaded + 1, 0)
        reaching = self.unloaded * self.dt > REACH_AFTER_S
        self.reach = np.where(reaching, np.minimum(self.reach + step, self.c.reach_down),
                              np.where(loaded, np.maximum(self.reach - step, 0.0), self.reach))
        self.reach[gen.swinging] = 0.0

    def _plane(self, yaw: float) -> np.ndarray:
        """The ground's slope (along, across the heading) through the footholds."""
        # z = c + gx x + gy y by least squares, in closed form on the centred
        # points (the 2x2 normal equations, in plain floats: a handful of
        # feet, where numpy's lstsq, an SVD, and even small-array numpy cost
        # the trot's tick tens of us); lstsq where the feet are nearly in a line.
        cy, sy = math.cos(yaw), math.sin(yaw)
        gx, gy, gz = self.ground.tolist()
        pts = [(cy * (fx - gx) + sy * (fy - gy), -sy * (fx - gx) + cy * (fy - gy), fz - gz)
               for fx, fy, fz in self.footholds.tolist()]
        n = len(pts)
        mx, my, mz = (sum(c) / n for c in zip(*pts))
        sxx = sxy = syy = sxz = syz = 0.0
        for x, y, z in pts:
            dx, dy, dz = x - mx, y - my, z - mz
            sxx += dx * dx
            sxy += dx * dy
            syy += dy * dy
            sxz += dx * dz
            syz += dy * dz
        det = sxx * syy - sxy * sxy
        if det <= 1e-9 * (sxx + syy) ** 2:
            a = np.array([(1.0, x, y) for x, y, _ in pts])
            coef, *_ = np.linalg.lstsq(a, np.array([z for _, _, z in pts]), rcond=None)
            return coef[1:]
        return np.array([(syy * sxz - sxy * syz) / det, (sxx * syz - sxy * sxz) / det])

    def feet(self, feet: np.ndarray, gen_pitch: float) -> np.ndarray:
        """The generator's feet (body frame, at its pitch) onto the ground
        plane and into the body frame at that pitch plus the ground's."""
        if not self.slope.any() and not self.reach.any():
            return feet
        c, s = math.cos(gen_pitch), math.sin(gen_pitch)
        x = c * feet[:, 0] + s * feet[:, 2]
        z = -s * feet[:, 0] + c * feet[:, 2] + self.slope[0] * x + self.slope[1] * feet[:, 1] - self.reach
        pitch = gen_pitch + self.pitch
        c, s = math.cos(pitch), math.sin(pitch)
        out = feet.copy()
        out[:, 0] = c * x - s * z
        out[:, 2] = s * x + c * z
        return out

    def stumble(self, target: np.ndarray, measured: np.ndarray, gen: Swings) -> None:
        """Retract and lift again a swing foot held back (body frame feet)."""
        if self.adapt_ticks > 0:
            self.adapt_ticks -= 1
        airborne = gen.airborne()
        self.rewound &= airborne
        for leg in np.flatnonzero(airborne & ~self.rewound):
            share = gen.swing_tick[leg] / gen.swing_ticks[leg]
            if not STUMBLE_FROM <= share <= STUMBLE_TO:
                continue
            direction = gen.landing[leg] - gen.lift[leg]
            norm = float(np.hypot(*direction))
            if norm < 1e-3:
                continue
            lag = float((target[leg, :2] - measured[leg, :2]) @ direction) / norm
            if lag > self.c.stumble_lag:
                gen.swing_tick[leg] = int(REWIND_SHARE * gen.swing_ticks[leg])
                gen.swing_apex[leg] = max(gen.swing_apex[leg], self.c.stumble_apex)
                self.rewound[leg] = True
                self.adapt_ticks = int(round(self.c.adapt_s / self.dt))
                self.stumbles += 1

    @property
    def apex_floor(self) -> float:
        """The least swing height now (m): the stumble apex while adapting."""
        return self.c.stumble_apex if self.adapt_ticks > 0 else 0.0
