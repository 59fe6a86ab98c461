"""The robot configs the repository ships (config/*.yaml with a `kind`),
for tests that run once per robot. Read at collection, in every pytest
process make test starts, so with libyaml's parser (pure-Python PyYAML
took some 2 s of each collection for these few files) and once per
process."""
from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent


@cache
def _document(path: Path) -> Any:
    return yaml.load(path.read_text(), Loader=yaml.CSafeLoader)


def robot_configs() -> list[Path]:
    return [p for p in sorted((ROOT / "config").glob("*.yaml"))
            if isinstance(d := _document(p), dict) and "kind" in d]


def fsm_tables() -> list[Path]:
    """The FSM table files the robot configs name."""
    return sorted({(p.parent / _document(p)["fsm"]).resolve() for p in robot_configs()})
