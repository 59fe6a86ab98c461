"""The loop's timing telemetry, on a fake clock: the tick trace carries each
tick's lateness and the previous tick's loop body exactly, and
controller_status reports the window's percentiles and the overruns."""
from __future__ import annotations

import signal
from collections.abc import Sequence
from typing import Any

import pytest

from controller import msgs
from controller.core.controller import Controller, Outbox, Timing
from controller.robot.config import load_config
from controller.robot.native import Payload
from controller.service import runtime as runtime_module
from controller.service.runtime import SHUTDOWN_TICKS, Runtime

PERIOD_NS = 2_000_000


class RecordingBus:
    def __init__(self) -> None:
        self.taken: dict[str, int] = {}
        self.crc: dict[str, int] = {}
        self.sent: list[tuple[str, bytes]] = []

    def subscribe(self, port_name: str, channel: str) -> None:
        self.taken.setdefault(port_name, 0)
        self.crc.setdefault(port_name, 0)

    def drain(self, ports: Sequence[str] | None = None) -> list[tuple[str, bytes]]:
        return []

    def publish(self, port_name: str, channel: str, data: Payload) -> None:
        self.sent.append((channel, bytes(data)))


class ScriptedClock:
    """Each sleep wakes `late[k]` ns after its deadline; each step takes
    `body[k]` ns of fake time (k: the tick)."""

    def __init__(self, late: dict[int, int], body: dict[int, int]) -> None:
        self.now = 5_000_000_000
        self.late, self.body = late, body
        self.sleeps = 0

    def mk_now_ns(self) -> int:
        return self.now

    def mk_sleep_until(self, deadline: int) -> None:
        self.sleeps += 1
        self.now = max(self.now, deadline) + self.late.get(self.sleeps, 0)


@pytest.fixture
def timed(monkeypatch):
    def make(late: dict[int, int], body: dict[int, int], ticks: int) -> tuple[list[Any], list[Any]]:
        clock = ScriptedClock(late, body)
        monkeypatch.setattr(runtime_module, "lib", clock)
        ctl = Controller(load_config())
        step = ctl.act                  # the tick's second half (the runtime calls sense first)

        def timed_step(now_ns: int, inbox: list[tuple[str, bytes]], timing: Timing | None = None,
                       send_first: Any = None, late_from: int | None = None) -> Outbox:
            out = step(now_ns, inbox, timing, send_first, late_from)
            clock.now += body.get(ctl.tick - 1, 0)
            return out
        monkeypatch.setattr(ctl, "act", timed_step)
        bus = RecordingBus()
        rt = Runtime(ctl, bus, max_ticks=ticks)
        assert rt.run() == 0
        ch = ctl.cfg.lcm.channels
        traces = [msgs.tick_trace_t.decode(d) for c, d in bus.sent if c == ch["tick_trace"]]
        status = [msgs.controller_status_t.decode(d) for c, d in bus.sent if c == ch["status"]]
        return traces, status
    return make


def test_the_trace_carries_each_ticks_lateness_and_the_previous_loop(timed):
    late = {10: 37_000, 11: 1_000, 40: 150_000}
    body = {9: 90_000, 39: 400_000}
    traces, _ = timed(late, body, 60)
    assert [t.tick for t in traces] == list(range(60))
    by_tick = {t.tick: t for t in traces}
    # sleep k ends tick k-1 and wakes tick k (the first tick needs no sleep)
    assert by_tick[10].lateness_ns == 37_000 and by_tick[11].lateness_ns == 1_000
    assert by_tick[40].lateness_ns == 150_000
    assert by_tick[10].prev_loop_ns == 90_000 and by_tick[40].prev_loop_ns == 400_000
    others = [t for t in traces if t.tick not in (10, 11, 40) and t.tick > 1]
    assert {t.lateness_ns for t in others} == {0}
    assert {t.prev_loop_ns for t in others if t.tick not in (10, 40)} == {0}


