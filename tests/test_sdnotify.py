"""controller/service/sdnotify.py against real AF_UNIX datagram sockets (no systemd,
no network): the addresses systemd hands out, the watchdog schedule, and
that failures are counted instead of raised."""
from __future__ import annotations

import os
import socket
import threading
import uuid

import pytest
from structlog.testing import capture_logs

from controller.service.sdnotify import NEVER, Notifier


def receiver(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(5)
    return sock


@pytest.fixture
def abstract():
    name = f"motiond-test-{uuid.uuid4().hex}"
    sock = receiver("\0" + name)
    yield "@" + name, sock
    sock.close()


def test_without_notify_socket_everything_is_a_no_op():
    n = Notifier.from_env({"WATCHDOG_USEC": "2000000"})
    assert not n.enabled
    assert n.ready("x") is False and n.stopping() is False and n.status("y") is False
    assert n.watchdog_ns == 0 and not n.watchdog_due(NEVER - 1)
    assert n.ping(0) is False and n.errors == 0


def test_abstract_name_receives_ready_status_and_stopping(abstract):
    name, sock = abstract
    n = Notifier.from_env({"NOTIFY_SOCKET": name})
    assert n.enabled and n.watchdog_ns == 0
    assert n.ready(status="standing\nup")
    # A newline in the text would be read as a second assignment.
    assert sock.recv(4096) == b"READY=1\nSTATUS=standing up"
    assert n.status("walking")
    assert sock.recv(4096) == b"STATUS=walking"
    assert n.stopping()
    assert sock.recv(4096) == b"STOPPING=1"
    assert n.sent == 3 and n.errors == 0


def test_path_socket_and_the_watchdog_every_half_period(tmp_path):
    path = str(tmp_path / "notify")
    sock = receiver(path)
    n = Notifier.from_env({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"})
    assert n.watchdog_ns == 200_000_000 and n.interval_ns == 100_000_000
    t0 = 5_000_000_000
    assert n.watchdog_due(t0)                  # due at once, so the first ping follows READY
    assert n.ping(t0, status="ok")
    assert sock.recv(4096) == b"WATCHDOG=1\nSTATUS=ok"
    assert not n.watchdog_due(t0 + n.interval_ns - 1)
    assert n.watchdog_due(t0 + n.interval_ns)
    assert n.ping(t0 + n.interval_ns)
    assert sock.recv(4096) == b"WATCHDOG=1"
    sock.close()


@pytest.mark.parametrize("env, expected_ns", [
    ({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": str(os.getpid())}, 1_000_000_000),
    ({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": str(os.getpid() + 1)}, 0),   # another process's
    ({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "nope"}, 0),
    ({"WATCHDOG_USEC": "soon"}, 0),
    ({"WATCHDOG_USEC": "0"}, 0),
    ({"WATCHDOG_USEC": "-5"}, 0),
])
def test_watchdog_only_when_meant_for_this_process(abstract, env, expected_ns):
    name, sock = abstract
    n = Notifier.from_env({"NOTIFY_SOCKET": name, **env})
    assert n.watchdog_ns == expected_ns
    assert n.watchdog_due(0) is bool(expected_ns)
    # Notifications other than the watchdog still go out.
    assert n.ready()
    assert sock.recv(4096) == b"READY=1"


def test_an_address_that_is_neither_a_path_nor_abstract_disables_it():
    with capture_logs() as logs:
        n = Notifier.from_env({"NOTIFY_SOCKET": "vsock:2:1234", "WATCHDOG_USEC": "1000000"})
    assert not n.enabled and n.watchdog_ns == 0 and n.ready() is False
    assert [e["event"] for e in logs] == ["sd_notify_unsupported"]


def test_a_missing_socket_is_counted_and_logged_once_never_raised(tmp_path):
    n = Notifier.from_env({"NOTIFY_SOCKET": str(tmp_path / "gone"), "WATCHDOG_USEC": "100000"})
    with capture_logs() as logs:
        assert n.ready("x") is False
        for i in range(5):
            assert n.ping(i * n.interval_ns) is False
        assert n.stopping() is False
    assert n.errors == 7 and n.sent == 0
    failed = [e for e in logs if e["event"] == "sd_notify_failed"]
    assert len(failed) == 1 and failed[0]["message"] == "READY=1"
    # The schedule moves on even though the pings failed: no retry on every tick.
    assert not n.watchdog_due(4 * n.interval_ns + n.interval_ns - 1)


def test_a_full_receiver_does_not_block_the_sender(abstract):
    """Nobody reads the socket: its queue fills up (a few datagrams), after
    which a blocking sendto() would wait forever. The notifier must return."""
    name, sock = abstract
    n = Notifier.from_env({"NOTIFY_SOCKET": name, "WATCHDOG_USEC": "1000"})
    results: list[bool] = []

    def flood() -> None:
        for i in range(1000):
            results.append(n.ping(i * n.interval_ns))

    sender = threading.Thread(target=flood, daemon=True)
    sender.start()
    sender.join(10)
    assert not sender.is_alive(), "sendto blocked on a full receiver"
    assert len(results) == 1000
    assert n.sent > 0 and n.errors > 0 and n.sent + n.errors == 1000
    assert sock.recv(4096) == b"WATCHDOG=1"
