"""The robot config (config/<robot>.yaml): one module per section, each
declaring its typed value and checking its keys, and `loader` assembling
them into Config. Every robot number lives in the config; errors name the
file, the key path and the reason. Nothing here reads the network or the
clock, and nothing here imports the motion formats: the .mof net is parsed
after loading (controller/motion/mof.py `load_net`).

The names below are imported on the first use of any of them (PEP 562), so
that `controller.robot.config.lcm`, `.fsm` and `.wire` load without the rest
(and without numpy): motionctl's talking commands start in a fraction of the
time."""
# ruff: noqa: F401 - _load's imports are read through locals()
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.robot.config.body import REQUIRED_GAINS, REQUIRED_POSES, VMAX_RANGE, Gains
    from controller.robot.config.fsm import FsmTable, load_fsm
    from controller.robot.config.humanoid import HUMANOID_LEG_GROUPS
    from controller.robot.config.lcm import NAMESPACE_RE, LcmConfig, check_namespace
    from controller.robot.config.loader import DEFAULT_CONFIG, Config, load_config
    from controller.robot.config.locomotion import LocomotionConfig
    from controller.robot.config.mof import MOF_HEADER, MofColumns, MofConfig, MofError, mof_columns
    from controller.robot.config.motions import MotionsConfig
    from controller.robot.config.priorities import DEFAULT_PRIORITIES, PRIORITY_RANGE
    from controller.robot.config.quadruped import Geometry
    from controller.robot.config.reader import ConfigError
    from controller.robot.config.realtime import RealtimeConfig
    from controller.robot.config.safety import SafetyConfig
    from controller.robot.config.scripts import SCRIPT_PROGRESS, ScriptedModeConfig, ScriptsConfig
    from controller.robot.config.walk import WalkConfig, WalkParams, load_walk_params
    from controller.robot.config.wire import WireConfig, load_wire, with_namespace

__all__ = [
    "DEFAULT_CONFIG", "DEFAULT_PRIORITIES", "HUMANOID_LEG_GROUPS", "MOF_HEADER", "NAMESPACE_RE",
    "PRIORITY_RANGE", "REQUIRED_GAINS", "REQUIRED_POSES", "SCRIPT_PROGRESS", "VMAX_RANGE",
    "Config", "ConfigError", "FsmTable", "Gains", "Geometry", "LcmConfig", "LocomotionConfig",
    "MofColumns", "MofConfig", "MofError", "MotionsConfig", "RealtimeConfig", "SafetyConfig",
    "ScriptedModeConfig", "ScriptsConfig", "WalkConfig", "WalkParams", "WireConfig",
    "check_namespace", "load_config", "load_fsm", "load_walk_params", "load_wire", "mof_columns",
    "with_namespace",
]


def __getattr__(name: str) -> Any:
    """The package's names, all imported on the first use of any (static
    imports, as the rest of the daemon's: nothing is imported by a name
    built at run time)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals().update(_load())
    return globals()[name]


def _load() -> dict[str, Any]:
    from controller.robot.config.body import REQUIRED_GAINS, REQUIRED_POSES, VMAX_RANGE, Gains
    from controller.robot.config.fsm import FsmTable, load_fsm
    from controller.robot.config.humanoid import HUMANOID_LEG_GROUPS
    from controller.robot.config.lcm import NAMESPACE_RE, LcmConfig, check_namespace
    from controller.robot.config.loader import DEFAULT_CONFIG, Config, load_config
    from controller.robot.config.locomotion import LocomotionConfig
    from controller.robot.config.mof import MOF_HEADER, MofColumns, MofConfig, MofError, mof_columns
    from controller.robot.config.motions import MotionsConfig
    from controller.robot.config.priorities import DEFAULT_PRIORITIES, PRIORITY_RANGE
    from controller.robot.config.quadruped import Geometry
    from controller.robot.config.reader import ConfigError
    from controller.robot.config.realtime import RealtimeConfig
    from controller.robot.config.safety import SafetyConfig
    from controller.robot.config.scripts import SCRIPT_PROGRESS, ScriptedModeConfig, ScriptsConfig
    from controller.robot.config.walk import WalkConfig, WalkParams, load_walk_params
    from controller.robot.config.wire import WireConfig, load_wire, with_namespace
    names = locals()
    return {n: names[n] for n in __all__}
