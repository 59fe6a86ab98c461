"""The part of a robot config a client needs to talk to the daemon: the LCM
ports and channels, the state machine's mode names and the tick rate.
`motionctl send`, `hold`, `watch` and `play` read only this (load_wire), so
they start without loading the robot's body, gaits and motions (and numpy):
the full config takes about ten times as long to load."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from controller.robot.config.fsm import FsmTable, load_fsm
from controller.robot.config.lcm import LcmConfig, check_namespace, load_lcm
from controller.robot.config.reader import ConfigError, Reader, load_config_data
from controller.robot.resources import CONFIG_DIR

DEFAULT_CONFIG = CONFIG_DIR / "cyberdog2.yaml"


class Wire(Protocol):
    """What the talking commands use of a config (a Config has it all)."""

    @property
    def path(self) -> Path: ...
    @property
    def lcm(self) -> LcmConfig: ...
    @property
    def fsm(self) -> FsmTable: ...
    @property
    def tick_hz(self) -> float: ...


@dataclass(frozen=True)
class WireConfig:
    path: Path
    lcm: LcmConfig
    fsm: FsmTable
    tick_hz: float


def load_wire(path: str | Path | None = None) -> WireConfig:
    """The wire part of the config at `path` (default: the CyberDog 2's),
    checked as load_config checks it; ConfigError otherwise."""
    path = Path(path) if path is not None else DEFAULT_CONFIG
    r = Reader(path, load_config_data(path))
    if not isinstance(r.data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return WireConfig(path=path, lcm=load_lcm(r), fsm=fsm_of(r, path),
                      tick_hz=r.number("tick_hz", 50.0, 2000.0))


def fsm_of(r: Reader, path: Path) -> FsmTable:
    """The FSM table the config at `path` names (`fsm:`, relative to it)."""
    fsm_path = path.parent / r.get("fsm", str)
    if not fsm_path.is_file():
        raise r.fail("fsm", f"{fsm_path} is not a file (the path is relative to this config)")
    return load_fsm(fsm_path)


C = TypeVar("C", bound=Any)


def with_namespace(cfg: C, namespace: str | None) -> C:
    """The config (a Config or a WireConfig) with its channels moved into
    `namespace` (None: unchanged)."""
    if namespace is None:
        return cfg
    return replace(cfg, lcm=replace(cfg.lcm, namespace=check_namespace(namespace)))
