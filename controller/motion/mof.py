"""B-Human motion nets (.mof files): parse, link, validate, and play on the kernel.

A .mof file (B-Human's motion-file syntax) is one motion of a net:

    motion_id = stand                      the motion's name
    label start                            a place transitions can jump to
    "HP HT AL0 ...                         `"` starts a comment (to the line end)
    hardness * ... 100 50                  per-column hardness %, `*` = default;
                                           then the ramp time in ms (0: at once)
    *  *  0 -50 ... -1  1  100             per-column angle in degrees, `*` keep,
                                           `-` switch the joint off; then
                                           interpolate 0/1 and the duration in ms
    transition stand stand start           if `stand` is requested, go to
                                           stand:start (`allMotions`: always)
    transition allMotions extern start     leave the net

`extern` is the net's entry and exit: entering with a request follows
extern's transition for that request (without an extern.mof, one per motion
to its `start`), and reaching `extern` leaves the net.

The robot binding (`MofColumns`) maps each .mof column to a joint, converts
the file's degrees into the joint's convention (sign, offset), and carries
the limits the files are checked against and the gains 100 % hardness means.

Playing (`MofPlayer`) writes kernel segments and gain ramps; the C kernel
does the per-tick numbers. Decisions, each for a reason:

- Interpolated joint lines are LINEAR segments from the previous target to
  the line's angles. B-Human interpolates linearly, and consecutive lines
  then form one continuous path; a minimum-jerk profile would stop the joint
  at every line, turning a multi-line motion into start-stop jerks.
- A line with interpolate 0 sets its angles at the line's start and holds
  them for its duration (the seed: "sent immediately and kept for the entire
  duration"). The kernel's step limit turns the jump into a move at the
  velocity limit.
- Hardness h % means gains h/100 * (kp, kd) of the robot's full-hardness gain
  set: a NAO's stiffness scales its whole motor command, damping included.
  A hardness ramp is the kernel's linear gain ramp. A later hardness line
  starts its ramp from the gains in force at its start time, so an
  unfinished ramp is continued from where it is, never restarted.
- `-` switches a joint off: zero kp and kd at once. A later angle switches it
  back on, moving from its measured position (if the caller passes one)
  with the gains its hardness ramp has meanwhile reached.
- The load-time velocity check divides each angle change by the line's
  duration (times the profile's peak factor, 1 for linear). For a
  non-interpolated line this is the speed at which the kernel's step limit
  gets the joint there within the line. The check runs only where the
  previous angle is certain: within a straight run of lines, not across a
  label (a label can be entered from anywhere), nor after `-`.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

# The robot binding (columns, header, the error type) is part of the robot
# config; the names stay importable from here, where the format lives.
from controller.robot.config import ConfigError, MofConfig, load_config
from controller.robot.config.mof import MOF_HEADER as MOF_HEADER
from controller.robot.config.mof import MofColumns, MofError
from controller.robot.config.mof import mof_columns as mof_columns

if TYPE_CHECKING:
    from controller.robot.native import Kernel

ALL_MOTIONS = "allMotions"   # the condition that always holds
EXTERN = "extern"            # the net's entry and exit
START = "start"              # the label every motion and extern is entered at

# What a joint line does to a column.
KEEP, SET, OFF = 0, 1, 2

# Peak speed over mean speed of the segment profile the player uses (LINEAR);
# a minimum-jerk profile would need 1.875.
PEAK_SPEED_FACTOR = 1.0

_EPS = 1e-9   # s and rad: float slack for "at the same time" and "at the limit"
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_MOTION_ID = re.compile(rf"motion_id\s*=\s*({_IDENT})")
_NAME = re.compile(_IDENT)
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


# -- the robot binding -----------------------------------------------------------------
def load_mof_columns(path: str | Path) -> MofColumns:
    """The .mof binding of a robot config (e.g. config/nao22.yaml): what
    controller/robot/config's load_config reads into `cfg.mof.columns`. Raises
    MofError naming the config file when it does not load or has no
    `mof_columns`."""
    try:
        cfg = load_config(path)
    except ConfigError as exc:
        raise MofError(str(path), None, str(exc).removeprefix(f"{Path(path)}: ")) from exc
    if cfg.mof is None:
        raise MofError(str(path), None, "mof_columns: missing (the robot has no .mof binding)")
    return cfg.mof.columns


# -- parsed motions ---------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class JointLine:
    line: int
    action: np.ndarray      # per column: KEEP, SET or OFF
    angles: np.ndarray      # rad, joint convention; NaN where not SET
    interpolate: bool
    duration: float         # s, > 0


@dataclass(frozen=True, eq=False)
class HardnessLine:
    line: int
    hardness: np.ndarray    # % per column, `*` already replaced by the default
    duration: float         # s; 0: at once


@dataclass(frozen=True)
class Transition:
    line: int
    request: str            # a motion name or ALL_MOTIONS
    target: str             # a motion name or EXTERN
    label: str

    def matches(self, request: str | None) -> bool:
        return self.request == ALL_MOTIONS or self.request == request


Instruction = JointLine | HardnessLine | Transition


@dataclass(frozen=True, eq=False)
class Motion:
    name: str
    source: str
    id_line: int                            # line of `motion_id = ...`
    instructions: tuple[Instruction, ...]
    labels: Mapping[str, int]               # label -> index of the instruction after it
    label_lines: Mapping[str, int]


def parse_mof(text: str, source: str, columns: MofColumns) -> Motion:
    """Parse and check one .mof file; raise MofError naming source, line and reason.
    Cross-file checks (transition targets, requests, loops) are `build_net`'s."""
    n = len(columns)
    name: str | None = None
    id_line = 0
    instructions: list[Instruction] = []
    labels: dict[str, int] = {}
    label_lines: dict[str, int] = {}
    own_targets: list[Transition] = []
    prev = np.full(n, np.nan)   # the certain previous angle per column, for the speed check
    last_line = 0

    def fail(line: int, reason: str) -> MofError:
        return MofError(source, line, reason)

    def number(tok: str, line: int, what: str) -> float:
        if not _NUMBER.fullmatch(tok):
            raise fail(line, f"{what}: {tok!r} is not a number")
        value = float(tok)
        if not math.isfinite(value):
            raise fail(line, f"{what}: {tok!r} is not a finite number")
        return value

    for lineno, raw in enumerate(text.splitlines(), 1):
        content = raw.split('"', 1)[0].strip()   # `"` starts a comment
        if not content:
            continue
        last_line = lineno
        tokens = content.split()
        head = tokens[0]
        motion_id = _MOTION_ID.fullmatch(content)
        if name is None:
            if motion_id is None:
                raise fail(lineno, "a motion file starts with `motion_id = <name>`")
            name, id_line = motion_id[1], lineno
            if name == ALL_MOTIONS:
                raise fail(lineno, f"{ALL_MOTIONS!r} is reserved (the always-true condition)")
            continue
        if motion_id is not None or head.startswith("motion_id"):
            raise fail(lineno, "a second `motion_id` (one motion per file)")

        if head == "label":
            if len(tokens) != 2 or not _NAME.fullmatch(tokens[1]):
                raise fail(lineno, "expected `label <name>`")
            label = tokens[1]
            if label in labels:
                raise fail(lineno, f"label {label!r} is already defined at line "
                                   f"{label_lines[label]}")
            labels[label] = len(instructions)
            label_lines[label] = lineno
            prev[:] = np.nan    # a label can be entered from anywhere
            continue

        if START not in labels:
            raise fail(lineno, "`label start` must come before the first joint, hardness "
                               "or transition line")

        if head == "transition":
            if len(tokens) != 4 or not all(_NAME.fullmatch(tok) for tok in tokens[1:]):
                raise fail(lineno, "expected `transition <request> <motion> <label>`")
            tr = Transition(lineno, tokens[1], tokens[2], tokens[3])
            if tr.request == EXTERN:
                raise fail(lineno, f"{EXTERN!r} is not a request (use {ALL_MOTIONS} or a "
                                   "motion name)")
            if tr.target == EXTERN and tr.label != START:
                raise fail(lineno, f"{EXTERN} has only the label {START!r}, not {tr.label!r}")
            if tr.target == name:
                own_targets.append(tr)
            instructions.append(tr)
            if tr.request == ALL_MOTIONS:
                prev[:] = np.nan   # what follows is reached only through a label
            continue

        if head == "hardness":
            if len(tokens) != n + 2:
                raise fail(lineno, f"a hardness line has {n + 1} entries ({n} hardness "
                                   f"values in %, then the ramp time in ms), got "
                                   f"{len(tokens) - 1}")
            hardness = columns.default_hardness.copy()
            for c, tok in enumerate(tokens[1:n + 1]):
                if tok == "*":
                    continue
                value = number(tok, lineno, f"hardness of {columns.names[c]}")
                if not 0.0 <= value <= 100.0:
                    raise fail(lineno, f"hardness of {columns.names[c]}: {tok} is outside "
                                       "[0, 100] %")
                hardness[c] = value
            ramp = number(tokens[n + 1], lineno, "hardness ramp time")
            if ramp < 0.0:
                raise fail(lineno, f"hardness ramp time must not be negative, got {tokens[n + 1]}"
                                   " ms")
            instructions.append(HardnessLine(lineno, hardness, ramp / 1000.0))
            continue

        if _NAME.fullmatch(head) and len(tokens) != n + 2:
            raise fail(lineno, f"unknown statement {head!r} (expected label, transition, "
                               "hardness or a joint line)")
        if len(tokens) != n + 2:
            raise fail(lineno, f"a joint line has {n + 2} entries ({n} angles, interpolate "
                               f"0/1, duration in ms), got {len(tokens)}")
        action = np.full(n, KEEP, dtype=np.int8)
        degrees = np.full(n, np.nan)
        for c, tok in enumerate(tokens[:n]):
            if tok == "*":
                continue
            if tok == "-":
                action[c] = OFF
                continue
            degrees[c] = number(tok, lineno, f"angle of {columns.names[c]}")
            action[c] = SET
        if tokens[n] not in ("0", "1"):
            raise fail(lineno, f"interpolate must be 0 or 1, got {tokens[n]!r}")
        duration_ms = number(tokens[n + 1], lineno, "duration")
        if duration_ms <= 0.0:
            raise fail(lineno, f"duration must be positive, got {tokens[n + 1]} ms")
        angles = columns.to_joint(degrees)
        for c in np.flatnonzero(action == SET).tolist():
            q = angles[c]
            if not columns.q_min[c] - _EPS <= q <= columns.q_max[c] + _EPS:
                raise fail(lineno, f"{columns.names[c]} = {tokens[c]} deg puts "
                                   f"{columns.joint_names[c]} at {q:.4f} rad, outside its "
                                   f"limits [{columns.q_min[c]:.4f}, {columns.q_max[c]:.4f}]")
        duration = duration_ms / 1000.0
        speed = np.abs(angles - prev) / duration * PEAK_SPEED_FACTOR
        too_fast = (action == SET) & np.isfinite(speed) & (speed > columns.v_max + _EPS)
        if too_fast.any():
            c = int(np.argmax(too_fast))
            raise fail(lineno, f"{columns.names[c]} moves {math.degrees(abs(angles[c] - prev[c])):.1f}"
                               f" deg in {duration_ms:g} ms: {speed[c]:.2f} rad/s, above "
                               f"{columns.joint_names[c]}'s velocity limit "
                               f"{columns.v_max[c]:.2f} rad/s")
        prev[action == SET] = angles[action == SET]
        prev[action == OFF] = np.nan   # an off joint can be anywhere afterwards
        instructions.append(JointLine(lineno, action, angles, tokens[n] == "1", duration))

    if name is None:
        raise MofError(source, None, "empty: no `motion_id = <name>`")
    if START not in labels:
        raise fail(id_line, f"motion {name!r} has no `label start`")
    for label, index in labels.items():
        if index == len(instructions):
            raise fail(label_lines[label], f"label {label!r} has nothing after it")
    last = instructions[-1] if instructions else None
    if not (isinstance(last, Transition) and last.request == ALL_MOTIONS):
        raise fail(last_line, "the motion can run off its end: its last line must be "
                              f"`transition {ALL_MOTIONS} <motion> <label>` (usually "
                              f"`transition {ALL_MOTIONS} {EXTERN} {START}`)")
    for tr in own_targets:
        if tr.label not in labels:
            raise fail(tr.line, f"motion {name!r} has no label {tr.label!r}")
    return Motion(name, source, id_line, tuple(instructions), labels, label_lines)


