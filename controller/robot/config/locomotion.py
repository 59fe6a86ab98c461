"""The quadruped's `locomotion` section (mode 11, SPEC §6.4): the gait
definitions, the on-disk user gaits, body height and speed profile of goals."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from controller.protocol import constants  # motion_goal_t speed-profile defaults and bounds
from controller.robot.config.reader import Reader, config_directory

Window = tuple[tuple[float, float, float], tuple[float, float, float]]   # min, max: vx, vy, wz

@dataclass(frozen=True)
class LocomotionConfig:
    """Mode 11 (SPEC §6.4): where the gait definitions are and the body numbers."""
    gaits_dir: Path
    # On-disk user gaits (SPEC §8.2, §12.A.4): user_gait_NN.toml for ids
    # 80 + NN (80..100) and user_gait.toml, 110's default; None: only uploads.
    user_gaits: Path | None = None
    body_height: float = 0.25
    height_range: tuple[float, float] = (0.23, 0.32)
    # The user gaits' body heights (SPEC §8.4: 0.225 m + pos_des z; the
    # CyberDog 2 push-up's plank is 0.105 m); None: height_range.
    user_height_range: tuple[float, float] | None = None
    vertical_leg_height: float = 0.23
    pitch_limit: float = 0.1
    leave_speed: float = 0.15
    leave_gait: int = 9
    default_gait: int = 3
    com_x: float = 0.0
    half_stride: tuple[float, float] = (0.12, 0.07)
    goal_profile: tuple[float, float, float] = (        # m/s^2, m/s, rad/s
        constants.DEFAULT_MAX_ACC, constants.DEFAULT_MAX_SPEED, constants.DEFAULT_MAX_ROTATION)
    # Per gait id, this robot's velocity window (min, max: vx, vy, wz),
    # replacing the one its gait file carries.
    windows: Mapping[int, Window] = field(default_factory=dict)


def load_locomotion(r: Reader, path: Path) -> LocomotionConfig:
    lr = r.sub("locomotion")
    lo, hi = lr.vector("height_range", 2)
    if not 0.05 <= lo < hi <= 2.0:
        raise lr.fail("height_range", f"expected 0.05 <= min < max <= 2, got {[lo, hi]}")
    body = lr.number("body_height", lo, hi)
    user = None
    if lr.data.get("user_gait_height_range") is not None:
        ulo, uhi = lr.vector("user_gait_height_range", 2)
        if not 0.05 <= ulo < uhi <= 2.0:
            raise lr.fail("user_gait_height_range", f"expected 0.05 <= min < max <= 2, got {[ulo, uhi]}")
        user = (float(ulo), float(uhi))
    return LocomotionConfig(
        gaits_dir=config_directory(lr, path, "gaits"),
        user_gaits=config_directory(lr, path, "user_gaits") if lr.data.get("user_gaits") is not None
        else None,
        body_height=body,
        height_range=(float(lo), float(hi)),
        user_height_range=user,
        vertical_leg_height=lr.number("vertical_leg_height", lo, hi, lo),
        pitch_limit=lr.number("pitch_limit", 0.0, 0.5),
        leave_speed=lr.number("leave_speed", 0.0, 1.0),
        leave_gait=int(lr.number("leave_gait", 1, 127)),
        default_gait=int(lr.number("default_gait", 1, 127)),
        com_x=lr.number("com_x", -0.2, 0.2, 0.0),
        half_stride=_half_stride(lr),
        goal_profile=goal_profile(lr),
        windows=_windows(lr),
    )


def _windows(lr: Reader) -> dict[int, Window]:
    """The optional `windows`: {gait id: {min: [vx, vy, wz], max: [...]}},
    each axis including zero, as a gait file's window."""
    if "windows" not in lr.data:
        return {}
    raw = lr.get("windows", dict)
    out: dict[int, Window] = {}
    for key, value in raw.items():
        if not isinstance(key, int) or not 1 <= key <= 127:
            raise lr.fail("windows", f"{key!r}: expected a gait id 1..127")
        if not isinstance(value, dict):
            raise lr.fail("windows", f"{key}: expected {{min: [vx, vy, wz], max: [vx, vy, wz]}}")
        wr = Reader(lr.path, value, f"{lr.where}.windows.{key}")
        a, b, c = (float(v) for v in wr.vector("min", 3))
        lo = (a, b, c)
        a, b, c = (float(v) for v in wr.vector("max", 3))
        hi = (a, b, c)
        if any(not -5.0 <= v <= 5.0 for v in lo + hi):
            raise wr.fail("min", f"expected speeds within [-5, 5], got min {list(lo)}, max {list(hi)}")
        if any(v > 0 for v in lo) or any(v < 0 for v in hi):
            raise wr.fail("min", f"every axis must include zero (min <= 0 <= max), "
                                 f"got min {list(lo)}, max {list(hi)}")
        out[key] = (lo, hi)
    return out


def goal_profile(lr: Reader) -> tuple[float, float, float]:
    acc, speed, rot = lr.vector("goal_profile", 3)
    if not (0 < acc <= constants.LIMIT_ACC and 0 < speed <= constants.LIMIT_SPEED
            and 0 < rot <= constants.LIMIT_ROTATION):
        raise lr.fail("goal_profile", f"expected max_acc (0, {constants.LIMIT_ACC}] m/s^2, "
                                      f"max_speed (0, {constants.LIMIT_SPEED}] m/s, max_rotation "
                                      f"(0, {constants.LIMIT_ROTATION}] rad/s, got {[acc, speed, rot]}")
    return float(acc), float(speed), float(rot)


def _half_stride(lr: Reader) -> tuple[float, float]:
    rx, ry = lr.vector("half_stride", 2)
    if not (0.005 <= rx <= 1.0 and 0.005 <= ry <= 1.0):
        raise lr.fail("half_stride", f"expected two lengths in [0.005, 1] m, got {[rx, ry]}")
    return float(rx), float(ry)
