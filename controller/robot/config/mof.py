"""The .mof binding of a robot (`mof_columns`, `mof_hardness`, `mof`; keys
documented at the top of config/nao22.yaml): how the robot reads B-Human
.mof columns, what hardness means, and the net's files. The files are
parsed and linked into a net by controller/motion/mof.py after loading."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from controller.robot.config.body import Gains
from controller.robot.config.reader import ConfigError, Reader, file_name, section_directory

# The column header of B-Human's .mof files (HP head pan = yaw, HT head tilt
# = pitch), in file order.
MOF_HEADER = ("HP", "HT", "AL0", "AL1", "AL2", "AL3", "AR0", "AR1", "AR2", "AR3",
              "LL0", "LL1", "LL2", "LL3", "LL4", "LL5", "LR0", "LR1", "LR2", "LR3", "LR4", "LR5")


class MofError(ValueError):
    """A bad .mof file or binding; the message names the file, the line and the reason."""

    def __init__(self, source: str, line: int | None, reason: str) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        place = f"{source}:{line}" if line is not None else source
        super().__init__(f"{place}: {reason}")


@dataclass(frozen=True, eq=False)
class MofColumns:
    """How a robot reads .mof columns. Every array is per column, in file order;
    angles and limits are in the joint's convention, in rad."""
    names: tuple[str, ...]          # column names (header order)
    joint_names: tuple[str, ...]    # the joint each column drives
    joints: np.ndarray              # kernel (wire) index of that joint
    sign: np.ndarray                # joint angle = sign * radians(.mof angle) + offset
    offset: np.ndarray              # rad
    q_min: np.ndarray
    q_max: np.ndarray
    v_max: np.ndarray               # rad/s
    kp_full: np.ndarray             # gains at 100 % hardness
    kd_full: np.ndarray
    default_hardness: np.ndarray    # % used for `*` in a hardness line

    def __len__(self) -> int:
        return len(self.names)

    def to_joint(self, degrees: np.ndarray) -> np.ndarray:
        """.mof degrees -> joint angles (rad); NaN stays NaN."""
        return self.sign * np.radians(degrees) + self.offset


def mof_columns(mapping: Any, joint_names: Sequence[str], q_min: ArrayLike, q_max: ArrayLike,
                v_max: ArrayLike, kp_full: ArrayLike, kd_full: ArrayLike,
                default_hardness: ArrayLike, source: str = "config") -> MofColumns:
    """Bind a `mof_columns` mapping (column -> joint name, or {joint, sign,
    offset (deg)}) to a robot's joints; per-joint arrays are in wire order."""
    if not isinstance(mapping, Mapping) or not mapping:
        raise MofError(source, None, "mof_columns: expected a mapping of .mof column -> joint")
    index = {name: i for i, name in enumerate(joint_names)}
    names: list[str] = []
    joints: list[int] = []
    signs: list[float] = []
    offsets: list[float] = []
    for column, entry in mapping.items():
        where = f"mof_columns.{column}"
        if isinstance(entry, str):
            entry = {"joint": entry}
        if not isinstance(entry, Mapping) or not isinstance(entry.get("joint"), str):
            raise MofError(source, None, f"{where}: expected a joint name or "
                                         f"{{joint, sign, offset}}, got {entry!r}")
        unknown = sorted(set(entry) - {"joint", "sign", "offset"})
        if unknown:
            raise MofError(source, None, f"{where}: unknown keys {unknown}")
        joint = entry["joint"]
        if joint not in index:
            raise MofError(source, None, f"{where}: {joint!r} is not a joint of this robot")
        if index[joint] in joints:
            raise MofError(source, None, f"{where}: joint {joint!r} is already driven by "
                                         f"column {names[joints.index(index[joint])]}")
        sign = entry.get("sign", 1)
        if isinstance(sign, bool) or sign not in (1, -1):
            raise MofError(source, None, f"{where}.sign: expected 1 or -1, got {sign!r}")
        offset = entry.get("offset", 0.0)
        if isinstance(offset, bool) or not isinstance(offset, (int, float)) \
                or not math.isfinite(offset):
            raise MofError(source, None, f"{where}.offset: expected degrees, got {offset!r}")
        names.append(str(column))
        joints.append(index[joint])
        signs.append(float(sign))
        offsets.append(math.radians(offset))
    idx = np.array(joints, dtype=np.intp)
    hard = np.broadcast_to(np.asarray(default_hardness, dtype=float), (len(joint_names),))
    if not ((hard >= 0.0) & (hard <= 100.0)).all():
        raise MofError(source, None, "default hardness must lie in [0, 100] %")
    return MofColumns(
        names=tuple(names),
        joint_names=tuple(joint_names[i] for i in joints),
        joints=idx,
        sign=np.array(signs),
        offset=np.array(offsets),
        q_min=np.asarray(q_min, dtype=float)[idx],
        q_max=np.asarray(q_max, dtype=float)[idx],
        v_max=np.asarray(v_max, dtype=float)[idx],
        kp_full=np.asarray(kp_full, dtype=float)[idx],
        kd_full=np.asarray(kd_full, dtype=float)[idx],
        default_hardness=np.array(hard[idx]),
    )


@dataclass(frozen=True, eq=False)
class MofConfig:
    """B-Human .mof motion nets: how the robot reads .mof columns, what
    hardness means, and the files of the net. controller/motion/mof.py's
    `load_net` parses and links them after loading."""
    columns: MofColumns
    default_hardness: float          # % for `*` in a hardness line
    full_gains: Gains                # 100 % hardness (gains.<mof_hardness.full_gains>)
    files: tuple[Path, ...]          # the net's files, in config order


def load_mof(r: Reader, path: Path, names: list[str],
             limits: tuple[np.ndarray, np.ndarray, np.ndarray],
             gains: dict[str, Gains]) -> MofConfig | None:
    """The .mof binding (`mof_columns`, `mof_hardness`) and the files of the
    net (`mof`); None without `mof_columns`."""
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
    return MofConfig(columns, default, full, files)


def _check_mof_header(r: Reader, mapping: dict[Any, Any]) -> None:
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


def _mof_files(r: Reader, path: Path) -> tuple[Path, ...]:
    """`mof`: the net's .mof files in `directory` (relative to the config)."""
    mr = r.sub("mof")
    directory = section_directory(mr, path)
    names = mr.get("files", list)
    if not names:
        raise mr.fail("files", "expected a list of .mof file names")
    for i, name in enumerate(names):
        file_name(mr, f"files[{i}]", name, ".mof")
        if name in names[:i]:
            raise mr.fail(f"files[{i}]", f"{name!r} is listed twice")
    return tuple(directory / name for name in names)
