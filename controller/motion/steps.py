"""Step lists: one reused record turned into queue blocks (SPEC §4.6, §8.3).

CyberDog step lists (the `[[step]]` TOML motion files of SPEC §4.6 and the
uploaded "Gait Params" of SPEC §8.3) share one reading rule, and this module
is its one implementation:

* One record is reused for every step of a document. A step writes the fields
  it names into the record; every other field keeps the previous step's value.
  The first step starts from all zeros (so a missing `mode` means 0).
* `duration` is in ms and converted to ticks (halved, at 2 ms per tick). The
  record keeps the tick value, and the reference converts it again on every
  step: a step without `duration` gets the *inherited tick value* halved again
  (reproduced, with a warning, because it changes observable timing).
* An array of the wrong length is ignored (the field keeps its value), as in
  the reference, but reported as a warning naming the step.
* Where the reference aborts or silently yields a motion that never ends,
  motiond refuses the document (SPEC §11): wrong types, non-finite numbers,
  integers outside their wire range, negative durations, a continuous first
  step, a continuous step with more steps behind it, or no step at all.

A format plugs in a *step handler*: a function that reads one step through a
`StepContext` (typed getters that raise `StepError` naming document, step and
key), updates the record and returns the blocks the step yields. `read_steps`
runs handlers over a parsed document. controller.motion.usergait holds the handlers
for Gait Params and for the `usergait` step type; the typed step files of
§4.6 add theirs the same way (an include, `file = ...`, is a nested
`read_steps` call: it gets a fresh record, as in the reference).

Pure: no I/O, no clock.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from controller.motion.sequence import (
    COMMAND_FIELDS,
    FieldError,
    check_float,
    check_int,
    zero_fields,
)
from controller.protocol.block import FROM_MOTION, Block

TICK_MS = 2.0          # one control tick (SPEC conventions)
MAX_STEPS = 1000       # the command queue holds 1024 blocks (controller.protocol.queue)

# Blocks made from a step list carry controller.protocol.block.FROM_MOTION: the queue
# treats them as commands (the motion trigger clears when the last one expires,
# SPEC §4.3) while logs and tools can tell them apart.

Fields = dict[str, Any]


class StepError(ValueError):
    """A step list is refused; the message names document, line or step, key and reason."""

    def __init__(self, document: str, step: int | None, key: str | None, reason: str,
                 line: int | None = None) -> None:
        super().__init__(_where(document, step, key, line) + reason)
        self.document = document
        self.step = step          # 1-based, as a person counts the [[step]] tables
        self.key = key
        self.reason = reason
        self.line = line          # for TOML syntax errors, where there is no step yet


def _where(document: str, step: int | None, key: str | None, line: int | None = None) -> str:
    parts = [document]
    if line is not None:
        parts.append(f"line {line}")
    if step is not None:
        parts.append(f"step {step}")
    if key is not None:
        parts.append(key)
    return ": ".join(parts) + ": "


@dataclass
class StepRecord:
    """The one record reused across a document's steps (SPEC §4.6).

    `fields` holds every robot_control_cmd field in message form (ints and
    lists of floats, as controller.motion.sequence.zero_fields makes them; `duration`
    is the last value written, in ms). `ticks` is the current duration in
    ticks, the value the duration quirk divides again.
    """

    fields: Fields = field(default_factory=zero_fields)
    ticks: int = 0

    def to_block(self, source: str) -> Block:
        """A snapshot of the record as a queue block (tuples: later steps cannot alias it)."""
        f = self.fields
        return Block(mode=f["mode"], gait_id=f["gait_id"], contact=f["contact"],
                     vel_des=tuple(f["vel_des"]), rpy_des=tuple(f["rpy_des"]),
                     pos_des=tuple(f["pos_des"]), acc_des=tuple(f["acc_des"]),
                     ctrl_point=tuple(f["ctrl_point"]), foot_pose=tuple(f["foot_pose"]),
                     step_height=tuple(f["step_height"]), value=f["value"],
                     duration=self.ticks, source=source)


def record_from(fields: Mapping[str, Any] | None) -> StepRecord:
    """A record starting from `fields` (missing ones zero), copied so the caller's lists stay untouched."""
    start = zero_fields()
    for key, value in (fields or {}).items():
        start[key] = list(value) if isinstance(value, (list, tuple)) else value
    return StepRecord(fields=start)


