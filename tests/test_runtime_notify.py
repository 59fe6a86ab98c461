"""The runtime's systemd hooks, in process: the real 500 Hz loop
(Runtime.run) and the real controller on a fake clock, talking to a real
AF_UNIX datagram socket. No LCM: the bus is a stub.

Each datagram is stamped with the fake time of the tick that sent it (the
fake sleep drains the socket), so spacing is checked exactly, without a
real clock.
"""
from __future__ import annotations

import re
import socket
import threading
import uuid
from collections.abc import Callable, Sequence
from itertools import pairwise

import pytest

from controller.core.controller import Controller, Outbox, Timing
from controller.robot.config import load_config
from controller.robot.native import Payload
from controller.service import runtime as runtime_module
from controller.service.runtime import Runtime
from controller.service.sdnotify import Notifier

TICK_NS = 2_000_000
WATCHDOG_USEC = 100_000                 # pings every 50 ms = 25 ticks
INTERVAL_NS = WATCHDOG_USEC * 1000 // 2


class StubBus:
    def __init__(self) -> None:
        self.taken: dict[str, int] = {}
        self.crc: dict[str, int] = {}

    def subscribe(self, port_name: str, channel: str) -> None:
        self.taken.setdefault(port_name, 0)
        self.crc.setdefault(port_name, 0)

    def drain(self, ports: Sequence[str] | None = None) -> list[tuple[str, bytes]]:
        return []

    def publish(self, port_name: str, channel: str, data: Payload) -> None:
        pass


def status_tick(status: str) -> int:
    """The tick a WATCHDOG STATUS line reports."""
    found = re.search(r"tick (\d+),", status)
    assert found, status
    return int(found.group(1))


class FakeClock:
    """Stands in for the kernel's clock: time moves only when the loop sleeps
    (or when a test moves it), and each sleep collects what was sent."""

    def __init__(self, sock: socket.socket) -> None:
        self.now = 1_000_000_000
        self.sock = sock
        self.received: list[tuple[int, bytes]] = []

    def mk_now_ns(self) -> int:
        return self.now

    def mk_sleep_until(self, deadline: int) -> None:
        self.collect()
        self.now = max(self.now, deadline)

    def collect(self) -> None:
        while True:
            try:
                self.received.append((self.now, self.sock.recv(4096)))
            except BlockingIOError:
                return

    def times(self, prefix: bytes) -> list[int]:
        return [t for t, data in self.received if data.startswith(prefix)]


@pytest.fixture
def rig(monkeypatch):
    name = f"motiond-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.setblocking(False)
    clock = FakeClock(sock)
    monkeypatch.setattr(runtime_module, "lib", clock)
    ctl = Controller(load_config())
    notifier = Notifier.from_env({"NOTIFY_SOCKET": "@" + name,
                                  "WATCHDOG_USEC": str(WATCHDOG_USEC)})
    yield clock, ctl, notifier
    sock.close()


def failing_between(monkeypatch: pytest.MonkeyPatch, ctl: Controller, clock: FakeClock,
                    start_ns: int, end_ns: int) -> None:
    """Make the tick (its second half, ctl.act, which the runtime calls after
    ctl.sense) raise while start_ns <= fake time < end_ns."""
    step = ctl.act

    def maybe_failing(now_ns: int, inbox: list[tuple[str, bytes]], timing: Timing | None = None,
                      send_first: Callable[[Outbox], None] | None = None,
                      late_from: int | None = None) -> Outbox:
        if start_ns <= now_ns < end_ns:
            raise RuntimeError("injected failure")
        return step(now_ns, inbox, timing, send_first, late_from)

    monkeypatch.setattr(ctl, "act", maybe_failing)


