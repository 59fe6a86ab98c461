"""The layout of controller/ (docs/ARCHITECTURE.md) holds: imports point one
way, from the Python client and the command line down to the protocol, with
no circle; below cli/ nothing imports cli/; every module is in the
architecture's folder map.

Imports are read from the source (ast), all of them: module level, inside
functions and under TYPE_CHECKING, since each says which layer a module
leans on.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "controller"
# From the top down: a module may import its own folder and any folder below.
LAYERS = ("client", "cli", "bridges", "service", "sim", "core", "behaviours", "motion", "robot", "protocol", "")
# The bottom ("") is the package's own root: logs.py, __init__.py, and the
# generated msgs/ and _kernel, which any layer may use.
GENERATED = ("msgs", "_kernel")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in GENERATED:
            continue
        name = ".".join(("controller", *rel.with_suffix("").parts))
        found[name.removesuffix(".__init__")] = path
    return found


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:     # a layer's package and its modules
        return parts[1]
    return ""


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The controller modules `module` imports (a package import counts as
    its __init__; `from pkg import mod` as the module)."""
    out: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[:len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for name in names:
            if not name.startswith("controller"):
                continue
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module and name != "controller":
                out.add(name)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {m: _imports(m, p, known) for m, p in modules.items()}


def test_imports_point_down_the_layers() -> None:
    wrong = []
    for module, imported in _graph().items():
        mine = LAYERS.index(_layer(module))
        for other in sorted(imported):
            if LAYERS.index(_layer(other)) < mine:
                wrong.append(f"{module} ({_layer(module) or 'root'}) imports {other} "
                             f"({_layer(other) or 'root'})")
    assert not wrong, "imports against the layer order " + " > ".join(
        x or "root" for x in LAYERS) + ":\n" + "\n".join(wrong)


def test_no_import_circle() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                circles.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not circles, "\n".join(" -> ".join(c) for c in circles)


def test_only_the_command_lines_and_the_python_client_import_cli() -> None:
    """cli/ is the top of the daemon's tree: only its own modules and the
    Python client library (client/, which drives a robot as motionctl does)
    lean on it."""
    for module, imported in _graph().items():
        if _layer(module) not in ("cli", "client"):
            assert not [m for m in imported if _layer(m) == "cli"], module


def test_the_checker_sees_a_wrong_import() -> None:
    """The walk finds imports of every form (so the tests above can fail)."""
    graph = _graph()
    assert "controller.core.fsm" in graph["controller.core.controller"]
    assert "controller.protocol.block" in graph["controller.core.controller"]
    assert "controller.msgs" not in graph["controller.core.controller"]   # generated: not walked
    ranks = [LAYERS.index(_layer(m)) for m in graph["controller.cli.motiond"]]
    assert max(ranks) > LAYERS.index("cli")


def test_every_module_is_in_the_folder_map() -> None:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    mapped = set(re.findall(r"`(controller/[\w/]+\.py)`", text))
    present = {str(p.relative_to(ROOT)) for p in _modules().values()}
    assert present - mapped == set(), "modules missing from docs/ARCHITECTURE.md's folder map"
    assert mapped - present == set(), "docs/ARCHITECTURE.md names modules that do not exist"
