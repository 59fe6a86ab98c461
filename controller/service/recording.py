"""Recordings of a motiond session: lcm-logger files, one series per LCM port.

lcm-logger listens on one URL and motiond uses one UDP port per kind of
traffic (config lcm.ports), so a recording named BASE is one logger per port,
each writing BASE.<port>.lcmlog.NN (NN counts up from 00 when the file is
split by size; with --keep the newest part is .0 and older ones shift up).
Within a port the file keeps the order of arrival, which is the order motiond
took the packets in; that is all replay needs (controller/service/replay.py).
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lcm

from controller.robot.config import LcmConfig

SUFFIX = "lcmlog"
_PART = re.compile(r"^(?P<base>.+)\.(?P<port>[A-Za-z_]+)\." + SUFFIX + r"(\.\d+)?$")


class RecordingError(ValueError):
    """A recording is missing, incomplete or unreadable."""


LOGGER_RECV_BUF = 4 * 1024 * 1024    # bytes


def logger_argv(tool: Path | str, lcm_cfg: LcmConfig, port: str, base: Path,
                split_mb: float, keep: int) -> list[str]:
    """The lcm-logger command that records every motiond channel on one port."""
    channels = "|".join(re.escape(c) for c in sorted(set(lcm_cfg.channels.values())))
    # lcm-logger 1.5's long --increment takes an argument (it would swallow
    # the next option), so the short -i.
    mode = f"--rotate={keep}" if keep > 0 else "-i"
    # A large socket buffer: a logger starved of CPU for a moment (a loaded
    # robot computer) catches up instead of losing packets.
    url = f"{lcm_cfg.url(port)}&recv_buf_size={LOGGER_RECV_BUF}"
    return [str(tool), "--quiet", f"--lcm-url={url}", f"--channel=^({channels})$",
            mode, f"--split-mb={split_mb:g}", str(part_name(base, port))]


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
    timestamp_us: int     # when the logger received it (host clock)
    channel: str
    data: bytes


class RecordingWriter:
    """Writes a recording in the layout above from messages handed to it
    (an in-process trial, controller/sim/trial.py): one file per port,
    each event stamped with the time given."""

    def __init__(self, base: Path, ports: list[str]) -> None:
        base.parent.mkdir(parents=True, exist_ok=True)
        self.logs = {port: lcm.EventLog(str(part_name(base, port)) + ".00", "w", overwrite=True)
                     for port in ports}

    def __call__(self, port: str, utime: int, channel: str, data: bytes) -> None:
        self.logs[port].write_event(utime, channel, data)

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
