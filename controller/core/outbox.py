"""What a tick hands back (Outbox) and the loop telemetry the runtime hands
in (Timing)."""
from __future__ import annotations

from dataclasses import dataclass, field

from controller.robot.native import Payload


@dataclass
class Timing:
    """Loop telemetry the runtime measures; copied into controller_status."""
    lateness_p50_us: float = 0.0
    lateness_p99_us: float = 0.0
    lateness_max_us: float = 0.0
    loop_p99_us: float = 0.0
    tick_overruns: int = 0


@dataclass
class Outbox:
    """Encoded messages to publish: (port name, channel, bytes-like). The
    controller reuses its outbox and the joint command's buffer, so both are
    valid until the next step: publish them, or copy what you keep."""
    messages: list[tuple[str, str, Payload]] = field(default_factory=list)

    def add(self, port: str, channel: str, data: Payload) -> None:
        self.messages.append((port, channel, data))

    def get(self, channel: str) -> Payload | None:
        for _, ch, data in self.messages:
            if ch == channel:
                return data
        return None
