"""Deterministic replay: re-run the controller core on a recording's inputs
and compare what it publishes with what the daemon published.

The core is a step function of (tick time, packets taken in) on a fresh
Controller; every joint_cmd says which those were (lcmtypes/joint_command_t):
its tick's monotonic time, the packets taken in so far per port, and whether
the sim supplied joint_state or the daemon was shutting down. The recording
keeps each port's packets in arrival order (controller/recording.py), so tick
k took in the packets between tick k-1's counts and its own.

Compared: every message the daemon publishes, field by field, in order per
channel. controller_status is compared without its loop timing (lateness,
loop time, overruns): those are measurements of the host, not outputs of the
core. A recording must start before the daemon's first tick.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller import msgs
from controller.config import Config
from controller.recording import RecordingError, events, port_files
from controller.runtime import INPUTS

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
    ticks: int = 0
    compared: dict[str, int] = field(default_factory=dict)   # messages per channel
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)           # e.g. a log that stops mid-tick

    @property
    def identical(self) -> bool:
        return not self.differences


@dataclass
class Recording:
    """A recording split into what the core took in and what it published."""
    joint_cmds: list[Any]                                   # decoded, in tick order
    inputs: dict[str, list[tuple[str, bytes]]]              # per port, in arrival order
    sim_states: list[bytes]                                  # joint_state the sim published
    outputs: dict[str, list[bytes]]                          # per channel key, in order


def load_recording(cfg: Config, base: Path) -> Recording:
    """Read a recording's files (controller/recording.py) and split them."""
    files = port_files(base, list(cfg.lcm.ports))
    recording = split_recording(cfg, {port: ((e.channel, e.data) for e in events(paths))
                                      for port, paths in files.items()})
    if not recording.joint_cmds:
        raise RecordingError(f"{base}: no {cfg.lcm.channels['joint_cmd']} messages: not a motiond "
                             "recording (or another --namespace)")
    return recording


def split_recording(cfg: Config, ports: dict[str, Iterable[tuple[str, bytes]]]) -> Recording:
    """Each port's (channel, data) in arrival order -> what the core took in
    and what it published."""
    ch = cfg.lcm.channels
    key_of = {name: key for key, name in ch.items()}
    input_keys = {port: set(names) for port, names in INPUTS}
    joint_cmds: list[Any] = []
    inputs: dict[str, list[tuple[str, bytes]]] = {port: [] for port, _ in INPUTS}
    states: list[bytes] = []
    outputs: dict[str, list[bytes]] = defaultdict(list)
    for port, packets in ports.items():
        for channel, data in packets:
            key = key_of.get(channel)
            if key == "joint_cmd":
                joint_cmds.append(msgs.joint_command_t.decode(data))
            if key in OUTPUT_TYPES:
                outputs[key].append(data)
            elif key == "joint_state":
                states.append(data)
            if key in input_keys.get(port, ()):
                inputs[port].append((channel, data))
    sim = bool(joint_cmds and joint_cmds[0].flags & msgs.joint_command_t.FLAG_SIM)
    if sim:
        # With --sim the daemon does not subscribe to joint_state: the ones in
        # the log are the sim's, one per tick, published before the step.
        inputs["joint"] = [(c, d) for c, d in inputs["joint"] if c != ch["joint_state"]]
    return Recording(joint_cmds, inputs, states if sim else [], dict(outputs))


def _check_start(rec: Recording) -> None:
    first = rec.joint_cmds[0]
    if first.tick != 0:
        raise RecordingError(
            f"the recording starts at tick {first.tick}: replay needs the daemon's whole run, "
            "so start `motionctl record` before motiond")
    for k, jc in enumerate(rec.joint_cmds):
        if jc.tick != k:
            raise RecordingError(f"joint_cmd of tick {k} is missing from the recording "
                                 f"(next is tick {jc.tick}): the logger dropped packets")


def replay(cfg: Config, rec: Recording) -> ReplayResult:
    """Run a fresh Controller through the recorded ticks; compare its outputs."""
    from controller.controller import (
        Controller,  # the compiled kernel: only when replaying
    )

    _check_start(rec)
    first = rec.joint_cmds[0]
    epoch_offset_ns = first.utime * 1000 - first.tick_ns // 1000 * 1000
    ctl = Controller(cfg, epoch_offset_ns=epoch_offset_ns)
    joint_state = cfg.lcm.channels["joint_state"]
    replayed: dict[str, list[tuple[int, bytes]]] = defaultdict(list)
    key_of = {name: key for key, name in cfg.lcm.channels.items()}
    taken = {port: 0 for port, _ in INPUTS}
    result = ReplayResult()
    for k, jc in enumerate(rec.joint_cmds):
        inbox: list[tuple[str, bytes]] = []
        for port, count in (("command", jc.taken_command), ("joint", jc.taken_joint)):
            if count > len(rec.inputs[port]):
                result.notes.append(f"tick {k}: the daemon had taken {count} packets on the "
                                    f"{port} port, the recording holds {len(rec.inputs[port])}: "
                                    "the logger dropped packets; replay stops here")
                return _compare(rec, replayed, result)
            inbox += rec.inputs[port][taken[port]:count]
            taken[port] = count
        if jc.flags & msgs.joint_command_t.FLAG_SIM:
            if k >= len(rec.sim_states):
                result.notes.append(f"tick {k}: the sim's joint_state is missing; replay stops here")
                return _compare(rec, replayed, result)
            inbox.append((joint_state, rec.sim_states[k]))
        if jc.flags & msgs.joint_command_t.FLAG_SHUTDOWN and not ctl.shutting_down:
            ctl.shutdown()
        ctl.trace_inputs(jc.taken_command, jc.taken_joint,
                         bool(jc.flags & msgs.joint_command_t.FLAG_SIM))
        out = ctl.step(jc.tick_ns, inbox)
        for _, channel, data in out.messages:
            replayed[key_of[channel]].append((k, data))
        result.ticks += 1
    return _compare(rec, replayed, result)


def _compare(rec: Recording, replayed: dict[str, list[tuple[int, bytes]]],
             result: ReplayResult) -> ReplayResult:
    last_tick = result.ticks - 1
    for key, kind in OUTPUT_TYPES.items():
        mine = replayed.get(key, [])
        theirs = rec.outputs.get(key, [])
        n = min(len(mine), len(theirs))
        result.compared[key] = n
        for i in range(n):
            diff = _first_field_difference(kind.decode(theirs[i]), kind.decode(mine[i][1]),
                                           TIMING_FIELDS if key == "status" else frozenset())
            if diff is not None:
                result.differences.append(Difference(mine[i][0], key, i, *diff))
                break
        if len(mine) > n:
            extra_tick = mine[n][0]
            if extra_tick < last_tick:   # not just the logger stopping within the last tick
                result.differences.append(Difference(extra_tick, key, n, "(message)", "absent",
                                                     "published"))
            else:
                result.notes.append(f"{key}: the recording stops before the last tick's message")
        elif len(theirs) > n and result.ticks == len(rec.joint_cmds):
            # (A replay stopped early leaves recorded messages of later ticks unmatched.)
            result.differences.append(Difference(last_tick, key, n, "(message)",
                                                 f"{len(theirs) - n} more", "absent"))
    result.differences.sort(key=lambda d: (d.tick, d.channel))
    return result


def _first_field_difference(recorded: Any, replayed: Any,
                            skip: frozenset[str]) -> tuple[str, Any, Any] | None:
    for name in recorded.__slots__:
        if name in skip:
            continue
        a, b = getattr(recorded, name), getattr(replayed, name)
        for path, x, y in _leaves(name, a, b):
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