# -- the net ----------------------------------------------------------------------------
Position = tuple[str, int]   # (motion name, instruction index); EXTERN's index is 0


@dataclass(frozen=True)
class Plan:
    """The path the net takes from a position for a fixed request."""
    duration: float                    # s, the joint lines on it
    lines: tuple[Position, ...]        # its joint lines
    leaves: bool                       # True: it reaches extern; False: it loops


@dataclass(frozen=True, eq=False)
class MotionNet:
    columns: MofColumns
    motions: Mapping[str, Motion]      # every motion but extern
    extern: Motion                     # extern.mof, or one made with a transition per motion

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.motions)

    def entry(self, request: str | None) -> Position | None:
        """Where entering the net with `request` leads: extern's first
        transition for it; None if it stays in extern (leaves at once)."""
        for tr in self.extern.instructions:
            if isinstance(tr, Transition) and tr.matches(request):
                if tr.target == EXTERN:
                    return None
                return tr.target, self.motions[tr.target].labels[tr.label]
        return None

    def label(self, motion: str, label: str = START) -> Position:
        if motion not in self.motions or label not in self.motions[motion].labels:
            raise ValueError(f"the net has no label {motion}:{label}")
        return motion, self.motions[motion].labels[label]

    def plan(self, at: Position, request: str | None) -> Plan:
        """Follow the net from `at` with `request` fixed until it reaches
        extern or comes back to a line it has passed (a loop, like stand's)."""
        seen: set[Position] = set()
        lines: list[Position] = []
        duration = 0.0
        pos = at
        while pos[0] != EXTERN and pos not in seen:
            seen.add(pos)
            ins = self.motions[pos[0]].instructions[pos[1]]
            if isinstance(ins, Transition) and ins.matches(request):
                pos = (EXTERN, 0) if ins.target == EXTERN \
                    else (ins.target, self.motions[ins.target].labels[ins.label])
                continue
            if isinstance(ins, JointLine):
                duration += ins.duration
                lines.append(pos)
            pos = (pos[0], pos[1] + 1)
        return Plan(duration, tuple(lines), pos[0] == EXTERN)


