"""Fuzzing the controller core: wire decoding, intake, queue, state machine and
behaviours, through Controller.step on the simulated clock (tests/harness.py).

hypothesis generates what arrives: random bytes and mangled messages on every
inbound channel; robot_control_cmd with every field wild (any mode and gait
id, NaN/Inf/extreme floats, any life_count, value and duration); motor_ctrl,
motion_goal, script_request and user-gait uploads with wild content; and the
timing: ticks between packets, wake-up jitter, heartbeats on and off, gaps
that cross the 500 ms command timeout.

After every tick (`Watch.tick`):

* no exception escaped Controller.step;
* the tick counter advanced by exactly one, and the tick's joint_cmd carries it;
* every joint_cmd value is finite, each position inside the config's joint
  limits and each velocity within its velocity limit; a joint with stiffness
  (kp > 0) moved by at most its step limit since the previous tick (limp
  joints track the measured angle on purpose, see Kernel.track);
* the command queue holds 1..capacity blocks;
* every FSM state change is one the config's transition table allows, or OFF
  on an OFF command, or the damper on an EDAMP (foot workspace) trip: the two
  safety paths the table does not list. Each change is recorded from
  Fsm._switch as it happens, and from the state before and after the tick;
* a response, when published, carries a switch_status of SPEC §1.3;
* the step opened no file (a Python audit hook: everything a request names
  was loaded at start; docs/SECURITY.md).

test_every_accepted_script_request_can_be_announced calls the script
director alone, many times: a request it accepts must yield a SCRIPT_STARTED
event that encodes.

The settings are deterministic for CI (derandomize, no example database)
with bounded example counts; the module takes about half a minute.
MOTIOND_FUZZ_SCALE=N runs N times the examples with fresh random inputs, for
a longer hunt. A failing case shrinks to a short packet sequence: keep it as
a regression test next to the fix.
"""
from __future__ import annotations

import math
import os
import struct
import sys
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
from harness import Rig, command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller import msgs
from controller.behaviours import locomotion as locomotion_module
from controller.core import director as director_module
from controller.core.fsm import EDAMP
from controller.core.goals import Event, EventKind, to_msg
from controller.motion.mof import load_net
from controller.protocol.block import FROM_TIMEOUT
from controller.robot.config import Config, load_config
from controller.robot.native import Kernel, Payload

ROOT = Path(__file__).resolve().parent.parent
CYBERDOG = str(ROOT / "config" / "cyberdog2.yaml")
HUMANOID = str(ROOT / "config" / "humanoid20.yaml")
NAO = str(ROOT / "config" / "nao22.yaml")

