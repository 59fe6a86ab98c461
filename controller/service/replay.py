"""Deterministic replay: re-run the controller core on a recording's inputs
and compare what it publishes with what the daemon published.

The core is a step function of (tick time, packets taken in) on a fresh
Controller. After every tick the daemon publishes a tick_trace_t saying what
the tick took in: its monotonic time, the packets taken so far per port with a
running CRC over them (and how many command packets came in while it ran),
whether the sim supplied joint_state, whether it was shutting down, and how
many steps have failed. The recording keeps each port's
packets in arrival order (controller/service/recording.py), so tick k took in the
packets between tick k-1's counts and its own, and the CRC proves it.

The MPC's plans come from a worker process in the daemon, in time or late;
the trace names the plan each tick used (plan_tick) and the replay solves
the same requests inline and uses the same plans.

Compared: every message the daemon publishes, field by field, in order per
channel. controller_status is compared without its loop timing (lateness,
loop time, overruns): those measure the host, not the core. A recording must
start before the daemon's first tick and be recorded on the daemon's host.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller import msgs
from controller.robot.config import Config
from controller.service.recording import RecordingError, decode, events, port_files
from controller.service.runtime import INPUTS, SENSORS
from controller.service.transport import packet_crc

# The message type of every channel the daemon publishes (config channel keys).
OUTPUT_TYPES = {
    "joint_cmd": msgs.joint_command_t,
    "response": msgs.robot_control_response_lcmt,
    "status": msgs.controller_status_t,
    "global_to_robot": msgs.localization_lcmt,
    "motion_event": msgs.motion_event_t,
    "user_gait_result": msgs.file_recv_lcmt,
    "motor_ctrl_state": msgs.motor_ctrl_state_lcmt,
}
# Host measurements the runtime copies into controller_status.
TIMING_FIELDS = frozenset({"lateness_p50_us", "lateness_p99_us", "lateness_max_us",
                           "loop_p99_us", "tick_overruns"})
Trace = msgs.tick_trace_t


@dataclass(frozen=True)
class Difference:
    tick: int
    channel: str
    index: int          # the message's place among the channel's messages
    field: str
    recorded: Any
    replayed: Any

    def __str__(self) -> str:
        return (f"tick {self.tick}: {self.channel} #{self.index} {self.field}: "
                f"recorded {self.recorded!r}, replayed {self.replayed!r}")


@dataclass
class ReplayResult:
    ticks: int = 0                                            # ticks replayed
    compared: dict[str, int] = field(default_factory=dict)   # messages per channel
    differences: list[Difference] = field(default_factory=list)
    incomplete: str = ""     # why replay stopped before the recording's end
    notes: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.differences


@dataclass
class Recording:
    """A recording split into what the core took in and what it published."""
    traces: list[tuple[int, ...]]                      # _TRACE_FIELDS per tick, in order
    inputs: dict[str, list[tuple[str, bytes]]]         # per port, in arrival order
    sim_states: dict[str, list[bytes]]                 # per sensor key, what the sim published
    outputs: dict[str, list[bytes]]                    # per channel key, in order
    restart_after: int | None = None                   # ticks before the daemon restarted


# A trace is kept as a tuple: a long recording holds hundreds of thousands.
_TRACE_FIELDS = ("tick", "tick_ns", "utime", "taken_command", "taken_joint", "crc_command",
                 "crc_joint", "failed_ticks", "flags", "plan_tick", "taken_command_late")
(TICK, TICK_NS, UTIME, TAKEN_COMMAND, TAKEN_JOINT, CRC_COMMAND, CRC_JOINT, FAILED, FLAGS, PLAN_TICK,
 TAKEN_LATE) = range(len(_TRACE_FIELDS))


def load_recording(cfg: Config, base: Path) -> Recording:
    """Read a recording's files (controller/service/recording.py) and split them."""
    files = port_files(base, list(cfg.lcm.ports))
    recording = split_recording(cfg, {port: ((e.channel, e.data) for e in events(paths))
                                      for port, paths in files.items()})
    if not recording.traces:
        raise RecordingError(f"{base}: no {cfg.lcm.channels['tick_trace']} messages: not a "
                             "recording of this motiond (another --namespace or config?)")
    return recording