def _link_errors(motions: Mapping[str, Motion], extern: Motion) -> list[tuple[str, MofError]]:
    """Every cross-file error, each with the motion it belongs to."""
    errors: list[tuple[str, MofError]] = []
    for motion in (*motions.values(), extern):
        for ins in motion.instructions:
            if not isinstance(ins, Transition):
                continue
            bad = None
            if ins.request != ALL_MOTIONS and ins.request not in motions:
                bad = f"unknown request {ins.request!r} (not {ALL_MOTIONS} or a motion of the net)"
            elif ins.target != EXTERN and ins.target not in motions:
                bad = f"transition to unknown motion {ins.target!r}"
            elif ins.target != EXTERN and ins.label not in motions[ins.target].labels:
                bad = f"motion {ins.target!r} has no label {ins.label!r}"
            if bad:
                errors.append((motion.name, MofError(motion.source, ins.line, bad)))
    if errors:
        return errors
    # A loop of labels, hardness lines and transitions without a joint line
    # would never let time pass: find one by depth-first search over the
    # zero-time edges (a joint line ends every path through it).
    state: dict[Position, int] = {}   # 1: on the stack, 2: done

    def successors(pos: Position) -> list[Position]:
        ins = motions[pos[0]].instructions[pos[1]]
        if isinstance(ins, JointLine):
            return []
        nxt = [(pos[0], pos[1] + 1)]
        if isinstance(ins, Transition):
            jump = [] if ins.target == EXTERN \
                else [(ins.target, motions[ins.target].labels[ins.label])]
            nxt = jump if ins.request == ALL_MOTIONS else jump + nxt
        return nxt

    for name, motion in motions.items():
        for i in range(len(motion.instructions)):
            if (name, i) in state:
                continue
            stack = [((name, i), iter(successors((name, i))))]
            state[(name, i)] = 1
            while stack:
                pos, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    state[pos] = 2
                    stack.pop()
                elif state.get(nxt) == 1:
                    tr = motions[pos[0]].instructions[pos[1]]
                    return [(pos[0], MofError(motions[pos[0]].source, tr.line,
                                              "zero-time loop: this transition comes back "
                                              "without passing a joint line, so the motion "
                                              "would never advance"))]
                elif nxt not in state:
                    state[nxt] = 1
                    stack.append((nxt, iter(successors(nxt))))
    return []


