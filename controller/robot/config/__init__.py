"""The robot config (config/<robot>.yaml): one module per section, each
declaring its typed value and checking its keys, and `loader` assembling
them into Config. Every robot number lives in the config; errors name the
file, the key path and the reason. Nothing here reads the network or the
clock, and nothing here imports the motion formats: the .mof net is parsed
after loading (controller/motion/mof.py `load_net`).

The names below are imported from their modules on first use (PEP 562), so
that `controller.robot.config.lcm` and `.fsm` load without the rest (and
without numpy): motionctl's talking commands start in a fraction of the
time."""
from __future__ import annotations

import importlib
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

_WHERE = {
    "REQUIRED_GAINS": "body",
    "REQUIRED_POSES": "body",
    "VMAX_RANGE": "body",
    "Gains": "body",
    "FsmTable": "fsm",
    "load_fsm": "fsm",
    "HUMANOID_LEG_GROUPS": "humanoid",
    "NAMESPACE_RE": "lcm",
    "LcmConfig": "lcm",
    "check_namespace": "lcm",
    "DEFAULT_CONFIG": "loader",
    "Config": "loader",
    "load_config": "loader",
    "LocomotionConfig": "locomotion",
    "MOF_HEADER": "mof",
    "MofColumns": "mof",
    "MofConfig": "mof",
    "MofError": "mof",
    "mof_columns": "mof",
    "MotionsConfig": "motions",
    "DEFAULT_PRIORITIES": "priorities",
    "PRIORITY_RANGE": "priorities",
    "Geometry": "quadruped",
    "ConfigError": "reader",
    "RealtimeConfig": "realtime",
    "SafetyConfig": "safety",
    "SCRIPT_PROGRESS": "scripts",
    "ScriptedModeConfig": "scripts",
    "ScriptsConfig": "scripts",
    "WalkConfig": "walk",
    "WalkParams": "walk",
    "load_walk_params": "walk",
    "WireConfig": "wire",
    "load_wire": "wire",
    "with_namespace": "wire",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
