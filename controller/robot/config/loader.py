"""The robot config as one typed value (Config) and the loader that reads,
checks and assembles it from the section modules beside this one."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from controller.robot.config.balance import BalanceConfig, load_balance
from controller.robot.config.body import Gains
from controller.robot.config.bridge import BridgeConfig, load_bridge
from controller.robot.config.damping import load_joint_damping
from controller.robot.config.estimator import EstimatorConfig, load_estimator
from controller.robot.config.fall import FallConfig
from controller.robot.config.fsm import FsmTable
from controller.robot.config.humanoid import load_humanoid
from controller.robot.config.joint_map import JointMap, load_joint_map
from controller.robot.config.lcm import LcmConfig, load_lcm
from controller.robot.config.locomotion import LocomotionConfig
from controller.robot.config.mof import MofConfig
from controller.robot.config.motions import MotionsConfig, load_motions
from controller.robot.config.priorities import DEFAULT_PRIORITIES, load_priorities
from controller.robot.config.quadruped import Geometry, load_quadruped
from controller.robot.config.reader import ConfigError, Reader, load_config_data
from controller.robot.config.realtime import RealtimeConfig, load_realtime
from controller.robot.config.rl import RlResetConfig, load_rl_reset
from controller.robot.config.safety import SafetyConfig, load_safety
from controller.robot.config.scale import Scale, scaled_keys
from controller.robot.config.scripts import ScriptsConfig, load_scripts
from controller.robot.config.two_leg import MassModel, TwoLegConfig, TwoLegGains, TwoLegPlan
from controller.robot.config.walk import WalkConfig
from controller.robot.config.wire import DEFAULT_CONFIG, fsm_of
from controller.robot.humanoid_kinematics import HumanoidGeometry
from controller.robot.mjcf_mass_model import derived_mass_model
from controller.robot.motors import per_joint


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
    posture_height_range: tuple[float, float] = (0.15, 0.35)   # quadruped mode 3 clamps the height into it
    motor_ctrl_limit_margin: float = 0.0
    locomotion: LocomotionConfig | None = None   # quadruped gait generator
    walk: WalkConfig | None = None               # biped walk
    motions: MotionsConfig | None = None         # mode-62 step-list motions
    mof: MofConfig | None = None                 # B-Human .mof motion nets
    fall: FallConfig | None = None               # a humanoid's fall detection and posture
    sim: dict[str, Any] = field(default_factory=dict)
    # Limbs: joint groups a script can own while the mode drives the others
    # (the humanoid's `group`s, the quadruped's legs).
    limbs: dict[str, tuple[int, ...]] = field(default_factory=dict)
    scripts: ScriptsConfig | None = None
    priorities: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_PRIORITIES))
    realtime: RealtimeConfig = field(default_factory=RealtimeConfig)
    command_queue_capacity: int = 1024   # blocks (SPEC §3); a command beyond it is refused
    safety: SafetyConfig = field(default_factory=SafetyConfig)
    estimator: EstimatorConfig = field(default_factory=EstimatorConfig)   # quadruped state estimate
    balance: BalanceConfig | None = None   # quadruped closed-loop mode 11 (the MPC); None: open loop
    mass_model: MassModel | None = None    # quadruped: where the mass sits (mode 64's balance)
    two_leg: TwoLegConfig = field(default_factory=lambda: TwoLegConfig(TwoLegPlan(), TwoLegGains()))
    rl_reset: RlResetConfig = field(default_factory=RlResetConfig)   # quadruped mode 80
    bridge: BridgeConfig = field(default_factory=BridgeConfig)   # the real robot's wire
    # N m s/rad per joint the controller adds back as feed-forward (damping x
    # target speed) on stiff joints; None: none (controller/robot/config/damping.py).
    joint_damping: np.ndarray | None = None
    # A quadruped's size against CyberDog 2's, and the keys its config leaves
    # out that took CyberDog 2's figures scaled by it (config/scale.py).
    scale: Scale | None = None
    scaled: tuple[str, ...] = ()
    # The robot's own joint convention on the wire (`joint_map`); None: the
    # controller's own (the identity map, filled in here).
    joint_map: JointMap = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.joint_map is None:
            object.__setattr__(self, "joint_map", JointMap(self.joint_names))

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


def _check_motor_envelope(r: Reader, safety: SafetyConfig, joints: int, legs: int) -> None:
    """The motors' envelope speeds fit the robot's joints (one number, one
    per leg joint type, or one per joint)."""
    for key in ("motor_knee_speed", "motor_no_load_speed"):
        value = getattr(safety.sensors, key)
        if value is None:
            continue
        try:
            per_joint(value, joints, max(1, legs))
        except ValueError as exc:
            raise r.sub("safety").fail(key, str(exc)) from exc


def load_config(path: str | Path | None = None) -> Config:
    """Read and validate a robot config; raise ConfigError with a precise message."""
    path = Path(path) if path is not None else DEFAULT_CONFIG
    r = Reader(path, load_config_data(path))
    if not isinstance(r.data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    kind = r.get("kind", str)
    if kind not in ("quadruped", "humanoid"):
        raise r.fail("kind", f"{kind!r} is not supported (only 'quadruped' or 'humanoid')")
    lcm_cfg = load_lcm(r)
    fsm = fsm_of(r, path)
    body = load_quadruped(r, path) if kind == "quadruped" else load_humanoid(r, path)
    scripts = load_scripts(r, path, body["joint_names"], fsm) if "scripts" in r.data else None
    # A quadruped's joints are <leg>_<type>: `joint_map` may give directions per type.
    joint_types = {n: n.split("_", 1)[1] for n in body["joint_names"]} if kind == "quadruped" else {}
    joint_map = load_joint_map(r, body["joint_names"], joint_types)
    safety = load_safety(r)
    if (kind == "quadruped" and body["mass_model"] is None and scripts is not None
            and any(m.kind == "two_leg" for m in scripts.modes.values())):
        # mode 64's balance needs the mass model: the robot's MJCF or physics file holds it
        body["mass_model"] = derived_mass_model(path, r.get("robot", str), r.get("sim", dict, {}),
                                                body["geometry"], joint_map)
    _check_motor_envelope(r, safety, len(body["joint_names"]), len(body["legs"]))
    config = Config(
        path=path,
        robot=r.get("robot", str),
        kind=kind,
        tick_hz=r.number("tick_hz", 50.0, 2000.0),
        command_timeout_ms=r.number("command_timeout_ms", 10.0, 10000.0),
        command_queue_capacity=int(r.number("command_queue_capacity", 2, 32767, 1024)),
        safety=safety,
        estimator=load_estimator(r, body["scale"]) if kind == "quadruped" else EstimatorConfig(),
        balance=load_balance(r, path, body, joint_map) if kind == "quadruped" else None,
        lcm=lcm_cfg,
        fsm=fsm,
        motions=load_motions(r, path) if "motions" in r.data else None,
        sim=r.get("sim", dict, {}),
        scripts=scripts,
        priorities=load_priorities(r),
        realtime=load_realtime(r),
        joint_map=joint_map,
        rl_reset=load_rl_reset(r, path, body["legs"]) if kind == "quadruped" else RlResetConfig(),
        bridge=load_bridge(r),
        joint_damping=load_joint_damping(r, path, len(body["joint_names"]), joint_map)
        if kind == "quadruped" else None,
        scaled=scaled_keys(r.data) if kind == "quadruped" else (),
        **body,
    )
    return _with_foot_rolling(r, _with_foot_sink(r, config))


def _with_foot_rolling(r: Reader, config: Config) -> Config:
    """A quadruped on its own MJCF that does not write
    `two_leg.balance.foot_rolling` gets its feet's rolling friction from the
    model (controller/robot/foot_sink.py feet_rolling_friction), as it gets
    their sink: a figure of the model, whichever mode uses it."""
    if config.kind != "quadruped" or "mjcf" not in config.sim:
        return config
    two_leg = r.data.get("two_leg")
    balance = two_leg.get("balance") if isinstance(two_leg, dict) else None
    if isinstance(balance, dict) and "foot_rolling" in balance:
        return config
    from controller.robot.foot_sink import feet_rolling_friction  # MuJoCo, only for a robot's own model
    rolling = feet_rolling_friction(config.path, config.sim, config.legs, config.joint_map)
    if rolling <= 0.0:
        return config
    gains = replace(config.two_leg.gains, foot_rolling=round(rolling, 5))
    return replace(config, two_leg=replace(config.two_leg, gains=gains))


def _with_foot_sink(r: Reader, config: Config) -> Config:
    """A quadruped on its own MJCF that does not write `geometry.foot_sink`
    gets the one its model shows (controller/robot/foot_sink.py: measured on
    the model, as its masses are read from it)."""
    if config.kind != "quadruped" or "mjcf" not in config.sim:
        return config
    geometry = r.data.get("geometry")
    if isinstance(geometry, dict) and "foot_sink" in geometry:
        return config
    from controller.robot.foot_sink import measured_foot_sink  # MuJoCo, only for a robot's own model
    assert isinstance(config.geometry, Geometry)
    sink = measured_foot_sink(config.path, config.sim, config.legs, config.geometry, config.stand_height,
                              config.stand_com_x, config.joint_map)
    return replace(config, geometry=replace(config.geometry, foot_sink=round(sink, 4)))
