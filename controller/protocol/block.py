"""Command blocks: one robot_control_cmd with its duration in ticks (SPEC §3.1)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from itertools import count
from typing import Any

Vec = tuple[float, ...]

# Where a block came from. Only blocks from robot_control_cmd clear the motion
# trigger when they expire into an empty queue (SPEC §3.3).
FROM_COMMAND = "command"
FROM_MOTOR = "motor_ctrl"
FROM_TIMEOUT = "timeout"
FROM_FILLER = "filler"
FROM_INJECTED = "injected"
FROM_GOAL = "goal"           # a motion_goal move drives mode 11
FROM_MOTION = "motion"       # a step of a mode-62 motion; counts as a command (SPEC §4.3)
FROM_SCRIPT = "script"       # a full-body script request plays in the script mode
FROM_FAULT = "fault"         # a fault's damper or OFF (controller/core/faults.py)

FILLER_TICKS = 200  # 400 ms (SPEC §3.4)
ALL_LEGS = 0x0F

_block_ids = count(1)


@dataclass(frozen=True)
class Block:
    mode: int
    gait_id: int = 0
    contact: int = 0
    vel_des: Vec = (0.0, 0.0, 0.0)
    rpy_des: Vec = (0.0, 0.0, 0.0)
    pos_des: Vec = (0.0, 0.0, 0.0)
    acc_des: Vec = (0.0,) * 6
    ctrl_point: Vec = (0.0, 0.0, 0.0)
    foot_pose: Vec = (0.0,) * 6
    step_height: Vec = (0.03, 0.03)
    value: int = 0
    duration: int = 0          # ticks; 0 = continuous
    life_count: int = 0
    source: str = FROM_COMMAND
    # The director's ScriptRun a FROM_SCRIPT block plays (the script mode).
    script: Any = field(default=None, compare=False)
    # A fresh id per block, so behaviours can tell a new block from the same one.
    uid: int = field(default_factory=lambda: next(_block_ids), compare=False)

    def again(self, **changes: Any) -> Block:
        """A copy with changes, as a new block (new uid)."""
        return replace(self, uid=next(_block_ids), **changes)


_ARRAYS = {"vel_des": 3, "rpy_des": 3, "pos_des": 3, "acc_des": 6, "ctrl_point": 3,
           "foot_pose": 6, "step_height": 2}


def block_from_message(msg: Any, tick_ms: float) -> Block:
    """A block from a decoded robot_control_cmd_lcmt. Raises ValueError, naming
    the field, when a float is NaN or infinite (SPEC §2.4; bad-input rule)."""
    arrays: dict[str, tuple[float, ...]] = {}
    for name, n in _ARRAYS.items():
        values = tuple(map(float, getattr(msg, name)[:n]))   # map: on the accepting tick's path
        if not all(map(math.isfinite, values)):
            raise ValueError(f"{name} is not finite: {values}")
        arrays[name] = values
    # Integer division truncating toward zero: 1 ms -> 0 (continuous), -3 ms -> -1.
    ticks = int(msg.duration / tick_ms)
    return Block(mode=msg.mode, gait_id=msg.gait_id, contact=msg.contact,
                 value=msg.value, duration=ticks,
                 life_count=msg.life_count, source=FROM_COMMAND,
                 vel_des=arrays["vel_des"], rpy_des=arrays["rpy_des"], pos_des=arrays["pos_des"],
                 acc_des=arrays["acc_des"], ctrl_point=arrays["ctrl_point"],
                 foot_pose=arrays["foot_pose"], step_height=arrays["step_height"])


def filler_for(popped: Block) -> Block:
    """The block pushed when `popped` expires into an empty queue (SPEC §3.4, §11)."""
    def filler(mode: int, gait_id: int, step_height: Vec = Block.step_height) -> Block:
        return Block(mode=mode, gait_id=gait_id, step_height=step_height, contact=ALL_LEGS,
                     duration=FILLER_TICKS, source=FROM_FILLER)

    if popped.mode == 3:
        return filler(3, 1, (0.05, 0.05))
    if popped.mode == 11:
        return filler(11, 1 if popped.gait_id <= 30 else 31, (0.05, 0.05))
    if popped.mode in (0, 7):
        # motiond: a timed OFF or damper block is followed by more of the same,
        # not by a pose-hold request that the state refuses for ever (SPEC §11).
        return filler(popped.mode, popped.gait_id)
    return filler(21, 3)