def test_status_reports_the_window_percentiles_and_the_overruns(timed):
    # The window's 200 ticks: 99 on time, 99 late by 20 us, one by 300 us and
    # one by 5 ms (two whole periods: two missed ticks); loop bodies of 50 us,
    # two of 180 us (nearest rank: p99 is the 199th of 200).
    late = {k: 20_000 for k in range(99, 199)} | {199: 300_000, 150: 5_000_000}
    body = dict.fromkeys(range(200), 50_000) | {120: 180_000, 121: 180_000}
    _, status = timed(late, body, 202)
    last = status[-1]        # at tick 200: the window holds ticks 0..199
    assert last.tick == 200
    assert last.tick_overruns == 2
    assert last.lateness_p50_us == pytest.approx(20.0)
    assert last.lateness_p99_us == pytest.approx(300.0)
    assert last.lateness_max_us == pytest.approx(5000.0)
    assert last.loop_p99_us == pytest.approx(180.0)


def test_a_signal_mid_tick_still_gets_every_damper_tick(monkeypatch):
    """SIGTERM landing inside a tick: that tick is not a damper tick, so the
    count starts at the next one and all SHUTDOWN_TICKS are damped."""
    monkeypatch.setattr(runtime_module, "lib", ScriptedClock({}, {}))
    ctl = Controller(load_config())
    bus = RecordingBus()
    rt = Runtime(ctl, bus)
    step = ctl.act

    def signalled_mid_tick(now_ns: int, inbox: list[tuple[str, bytes]], timing: Timing | None = None,
                           send_first: Any = None, late_from: int | None = None) -> Outbox:
        out = step(now_ns, inbox, timing, send_first, late_from)
        if ctl.tick == 100:                # tick 99 has just been computed
            rt.request_stop(signal.SIGTERM)
        return out
    monkeypatch.setattr(ctl, "act", signalled_mid_tick)
    assert rt.run() == 0
    traces = [msgs.tick_trace_t.decode(d) for c, d in bus.sent if c == ctl.cfg.lcm.channels["tick_trace"]]
    damped = [t.tick for t in traces if t.flags & t.FLAG_SHUTDOWN]
    assert damped == list(range(100, 100 + SHUTDOWN_TICKS))
    assert traces[-1].tick == damped[-1]


