"""Where the shipped data is: robot configs (config/), gaits (gaits/) and the
LCM type definitions (lcmtypes/, for lcm-spy's jar).

In a checkout they are the top-level config/ and gaits/ beside controller/.
An installed wheel carries both as package data in controller/data/config
and controller/data/gaits (see pyproject.toml), again side by side, so the
paths inside a config (`fsm: cyberdog_fsm.yaml`, `gaits: ../gaits/quadruped`,
which are relative to the config file) resolve the same in both layouts.

Pure: looks at the file system once, at import.
"""
from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent   # controller/ (this is controller/robot/)
_CHECKOUT = PACKAGE_DIR.parent


def _data_root() -> Path:
    """The checkout when this package is imported from one (its pyproject.toml
    and config/ are beside the package), else the installed copy."""
    if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "config").is_dir():
        return _CHECKOUT
    return PACKAGE_DIR / "data"


DATA_ROOT = _data_root()
CONFIG_DIR = DATA_ROOT / "config"
GAITS_DIR = DATA_ROOT / "gaits"
LCMTYPES_DIR = DATA_ROOT / "lcmtypes"
# Built files (the lcm-spy types jar): the checkout's build/, else a user cache.
BUILD_DIR = _CHECKOUT / "build" if DATA_ROOT == _CHECKOUT else \
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "motiond"
