"""Typed, checked access to a robot config's YAML: every error names the file,
the key path and the reason (`<file>: <key.path>: <reason>`)."""
from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from controller.robot.config.documents import parse_yaml

# numpy is imported where a vector is made: motionctl's talking commands
# read the config without it.
if TYPE_CHECKING:
    import numpy as np


class ConfigError(ValueError):
    """A configuration file is missing, unreadable or invalid."""


class Reader:
    """Typed access to a YAML mapping with errors that name file and key."""

    def __init__(self, path: Path, data: Any, where: str = "") -> None:
        self.path = path
        self.data = data
        self.where = where

    def fail(self, key: str, reason: str) -> ConfigError:
        place = f"{self.where}.{key}" if self.where else key
        return ConfigError(f"{self.path}: {place}: {reason}")

    def sub(self, key: str) -> Reader:
        value = self.get(key, dict)
        return Reader(self.path, value, f"{self.where}.{key}" if self.where else key)

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
        import numpy as np
        return np.array(value, dtype=float)


def load_yaml(path: Path) -> Any:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    try:
        return parse_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc


def load_config_data(path: Path, seen: tuple[Path, ...] = ()) -> Any:
    """A robot config's YAML with its `extends: BASE.yaml` resolved: the base
    (a path relative to this file, itself allowed to extend another) with this
    file's keys laid over it, mappings merged key by key and anything else
    replaced. Relative paths in the result are read from this file's
    directory, so a base that names files should sit beside it."""
    data = load_yaml(path)
    if not isinstance(data, dict) or "extends" not in data:
        return data
    base = data.pop("extends")
    if not isinstance(base, str):
        raise ConfigError(f"{path}: extends: expected a file name, got {base!r}")
    base_path = (path.parent / base).resolve()
    if base_path in seen or base_path == path.resolve():
        raise ConfigError(f"{path}: extends: {base} extends itself (a loop)")
    return _merged(load_config_data(base_path, seen + (path.resolve(),)), data)


def _merged(base: Any, over: Any) -> Any:
    if not (isinstance(base, dict) and isinstance(over, dict)):
        return over
    out = dict(base)
    for key, value in over.items():
        out[key] = _merged(base.get(key), value) if key in base else value
    return out


def config_directory(r: Reader, path: Path, key: str) -> Path:
    """The directory named by `key`, relative to the config file; it must exist."""
    found = (path.parent / r.get(key, str)).resolve()
    if not found.is_dir():
        raise r.fail(key, f"{found} is not a directory")
    return found


def section_directory(r: Reader, path: Path) -> Path:
    """The section's `directory`, relative to the config file; it must exist."""
    return config_directory(r, path, "directory")


def file_name(r: Reader, key: str, name: Any, suffix: str = "") -> str:
    """A file of the section's `directory`: a bare name (no path, not hidden)."""
    if not isinstance(name, str) or not name.endswith(suffix) or "/" in name \
            or "\\" in name or name.startswith("."):
        raise r.fail(key, f"{name!r}: expected a bare {suffix or 'file'} name in `directory`")
    return name


def indices(values: Any) -> np.ndarray:
    """A read-only index array: every user of the config shares it."""
    import numpy as np
    out = np.array(values, dtype=np.intp)
    out.flags.writeable = False
    return out
