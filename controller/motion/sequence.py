"""Command fields and CyberDog command sequences (TOML), used by `motionctl`.

One table of the robot_control_cmd fields (SPEC §1.2) drives three things:
validating a value, building the wire message (shared by `motionctl send` and
`motionctl play`, so both encode identically), and reading a sequence file.

A sequence file is the official CyberDog examples' format: an array of
`[[step]]` tables whose keys are the command fields. The examples copy every
step into one reused message object, so a key a step leaves out keeps the
previous step's value (SPEC §10, pitfall 5); this reader reproduces that on
purpose, starting the first step from all zeros. Every value is checked at load
time, so a typo fails before anything is sent with an error naming the file,
the step and the key, rather than as a struct.error halfway through a run on
the robot. Pure: no sockets, no clock.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.msgs import robot_control_cmd_lcmt

INT8_RANGE = (-128, 127)
INT32_RANGE = (-(2**31), 2**31 - 1)
# Largest finite float32: a larger Python float cannot be packed into the
# message's `float` fields (struct raises OverflowError).
FLOAT32_MAX = 3.4028234663852886e38


class FieldError(ValueError):
    """A command field has a bad value; `key` names the field."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


class SequenceError(ValueError):
    """A sequence file cannot be read or is invalid; the message names file, step and key."""


@dataclass(frozen=True)
class FieldSpec:
    """Wire type of one command field.

    kind: "int8", "int32" or "float"; length: 0 for a scalar, else the array
    length; short: a shorter array length also accepted (zero-padded).
    """

    kind: str
    length: int = 0
    short: int | None = None


# Wire order of robot_control_cmd_lcmt (SPEC §1.2), without life_count, which
# the sender owns (SPEC §2.3): a field dict never carries it.
COMMAND_FIELDS: dict[str, FieldSpec] = {
    "mode": FieldSpec("int8"),
    "gait_id": FieldSpec("int8"),
    "contact": FieldSpec("int8"),
    "vel_des": FieldSpec("float", 3),
    "rpy_des": FieldSpec("float", 3),
    "pos_des": FieldSpec("float", 3),
    "acc_des": FieldSpec("float", 6),
    "ctrl_point": FieldSpec("float", 3),
    # The official list-driven examples write only foot_pose[0..2] (SPEC §10).
    "foot_pose": FieldSpec("float", 6, short=3),
    "step_height": FieldSpec("float", 2),
    "value": FieldSpec("int32"),
    "duration": FieldSpec("int32"),
}

# Keys a sequence step may carry that are not sent as written. The examples'
# files carry life_count, but the sender must choose fresh values itself.
IGNORED_STEP_KEYS = frozenset({"life_count"})

Fields = dict[str, Any]


def zero_fields() -> Fields:
    """Every command field at zero: the state of a freshly made message."""
    return {name: [0.0] * spec.length if spec.length else 0
            for name, spec in COMMAND_FIELDS.items()}


def pad(values: list[float], length: int) -> list[float]:
    """Extend `values` with zeros to `length` (never truncates)."""
    return list(values) + [0.0] * (length - len(values))


