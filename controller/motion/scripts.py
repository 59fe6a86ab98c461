"""Keyframe scripts in the NUbots YAML format: load, validate, retime, mirror, play.

A script file is a YAML list of frames (the NUbots ScriptEngine format):

    - duration: 1000            # ms, a whole number > 0
      profile: cubic            # optional, this frame only (motiond extension)
      targets:
        - {id: r_knee, position: 0.96, gain: 30, torque: 100}

`id` is a joint name from the robot config, matched without regard to case,
so NUbots ids such as `R_KNEE` or `HEAD_PITCH` load unchanged; `position` is
in rad; `gain` in [0, 100]; `torque` in [0, 100], 100 if left out, 0 relaxes
the joint. A file may instead be a mapping `{profile: linear, frames: [...]}`
to choose the profile of the whole script (default: quintic, minimum jerk).

Every rule is checked at load (`validate`), and the first broken one raises a
`ScriptError` naming the file, the frame (1-based), the YAML line and the
reason. Operations (`chain`, `stretch`, `speed`, `mirror`) return new frozen
Scripts; they know nothing of the robot, so run `validate` on their result
before playing it (`ScriptPlayer` does when it is given the limits).

Durations are held in controller ticks, rounded half up from milliseconds at
load (a frame never has 0 ticks). Time in the player is the integer tick
count; the kernel is handed `seconds(tick)`, by default `tick * dt` exactly as
`Controller.step` computes its kernel time, which is what makes every frame
end on its target bit for bit at its end tick.

Pure: no sockets, no clock reads; the player only writes kernel segments.
"""
from __future__ import annotations

import math
import os
import re
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

import numpy as np
import yaml

from controller.robot.config.documents import parse_yaml_nodes
from controller.robot.native import CUBIC, LINEAR, QUINTIC

PROFILES = ("linear", "cubic", "quintic")
DEFAULT_PROFILE = "quintic"          # minimum jerk, as the issue asks
PROFILE_CODE = {"linear": LINEAR, "cubic": CUBIC, "quintic": QUINTIC}
# Peak speed over mean speed of each profile between two rests (the player
# passes zero end velocities): the speed check uses the peak, because that is
# what the kernel will command and clamp to the joint's velocity limit; a
# quintic frame within the limit on average could still be cut by the kernel
# and arrive late.
PEAK_OVER_MEAN = {"linear": 1.0, "cubic": 1.5, "quintic": 1.875}

GAIN_RANGE = (0.0, 100.0)
TORQUE_RANGE = (0.0, 100.0)
FULL_TORQUE = 100.0
# gain -> stiffness: kp = gain * GAIN_TO_KP * torque / 100 [N m/rad], and
# kd = kp * KD_PER_KP [N m s/rad]. A NUbots gain of 30 on a leg gives kp 60,
# kd 1.2, the humanoid's own recovery gains; 8 on an arm gives kp 16, kd 0.32,
# close to its pose gains. A torque below 100 softens the joint in
# proportion (the kernel has no torque limit to set); torque 0 relaxes it,
# kp = kd = 0.
GAIN_TO_KP = 2.0
KD_PER_KP = 0.02
# New gains ramp in linearly over this long (rounded to whole ticks, at most
# the frame), so a joint that is stiffened while away from its target is not
# hit with a torque step; relaxing takes as long.
GAIN_RAMP_S = 0.02
SPEED_TOLERANCE = 1e-9               # relative: a frame exactly at the limit passes

SCRIPT_SUFFIX = ".yaml"
_FRAME_KEYS = ("duration", "targets", "profile")
_TARGET_KEYS = ("id", "position", "gain", "torque")
_FILE_KEYS = ("profile", "frames")
# Script names are plain file stems; anything else (separators, `..`, NUL,
# hidden files, shell or URL characters) is refused before touching the disk.
_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