@dataclass
class StepContext:
    """One step being read: its table, the shared record and where to report.

    The getters return None when the key is absent (the field inherits), mark
    the key as used (unused keys are reported as unknown) and raise StepError
    for a value that must not be queued.
    """

    document: str
    number: int | None
    table: Mapping[str, Any]
    record: StepRecord
    tick_ms: float = TICK_MS
    source: str = FROM_MOTION
    warnings: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)

    def error(self, key: str | None, reason: str) -> StepError:
        return StepError(self.document, self.number, key, reason)

    def warn(self, key: str | None, message: str) -> None:
        self.warnings.append(_where(self.document, self.number, key) + message)

    def _take(self, key: str) -> Any:
        self.used.add(key)
        return self.table.get(key)

    def get_int(self, key: str, bits: int = 8) -> int | None:
        """An integer that fits a signed `bits`-bit wire field (8 or 32)."""
        value = self._take(key)
        if value is None:
            return None
        try:
            return check_int(key, value, bits)
        except FieldError as exc:
            raise self.error(key, exc.reason) from None

    def get_number(self, key: str) -> float | None:
        """A finite number that fits a float32 (the wire type of every float field)."""
        value = self._take(key)
        if value is None:
            return None
        try:
            return check_float(key, value)
        except FieldError as exc:
            raise self.error(key, exc.reason) from None

    def get_flag(self, key: str) -> bool | None:
        """0/1 or true/false."""
        value = self._take(key)
        if value is None:
            return None
        if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
            return bool(value)
        raise self.error(key, f"expected 0 or 1, got {value!r}")

    def get_text(self, key: str) -> str | None:
        value = self._take(key)
        if value is None or isinstance(value, str):
            return value
        raise self.error(key, f"expected a string, got {type(value).__name__} {value!r}")

    def get_array(self, key: str, length: int) -> list[float] | None:
        """An array of `length` finite numbers. Elements are checked first (a
        bad number is refused whatever the length); then a wrong length makes
        the step ignore the key, as the reference does (SPEC §4.6), with a warning."""
        value = self._take(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.error(key, f"expected an array of {length} numbers, got "
                                  f"{type(value).__name__} {value!r}")
        numbers = []
        for i, x in enumerate(value):
            try:
                numbers.append(check_float(key, x))
            except FieldError as exc:
                raise self.error(key, f"element {i}: {exc.reason}") from None
        if len(numbers) != length:
            self.warn(key, f"ignored: expected {length} numbers, got {len(numbers)} "
                           "(the field keeps its previous value)")
            return None
        return numbers

    def take_duration(self) -> int:
        """Apply the step's `duration` (ms) to the record; return the ticks (SPEC §4.6)."""
        ms = self.get_int("duration", bits=32)
        if ms is None:
            # Reference quirk: the record holds ticks and is converted again.
            inherited = self.record.ticks
            self.record.ticks = int(inherited / self.tick_ms)
            self.warn("duration", f"missing: the inherited {inherited} ticks are converted "
                                  f"again to {self.record.ticks} ticks, as the reference does "
                                  "(SPEC §4.6); give every step its duration")
        else:
            if ms < 0:
                raise self.error("duration", f"must be >= 0 ms, got {ms}")
            self.record.fields["duration"] = ms
            # Truncation toward zero, as block_from_message does for commands.
            self.record.ticks = int(ms / self.tick_ms)
        return self.record.ticks

    def block(self) -> Block:
        return self.record.to_block(self.source)

    def report_unused(self, allowed: Iterable[str] = ()) -> None:
        """Warn about keys no getter asked for: the reference ignores them, but a
        typo (`duraton`) silently changes the motion."""
        extra = set(allowed)
        for key in self.table:
            if key not in self.used and key not in extra:
                self.warn(key, "unknown key, ignored")


def apply_command_fields(ctx: StepContext, keys: Iterable[str] | None = None) -> None:
    """Copy robot_control_cmd fields named by the step into the record (SPEC §8.3).

    `duration` is left to StepContext.take_duration. Arrays must have the
    field's full wire length (foot_pose 6); a shorter one is ignored.
    """
    for key in (COMMAND_FIELDS if keys is None else keys):
        if key == "duration":
            continue
        spec = COMMAND_FIELDS[key]
        value: int | list[float] | None
        if spec.kind == "int8":
            value = ctx.get_int(key, 8)
        elif spec.kind == "int32":
            value = ctx.get_int(key, 32)
        else:
            value = ctx.get_array(key, spec.length)
        if value is not None:
            ctx.record.fields[key] = value


# One step in, the blocks it yields out (none for a skipped step, several for an include).
StepHandler = Callable[[StepContext], Sequence[Block]]


def read_steps(document: Mapping[str, Any], name: str, handler: StepHandler, *,
               tick_ms: float = TICK_MS, source: str = FROM_MOTION,
               warnings: list[str] | None = None, check: bool = True,
               max_steps: int = MAX_STEPS) -> list[Block]:
    """Run `handler` over the `[[step]]` tables of a parsed TOML document.

    One fresh record for the document. `check` validates the result as a
    schedule (see check_schedule); a loader reading an included file passes
    False and checks the spliced whole instead. Warnings are appended to
    `warnings`; problems raise StepError.
    """
    if not (tick_ms > 0 and math.isfinite(tick_ms)):
        raise ValueError(f"tick_ms must be a positive number, got {tick_ms}")
    sink = warnings if warnings is not None else []
    for key in document:
        if key != "step":
            sink.append(_where(name, None, key) + "unknown top-level key, ignored")
    tables = document.get("step")
    if not isinstance(tables, list) or not tables:
        # SPEC §11: the reference aborts on Params without [[step]].
        raise StepError(name, None, "step", "no [[step]] tables")
    if len(tables) > max_steps:
        raise StepError(name, None, "step", f"{len(tables)} steps; at most {max_steps} are allowed")
    record = StepRecord()
    numbered: list[tuple[int, Block]] = []
    for number, table in enumerate(tables, start=1):
        if not isinstance(table, dict):
            raise StepError(name, number, None, f"expected a table, got {table!r}")
        ctx = StepContext(name, number, table, record, tick_ms, source, sink)
        blocks = handler(ctx)
        ctx.report_unused()
        numbered.extend((number, b) for b in blocks)
    if check:
        check_schedule(numbered, name, sink, max_steps)
    return [b for _, b in numbered]


def check_schedule(numbered: Sequence[tuple[int, Block]], name: str,
                   warnings: list[str], max_steps: int = MAX_STEPS) -> None:
    """Refuse a step list the queue could never finish (SPEC §3.2, §11).

    A continuous (0-tick) block is never popped, so a continuous first step
    never ends and a continuous step anywhere but last strands the steps
    behind it: both are refused. A continuous last step is legal (it holds
    until the next command) but the progress bar then never reaches 100, so it
    is reported.
    """
    if not numbered:
        raise StepError(name, None, "step", "no step yields a command")
    if len(numbered) > max_steps:
        raise StepError(name, None, "step", f"{len(numbered)} blocks; at most {max_steps} are allowed")
    last = len(numbered) - 1
    for i, (number, block) in enumerate(numbered):
        if block.duration != 0:
            continue
        if i == 0:
            raise StepError(name, number, "duration", "0 ticks: a motion whose first step is "
                            "continuous never ends (SPEC §11)")
        if i < last:
            raise StepError(name, number, "duration", "0 ticks: a continuous step is never "
                            "popped, so the steps after it would never run")
        warnings.append(_where(name, number, "duration") + "0 ticks: the last step is continuous; "
                        "it holds until the next command and the motion's progress never reaches 100")
