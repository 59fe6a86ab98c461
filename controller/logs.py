"""Logging: structlog events with fields, a per-reason rate limit for events
bad input can trigger at line rate, and one of three renderings of stderr:

- the systemd journal (stderr is the stream systemd named in JOURNAL_STREAM):
  JSON lines, each behind a kernel-style "<N>" priority prefix (sd-daemon(3)),
  which journald strips and files as the entry's PRIORITY, so
  `journalctl -p warning` and the colours of `journalctl` work;
- a terminal: a readable console;
- anything else (a pipe, a file): plain JSON lines.
"""
from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any, TextIO

import structlog

LEVELS = ("debug", "info", "warning", "error")

# syslog priorities by structlog level name (add_log_level turns the
# `exception` method into "error").
PRIORITIES = {"critical": 2, "error": 3, "warning": 4, "info": 6, "debug": 7}


# The least severe level configure() lets through (structlog's default, before
# any configure(), writes every level).
_min_level = logging.DEBUG


def configure(level: str = "info", stream: TextIO | None = None, environ: Mapping[str, str] | None = None) -> None:
    global _min_level
    _min_level = getattr(logging, level.upper())
    stream = stream or sys.stderr
    if is_journal(stream, environ):
        renderer: list = [structlog.processors.format_exc_info, JournalRenderer()]
    elif stream.isatty():
        renderer = [structlog.dev.ConsoleRenderer(colors=True)]
    else:
        # format_exc_info keeps a traceback inside the one JSON line.
        renderer = [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            *renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )


def is_journal(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Whether `stream` is connected to the journal: systemd sets JOURNAL_STREAM
    to "<device>:<inode>" of the socket it gave the service as stdout/stderr.
    Comparing them (not just testing the variable) matters because the
    variable is inherited: a child whose stderr was redirected must not
    write priority prefixes into a file."""
    value = (os.environ if environ is None else environ).get("JOURNAL_STREAM", "")
    try:
        dev, ino = (int(part) for part in value.split(":"))
        st = os.fstat(stream.fileno())
    except (ValueError, OSError, AttributeError):
        return False    # unset or malformed, or a stream without a file descriptor
    return (st.st_dev, st.st_ino) == (dev, ino)


class JournalRenderer:
    """JSON after the "<N>" priority prefix journald reads (SyslogLevelPrefix=)."""

    def __init__(self) -> None:
        self._json = structlog.processors.JSONRenderer()

    def __call__(self, logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> str:
        priority = PRIORITIES.get(event_dict.get("level", ""), 6)
        rendered = self._json(logger, method_name, event_dict)
        if isinstance(rendered, bytes):   # JSONRenderer returns str unless given a bytes serializer
            rendered = rendered.decode()
        return f"<{priority}>" + rendered


def get_logger(name: str = "motiond") -> Any:
    return structlog.get_logger(name)


def debug_enabled() -> bool:
    """Whether a debug event is written. The tick asks before logging one: a
    filtered structlog call still binds a logger first, which costs tens of
    microseconds on the tick that takes a new command in."""
    return _min_level <= logging.DEBUG


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