# CI runs the bounded, derandomized examples. A longer hunt on a developer's
# machine: MOTIOND_FUZZ_SCALE=50 multiplies every example count and draws
# fresh random inputs each run (a failure prints the reproducing example).
SCALE = int(os.environ.get("MOTIOND_FUZZ_SCALE", "1"))
FUZZ = settings(deadline=None, derandomize=SCALE == 1, database=None, print_blob=SCALE > 1,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def examples(n: int) -> int:
    return n * SCALE


INBOUND = ("command", "user_gait_file", "motor_ctrl", "joint_state", "motion_goal",
           "script_request")
TYPES = {"command": msgs.robot_control_cmd_lcmt, "user_gait_file": msgs.file_send_lcmt,
         "motor_ctrl": msgs.motor_ctrl_lcmt, "joint_state": msgs.joint_state_t,
         "motion_goal": msgs.motion_goal_t, "script_request": msgs.script_request_t}
SWITCH_STATUS = range(8)


# -- a rig per example, cheaply ----------------------------------------------------------
# Loading a config, its gait files and its keyframe scripts takes ~0.25 s;
# all are immutable data, so each is loaded once and shared by the examples'
# fresh controllers. The config's arrays are made read-only: a controller
# that wrote into the shared config would fail here instead of leaking state
# between examples.

_CONFIGS: dict[str, Config] = {}
_LIBRARIES: dict[Path, Any] = {}
_GAITS: dict[tuple[Path, tuple[Any, ...]], dict[int, Any]] = {}
_load_gaits = locomotion_module.load_gaits


def _config(path: str) -> Config:
    if path not in _CONFIGS:
        cfg = load_config(path)
        for value in vars(cfg).values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
        _CONFIGS[path] = cfg
    return _CONFIGS[path]


def _library(cfg: Config) -> Any:
    if cfg.path not in _LIBRARIES:
        _LIBRARIES[cfg.path] = director_module.ScriptLibrary(cfg)
    return _LIBRARIES[cfg.path]


def _gaits(directory: Path, legs: int, windows: Any = None) -> dict[int, Any]:
    key = (directory, tuple(sorted((windows or {}).items())))
    if key not in _GAITS:
        _GAITS[key] = _load_gaits(directory, legs, windows)
    return dict(_GAITS[key])     # the behaviour's own dict, shared definitions


@dataclass
class FuzzRig(Rig):
    def __post_init__(self) -> None:
        cfg = _config(self.config_path or CYBERDOG)
        library = _library(cfg)
        with mock.patch.object(director_module, "ScriptLibrary", lambda _cfg: library), \
                mock.patch.object(locomotion_module, "load_gaits", _gaits), \
                mock.patch("harness.load_config", lambda _path: cfg):
            super().__post_init__()


def joint_cmd_values(data: Payload) -> tuple[int, int, np.ndarray]:
    """(tick, num_joints, rows position/velocity/kp/kd/torque) of an encoded
    joint_command_t, read straight from its layout: the generated decoder is
    pure Python and would triple the cost of a tick. test_the_fuzzer_reaches_...
    checks this against the generated decoder."""
    tick, n = struct.unpack_from(">qh", data, 16)
    # memoryview: the kernel's in-place ctypes buffer, as a buffer numpy's stubs know
    values = np.frombuffer(memoryview(data), dtype=">f4", count=5 * n, offset=26).reshape(5, n)
    return tick, n, values


# -- the invariants ------------------------------------------------------------------------

_opened: list[Any] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _opened is not None and event == "open":
        _opened.append(args[0])


sys.addaudithook(_audit)     # cannot be removed; records only inside Watch.tick


@dataclass
class Watch:
    """Steps a rig and checks the invariants after every tick."""
    rig: Rig
    switches: list[tuple[int, int]] = field(default_factory=list)
    transitions: set[tuple[int, int]] = field(default_factory=set)   # every change seen
    ticks: int = 0

    def __post_init__(self) -> None:
        fsm = self.rig.ctl.fsm
        original = fsm._switch

        def switch(ctx: Any, mode: int) -> None:
            self.switches.append((fsm.state.mode, mode))
            original(ctx, mode)

        fsm._switch = switch   # type: ignore[method-assign]  # spy on every state change
        cfg = self.rig.cfg
        # joint_cmd carries float32: compare with the limits as float32 (rounding is monotonic).
        self.lo = cfg.q_min.astype(np.float32)
        self.hi = cfg.q_max.astype(np.float32)
        self.vmax = cfg.v_max.astype(np.float32)
        self.prev_pos = self.rig.ctl.kernel.pos.copy()

    def tick(self, heartbeat: bool = False, jitter_ns: int = 0) -> None:
        rig, ctl = self.rig, self.rig.ctl
        tick0, mode0 = ctl.tick, ctl.fsm.mode
        self.switches.clear()
        global _opened
        rig.now_ns += jitter_ns
        opened: list[Any] = []
        _opened = opened
        try:
            rig.tick(heartbeat=heartbeat)    # an exception fails the example
        finally:
            _opened = None
        rig.now_ns -= jitter_ns
        self.ticks += 1
        where = f"tick {tick0}"
        assert ctl.tick == tick0 + 1, where
        assert not opened, f"{where}: the step opened {opened}"

        assert rig.last_out is not None
        out = [(ch, data) for _, ch, data in rig.last_out.messages]
        joint = [data for ch, data in out if ch == rig.ch["joint_cmd"]]
        assert len(joint) == 1, f"{where}: {len(joint)} joint_cmd messages"
        jc_tick, n, values = joint_cmd_values(joint[0])
        assert jc_tick == tick0 and n == rig.cfg.num_joints, where
        if not np.isfinite(values).all():
            names = ("position", "velocity", "kp", "kd", "torque")
            bad = [names[i] for i in range(5) if not np.isfinite(values[i]).all()]
            raise AssertionError(f"{where}: joint_cmd.{bad} not finite: {values}")
        pos, vel, kp, kd = values[0], values[1], values[2], values[3]
        assert (pos >= self.lo).all() and (pos <= self.hi).all(), \
            f"{where}: position outside the joint limits: {pos}"
        assert (np.abs(vel) <= self.vmax).all(), f"{where}: velocity above its limit: {vel}"
        assert (kp >= 0).all() and (kd >= 0).all(), where
        k = ctl.kernel
        stiff = k.kp > 0
        moved = np.abs(k.pos - self.prev_pos)
        assert (moved[stiff] <= k.step_max[stiff] + 1e-9).all(), \
            f"{where}: a stiff joint jumped {moved} (step limit {k.step_max})"
        self.prev_pos = k.pos.copy()

        assert 1 <= len(ctl.queue) <= ctl.queue.capacity, f"{where}: queue {len(ctl.queue)}"

        changes = list(self.switches)
        if ctl.fsm.mode != mode0 and (not changes or changes[-1][1] != ctl.fsm.mode):
            changes.append((mode0, ctl.fsm.mode))      # a change without _switch: EDAMP
        table = rig.cfg.fsm
        for src, dst in changes:
            self.transitions.add((src, dst))
            if table.allowed(src, dst):
                continue
            if dst == 0 and ctl.last_active.mode == 0:
                continue                                 # OFF handling (SPEC §5.6.1)
            if dst == 7 and ctl.fsm.operating == EDAMP and ctl.fsm.footpos_error:
                continue                                 # foot workspace trip (SPEC §5.8)
            raise AssertionError(f"{where}: transition {table.name(src)} -> {table.name(dst)} "
                                 "is not in the transition table")

        for ch, data in out:
            if ch == rig.ch["response"]:
                r = msgs.robot_control_response_lcmt.decode(data)
                assert r.switch_status in SWITCH_STATUS, where
                assert 0 <= r.order_process_bar <= 100, where

    def run(self, ticks: int, heartbeat_every: int = 0, jitter: list[int] | None = None) -> None:
        for i in range(ticks):
            beat = heartbeat_every > 0 and self.rig.ctl.tick % heartbeat_every == 0
            self.tick(heartbeat=beat, jitter_ns=jitter[i % len(jitter)] if jitter else 0)


@contextmanager
def quiet_logs():
    """The fuzzer makes thousands of warnings; keep the output readable."""
    import structlog
    previous = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(50))
    try:
        yield
    finally:
        structlog.configure(**previous)


