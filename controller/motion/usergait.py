"""Uploaded user gaits (SPEC §8): Gait Def, Gait Params and the usergait packing.

* `parse_gait_def` reads the line-oriented contact timetable of SPEC §8.2 into
  a `GaitDef`, whose `contact_table()` is the per-segment stance/swing table
  that controller.motion.gait_table.GaitDefinition turns into per-leg runs and
  phases; `GaitDef.definition` makes that mode-11 gait (an upload's 110, or an
  on-disk file's, controller.motion.user_gait_files).
* `parse_gait_params` reads the uploaded "full" step list of SPEC §8.3 into
  queue blocks, refusing (StepError) what the reference aborts on (SPEC §11).
* `usergait_step_to_fields` packs the human-friendly `type = "usergait"` step
  into command fields (SPEC §8.4; what the official client does before an
  upload); `decode_user_gait` unpacks and sanitises a mode-11 block's fields.

Pure: no I/O, no clock. Problems the reference tolerates come back as
warnings (strings naming the document, line or step, and key) in the list the
caller passes as `warnings`.
"""
from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from controller.motion.gait_table import MAX_SEGMENTS as MAX_PERIOD_SEGMENTS
from controller.motion.gait_table import SEGMENT_MS, GaitDefinition, from_sections
from controller.motion.steps import (
    FROM_MOTION,
    TICK_MS,
    StepContext,
    StepError,
    apply_command_fields,
    read_steps,
    record_from,
)
from controller.protocol.block import Block
from controller.protocol.constants import MOTION_MODE, USER_GAIT

DEF_HEADER = "# Gait Def"          # SPEC §8.1: what the upload checks
PARAMS_HEADER = "# Gait Params"
MAX_SECTION_SEGMENTS = 1000        # 30 s per section
MAX_SECTIONS = 256
MAX_TEXT_CHARS = 256 * 1024        # an upload is parsed inside a tick: bound the work
LOCOMOTION = 11
USER_GAIT_IDS = frozenset(range(80, 101)) | {USER_GAIT}   # SPEC §5.2
USER_GAIT_WINDOW = np.array([1.5, 0.3, 1.0])   # vx, vy, yaw rate: motion gaits' (SPEC §12.A.1, §12.A.3)

LEGS = ("FR", "FL", "RR", "RL")          # SPEC conventions: leg i is bit i of a mask
Contact = tuple[bool, bool, bool, bool]   # FR, FL, RR, RL; True = stance
FULL_CONTACT: Contact = (True, True, True, True)


class GaitDefError(ValueError):
    """A Gait Def is refused (too large) or a GaitDef is built from bad sections."""


# -- Gait Def (SPEC §8.2) ---------------------------------------------------------


@dataclass(frozen=True)
class GaitSection:
    contact: Contact     # per leg FR, FL, RR, RL: True = stance, False = swing
    segments: int        # length in 30 ms MPC segments

    def __post_init__(self) -> None:
        if len(self.contact) != 4 or not all(isinstance(c, bool) for c in self.contact):
            raise GaitDefError(f"contact must be 4 booleans (FR, FL, RR, RL), got {self.contact!r}")
        if isinstance(self.segments, bool) or not isinstance(self.segments, int) \
                or not 1 <= self.segments <= MAX_SECTION_SEGMENTS:
            raise GaitDefError(f"segments must be an integer in 1..{MAX_SECTION_SEGMENTS}, "
                               f"got {self.segments!r}")