def check_int(key: str, value: Any, bits: int) -> int:
    """Return `value` if it is an integer that fits a signed `bits`-bit field."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(key, f"expected an integer, got {type(value).__name__} {value!r}")
    lo, hi = INT8_RANGE if bits == 8 else INT32_RANGE
    if not lo <= value <= hi:
        raise FieldError(key, f"{value} is outside the int{bits} range [{lo}, {hi}]")
    return value


def check_float(key: str, value: Any) -> float:
    """Return `value` as a float if it is a finite number that fits a float32."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FieldError(key, f"expected a number, got {type(value).__name__} {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise FieldError(key, f"must be finite, got {x}")
    if abs(x) > FLOAT32_MAX:
        raise FieldError(key, f"{x} does not fit a 32-bit float")
    return x


def check_field(key: str, value: Any) -> int | list[float]:
    """Validate one command field and return it in message form.

    Arrays come back as new lists of floats, zero-padded when the field allows
    a short form, so callers never alias the caller's list.
    """
    spec = COMMAND_FIELDS.get(key)
    if spec is None:
        raise FieldError(key, f"unknown key (expected one of: {', '.join(COMMAND_FIELDS)})")
    if spec.kind == "int8":
        return check_int(key, value, 8)
    if spec.kind == "int32":
        return check_int(key, value, 32)
    allowed = (spec.length,) if spec.short is None else (spec.short, spec.length)
    if not isinstance(value, list) or len(value) not in allowed:
        want = " or ".join(str(n) for n in allowed)
        raise FieldError(key, f"expected an array of {want} numbers, got {value!r}")
    out = []
    for i, x in enumerate(value):
        try:
            out.append(check_float(key, x))
        except FieldError as exc:
            raise FieldError(key, f"element {i}: {exc.reason}") from None
    return pad(out, spec.length)


def build_command(fields: Mapping[str, Any], life_count: int) -> robot_control_cmd_lcmt:
    """The wire message for `fields` (missing ones are zero) with `life_count`.

    The one place a command message is made, for `send` and `play` alike; every
    value is validated first so encoding can never fail.
    """
    msg = robot_control_cmd_lcmt()
    full = zero_fields()
    for key, value in fields.items():
        full[key] = check_field(key, value)
    for key, value in full.items():
        setattr(msg, key, value)
    msg.life_count = check_int("life_count", life_count, 8)
    return msg


@dataclass(frozen=True)
class Step:
    """One `[[step]]` after inheritance: every command field has a value."""

    number: int          # 1-based, as a person counts the tables in the file
    fields: Fields

    @property
    def mode(self) -> int:
        return int(self.fields["mode"])

    @property
    def gait_id(self) -> int:
        return int(self.fields["gait_id"])

    @property
    def duration(self) -> int:
        """Duration in ms; 0 = continuous (SPEC §1.2)."""
        return int(self.fields["duration"])


def parse_sequence(document: Mapping[str, Any], source: str) -> list[Step]:
    """Turn a parsed TOML document into steps; `source` names it in errors."""
    for key in document:
        if key != "step":
            raise SequenceError(f"{source}: {key}: unknown top-level key (expected [[step]] tables)")
    tables = document.get("step")
    if not isinstance(tables, list) or not tables:
        raise SequenceError(f"{source}: step: expected at least one [[step]] table")
    steps: list[Step] = []
    current = zero_fields()
    for number, table in enumerate(tables, start=1):
        where = f"{source}: step {number}"
        if not isinstance(table, dict):
            raise SequenceError(f"{where}: expected a table, got {table!r}")
        current = {k: list(v) if isinstance(v, list) else v for k, v in current.items()}
        for key, value in table.items():
            try:
                if key in IGNORED_STEP_KEYS:
                    # Any integer is fine (the docs count 0..255); it is never sent.
                    check_int(key, value, 32)
                    continue
                current[key] = check_field(key, value)
            except FieldError as exc:
                raise SequenceError(f"{where}: {exc}") from None
        if current["duration"] < 0:
            # A negative duration is meaningless for scheduling the steps.
            raise SequenceError(f"{where}: duration: must be >= 0 ms, got {current['duration']}")
        steps.append(Step(number, current))
    return steps


def load_sequence(path: str | Path) -> list[Step]:
    """Read and validate a TOML sequence file; raise SequenceError on any problem."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SequenceError(f"{path}: cannot read: {exc.strerror}") from None
    import tomllib  # here: `motionctl send` imports this module and reads no file
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SequenceError(f"{path}: not UTF-8 text: {exc.reason}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SequenceError(f"{path}: not valid TOML: {exc}") from None
    return parse_sequence(document, str(path))


def is_timed(step: Step, tick_ms: float = 2.0) -> bool:
    """Whether the controller queues this step as a timed block (D > 0 ticks).

    The controller truncates duration_ms to whole ticks (SPEC §2.4), so a
    1 ms step is continuous: it would clear the queue, not join it.
    """
    return int(step.duration / tick_ms) > 0


def group_steps(steps: list[Step], tick_ms: float = 2.0) -> list[list[Step]]:
    """Split steps into what is sent together.

    Consecutive timed steps form one group, sent back-to-back so the
    controller queues them (SPEC §3.2); each continuous step is a group of its
    own, because it clears the queue and must be waited for on its own.
    """
    groups: list[list[Step]] = []
    for step in steps:
        if is_timed(step, tick_ms) and groups and is_timed(groups[-1][0], tick_ms):
            groups[-1].append(step)
        else:
            groups.append([step])
    return groups