@pytest.fixture(autouse=True)
def _quiet():
    with quiet_logs():
        yield


# -- strategies ------------------------------------------------------------------------------
# A message's numbers follow one profile: "sane" (what a client means, in each
# field's working range), "extreme" (any finite float32: accepted, so the
# clamps must hold), "one bad" (sane, but one field NaN or infinite: the
# message must be rejected) or "chaos" (anything). Mostly sane, so that
# commands are accepted and the robot really moves between the traps.

int8 = st.integers(-128, 127)
int16 = st.integers(-2**15, 2**15 - 1)
int32 = st.integers(-2**31, 2**31 - 1)
int64 = st.integers(-2**63, 2**63 - 1)
F32_MAX = float(np.finfo(np.float32).max)
NON_FINITE = [math.nan, math.inf, -math.inf]
EXTREME = [0.0, -0.0, F32_MAX, -F32_MAX, 1e-45, -1e-45, 1e30, -1e30, 1e6, -1e6]
extreme = st.one_of(st.sampled_from(EXTREME), st.floats(width=32, allow_nan=False,
                                                          allow_infinity=False))
chaos = st.one_of(st.floats(width=32), st.sampled_from(EXTREME + NON_FINITE))
PROFILES = ["sane"] * 5 + ["extreme"] * 2 + ["one bad", "chaos"]


class Numbers:
    """Draws a message's float fields under one profile."""

    def __init__(self, draw: st.DrawFn, fields: list[str], profiles: list[str] = PROFILES) -> None:
        self.draw = draw
        self.profile = draw(st.sampled_from(profiles))
        self.bad = draw(st.sampled_from(fields)) if self.profile == "one bad" else None

    def __call__(self, name: str, n: int, lo: float = -1.0, hi: float = 1.0) -> list[float]:
        sane = st.floats(float(np.float32(lo)), float(np.float32(hi)), width=32)
        element = {"sane": sane, "one bad": sane, "extreme": st.one_of(sane, extreme),
                   "chaos": st.one_of(sane, chaos)}[self.profile]
        values = self.draw(st.lists(element, min_size=n, max_size=n))
        if name == self.bad and n:
            values[self.draw(st.integers(0, n - 1))] = self.draw(st.sampled_from(NON_FINITE))
        return values


# Modes with their usual gaits, then anything an int8 holds.
MODE_GAITS = {12: [0, 0, 17, 18], 21: [0, 1, 2, 3, 5, 5], 11: [1, 3, 9, 27, 31, 110, 2, 99],
              3: [0, 1, 3], 7: [0, 1], 0: [0], 62: [1, 3, 5, 110, 0, 99], 64: [0, 10, 1],
              16: [0, 1, 3, 6, 2], 22: [1, 4], 15: [0], 60: [0], 80: [0], 81: [0], -1: [0]}
COMMAND_FLOATS = ["vel_des", "rpy_des", "pos_des", "acc_des", "ctrl_point", "foot_pose",
                  "step_height"]
DURATIONS = [0, 0, 0, 1, -1, -2, -3, 2, 200, 600, 1000, 3000, 2**31 - 1, -2**31]


# How often each mode is drawn: the ones with motion most, OFF rarely (it
# ends every motion; an example that sends it early explores little).
MODE_WEIGHTS = {12: 4, 21: 4, 11: 4, 3: 3, 62: 3, 7: 2, 64: 2, 16: 2, 22: 1, 0: 1, 15: 1, 60: 1,
                80: 1, 81: 1, -1: 1}
WEIGHTED_MODES = [m for m, w in MODE_WEIGHTS.items() for _ in range(w)]


@st.composite
def robot_commands(draw: st.DrawFn, modes: list[tuple[int, int]] | None = None,
                   profiles: list[str] = PROFILES) -> msgs.robot_control_cmd_lcmt:
    """A command: any mode and gait (`modes` None), or one of `modes`; its
    numbers under one of `profiles`."""
    msg = msgs.robot_control_cmd_lcmt()
    if modes is not None:
        msg.mode, msg.gait_id = draw(st.sampled_from(modes))
    elif draw(st.integers(0, 9)) < 8:
        msg.mode = draw(st.sampled_from(WEIGHTED_MODES))
        gaits = st.sampled_from(MODE_GAITS[msg.mode])
        msg.gait_id = draw(st.one_of(gaits, gaits, gaits, int8))
    else:
        msg.mode, msg.gait_id = draw(int8), draw(int8)
    msg.contact = draw(st.one_of(st.sampled_from([0, 15, 14, 13, 11, 7, 12]), int8))
    msg.life_count = draw(int8)
    number = Numbers(draw, COMMAND_FLOATS, profiles)
    msg.vel_des = number("vel_des", 3, -1.5, 1.5)
    msg.rpy_des = number("rpy_des", 3, -0.6, 0.6)
    msg.pos_des = number("pos_des", 3, -0.1, 0.35)
    msg.acc_des = number("acc_des", 6)
    msg.ctrl_point = number("ctrl_point", 3, -0.3, 0.3)
    msg.foot_pose = number("foot_pose", 6, -0.1, 0.1)
    msg.step_height = number("step_height", 2, 0.0, 0.1)
    msg.value = draw(st.one_of(st.sampled_from([0, 0, 1, 2, 4, 8]), int32))
    msg.duration = draw(st.one_of(st.sampled_from(DURATIONS), st.sampled_from(DURATIONS),
                                  st.integers(-100, 5000), int32))
    return msg