def link_net(motions: Iterable[Motion], columns: MofColumns,
             errors: list[MofError] | None = None) -> MotionNet:
    """Link parsed motions into a net and check it: duplicate motions,
    transitions to unknown motions or labels, unknown requests, zero-time
    loops. Without `errors`, the first problem raises MofError; with it, each
    problem is appended and its motion dropped (and with it whatever then
    leads to a dropped motion), so the rest of the net stays usable."""
    by_name: dict[str, Motion] = {}
    extern: Motion | None = None
    for motion in motions:
        other = extern if motion.name == EXTERN else by_name.get(motion.name)
        if other is not None:
            err = MofError(motion.source, motion.id_line,
                           f"motion {motion.name!r} is also defined in {other.source}")
            if errors is None:
                raise err
            errors.append(err)
            continue
        if motion.name == EXTERN:
            stray = [i for i in motion.instructions if not isinstance(i, Transition)]
            if stray:
                err = MofError(motion.source, stray[0].line,
                               f"{EXTERN} holds only transitions (it is the entry and exit)")
                if errors is None:
                    raise err
                errors.append(err)
                continue
            extern = motion
        else:
            by_name[motion.name] = motion
    while True:
        ext = extern or _synthetic_extern(by_name)
        found = _link_errors(by_name, ext)
        if not found:
            return MotionNet(columns, dict(by_name), ext)
        if errors is None:
            raise found[0][1]
        for name, err in found:
            errors.append(err)
            if name == EXTERN:
                extern = None
            by_name.pop(name, None)