@dataclass(frozen=True)
class GaitDef:
    """A cyclic contact timetable. `period_segments` is the sum of the sections."""

    sections: tuple[GaitSection, ...]
    period_segments: int = field(init=False)

    def __post_init__(self) -> None:
        sections = tuple(self.sections)
        if not 1 <= len(sections) <= MAX_SECTIONS:
            raise GaitDefError(f"a gait needs 1..{MAX_SECTIONS} sections, got {len(sections)}")
        if not all(isinstance(s, GaitSection) for s in sections):
            raise GaitDefError("sections must be GaitSection values")
        period = sum(s.segments for s in sections)
        if period > MAX_PERIOD_SEGMENTS:
            raise GaitDefError(f"the cycle is {period} segments; at most {MAX_PERIOD_SEGMENTS} "
                               f"({MAX_PERIOD_SEGMENTS * SEGMENT_MS / 1000:g} s) are allowed")
        object.__setattr__(self, "sections", sections)
        object.__setattr__(self, "period_segments", period)

    @property
    def period_s(self) -> float:
        return self.period_segments * SEGMENT_MS / 1000

    def contact_table(self) -> np.ndarray:
        """The (period_segments, 4) bool contact table, True = stance, legs FR, FL, RR, RL.

        controller.motion.gait_table.GaitDefinition turns it into per-leg stance/swing
        runs and phases (merged across sections and around the cycle wrap).
        """
        return from_sections([(s.contact, s.segments) for s in self.sections], 4)

    def definition(self, gait_id: int, name: str, source: str) -> GaitDefinition:
        """The mode-11 gait of user gait `gait_id` (80-100 or 110) with this
        timetable and the motion gaits' velocity window (SPEC §12.A.3)."""
        return GaitDefinition(id=gait_id, name=name, contact=self.contact_table(),
                              window_min=-USER_GAIT_WINDOW, window_max=USER_GAIT_WINDOW, source=source)


_SECTION = "[[section]]"
_CONTACT = re.compile(r"contact\s*=\s*\[([^\]]*)\]\s*(?:#.*)?")
_DURATION = re.compile(r"duration\s*=\s*([+-]?\d+)\s*(?:#.*)?")


class _Skip(Exception):
    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


def parse_gait_def(text: str, *, name: str = "Gait Def",
                   warnings: list[str] | None = None, header: bool = True) -> GaitDef:
    """Read an uploaded Gait Def (SPEC §8.2), leniently like the reference.

    Each `[[section]]` line must be followed immediately by a
    `contact = [FR, FL, RR, RL]` line (1 stance, 0 swing) and a `duration = N`
    line (N in 1..1000 segments of 30 ms). A section that does not fit is
    skipped, with its following lines up to the next `[[section]]`; other
    non-blank lines that are not comments are skipped too. Each skip is a
    warning with its line number. The last section is forced to full contact;
    with no valid section the gait is one all-contact section of one segment.

    `header` False reads a Def file on disk (controller.motion.user_gait_files),
    which needs no `# Gait Def` first line: only an upload is told apart by it.

    Raises GaitDefError only for a text over MAX_TEXT_CHARS, more than
    MAX_SECTIONS sections or a cycle over MAX_PERIOD_SEGMENTS: truncating a
    gait would change it, so it is refused instead.
    """
    sink = warnings if warnings is not None else []
    if len(text) > MAX_TEXT_CHARS:
        raise GaitDefError(f"{name}: {len(text)} characters; at most {MAX_TEXT_CHARS} are accepted")
    if header and not text.startswith(DEF_HEADER):
        sink.append(f"{name}: line 1: does not start with {DEF_HEADER!r}; an upload without "
                    "it is not stored as a Gait Def (SPEC §8.1)")
    lines = text.splitlines()
    sections: list[GaitSection] = []
    last_contact_line = 0
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith(_SECTION):
            try:
                section = _read_section(lines, i)
            except _Skip as skip:
                sink.append(f"{name}: line {skip.line}: section of line {i + 1} skipped: {skip.reason}")
                i += 1
                while i < len(lines) and not lines[i].strip().startswith(_SECTION):
                    i += 1
                continue
            if len(sections) == MAX_SECTIONS:
                raise GaitDefError(f"{name}: line {i + 1}: more than {MAX_SECTIONS} sections")
            sections.append(section)
            last_contact_line = i + 2
            i += 3
        else:
            if line and not line.startswith("#"):
                sink.append(f"{name}: line {i + 1}: skipped: not part of a section: {line[:60]!r}")
            i += 1
    if not sections:
        sink.append(f"{name}: no valid section: using one all-contact section of 1 segment (SPEC §8.2)")
        sections.append(GaitSection(FULL_CONTACT, 1))
    elif sections[-1].contact != FULL_CONTACT:
        sink.append(f"{name}: line {last_contact_line}: the last section's contact is forced "
                    "to full contact [1, 1, 1, 1] (SPEC §8.2)")
        sections[-1] = GaitSection(FULL_CONTACT, sections[-1].segments)
    try:
        return GaitDef(tuple(sections))
    except GaitDefError as exc:
        raise GaitDefError(f"{name}: {exc}") from None