class ScriptError(ValueError):
    """A script is invalid or cannot be found. The message names the file (or
    script), the 1-based frame and the YAML line where known, and the reason;
    the parts are also attributes for callers that report them separately."""

    def __init__(self, where: str | os.PathLike[str], reason: str, frame: int | None = None,
                 line: int | None = None, detail: str = "") -> None:
        place = str(where)
        if frame is not None:
            place += f": frame {frame}"
            if detail:
                place += f" ({detail})"
            if line is not None:
                place += f", line {line}"
        elif line is not None:
            place += f": line {line}"
        super().__init__(f"{place}: {reason}")
        self.where = str(where)
        self.frame = frame
        self.line = line
        self.reason = reason


class JointLimits(Protocol):
    """What validation needs of a robot; controller.robot.config.Config has it."""
    @property
    def joint_names(self) -> list[str]: ...
    @property
    def q_min(self) -> np.ndarray: ...
    @property
    def q_max(self) -> np.ndarray: ...
    @property
    def v_max(self) -> np.ndarray: ...
    @property
    def tick_hz(self) -> float: ...


class Target(NamedTuple):
    position: float    # rad
    gain: float        # 0..100, see GAIN_TO_KP
    torque: float = FULL_TORQUE   # 0..100; 0 relaxes the joint


@dataclass(frozen=True, eq=True)
class Frame:
    duration_ticks: int
    targets: Mapping[str, Target]          # joint name -> target; read-only
    profile: str | None = None             # None: the script's profile

    def __post_init__(self) -> None:
        if isinstance(self.duration_ticks, bool) or not isinstance(self.duration_ticks, int) \
                or self.duration_ticks < 1:
            raise ValueError(f"a frame lasts a whole number of ticks >= 1, "
                             f"got {self.duration_ticks!r}")
        if self.profile is not None and self.profile not in PROFILES:
            raise ValueError(f"profile must be one of {PROFILES}, got {self.profile!r}")
        # A private copy behind a read-only view keeps the frame frozen.
        object.__setattr__(self, "targets", MappingProxyType(
            {str(k): Target(*v) for k, v in self.targets.items()}))

    def __hash__(self) -> int:
        return hash((self.duration_ticks, tuple(sorted(self.targets.items())), self.profile))


class Part(NamedTuple):
    """One script inside a chain: its name, frame count and mirror state."""
    name: str
    frames: int
    mirrored: bool = False


@dataclass(frozen=True, eq=True)
class Script:
    name: str
    frames: tuple[Frame, ...]
    tick_hz: float
    profile: str = DEFAULT_PROFILE
    source: Path | None = None
    mirrored: bool = False
    parts: tuple[Part, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "frames", tuple(self.frames))
        if not self.frames:
            raise ValueError(f"script {self.name!r} has no frames")
        if self.profile not in PROFILES:
            raise ValueError(f"profile must be one of {PROFILES}, got {self.profile!r}")
        if not (math.isfinite(self.tick_hz) and self.tick_hz > 0):
            raise ValueError(f"tick_hz must be positive, got {self.tick_hz!r}")
        if not self.parts:
            object.__setattr__(self, "parts", (Part(self.name, len(self.frames), self.mirrored),))
        if sum(p.frames for p in self.parts) != len(self.frames):
            raise ValueError("parts do not add up to the frames")

    @property
    def total_ticks(self) -> int:
        return sum(f.duration_ticks for f in self.frames)

    @property
    def duration_ms(self) -> float:
        return self.total_ticks * 1000.0 / self.tick_hz

    @property
    def joints(self) -> frozenset[str]:
        """Every joint some frame names (what the script needs to own)."""
        return frozenset(n for f in self.frames for n in f.targets)

    def frame_profile(self, index: int) -> str:
        return self.frames[index].profile or self.profile

    def locate(self, index: int) -> tuple[str, int]:
        """(script name, 0-based frame within it) of chain frame `index`,
        for status reports."""
        for part in self.parts:
            if index < part.frames:
                return part.name, index
            index -= part.frames
        raise IndexError(index)

    def where(self) -> str:
        return str(self.source) if self.source is not None else f"script {self.name!r}"


# -- time -----------------------------------------------------------------------------

def _round_half_up(x: Fraction) -> int:
    return math.floor(x + Fraction(1, 2))


