"""Load and validate a robot configuration (config/<robot>.yaml).

Every robot number lives in the config; this module turns the YAML into typed,
checked values and fails with a message naming the file, the key and the
reason. Nothing here reads the network or the clock.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

CONFIG_DIR = Path(__file__).resolve().parent.parent / "config"
DEFAULT_CONFIG = CONFIG_DIR / "cyberdog2.yaml"


class ConfigError(ValueError):
    """A configuration file is missing, unreadable or invalid."""


@dataclass(frozen=True)
class Gains:
    kp: np.ndarray  # per joint type (abad, hip, knee)
    kd: np.ndarray


@dataclass(frozen=True)
class LcmConfig:
    lan: bool
    group: str
    ports: dict[str, int]
    channels: dict[str, str]
    status_hz: float

    def url(self, port_name: str) -> str:
        ttl = 1 if self.lan else 0
        return f"udpm://{self.group}:{self.ports[port_name]}?ttl={ttl}"


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
    goal_profile: tuple[float, float, float] = (0.5, 0.3, 0.5)  # m/s^2, m/s, rad/s


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
    q_min: np.ndarray
    q_max: np.ndarray
    v_max: np.ndarray
    torque_limit: float
    geometry: Geometry
    fold_pose: np.ndarray    # (joints,)
    lie_pose: np.ndarray     # (joints,)
    stand_height: float
    stand_com_x: float
    gains: dict[str, Gains]
    motor_ctrl_mutation_limit: np.ndarray  # rad per joint type
    motor_ctrl_limit_margin: float
    locomotion: LocomotionConfig | None = None
    sim: dict[str, Any] = field(default_factory=dict)

    @property
    def num_joints(self) -> int:
        return len(self.joint_names)

    @property
    def dt(self) -> float:
        return 1.0 / self.tick_hz

    def per_joint(self, per_type: np.ndarray) -> np.ndarray:
        """Tile a per-joint-type vector (abad, hip, knee) over every leg."""
        return np.tile(np.asarray(per_type, dtype=float), len(self.legs))


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


def _gains(r: _Reader) -> dict[str, Gains]:
    out = {}
    g = r.sub("gains")
    for name in g.data:
        e = g.sub(name)
        kp, kd = e.vector("kp", 3), e.vector("kd", 3)
        if (kp < 0).any() or (kd < 0).any():
            raise e.fail("kp", "gains must not be negative")
        out[name] = Gains(kp, kd)
    for needed in ("pose", "pose_swing_compliant", "recovery", "lie_down", "damper",
                   "motor_ctrl_lost", "posture", "stance", "swing"):
        if needed not in out:
            raise g.fail(needed, "missing")
    return out


def load_config(path: str | Path | None = None) -> Config:
    """Read and validate a robot config; raise ConfigError with a precise message."""
    path = Path(path) if path is not None else DEFAULT_CONFIG
    r = _Reader(path, _load_yaml(path))
    if not isinstance(r.data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    kind = r.get("kind", str)
    if kind != "quadruped":
        raise r.fail("kind", f"{kind!r} is not supported yet (only 'quadruped')")

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
    lcm_cfg = LcmConfig(
        lan=lr.get("lan", bool, False),
        group=lr.get("group", str),
        ports=ports,
        channels=channels,
        status_hz=lr.number("status_hz", 0.1, 100.0, 10.0),
    )

    fsm_path = path.parent / r.get("fsm", str)
    fsm = _load_fsm(fsm_path)

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
    fold = np.tile(pr.vector("fold", 3), len(legs))
    lie_r = pr.sub("lie")
    lie = np.concatenate([lie_r.vector(leg, 3) for leg in legs])
    q_min_a, q_max_a = np.array(q_min), np.array(q_max)
    for pose_name, pose in (("fold", fold), ("lie", lie)):
        outside = (pose < q_min_a) | (pose > q_max_a)
        if outside.any():
            bad = [names[i] for i in np.flatnonzero(outside)]
            raise pr.fail(pose_name, f"outside the joint limits at {bad}")

    mr = r.sub("motor_ctrl")
    return Config(
        path=path,
        robot=r.get("robot", str),
        kind=kind,
        tick_hz=r.number("tick_hz", 50.0, 2000.0),
        command_timeout_ms=r.number("command_timeout_ms", 10.0, 10000.0),
        lcm=lcm_cfg,
        fsm=fsm,
        legs=legs,
        joint_names=names,
        q_min=q_min_a,
        q_max=q_max_a,
        v_max=np.tile(r.vector("joint_velocity_limit", 3), len(legs)),
        torque_limit=r.number("torque_limit", 0.1, 1000.0),
        geometry=geometry,
        fold_pose=fold,
        lie_pose=lie,
        stand_height=pr.number("stand_height", 0.05, 1.0),
        stand_com_x=pr.number("stand_com_x", -0.2, 0.2),
        gains=_gains(r),
        motor_ctrl_mutation_limit=np.radians(mr.vector("mutation_limit_deg", 3)),
        motor_ctrl_limit_margin=mr.number("limit_margin", 0.0, 0.5),
        locomotion=_locomotion(r, path) if "locomotion" in r.data else None,
        sim=r.get("sim", dict, {}),
    )


def _locomotion(r: _Reader, path: Path) -> LocomotionConfig:
    lr = r.sub("locomotion")
    lo, hi = lr.vector("height_range", 2)
    if not 0.05 <= lo < hi <= 2.0:
        raise lr.fail("height_range", f"expected 0.05 <= min < max <= 2, got {[lo, hi]}")
    body = lr.number("body_height", lo, hi)
    return LocomotionConfig(
        gaits_dir=(path.parent / lr.get("gaits", str)).resolve(),
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
    if not (0 < acc <= 5.0 and 0 < speed <= 2.0 and 0 < rot <= 4.0):
        raise lr.fail("goal_profile", "expected max_acc (0, 5] m/s^2, max_speed (0, 2] m/s, "
                                      f"max_rotation (0, 4] rad/s, got {[acc, speed, rot]}")
    return float(acc), float(speed), float(rot)


def _half_stride(lr: _Reader) -> tuple[float, float]:
    rx, ry = lr.vector("half_stride", 2)
    if not (0.005 <= rx <= 1.0 and 0.005 <= ry <= 1.0):
        raise lr.fail("half_stride", f"expected two lengths in [0.005, 1] m, got {[rx, ry]}")
    return float(rx), float(ry)