def _read_section(lines: Sequence[str], i: int) -> GaitSection:
    """The section whose `[[section]]` line is lines[i]; _Skip names the bad line (1-based)."""
    contact_line = lines[i + 1].strip() if i + 1 < len(lines) else ""
    m = _CONTACT.fullmatch(contact_line)
    if m is None:
        raise _Skip(i + 2, "expected 'contact = [FR, FL, RR, RL]' on the next line, got "
                           f"{contact_line[:60]!r}")
    values = [v.strip() for v in m.group(1).split(",")]
    if len(values) != 4 or any(v not in ("0", "1") for v in values):
        raise _Skip(i + 2, f"contact needs 4 values, each 1 (stance) or 0 (swing), got [{m.group(1)}]")
    duration_line = lines[i + 2].strip() if i + 2 < len(lines) else ""
    m = _DURATION.fullmatch(duration_line)
    if m is None:
        raise _Skip(i + 3, "expected 'duration = N' (30 ms segments) after the contact line, got "
                           f"{duration_line[:60]!r}")
    segments = int(m.group(1))
    if not 1 <= segments <= MAX_SECTION_SEGMENTS:
        raise _Skip(i + 3, f"duration must be 1..{MAX_SECTION_SEGMENTS} segments, got {segments}")
    fr, fl, rr, rl = (v == "1" for v in values)
    return GaitSection((fr, fl, rr, rl), segments)


# -- Gait Params (SPEC §8.3) ------------------------------------------------------


def parse_gait_params(text: str, tick_ms: float = TICK_MS, *, name: str = "Gait Params",
                      source: str = FROM_MOTION, warnings: list[str] | None = None) -> list[Block]:
    """Read uploaded Gait Params ("full" form, SPEC §8.3) into queue blocks.

    `[[step]]` tables whose keys are robot_control_cmd fields; each step
    inherits what it does not set from the previous one (the first from
    zeros), durations are ms halved to ticks, and a missing duration halves
    the inherited ticks again (controller.motion.steps). `life_count` is accepted and
    ignored. Arrays of the wrong length and unknown keys are ignored, with a
    warning.

    Refused with StepError (SPEC §11; the reference aborts or never ends):
    invalid TOML (the error names the line), no `[[step]]` at all, a wrong
    type, a non-finite number, an integer outside its int8/int32 wire range,
    a negative duration, a step of mode 62 (motions do not nest), a
    continuous (0-tick) first step, a continuous step with steps after it, a
    text over MAX_TEXT_CHARS. An empty document is refused too, where the
    reference would queue one pose-hold filler: running 62/110 then does
    nothing useful, and §11 refuses Params with no `[[step]]`.
    """
    sink = warnings if warnings is not None else []
    if len(text) > MAX_TEXT_CHARS:
        raise StepError(name, None, None, f"{len(text)} characters; at most {MAX_TEXT_CHARS} are accepted")
    if not text.startswith(PARAMS_HEADER):
        sink.append(f"{name}: line 1: does not start with {PARAMS_HEADER!r}; an upload without "
                    "it is not stored as Gait Params (SPEC §8.1)")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"at line (\d+)", str(exc))
        raise StepError(name, None, None, f"not valid TOML: {exc}",
                        line=int(m.group(1)) if m else None) from None
    return read_steps(document, name, _params_step, tick_ms=tick_ms, source=source, warnings=sink)