def ms_to_ticks(ms: float, tick_hz: float) -> int:
    """Milliseconds to whole ticks, rounded half up, at least 1 (a frame of
    3 ms at 500 Hz lasts 2 ticks = 4 ms; 1 ms lasts 1 tick)."""
    return max(1, _round_half_up(Fraction(ms) * Fraction(tick_hz) / 1000))


# -- loading ----------------------------------------------------------------------------

def _read_yaml(path: Path) -> tuple[Any, yaml.Node | None]:
    """The document and its node tree (for line numbers)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ScriptError(path, f"cannot read: {reason}") from exc
    try:
        data, node = parse_yaml_nodes(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "syntax error"
        col = f" (column {mark.column + 1})" if mark is not None else ""
        raise ScriptError(path, f"not valid YAML{col}: {problem}", line=line) from exc
    except yaml.YAMLError as exc:
        raise ScriptError(path, f"not valid YAML: {exc}") from exc
    return data, node


def _item_nodes(node: yaml.Node | None) -> list[yaml.Node]:
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _value_node(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
    return None


def _line(nodes: list[yaml.Node], i: int) -> int | None:
    return nodes[i].start_mark.line + 1 if i < len(nodes) else None


def _number(value: Any) -> float | None:
    """A YAML int or float as float; None for anything else (bools too)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


class _Lines(NamedTuple):
    frames: list[int | None]                 # per frame
    targets: list[dict[str, int | None]]     # per frame: joint -> line


def load_script(path: str | Path, cfg: JointLimits, *, start: Mapping[str, float]
                | np.ndarray | None = None, profile: str | None = None) -> Script:
    """Read, parse and validate one script file; its name is the file stem.

    `start` (joint name -> rad, or an array in config order) is the pose the
    first frame is checked against for speed; without it a joint's first
    target is checked only against the limits. `profile` is the script's
    profile when the file does not set one (default quintic).
    """
    path = Path(path)
    data, node = _read_yaml(path)
    script_profile = profile or DEFAULT_PROFILE
    frames_node: yaml.Node | None = node
    if isinstance(data, dict):
        unknown = [k for k in data if k not in _FILE_KEYS]
        if unknown:
            raise ScriptError(path, f"unknown key {unknown[0]!r} (expected a list of frames, "
                                    f"or a mapping with {list(_FILE_KEYS)})",
                              line=_key_line(node, unknown[0]))
        if "profile" in data:
            script_profile = data["profile"]
            if script_profile not in PROFILES:
                raise ScriptError(path, f"profile {script_profile!r} is not one of {PROFILES}",
                                  line=_key_line(node, "profile"))
        if "frames" not in data:
            raise ScriptError(path, "missing `frames`")
        frames_node = _value_node(node, "frames")
        data = data["frames"]
    if not isinstance(data, list):
        raise ScriptError(path, f"expected a list of frames, got {type(data).__name__}")
    if not data:
        raise ScriptError(path, "no frames")

    by_lower = {n.lower(): n for n in cfg.joint_names}
    frame_nodes = _item_nodes(frames_node)
    lines = _Lines([], [])
    frames = []
    for i, raw in enumerate(data):
        fline = _line(frame_nodes, i)
        lines.frames.append(fline)
        frames.append(_parse_frame(path, i + 1, fline, raw, frame_nodes[i] if i < len(frame_nodes)
                                   else None, cfg.tick_hz, by_lower, lines))
    script = Script(name=path.stem, frames=tuple(frames), tick_hz=float(cfg.tick_hz),
                    profile=script_profile, source=path)
    validate(script, cfg, start=start, _lines=lines)
    return script


def _key_line(node: yaml.Node | None, key: str) -> int | None:
    if isinstance(node, yaml.MappingNode):
        for k, _ in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == str(key):
                return k.start_mark.line + 1
    return None