@st.composite
def motor_ctrls(draw: st.DrawFn) -> msgs.motor_ctrl_lcmt:
    msg = msgs.motor_ctrl_lcmt()
    number = Numbers(draw, ["q_des", "qd_des", "kp_des", "kd_des", "tau_des"])
    zero_gains = draw(st.integers(0, 3)) == 0     # the frame that ends the entry wait
    msg.q_des = number("q_des", 12, -3.0, 3.0)
    msg.qd_des = number("qd_des", 12, -5.0, 5.0)
    msg.kp_des = [0.0] * 12 if zero_gains else number("kp_des", 12, 0.0, 80.0)
    msg.kd_des = [0.0] * 12 if zero_gains else number("kd_des", 12, 0.0, 3.0)
    msg.tau_des = [0.0] * 12 if zero_gains else number("tau_des", 12, -12.0, 12.0)
    return msg


GOAL_FLOATS = ["distance", "angle", "speed", "rotation", "timeout", "max_acc", "max_speed",
               "max_rotation", "x", "y", "yaw", "x1", "y1", "x2", "y2", "voltage"]


@st.composite
def goals(draw: st.DrawFn) -> msgs.motion_goal_t:
    msg = msgs.motion_goal_t()
    msg.utime = draw(int64)
    msg.goal_id = draw(st.one_of(st.integers(0, 5), int32))
    if draw(st.booleans()):          # a move a client means
        msg.kind = draw(st.sampled_from([1, 1, 2, 0, 3]))
        msg.distance, msg.angle = draw(st.floats(-0.5, 0.5)), draw(st.floats(-1.0, 1.0))
        msg.speed, msg.rotation = draw(st.floats(-0.3, 0.3)), draw(st.floats(-0.5, 0.5))
        msg.timeout = draw(st.sampled_from([0.5, 2.0, 5.0]))
        msg.max_acc, msg.max_speed, msg.max_rotation = 0.5, 0.3, 0.5
        return msg
    msg.kind = draw(st.one_of(st.integers(0, 6), st.integers(0, 6), int8))
    number = Numbers(draw, GOAL_FLOATS)
    for name in GOAL_FLOATS:
        lo, hi = (0.1, 5.0) if name in ("timeout", "max_acc", "max_speed", "max_rotation",
                                        "voltage") else (-2.0, 2.0)
        setattr(msg, name, number(name, 1, lo, hi)[0])
    msg.enable = draw(st.one_of(st.sampled_from([0, 1]), int8))
    return msg


ATTACK_NAMES = ["../Stand", "../../etc/passwd", "/etc/passwd", "..", ".", ".hidden", "",
                "scripts/cyberdog2/JumpHigh", "Stand\x00", "a" * 65, " ", "Stand\n",
                "C:\\Windows", "%2e%2e%2fStand", "Stand.yaml.yaml", "\u00e9", "\ufffd",
                "../humanoid20/Wave", "~/Stand", "$HOME", "Stand;rm -rf /", "*"]


@st.composite
def script_requests(draw: st.DrawFn, known: tuple[str, ...]) -> msgs.script_request_t:
    msg = msgs.script_request_t()
    msg.utime = draw(int64)
    msg.request_id = draw(st.one_of(st.integers(0, 5), int32))
    if draw(st.booleans()):          # a request a client means
        msg.action = draw(st.sampled_from([0, 0, 0, 1]))
        msg.priority = draw(st.sampled_from([0, 50, 100]))
        msg.mirror = draw(st.booleans())
        msg.total_ms = draw(st.sampled_from([0, 0, 3000]))
        msg.speed = Numbers(draw, ["speed"])("speed", 1, 0.0, 4.0)[0]
        msg.names = draw(st.lists(st.sampled_from(known), min_size=1, max_size=3))
        msg.num_names = len(msg.names)
        return msg
    msg.action = draw(st.one_of(st.sampled_from([0, 0, 0, 1]), int8))
    msg.priority = draw(st.one_of(st.sampled_from([0, 10, 25, 50, 100]), int8))
    msg.mirror = draw(st.booleans())
    msg.start_utime = draw(st.one_of(st.just(0), st.just(0), int64))
    msg.total_ms = draw(st.one_of(st.sampled_from([0, 0, 100, 5000]), int32))
    msg.speed = draw(st.one_of(st.sampled_from([0.0, 0.0, 0.5, 2.0, 50.0]), chaos))
    name = st.one_of(st.sampled_from(known), st.sampled_from(known),
                     st.sampled_from(ATTACK_NAMES), st.text(max_size=70))
    msg.names = draw(st.lists(name, min_size=0, max_size=18))
    msg.num_names = len(msg.names)
    return msg