def _synthetic_extern(motions: Mapping[str, Motion]) -> Motion:
    """extern as B-Human's extern.mof would be: each request enters its motion at start."""
    trs = tuple(Transition(0, name, name, START) for name in motions)
    return Motion(EXTERN, "<extern>", 0, (*trs, Transition(0, ALL_MOTIONS, EXTERN, START)),
                  {START: 0}, {START: 0})


def build_net(files: Iterable[str | Path], columns: MofColumns,
              errors: list[MofError] | None = None) -> MotionNet:
    """Read, parse and link .mof files into one net (see `link_net` for `errors`)."""
    motions: list[Motion] = []
    for path in files:
        try:
            motions.append(parse_mof(Path(path).read_text(), str(path), columns))
        except OSError as exc:
            err = MofError(str(path), None, f"cannot read: {exc.strerror}")
            if errors is None:
                raise err from exc
            errors.append(err)
        except MofError as err:
            if errors is None:
                raise
            errors.append(err)
    return link_net(motions, columns, errors)


def load_net(binding: MofConfig) -> tuple[MotionNet, tuple[MofError, ...]]:
    """The net of a robot's `mof.files`, read with its `mof_columns`. A bad
    file is left out of the net and returned among the errors (file, line,
    reason); the rest of the net still loads."""
    errors: list[MofError] = []
    net = build_net(binding.files, binding.columns, errors)
    return net, tuple(errors)