def _parse_frame(path: Path, n: int, line: int | None, raw: Any, node: yaml.Node | None,
                 tick_hz: float, by_lower: Mapping[str, str], lines: _Lines) -> Frame:
    def fail(reason: str, at: int | None = line) -> ScriptError:
        return ScriptError(path, reason, frame=n, line=at)

    if not isinstance(raw, dict):
        raise fail(f"expected a mapping with `duration` and `targets`, got {raw!r}")
    for key in raw:
        if key not in _FRAME_KEYS:
            raise fail(f"unknown key {key!r} (a frame has {list(_FRAME_KEYS)})",
                       _key_line(node, key) or line)
    if "duration" not in raw:
        raise fail("missing `duration` (ms)")
    duration = raw["duration"]
    ms = _number(duration)
    if ms is None or not math.isfinite(ms) or ms != int(ms):
        raise fail(f"duration must be a whole number of milliseconds, got {duration!r}")
    if ms <= 0:
        raise fail(f"duration must be positive, got {duration!r} ms")
    profile = raw.get("profile")
    if profile is not None and profile not in PROFILES:
        raise fail(f"profile {profile!r} is not one of {PROFILES}")
    if "targets" not in raw:
        raise fail("missing `targets` (use `targets: []` for a pause)")
    targets_raw = raw["targets"]
    if not isinstance(targets_raw, list):
        raise fail(f"`targets` must be a list, got {type(targets_raw).__name__}")

    target_nodes = _item_nodes(_value_node(node, "targets"))
    targets: dict[str, Target] = {}
    target_lines: dict[str, int | None] = {}
    for j, t in enumerate(targets_raw):
        tline = _line(target_nodes, j) or line
        if not isinstance(t, dict):
            raise fail(f"target {j + 1}: expected {{id, position, gain, torque}}, got {t!r}",
                       tline)
        for key in t:
            if key not in _TARGET_KEYS:
                raise fail(f"target {j + 1}: unknown key {key!r} (a target has "
                           f"{list(_TARGET_KEYS)})", tline)
        for key in ("id", "position", "gain"):
            if key not in t:
                raise fail(f"target {j + 1}: missing `{key}`", tline)
        jid = t["id"]
        if not isinstance(jid, str):
            raise fail(f"target {j + 1}: id must be a joint name, got {jid!r}", tline)
        # Unknown names stay as written; `validate` reports them.
        name = by_lower.get(jid.lower(), jid)
        if name in targets:
            raise fail(f"joint {name!r} is named twice", tline)
        values = []
        for key in ("position", "gain", "torque"):
            v = _number(t.get(key, FULL_TORQUE))
            if v is None:
                raise fail(f"{name}: {key} must be a number, got {t[key]!r}", tline)
            values.append(v)
        targets[name] = Target(*values)
        target_lines[name] = tline
    lines.targets.append(target_lines)
    return Frame(ms_to_ticks(ms, tick_hz), targets, profile)


# -- validation -------------------------------------------------------------------------

def _start_pose(start: Mapping[str, float] | np.ndarray | None,
                names: Sequence[str]) -> dict[str, float]:
    if start is None:
        return {}
    if isinstance(start, Mapping):
        return {str(k): float(v) for k, v in start.items()}
    arr = np.asarray(start, dtype=float)
    if arr.shape != (len(names),):
        raise ValueError(f"start pose must have {len(names)} joints, got shape {arr.shape}")
    return dict(zip(names, arr.tolist()))


def validate(script: Script, cfg: JointLimits, start: Mapping[str, float] | np.ndarray
             | None = None, *, _lines: _Lines | None = None) -> None:
    """Check `script` against the robot; raise ScriptError on the first
    problem: unknown joint, non-finite number, position outside the joint's
    limits, gain or torque outside [0, 100], a peak joint speed above the
    joint's velocity limit (each frame against the previous target of that
    joint, the first against `start` if given), or a tick rate other than
    the robot's."""
    where = script.where()
    if abs(script.tick_hz - cfg.tick_hz) > 1e-9 * cfg.tick_hz:
        raise ScriptError(where, f"timed for {script.tick_hz} Hz, the robot ticks at "
                                 f"{cfg.tick_hz} Hz")
    index = {n: i for i, n in enumerate(cfg.joint_names)}
    last = _start_pose(start, cfg.joint_names)
    for k, frame in enumerate(script.frames):
        profile = script.frame_profile(k)
        seconds = frame.duration_ticks / script.tick_hz
        for name, t in frame.targets.items():
            reason = _target_problem(cfg, index.get(name), name, t, last.get(name), profile,
                                     seconds)
            if reason is not None:
                line = None
                if _lines is not None:
                    line = _lines.targets[k].get(name, _lines.frames[k])
                detail = ""
                if len(script.parts) > 1:
                    part, within = script.locate(k)
                    detail = f"{part} frame {within + 1}"
                raise ScriptError(where, reason, frame=k + 1, line=line, detail=detail)
            last[name] = t.position


