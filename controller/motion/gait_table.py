"""Gait definitions for mode 11 (SPEC §5.2, §6.4), loaded from gaits/<robot>/*.yaml.

A gait is a contact timetable in MPC segments of 30 ms: for every segment and
every leg, stance (foot on the ground) or swing. The common periodic gaits are
written as `period`, `stance` and per-leg `offsets` (the segment where each
leg's stance starts); anything else, such as an uploaded user gait (SPEC §8.2),
as a list of `sections`. Each file also carries the gait's velocity window,
its acceleration limits, its step-height rule and optionally its stance
width and length (shares of the nominal feet's lateral and fore-aft offsets:
a pace with its feet nearer the centre line rolls less, a bound with them
nearer the centre of mass pitches less).

Times inside the generator are whole ticks, so a schedule is exact: a segment
of 30 ms is 15 ticks at 500 Hz.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from controller.robot.config.reader import parse_yaml

MAX_SEGMENTS = 1000          # 30 s cycles: far beyond any real gait
SEGMENT_MS = 30.0            # one MPC step (SPEC §5.4, §8.2)


class GaitError(ValueError):
    """A gait definition file is invalid; the message names file, key and reason."""


@dataclass(frozen=True)
class Accel:
    """Velocity rate limits (SPEC §6.4): m/s^2 for x and y, rad/s^2 for yaw.
    x_up applies while |vx| grows, x_down while it shrinks."""
    x_up: float = 1.0
    x_down: float = 2.0
    y: float = 1.0
    yaw: float = 2.0


@dataclass(frozen=True)
class GaitDefinition:
    id: int
    name: str
    contact: np.ndarray            # (segments, legs) bool: True = stance
    window_min: np.ndarray         # (3,) vx, vy, yaw rate
    window_max: np.ndarray
    accel: Accel = Accel()
    step_ratio: float = 1.0        # step_height[0] x ratio ...
    step_min: float = 0.0          # ... clamped to [min, 0.06 x ratio] (SPEC §6.4)
    stand: bool = False            # a stand: zero velocity, no stepping
    auto: tuple[int, ...] = ()     # auto-switch: timing gaits by speed, slow to fast
    width: float = 1.0             # stance width: share of the nominal feet's lateral offset
    length: float = 1.0            # stance length: share of the nominal feet's fore-aft offset
    source: str = ""
    # Derived per (segment, leg): where the current stance/swing run started
    # (segments before this one) and how long it is, so a time finds its phase.
    run_start: np.ndarray = field(init=False, repr=False, compare=False)
    run_length: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        start, length = _runs(self.contact)
        start.flags.writeable = length.flags.writeable = False
        object.__setattr__(self, "run_start", start)
        object.__setattr__(self, "run_length", length)

    @property
    def segments(self) -> int:
        return int(self.contact.shape[0])

    @property
    def legs(self) -> int:
        return int(self.contact.shape[1])

    def duty(self) -> np.ndarray:
        """Fraction of the cycle each leg is in stance."""
        return self.contact.mean(axis=0)

    def in_unison(self) -> bool:
        """Every leg on the same timetable: all feet lift and land together
        (a pronk, or a stand)."""
        return bool((self.contact == self.contact[:, :1]).all())

    def stance_segments(self) -> np.ndarray:
        """Per leg, the mean length of a stance run, in segments."""
        runs = np.sum(self.contact & (self.run_start == 0), axis=0)
        return self.contact.sum(axis=0) / np.maximum(runs, 1)

    def step_height(self, commanded: float) -> float:
        """The swing apex for a commanded step_height[0] (SPEC §6.4)."""
        return min(max(commanded * self.step_ratio, self.step_min), 0.06 * self.step_ratio)

    def inside_window(self, v: np.ndarray, slack: float = 1e-9) -> bool:
        return bool(np.all(v >= self.window_min - slack) and np.all(v <= self.window_max + slack))


def _runs(contact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each (segment, leg): segments since the run containing it started,
    and the run's length; runs wrap around the end of the cycle. Vectorised:
    an uploaded Gait Def is turned into a table inside a tick."""
    segments, legs = contact.shape
    index = np.arange(segments)
    start = np.empty((segments, legs), dtype=np.int64)
    length = np.empty((segments, legs), dtype=np.int64)
    for leg in range(legs):
        col = contact[:, leg]
        changes = np.flatnonzero(col != np.roll(col, 1))   # segments where a run begins
        if len(changes) == 0:                                # one run: the whole cycle
            start[:, leg] = index
            length[:, leg] = segments
            continue
        run_len = np.diff(np.append(changes, changes[0] + segments))
        # The run containing segment s began at the last change at or before s;
        # segments before the first change belong to the run that wraps.
        which = np.searchsorted(changes, index, side="right") - 1
        start[:, leg] = (index - changes[which]) % segments
        length[:, leg] = run_len[which]
    return start, length


