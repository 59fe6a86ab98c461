"""Command intake (SPEC §2): the life_count rule and the receive timer."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controller.protocol.block import Block, CommandValues, block_from_values, command_values

HEARTBEAT_MODE = -1


@dataclass
class IntakeResult:
    block: Block | None = None   # an accepted command
    heartbeat: bool = False      # a repeat or mode -1: refreshes the timer only
    error: str | None = None     # rejected: why


HEARTBEAT = IntakeResult(heartbeat=True)   # shared: results are read, never changed


class Intake:
    """Turns decoded robot_control_cmd messages into blocks.

    A message counts as new only when its life_count differs from the last
    accepted one, which starts at -1 (SPEC §2.3). Every message, new or not,
    restarts the receive timer (SPEC §2.1).
    """

    def __init__(self, timeout_ns: int, tick_ms: float) -> None:
        self.timeout_ns = timeout_ns
        self.tick_ms = tick_ms
        self.half_tick_ns = int(tick_ms * 500_000)
        self.last_life_count = -1
        self.last_rx_ns: int | None = None
        self.seen_next = False     # the last packet came in while a tick ran: the next one sees it

    def receive(self, msg: Any, now_ns: int) -> IntakeResult:
        """A decoded robot_control_cmd_lcmt (receive_values)."""
        return self.receive_values(command_values(msg), now_ns)

    def receive_values(self, values: CommandValues, now_ns: int, late: bool = False) -> IntakeResult:
        """A robot_control_cmd as the values COMMAND_WIRE holds after the
        fingerprint (mode, gait_id, contact, life_count, ...), taken in by the
        tick at now_ns. `late`: it arrived while that tick ran, so the next
        tick is the one that sees it and starts its timer (begin_tick)."""
        self.last_rx_ns = now_ns
        self.seen_next = late
        life_count = values[3]
        if values[0] == HEARTBEAT_MODE or life_count == self.last_life_count:
            return HEARTBEAT
        # The life_count is consumed even when the fields are bad, so the
        # client's heartbeats (same life_count) do not re-report the same error.
        self.last_life_count = life_count
        try:
            return IntakeResult(block=block_from_values(values, self.tick_ms))
        except ValueError as exc:
            return IntakeResult(error=f"command rejected: {exc}")

    def begin_tick(self, now_ns: int) -> None:
        """Before a tick takes in its packets: a packet the previous tick took
        in late is seen now, and its timer starts at this tick's time (the
        tick woke after that one ended, so after the packet arrived)."""
        if self.seen_next:
            self.last_rx_ns = now_ns
            self.seen_next = False

    def fresh(self, now_ns: int) -> bool:
        """True while the last robot_control_cmd is younger than the timeout.

        Both times are tick times: the timer starts at the tick that sees the
        packet, the first to wake after it arrived (one that arrives while a
        tick runs is taken in by that tick but seen by the next; the runtime
        says which, controller/service/runtime.py). The age is then a whole
        number of ticks plus wake-up jitter; half a tick of slack makes the
        timeout fire on the exact tick (250 ticks after the one that saw the
        packet) rather than one tick late whenever that tick woke a few
        microseconds early. So it fires before the packet is 500 ms old only
        by the lateness of the tick that saw it, for a packet that came in
        between that tick's deadline and its wake-up (microseconds).
        """
        if self.last_rx_ns is None:
            return False
        return now_ns - self.last_rx_ns < self.timeout_ns - self.half_tick_ns