def split_recording(cfg: Config, ports: Mapping[str, Iterable[tuple[str, bytes]]]) -> Recording:
    """Each port's (channel, data) in arrival order -> what the core took in
    and what it published."""
    ch = cfg.lcm.channels
    key_of = {name: key for key, name in ch.items()}
    input_keys = {port: set(names) for port, names in INPUTS}
    traces: list[tuple[int, ...]] = []
    inputs: dict[str, list[tuple[str, bytes]]] = {port: [] for port, _ in INPUTS}
    states: dict[str, list[bytes]] = {key: [] for key in SENSORS}
    outputs: dict[str, list[bytes]] = defaultdict(list)
    for port, packets in ports.items():
        for channel, data in packets:
            key = key_of.get(channel)
            if key == "tick_trace":
                t = decode(Trace, data, channel)
                traces.append(tuple(getattr(t, f) for f in _TRACE_FIELDS))
            elif key in OUTPUT_TYPES:
                outputs[key].append(data)
            elif key in states:
                states[key].append(data)
            if key in input_keys.get(port, ()):
                inputs[port].append((channel, data))
    rec = Recording(traces, inputs, {}, dict(outputs))
    if traces and traces[0][FLAGS] & Trace.FLAG_SIM:
        # With --sim the daemon does not subscribe to the sensors: the ones in
        # the log are the sim's, one of each per tick, published before the step
        # (imu only from the physics body).
        sensors = {ch[key] for key in SENSORS}
        inputs["joint"] = [(c, d) for c, d in inputs["joint"] if c not in sensors]
        rec.sim_states = {key: packets for key, packets in states.items() if packets}
    restart = next((i for i in range(1, len(traces)) if traces[i][TICK] < traces[i - 1][TICK]), None)
    if restart is not None:
        rec.restart_after = restart
        del traces[restart:]
    return rec


def replay(cfg: Config, rec: Recording) -> ReplayResult:
    """Run a fresh Controller through the recorded ticks; compare its outputs."""
    from controller.core.controller import (
        Controller,  # the compiled kernel: only when replaying
    )
    from controller.motion.mpc import ConvexMpc
    from controller.motion.planner import ReplayPlanner

    traces = rec.traces
    if not traces or traces[0][TICK] != 0 or traces[0][FAILED] != 0:
        raise RecordingError(
            f"the recording starts at tick {traces[0][TICK] if traces else '?'}: replay needs the "
            "daemon's whole run, so start `motionctl record` before motiond")
    first = traces[0]
    # The MPC's plans as the daemon used them (its worker may have been late).
    planner = ReplayPlanner(ConvexMpc(cfg.balance, len(cfg.legs))) if cfg.balance is not None else None
    ctl = Controller(cfg, epoch_offset_ns=first[UTIME] * 1000 - first[TICK_NS] // 1000 * 1000,
                     planner=planner)
    key_of = {name: key for key, name in cfg.lcm.channels.items()}
    taken = {"command": 0, "joint": 0}
    crc = {"command": 0, "joint": 0}
    counts = {key: 0 for key in OUTPUT_TYPES}
    result = ReplayResult()
    if rec.restart_after is not None:
        result.notes.append(f"the daemon restarted after {rec.restart_after} ticks; "
                            "only its first run is replayed")
    failed = 0
    for k, t in enumerate(traces):
        if t[TICK] != ctl.tick:
            return _stop(result, rec, counts, f"tick {ctl.tick}'s trace is missing from the recording "
                         f"(next is tick {t[TICK]}): the logger lost packets")
        # In the daemon's order (controller/service/runtime.py): the joint
        # port, the in-process sim's sensors, then the command port, whose
        # last TAKEN_LATE packets came in while the tick ran.
        inbox: list[tuple[str, bytes]] = []
        for port, count, want in (("joint", t[TAKEN_JOINT], t[CRC_JOINT]),
                                  ("command", t[TAKEN_COMMAND], t[CRC_COMMAND])):
            packets = rec.inputs[port][taken[port]:count]
            for channel, data in packets:
                crc[port] = packet_crc(crc[port], channel, data)
            if count > len(rec.inputs[port]) or _u32(want) != crc[port]:
                return _stop(result, rec, counts,
                             f"tick {t[TICK]}: the recording's {port}-port packets are not the ones "
                             "the daemon took in (the logger or the daemon lost packets)")
            inbox += packets
            taken[port] = count
            if port == "joint" and t[FLAGS] & Trace.FLAG_SIM:
                for key in SENSORS:
                    published = rec.sim_states.get(key)
                    if published is None and key != "joint_state":
                        continue                 # the joint-space sim has no IMU
                    if published is None or k >= len(published):
                        return _stop(result, rec, counts, f"tick {t[TICK]}: the sim's {key} is missing")
                    inbox.append((cfg.lcm.channels[key], published[k]))
        if t[FLAGS] & Trace.FLAG_SHUTDOWN and not ctl.shutting_down:
            ctl.shutdown()
        daemon_failed = t[FAILED] > failed
        failed = t[FAILED]
        if planner is not None:
            planner.use = t[PLAN_TICK]
        try:
            out = ctl.step(t[TICK_NS], inbox, late_from=len(inbox) - t[TAKEN_LATE])
        except Exception as exc:  # noqa: BLE001 - reported, as the daemon logged it
            if not daemon_failed:
                result.differences.append(Difference(t[TICK], "(step)", 0, "exception", "none",
                                                     repr(exc)))
                return _stop(result, rec, counts, "")
            result.notes.append(f"tick {t[TICK]}: the step raised, in the daemon and here: {exc!r}")
            result.ticks += 1
            continue
        if daemon_failed:
            result.differences.append(Difference(t[TICK], "(step)", 0, "exception",
                                                 "raised (internal_error)", "none"))
            return _stop(result, rec, counts, "")
        for _, channel, payload in out.messages:
            key = key_of[channel]
            _compare_one(result, rec, counts, key, t[TICK], bytes(payload))
        result.ticks += 1
        if result.differences:
            return _stop(result, rec, counts, "")
    return _finish(result, rec, counts)