def from_offsets(period: int, stance: Sequence[int] | np.ndarray, offsets: Sequence[int] | np.ndarray) -> np.ndarray:
    """Contact table of a periodic gait: leg i in stance for stance[i]
    segments from offsets[i] on."""
    table = np.zeros((period, len(offsets)), dtype=bool)
    for leg, (length, offset) in enumerate(zip(stance, offsets)):
        for k in range(length):
            table[(offset + k) % period, leg] = True
    return table


def from_sections(sections: Sequence[tuple[Sequence[int], int]], legs: int) -> np.ndarray:
    """Contact table from (contact per leg, duration in segments) sections."""
    rows = []
    for contact, duration in sections:
        rows.extend([[bool(c) for c in contact]] * duration)
    table = np.array(rows, dtype=bool).reshape(-1, legs)
    return table


# -- loading ------------------------------------------------------------------
class _File:
    def __init__(self, path: Path, data: Any) -> None:
        self.path = path
        self.data = data

    def fail(self, key: str, reason: str) -> GaitError:
        return GaitError(f"{self.path}: {key}: {reason}")

    def get(self, key: str, default: Any = ...) -> Any:
        if key not in self.data:
            if default is ...:
                raise self.fail(key, "missing")
            return default
        return self.data[key]

    def integer(self, key: str, lo: int, hi: int, default: Any = ...) -> int:
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.fail(key, f"expected an integer in [{lo}, {hi}], got {value!r}")
        return value

    def numbers(self, key: str, n: int, value: Any = ..., lo: float = -1e9,
                hi: float = 1e9) -> np.ndarray:
        value = self.get(key) if value is ... else value
        if not isinstance(value, list) or len(value) != n or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool)
                and np.isfinite(x) and lo <= x <= hi for x in value):
            raise self.fail(key, f"expected {n} finite numbers in [{lo}, {hi}], got {value!r}")
        return np.array(value, dtype=float)

    def number(self, key: str, default: float, lo: float, hi: float, where: dict | None = None) -> float:
        src = self.data if where is None else where
        value = src.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not np.isfinite(value) or not lo <= value <= hi:
            raise self.fail(key, f"expected a number in [{lo}, {hi}], got {value!r}")
        return float(value)


def _contact(f: _File, legs: int) -> np.ndarray:
    if "sections" in f.data:
        raw = f.get("sections")
        if not isinstance(raw, list) or not raw:
            raise f.fail("sections", "expected a non-empty list of {contact, duration}")
        sections = []
        for i, s in enumerate(raw):
            if not isinstance(s, dict):
                raise f.fail(f"sections[{i}]", "expected {contact: [...], duration: N}")
            contact = f.numbers(f"sections[{i}].contact", legs, s.get("contact"), 0, 1)
            duration = s.get("duration")
            if isinstance(duration, bool) or not isinstance(duration, int) \
                    or not 1 <= duration <= MAX_SEGMENTS:
                raise f.fail(f"sections[{i}].duration", f"expected 1..{MAX_SEGMENTS} segments")
            sections.append((contact.astype(int).tolist(), duration))
        table = from_sections(sections, legs)
        if len(table) > MAX_SEGMENTS:
            raise f.fail("sections", f"the cycle is longer than {MAX_SEGMENTS} segments")
        return table
    period = f.integer("period", 1, MAX_SEGMENTS)
    stance_raw = f.get("stance")
    stance = [stance_raw] * legs if isinstance(stance_raw, int) else stance_raw
    stance_v = f.numbers("stance", legs, stance, 1, period)
    offsets = f.numbers("offsets", legs, f.get("offsets", [0] * legs), 0, period - 1)
    if np.any(stance_v != np.round(stance_v)) or np.any(offsets != np.round(offsets)):
        raise f.fail("stance", "stance and offsets are whole segments")
    return from_offsets(period, stance_v.astype(int), offsets.astype(int))