def _target_problem(cfg: JointLimits, i: int | None, name: str, t: Target,
                    previous: float | None, profile: str, seconds: float) -> str | None:
    """Why one target of a frame is invalid, or None."""
    if i is None:
        return f"unknown joint id {name!r} (the robot's joints: {', '.join(cfg.joint_names)})"
    for key, value in zip(Target._fields, t):
        if not math.isfinite(value):
            return f"{name}: {key} must be finite, got {value}"
    lo, hi = float(cfg.q_min[i]), float(cfg.q_max[i])
    if not lo <= t.position <= hi:
        return f"{name}: position {t.position:g} rad is outside its limits [{lo:g}, {hi:g}]"
    if not GAIN_RANGE[0] <= t.gain <= GAIN_RANGE[1]:
        return f"{name}: gain {t.gain:g} is outside {list(GAIN_RANGE)}"
    if not TORQUE_RANGE[0] <= t.torque <= TORQUE_RANGE[1]:
        return f"{name}: torque {t.torque:g} is outside {list(TORQUE_RANGE)}"
    if previous is not None:
        delta = abs(t.position - previous)
        peak = PEAK_OVER_MEAN[profile] * delta / seconds
        vmax = float(cfg.v_max[i])
        if peak > vmax * (1.0 + SPEED_TOLERANCE):
            need_ms = math.ceil(PEAK_OVER_MEAN[profile] * delta / vmax * 1000)
            return (f"{name}: moves {delta:.3g} rad (from {previous:g} to {t.position:g}) in "
                    f"{seconds * 1000:g} ms, a peak speed of {peak:.3g} rad/s with the "
                    f"{profile} profile, above its limit {vmax:g} rad/s (needs at least "
                    f"{need_ms} ms)")
    return None


def load_directory(directory: str | Path, cfg: JointLimits
                   ) -> tuple[dict[str, Script], list[ScriptError]]:
    """Every `*.yaml` script in `directory`, by name, and the errors of the
    bad ones (for the daemon at start and `motionctl validate`: refuse the
    bad files, keep the rest)."""
    scripts: dict[str, Script] = {}
    errors: list[ScriptError] = []
    for path in sorted(Path(directory).glob(f"*{SCRIPT_SUFFIX}")):
        try:
            scripts[path.stem] = load_script(path, cfg)
        except ScriptError as exc:
            errors.append(exc)
    return scripts, errors


# -- names ------------------------------------------------------------------------------

def resolve_script(name: str, directories: Iterable[str | Path]) -> Path:
    """The file of script `name`: `<dir>/<name>.yaml` in the first directory
    that has it (a trailing `.yaml` on the name is allowed, as NUbots names
    its scripts "Stand.yaml"). Names with a path separator, `..`, a NUL or
    anything beyond letters, digits, `_ . -` are refused before any file is
    touched, and so is a file that resolves outside its directory (a symlink
    out)."""
    if not isinstance(name, str) or not name:
        raise ScriptError(f"script name {name!r}", "not a script name")
    reason = None
    if "\0" in name:
        reason = "contains a NUL character"
    elif "/" in name or "\\" in name or os.sep in name or (os.altsep and os.altsep in name):
        reason = "contains a path separator; give the bare name of a file in a script directory"
    elif ".." in name:
        reason = "contains `..`"
    elif not _NAME_RE.fullmatch(name):
        reason = "may only use letters, digits, `_`, `.` and `-`, and not start with `.`"
    if reason:
        raise ScriptError(f"script name {name!r}", f"refused: {reason}")
    stem = name.removesuffix(SCRIPT_SUFFIX)
    searched = []
    for directory in directories:
        root = Path(directory).resolve()
        searched.append(str(root))
        candidate = (root / f"{stem}{SCRIPT_SUFFIX}").resolve()
        if not candidate.is_relative_to(root):
            raise ScriptError(f"script name {name!r}",
                              f"refused: resolves to {candidate}, outside {root}")
        if candidate.is_file():
            return candidate
    raise ScriptError(f"script name {name!r}",
                      f"no such script in the script directories {searched}")