def _compare_one(result: ReplayResult, rec: Recording, counts: dict[str, int], key: str,
                 tick: int, data: bytes) -> None:
    i = counts[key]
    counts[key] = i + 1
    recorded = rec.outputs.get(key, [])
    if i >= len(recorded):
        if tick < rec.traces[-1][TICK]:    # not just the logger stopping within the last tick
            result.differences.append(Difference(tick, key, i, "(message)", "absent", "published"))
        else:
            result.notes.append(f"{key}: the recording stops before the last tick's message")
        return
    if recorded[i] == data:
        return
    kind = OUTPUT_TYPES[key]
    diff = _first_field_difference(decode(kind, recorded[i], key), kind.decode(data),
                                   TIMING_FIELDS if key == "status" else frozenset())
    if diff is not None:
        result.differences.append(Difference(tick, key, i, *diff))


def _stop(result: ReplayResult, rec: Recording, counts: dict[str, int], why: str) -> ReplayResult:
    """Replay ended before the recording did: later recorded messages stay unmatched."""
    result.incomplete = why
    return _finish(result, rec, counts, whole=False)


def _finish(result: ReplayResult, rec: Recording, counts: dict[str, int],
            whole: bool = True) -> ReplayResult:
    result.compared = {key: min(n, len(rec.outputs.get(key, []))) for key, n in counts.items()}
    if whole and rec.restart_after is None:   # after a restart the later run is not compared
        for key, n in counts.items():
            more = len(rec.outputs.get(key, [])) - n
            if more > 0:
                result.differences.append(Difference(rec.traces[-1][TICK], key, n, "(message)",
                                                     f"{more} more", "absent"))
    return result


def _u32(x: int) -> int:
    return x & 0xFFFFFFFF


def _first_field_difference(recorded: Any, replayed: Any,
                            skip: frozenset[str]) -> tuple[str, Any, Any] | None:
    for name in recorded.__slots__:
        if name in skip:
            continue
        for path, x, y in _leaves(name, getattr(recorded, name), getattr(replayed, name)):
            if not _same(x, y):
                return path, x, y
    return None


def _leaves(path: str, a: Any, b: Any) -> Iterator[tuple[str, Any, Any]]:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            yield f"{path} (length)", len(a), len(b)
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _leaves(f"{path}[{i}]", x, y)
    else:
        yield path, a, b


def _same(a: Any, b: Any) -> bool:
    """Exact equality; NaN equals NaN (the same computation gives the same bits)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b