def _params_step(ctx: StepContext) -> list[Block]:
    had_mode = "mode" in ctx.table
    apply_command_fields(ctx)
    ctx.get_int("life_count", 32)   # the official converter may write it; never used
    mode = ctx.record.fields["mode"]
    if mode == MOTION_MODE:
        raise ctx.error("mode", "62: a motion step cannot start another motion")
    if mode == 0:
        how = "" if had_mode else "missing, so it inherits "
        ctx.warn("mode", f"{how}0 (OFF): the motors go passive during this step")
    ctx.take_duration()
    return [ctx.block()]


# -- the usergait step and its packing (SPEC §8.4) ----------------------------------

LANDING_GAIN_SCALE = 10.0          # contact = floor(landing_gain x 10)
STEP_HEIGHT_DIGITS = 1000          # three decimal digits (mm) per leg


def pack_step_heights(heights: Sequence[float]) -> list[float]:
    """Per-leg heights FR, FL, RR, RL (m, 0..0.999) -> the two packed step_height floats.

    step_height[0] = ceil(h_FR*1000) + 1000*ceil(h_FL*1000), step_height[1] the
    same for RR and RL (SPEC §8.4). ValueError for a height that does not fit three digits.
    """
    if len(heights) != 4:
        raise ValueError(f"expected 4 heights (FR, FL, RR, RL), got {len(heights)}")
    mm = []
    for leg, h in zip(LEGS, heights):
        if not (math.isfinite(h) and 0.0 <= h <= 0.999):
            raise ValueError(f"{leg} height {h} m does not fit the packing (0 to 0.999 m)")
        mm.append(max(0, math.ceil(h * STEP_HEIGHT_DIGITS)))
    return [float(mm[0] + STEP_HEIGHT_DIGITS * mm[1]), float(mm[2] + STEP_HEIGHT_DIGITS * mm[3])]


