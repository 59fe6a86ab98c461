"""The command-block queue (SPEC §3): enqueue rules, expiry, fillers, overrides
and the motion progress counters."""
from __future__ import annotations

from collections import deque
from collections.abc import Callable

from controller.protocol.block import FROM_COMMAND, FROM_INJECTED, FROM_MOTION, Block, filler_for
from controller.protocol.constants import MOTION_MODE as MOTION
from controller.protocol.constants import USER_GAIT

TRANSITIONING = 1
LIE_SIDE_GAITS = (17, 18)
LIE_SIDE_STAND_TICKS = 4

# Expands a mode-62 block into its steps; None when the motion is unknown.
MotionExpander = Callable[[Block], list[Block] | None]


class CommandQueue:
    def __init__(self, capacity: int = 1024, expand_motion: MotionExpander | None = None) -> None:
        self.blocks: deque[Block] = deque()
        self.capacity = capacity
        self.timer = 0           # ticks the front block has been active
        self.remaining = 0       # motion / user-gait progress counters (SPEC §4.5)
        self.total = 0
        self.motion_id = 0
        self.motion_trigger = 0
        self.override: int | None = None  # unresponsive-safety request (SPEC §3.5)
        self.expand_motion = expand_motion
        self.dropped = 0          # mode-62 commands dropped while a motion runs
        self.overflowed = 0       # blocks refused because the queue was full

    def __len__(self) -> int:
        return len(self.blocks)

    @property
    def active(self) -> Block | None:
        return self.blocks[0] if self.blocks else None

    def _reset(self) -> None:
        self.blocks.clear()
        self.timer = 0
        self.remaining = 0
        self.total = 0

    def replace_all(self, block: Block) -> None:
        """Clear the queue and make `block` the only one (timeout, motor_ctrl)."""
        self.blocks.clear()
        self.timer = 0
        self.blocks.append(block)

    def enqueue(self, block: Block) -> str | None:
        """Add an accepted command (SPEC §3.2). Returns None, or why it was dropped."""
        if block.duration == 0 and block.mode != MOTION:
            self._reset()  # a continuous command pre-empts everything queued
        else:
            if block.mode == MOTION and self.motion_trigger > 0:
                self.dropped += 1
                return "a motion is running; mode-62 commands are dropped until it ends"
            while self.blocks and self.blocks[0].duration == 0:
                self.blocks.popleft()
                self.timer = 0
        extra = 2 if block.mode == 12 and block.gait_id in LIE_SIDE_GAITS and block.duration == 0 else 1
        if len(self.blocks) + extra > self.capacity:
            self.overflowed += 1
            return f"the command queue is full ({self.capacity} blocks)"
        if extra == 2:
            # A short plain stand first re-arms the side-lying request (SPEC §3.2.3).
            self.blocks.append(block.again(gait_id=0, duration=LIE_SIDE_STAND_TICKS,
                                           source=FROM_INJECTED))
        if block.mode == 11 and block.gait_id == USER_GAIT:
            self.remaining += 1
            self.total += 1
        self.blocks.append(block)
        return None

    def process(self, previous_status: int) -> Block:
        """Per-tick processing (SPEC §3.3); returns the active block."""
        if not self.blocks:
            raise RuntimeError("process() on an empty queue: the intake always provides a block")
        if self.override is not None:
            front = self.blocks[0]
            self.blocks.clear()
            self.blocks.append(front.again(mode=self.override, gait_id=0, duration=0))
            self.override = None
        front = self.blocks[0]
        if front.duration != 0 and self.timer >= front.duration:
            self.blocks.popleft()
            if (front.mode == 11 and front.gait_id == USER_GAIT) or self.motion_trigger > 0:
                self.remaining = max(0, self.remaining - 1)
            if not self.blocks:
                if front.source in (FROM_COMMAND, FROM_MOTION):
                    self.motion_trigger = 0
                self.blocks.append(filler_for(front))
            self.timer = 0
        active = self.blocks[0]
        if active.mode == MOTION and self.motion_trigger == 0:
            active = self._expand(active)
        elif active.duration == 0:
            self.motion_id = 0
            self.motion_trigger = 0
        if previous_status != TRANSITIONING:
            self.timer += 1
        return active

    def _expand(self, block: Block) -> Block:
        """Replace the queue with the motion's steps (SPEC §4.1)."""
        steps = self.expand_motion(block) if self.expand_motion else None
        if not steps:
            return block  # the FSM refuses mode 62 itself: BAN_TRANS, block expires on schedule
        self.blocks.clear()
        self.blocks.extend(steps)
        self.remaining = self.total = len(self.blocks)
        self.motion_id = block.gait_id
        self.motion_trigger = block.gait_id or 1
        self.timer = 0
        return self.blocks[0]

    def motion_progress(self) -> int:
        """bar = trunc((total - remaining) * 100 / total) + 1, capped (SPEC §4.5)."""
        if self.total <= 0:
            return 0
        bar = min(100, (self.total - self.remaining) * 100 // self.total + 1)
        front = self.blocks[0] if self.blocks else None
        if self.remaining == 1 and front is not None and front.duration > 0 \
                and self.timer * 10 > front.duration * 9:
            bar = 100
        return bar

    def remaining_ticks(self) -> int:
        front = self.active
        if front is None or front.duration <= 0:
            return 0
        return max(0, front.duration - self.timer)
