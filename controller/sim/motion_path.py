"""Where a mode-62 motion's steps say the body goes: the commanded path that
the physics scorecard judges a motion's travel and turn against.

The steps that move the robot over the ground are counted:

* mode 11 (locomotion and user-gait steps): vel_des (x, y in the body frame,
  yaw rate) clamped into the gait's velocity window, held for the step's
  duration (a user gait's velocity is the decoded one, SPEC §8.4; the motion
  gaits have no acceleration limit, SPEC §12.A.1, so a step's velocity holds
  from its start). The ordinary gaits' velocity is what SPEC §6.4 makes of
  it: the window shrunk by the cross-coupling (full |vx| halves the y and yaw
  allowances) and rate-limited by the gait's accelerations, from the
  velocity the step before left (zero after any other mode);
* mode 16 jumps: where the jump lands (SPEC §12.D: x, y in the body frame at
  the jump, yaw; JUMP_DISPLACEMENT says how).

Pose steps (mode 21's relative gaits, mode 3's incremental ones) move the
body over feet that stay where they are (mode 21 by +pos_des, turned by
-rpy_des[2]; mode 3 by +rpy_des[2], SPEC §12.F): the offset is where the body
stands over its feet. A step that puts the body back over its feet (mode 21
gait 5, a recovery stand, mode 3's absolute posture) undoes it; a jump
brings every foot to the body, and a walk the feet its timetable lifts (a
rear lift's front feet never lift, however many steps it takes, so half the
offset stays between the body and the centre of its feet); the motion's end
keeps it.
Pure: no simulator, no clock.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from controller.motion.gait import CROSS_COUPLING
from controller.motion.gait_table import GaitDefinition
from controller.motion.motion_gaits import FIRST_MOTION_GAIT
from controller.motion.usergait import USER_GAIT_IDS, decode_user_gait
from controller.protocol.block import Block

# SPEC §12.D: (x, y, yaw) where each jump id lands. Every trajectory ends in
# mid-flight, so the body's displacement at its data end is a lower bound;
# the trajectory files name the jump they were made for (x +60 cm, x +30 cm,
# y +/-20 cm, yaw +/-90 degrees). Each entry is the larger of the two: the
# long jump lands about 0.6 m, not at its data end's 0.469 m (the 16/1 row
# itself accepts 0.5-0.7 m); 9's data end (0.582) is past its name's 50 cm.
JUMP_DISPLACEMENT: dict[int, tuple[float, float, float]] = {
    0: (0.0, 0.0, math.pi / 2), 1: (0.60, 0.0, 0.0), 2: (0.0, 0.20, 0.0), 3: (0.0, 0.0, -math.pi / 2),
    4: (0.30, 0.0, 0.0), 5: (0.0, -0.20, 0.0), 6: (0.0, 0.0, 0.0), 9: (0.582, 0.0, 0.0),
}
LOCOMOTION, JUMP, POSE, POSTURE, RECOVERY = 11, 16, 21, 3, 12
ABSOLUTE_HEIGHT_GAIT = 5          # mode 21: the legs to the height pose
INCREMENTAL_POSTURE = (1, 3)      # mode 3's relative gaits
LEGS = 4                          # the motion files are a quadruped's


@dataclass(frozen=True)
class Path:
    x: float                 # m, along the heading at the start
    y: float                 # m, to its left
    yaw: float               # rad, turned
    distance: float          # m along the way (every stretch counted)
    seconds: float           # the steps' total duration


def commanded_path(blocks: Iterable[Block], gait: Callable[[int], GaitDefinition | None],
                   dt: float) -> Path:
    """The path of `blocks` (a motion's steps); `gait(id)` the mode-11 gait
    definitions (None: unknown, its step counts as standing)."""
    x = y = yaw = distance = seconds = 0.0
    v = np.zeros(3)          # the body's velocity, carried from step to step
    # Per leg: how far the body stands (x, y start frame, yaw) from where that
    # foot would put it; the body is over the centre of its feet plus their mean.
    lag = np.zeros((LEGS, 3))
    for block in blocks:
        span = block.duration * dt
        seconds += span
        if block.mode != LOCOMOTION:
            v = np.zeros(3)          # any other mode stops the walk
        relative = (block.mode == POSE and block.gait_id != ABSOLUTE_HEIGHT_GAIT) or \
            (block.mode == POSTURE and block.gait_id in INCREMENTAL_POSTURE)
        if relative:
            heading = yaw + lag[:, 2].mean()
            px, py = block.pos_des[0], block.pos_des[1]
            lag += (px * math.cos(heading) - py * math.sin(heading),
                    px * math.sin(heading) + py * math.cos(heading),
                    (-1.0 if block.mode == POSE else 1.0) * block.rpy_des[2])
            continue
        if block.mode in (POSE, POSTURE, RECOVERY):
            lag -= lag.mean(axis=0)     # back over the centre of the feet
            continue
        if block.mode in (LOCOMOTION, JUMP):
            # The feet that step come to the body: the centre of the feet
            # moves by their share; the feet that stay keep their lag.
            stepping = np.ones(LEGS, dtype=bool) if block.mode == JUMP else _stepping(gait(block.gait_id))
            come = lag[stepping].sum(axis=0) / LEGS
            x, y, yaw = x + come[0], y + come[1], yaw + come[2]
            lag[stepping] = 0.0
        if block.mode == LOCOMOTION:
            definition = gait(block.gait_id)
            target = _velocity(block, definition)
            ramp = _ordinary(block, definition)
            if not ramp:
                v = target
            n = max(1, block.duration)
            h = span / n
            for _ in range(n):      # exact to the tick, as the body turns while it moves
                if ramp:
                    assert definition is not None
                    v = _rate_limited(v, target, definition, h)
                x += (v[0] * math.cos(yaw) - v[1] * math.sin(yaw)) * h
                y += (v[0] * math.sin(yaw) + v[1] * math.cos(yaw)) * h
                yaw += v[2] * h
                distance += math.hypot(v[0], v[1]) * h
        elif block.mode == JUMP and block.gait_id in JUMP_DISPLACEMENT:
            jx, jy, jyaw = JUMP_DISPLACEMENT[block.gait_id]
            x += jx * math.cos(yaw) - jy * math.sin(yaw)
            y += jx * math.sin(yaw) + jy * math.cos(yaw)
            yaw += jyaw
            distance += math.hypot(jx, jy)
    over = lag.mean(axis=0)
    x, y, yaw = x + over[0], y + over[1], yaw + over[2]
    return Path(float(x), float(y), float(yaw), float(distance), float(seconds))


def _stepping(definition: GaitDefinition | None) -> np.ndarray:
    """Which legs a gait's timetable ever lifts (none for a stand or an
    unknown gait, all for a timetable of another leg count)."""
    if definition is None or definition.stand:
        return np.zeros(LEGS, dtype=bool)
    if definition.legs != LEGS:
        return np.ones(LEGS, dtype=bool)
    return np.asarray((~definition.contact).any(axis=0))


def _velocity(block: Block, definition: GaitDefinition | None) -> np.ndarray:
    if definition is None or definition.stand:
        return np.zeros(3)
    v = np.asarray(decode_user_gait(block).body_velocity if block.gait_id in USER_GAIT_IDS
                   else block.vel_des, dtype=float)
    lo, hi = definition.window_min, definition.window_max
    v = np.clip(v, lo, hi)
    if _ordinary(block, definition):
        full = min(1.0, abs(v[0]) / max(-lo[0], hi[0], 1e-9))
        share = 1.0 - CROSS_COUPLING * full
        v[1:] = np.clip(v[1:], lo[1:] * share, hi[1:] * share)
    return v


def _ordinary(block: Block, definition: GaitDefinition | None) -> bool:
    """An ordinary mode-11 gait (not a motion or user gait): SPEC §6.4's
    cross-coupling and acceleration limits apply."""
    return definition is not None and block.gait_id < FIRST_MOTION_GAIT \
        and block.gait_id not in USER_GAIT_IDS


def _rate_limited(v: np.ndarray, target: np.ndarray, definition: GaitDefinition,
                  h: float) -> np.ndarray:
    """One step of h seconds toward target (SPEC §6.4: x_up while |vx|
    grows, x_down otherwise; y and yaw either way)."""
    acc = definition.accel
    growing = abs(target[0]) > abs(v[0]) and target[0] * v[0] >= 0.0
    ax = (acc.x_up if growing else acc.x_down) * h
    step = np.clip(target - v, (-ax, -acc.y * h, -acc.yaw * h), (ax, acc.y * h, acc.yaw * h))
    return v + step
