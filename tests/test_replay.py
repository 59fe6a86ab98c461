"""Deterministic replay, in process: the real Runtime tick on a fake bus that
keeps, per port, what a logger on that port would have recorded."""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from harness import command

from controller import msgs
from controller.core.controller import Controller
from controller.core.script_source import ScriptSource
from controller.robot.config import load_config
from controller.robot.native import Payload
from controller.service.recording import RecordingError
from controller.service.replay import (
    CRC_COMMAND,
    FLAGS,
    TAKEN_COMMAND,
    TAKEN_LATE,
    TICK,
    TICK_NS,
    UTIME,
    Recording,
    replay,
    split_recording,
)
from controller.service.runtime import Runtime
from controller.service.transport import packet_crc
from controller.sim.joint_sim import SimRobot

PERIOD_NS = 2_000_000
START_NS = 7_123_456_789        # not a whole microsecond: utime must still round-trip
EPOCH_NS = 1_700_000_000_000_000_000


class LoggedBus:
    """Packets a client sends arrive on their port; drain() takes them in
    port order as the real Bus does; everything on a port, sent or
    published, is logged in arrival order, as the recorder on that port sees it."""

    def __init__(self) -> None:
        self.taken: dict[str, int] = {}
        self.crc: dict[str, int] = {}
        self.arrived: dict[str, list[tuple[str, bytes]]] = defaultdict(list)
        self.log: dict[str, list[tuple[str, bytes]]] = defaultdict(list)
        self.subscribed: set[str] = set()

    def subscribe(self, port_name: str, channel: str) -> None:
        self.taken.setdefault(port_name, 0)
        self.crc.setdefault(port_name, 0)
        self.subscribed.add(channel)

    def send(self, port: str, channel: str, data: bytes) -> None:
        self.log[port].append((channel, data))
        if channel in self.subscribed:
            self.arrived[port].append((channel, data))

    def drain(self, ports: Sequence[str] | None = None) -> list[tuple[str, bytes]]:
        inbox: list[tuple[str, bytes]] = []
        for port in self.taken if ports is None else [p for p in ports if p in self.taken]:
            packets = self.arrived.pop(port, [])
            self.taken[port] += len(packets)
            for channel, data in packets:
                self.crc[port] = packet_crc(self.crc[port], channel, data)
            inbox += packets
        return inbox

    def publish(self, port_name: str, channel: str, data: Payload) -> None:
        self.log[port_name].append((channel, bytes(data)))   # data is only valid during the call


class Session:
    def __init__(self, config: str | None = None) -> None:
        self.cfg = load_config(config)
        self.ctl = Controller(self.cfg, epoch_offset_ns=EPOCH_NS)
        self.bus = LoggedBus()
        self.rt = Runtime(self.ctl, self.bus, sim=SimRobot(self.cfg, self.ctl.kin))
        self.now = START_NS
        self.life = 0
        self.ch = self.cfg.lcm.channels

    def send(self, mode: int, gait: int = 0, **fields: Any) -> None:
        self.life += 1
        self.last = command(mode, gait, self.life, **fields).encode()
        self.bus.send("command", self.ch["command"], self.last)

    def run(self, ticks: int, jitter_ns: int = 0, heartbeat: bool = True) -> None:
        """Tick on, re-sending the last command every 50 ticks (the heartbeat)."""
        for k in range(ticks):
            if heartbeat and k % 50 == 49:
                self.bus.send("command", self.ch["command"], self.last)
            self.rt._tick(self.now)
            self.now += PERIOD_NS + (jitter_ns * (k % 3) if jitter_ns else 0)

    def recording(self) -> Recording:
        return split_recording(self.cfg, self.bus.log)


def a_session() -> Session:
    s = Session()
    s.run(20, heartbeat=False)
    s.send(12)                                          # stand
    s.bus.send("command", s.ch["command"], b"\x00garbage")   # rejected, counted
    s.run(1000, jitter_ns=37)                           # wake-up jitter, as on a real host
    s.send(11, 3, vel_des=[0.3, 0.0, 0.2], duration=600)
    s.run(500)
    s.rt.request_stop()
    s.ctl.shutdown()
    s.run(50, heartbeat=False)
    return s


def test_a_command_that_arrives_while_a_tick_runs_replays_with_its_timeout() -> None:
    """A command lands during tick 25's state estimate: tick 25 takes it in,
    tick 26 sees it, and the timeout damper comes 250 ticks after that. The
    trace says it came in late; a replay that did not use that would time
    out one tick early and differ."""
    s = Session()
    sense = s.ctl.sense

    def sense_then_arrive(now_ns: int, inbox: list[tuple[str, bytes]]) -> None:
        sense(now_ns, inbox)
        if s.ctl.tick == 25:
            s.send(12)
    s.ctl.sense = sense_then_arrive   # type: ignore[method-assign]
    s.run(300, heartbeat=False)
    assert s.ctl.counters.timeouts == 1
    rec = s.recording()
    assert [t[TAKEN_LATE] for t in rec.traces[24:27]] == [0, 1, 0]
    result = replay(s.cfg, rec)
    assert result.identical, result.differences[:3]
    assert result.ticks == 300