# -- operations ---------------------------------------------------------------------------

def chain(scripts: Sequence[Script]) -> Script:
    """One script playing `scripts` back to back (NUbots' ["Stand.yaml",
    "KickRight.yaml", "Stand.yaml"]). Each frame keeps the profile it had,
    including its script's default, and `parts` records where each script
    begins for status reports. Validate the result: a junction between two
    scripts can be too fast for a joint."""
    if not scripts:
        raise ValueError("chain needs at least one script")
    rates = {s.tick_hz for s in scripts}
    if len(rates) > 1:
        raise ValueError(f"scripts timed for different tick rates {sorted(rates)}")
    frames = tuple(replace(f, profile=s.frame_profile(k))
                   for s in scripts for k, f in enumerate(s.frames))
    parts = tuple(p for s in scripts for p in s.parts)
    return Script(name="+".join(s.name for s in scripts), frames=frames,
                  tick_hz=scripts[0].tick_hz, profile=scripts[0].profile, source=None,
                  mirrored=all(s.mirrored for s in scripts), parts=parts)


def _retime(script: Script, ratio: Fraction) -> Script:
    """Scale every frame boundary (ticks from the script start) by `ratio`
    and round it half up, so rounding never accumulates along the script;
    every frame keeps at least one tick, taken from the frames after it."""
    n = len(script.frames)
    total = max(n, _round_half_up(script.total_ticks * ratio))
    bounds, cum, prev = [], 0, 0
    for k, frame in enumerate(script.frames):
        cum += frame.duration_ticks
        b = total if k == n - 1 else _round_half_up(cum * ratio)
        b = min(max(b, prev + 1), total - (n - 1 - k))
        bounds.append(b)
        prev = b
    ticks = np.diff([0, *bounds]).tolist()
    frames = tuple(replace(f, duration_ticks=int(d)) for f, d in zip(script.frames, ticks))
    return replace(script, frames=frames)


def stretch(script: Script, total_ms: float) -> Script:
    """The script retimed to last `total_ms` (rounded half up to whole ticks),
    every frame in proportion."""
    if isinstance(total_ms, bool) or not isinstance(total_ms, (int, float)) \
            or not math.isfinite(total_ms) or total_ms <= 0:
        raise ValueError(f"total duration must be a positive number of ms, got {total_ms!r}")
    total = ms_to_ticks(total_ms, script.tick_hz)
    if total < len(script.frames):
        raise ValueError(f"{total_ms:g} ms is {total} ticks, fewer than the "
                         f"{len(script.frames)} frames of {script.name!r}")
    return _retime(script, Fraction(total, script.total_ticks))


def speed(script: Script, factor: float) -> Script:
    """The script played `factor` times as fast: factor 2 halves every frame
    boundary (a frame of 3 ticks gets 2 or 1, the script's total the rounded
    half), factor 0.5 doubles it; a frame never gets 0 ticks."""
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) \
            or not math.isfinite(factor) or factor <= 0:
        raise ValueError(f"speed factor must be a positive number, got {factor!r}")
    return _retime(script, 1 / Fraction(factor))


