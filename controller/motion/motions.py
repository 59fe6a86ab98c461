"""Mode-62 motions: CyberDog step-list files (SPEC §4).

A motion file is TOML with `[[step]]` tables. A step either includes another
file (`file = "..."`, read with a fresh record) or has a `type` that becomes
one command block (SPEC §4.6 table); fields a step does not set keep the
previous step's value. The library maps motion ids to files (robot config
`motions`), loads and checks every file at start, and expands a mode-62
block into its steps. A file that fails is refused with the file, step, key
and reason, and its id is refused at run time; the other motions still load.
"""
from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from controller.motion.steps import StepContext, StepError, check_schedule, read_steps
from controller.motion.usergait import usergait_step
from controller.protocol.block import ALL_LEGS, Block
from controller.robot.config.documents import parse_toml

MAX_INCLUDE_DEPTH = 4
SIT_DOWN_IDS = (3, 8, 9, 10)                   # SPEC §4.1 step 2
SIT_EXIT_TICKS = 400                           # 800 ms
SIT_EXIT_HEIGHT = 0.225                        # m
LOCOMOTION_STEP_HEIGHT = [0.06, 0.06]


# -- typed steps (SPEC §4.6) ----------------------------------------------------
def _set(ctx: StepContext, mode: int, gait: int | None = None) -> None:
    f = ctx.record.fields
    f["mode"] = mode
    if gait is not None:
        f["gait_id"] = gait


def _gait_from_step(ctx: StepContext) -> None:
    gait = ctx.get_int("gait_id")
    if gait is not None:
        ctx.record.fields["gait_id"] = gait


def _support(ctx: StepContext) -> None:
    """foot_support (FR, FL, RR, RL) -> contact bits: bit i set when entry i > 0."""
    support = ctx.get_array("foot_support", 4)
    if support is not None:
        ctx.record.fields["contact"] = sum(1 << i for i, s in enumerate(support) if s > 0)


def _support_and_body(ctx: StepContext) -> None:
    """foot_support; body_cmd (roll pitch yaw x y z) -> rpy_des, pos_des; foot_pose."""
    _support(ctx)
    f = ctx.record.fields
    body = ctx.get_array("body_cmd", 6)
    if body is not None:
        f["rpy_des"], f["pos_des"] = body[:3], body[3:]
    foot = ctx.get_array("foot_pose", 3)
    if foot is not None:
        f["foot_pose"] = foot + list(f["foot_pose"][3:])


def _pose_like(mode: int, gait: int) -> Callable[[StepContext], None]:
    def apply(ctx: StepContext) -> None:
        _set(ctx, mode, gait)
        _support_and_body(ctx)
        if mode == 21:
            centre = ctx.get_array("ctrl_point", 3)
            if centre is not None:
                ctx.record.fields["ctrl_point"] = centre
            mirror = ctx.get_int("mirror", 32)
            if mirror:
                ctx.record.fields["value"] = mirror
    return apply


def _transition(ctx: StepContext) -> None:
    _set(ctx, 21, 5)
    height = ctx.get_number("height")
    if height is not None:
        ctx.record.fields["pos_des"] = list(ctx.record.fields["pos_des"][:2]) + [height]


def _duration_only(mode: int, gait: int | None = None) -> Callable[[StepContext], None]:
    def apply(ctx: StepContext) -> None:
        _set(ctx, mode, gait)
        if gait is None:
            _gait_from_step(ctx)
    return apply


def _locomotion(mode: int) -> Callable[[StepContext], None]:
    def apply(ctx: StepContext) -> None:
        _set(ctx, mode)
        if mode == 11:
            _gait_from_step(ctx)
        f = ctx.record.fields
        vel = ctx.get_array("vel_des", 3)
        if vel is not None:
            f["vel_des"] = vel
        f["rpy_des"], f["pos_des"] = [0.0] * 3, [0.0] * 3
        f["step_height"] = list(LOCOMOTION_STEP_HEIGHT)
        # `omni` is read and has no effect: the reference's step reader never
        # uses it and vel_des is always in the body frame (SPEC §12.B).
        ctx.get_int("omni", 1)
    return apply


def _jumpacc(ctx: StepContext) -> None:
    _set(ctx, 22, 4)
    _support(ctx)
    f = ctx.record.fields
    linear = ctx.get_array("x_acc_cmd", 3)
    angular = ctx.get_array("w_acc_cmd", 3)
    acc = list(f["acc_des"])
    if angular is not None:
        acc[:3] = angular
    if linear is not None:
        acc[3:] = linear
    f["acc_des"] = acc


STEP_TYPES: dict[str, Callable[[StepContext], None]] = {
    "pose": _pose_like(21, 1),
    "swingleg": _pose_like(21, 2),
    "transition": _transition,
    "recoverystand": _duration_only(12, 0),
    "torctrlposture": _pose_like(3, 3),
    "locomotion": _locomotion(11),
    "jumpacc": _jumpacc,
    "jump3D": _duration_only(16),
    "rl_reset": _duration_only(80),
    "twoleg_stand": _duration_only(64),
    "rl_rapid": _locomotion(81),
}


