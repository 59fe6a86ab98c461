"""LCM in and out: one LCM instance per URL, raw packets in arrival order.

The controller core works on raw (channel, bytes) pairs so that decoding
failures are counted in one place (the core) and a recorded session can be
replayed byte for byte. This module only moves bytes.
"""
from __future__ import annotations

import ctypes
import struct
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import lcm

if TYPE_CHECKING:     # the C kernel (and numpy) load only where a buffer is made
    from controller.robot.config import LcmConfig
    from controller.robot.native import Payload

# Deep enough that a flood of one packet per 100 us (5 ticks' worth at 10 kHz)
# never overflows between two drains.
QUEUE_CAPACITY = 4096


def packet_crc(crc: int, channel: str, data: bytes) -> int:
    """A running CRC-32 over packets (channel name and bytes): the daemon's
    trace and a replay compute it alike to prove they took in the same packets."""
    return zlib.crc32(data, zlib.crc32(channel.encode(), crc))


# lcm-gen's scalar type names and their struct codes (big-endian on the wire).
_SCALAR_CODES = {"int8_t": "b", "int16_t": "h", "int32_t": "i", "int64_t": "q",
                 "float": "f", "double": "d", "boolean": "?", "byte": "B"}


class FixedEncoder:
    """Encodes a message type with only scalar fields into one reused buffer
    (publish_buffer), byte for byte as its lcm-gen encode() would, without the
    BytesIO and bytes that costs. The next encode overwrites it."""

    def __init__(self, kind: Any) -> None:
        if any(d is not None for d in kind.__dimensions__):
            raise TypeError(f"{kind.__name__} has arrays: not a fixed-size scalar type")
        self.fields = tuple(kind.__slots__)
        self.struct = struct.Struct(">8s" + "".join(_SCALAR_CODES[t] for t in kind.__typenames__))
        self.fingerprint = kind._get_packed_fingerprint()
        from controller.robot.native import publish_buffer
        self.buffer = publish_buffer(self.struct.size)

    def encode(self, *values: Any) -> ctypes.Array:
        """`values` in field order (the .lcm file's)."""
        self.struct.pack_into(self.buffer, 0, self.fingerprint, *values)
        return self.buffer


class Packets(Protocol):
    """What the runtime needs of a bus: the LCM Bus below, or a test's
    in-memory stand-in."""

    taken: dict[str, int]
    crc: dict[str, int]

    def subscribe(self, port_name: str, channel: str) -> None: ...
    def drain(self, ports: Sequence[str] | None = None) -> list[tuple[str, bytes]]: ...
    def publish(self, port_name: str, channel: str, data: Payload) -> None: ...


HANDLE_FAILURES_MAX = 100    # lcm_handle_timeout failures in a row before the bus gives up


class Urls(Protocol):
    def url(self, port_name: str) -> str: ...


class Bus:
    """Subscribe and publish on the configured LCM URLs, without blocking."""

    def __init__(self, cfg: LcmConfig | Urls) -> None:
        self.cfg = cfg
        self._lcm: dict[str, lcm.LCM] = {}
        self._inbox: list[tuple[str, bytes]] = []
        self._spare: list[tuple[str, bytes]] = []   # drain() hands the two lists out in turn
        # Packets taken in so far per port, drained in subscription order: with
        # the order of arrival on each port (which a recorder on that port sees
        # too), this says exactly which packets each tick took in (replay).
        self.taken: dict[str, int] = {}
        self.crc: dict[str, int] = {}      # running packet_crc of what was taken in, per port
        # lcm_handle_timeout fails (-1) when a signal interrupts its select():
        # the packets stay queued for the next drain. Failures in a row past
        # HANDLE_FAILURES_MAX are no interruption: raised.
        self.handle_failures = 0           # all of them, for the log and tests
        self._failures_in_a_row = 0

    def _instance(self, port_name: str) -> lcm.LCM:
        inst = self._lcm.get(port_name)
        if inst is None:
            inst = lcm.LCM(self.cfg.url(port_name))
            self._lcm[port_name] = inst
        return inst

    def subscribe(self, port_name: str, channel: str) -> None:
        """Deliver every message on `channel` (at that port's URL) to drain()."""
        sub = self._instance(port_name).subscribe(channel, self._on_message)
        sub.set_queue_capacity(QUEUE_CAPACITY)
        self.taken.setdefault(port_name, 0)
        self.crc.setdefault(port_name, 0)

    def _on_message(self, channel: str, data: bytes) -> None:
        self._inbox.append((channel, data))

    def drain(self, ports: Sequence[str] | None = None) -> list[tuple[str, bytes]]:
        """Every packet received since the last drain on `ports` (None: every
        subscribed port, in subscription order), oldest first on each port;
        never blocks. The list is reused by the next drain: consume it before
        then."""
        for port_name in self.taken if ports is None else ports:
            inst = self._lcm.get(port_name)
            if inst is None or port_name not in self.taken:
                continue                    # nothing subscribed there
            before = len(self._inbox)
            try:
                while inst.handle_timeout(0) > 0:
                    pass
                self._failures_in_a_row = 0
            except OSError:
                self.handle_failures += 1
                self._failures_in_a_row += 1
                if self._failures_in_a_row > HANDLE_FAILURES_MAX:
                    raise
            crc = self.crc[port_name]
            for i in range(before, len(self._inbox)):
                crc = packet_crc(crc, *self._inbox[i])
            self.crc[port_name] = crc
            self.taken[port_name] += len(self._inbox) - before
        out, self._inbox = self._inbox, self._spare
        self._inbox.clear()
        self._spare = out
        return out

    def publish(self, port_name: str, channel: str, data: Payload) -> None:
        """Send now: `data` is bytes or a publish_buffer, and need only stay
        valid for the call (the controller reuses its buffers)."""
        # lcm's stub says bytes; publish() takes any buffer it never has to
        # release, and a ctypes array is one (publish_buffer).
        self._instance(port_name).publish(channel, data)  # type: ignore[arg-type]

    def filenos(self) -> list[int]:
        return [inst.fileno() for inst in self._lcm.values()]