def load_gait(path: Path, legs: int) -> GaitDefinition:
    """One gait definition file. A file read before with the same text gives
    the same definition (its arrays are read-only): a test session builds
    hundreds of controllers from the same gaits."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise GaitError(f"{path}: cannot read: {exc}") from exc
    return _gait(text, path, legs)


@functools.lru_cache(maxsize=256)
def _gait(text: str, path: Path, legs: int) -> GaitDefinition:
    try:
        data = parse_yaml(text)
    except yaml.YAMLError as exc:
        raise GaitError(f"{path}: cannot read: {exc}") from exc
    if not isinstance(data, dict):
        raise GaitError(f"{path}: expected a mapping")
    f = _File(path, data)
    gait_id = f.integer("id", 1, 127)
    name = f.get("name", path.stem)
    stand = bool(f.get("stand", False))
    contact = np.ones((10, legs), dtype=bool) if stand else _contact(f, legs)
    window = f.get("window", {"min": [0, 0, 0], "max": [0, 0, 0]} if stand else ...)
    if not isinstance(window, dict):
        raise f.fail("window", "expected {min: [vx, vy, wz], max: [vx, vy, wz]}")
    wmin = f.numbers("window.min", 3, window.get("min"), -10.0, 10.0)
    wmax = f.numbers("window.max", 3, window.get("max"), -10.0, 10.0)
    if np.any(wmin > 0) or np.any(wmax < 0):
        raise f.fail("window", "every axis must include zero (min <= 0 <= max)")
    accel_raw = f.get("accel", {})
    if not isinstance(accel_raw, dict):
        raise f.fail("accel", "expected {x_up, x_down, y, yaw}")
    defaults = Accel()
    accel = Accel(**{k: f.number(k, getattr(defaults, k), 0.01, 50.0, accel_raw)
                     for k in ("x_up", "x_down", "y", "yaw")})
    step = f.get("step_height", {})
    if not isinstance(step, dict):
        raise f.fail("step_height", "expected {ratio, min}")
    auto = f.get("auto", [])
    if not isinstance(auto, list) or not all(isinstance(a, int) for a in auto):
        raise f.fail("auto", "expected a list of gait ids")
    for array in (contact, wmin, wmax):
        array.flags.writeable = False
    return GaitDefinition(
        id=gait_id, name=str(name), contact=contact, window_min=wmin, window_max=wmax,
        accel=accel,
        step_ratio=f.number("ratio", 1.0, 0.1, 3.0, step),
        step_min=f.number("min", 0.0, 0.0, 0.1, step),
        stand=stand, auto=tuple(auto), source=str(path),
        width=f.number("stance_width", 1.0, 0.2, 1.5),
        length=f.number("stance_length", 1.0, 0.2, 1.5))


def load_gaits(directory: Path, legs: int,
               windows: Mapping[int, tuple[Sequence[float], Sequence[float]]] | None = None,
               ) -> dict[int, GaitDefinition]:
    """Every *.yaml in `directory`, keyed by gait id; ids must be unique and
    every auto-switch list must name loaded gaits. `windows` (a robot's
    `locomotion.windows`: gait id -> (min, max)) replaces those gaits'
    velocity windows; each must name a loaded gait."""
    if not directory.is_dir():
        raise GaitError(f"{directory}: not a directory of gait definitions")
    gaits: dict[int, GaitDefinition] = {}
    for path in sorted(directory.glob("*.yaml")):
        gait = load_gait(path, legs)
        if gait.id in gaits:
            raise GaitError(f"{path}: id: gait {gait.id} is also defined in {gaits[gait.id].source}")
        gaits[gait.id] = gait
    for gait in gaits.values():
        for other in gait.auto:
            if other not in gaits or gaits[other].stand or gaits[other].auto:
                raise GaitError(f"{gait.source}: auto: {other} is not a loaded stepping gait")
    for gait_id, (lo, hi) in (windows or {}).items():
        if gait_id not in gaits:
            raise GaitError(f"locomotion.windows: gait {gait_id} has no file in {directory}")
        if gaits[gait_id].stand:
            raise GaitError(f"locomotion.windows: gait {gait_id} is a stand (no velocity window)")
        gaits[gait_id] = replace(gaits[gait_id], window_min=np.array(lo, dtype=float),
                                 window_max=np.array(hi, dtype=float))
    return gaits
