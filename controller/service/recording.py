"""Recordings of a motiond session: LCM event logs (lcm-logger's format),
one series per LCM port.

An LCM instance listens on one URL and motiond uses one UDP port per kind of
traffic (config lcm.ports), so a recording named BASE is one file series per
port (controller/service/recorder.py), BASE.<port>.lcmlog.NN (NN counts up
from 00 when the file is split by size; with --keep the newest part is .0
and older ones shift up). Within a port the file keeps the order of arrival,
which is the order motiond took the packets in; that is all replay needs
(controller/service/replay.py).
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lcm

SUFFIX = "lcmlog"
_PART = re.compile(r"^(?P<base>.+)\.(?P<port>[A-Za-z_]+)\." + SUFFIX + r"(\.\d+)?$")


class RecordingError(ValueError):
    """A recording is missing, incomplete or unreadable."""


def part_name(base: Path, port: str) -> Path:
    return base.parent / f"{base.name}.{port}.{SUFFIX}"


def existing_parts(base: Path, ports: list[str]) -> list[Path]:
    """Files of an earlier recording with this base: a new one must not mix with them."""
    return sorted(p for port in ports for p in base.parent.glob(f"{base.name}.{port}.{SUFFIX}*"))


def base_of(path: Path) -> Path:
    """The recording's base name from itself or from any of its files."""
    m = _PART.match(path.name)
    return path.parent / m["base"] if m else path


@dataclass(frozen=True)
class Event:
    timestamp_us: int     # when the recorder wrote it (host clock; replay uses the order only)
    channel: str
    data: bytes


EVENT_HEADER = 28     # bytes an event log adds to an event: sync, number, time, two lengths


class PortLog:
    """One port's files: BASE.<port>.lcmlog.00, .01, ..., a new part once
    one holds split_bytes; or with keep > 0 only the newest `keep` parts,
    the newest as .0 and the older ones renamed up (the oldest deleted)."""

    def __init__(self, base: Path, port: str, split_bytes: int | None = None, keep: int = 0) -> None:
        self.stem = str(part_name(base, port))
        self.split_bytes, self.keep = split_bytes, keep
        self.parts = 0
        self.log = self._open()

    def _name(self, k: int) -> str:
        return f"{self.stem}.{k}" if self.keep else f"{self.stem}.{k:02d}"

    def _open(self) -> lcm.EventLog:
        self.size = 0
        if self.keep:
            Path(self._name(self.keep - 1)).unlink(missing_ok=True)
            for k in range(min(self.parts, self.keep - 1) - 1, -1, -1):
                Path(self._name(k)).rename(self._name(k + 1))
            name = self._name(0)
        else:
            name = self._name(self.parts)
        self.parts += 1
        return lcm.EventLog(name, "w", overwrite=True)

    def write(self, utime: int, channel: str, data: bytes) -> None:
        if self.split_bytes is not None and self.size and self.size >= self.split_bytes:
            full, self.log = self.log, self._open()    # a usable log at every moment
            full.close()
        self.log.write_event(utime, channel, data)
        self.size += EVENT_HEADER + len(channel) + len(data)

    def close(self) -> None:
        self.log.close()


class RecordingWriter:
    """Writes a recording in the layout above from messages handed to it
    (an in-process trial, controller/sim/trial.py): one file per port,
    each event stamped with the time given."""

    def __init__(self, base: Path, ports: list[str]) -> None:
        base.parent.mkdir(parents=True, exist_ok=True)
        self.logs = {port: PortLog(base, port) for port in ports}

    def __call__(self, port: str, utime: int, channel: str, data: bytes) -> None:
        self.logs[port].write(utime, channel, data)

    def close(self) -> None:
        for log in self.logs.values():
            log.close()


def port_files(base: Path, ports: list[str]) -> dict[str, list[Path]]:
    """Every file of the recording per port, oldest part first."""
    base = base_of(base)
    out: dict[str, list[Path]] = {}
    for port in ports:
        parts = [p for p in existing_parts(base, [port]) if _PART.match(p.name)]
        # Split and rotated parts number differently; the first event orders them.
        out[port] = sorted(parts, key=_first_timestamp)
    if not any(out.values()):
        raise RecordingError(f"no recording at {base} (expected files {base.name}.<port>.{SUFFIX}.NN "
                             f"for ports {', '.join(ports)})")
    return out


def _first_timestamp(path: Path) -> int:
    for event in _read(path):
        return event.timestamp_us
    return 1 << 62   # an empty part sorts last


def events(paths: list[Path]) -> Iterator[Event]:
    for path in paths:
        yield from _read(path)


def _read(path: Path) -> Iterator[Event]:
    try:
        log = lcm.EventLog(str(path), "r")
    except OSError as exc:
        raise RecordingError(f"{path}: cannot open: {exc}") from None
    try:
        # A logger stopped mid-write leaves a torn last event; the reader stops there.
        for e in log:
            yield Event(int(e.timestamp), e.channel, bytes(e.data))
    finally:
        log.close()


def decode(kind: Any, data: bytes, channel: str) -> Any:
    """A recorded message decoded, or a RecordingError naming the channel."""
    try:
        return kind.decode(data)
    except ValueError as exc:
        raise RecordingError(f"a message on {channel} does not decode as {kind.__name__} ({exc}): "
                             "recorded by another motiond version, or another publisher") from None
