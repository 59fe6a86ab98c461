"""`motionctl record`'s logger: every motiond channel, one file series per
LCM port, written as LCM event logs (the lcm-logger format) by this process.

Not lcm-logger: it subscribes with LCM's default queue of 30 messages per
subscription, about five ticks of the joint port, and drops the rest
whenever it is kept off the CPU for longer (a loaded robot computer; seen on
a 2-vCPU machine running two daemons). Here each subscription queues
QUEUE_CAPACITY messages (tens of seconds of the joint port) and the socket
buffer is LOGGER_RECV_BUF, so a logger that falls behind catches up.
"""
from __future__ import annotations

import re
import select
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import lcm

from controller.robot.config import LcmConfig
from controller.service.recording import PortLog

QUEUE_CAPACITY = 1 << 17     # messages per port between two handler runs
LOGGER_RECV_BUF = 8 * 1024 * 1024    # bytes


def channel_pattern(lcm_cfg: LcmConfig) -> str:
    """One LCM subscription pattern for every motiond channel (namespaced).
    LCM anchors a pattern as ^...$, which without the group would bind to the
    first and last alternatives only (someone_else/joint_cmd would match)."""
    return pattern_of(lcm_cfg.channels.values())


def pattern_of(channels: Iterable[str]) -> str:
    """One LCM subscription pattern for exactly these channel names."""
    return "(" + "|".join(re.escape(c) for c in sorted(set(channels))) + ")"


class Recorder:
    """Listens on every port of `lcm_cfg` and writes what arrives to
    BASE.<port>.lcmlog.NN (PortLog: split every split_bytes, `keep`)."""

    def __init__(self, lcm_cfg: LcmConfig, base: Path, split_bytes: int, keep: int) -> None:
        pattern = channel_pattern(lcm_cfg)
        self.logs: dict[str, PortLog] = {}
        self.instances: dict[int, tuple[str, lcm.LCM]] = {}
        self.counts: dict[str, int] = {}
        for port in lcm_cfg.ports:
            url = f"{lcm_cfg.url(port)}&recv_buf_size={LOGGER_RECV_BUF}"
            inst = lcm.LCM(url)
            self.counts[port] = 0
            sub = inst.subscribe(pattern, self._handler(port))
            sub.set_queue_capacity(QUEUE_CAPACITY)
            self.instances[inst.fileno()] = (port, inst)
        # The files appear once every port is listened to (a caller may wait
        # for them), and not at all when a URL cannot be opened.
        try:
            for port in lcm_cfg.ports:
                self.logs[port] = PortLog(base, port, split_bytes, keep)
        except OSError:
            self.close()
            raise

    def _handler(self, port: str) -> Callable[[str, bytes], None]:
        logs, counts = self.logs, self.counts

        def on_message(channel: str, data: bytes) -> None:
            # The time it is written: LCM's Python handler gets no receive
            # stamp. Within milliseconds of the arrival while the recorder
            # keeps up; a backlog it catches up on is stamped as it is written.
            logs[port].write(time.time_ns() // 1000, channel, data)
            counts[port] += 1
        return on_message

    def run(self, seconds: float | None = None) -> None:
        """Record until `seconds` have passed (None: until KeyboardInterrupt,
        which the caller turns SIGTERM into)."""
        end = None if seconds is None else time.monotonic() + seconds
        fds = list(self.instances)
        while True:
            wait = 0.1 if end is None else min(0.1, end - time.monotonic())
            if wait <= 0:
                return
            ready, _, _ = select.select(fds, [], [], wait)
            for fd in ready:
                inst = self.instances[fd][1]
                while inst.handle_timeout(0) > 0:
                    pass

    def drain(self) -> None:
        """Write what has arrived and is still queued (when stopping)."""
        for _, inst in self.instances.values():
            while inst.handle_timeout(0) > 0:
                pass

    def close(self) -> None:
        for log in self.logs.values():
            log.close()