def unpack_step_heights(packed: Sequence[float]) -> tuple[float, float, float, float]:
    """The two packed floats -> heights FR, FL, RR, RL in m, unclamped (SPEC §8.4).

    Each float is truncated to an integer; the low three digits are the first
    leg's mm, the rest the second's. A negative or non-finite float counts as 0.
    """
    heights: list[float] = []
    for value in packed[:2]:
        n = int(value) if math.isfinite(value) and value > 0 else 0
        heights += [(n % STEP_HEIGHT_DIGITS) * 0.001, (n // STEP_HEIGHT_DIGITS) * 0.001]
    fr, fl, rr, rl = heights
    return fr, fl, rr, rl


def pack_landing_gain(gain: float) -> int:
    """contact = floor(landing_gain x 10) (SPEC §8.4); ValueError when it does not fit an int8."""
    contact = math.floor(gain * LANDING_GAIN_SCALE)
    if not -128 <= contact <= 127:
        raise ValueError(f"{gain} x 10 does not fit the int8 contact field")
    return contact


def unpack_landing_gain(contact: int, limits: UserGaitLimits | None = None) -> float | None:
    """(contact mod 100) / 10, or None outside the accepted range, where the
    controller substitutes its default 1.0 (SPEC §8.4).

    The reference's C++ `%` keeps the sign of a negative contact, so a
    negative gain results and is replaced; math.fmod does the same.
    """
    lo, hi = (limits or DEFAULT_LIMITS).landing_gain
    gain = math.fmod(contact, 100) / LANDING_GAIN_SCALE
    return gain if lo <= gain <= hi else None


def apply_usergait(ctx: StepContext) -> None:
    """Write a `type = "usergait"` step into the record (SPEC §4.6, §8.4).

    Keys: gait_id, body_vel_des[3], body_pos_des[6] (roll pitch yaw x y z),
    landing_pos_des[12] (x y z per leg FR FL RR RL; z unused), step_height[4]
    (m per leg), weight[6], use_mpc_traj (0/1), landing_gain, mu. A missing
    key keeps the record's value; element-wise for ctrl_point, whose [0..1]
    come from landing_pos_des and [2] from mu. `duration` is not read here.

    Deliberate difference: the reference turns a missing landing_gain into
    contact = previous contact x 10 (an int8 overflow after two steps); here
    contact keeps its value, so the landing gain carries over like any field.
    """
    f = ctx.record.fields
    kind = ctx.get_text("type")
    if kind is not None and kind != "usergait":
        raise ctx.error("type", f"expected 'usergait', got {kind!r}")
    f["mode"] = LOCOMOTION
    gait = ctx.get_int("gait_id", 8)
    if gait is not None:
        f["gait_id"] = gait
    if f["gait_id"] not in USER_GAIT_IDS:
        how = "" if gait is not None else "missing, so it inherits "
        ctx.warn("gait_id", f"{how}{f['gait_id']}, which is not a user gait (80-100, 110; SPEC §5.2)")
    vel = ctx.get_array("body_vel_des", 3)
    if vel is not None:
        f["vel_des"] = vel
    pose = ctx.get_array("body_pos_des", 6)
    if pose is not None:
        f["rpy_des"], f["pos_des"] = pose[:3], pose[3:]
    _apply_landing(ctx)
    heights = ctx.get_array("step_height", 4)
    if heights is not None:
        try:
            f["step_height"] = pack_step_heights(heights)
        except ValueError as exc:
            raise ctx.error("step_height", str(exc)) from None
        top = DEFAULT_LIMITS.step_height[1]
        if max(heights) > top:
            ctx.warn("step_height", f"above {top} m: decoding clamps it to {top} m")
    weight = ctx.get_array("weight", 6)
    if weight is not None:
        f["acc_des"] = weight
    mpc = ctx.get_flag("use_mpc_traj")
    if mpc is not None:
        f["value"] = int(mpc)   # the whole value, as the reference: bits 1-3 are cleared
    _apply_landing_gain(ctx)
    mu = ctx.get_number("mu")
    if mu is not None:
        if not DEFAULT_LIMITS.mu_ok(mu):
            lo, hi = DEFAULT_LIMITS.mu_range()
            ctx.warn("mu", f"{mu} is outside [{lo:g}, {hi:g}]: the controller uses "
                           f"{DEFAULT_LIMITS.default_mu}")
        f["ctrl_point"][2] = mu


def _apply_landing(ctx: StepContext) -> None:
    landing = ctx.get_array("landing_pos_des", 12)
    if landing is None:
        return
    fr, fl, rr, rl = (landing[3 * leg:3 * leg + 3] for leg in range(4))
    ctx.record.fields["foot_pose"] = [fr[0], fr[1], fl[0], fl[1], rr[0], rr[1]]
    ctx.record.fields["ctrl_point"][0:2] = [rl[0], rl[1]]
    if any(p[2] != 0.0 for p in (fr, fl, rr, rl)):
        ctx.warn("landing_pos_des", "the z values are not transmitted (SPEC §8.4)")


def _apply_landing_gain(ctx: StepContext) -> None:
    gain = ctx.get_number("landing_gain")
    if gain is None:
        return
    try:
        contact = pack_landing_gain(gain)
    except ValueError as exc:
        raise ctx.error("landing_gain", str(exc)) from None
    decoded = unpack_landing_gain(contact)
    if decoded is None:
        ctx.warn("landing_gain", f"{gain} packs to contact {contact}, which the controller "
                                 f"decodes as the default {DEFAULT_LIMITS.default_landing_gain}")
    elif abs(decoded - gain) >= 0.1:
        ctx.warn("landing_gain", f"{gain} packs to contact {contact}, decoded as {decoded:g}")
    ctx.record.fields["contact"] = contact


def usergait_step(ctx: StepContext) -> list[Block]:
    """A step handler for `type = "usergait"` in a step file (SPEC §4.6)."""
    apply_usergait(ctx)
    ctx.take_duration()
    return [ctx.block()]


def usergait_step_to_fields(step: Mapping[str, Any], previous: Mapping[str, Any] | None = None,
                            *, warnings: list[str] | None = None) -> dict[str, Any]:
    """Pack one human-friendly usergait step into robot_control_cmd fields (SPEC §8.4).

    The result is a full-form Params step: every command field in message
    form (mode 11, ints, lists of floats), `duration` in ms. Fields the step
    does not set come from `previous` (the preceding full-form step), or zero.
    Raises StepError for a value that cannot be packed; wrong-length arrays
    and unknown keys become warnings.
    """
    sink = warnings if warnings is not None else []
    ctx = StepContext("usergait step", None, step, record_from(previous), warnings=sink)
    apply_usergait(ctx)
    ms = ctx.get_int("duration", 32)
    if ms is not None:
        if ms < 0:
            raise ctx.error("duration", f"must be >= 0 ms, got {ms}")
        ctx.record.fields["duration"] = ms
    ctx.report_unused()
    return ctx.record.fields


# -- decoding and sanitising (SPEC §8.4) --------------------------------------------


@dataclass(frozen=True)
class UserGaitLimits:
    """The numbers decode_user_gait sanitises with. Robot numbers (CyberDog 2
    defaults): the integrator may fill them from config."""

    nominal_body_height: float = 0.225               # body height = this + pos_des z (SPEC §8.4)
    # m: motiond clamp. The floor lets the push-up's plank (the robot's own
    # file asks 0.225 - 0.12 = 0.105 m) through; the ceiling is §11's.
    body_height: tuple[float, float] = (0.10, 0.30)
    pitch: tuple[float, float] = (-0.25, 0.30)       # rad: the doc's mode-11 pitch range (SPEC §9)
    step_height: tuple[float, float] = (0.0, 0.08)   # m: motiond clamp; 0.08 is the struct's documented top
    # m, |x| and |y| per leg from below the hip: motiond clamp. The push-up's
    # rear feet ask x -0.26 (beyond CyberDog 2's reach at its plank: the leg
    # lands stretched); no file of the robot's asks more than 0.05 sideways.
    landing_offset: tuple[float, float] = (0.30, 0.10)
    min_wbc_weight: float = 1e-5                     # SPEC §8.4
    default_mu: float = 0.4                          # SPEC §8.4
    mu_factor: tuple[float, float] = (0.1, 5.0)      # x default_mu: [0.04, 2.0] (SPEC §8.4)
    landing_gain: tuple[float, float] = (0.01, 10.0)  # SPEC §8.4
    default_landing_gain: float = 1.0

    def mu_range(self) -> tuple[float, float]:
        return self.mu_factor[0] * self.default_mu, self.mu_factor[1] * self.default_mu

    def mu_ok(self, mu: float) -> bool:
        """Inside mu_range, with a relative 1e-6 slack: mu crosses the wire as
        a float32, so an exact 0.04 arrives as 0.0399999991 and 0.1 x 0.4 is
        0.04000000000000001; the bounds themselves must stay accepted."""
        lo, hi = self.mu_range()
        return math.isfinite(mu) and lo * (1 - 1e-6) <= mu <= hi * (1 + 1e-6)


DEFAULT_LIMITS = UserGaitLimits()

Pair = tuple[float, float]


@dataclass(frozen=True)
class UserGaitParams:
    """A user-gait block's parameters, decoded and sanitised (SPEC §8.4)."""

    gait_id: int
    body_velocity: tuple[float, float, float]   # vx, vy (m/s), yaw rate (rad/s), as commanded
    pitch: float                                # rad
    body_height: float                          # m
    step_heights: tuple[float, float, float, float]     # m per leg FR, FL, RR, RL
    landing_offsets: tuple[Pair, Pair, Pair, Pair]      # (x, y) m per leg FR, FL, RR, RL, 0 = below the hip
    wbc_weights: tuple[float, float, float, float, float, float]  # roll pitch yaw x y z
    mu: float
    landing_gain: float
    use_mpc_traj: bool                          # value bit0: MPC-optimised torso trajectory
    # What was replaced or clamped, one phrase each, for a log line.
    sanitised: tuple[str, ...] = field(default=(), compare=False)


def decode_user_gait(block: Block, limits: UserGaitLimits = DEFAULT_LIMITS) -> UserGaitParams:
    """Unpack a mode-11 user-gait block (SPEC §8.4, "Decoding and sanitising").

    As the reference: heights unpacked from step_height, pitch = rpy_des[1],
    body height = 0.225 + pos_des z, WBC weights floored at 1e-5, mu outside
    [0.04, 2.0] replaced by 0.4, landing gain (contact mod 100) / 10 replaced
    by 1.0 outside [0.01, 10], use_mpc_traj = value bit0.
    motiond also clamps step heights, body height, pitch and landing offsets
    to `limits` (a gait generator given 0.9 m steps or 1 m offsets would send
    the feet out of reach), and replaces non-finite numbers; each change is
    listed in `sanitised`.
    """
    if block.mode != LOCOMOTION:
        raise ValueError(f"a user gait is a mode-11 block, got mode {block.mode}")
    notes: list[str] = []

    def clamp(name: str, x: float, lo: float, hi: float) -> float:
        y = min(max(_finite(name, x, lo, notes), lo), hi)
        if y != x and math.isfinite(x):
            notes.append(f"{name} {x:g} clamped to {y:g}")
        return y

    sh = tuple(clamp(f"step height {leg}", h, *limits.step_height)
               for leg, h in zip(LEGS, unpack_step_heights(block.step_height)))
    fp, cp = block.foot_pose, block.ctrl_point
    raw = ((fp[0], fp[1]), (fp[2], fp[3]), (fp[4], fp[5]), (cp[0], cp[1]))
    off_x, off_y = limits.landing_offset
    offsets = tuple((clamp(f"landing x {leg}", x, -off_x, off_x), clamp(f"landing y {leg}", y, -off_y, off_y))
                    for leg, (x, y) in zip(LEGS, raw))
    weights = tuple(_floor_weight(i, w, limits.min_wbc_weight, notes) for i, w in enumerate(block.acc_des[:6]))
    vel = tuple(_finite(f"vel_des[{i}]", v, 0.0, notes) for i, v in enumerate(block.vel_des[:3]))
    return UserGaitParams(
        gait_id=block.gait_id,
        body_velocity=(vel[0], vel[1], vel[2]),
        pitch=clamp("pitch", block.rpy_des[1], *limits.pitch),
        body_height=clamp("body height", limits.nominal_body_height + block.pos_des[2], *limits.body_height),
        step_heights=(sh[0], sh[1], sh[2], sh[3]),
        landing_offsets=(offsets[0], offsets[1], offsets[2], offsets[3]),
        wbc_weights=(weights[0], weights[1], weights[2], weights[3], weights[4], weights[5]),
        mu=_decode_mu(cp[2], limits, notes),
        landing_gain=_decode_landing_gain(block.contact, limits, notes),
        use_mpc_traj=bool(block.value & 1),
        sanitised=tuple(notes),
    )


def _finite(name: str, x: float, fallback: float, notes: list[str]) -> float:
    if math.isfinite(x):
        return x
    notes.append(f"{name} {x} replaced by {fallback:g}")
    return fallback


def _floor_weight(i: int, w: float, floor: float, notes: list[str]) -> float:
    if math.isfinite(w) and w >= floor:
        return w
    notes.append(f"WBC weight {i} {w:g} raised to {floor:g}")
    return floor


def _decode_mu(mu: float, limits: UserGaitLimits, notes: list[str]) -> float:
    if limits.mu_ok(mu):
        return mu
    lo, hi = limits.mu_range()
    notes.append(f"mu {mu:g} outside [{lo:g}, {hi:g}] replaced by {limits.default_mu:g}")
    return limits.default_mu


def _decode_landing_gain(contact: int, limits: UserGaitLimits, notes: list[str]) -> float:
    gain = unpack_landing_gain(contact, limits)
    if gain is not None:
        return gain
    lo, hi = limits.landing_gain
    notes.append(f"landing gain {math.fmod(contact, 100) / LANDING_GAIN_SCALE:g} (contact {contact}) "
                 f"outside [{lo:g}, {hi:g}] replaced by {limits.default_landing_gain:g}")
    return limits.default_landing_gain

