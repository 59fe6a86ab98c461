"""Foxglove on a running robot (`motionctl foxglove`) and on a recording
(`motionctl export`): the LCM side of controller/service/foxglove_feed.py."""
from __future__ import annotations

import heapq
import select
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import foxglove
import lcm

from controller.robot.config import Config
from controller.service.foxglove_feed import Feed
from controller.service.recorder import pattern_of
from controller.service.recording import RecordingError, events, port_files

RECV_BUF = 4 * 1024 * 1024


class FoxgloveError(RuntimeError):
    """The server cannot listen, or the recording cannot be exported."""


@dataclass
class Served:
    messages: int
    poses: int
    port: int


def serve(cfg: Config, host: str, port: int, seconds: float | None = None,
          on_ready: object = None) -> Served:
    """Serve the robot on ws://host:port until Ctrl-C (or `seconds`)."""
    feed = Feed(cfg)
    try:
        server = foxglove.start_server(name=f"motiond {cfg.robot}", host=host, port=port)
    except Exception as exc:  # noqa: BLE001 - the SDK raises its own error kinds for a bad address
        raise FoxgloveError(f"cannot listen on {host}:{port} ({exc})") from exc
    pattern = pattern_of(feed.channels())
    instances = []
    try:
        for name in cfg.lcm.ports:
            inst = lcm.LCM(f"{cfg.lcm.url(name)}&recv_buf_size={RECV_BUF}")
            inst.subscribe(pattern, lambda ch, data: feed.on_message(ch, data, time.time_ns()))
            instances.append(inst)
        if callable(on_ready):
            on_ready(server.port)
        end = None if seconds is None else time.monotonic() + seconds
        while end is None or time.monotonic() < end:
            ready, _, _ = select.select(instances, [], [], 0.1)
            for inst in ready:
                inst.handle_timeout(0)
        return Served(feed.counts["messages"], feed.counts["poses"], server.port)
    finally:
        server.stop()


def merged(cfg: Config, base: Path) -> Iterator[tuple[int, str, bytes]]:
    """Every recorded message of every port, in the logger's time order."""
    files = port_files(base, list(cfg.lcm.ports))
    streams = [((e.timestamp_us, e.channel, e.data) for e in events(paths)) for paths in files.values()]
    return heapq.merge(*streams, key=lambda e: e[0])


def export(cfg: Config, base: Path, out: Path, overwrite: bool = False) -> dict[str, int]:
    """Write a recording's scene, joints, status and odometry to an MCAP file
    that Foxglove opens; the feed's counts."""
    if out.exists() and not overwrite:
        raise FoxgloveError(f"{out} exists (use --force to overwrite it)")
    context = foxglove.Context()
    feed = Feed(cfg, context=context)
    try:
        writer = foxglove.open_mcap(str(out), allow_overwrite=overwrite, context=context)
    except Exception as exc:  # noqa: BLE001 - the SDK's own I/O error kinds
        raise FoxgloveError(f"cannot write {out} ({exc})") from exc
    try:
        for t_us, channel, data in merged(cfg, base):
            feed.on_message(channel, data, t_us * 1000)
    except RecordingError:
        writer.close()
        out.unlink(missing_ok=True)
        raise
    writer.close()
    if feed.counts["messages"] == 0:
        out.unlink(missing_ok=True)
        raise FoxgloveError(f"{base}: nothing to export (no {', '.join(feed.channels())} in the recording)")
    return dict(feed.counts)