# -- files ------------------------------------------------------------------------
@dataclass
class _Reader:
    root: Path                     # includes must stay inside this directory
    tick_ms: float
    warnings: list[str] = field(default_factory=list)

    def read(self, path: Path, depth: int = 0) -> list[Block]:
        name = str(path)
        try:
            document = parse_toml(path.read_text())
        except OSError as exc:
            raise StepError(name, None, None, f"cannot read: {exc.strerror}") from None
        except tomllib.TOMLDecodeError as exc:
            raise StepError(name, None, None, f"not valid TOML: {exc}") from None
        return read_steps(document, name, lambda ctx: self._step(ctx, path, depth),
                          tick_ms=self.tick_ms, warnings=self.warnings, check=False)

    def _step(self, ctx: StepContext, path: Path, depth: int) -> list[Block]:
        include = ctx.get_text("file")
        if include is not None:
            return self._include(ctx, path, include, depth)
        kind = ctx.get_text("type")
        if kind is None:
            # The reference aborts here (SPEC §11); motiond refuses the file.
            raise ctx.error(None, "a step needs a `type` or a `file`")
        if kind == "usergait":
            return list(usergait_step(ctx))
        apply = STEP_TYPES.get(kind)
        if apply is None:
            ctx.warn("type", f"unknown type {kind!r}: step skipped, as the reference does")
            ctx.used.update(ctx.table)
            return []
        apply(ctx)
        ctx.take_duration()
        return [ctx.block()]

    def _include(self, ctx: StepContext, path: Path, include: str, depth: int) -> list[Block]:
        if depth >= MAX_INCLUDE_DEPTH:
            raise ctx.error("file", f"includes nest deeper than {MAX_INCLUDE_DEPTH}")
        target = (path.parent / include).resolve()
        if not target.is_relative_to(self.root.resolve()):
            raise ctx.error("file", f"{include!r} is outside the motion directory {self.root}")
        return self.read(target, depth + 1)


def load_motion(path: Path, root: Path | None = None, tick_ms: float = 2.0,
                warnings: list[str] | None = None) -> list[Block]:
    """The command blocks of one motion file, checked as a schedule."""
    reader = _Reader(root or path.parent, tick_ms)
    blocks = reader.read(path)
    check_schedule(list(enumerate(blocks, start=1)), str(path), reader.warnings)
    if warnings is not None:
        warnings.extend(reader.warnings)
    return blocks


class MotionLibrary:
    """Motion id -> checked command blocks, from the robot config's `motions`."""

    def __init__(self, directory: Path, files: dict[int, str], tick_ms: float,
                 unmapped: int | None = None, refused: dict[int, str] | None = None) -> None:
        """`unmapped`: the id whose motion an id without a file plays (the
        reference's all-in-one, SPEC §4.1); None: such an id is refused.
        `refused`: ids refused whatever `unmapped` says, with the reason."""
        self.directory = directory
        self.unmapped = unmapped
        self.refused = dict(refused or {})
        self.motions: dict[int, list[Block]] = {}
        self.errors: dict[int, str] = {}
        self.warnings: list[str] = []
        for motion_id, name in files.items():
            try:
                self.motions[motion_id] = load_motion(directory / name, directory, tick_ms,
                                                      self.warnings)
            except ValueError as exc:   # StepError, GaitDefError, ...
                self.errors[motion_id] = str(exc)

    def expand(self, motion_id: int, previous_id: int) -> list[Block] | None:
        """Fresh blocks for the motion (SPEC §4.1), with the sit-down exit
        first when the previous motion sat down and this one does not."""
        steps = self.motions.get(motion_id)
        if steps is None and motion_id >= 0 and motion_id not in self.errors \
                and motion_id not in self.refused and self.unmapped is not None:
            steps = self.motions.get(self.unmapped)
        if steps is None:
            return None
        blocks = [b.again() for b in steps]
        if previous_id in SIT_DOWN_IDS and motion_id not in SIT_DOWN_IDS:
            blocks.insert(0, Block(mode=21, gait_id=5, pos_des=(0.0, 0.0, SIT_EXIT_HEIGHT),
                                   contact=ALL_LEGS, duration=SIT_EXIT_TICKS,
                                   source=blocks[0].source))
        return blocks

    def why_missing(self, motion_id: int) -> str:
        if motion_id in self.errors:
            return f"motion {motion_id} failed to load: {self.errors[motion_id]}"
        if motion_id in self.refused:
            return f"motion {motion_id} is refused: {self.refused[motion_id]}"
        return f"motion {motion_id} is not in the motion library ({sorted(self.motions)})"