def mirror(script: Script, pairs: Iterable[tuple[str, str]], negate: Collection[str]) -> Script:
    """The script with left and right swapped: each joint of a pair takes the
    other's target, and joints in `negate` (roll and yaw joints, whose axes
    point along x and z and so flip under the left-right reflection; pitch
    axes point along y and keep their sign) change sign. Joints in no pair
    (the head) map to themselves. Both lists are robot data from the config.
    mirror(mirror(s)) == s."""
    swap: dict[str, str] = {}
    for a, b in pairs:
        if a == b or a in swap or b in swap:
            raise ValueError(f"mirror pair ({a}, {b}) repeats a joint")
        swap[a], swap[b] = b, a
    neg = frozenset(negate)
    for a, b in swap.items():
        # Both of a pair must flip or neither, or mirroring twice would not
        # be the identity.
        if (a in neg) != (b in neg):
            raise ValueError(f"mirror pair ({a}, {b}): negate lists only one of them")

    def flip(name: str, t: Target) -> tuple[str, Target]:
        # 0.0 - p rather than -p: no -0.0 appears, and it is still exact.
        return swap.get(name, name), t._replace(position=0.0 - t.position) if name in neg else t

    frames = tuple(replace(f, targets=dict(flip(n, t) for n, t in f.targets.items()))
                   for f in script.frames)
    parts = tuple(p._replace(mirrored=not p.mirrored) for p in script.parts)
    return replace(script, frames=frames, mirrored=not script.mirrored, parts=parts)


# -- playing ---------------------------------------------------------------------------

class KernelLike(Protocol):
    """The part of controller.robot.native.Kernel the player writes."""

    def move(self, start: Any, end: Any, t0: float, duration: float, profile: int = ...,
             idx: Any = ...) -> None: ...

    def set_gains(self, kp: Any, kd: Any, t0: float = ..., ramp: float = ...,
                  idx: Any = ...) -> None: ...


class PlayState(NamedTuple):
    frame: int       # 0-based frame playing at this tick (the last one once done)
    progress: int    # 0..100 of the script's ticks, 100 exactly at its end tick


@dataclass(frozen=True)
class _Planned:
    idx: np.ndarray        # kernel indices of the frame's joints
    end: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    relaxed: np.ndarray    # bool per joint: torque 0
    profile: int
    start_tick: int        # relative to the script start
    ticks: int


