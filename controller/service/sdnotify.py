"""The systemd notification protocol (sd_notify(3)), without libsystemd.

systemd passes a Type=notify service the address of a datagram socket in
NOTIFY_SOCKET (a file path, or an abstract name written with a leading '@').
The service sends newline-separated assignments to it: READY=1 once it works,
WATCHDOG=1 at least once per WatchdogSec (given in WATCHDOG_USEC), STOPPING=1
when it begins to shut down, and STATUS=<text> for `systemctl status`.

Sending is a single non-blocking sendto(); a failure is counted and logged
once, never raised, because the caller is the control loop. Without
NOTIFY_SOCKET (a terminal, a test, another init system) every call is a no-op.
"""
from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

from controller.logs import get_logger

NEVER = 2**63 - 1     # a time (ns) no clock reaches: "not due"

_READY = b"READY=1"
_WATCHDOG = b"WATCHDOG=1"
_STOPPING = b"STOPPING=1"


class Notifier:
    """Messages to systemd's notification socket, and the watchdog schedule.

    `address` is what sendto() takes: a path, or "\\0name" for an abstract
    socket; None disables everything. `watchdog_usec` is systemd's watchdog
    period; pings are due every half period (the sd_watchdog_enabled(3)
    advice), so one late ping still lands inside the period.
    """

    def __init__(self, address: str | None = None, watchdog_usec: int = 0) -> None:
        self.address = address
        self.watchdog_ns = watchdog_usec * 1000 if address is not None else 0
        self.interval_ns = self.watchdog_ns // 2
        self.next_ping_ns = 0 if self.watchdog_ns else NEVER
        self.sent = 0
        self.errors = 0
        self.log = get_logger("motiond.sdnotify")
        self._sock: socket.socket | None = None
        if address is not None:
            try:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                self._sock.setblocking(False)
            except OSError as exc:
                self._failed(exc, b"socket")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None,
                 pid: int | None = None) -> Notifier:
        """The notifier systemd asked for in the environment, or a disabled one."""
        env = os.environ if environ is None else environ
        log = get_logger("motiond.sdnotify")
        raw = env.get("NOTIFY_SOCKET", "")
        if not raw:
            return cls(None)
        if raw.startswith("@"):
            address = "\0" + raw[1:]        # abstract namespace
        elif raw.startswith("/"):
            address = raw
        else:
            # e.g. systemd's vsock: addresses for virtual machines: not supported here.
            log.warning("sd_notify_unsupported", socket=raw)
            return cls(None)
        return cls(address, _watchdog_usec(env, os.getpid() if pid is None else pid, log))

    @property
    def enabled(self) -> bool:
        return self._sock is not None

    def ready(self, status: str | None = None) -> bool:
        """READY=1: start-up is complete (systemd starts the watchdog now)."""
        return self._send(_with_status(_READY, status))

    def status(self, text: str) -> bool:
        """STATUS=<text>: the one-line state `systemctl status` shows."""
        return self._send(b"STATUS=" + _status_bytes(text))

    def stopping(self, status: str | None = None) -> bool:
        return self._send(_with_status(_STOPPING, status))

    def watchdog_due(self, now_ns: int) -> bool:
        return now_ns >= self.next_ping_ns

    def ping(self, now_ns: int, status: str | None = None) -> bool:
        """WATCHDOG=1, and the next ping falls due half a period from now
        (also when sending failed: no retry on every tick)."""
        if not self.watchdog_ns:
            return False
        self.next_ping_ns = now_ns + self.interval_ns
        return self._send(_with_status(_WATCHDOG, status))

    def _send(self, payload: bytes) -> bool:
        if self._sock is None or self.address is None:
            return False
        try:
            self._sock.sendto(payload, self.address)
        except (OSError, ValueError) as exc:
            self._failed(exc, payload)
            return False
        self.sent += 1
        return True

    def _failed(self, exc: Exception, payload: bytes) -> None:
        self.errors += 1
        if self.errors == 1:
            # Once: a socket that is gone stays gone, and this runs in the loop.
            self.log.warning("sd_notify_failed", socket=_printable(self.address),
                             message=payload.split(b"\n", 1)[0].decode(errors="replace"),
                             error=str(exc), note="later failures are counted, not logged")


def _with_status(head: bytes, status: str | None) -> bytes:
    if status is None:
        return head
    return head + b"\nSTATUS=" + _status_bytes(status)


def _status_bytes(text: str) -> bytes:
    # One assignment per line: a newline in the text would start a new one.
    return text.replace("\n", " ").encode(errors="replace")


def _watchdog_usec(env: Mapping[str, str], pid: int, log: Any) -> int:
    """WATCHDOG_USEC when it is meant for this process (WATCHDOG_PID, when
    set, names the process that must ping), else 0."""
    raw = env.get("WATCHDOG_USEC", "")
    if not raw:
        return 0
    try:
        usec = int(raw)
    except ValueError:
        usec = 0
    if usec <= 0:
        log.warning("watchdog_usec_invalid", value=raw)
        return 0
    owner = env.get("WATCHDOG_PID", "")
    if owner and owner != str(pid):
        log.info("watchdog_not_ours", watchdog_pid=owner, pid=pid)
        return 0
    return usec


def _printable(address: str | None) -> str | None:
    return "@" + address[1:] if address and address.startswith("\0") else address
