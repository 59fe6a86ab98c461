"""Load and validate a robot configuration (config/<robot>.yaml).

Every robot number lives in the config; this module turns the YAML into typed,
checked values and fails with a message naming the file, the key and the
reason. Nothing here reads the network or the clock.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from controller.motion.biped_walk import WalkParams, load_walk_params
from controller.motion.mof import (
    MOF_HEADER,
    MofColumns,
    MofError,
    MotionNet,
    build_net,
    mof_columns,
)
from controller.protocol import constants  # motion_goal_t speed-profile defaults and bounds
from controller.robot.humanoid_kinematics import (
    LEG_JOINTS,
    LEG_SIDES,
    HumanoidConfigError,
    HumanoidGeometry,
)
from controller.robot.resources import CONFIG_DIR

DEFAULT_CONFIG = CONFIG_DIR / "cyberdog2.yaml"


class ConfigError(ValueError):
    """A configuration file is missing, unreadable or invalid."""


@dataclass(frozen=True)
class Gains:
    kp: np.ndarray  # per joint, wire order
    kd: np.ndarray


NAMESPACE_RE = re.compile(r"[A-Za-z0-9_-]{1,32}")


def check_namespace(name: str) -> str:
    """A namespace is empty (none) or 1-32 letters, digits, '_' or '-'."""
    if name and not NAMESPACE_RE.fullmatch(name):
        raise ConfigError(f"namespace {name!r}: use 1-32 letters, digits, '_' or '-'")
    return name


@dataclass(frozen=True)
class LcmConfig:
    lan: bool
    group: str
    ports: dict[str, int]
    names: dict[str, str]     # channel names as configured, without the namespace
    status_hz: float
    namespace: str = ""       # several robots on one LAN: every channel becomes NAME/channel

    @property
    def channels(self) -> dict[str, str]:
        """The channel names on the wire (namespace applied)."""
        return self._channels

    def __post_init__(self) -> None:
        check_namespace(self.namespace)
        prefix = f"{self.namespace}/" if self.namespace else ""
        object.__setattr__(self, "_channels",
                           {key: prefix + name for key, name in self.names.items()})

    def url(self, port_name: str) -> str:
        ttl = 1 if self.lan else 0
        return f"udpm://{self.group}:{self.ports[port_name]}?ttl={ttl}"


def with_namespace(cfg: Config, namespace: str | None) -> Config:
    """The config with its channels moved into `namespace` (None: unchanged)."""
    if namespace is None:
        return cfg
    return replace(cfg, lcm=replace(cfg.lcm, namespace=check_namespace(namespace)))


@dataclass(frozen=True)
class FsmTable:
    names: dict[int, str]
    immediate: dict[int, frozenset[int]]
    when_ready: dict[int, frozenset[int]]

    def allowed(self, src: int, dst: int) -> bool:
        return dst in self.immediate.get(src, ()) or dst in self.when_ready.get(src, ())

    def waits(self, src: int, dst: int) -> bool:
        return dst in self.when_ready.get(src, ())

    def name(self, mode: int) -> str:
        return self.names.get(mode, f"MODE_{mode}")


@dataclass(frozen=True)
class Geometry:
    hip_offsets: np.ndarray  # (legs, 3)
    side_sign: np.ndarray    # (legs,) +1 left, -1 right
    abad_link: float
    hip_link: float
    knee_link: float
    foot_radius: float
    mass: float


@dataclass(frozen=True)
class LocomotionConfig:
    """Mode 11 (SPEC §6.4): where the gait definitions are and the body numbers."""
    gaits_dir: Path
    body_height: float = 0.25
    height_range: tuple[float, float] = (0.23, 0.32)
    vertical_leg_height: float = 0.23
    pitch_limit: float = 0.1
    leave_speed: float = 0.15
    leave_gait: int = 9
    default_gait: int = 3
    com_x: float = 0.0
    half_stride: tuple[float, float] = (0.12, 0.07)
    goal_profile: tuple[float, float, float] = (        # m/s^2, m/s, rad/s
        constants.DEFAULT_MAX_ACC, constants.DEFAULT_MAX_SPEED, constants.DEFAULT_MAX_ROTATION)


@dataclass(frozen=True)
class WalkConfig:
    """Mode 11 on a biped: the quintic walk (controller/motion/biped_walk.py) and the
    gait ids it answers. Gait 1 stands (the walk stops with both feet down);
    `walk_gaits` walk; any other id is refused."""
    path: Path
    params: WalkParams
    walk_gaits: frozenset[int]
    default_gait: int
    goal_profile: tuple[float, float, float]  # m/s^2, m/s, rad/s


# Poses each kind needs: the damper's lie-down target, the sim's start pose,
# and for the humanoid the stand-up's waypoint and goal.
REQUIRED_POSES = {"quadruped": ("fold", "lie"), "humanoid": ("fold", "crouch", "stand", "lie")}
REQUIRED_GAINS = {
    "quadruped": ("pose", "pose_swing_compliant", "recovery", "lie_down", "damper",
                  "motor_ctrl_lost", "posture", "stance", "swing"),
    "humanoid": ("pose", "recovery", "lie_down", "damper"),   # + walk with a locomotion
}
# The leg IK's order: right leg then left leg, each group's joints in config
# order (hip_yaw hip_roll hip_pitch knee ankle_pitch ankle_roll).
HUMANOID_LEG_GROUPS = ("right_leg", "left_leg")


@dataclass(frozen=True)
class MotionsConfig:
    """Mode 62 (SPEC §4.1): motion id -> step-list file in `directory`."""
    directory: Path
    files: dict[int, str]


@dataclass(frozen=True, eq=False)
class MofConfig:
    """B-Human .mof motion nets (controller/motion/mof.py): how the robot reads .mof
    columns, what hardness means, and the net of `mof.files`, built and
    checked at load. A bad file is left out of the net and kept in `errors`
    (file, line, reason); the rest of the net still loads."""
    columns: MofColumns
    default_hardness: float          # % for `*` in a hardness line
    full_gains: Gains                # 100 % hardness (gains.<mof_hardness.full_gains>)
    files: tuple[Path, ...]          # the net's files, in config order
    net: MotionNet
    errors: tuple[MofError, ...]


@dataclass(frozen=True)
class ScriptedModeConfig:
    """A mode that plays keyframe scripts (CyberDog 64, 16, 22): gait id ->
    the scripts played back to back. `progress` is "parts" (each finished
    script adds its share: 25/50/75/100 for four) or "end" (0 until the last
    frame, then 100 after `settle_ms`, e.g. a jump's landing delay)."""
    gaits: dict[int, tuple[str, ...]]
    progress: str
    settle_ms: float
    keeps_target: bool = False    # re-requesting the mode keeps a pending hand-over (SPEC §5.6)


# Command sources in the CyberDog order (SPEC §2.2: motor_ctrl before
# robot_control_cmd); motion goals below both. Script requests carry their
# own priority (scripts.default_priority when they give none).
DEFAULT_PRIORITIES = {"motor_ctrl": 30, "robot_control_cmd": 20, "motion_goal": 10}
PRIORITY_RANGE = (1, 100)
VMAX_RANGE = (0.1, 100.0)   # rad/s: a joint's velocity limit (quadruped and humanoid)
SCRIPT_PROGRESS = ("parts", "end")


@dataclass(frozen=True)
class ScriptsConfig:
    """Keyframe scripts: where they live, how they mirror, who may run them."""
    directories: tuple[Path, ...]
    default_priority: int
    mode: int | None                       # the FSM mode full-body scripts run in
    mirror_pairs: tuple[tuple[str, str], ...]
    mirror_negate: frozenset[str]
    modes: dict[int, ScriptedModeConfig]   # scripted FSM modes (64, 16, 22)


@dataclass(frozen=True)
class RealtimeConfig:
    """How the tick thread asks for real time (controller/service/realtime.py). What
    the system does not permit is skipped with one warning."""
    priority: int = 49           # SCHED_FIFO priority 1-99; 0: the normal scheduler
    lock_memory: bool = True     # mlockall: no page faults on the tick
    timer_slack_ns: int = 1      # prctl timer slack (the kernel's default is 50 us)
    gc_freeze: bool = True       # freeze the start-up heap; no automatic collection


@dataclass(frozen=True)
class SafetyConfig:
    """Faults of the robot side that put the robot in the damper (EDAMP) on
    their own (docs/RELIABILITY.md): the joint_state stream stopping, and a
    joint that stays far from its target."""
    joint_state_timeout_ms: float = 50.0
    tracking_error_rad: float = 0.8     # measured vs commanded position, per joint
    tracking_error_ms: float = 20.0     # for this long without a break
    tracking_min_kp: float = 1.0        # N m/rad: softer joints are compliant by design


@dataclass(frozen=True)
class Config:
    path: Path
    robot: str
    kind: str
    tick_hz: float
    command_timeout_ms: float
    lcm: LcmConfig
    fsm: FsmTable
    legs: list[str]
    joint_names: list[str]
    leg_indices: np.ndarray              # wire indices of the leg joints, in the leg IK's order
    q_min: np.ndarray
    q_max: np.ndarray
    v_max: np.ndarray
    torque_limit: np.ndarray             # N m per joint
    geometry: Geometry | HumanoidGeometry   # the kind's leg geometry
    poses: dict[str, np.ndarray]         # name -> (joints,)
    stand_height: float
    stand_com_x: float
    gains: dict[str, Gains]
    pose_height_range: tuple[float, float]   # mode 21 gait 5 clamps the height into it
    motor_ctrl_mutation_limit: np.ndarray | None = None  # rad per joint; None: no mode 15
    motor_ctrl_limit_margin: float = 0.0
    locomotion: LocomotionConfig | None = None   # quadruped gait generator
    walk: WalkConfig | None = None               # biped walk
    motions: MotionsConfig | None = None         # mode-62 step-list motions
    mof: MofConfig | None = None                 # B-Human .mof motion nets
    sim: dict[str, Any] = field(default_factory=dict)
    # Limbs: joint groups a script can own while the mode drives the others
    # (the humanoid's `group`s, the quadruped's legs).
    limbs: dict[str, tuple[int, ...]] = field(default_factory=dict)
    scripts: ScriptsConfig | None = None
    priorities: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_PRIORITIES))
    realtime: RealtimeConfig = field(default_factory=RealtimeConfig)
    command_queue_capacity: int = 1024   # blocks (SPEC §3); a command beyond it is refused
    safety: SafetyConfig = field(default_factory=SafetyConfig)

    @property
    def num_joints(self) -> int:
        return len(self.joint_names)

    @property
    def dt(self) -> float:
        return 1.0 / self.tick_hz

    @property
    def fold_pose(self) -> np.ndarray:
        return self.poses["fold"]

    @property
    def lie_pose(self) -> np.ndarray:
        """The active lie-down target of mode 7 gait 1 (SPEC §6.5)."""
        return self.poses["lie"]