def test_ready_once_then_pings_every_half_period(rig):
    clock, ctl, notifier = rig
    t0 = clock.now
    rt = Runtime(ctl, StubBus(), max_ticks=500, notifier=notifier)
    assert rt.run() == 0
    clock.collect()
    ready = clock.times(b"READY=1\nSTATUS=")
    assert len(ready) == 1 and ready[0] <= t0 + 2 * TICK_NS
    assert clock.received[0][1].startswith(b"READY=1")
    pings = clock.times(b"WATCHDOG=1")
    gaps = [b - a for a, b in pairwise(pings)]
    # At or after each due time, on the first tick there: never early, at most a tick late.
    assert gaps and all(INTERVAL_NS <= g < INTERVAL_NS + TICK_NS for g in gaps), gaps
    assert len(pings) == pytest.approx(500 * TICK_NS / INTERVAL_NS, abs=1)
    # Each ping refreshes the status line: the robot, its mode, the tick count.
    statuses = [d.decode() for _, d in clock.received if d.startswith(b"WATCHDOG=1\nSTATUS=")]
    assert len(statuses) == len(pings)
    cfg = ctl.cfg
    assert all(f"STATUS={cfg.robot}: mode {cfg.fsm.name(ctl.fsm.mode)}, tick " in s
               for s in statuses)
    ticks = [status_tick(s) for s in statuses]
    assert [b - a for a, b in pairwise(ticks)] == [g // TICK_NS for g in gaps]


def test_ready_waits_for_the_first_step_that_succeeds(rig, monkeypatch):
    clock, ctl, notifier = rig
    t0 = clock.now
    failing_between(monkeypatch, ctl, clock, 0, t0 + 100 * TICK_NS)
    rt = Runtime(ctl, StubBus(), max_ticks=200, notifier=notifier)
    rt.run()
    clock.collect()
    assert rt.internal_errors == 100
    ready = clock.times(b"READY=1")
    assert len(ready) == 1
    # The first good step is the tick at t0 + 100 ticks; READY goes out at
    # the start of the next one, and no ping before it.
    assert ready[0] == t0 + 101 * TICK_NS
    assert min(clock.times(b"WATCHDOG=1")) >= ready[0]


def test_a_controller_that_keeps_failing_stops_the_pings(rig, monkeypatch):
    """A loop that ticks but whose every step raises is as useless as a dead
    one: the pings stop, so systemd's watchdog fires, and they come back once
    steps succeed again."""
    clock, ctl, notifier = rig
    t0 = clock.now
    fail_from, fail_to = t0 + 300_000_000, t0 + 800_000_000
    failing_between(monkeypatch, ctl, clock, fail_from, fail_to)
    rt = Runtime(ctl, StubBus(), max_ticks=600, notifier=notifier)
    rt.run()
    clock.collect()
    pings = clock.times(b"WATCHDOG=1")
    # One more ping may vouch for the good ticks just before the failure began.
    during = [t for t in pings if fail_from + INTERVAL_NS <= t < fail_to]
    assert during == []
    gaps = [b - a for a, b in pairwise(pings)]
    assert max(gaps) > WATCHDOG_USEC * 1000          # systemd would have acted
    after = [t for t in pings if t >= fail_to]
    assert after and after[0] == fail_to + TICK_NS   # the first good step is vouched for at once


def test_a_loop_stuck_inside_a_tick_sends_nothing(rig):
    """The pings come from the loop, not from a timer beside it: while a tick
    hangs (here: a step blocked on an event), nothing reaches the socket however
    long it hangs; after it returns the next ping follows."""
    clock, ctl, notifier = rig
    t0 = clock.now
    entered, release = threading.Event(), threading.Event()
    hung_at: list[int] = []
    step = ctl.act

    def hanging(now_ns, inbox, timing, send_first=None, late_from=None):
        if now_ns >= t0 + 300_000_000 and not release.is_set():
            hung_at.append(now_ns)
            entered.set()
            release.wait(30)
        return step(now_ns, inbox, timing, send_first, late_from)

    ctl.act = hanging
    rt = Runtime(ctl, StubBus(), max_ticks=400, notifier=notifier)
    loop = threading.Thread(target=rt.run, daemon=True)
    loop.start()
    assert entered.wait(30), "the loop never reached the hanging tick"
    clock.collect()
    before = len(clock.times(b"WATCHDOG=1"))
    assert before > 0
    clock.now += 5_000_000_000          # the tick hangs for 5 s of robot time...
    # ...and for real time: a pinger beside the loop (a thread or a timer) would
    # send about a datagram per half period meanwhile.
    release.wait(0.3)
    clock.collect()
    assert len(clock.times(b"WATCHDOG=1")) == before
    release.set()
    loop.join(30)
    assert not loop.is_alive()
    clock.collect()
    pings = clock.times(b"WATCHDOG=1")
    assert len(pings) > before
    # The next ping is sent by the first tick after the hung one.
    assert pings[before] == hung_at[0] + 5_000_000_000


def test_stop_request_sends_stopping_once(rig):
    clock, ctl, notifier = rig
    rt = Runtime(ctl, StubBus(), max_ticks=10, notifier=notifier)
    rt.request_stop()
    rt.request_stop()
    clock.collect()
    assert [d for _, d in clock.received] == [b"STOPPING=1"]


def test_without_systemd_the_loop_sends_nothing_and_checks_once(rig, monkeypatch):
    clock, ctl, _ = rig
    rt = Runtime(ctl, StubBus(), max_ticks=50, notifier=Notifier.from_env({}))
    calls: list[int] = []
    notify = rt._notify

    def counted(now_ns: int) -> None:
        calls.append(now_ns)
        notify(now_ns)
    monkeypatch.setattr(rt, "_notify", counted)
    rt.run()
    clock.collect()
    assert clock.received == []
    # Checked until the first good step (the start of tick 2), then never again.
    assert len(calls) == 2