DEF_LINES = ["[[section]]", "contact = [1, 0, 0, 1]", "duration = 5", "contact = [0, 1, 1, 0]",
             "contact = [1, 1, 1, 1]", "duration = 0", "duration = 100000", "contact = [2, 0]",
             "# note", ""]
PARAM_KEYS = {"mode": st.sampled_from([11, 11, 11, 12, 21, 62, 0, 7]), "gait_id": st.sampled_from([110, 3, 1, 99]),
              "duration": st.one_of(st.sampled_from([400, 1000, 0, -5]), st.integers(-10, 10**6)),
              "vel_des": st.lists(st.floats(-1, 1), min_size=3, max_size=3),
              "pos_des": st.lists(st.floats(-0.1, 0.1), min_size=3, max_size=3),
              "step_height": st.sampled_from([[60040.0, 60040.0], [0.05, 0.05], [1e9, -1e9], [0.0]]),
              "contact": st.sampled_from([10, 12, -128, 127]), "value": st.sampled_from([0, 1, 2]),
              "foot_pose": st.lists(st.floats(-0.5, 0.5), min_size=6, max_size=6),
              "ctrl_point": st.lists(st.floats(-0.5, 0.5), min_size=3, max_size=3),
              "file": st.just("../../../etc/passwd"), "type": st.just("usergait")}


def _toml(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, str):
        return '"' + value + '"'
    return repr(value) if not isinstance(value, float) or math.isfinite(value) else "nan"


@st.composite
def uploads(draw: st.DrawFn) -> msgs.file_send_lcmt:
    kind = draw(st.sampled_from(["def", "def", "params", "params", "text"]))
    if kind == "def":
        sections = draw(st.lists(st.sampled_from(["[[section]]\ncontact = [1, 0, 0, 1]\nduration = 5",
                                                  "[[section]]\ncontact = [0, 1, 1, 0]\nduration = 3",
                                                  "[[section]]\ncontact = [1, 1, 1, 1]\nduration = 2"]),
                                 max_size=6))
        noise = draw(st.lists(st.sampled_from(DEF_LINES), max_size=4))
        text = "\n".join(["# Gait Def", *sections, *noise])
    elif kind == "params":
        steps = draw(st.lists(st.dictionaries(st.sampled_from(sorted(PARAM_KEYS)),
                                              st.just(None), max_size=6), min_size=0, max_size=5))
        lines = ["# Gait Params"]
        for keys in steps:
            lines.append("[[step]]")
            lines += [f"{key} = {_toml(draw(PARAM_KEYS[key]))}" for key in keys]
        if draw(st.integers(0, 5)) == 0:
            lines.insert(draw(st.integers(1, len(lines))), draw(st.sampled_from(["[oops", "x = ", "[[step"])))
        text = "\n".join(lines)
    else:
        text = draw(st.text(max_size=300))
    msg = msgs.file_send_lcmt()
    msg.data = text
    return msg


@st.composite
def joint_states(draw: st.DrawFn, n: int) -> msgs.joint_state_t:
    msg = msgs.joint_state_t()
    msg.utime = draw(int64)
    msg.num_joints = draw(st.one_of(st.just(n), st.just(n), st.integers(0, 40)))
    m = max(0, msg.num_joints)
    number = Numbers(draw, ["position", "velocity", "torque"])
    msg.position = number("position", m, -3.0, 3.0)
    msg.velocity = number("velocity", m, -10.0, 10.0)
    msg.torque = number("torque", m, -12.0, 12.0)
    msg.battery_voltage = number("battery", 1, 0.0, 30.0)[0]
    return msg


