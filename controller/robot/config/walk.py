"""A biped's walk (mode 11 on a humanoid): the `locomotion` section and the
walk file it names (gaits/humanoid/*.yaml), read into WalkParams for the
quintic walk (controller/motion/biped_walk.py)."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from controller.robot.config.body import Gains
from controller.robot.config.locomotion import goal_profile
from controller.robot.config.reader import ConfigError, Reader, parse_yaml
from controller.robot.humanoid_kinematics import HumanoidConfigError, HumanoidGeometry

AXES = ("x", "y", "yaw")   # the walk's command axes: vx, vy, yaw rate
Vec3 = tuple[float, float, float]


def _number(value: Any, place: str, lo: float, hi: float) -> float:
    """`value` as a float in [lo, hi], or a HumanoidConfigError naming `place`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or not lo <= value <= hi:
        raise HumanoidConfigError(f"{place}: expected a number in [{lo}, {hi}], got {value!r}")
    return float(value)


@dataclass(frozen=True)
class WalkBalance:
    """The walk's feedback from the IMU (controller/motion/biped_balance.py);
    all zero is the open-loop walk."""
    tilt_gain: float = 0.0            # share of the torso's tilt error the swing foot makes up
    capture_gain: tuple[float, float] = (0.0, 0.0)   # x, y: share of the capture-point error stepped
    max_shift: float = 0.0            # m: the largest landing correction
    ankle_gyro: tuple[float, float] = (0.0, 0.0)     # pitch, roll: support ankle rad per rad/s

    @classmethod
    def from_mapping(cls, data: Any, where: str) -> WalkBalance:
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise HumanoidConfigError(f"{where}: balance: expected a mapping")
        unknown = set(data) - {"tilt_gain", "capture_gain", "max_shift", "ankle_gyro"}
        if unknown:
            raise HumanoidConfigError(f"{where}: balance: unknown keys {sorted(unknown)}")

        def number(value: Any, key: str, lo: float, hi: float) -> float:
            return _number(value, f"{where}: balance.{key}", lo, hi)

        def pair(key: str, lo: float, hi: float) -> tuple[float, float]:
            value = data.get(key, [0.0, 0.0])
            if not isinstance(value, list) or len(value) != 2:
                raise HumanoidConfigError(f"{where}: balance.{key}: expected [a, b], got {value!r}")
            return number(value[0], key, lo, hi), number(value[1], key, lo, hi)

        return cls(tilt_gain=number(data.get("tilt_gain", 0.0), "tilt_gain", 0.0, 1.0),
                   capture_gain=pair("capture_gain", 0.0, 2.0),
                   max_shift=number(data.get("max_shift", 0.0), "max_shift", 0.0, 0.2),
                   ankle_gyro=pair("ankle_gyro", -1.0, 1.0))


@dataclass(frozen=True)
class WalkParams:
    step_frequency: float        # single steps per second (a gait cycle is two steps)
    double_support_ratio: float  # share of each step with both feet down
    foot_rise: float             # swing foot apex above the ground (m)
    foot_distance: float         # nominal lateral distance between the feet (m)
    trunk_height: float          # torso origin above the ground (m)
    trunk_pitch: float           # forward lean while walking (rad, + = forward)
    trunk_swing: float           # sideways sway of the trunk toward the support foot (m)
    velocity_min: Vec3           # window per axis: vx (m/s), vy (m/s), yaw rate (rad/s)
    velocity_max: Vec3
    acceleration_max: Vec3       # per axis, applied once per step (m/s^2, rad/s^2)
    balance: WalkBalance = WalkBalance()   # feedback from the IMU; none by default

    @property
    def step_duration(self) -> float:
        return 1.0 / self.step_frequency

    @classmethod
    def from_mapping(cls, data: Any, where: str = "walk") -> WalkParams:
        """Build from a walk file's mapping; a HumanoidConfigError names the
        key and the reason."""
        if not isinstance(data, Mapping):
            raise HumanoidConfigError(f"{where}: expected a mapping at the top level")

        def number(value: Any, key: str, lo: float, hi: float) -> float:
            return _number(value, f"{where}: {key}", lo, hi)

        def section(key: str) -> Mapping[str, Any]:
            value = data.get(key)
            if not isinstance(value, Mapping):
                raise HumanoidConfigError(f"{where}: {key}: expected a mapping with keys {AXES}")
            return value

        vel, acc = section("velocity_limits"), section("acceleration_limits")
        lo, hi, amax = [], [], []
        for axis in AXES:
            window = vel.get(axis)
            if not isinstance(window, list) or len(window) != 2:
                raise HumanoidConfigError(f"{where}: velocity_limits.{axis}: expected [min, max], "
                                 f"got {window!r}")
            a = number(window[0], f"velocity_limits.{axis}[0]", -10.0, 0.0)
            b = number(window[1], f"velocity_limits.{axis}[1]", 0.0, 10.0)
            lo.append(a)
            hi.append(b)
            amax.append(number(acc.get(axis), f"acceleration_limits.{axis}", 1e-3, 100.0))
        return cls(
            step_frequency=number(data.get("step_frequency"), "step_frequency", 0.5, 10.0),
            double_support_ratio=number(data.get("double_support_ratio"),
                                        "double_support_ratio", 0.0, 0.8),
            foot_rise=number(data.get("foot_rise"), "foot_rise", 0.001, 0.3),
            foot_distance=number(data.get("foot_distance"), "foot_distance", 0.01, 1.0),
            trunk_height=number(data.get("trunk_height"), "trunk_height", 0.05, 3.0),
            trunk_pitch=number(data.get("trunk_pitch"), "trunk_pitch", -0.5, 0.5),
            trunk_swing=number(data.get("trunk_swing"), "trunk_swing", 0.0, 0.2),
            velocity_min=(lo[0], lo[1], lo[2]),
            velocity_max=(hi[0], hi[1], hi[2]),
            acceleration_max=(amax[0], amax[1], amax[2]),
            balance=WalkBalance.from_mapping(data.get("balance"), where),
        )


def load_walk_params(path: str | Path) -> WalkParams:
    """Read and validate a walk file (gaits/humanoid/*.yaml); a
    HumanoidConfigError names the file, the key and the reason."""
    path = Path(path)
    try:
        data = parse_yaml(path.read_text())
    except OSError as exc:
        raise HumanoidConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise HumanoidConfigError(f"{path}: not valid YAML: {exc}") from exc
    return WalkParams.from_mapping(data, str(path))


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


def load_optional_walk(r: Reader, path: Path, geometry: HumanoidGeometry, stand_height: float,
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
    return load_walk(r, path, geometry, stand_height)


def load_walk(r: Reader, path: Path, geometry: HumanoidGeometry, stand_height: float) -> WalkConfig:
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
                      default_gait=default, goal_profile=goal_profile(lr))
