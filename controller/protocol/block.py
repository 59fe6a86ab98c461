"""Command blocks: one robot_control_cmd with its duration in ticks (SPEC §3.1)."""
from __future__ import annotations

import math
import struct
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

# robot_control_cmd_lcmt on the wire (SPEC §1.2): the 8-byte fingerprint, then
# mode, gait_id, contact, life_count (int8), the float arrays above in that
# order (26 float32) and value, duration (int32), big-endian: 124 bytes. One
# unpack of the whole packet instead of the generated decoder's nine.
COMMAND_WIRE = struct.Struct(">8s4b26f2i")
CommandValues = tuple[Any, ...]   # COMMAND_WIRE's fields after the fingerprint


def command_values(msg: Any) -> CommandValues:
    """A decoded robot_control_cmd_lcmt (or any object with its fields) as
    the flat values COMMAND_WIRE holds after the fingerprint."""
    floats: list[float] = []
    for name, n in _ARRAYS.items():
        floats += map(float, getattr(msg, name)[:n])
    return (msg.mode, msg.gait_id, msg.contact, msg.life_count, *floats, msg.value, msg.duration)


def block_from_values(v: CommandValues, tick_ms: float) -> Block:
    """A block from a robot_control_cmd's values (COMMAND_WIRE's order). Raises
    ValueError, naming the field, when a float is NaN or infinite (SPEC §2.4;
    bad-input rule)."""
    f = v[4:30]
    if not all(map(math.isfinite, f)):
        start = 0
        for name, n in _ARRAYS.items():
            values = f[start:start + n]
            if not all(map(math.isfinite, values)):
                raise ValueError(f"{name} is not finite: {values}")
            start += n
    # Integer division truncating toward zero: 1 ms -> 0 (continuous), -3 ms -> -1.
    ticks = int(v[31] / tick_ms)
    return Block(mode=v[0], gait_id=v[1], contact=v[2], value=v[30], duration=ticks,
                 life_count=v[3], source=FROM_COMMAND,
                 vel_des=f[0:3], rpy_des=f[3:6], pos_des=f[6:9], acc_des=f[9:15],
                 ctrl_point=f[15:18], foot_pose=f[18:24], step_height=f[24:26])


def block_from_message(msg: Any, tick_ms: float) -> Block:
    """A block from a decoded robot_control_cmd_lcmt (block_from_values)."""
    return block_from_values(command_values(msg), tick_ms)


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
