"""docs/CONFIG.md stays the reference of the config files.

* Every key in a shipped robot config (config/*.yaml with a `kind`) and in the
  FSM tables they name has a row in the reference's table for its kind, so a
  new key without documentation fails here.
* Every key the reference names is one the loaders read: each literal part of
  a documented key path is a quoted string in their source (a typo in the
  docs fails).
* Every range the loader checks with `number("key", lo, hi)` appears in the
  reference's row for that key.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from shipped_configs import fsm_tables, robot_configs

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "CONFIG.md"
# The modules that read config keys: the config package's section loaders and
# the modules that read a section of their own.
LOADERS = sorted((ROOT / "controller" / "robot" / "config").glob("*.py")) + [
    ROOT / "controller" / name for name in ("robot/humanoid_kinematics.py", "robot/mass_properties.py",
                                            "robot/mjcf_figures.py",
                                            "sim/joint_sim.py", "sim/sensors.py", "sim/model.py",
                                            "sim/own_model.py", "sim/physics.py")]
SECTIONS = {"common": "Common keys", "quadruped": "Quadruped keys", "humanoid": "Humanoid keys",
            "mof": ".mof motion nets", "fsm": "FSM tables"}
KIND_SECTIONS = {"quadruped": ("common", "quadruped"), "humanoid": ("common", "humanoid", "mof")}
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def documented() -> dict[str, dict[str, list[str]]]:
    """Section -> documented key -> the row's cells."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    titles = {title: name for name, title in SECTIONS.items()}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            name = titles.get(line[3:].strip())
            current = sections.setdefault(name, {}) if name else None
        elif current is not None and (m := ROW.match(line)):
            current[m[1]] = [c.strip() for c in line.strip().strip("|").split("|")]
    return sections


def pattern(key: str) -> re.Pattern[str]:
    """`gains.<set>.kp` -> a regex for concrete paths like gains.pose.kp."""
    parts = re.split(r"(<[^>]+>)", key)
    return re.compile("".join(r"[^.\[\]]+" if p.startswith("<") else re.escape(p) for p in parts))


def leaves(node: Any, path: str = "") -> Iterator[str]:
    """Key paths of a YAML tree down to its values: mappings by key, lists of
    mappings as `[]`; a scalar or a list of scalars (or lists) is a value."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        for value in node:
            yield from leaves(value, f"{path}[]")
    else:
        yield path


def undocumented(data: Any, sections: tuple[str, ...]) -> list[str]:
    docs = documented()
    patterns = [pattern(k) for s in sections for k in docs[s]]
    return sorted({p for p in leaves(data) if not any(r.fullmatch(p) for r in patterns)})


def test_the_reference_has_its_sections_and_rows() -> None:
    """The checks below would pass on an empty parse: make sure there is none."""
    docs = documented()
    assert set(docs) == set(SECTIONS)
    assert all(len(docs[s]) >= 5 for s in ("common", "quadruped", "humanoid", "mof"))
    assert len(docs["fsm"]) == 3
    assert [p.name for p in robot_configs()] == ["barkour_vb.yaml", "cyberdog2.yaml", "go1.yaml", "go2.yaml",
                                                  "humanoid20.yaml", "nao22.yaml", "op3.yaml"]


@pytest.mark.parametrize("path", robot_configs(), ids=lambda p: p.name)
def test_every_key_of_a_shipped_config_is_documented(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    assert "tick_hz" in set(leaves(data))
    missing = undocumented(data, KIND_SECTIONS[data["kind"]])
    assert not missing, f"{path.name}: keys missing from docs/CONFIG.md: {missing}"


@pytest.mark.parametrize("path", fsm_tables(), ids=lambda p: p.name)
def test_every_key_of_a_shipped_fsm_table_is_documented(path: Path) -> None:
    missing = undocumented(yaml.safe_load(path.read_text()), ("fsm",))
    assert not missing, f"{path.name}: keys missing from docs/CONFIG.md: {missing}"


def test_a_new_key_without_documentation_is_caught() -> None:
    data = yaml.safe_load((ROOT / "config" / "cyberdog2.yaml").read_text())
    data["lcm"]["new_key"] = 1
    data["gains"]["pose"]["ki"] = [0, 0, 0]
    data["joints"] = [{"name": "x"}]                  # a humanoid key in a quadruped
    assert undocumented(data, KIND_SECTIONS["quadruped"]) == [
        "gains.pose.ki", "joints[].name", "lcm.new_key"]


def test_every_documented_key_is_read_by_a_loader() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in LOADERS)
    unknown = []
    for section in documented().values():
        for key in section:
            for part in re.split(r"[.\[\]]+", key):
                if part and not part.startswith("<") \
                        and f'"{part}"' not in source and f"'{part}'" not in source:
                    unknown.append(f"{key} ({part})")
    assert not unknown, f"docs/CONFIG.md names keys no loader reads: {unknown}"


def checked_ranges() -> list[tuple[str, float, float]]:
    """(key, lo, hi) of every `number("key", lo, hi, ...)` call with literal
    bounds in the loaders."""
    def literal(node: ast.expr) -> float | None:
        try:
            value = ast.literal_eval(node)
        except ValueError:
            return None
        return float(value) if isinstance(value, (int, float)) else None

    found: list[tuple[str, float, float]] = []
    for path in LOADERS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and len(node.args) >= 3:
                name = getattr(node.func, "attr", getattr(node.func, "id", None))
                key, lo_node, hi_node = node.args[:3]
                lo, hi = literal(lo_node), literal(hi_node)
                if name == "number" and isinstance(key, ast.Constant) and isinstance(key.value, str) \
                        and lo is not None and hi is not None:
                    found.append((key.value, lo, hi))
    return found


def test_every_range_the_loader_checks_is_in_the_reference() -> None:
    ranges = checked_ranges()
    assert len(ranges) >= 20      # the parse found the loaders' checks
    rows = [(key, cells) for section in documented().values() for key, cells in section.items()]
    wrong = []
    for name, lo, hi in ranges:
        candidates = [cells for key, cells in rows if re.split(r"[.\]]", key)[-1] == name]
        if not any({lo, hi} <= {float(n) for n in NUMBER.findall(cells[4])} for cells in candidates):
            wrong.append(f"{name}: [{lo:g}, {hi:g}] (documented: {[c[4] for c in candidates]})")
    assert not wrong, f"docs/CONFIG.md ranges differ from the loader's: {wrong}"