class ScriptPlayer:
    """Plays one Script into a kernel on an injected integer tick clock.

    Each frame is one `kernel.move` (and one `set_gains`) for the joints it
    names, issued on the frame's first tick with t0 and duration in kernel
    seconds: from the previous target of each joint (for the first frame the
    command `q_now` given to `start`) to the frame's targets, with the
    frame's profile. Joints a frame does not name are not touched and keep
    their target. Call `step(tick)` every tick before the kernel steps at
    `seconds(tick)`; if a tick is skipped, the frames due are issued late
    with their own start times, so the timing still holds.
    """

    def __init__(self, kernel: KernelLike, joints: Mapping[str, int], dt: float,
                 limits: JointLimits | None = None,
                 seconds: Callable[[int], float] | None = None) -> None:
        self.kernel = kernel
        self.joints = dict(joints)
        self.dt = dt
        self.limits = limits
        # The controller steps its kernel at tick * dt; using the same float
        # expression here makes (t - t0) / dur exactly 1.0 at each end tick.
        self.seconds = seconds or (lambda tick: tick * dt)
        self.script: Script | None = None
        self._plan: list[_Planned] = []
        self._ends: list[int] = []
        self._t0 = 0
        self._next = 0
        self._target = np.zeros(0)
        self._relaxed = np.zeros(0, dtype=bool)
        self.state = PlayState(0, 0)

    @classmethod
    def for_config(cls, kernel: KernelLike, cfg: Any) -> ScriptPlayer:
        """A player over every joint of `cfg` (a controller.robot.config.Config),
        validating against its limits."""
        return cls(kernel, {n: i for i, n in enumerate(cfg.joint_names)}, cfg.dt, limits=cfg)

    @property
    def done(self) -> bool:
        return self.script is None or self.state.progress >= 100

    def start(self, script: Script, t_now: int, q_now: Sequence[float] | np.ndarray) -> None:
        """Begin `script` at tick `t_now` from the joint command `q_now`
        (kernel order). With limits, the script is validated from q_now first
        and refused with a ScriptError (nothing written) if, e.g., its first
        frame is too fast from where the joints are."""
        if abs(script.tick_hz * self.dt - 1.0) > 1e-9:
            raise ScriptError(script.where(), f"timed for {script.tick_hz} Hz, the player "
                                              f"ticks every {self.dt} s")
        q = np.array(q_now, dtype=float)
        missing = sorted(script.joints - self.joints.keys())
        if missing:
            raise ScriptError(script.where(), f"joints {missing} are not driven by this player")
        if self.limits is not None:
            names = self.limits.joint_names
            pose = {n: float(q[self.joints[n]]) for n in names if n in self.joints}
            validate(script, self.limits, start=pose)
        plan, offset = [], 0
        for k, frame in enumerate(script.frames):
            names = list(frame.targets)
            tgt = [frame.targets[n] for n in names]
            scale = np.array([t.torque / FULL_TORQUE for t in tgt])
            kp = np.array([t.gain for t in tgt]) * GAIN_TO_KP * scale
            plan.append(_Planned(
                idx=np.array([self.joints[n] for n in names], dtype=np.intp),
                end=np.array([t.position for t in tgt]),
                kp=kp, kd=kp * KD_PER_KP,
                relaxed=np.array([t.torque == 0.0 for t in tgt], dtype=bool),
                profile=PROFILE_CODE[script.frame_profile(k)],
                start_tick=offset, ticks=frame.duration_ticks))
            offset += frame.duration_ticks
        self.script = script
        self._plan = plan
        self._ends = [p.start_tick + p.ticks for p in plan]
        self._t0 = int(t_now)
        self._next = 0
        self._target = q
        self._relaxed = np.zeros(len(q), dtype=bool)
        self.step(self._t0)

    def step(self, t: int, q_measured: Sequence[float] | np.ndarray | None = None) -> PlayState:
        """Issue the frames due at tick `t`; return (frame, progress).

        `q_measured` (kernel order), if given, is where a joint that a
        torque-0 frame left limp starts when a later frame stiffens it
        again: a limp joint drifts, and a segment from its stale target
        would yank it."""
        if self.script is None:
            raise RuntimeError("no script started")
        rel = int(t) - self._t0
        while self._next < len(self._plan) and self._plan[self._next].start_tick <= rel:
            self._issue(self._plan[self._next], q_measured)
            self._next += 1
        total = self._ends[-1]
        frame = min(bisect_right(self._ends, max(rel, 0)), len(self._plan) - 1)
        progress = 100 if rel >= total else max(0, rel) * 100 // total
        self.state = PlayState(frame, progress)
        return self.state

    def _issue(self, p: _Planned, q_measured: Sequence[float] | np.ndarray | None) -> None:
        if p.idx.size == 0:       # a pause: every joint keeps its target
            return
        start = self._target[p.idx]
        if q_measured is not None:
            waking = self._relaxed[p.idx] & ~p.relaxed
            start = np.where(waking, np.asarray(q_measured, dtype=float)[p.idx], start)
        t0 = self.seconds(self._t0 + p.start_tick)
        # The duration as the difference of the two kernel times, so the
        # kernel's (t - t0) / dur is exactly 1.0 at the end tick.
        duration = self.seconds(self._t0 + p.start_tick + p.ticks) - t0
        self.kernel.move(start, p.end, t0, duration, p.profile, idx=p.idx)
        # The ramp in whole ticks, as a difference of kernel times like the
        # duration, so the gains are exactly the new ones on its last tick.
        ramp_ticks = min(p.ticks, max(1, round(GAIN_RAMP_S / self.dt)))
        ramp = self.seconds(self._t0 + p.start_tick + ramp_ticks) - t0
        self.kernel.set_gains(p.kp, p.kd, t0=t0, ramp=ramp, idx=p.idx)
        self._target[p.idx] = p.end
        self._relaxed[p.idx] = p.relaxed