class PortBus(RecordingBus):
    """Packets queued per port; drain() hands out only the ports asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.queued: dict[str, list[tuple[str, bytes]]] = {"command": [], "joint": []}
        self.drains: list[tuple[str, ...]] = []

    def drain(self, ports: Sequence[str] | None = None) -> list[tuple[str, bytes]]:
        asked = tuple(self.taken if ports is None else ports)
        self.drains.append(asked)
        out: list[tuple[str, bytes]] = []
        for port in asked:
            packets, self.queued[port] = self.queued[port], []
            self.taken[port] = self.taken.get(port, 0) + len(packets)
            out += packets
        return out


def _port_rig(monkeypatch: pytest.MonkeyPatch,
              ticks: int) -> tuple[Controller, PortBus, Runtime, msgs.robot_control_cmd_lcmt]:
    """A runtime on the exact fake clock over a PortBus, and a new command to send."""
    monkeypatch.setattr(runtime_module, "lib", ScriptedClock({}, {}))
    ctl = Controller(load_config())
    bus = PortBus()
    cmd = msgs.robot_control_cmd_lcmt()
    cmd.mode, cmd.life_count = 12, 1
    return ctl, bus, Runtime(ctl, bus, max_ticks=ticks), cmd


def test_a_command_arriving_during_the_state_estimate_makes_the_same_tick(monkeypatch):
    """The tick drains the command port at its wake-up, then the joint port,
    runs Controller.sense, and drains the command port again: a command that
    lands while the estimate runs is accepted, and shapes the joint command,
    in that tick, not the next; the trace counts it as late."""
    ctl, bus, rt, cmd = _port_rig(monkeypatch, 3)
    ch = ctl.cfg.lcm.channels
    sense = ctl.sense

    def sense_while_a_command_lands(now_ns: int, inbox: list[tuple[str, bytes]]) -> None:
        sense(now_ns, inbox)
        if ctl.tick == 1:
            bus.queued["command"].append((ch["command"], cmd.encode()))
    monkeypatch.setattr(ctl, "sense", sense_while_a_command_lands)
    assert rt.run() == 0
    assert bus.drains == [("command",), ("joint",), ("command",)] * 3
    traces = [msgs.tick_trace_t.decode(d) for c, d in bus.sent if c == ch["tick_trace"]]
    assert [t.commands_accepted for t in traces] == [0, 1, 1]
    assert [t.taken_command for t in traces] == [0, 1, 1]
    assert [t.taken_command_late for t in traces] == [0, 1, 0]


@pytest.mark.parametrize("during_tick", [False, True])
def test_the_command_timeout_counts_from_the_tick_that_saw_the_last_packet(monkeypatch, during_tick):
    """SPEC 2.1/2.5: the timeout must not fire before the last packet is
    500 ms old. A packet that arrived before tick 1 woke is seen by tick 1:
    the timeout fires on tick 251, 500 ms later. One that arrived while tick
    1 ran (after its wake-up, during the state estimate) is still taken in by
    tick 1, but its 500 ms count from tick 2: firing on tick 251 would be
    early by the time between tick 1's wake-up and the packet."""
    ctl, bus, rt, cmd = _port_rig(monkeypatch, 256)
    ch = ctl.cfg.lcm.channels
    sense, act = ctl.sense, ctl.act
    timed_out: list[bool] = []
    times: list[int] = []

    def sense_then_arrive(now_ns: int, inbox: list[tuple[str, bytes]]) -> None:
        sense(now_ns, inbox)
        if during_tick and ctl.tick == 1:
            bus.queued["command"].append((ch["command"], cmd.encode()))

    def act_then_arrive(now_ns: int, inbox: list[tuple[str, bytes]], *args: Any) -> Outbox:
        out = act(now_ns, inbox, *args)
        timed_out.append(ctl.sources.timed_out)
        times.append(now_ns)
        if not during_tick and ctl.tick == 1:     # tick 0 done: lands while tick 1 sleeps
            bus.queued["command"].append((ch["command"], cmd.encode()))
        return out
    monkeypatch.setattr(ctl, "sense", sense_then_arrive)
    monkeypatch.setattr(ctl, "act", act_then_arrive)
    assert rt.run() == 0
    traces = [msgs.tick_trace_t.decode(d) for c, d in bus.sent if c == ch["tick_trace"]]
    assert [t.taken_command for t in traces[:3]] == [0, 1, 1]       # tick 1 took it in
    assert traces[1].taken_command_late == (1 if during_tick else 0)
    assert ctl.counters.timeouts == 1
    fired = timed_out.index(True, 2)        # ticks 0 and 1: never commanded, then fresh
    seen = 2 if during_tick else 1
    assert fired == seen + 250
    assert times[fired] - times[seen] == 500_000_000


def test_the_joint_command_is_on_the_bus_before_the_tick_builds_its_reports(monkeypatch):
    """The robot's command goes out as soon as the kernel has it: the
    response, odometry and status of the tick are built after it is sent,
    and the bus sees the tick's messages in the same order as step() makes."""
    monkeypatch.setattr(runtime_module, "lib", ScriptedClock({}, {}))
    ctl = Controller(load_config())
    bus = RecordingBus()
    rt = Runtime(ctl, bus, max_ticks=60)
    ch = ctl.cfg.lcm.channels
    build_reports = ctl.publisher.publish
    on_bus_then: list[tuple[int, list[str]]] = []

    def reports(*args, **kwargs):
        on_bus_then.append((ctl.tick, [c for c, _ in bus.sent]))
        return build_reports(*args, **kwargs)
    monkeypatch.setattr(ctl.publisher, "publish", reports)
    assert rt.run() == 0
    assert len(on_bus_then) == 60
    for tick, channels in on_bus_then:
        # Every earlier tick's messages, then this tick's joint command, last.
        assert channels[-1] == ch["joint_cmd"]
        assert channels.count(ch["joint_cmd"]) == tick + 1
    # The whole run's order: each tick's joint_cmd first, its reports, its trace.
    reference = Controller(load_config())
    order = []
    for k in range(60):
        order += [c for _, c, _ in reference.step(ScriptedClock({}, {}).now + k * 2_000_000, []).messages]
        order.append(ch["tick_trace"])
    assert [c for c, _ in bus.sent] == order