class _Reader:
    """Typed access to a YAML mapping with errors that name file and key."""

    def __init__(self, path: Path, data: Any, where: str = "") -> None:
        self.path = path
        self.data = data
        self.where = where

    def fail(self, key: str, reason: str) -> ConfigError:
        place = f"{self.where}.{key}" if self.where else key
        return ConfigError(f"{self.path}: {place}: {reason}")

    def sub(self, key: str) -> _Reader:
        value = self.get(key, dict)
        return _Reader(self.path, value, f"{self.where}.{key}" if self.where else key)

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        if not isinstance(self.data, dict) or key not in self.data:
            if default is ...:
                raise self.fail(key, "missing")
            return default
        value = self.data[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            want = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise self.fail(key, f"expected {want}, got {type(value).__name__} {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(key, f"must be finite, got {value}")
        return value

    def number(self, key: str, lo: float, hi: float, default: Any = ...) -> float:
        value = self.get(key, float, default)
        if not lo <= value <= hi:
            raise self.fail(key, f"{value} is outside [{lo}, {hi}]")
        return value

    def vector(self, key: str, length: int, value: Any = ...) -> np.ndarray:
        if value is ...:
            value = self.get(key, list)
        if not isinstance(value, list) or len(value) != length:
            raise self.fail(key, f"expected a list of {length} numbers, got {value!r}")
        for x in value:
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise self.fail(key, f"expected finite numbers, got {x!r}")
        return np.array(value, dtype=float)


def _load_yaml(path: Path) -> Any:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc


def _load_fsm(path: Path) -> FsmTable:
    r = _Reader(path, _load_yaml(path))
    modes = r.get("modes", dict)
    names: dict[int, str] = {}
    for mode, entry in modes.items():
        if not isinstance(mode, int) or not isinstance(entry, dict) \
                or not isinstance(entry.get("name"), str):
            raise r.fail(f"modes.{mode}", "expected `<int>: {name: <string>}` (quote names "
                                          "like \"OFF\" that YAML reads as booleans)")
        names[mode] = str(entry["name"])
    immediate: dict[int, frozenset[int]] = {}
    when_ready: dict[int, frozenset[int]] = {}
    table = r.get("transitions", dict)
    for src, entry in table.items():
        if src not in names:
            raise r.fail(f"transitions.{src}", "not a mode listed under `modes`")
        er = _Reader(path, entry, f"transitions.{src}")
        for key, out in (("immediate", immediate), ("when_ready", when_ready)):
            targets = er.get(key, list, [])
            for dst in targets:
                if dst not in names:
                    raise er.fail(key, f"{dst!r} is not a mode listed under `modes`")
            out[src] = frozenset(targets)
        both = immediate[src] & when_ready[src]
        if both:
            raise er.fail("when_ready", f"modes {sorted(both)} are also listed as immediate")
    return FsmTable(names, immediate, when_ready)


def _check_gains(r: _Reader, kind: str, gains: dict[str, Gains]) -> None:
    for needed in REQUIRED_GAINS[kind]:
        if needed not in gains:
            raise r.sub("gains").fail(needed, "missing")


def _check_poses(pr: _Reader, kind: str, poses: dict[str, np.ndarray], names: list[str],
                 q_min: np.ndarray, q_max: np.ndarray) -> None:
    for needed in REQUIRED_POSES[kind]:
        if needed not in poses:
            raise pr.fail(needed, "missing")
    for pose_name, pose in poses.items():
        outside = (pose < q_min) | (pose > q_max)
        if outside.any():
            bad = [names[i] for i in np.flatnonzero(outside)]
            raise pr.fail(pose_name, f"outside the joint limits at {bad}")


def _height_range(r: _Reader, default: tuple[float, float]) -> tuple[float, float]:
    if "pose_height_range" not in r.data:
        return default
    lo, hi = r.vector("pose_height_range", 2)
    if not 0.02 <= lo < hi <= 3.0:
        raise r.fail("pose_height_range", f"expected 0.02 <= min < max <= 3, got {[lo, hi]}")
    return float(lo), float(hi)


def load_config(path: str | Path | None = None) -> Config:
    """Read and validate a robot config; raise ConfigError with a precise message."""
    path = Path(path) if path is not None else DEFAULT_CONFIG
    r = _Reader(path, _load_yaml(path))
    if not isinstance(r.data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    kind = r.get("kind", str)
    if kind not in ("quadruped", "humanoid"):
        raise r.fail("kind", f"{kind!r} is not supported (only 'quadruped' or 'humanoid')")

    lr = r.sub("lcm")
    ports = {}
    for name in ("command", "response", "joint"):
        ports[name] = int(lr.sub("ports").number(name, 1, 65535))
    channels = {}
    cr = lr.sub("channels")
    for name in ("command", "user_gait_file", "user_gait_result", "response", "motor_ctrl",
                 "motor_ctrl_state", "joint_cmd", "joint_state", "status", "global_to_robot",
                 "motion_goal", "motion_event"):
        channels[name] = cr.get(name, str)
    for name in ("script_request", "tick_trace"):   # motiond's own, added later: optional
        channels[name] = cr.get(name, str, name)
    namespace = lr.get("namespace", str, "")
    try:
        check_namespace(namespace)
    except ConfigError as exc:
        raise lr.fail("namespace", str(exc).removeprefix("namespace ")) from None
    lcm_cfg = LcmConfig(
        lan=lr.get("lan", bool, False),
        group=lr.get("group", str),
        ports=ports,
        names=channels,
        status_hz=lr.number("status_hz", 0.1, 100.0, 10.0),
        namespace=namespace,
    )

    fsm_path = path.parent / r.get("fsm", str)
    if not fsm_path.is_file():
        raise r.fail("fsm", f"{fsm_path} is not a file (the path is relative to this config)")
    fsm = _load_fsm(fsm_path)
    body = _quadruped(r, path) if kind == "quadruped" else _humanoid(r, path)
    scripts = _scripts(r, path, body["joint_names"], fsm) if "scripts" in r.data else None
    return Config(
        path=path,
        robot=r.get("robot", str),
        kind=kind,
        tick_hz=r.number("tick_hz", 50.0, 2000.0),
        command_timeout_ms=r.number("command_timeout_ms", 10.0, 10000.0),
        command_queue_capacity=int(r.number("command_queue_capacity", 2, 32767, 1024)),
        safety=_safety(r),
        lcm=lcm_cfg,
        fsm=fsm,
        motions=_motions(r, path) if "motions" in r.data else None,
        sim=r.get("sim", dict, {}),
        scripts=scripts,
        priorities=_priorities(r),
        realtime=_realtime(r),
        **body,
    )


def _realtime(r: _Reader) -> RealtimeConfig:
    if "realtime" not in r.data:
        return RealtimeConfig()
    rr = r.sub("realtime")
    default = RealtimeConfig()
    return RealtimeConfig(
        priority=int(rr.number("priority", 0, 99, default.priority)),
        lock_memory=rr.get("lock_memory", bool, default.lock_memory),
        timer_slack_ns=int(rr.number("timer_slack_ns", 1, 1_000_000, default.timer_slack_ns)),
        gc_freeze=rr.get("gc_freeze", bool, default.gc_freeze),
    )


def _safety(r: _Reader) -> SafetyConfig:
    if "safety" not in r.data:
        return SafetyConfig()
    sr = r.sub("safety")
    d = SafetyConfig()
    return SafetyConfig(
        joint_state_timeout_ms=sr.number("joint_state_timeout_ms", 4.0, 5000.0,
                                         d.joint_state_timeout_ms),
        tracking_error_rad=sr.number("tracking_error_rad", 0.05, 6.3, d.tracking_error_rad),
        tracking_error_ms=sr.number("tracking_error_ms", 0.0, 1000.0, d.tracking_error_ms),
        tracking_min_kp=sr.number("tracking_min_kp", 0.0, 10000.0, d.tracking_min_kp),
    )


def _priorities(r: _Reader) -> dict[str, int]:
    priorities = dict(DEFAULT_PRIORITIES)
    if "priorities" in r.data:
        pr = r.sub("priorities")
        for source in pr.data:
            if source not in DEFAULT_PRIORITIES:
                raise pr.fail(str(source), f"unknown command source (known: "
                                           f"{', '.join(DEFAULT_PRIORITIES)})")
            priorities[source] = int(pr.number(source, *PRIORITY_RANGE))
    return priorities


def _scripts(r: _Reader, path: Path, names: list[str], fsm: FsmTable) -> ScriptsConfig:
    sr = r.sub("scripts")
    directories = []
    for i, d in enumerate(sr.get("directories", list)):
        directory = (path.parent / str(d)).resolve()
        if not isinstance(d, str) or not directory.is_dir():
            raise sr.fail(f"directories[{i}]", f"{directory} is not a directory")
        directories.append(directory)
    mode = sr.get("mode", int, None)
    if mode is not None and mode not in fsm.names:
        raise sr.fail("mode", f"{mode} is not a mode of {path.parent / r.get('fsm', str)}")
    pairs: list[tuple[str, str]] = []
    negate: frozenset[str] = frozenset()
    if "mirror" in sr.data:
        mr = sr.sub("mirror")
        left, right = mr.get("prefixes", list, ["l_", "r_"])
        pairs = [(n, right + n[len(left):]) for n in names
                 if n.startswith(left) and right + n[len(left):] in names]
        for extra in mr.get("pairs", list, []):
            if not (isinstance(extra, list) and len(extra) == 2):
                raise mr.fail("pairs", f"expected [joint, joint] pairs, got {extra!r}")
            pairs.append((str(extra[0]), str(extra[1])))
        negate = frozenset(str(n) for n in mr.get("negate", list, []))
        unknown = sorted({n for p in pairs for n in p} - set(names) | negate - set(names))
        if unknown:
            raise mr.fail("negate" if set(unknown) & negate else "pairs",
                          f"unknown joints {unknown}")
    modes: dict[int, ScriptedModeConfig] = {}
    if "modes" in sr.data:
        mr = sr.sub("modes")
        for m in mr.data:
            if m not in fsm.names:
                raise mr.fail(str(m), "not a mode of the FSM table")
            er = mr.sub(m)
            gaits = {}
            for gait, chain in er.get("gaits", dict).items():
                chain = [chain] if isinstance(chain, str) else chain
                if isinstance(gait, bool) or not isinstance(gait, int) or not isinstance(chain, list) \
                        or not chain or not all(isinstance(c, str) for c in chain):
                    raise er.fail(f"gaits.{gait}", "expected `<gait id>: <script>` or a list of scripts")
                gaits[gait] = tuple(chain)
            progress = er.get("progress", str, "end")
            if progress not in SCRIPT_PROGRESS:
                raise er.fail("progress", f"{progress!r} is not one of {SCRIPT_PROGRESS}")
            modes[int(m)] = ScriptedModeConfig(gaits, progress, er.number("settle_ms", 0.0, 5000.0, 0.0),
                                               er.get("keeps_target", bool, False))
    return ScriptsConfig(
        directories=tuple(directories),
        default_priority=int(sr.number("default_priority", *PRIORITY_RANGE, 15)),
        mode=mode, mirror_pairs=tuple(pairs), mirror_negate=negate, modes=modes)


def _motions(r: _Reader, path: Path) -> MotionsConfig:
    mr = r.sub("motions")
    directory = _directory(mr, path)
    files: dict[int, str] = {}
    for motion_id, name in mr.get("ids", dict).items():
        if isinstance(motion_id, bool) or not isinstance(motion_id, int) \
                or not 0 <= motion_id <= 127 or not isinstance(name, str):
            raise mr.fail(f"ids.{motion_id}", "expected `<id 0..127>: <file name>`")
        files[motion_id] = _file_name(mr, f"ids.{motion_id}", name)
    return MotionsConfig(directory, files)


def _directory(r: _Reader, path: Path) -> Path:
    """The section's `directory`, relative to the config file; it must exist."""
    directory = (path.parent / r.get("directory", str)).resolve()
    if not directory.is_dir():
        raise r.fail("directory", f"{directory} is not a directory")
    return directory


def _file_name(r: _Reader, key: str, name: Any, suffix: str = "") -> str:
    """A file of the section's `directory`: a bare name (no path, not hidden)."""
    if not isinstance(name, str) or not name.endswith(suffix) or "/" in name \
            or "\\" in name or name.startswith("."):
        raise r.fail(key, f"{name!r}: expected a bare {suffix or 'file'} name in `directory`")
    return name


def _indices(values: Any) -> np.ndarray:
    """A read-only index array: every user of the config shares it."""
    out = np.array(values, dtype=np.intp)
    out.flags.writeable = False
    return out


def _quadruped(r: _Reader, path: Path) -> dict[str, Any]:
    """The quadruped schema (config/cyberdog2.yaml): per-leg limits, one
    per-joint-type triple for velocity limits, gains and poses, tiled over
    the legs here so that everything downstream is per joint."""
    legs = r.get("legs", list)
    leg_joints = r.get("leg_joints", list)
    if len(leg_joints) != 3:
        raise r.fail("leg_joints", "a quadruped leg has 3 joints: abad, hip, knee")
    names = [f"{leg}_{j}" for leg in legs for j in leg_joints]
    lim = r.sub("joint_limits")
    q_min, q_max = [], []
    for leg in legs:
        rows = lim.get(leg, list)
        if len(rows) != 3:
            raise lim.fail(leg, "expected 3 [min, max] pairs")
        for j, row in enumerate(rows):
            lo, hi = lim.vector(f"{leg}[{j}]", 2, row)
            if not lo < hi:
                raise lim.fail(f"{leg}[{j}]", f"min {lo} is not below max {hi}")
            q_min.append(lo)
            q_max.append(hi)

    def tile(per_type: np.ndarray) -> np.ndarray:
        return np.tile(per_type, len(legs))

    # The kernel's per-tick step limit is this velocity x one tick, and a
    # limit of 0 (or below) would switch the step limit off: refuse it.
    v_max = r.vector("joint_velocity_limit", 3)
    if not ((v_max >= VMAX_RANGE[0]) & (v_max <= VMAX_RANGE[1])).all():
        raise r.fail("joint_velocity_limit", f"each must be in [{VMAX_RANGE[0]:g}, "
                                             f"{VMAX_RANGE[1]:g}] rad/s, got {v_max.tolist()}")

    gr = r.sub("geometry")
    hips = gr.sub("hip_offsets")
    hip_offsets = np.array([hips.vector(leg, 3) for leg in legs])
    geometry = Geometry(
        hip_offsets=hip_offsets,
        side_sign=np.where(hip_offsets[:, 1] > 0, 1.0, -1.0),
        abad_link=gr.number("abad_link", 0.0, 1.0),
        hip_link=gr.number("hip_link", 0.01, 2.0),
        knee_link=gr.number("knee_link", 0.01, 2.0),
        foot_radius=gr.number("foot_radius", 0.0, 0.2),
        mass=gr.number("mass", 0.1, 500.0),
    )

    pr = r.sub("poses")
    lie_r = pr.sub("lie")
    poses = {"fold": tile(pr.vector("fold", 3)),
             "lie": np.concatenate([lie_r.vector(leg, 3) for leg in legs])}
    q_min_a, q_max_a = np.array(q_min), np.array(q_max)
    _check_poses(pr, "quadruped", poses, names, q_min_a, q_max_a)

    gains = {}
    g = r.sub("gains")
    for name in g.data:
        e = g.sub(name)
        kp, kd = e.vector("kp", 3), e.vector("kd", 3)
        if (kp < 0).any() or (kd < 0).any():
            raise e.fail("kp", "gains must not be negative")
        gains[name] = Gains(tile(kp), tile(kd))
    _check_gains(r, "quadruped", gains)

    mr = r.sub("motor_ctrl")
    return {
        "limbs": {leg: tuple(range(3 * i, 3 * i + 3)) for i, leg in enumerate(legs)},
        "legs": legs,
        "joint_names": names,
        "leg_indices": _indices(range(len(names))),   # every joint is a leg joint
        "q_min": q_min_a,
        "q_max": q_max_a,
        "v_max": tile(v_max),
        "torque_limit": np.full(len(names), r.number("torque_limit", 0.1, 1000.0)),
        "geometry": geometry,
        "poses": poses,
        "stand_height": pr.number("stand_height", 0.05, 1.0),
        "stand_com_x": pr.number("stand_com_x", -0.2, 0.2),
        "gains": gains,
        "pose_height_range": _height_range(r, (0.10, 0.30)),   # SPEC §6.1
        "motor_ctrl_mutation_limit": tile(np.radians(mr.vector("mutation_limit_deg", 3))),
        "motor_ctrl_limit_margin": mr.number("limit_margin", 0.0, 0.5),
        "locomotion": _locomotion(r, path) if "locomotion" in r.data else None,
    }


def _humanoid(r: _Reader, path: Path) -> dict[str, Any]:
    """The humanoid schema (documented at the top of config/humanoid20.yaml;
    config/nao22.yaml's header lists what it may add): one entry per joint,
    torque limits and gains per joint group, named poses per joint name. The
    legs are found by group wherever they are in wire order; a walk and .mof
    motion nets are optional."""
    names, groups, q_min_a, q_max_a, v_max = _humanoid_joints(r, path)
    members = {g: [i for i, x in enumerate(groups) if x == g] for g in dict.fromkeys(groups)}
    legs = _leg_indices(r, members)

    tr = r.sub("torque_limit")
    torque = np.zeros(len(names))
    for group, idx in members.items():
        torque[idx] = tr.number(group, 0.1, 1000.0)

    try:
        geometry = HumanoidGeometry.from_mapping(r.get("geometry", dict))
    except HumanoidConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc

    poses = _humanoid_poses(r, names, q_min_a, q_max_a)
    gains = _group_gains(r, members, len(names))
    stand_height = r.number("stand_height", 0.05, 3.0)
    walk = _optional_walk(r, path, geometry, stand_height, gains)
    return {
        "limbs": {g: tuple(idx) for g, idx in members.items()},
        "legs": list(LEG_SIDES),
        "joint_names": names,
        "leg_indices": legs,
        "q_min": q_min_a,
        "q_max": q_max_a,
        "v_max": v_max,
        "torque_limit": torque,
        "geometry": geometry,
        "poses": poses,
        "stand_height": stand_height,
        "stand_com_x": 0.0,
        "gains": gains,
        "pose_height_range": _height_range(r, (0.8 * stand_height, stand_height)),
        "walk": walk,
        "mof": _mof(r, path, names, (q_min_a, q_max_a, v_max), gains),
    }


def _humanoid_joints(r: _Reader, path: Path) -> tuple[list[str], list[str], np.ndarray,
                                                      np.ndarray, np.ndarray]:
    """`joints`: names, groups, and min, max, vmax per joint, in wire order."""
    names: list[str] = []
    groups: list[str] = []
    rows: list[tuple[float, float, float]] = []
    for i, entry in enumerate(r.get("joints", list)):
        if not isinstance(entry, dict):
            raise r.fail(f"joints[{i}]", "expected {name, group, min, max, vmax}")
        jr = _Reader(path, entry, f"joints[{i}]")
        name = jr.get("name", str)
        if name in names:
            raise jr.fail("name", f"{name!r} is listed twice")
        lo, hi = jr.number("min", -7.0, 7.0), jr.number("max", -7.0, 7.0)
        if not lo < hi:
            raise jr.fail("max", f"min {lo} is not below max {hi}")
        names.append(name)
        groups.append(jr.get("group", str))
        rows.append((lo, hi, jr.number("vmax", 0.1, 100.0)))   # VMAX_RANGE
    q_min, q_max, v_max = np.array(rows, dtype=float).reshape(-1, 3).T.copy()
    return names, groups, q_min, q_max, v_max


def _leg_indices(r: _Reader, members: dict[str, list[int]]) -> np.ndarray:
    """The leg joints, found by group wherever they are in wire order: the
    right_leg's then the left_leg's, each group in config order, which must be
    the leg IK's (LEG_JOINTS)."""
    legs: list[int] = []
    for group in HUMANOID_LEG_GROUPS:
        idx = members.get(group, [])
        if len(idx) != len(LEG_JOINTS):
            raise r.fail("joints", f"group {group} has {len(idx)} joints; a leg has "
                                   f"{len(LEG_JOINTS)}: {' '.join(LEG_JOINTS)}, in that order")
        legs += idx
    return _indices(legs)


def _humanoid_poses(r: _Reader, names: list[str], q_min: np.ndarray,
                    q_max: np.ndarray) -> dict[str, np.ndarray]:
    """`poses`: every joint by name, inside its limits."""
    pr = r.sub("poses")
    poses = {}
    for pose_name in pr.data:
        pe = pr.sub(pose_name)
        unknown = sorted(set(pe.data) - set(names))
        if unknown:
            raise pr.fail(pose_name, f"unknown joints {unknown}")
        poses[str(pose_name)] = np.array([pe.number(n, -7.0, 7.0) for n in names])
    _check_poses(pr, "humanoid", poses, names, q_min, q_max)
    return poses


def _group_gains(r: _Reader, members: dict[str, list[int]], n: int) -> dict[str, Gains]:
    """`gains`: per set and joint group, kp and kd in the group's joint order."""
    gains = {}
    g = r.sub("gains")
    for gain_name in g.data:
        e = g.sub(gain_name)
        kp, kd = np.zeros(n), np.zeros(n)
        for group, idx in members.items():
            ge = e.sub(group)
            kp[idx] = ge.vector("kp", len(idx))
            kd[idx] = ge.vector("kd", len(idx))
            if (kp[idx] < 0).any() or (kd[idx] < 0).any():
                raise ge.fail("kp", "gains must not be negative")
        gains[str(gain_name)] = Gains(kp, kd)
    _check_gains(r, "humanoid", gains)
    return gains


def _optional_walk(r: _Reader, path: Path, geometry: HumanoidGeometry, stand_height: float,
                   gains: dict[str, Gains]) -> WalkConfig | None:
    """A biped walks (mode 11) with a `locomotion` section and gains.walk;
    a robot without a walk has neither."""
    if "locomotion" not in r.data:
        if "walk" in gains:
            raise r.sub("gains").fail("walk", "set, but there is no `locomotion` section "
                                              "(a robot without a walk has neither)")
        return None
    if "walk" not in gains:
        raise r.sub("gains").fail("walk", "missing (the `locomotion` walk needs it)")
    return _walk(r, path, geometry, stand_height)


def _mof(r: _Reader, path: Path, names: list[str],
         limits: tuple[np.ndarray, np.ndarray, np.ndarray],
         gains: dict[str, Gains]) -> MofConfig | None:
    """The .mof binding (`mof_columns`, `mof_hardness`) and the net of `mof`
    (keys documented at the top of config/nao22.yaml); None without
    `mof_columns`. A bad .mof file is left out and kept in `errors`."""
    if "mof_columns" not in r.data:
        for key in ("mof_hardness", "mof"):
            if key in r.data:
                raise r.fail(key, "set, but there is no `mof_columns` (the .mof binding)")
        return None
    hr = r.sub("mof_hardness")
    default = hr.number("default", 0.0, 100.0)
    gain_set = hr.get("full_gains", str)
    if gain_set not in gains:
        raise hr.fail("full_gains", f"{gain_set!r} is not a gain set under `gains`")
    full = gains[gain_set]
    mapping = r.get("mof_columns", dict)
    _check_mof_header(r, mapping)
    try:
        columns = mof_columns(mapping, names, *limits, full.kp, full.kd, default, str(path))
    except MofError as exc:   # it names the file and the key, as a ConfigError does
        raise ConfigError(str(exc)) from exc
    files = _mof_files(r, path) if "mof" in r.data else ()
    errors: list[MofError] = []
    net = build_net(files, columns, errors)
    return MofConfig(columns, default, full, files, net, tuple(errors))


def _check_mof_header(r: _Reader, mapping: dict[Any, Any]) -> None:
    """`mof_columns` binds every column of the .mof header, in file order:
    the mapping's order is the order a joint line's angles are read in."""
    columns = [str(c) for c in mapping]
    missing = [c for c in MOF_HEADER if c not in columns]
    unknown = [c for c in columns if c not in MOF_HEADER]
    if missing or unknown:
        raise r.fail("mof_columns", f"expected the {len(MOF_HEADER)} .mof columns; missing "
                                    f"{missing}, unknown {unknown}")
    if tuple(columns) != MOF_HEADER:
        raise r.fail("mof_columns", f"columns out of file order: expected "
                                    f"{' '.join(MOF_HEADER)}, got {' '.join(columns)}")


def _mof_files(r: _Reader, path: Path) -> tuple[Path, ...]:
    """`mof`: the net's .mof files in `directory` (relative to the config)."""
    mr = r.sub("mof")
    directory = _directory(mr, path)
    names = mr.get("files", list)
    if not names:
        raise mr.fail("files", "expected a list of .mof file names")
    for i, name in enumerate(names):
        _file_name(mr, f"files[{i}]", name, ".mof")
        if name in names[:i]:
            raise mr.fail(f"files[{i}]", f"{name!r} is listed twice")
    return tuple(directory / name for name in names)


def _walk(r: _Reader, path: Path, geometry: HumanoidGeometry, stand_height: float) -> WalkConfig:
    lr = r.sub("locomotion")
    walk_path = (path.parent / lr.get("walk", str)).resolve()
    try:
        params = load_walk_params(walk_path)
    except HumanoidConfigError as exc:
        raise ConfigError(f"{path}: locomotion.walk: {exc}") from exc
    # The walk's rest pose must be the stand pose, or every hand-over
    # between standing and walking would jump.
    if abs(params.trunk_height - stand_height) > 1e-9:
        raise lr.fail("walk", f"{walk_path.name}: trunk_height {params.trunk_height} differs "
                              f"from stand_height {stand_height}")
    hips = geometry.hip_offset
    spacing = hips["left"][1] - hips["right"][1]
    if abs(params.foot_distance - spacing) > 1e-9:
        raise lr.fail("walk", f"{walk_path.name}: foot_distance {params.foot_distance} differs "
                              f"from the hip spacing {spacing}")
    walk_gaits = lr.get("walk_gaits", list)
    for gait in walk_gaits:
        if isinstance(gait, bool) or not isinstance(gait, int) or not 2 <= gait <= 127:
            raise lr.fail("walk_gaits", f"expected gait ids in [2, 127] (1 stands), got {gait!r}")
    default = int(lr.number("default_gait", 2, 127))
    if default not in walk_gaits:
        raise lr.fail("default_gait", f"{default} is not one of walk_gaits {walk_gaits}")
    return WalkConfig(path=walk_path, params=params, walk_gaits=frozenset(walk_gaits),
                      default_gait=default, goal_profile=_goal_profile(lr))


def _locomotion(r: _Reader, path: Path) -> LocomotionConfig:
    lr = r.sub("locomotion")
    lo, hi = lr.vector("height_range", 2)
    if not 0.05 <= lo < hi <= 2.0:
        raise lr.fail("height_range", f"expected 0.05 <= min < max <= 2, got {[lo, hi]}")
    body = lr.number("body_height", lo, hi)
    gaits_dir = (path.parent / lr.get("gaits", str)).resolve()
    if not gaits_dir.is_dir():
        raise lr.fail("gaits", f"{gaits_dir} is not a directory")
    return LocomotionConfig(
        gaits_dir=gaits_dir,
        body_height=body,
        height_range=(float(lo), float(hi)),
        vertical_leg_height=lr.number("vertical_leg_height", lo, hi, lo),
        pitch_limit=lr.number("pitch_limit", 0.0, 0.5),
        leave_speed=lr.number("leave_speed", 0.0, 1.0),
        leave_gait=int(lr.number("leave_gait", 1, 127)),
        default_gait=int(lr.number("default_gait", 1, 127)),
        com_x=lr.number("com_x", -0.2, 0.2, 0.0),
        half_stride=_half_stride(lr),
        goal_profile=_goal_profile(lr),
    )


def _goal_profile(lr: _Reader) -> tuple[float, float, float]:
    acc, speed, rot = lr.vector("goal_profile", 3)
    if not (0 < acc <= constants.LIMIT_ACC and 0 < speed <= constants.LIMIT_SPEED
            and 0 < rot <= constants.LIMIT_ROTATION):
        raise lr.fail("goal_profile", f"expected max_acc (0, {constants.LIMIT_ACC}] m/s^2, "
                                      f"max_speed (0, {constants.LIMIT_SPEED}] m/s, max_rotation "
                                      f"(0, {constants.LIMIT_ROTATION}] rad/s, got {[acc, speed, rot]}")
    return float(acc), float(speed), float(rot)


def _half_stride(lr: _Reader) -> tuple[float, float]:
    rx, ry = lr.vector("half_stride", 2)
    if not (0.005 <= rx <= 1.0 and 0.005 <= ry <= 1.0):
        raise lr.fail("half_stride", f"expected two lengths in [0.005, 1] m, got {[rx, ry]}")
    return float(rx), float(ry)
