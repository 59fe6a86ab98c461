"""What went wrong, as controller_status and the log say it: the counters
(packets and commands rejected, heartbeats, timeouts), `last_error`, and
one log line per event a second at most (controller/logs.py RateLimit)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controller.logs import RateLimit


@dataclass
class Counters:
    commands_accepted: int = 0
    heartbeats: int = 0
    packets_rejected: int = 0
    commands_rejected: int = 0
    timeouts: int = 0
    last_error: str = ""


class Reports:
    def __init__(self, log: Any) -> None:
        self.log = log
        self.counters = Counters()
        self.limit = RateLimit()

    def reject_packet(self, now_ns: int, channel: str, reason: str) -> None:
        self.counters.packets_rejected += 1
        self.error(now_ns, f"packet on {channel} dropped: {reason}", "packet_rejected")

    def error(self, now_ns: int, text: str, event: str) -> None:
        self.counters.last_error = text
        suppressed = self.limit.allow(event, now_ns)
        if suppressed is not None:
            self.log.warning(event, reason=text, suppressed=suppressed)