# -- playing -----------------------------------------------------------------------------
class MofPlayer:
    """Plays a motion net on the kernel's joints, tick by tick, on the caller's clock.

        player.start(net, "stand", t, q_now)      enter at extern (or at=("stand", "start"))
        progress = player.step(t, q_meas)         every tick, before kernel.step(t)
        player.set_request(None, t)               leave: follow the net out to extern
        player.done                               True once it has left the net

    It writes segments and gains of the columns' joints only. One request is
    served once: when the net reaches extern the player is done, unless the
    request has changed since it last entered (a switch between motions
    passes through extern, as in B-Human). A motion that loops while it is
    requested (stand) never leaves by itself; its progress reaches 100 when
    its first pass through the loop is over. Progress is the time along the
    current path over that path's length, restarted when a new motion is
    entered and re-planned when the request changes.
    """

    def __init__(self, kernel: Kernel) -> None:
        # Imported here so that parsing and validation work without a kernel build.
        from controller.robot.native import LINEAR
        self._linear = LINEAR
        self.kernel = kernel
        self.columns: MofColumns | None = None   # the net's, from start()
        self.net: MotionNet | None = None
        self.request: str | None = None
        self.done = True
        self.progress = 100.0
        self.motion: str | None = None       # the motion of the running joint line
        self.line: int | None = None         # its source line
        self._at: Position = (EXTERN, 0)
        self._pending = False                # enter at extern with the request?
        self._line_start = 0.0
        self._line_end = math.inf
        self._line_pos: Position = (EXTERN, 0)
        self._plan_t0 = 0.0
        self._plan_duration = 0.0
        self._joint_idx = np.zeros(0, dtype=np.intp)
        self._target = np.zeros(0)           # rad per column; NaN while off
        self._off = np.zeros(0, dtype=bool)
        self._q_meas: np.ndarray | None = None
        # The gain ramp each column is on (a mirror of the kernel's, kept also
        # while a joint is off so that switching it on again resumes it).
        self._kp0, self._kp1 = np.zeros(0), np.zeros(0)
        self._kd0, self._kd1 = np.zeros(0), np.zeros(0)
        self._g_t0, self._g_dur = np.zeros(0), np.zeros(0)

    # -- control ---------------------------------------------------------------------
    def start(self, net: MotionNet, request: str | None, t: float, q_now: np.ndarray,
              at: tuple[str, str] | None = None) -> None:
        """Enter `net` at time t: at extern with `request`, or at the label
        `at` = (motion, label). q_now (wire order, rad) is where the joints are;
        every column joint holds it until a line moves it, and the gains in
        force stay until a hardness line changes them."""
        self._check_request(net, request)
        if int(net.columns.joints.max()) >= self.kernel.n:
            raise ValueError("the net's columns name joints beyond the kernel's")
        k, j = self.kernel, net.columns.joints
        self.net, self.columns, self._joint_idx = net, net.columns, j
        self.request = request
        self.done = False
        self._q_meas = None
        self._target = np.asarray(q_now, dtype=float)[j].copy()
        self._off = np.zeros(len(j), dtype=bool)
        k.hold(self._target, idx=j)
        # Adopt the kernel's gain ramps as they are.
        self._kp0, self._kp1 = k.kp0[j].copy(), k.kp1[j].copy()
        self._kd0, self._kd1 = k.kd0[j].copy(), k.kd1[j].copy()
        self._g_t0, self._g_dur = k.g_t0[j].copy(), k.g_dur[j].copy()
        if at is None:
            self._at, self._pending = (EXTERN, 0), True
        else:
            self._at, self._pending = net.label(*at), False
            self._replan(self._at, t)
        self._line_end = t
        self._advance(t)
        self._update_progress(t)

    def set_request(self, request: str | None, t: float) -> None:
        """Change what is requested (None: leave the net). Takes effect at the
        net's next transition; a finished player ignores it (call start)."""
        if self.net is None or self.done or request == self.request:
            return
        self._check_request(self.net, request)
        self.request = request
        self._pending = request is not None
        if self.motion is not None:
            self._replan(self._line_pos, self._line_start)
        self._update_progress(t)

    def step(self, t: float, q_meas: np.ndarray | None = None) -> float:
        """Advance to time t (call before the kernel evaluates t); q_meas
        (wire order) keeps switched-off joints on their measured position.
        Returns the progress, 0-100."""
        if q_meas is not None:
            self._q_meas = np.asarray(q_meas, dtype=float)
        while not self.done and t + _EPS >= self._line_end:
            self._advance(self._line_end)
        if self._q_meas is not None and self._off.any() and not self.done:
            # As Kernel.track: a limp joint's target follows the joint, so that
            # switching it on again moves from where it is.
            idx = self._joint_idx[self._off]
            self.kernel.hold(self._q_meas[idx], idx=idx)
            self.kernel.pos[idx] = self._q_meas[idx]
        self._update_progress(t)
        return self.progress

    def gains_at(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """kp, kd per column at time t as the hardness ramps give them (a
        switched-off joint's kernel gains are zero meanwhile)."""
        g = np.ones_like(self._g_dur)
        ramping = self._g_dur > 0.0
        g[ramping] = np.clip((t - self._g_t0[ramping]) / self._g_dur[ramping], 0.0, 1.0)
        return self._kp0 + (self._kp1 - self._kp0) * g, self._kd0 + (self._kd1 - self._kd0) * g

    # -- the net -----------------------------------------------------------------------
    def _check_request(self, net: MotionNet, request: str | None) -> None:
        if request is not None and request not in net.motions:
            raise ValueError(f"unknown motion {request!r}; the net has {sorted(net.motions)}")

    def _replan(self, at: Position, t0: float) -> None:
        assert self.net is not None
        plan = self.net.plan(at, self.request)
        self._plan_t0, self._plan_duration = t0, plan.duration

    def _update_progress(self, t: float) -> None:
        if self.done or self._plan_duration <= 0.0:
            self.progress = 100.0
        else:
            self.progress = 100.0 * min(max((t - self._plan_t0) / self._plan_duration, 0.0), 1.0)

    def _advance(self, t0: float) -> None:
        """Run the net from the current position at time t0 (the end of the
        last joint line, so lines keep an exact schedule however late the
        tick) until a joint line starts or the net is left."""
        net = self.net
        assert net is not None
        # link_net refuses zero-time loops, so this ends; the bound is a backstop.
        budget = 2 + sum(len(m.instructions) for m in net.motions.values())
        for _ in range(budget):
            name, i = self._at
            if name == EXTERN:
                entry = net.entry(self.request) if self._pending else None
                if entry is None:
                    self.done = True
                    self.motion = self.line = None
                    self._line_end = math.inf
                    return
                self._pending = False
                self._at = entry
                self._replan(entry, t0)
                continue
            ins = net.motions[name].instructions[i]
            if isinstance(ins, Transition):
                if ins.matches(self.request):
                    self._at = (EXTERN, 0) if ins.target == EXTERN \
                        else net.label(ins.target, ins.label)
                else:
                    self._at = (name, i + 1)
            elif isinstance(ins, HardnessLine):
                self._hardness(ins, t0)
                self._at = (name, i + 1)
            else:
                self._joints(ins, t0)
                self.motion, self.line = name, ins.line
                self._line_pos = (name, i)
                self._line_start, self._line_end = t0, t0 + ins.duration
                self._at = (name, i + 1)
                return
        raise RuntimeError("motion net without progress (a zero-time loop got past link_net)")

    # -- kernel writes ---------------------------------------------------------------------
    def _joints(self, ins: JointLine, t0: float) -> None:
        k, joints = self.kernel, self._joint_idx
        off = ins.action == OFF
        if off.any():
            idx = joints[off]
            k.set_gains(0.0, 0.0, idx=idx)
            k.hold(k.pos[idx], idx=idx)
            self._off |= off
            self._target[off] = np.nan
        on = ins.action == SET
        if not on.any():
            return
        revived = on & self._off
        if revived.any():
            idx = joints[revived]
            self._target[revived] = self._q_meas[idx] if self._q_meas is not None else k.pos[idx]
            self._off &= ~revived
            self._program_gains(revived, t0)
        idx = joints[on]
        start, end = self._target[on], ins.angles[on]
        if ins.interpolate:
            k.move(start, end, t0, ins.duration, self._linear, idx=idx)
        else:
            k.move(end, end, t0, 0.0, self._linear, idx=idx)
        self._target[on] = end

    def _hardness(self, ins: HardnessLine, t0: float) -> None:
        kp_now, kd_now = self.gains_at(t0)
        scale = ins.hardness / 100.0
        assert self.columns is not None
        self._kp0, self._kd0 = kp_now, kd_now
        self._kp1, self._kd1 = scale * self.columns.kp_full, scale * self.columns.kd_full
        self._g_t0[:] = t0
        self._g_dur[:] = ins.duration
        self._program_gains(~self._off, t0)

    def _program_gains(self, mask: np.ndarray, t: float) -> None:
        """Put the columns in `mask` on their ramp, from its value at t.

        Kernel.set_gains starts a ramp from the kernel's last output, which is
        the previous tick's when a behaviour runs before kernel.step, and stale
        for a joint that was off. So the start is overwritten with the ramp's
        exact value at t: an interrupted ramp continues from where it is."""
        cols = np.flatnonzero(mask)
        if cols.size == 0:
            return
        k = self.kernel
        kp_now, kd_now = self.gains_at(t)
        remaining = np.maximum(self._g_t0[cols] + self._g_dur[cols] - t, 0.0)
        for ramp in np.unique(remaining):
            sel = cols[remaining == ramp]
            idx = self._joint_idx[sel]
            k.set_gains(self._kp1[sel], self._kd1[sel], t, float(ramp), idx=idx)
            if ramp > 0.0:
                k.kp0[idx] = kp_now[sel]
                k.kd0[idx] = kd_now[sel]