def mangled(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """A valid encoding cut short, extended, bit-flipped or with another
    type's fingerprint; or bytes from nowhere."""
    @st.composite
    def mangle(draw: st.DrawFn) -> bytes:
        data = bytearray(draw(valid).encode())
        how = draw(st.sampled_from(["cut", "extend", "flip", "fingerprint", "random"]))
        if how == "cut":
            return bytes(data[:draw(st.integers(0, max(0, len(data) - 1)))])
        if how == "extend":
            return bytes(data) + draw(st.binary(min_size=1, max_size=64))
        if how == "flip":
            for _ in range(draw(st.integers(1, 8))):
                i = draw(st.integers(0, len(data) - 1))
                data[i] ^= 1 << draw(st.integers(0, 7))
            return bytes(data)
        if how == "fingerprint":
            other = draw(st.sampled_from(list(TYPES.values())))
            return other._get_packed_fingerprint() + bytes(data[8:])
        return draw(st.binary(max_size=300))
    return mangle()


def known_names(config: str) -> tuple[str, ...]:
    """Script (and .mof motion) names this robot can play, for requests that may start."""
    cfg = _config(config)
    names = [p.stem for p in _library(cfg).scripts]
    names += list(load_net(cfg.mof)[0].motions) if cfg.mof else []
    return tuple(names) or ("Stand",)


def packets(channels: tuple[str, ...] = INBOUND, config: str = CYBERDOG,
            mangle: int = 1) -> st.SearchStrategy[tuple[str, Any]]:
    """(channel, message or bytes): on each channel a valid message 4 - `mangle`
    times in 4, mangled bytes otherwise."""
    n = _config(config).num_joints
    valid = {"command": robot_commands(), "user_gait_file": uploads(), "motor_ctrl": motor_ctrls(),
             "joint_state": joint_states(n), "motion_goal": goals(),
             "script_request": script_requests(known_names(config))}
    options: list[st.SearchStrategy[tuple[str, Any]]] = []
    for channel in channels:
        options += [st.tuples(st.just(channel), valid[channel])] * (4 - mangle)
        options += [st.tuples(st.just(channel), mangled(valid[channel]))] * mangle
    return st.one_of(options)


# Time between events: mostly short, sometimes across the 500 ms command
# timeout (250 ticks) or the 500 ms motor_ctrl loss.
gaps = st.one_of(st.integers(0, 30), st.integers(0, 30), st.integers(30, 200),
                 st.sampled_from([248, 249, 250, 251, 260, 400]))
short_gaps = st.one_of(st.integers(0, 15), st.integers(0, 15), st.integers(0, 15),
                       st.integers(15, 120))
some_long_gaps = st.one_of(short_gaps, short_gaps, short_gaps, st.just(251))
jitters = st.lists(st.sampled_from([0, 0, 0, 50_000, -400_000, 900_000, 3_000_000]),
                   min_size=1, max_size=4)


# [(ticks to run first, events to inject, heartbeat every N ticks or 0)]
Schedule = list[tuple[int, list[Any], int]]


@st.composite
def schedules(draw: st.DrawFn, events: st.SearchStrategy[Any], max_events: int = 8,
              waits: st.SearchStrategy[int] = some_long_gaps) -> Schedule:
    """[(ticks to run first, events to inject, heartbeat every N ticks or 0)]."""
    return draw(st.lists(st.tuples(waits, st.lists(events, min_size=1, max_size=3),
                                   st.sampled_from([0, 25, 50, 50, 200])),
                         min_size=1, max_size=max_events))


def inject(rig: Rig, channel: str, event: Any) -> None:
    """Queue a message (encoded here) or raw bytes; a decodable command also
    becomes what the heartbeat repeats, as a client's would."""
    if isinstance(event, bytes):
        rig.raw(rig.ch[channel], event)
        return
    rig.raw(rig.ch[channel], event.encode())
    if channel == "command":
        rig.heartbeat_msg = event


def play(watch: Watch, schedule: Schedule,
         jitter: list[int] | None = None, tail: int = 30) -> None:
    for wait, events, beat in schedule:
        watch.run(wait, beat, jitter)
        for channel, event in events:
            inject(watch.rig, channel, event)
        watch.tick(heartbeat=False)
    watch.run(tail, 0, jitter)


def standing_rig(config: str = CYBERDOG) -> FuzzRig:
    """Stood up by a recovery stand (mode 12), from limp legs put in the
    stand pose: the short way up, to keep each example cheap."""
    rig = FuzzRig(config)
    assert rig.robot is not None
    rig.robot.q[:] = rig.ctl.robot.stand_pose()
    rig.stand()
    return rig


def start(config: str, stand: bool) -> Watch:
    rig = standing_rig(config) if stand else FuzzRig(config)
    if not stand:
        rig.run(20)
    return Watch(rig)


# -- the fuzz tests -----------------------------------------------------------------------------

@settings(FUZZ, max_examples=examples(60))
@given(schedule=schedules(packets(mangle=3), waits=short_gaps), jitter=jitters)
def test_random_and_mangled_packets_on_every_channel(schedule: Schedule, jitter: list[int]) -> None:
    play(start(CYBERDOG, stand=False), schedule, jitter)


@settings(FUZZ, max_examples=examples(30))
@given(stand=st.booleans(), schedule=schedules(packets(("command",), mangle=0)), jitter=jitters)
def test_wild_robot_control_cmds(stand: bool, schedule: Schedule, jitter: list[int]) -> None:
    play(start(CYBERDOG, stand), schedule, jitter, tail=100)


# Every (mode, gait) CyberDog 2 carries out, and the uploaded user gait.
MOTION_PAIRS = [(12, 0), (12, 17), (21, 0), (21, 1), (21, 2), (21, 3), (21, 5), (11, 1), (11, 3),
                (11, 9), (11, 27), (11, 2), (11, 7), (11, 31), (11, 110), (3, 0), (3, 1), (3, 3),
                (7, 1), (62, 1), (62, 3), (62, 11), (62, 110), (64, 0), (16, 0), (16, 6),
                (22, 1), (12, 0), (21, 5)]
GAIT_DEF = "# Gait Def\n[[section]]\ncontact = [1, 0, 0, 1]\nduration = 5\n" \
           "[[section]]\ncontact = [0, 1, 1, 0]\nduration = 5\n"
GAIT_PARAMS = "# Gait Params\n[[step]]\nmode = 11\ngait_id = 110\nduration = 600\n" \
              "vel_des = [0.2, 0.0, 0.0]\nstep_height = [60060.0, 60060.0]\n"


@settings(FUZZ, max_examples=examples(20))
@given(steps=st.lists(st.tuples(robot_commands(MOTION_PAIRS, ["sane", "extreme"]),
                                st.integers(1, 300)), min_size=2, max_size=6))
def test_every_motion_with_extreme_fields(steps: list[tuple[msgs.robot_control_cmd_lcmt, int]]) -> None:
    """From standing, with the heartbeat on and the user gait uploaded: each
    mode and gait the robot carries out, given numbers in their working range
    or anywhere a float32 reaches (accepted, so every clamp is exercised)."""
    watch = start(CYBERDOG, stand=True)
    for text in (GAIT_DEF, GAIT_PARAMS):
        upload = msgs.file_send_lcmt()
        upload.data = text
        inject(watch.rig, "user_gait_file", upload)
    for msg, wait in steps:
        inject(watch.rig, "command", msg)
        watch.run(wait, heartbeat_every=50)
    assert watch.rig.ctl.gaits.user_gait.keys() == {"def", "params"}


SANE_COMMANDS = [(12, 0, 0), (21, 5, 600), (21, 0, 0), (11, 3, 0), (11, 1, 1000), (3, 0, 0),
                 (7, 1, 0), (7, 0, 2000), (62, 1, 0), (64, 0, 0), (16, 6, 0), (12, 17, 0)]


@settings(FUZZ, max_examples=examples(12))
@given(steps=st.lists(st.tuples(st.sampled_from(SANE_COMMANDS), gaps, st.booleans()),
                      min_size=1, max_size=6))
def test_heartbeat_gaps_and_the_command_timeout(steps: list[tuple[tuple[int, int, int], int, bool]]) -> None:
    """Valid commands, with and without heartbeats, and silences across 500 ms.
    Beyond the invariants: from 250 ticks after the last robot_control_cmd
    packet on, the active block is the timeout's damper or OFF."""
    watch = start(CYBERDOG, stand=True)
    rig, ctl = watch.rig, watch.rig.ctl
    last_packet = ctl.tick - 1          # stand() heart-beat until its end

    def silence_checked(ticks: int, beat: bool) -> None:
        nonlocal last_packet
        for _ in range(ticks):
            beating = beat and ctl.tick % 50 == 0
            if beating:
                last_packet = ctl.tick
            watch.tick(heartbeat=beating)
            silent = ctl.tick - 1 - last_packet
            timed_out = ctl.last_active.source == FROM_TIMEOUT
            if silent >= 250:
                assert timed_out and ctl.last_active.mode in (0, 7), \
                    f"{silent} ticks of silence, active {ctl.last_active}"

    for (mode, gait, duration), wait, beat in steps:
        rig.send(mode, gait, duration=duration, pos_des=[0, 0, 0.2], vel_des=[0.2, 0, 0])
        last_packet = ctl.tick
        silence_checked(1 + wait, beat)
    silence_checked(260, False)
    assert ctl.last_active.source == FROM_TIMEOUT and ctl.counters.timeouts >= 1


@settings(FUZZ, max_examples=examples(25))
@given(stand=st.booleans(),
       schedule=schedules(packets(("command", "command", "motor_ctrl", "motion_goal",
                                   "script_request", "user_gait_file"))),
       jitter=jitters)
def test_every_command_source_interleaved(stand: bool, schedule: Schedule, jitter: list[int]) -> None:
    play(start(CYBERDOG, stand), schedule, jitter, tail=100)


@settings(FUZZ, max_examples=examples(20))
@given(config=st.sampled_from([HUMANOID, NAO]), stand=st.booleans(), jitter=jitters, data=st.data())
def test_humanoids(config: str, stand: bool, jitter: list[int], data: st.DataObject) -> None:
    watch = start(config, stand)
    channels = ("command", "command", "motion_goal", "script_request", "script_request",
                "motor_ctrl", "joint_state")
    schedule = data.draw(schedules(packets(channels, config)))
    play(watch, schedule, jitter, tail=100)


@settings(FUZZ, max_examples=examples(20))
@given(schedule=schedules(packets(("script_request", "script_request", "command"), HUMANOID,
                                  mangle=0), max_events=5))
def test_script_requests(schedule: Schedule) -> None:
    """Keyframe scripts by name on the humanoid, which plays them beside a
    mode (an arm while the legs stand or walk) or in its script mode."""
    play(start(HUMANOID, stand=True), schedule, tail=150)


@settings(FUZZ, max_examples=examples(1000))
@given(names=st.lists(st.one_of(st.sampled_from(known_names(HUMANOID)), st.sampled_from(ATTACK_NAMES)),
                      max_size=4),
       action=st.sampled_from([0, 1]), mirror=st.booleans(), priority=st.integers(0, 100),
       total_ms=st.one_of(st.just(0), int32), speed=st.floats(width=32),
       start_utime=st.one_of(st.just(0), int64))
def test_every_accepted_script_request_can_be_announced(names: list[str], action: int, mirror: bool,
                                                        priority: int, total_ms: int, speed: float,
                                                        start_utime: int) -> None:
    """Director.request on its own (no ticks, so many examples): it never
    raises, and a request it accepts yields a SCRIPT_STARTED event that
    encodes (its float32 `value` is the chain's length in seconds)."""
    cfg = _config(HUMANOID)
    with mock.patch.object(director_module, "ScriptLibrary", lambda _cfg: _library(cfg)):
        director = director_module.Director(cfg, Kernel(cfg.q_min, cfg.q_max, cfg.v_max))
    msg = msgs.script_request_t()
    msg.request_id, msg.action, msg.mirror, msg.priority = 1, action, mirror, priority
    msg.total_ms, msg.speed, msg.start_utime = total_ms, speed, start_utime
    msg.names, msg.num_names = names, len(names)
    refusal = director.request(msgs.script_request_t.decode(msg.encode()), 10**9, 0)
    if refusal is None and action == 0:
        (run,) = director.pending
        started = Event(EventKind.SCRIPT_STARTED, run.request_id, 0, value=run.playback.duration_s)
        to_msg(started, 0).encode()


# -- the invariant checks can fail ------------------------------------------------------------

def test_the_watch_catches_a_broken_tick() -> None:
    """Each invariant, broken on purpose, is reported."""
    def broken(change: Callable[[Rig], None]) -> str:
        watch = start(CYBERDOG, stand=False)
        original = watch.rig.ctl.step

        def step(now_ns: int, inbox: list[tuple[str, bytes]], timing: Any = None,
                 late_from: int | None = None) -> Any:
            out = original(now_ns, inbox, timing, late_from)
            change(watch.rig)
            # re-encode the broken outputs into the joint command already in the outbox
            ctl = watch.rig.ctl
            encoded = out.get(watch.rig.ch["joint_cmd"])
            if encoded is None:
                raise RuntimeError("the tick published no joint_cmd")     # not an AssertionError: fail the test
            sent = msgs.joint_command_t.decode(bytes(encoded))
            ctl.kernel.encode_joint_command(ctl.joint_cmd_fingerprint, sent.utime, sent.tick)
            return out

        watch.rig.ctl.step = step   # type: ignore[method-assign]  # break the tick on purpose
        with pytest.raises(AssertionError) as failure:
            watch.run(5)
        return str(failure.value)

    def outside(rig: Rig) -> None:
        rig.ctl.kernel.pos[3] = rig.cfg.q_max[3] + 0.1

    def too_fast(rig: Rig) -> None:
        rig.ctl.kernel.vel[0] = rig.cfg.v_max[0] * 1.5

    def not_finite(rig: Rig) -> None:
        rig.ctl.kernel.vel[0] = math.nan

    def jump(rig: Rig) -> None:
        k = rig.ctl.kernel
        k.kp[:] = 1.0
        j = int(np.argmax(rig.cfg.q_max - k.pos))      # the joint with most room above it
        k.pos[j] += 0.1

    def teleport(rig: Rig) -> None:
        fsm = rig.ctl.fsm
        if fsm.mode == 0:
            fsm.state = fsm.behaviours[21]     # OFF -> POSE is not in the table

    def flooded(rig: Rig) -> None:
        rig.ctl.queue.blocks.extend([rig.ctl.queue.blocks[0]] * 1100)

    def reads(rig: Rig) -> None:
        (ROOT / "README.md").read_text()

    assert "outside the joint limits" in broken(outside)
    assert "velocity above its limit" in broken(too_fast)
    assert "joint_cmd.['velocity'] not finite" in broken(not_finite)
    assert "jumped" in broken(jump)
    assert "OFF -> POSE_CTRL is not in the transition table" in broken(teleport)
    assert "queue" in broken(flooded)
    assert "the step opened" in broken(reads)


def test_the_fuzzer_reaches_the_states_it_is_meant_to_check() -> None:
    """Not a fuzz run: one fixed walk through the modes, so that a rig or
    watch that silently stopped driving the robot would be noticed."""
    watch = start(CYBERDOG, stand=True)
    rig = watch.rig
    for mode, gait, duration in [(21, 5, 400), (11, 3, 0), (3, 0, 0), (7, 1, 0)]:
        rig.send(mode, gait, duration=duration, pos_des=[0, 0, 0.2], vel_des=[0.3, 0, 0])
        watch.run(1500, heartbeat_every=50)
    assert {(12, 21), (21, 11), (11, 3), (3, 7)} <= watch.transitions
    # The fast joint_cmd reader agrees with the generated decoder.
    assert rig.last_out is not None
    data = rig.last_out.get(rig.ch["joint_cmd"])
    assert data is not None
    tick, n, values = joint_cmd_values(data)
    jc = msgs.joint_command_t.decode(data)
    assert (tick, n) == (jc.tick, jc.num_joints) and jc.tick == rig.ctl.tick - 1
    for row, name in zip(values, ("position", "velocity", "kp", "kd", "torque")):
        np.testing.assert_array_equal(row, np.array(getattr(jc, name), dtype=np.float32))
    assert values[2].max() == 0 and values[3].max() > 0     # lying down: damping only
    assert command(12, 0, life_count=5).encode()[8 + 3] == 5      # the layout the fuzzer mangles
