"""Logging: structlog events with fields, a readable console on a terminal and
JSON lines otherwise, and a per-reason rate limit for events bad input can
trigger at line rate."""
from __future__ import annotations

import logging
import sys

import structlog

LEVELS = ("debug", "info", "warning", "error")


def configure(level: str = "info", stream=None) -> None:
    stream = stream or sys.stderr
    renderer = (structlog.dev.ConsoleRenderer(colors=stream.isatty()) if stream.isatty()
                else structlog.processors.JSONRenderer())
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )


def get_logger(name: str = "motiond"):
    return structlog.get_logger(name)


class RateLimit:
    """At most one event per key per `period_ns` (on the controller's clock);
    counts what it suppressed so the next event can say how many."""

    def __init__(self, period_ns: int = 1_000_000_000) -> None:
        self.period_ns = period_ns
        self._last: dict[str, int] = {}
        self._suppressed: dict[str, int] = {}

    def allow(self, key: str, now_ns: int) -> int | None:
        """The number suppressed since the last allowed event, or None to stay quiet."""
        last = self._last.get(key)
        if last is not None and now_ns - last < self.period_ns:
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            return None
        self._last[key] = now_ns
        return self._suppressed.pop(key, 0)