def test_a_session_replays_to_the_identical_outputs() -> None:
    s = a_session()
    rec = s.recording()
    result = replay(s.cfg, rec)
    assert result.identical, result.differences[:3]
    assert result.ticks == s.ctl.tick == 1570
    assert result.compared["joint_cmd"] == 1570
    assert result.compared["response"] > 20 and result.compared["status"] > 20
    assert not result.notes and not result.incomplete
    # The recorded session did move the robot and ended in the shutdown damper.
    assert s.ctl.counters.commands_accepted == 2 and s.ctl.counters.packets_rejected == 1
    assert s.ctl.counters.timeouts == 0
    modes = {msgs.robot_control_response_lcmt.decode(d).mode for d in rec.outputs["response"]}
    assert {12, 11, 7} <= modes
    assert rec.traces[-1][FLAGS] & msgs.tick_trace_t.FLAG_SHUTDOWN


def test_tick_times_and_utimes_round_trip_exactly() -> None:
    rec = a_session().recording()
    first = rec.traces[0]
    assert first[TICK_NS] == START_NS
    assert first[UTIME] == (START_NS + EPOCH_NS) // 1000


def test_a_changed_input_shows_at_the_tick_that_took_it_in() -> None:
    s = a_session()
    rec = s.recording()
    # The stand command (the first good packet on the command port) becomes a damper command.
    channel, data = rec.inputs["command"][0]
    msg = msgs.robot_control_cmd_lcmt.decode(data)
    assert msg.mode == 12
    msg.mode = 7
    rec.inputs["command"][0] = (channel, msg.encode())
    took = next(t[TICK] for t in rec.traces if t[TAKEN_COMMAND] >= 1)
    reseal(rec)                  # the edit must not look like a lost packet
    result = replay(s.cfg, rec)
    assert not result.identical
    first = result.differences[0]
    assert first.tick == took == 20
    assert first.channel in ("response", "status", "joint_cmd")


def test_a_different_config_shows_in_the_gains() -> None:
    rec = a_session().recording()
    other = load_config()
    other.gains["recovery"].kp[0] += 1.0     # the same robot with one stand gain changed
    result = replay(other, rec)
    first = result.differences[0]
    assert first.channel == "joint_cmd" and first.field == "kp[0]"
    assert math.isclose(first.replayed - first.recorded, 1.0, abs_tol=1e-5)


def reseal(rec: Recording) -> None:
    """Recompute the traces' command-port CRCs over the (edited) recorded packets."""
    running = [0]
    for channel, data in rec.inputs["command"]:
        running.append(packet_crc(running[-1], channel, data))
    as_i32 = [c - (1 << 32) if c >= 1 << 31 else c for c in running]   # the wire's int32
    rec.traces = [t[:CRC_COMMAND] + (as_i32[t[TAKEN_COMMAND]],) + t[CRC_COMMAND + 1:]
                  for t in rec.traces]


def test_a_recording_that_misses_the_start_is_refused() -> None:
    rec = a_session().recording()
    rec.traces = rec.traces[5:]
    with pytest.raises(RecordingError, match="starts at tick 5"):
        replay(load_config(), rec)


def test_a_lost_trace_stops_the_replay_there() -> None:
    s = a_session()
    rec = s.recording()
    del rec.traces[300]
    result = replay(s.cfg, rec)
    assert result.identical and result.ticks == 300
    assert "tick 300's trace is missing" in result.incomplete


def test_a_lost_input_packet_is_caught_at_the_tick_that_took_it_in() -> None:
    s = a_session()
    rec = s.recording()
    lost = 1                               # the garbage packet (heartbeats all look alike)
    del rec.inputs["command"][lost]
    took = next(t[TICK] for t in rec.traces if t[TAKEN_COMMAND] > lost)
    result = replay(s.cfg, rec)
    assert result.identical and result.ticks == took
    assert "not the ones the daemon took in" in result.incomplete


def test_a_restarted_daemon_replays_its_first_run() -> None:
    first, second = a_session(), a_session()
    logs = {port: first.bus.log[port] + second.bus.log[port] for port in first.bus.log}
    rec = split_recording(first.cfg, logs)
    assert len(rec.traces) == 1570 and rec.restart_after == 1570
    result = replay(first.cfg, rec)
    assert result.identical and not result.incomplete and result.ticks == 1570
    assert "restarted after 1570 ticks" in result.notes[0]


def _raise_at(tick: int) -> Callable[..., Any]:
    original = ScriptSource.tick

    def failing(self: Any, *args: Any) -> Any:
        if self.ctl.tick == tick and not getattr(self, "raised", False):
            self.raised = True             # once per controller, as a deterministic bug would
            raise RuntimeError("injected bug")
        return original(self, *args)
    return failing


def test_a_step_that_raised_in_the_daemon_replays_when_it_raises_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ScriptSource, "tick", _raise_at(400))
    s = a_session()
    assert s.rt.internal_errors == 1
    rec = s.recording()
    result = replay(s.cfg, rec)
    assert result.identical and not result.incomplete and result.ticks == len(rec.traces)
    assert any("tick 400: the step raised" in n for n in result.notes)

    monkeypatch.undo()                     # the bug fixed: replay no longer matches the daemon
    result = replay(s.cfg, rec)
    assert result.differences[0].tick == 400 and result.differences[0].field == "exception"
