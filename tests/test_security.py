"""docs/SECURITY.md's claims about names from the network, checked.

* Controller.step opens no file, whatever arrives: every motion, script,
  gait and .mof net is loaded (and validated) at start, and a request only
  names one. Checked with a Python audit hook (PEP 578: every builtins.open,
  io.open and os.open raises an "open" event) around steps fed with
  hostile names on every inbound channel.
* The only paths a step looks at (stat, lstat) are the configured script
  directories, the directories on the way there, files directly in them and
  where a symlink in them points: resolve_script checks a name before it
  touches the disk, then resolves it to refuse a link out.
* A symlink in a script directory that leads out of it is refused by name.
* The daemon's own modules start no process and evaluate no code.
"""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from harness import Rig

from controller import msgs

ROOT = Path(__file__).resolve().parent.parent
HOSTILE_NAMES = ["../Stand", "../../../../etc/passwd", "/etc/passwd", "..", ".", ".hidden",
                 "Stand/../Wave", "Stand\x00", "~root", "$HOME", "Stand;id", "C:\\x", "Escape",
                 "Escape.yaml", "%2e%2e%2fStand", "a" * 64, "Stand\n", "*", "Stand*"]

_recording: list[tuple[str, tuple[Any, ...]]] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _recording is not None and event in ("open", "os.listdir", "os.scandir", "os.system",
                                            "subprocess.Popen", "os.exec", "os.posix_spawn",
                                            "exec", "compile"):
        _recording.append((event, args))


sys.addaudithook(_audit)     # cannot be removed; it only records while a test asks


@contextmanager
def watching_files() -> Iterator[tuple[list[tuple[str, tuple[Any, ...]]], list[str]]]:
    """(audit events, paths stat'ed or lstat'ed) while the block runs."""
    global _recording
    events: list[tuple[str, tuple[Any, ...]]] = []
    looked: list[str] = []
    real_stat, real_lstat = os.stat, os.lstat

    def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        looked.append(os.fsdecode(path))
        return real_stat(path, *args, **kwargs)

    def lstat(path: Any, *args: Any, **kwargs: Any) -> Any:
        looked.append(os.fsdecode(path))
        return real_lstat(path, *args, **kwargs)

    _recording = events
    try:
        with mock.patch("os.stat", stat), mock.patch("os.lstat", lstat):
            yield events, looked
    finally:
        _recording = None


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of config/ and gaits/ whose humanoid script directory holds a
    symlink out of it (Escape.yaml -> a valid script elsewhere)."""
    base = tmp_path_factory.mktemp("tree")
    shutil.copytree(ROOT / "config", base / "config")
    shutil.copytree(ROOT / "gaits", base / "gaits")
    outside = base / "outside"
    outside.mkdir()
    shutil.copy(base / "config" / "scripts" / "humanoid20" / "Wave.yaml", outside / "Escape.yaml")
    os.symlink(outside / "Escape.yaml", base / "config" / "scripts" / "humanoid20" / "Escape.yaml")
    return base


def script_request(names: list[str], request_id: int, action: int = 0) -> bytes:
    msg = msgs.script_request_t()
    msg.request_id, msg.action, msg.priority = request_id, action, 100
    msg.names, msg.num_names = names, len(names)
    return msg.encode()


def upload(text: str) -> bytes:
    msg = msgs.file_send_lcmt()
    msg.data = text
    return msg.encode()


def hostile_inputs(rig: Rig) -> Iterator[tuple[str, bytes]]:
    ch = rig.ch
    for i, name in enumerate(HOSTILE_NAMES):
        yield ch["script_request"], script_request([name], 100 + i)
        yield ch["script_request"], script_request(["Stand", name], 200 + i)
    yield ch["script_request"], script_request(["Stand"], 300)          # a real one
    for target in ("/etc/passwd", "../../../etc/passwd", "Stand.yaml", "../motions/x.toml"):
        yield ch["user_gait_file"], upload(f'# Gait Params\n[[step]]\nfile = "{target}"\n'
                                          "mode = 11\ngait_id = 110\nduration = 400\n")
        yield ch["user_gait_file"], upload(f"# Gait Def\n[[section]]\ncontact = [1, 1, 1, 1]\n"
                                          f"duration = 5\n# {target}\n")
    for gait in (-128, -1, 0, 1, 110, 127):
        for mode in (62, 64, 16, 22, 11):
            cmd = msgs.robot_control_cmd_lcmt()
            cmd.mode, cmd.gait_id, cmd.life_count = mode, gait, (mode + gait) % 120
            yield ch["command"], cmd.encode()


def allowed(path: str, roots: list[Path]) -> bool:
    """A script directory, a directory on the way to it, a file directly in
    it, or on the way to where a symlink in it points: resolving a name
    follows that link (the administrator's), which is how a link out of the
    directory is recognised and refused."""
    p = Path(path)
    links = [Path(os.path.realpath(f)) for r in roots for f in r.iterdir() if f.is_symlink()]
    return any(p == r or r.is_relative_to(p) or p.parent == r for r in roots + links)


@pytest.mark.parametrize("config", ["cyberdog2.yaml", "humanoid20.yaml", "nao22.yaml"])
def test_no_inbound_message_opens_a_file(tree: Path, config: str) -> None:
    rig = Rig(str(tree / "config" / config))
    rig.stand()
    roots = [Path(d) for d in (rig.cfg.scripts.directories if rig.cfg.scripts else ())]
    with watching_files() as (events, looked):
        for channel, data in hostile_inputs(rig):
            rig.raw(channel, data)
            rig.tick(heartbeat=True)
        rig.run(400)
    assert events == [], f"{config}: files opened or processes started during steps: {events}"
    outside = sorted({p for p in looked if not allowed(p, roots)})
    assert not outside, f"{config}: looked at paths outside the script directories: {outside}"
    c = rig.ctl.counters
    assert c.commands_rejected >= len(HOSTILE_NAMES), c     # the names were refused, not ignored


def test_the_audit_check_sees_an_open(tree: Path) -> None:
    """The check above is able to fail: an open inside a step is recorded."""
    rig = Rig(str(tree / "config" / "humanoid20.yaml"))
    original = rig.ctl.step

    def step(*args: Any, **kwargs: Any) -> Any:
        (ROOT / "README.md").read_text()
        return original(*args, **kwargs)

    rig.ctl.step = step    # type: ignore[method-assign]  # the test wraps this one controller's tick
    with watching_files() as (events, _):
        rig.tick()
    assert [e for e, args in events if e == "open" and str(args[0]).endswith("README.md")]


def test_a_symlink_out_of_a_script_directory_is_refused_by_name(tree: Path) -> None:
    rig = Rig(str(tree / "config" / "humanoid20.yaml"))
    rig.stand()
    rig.raw(rig.ch["script_request"], script_request(["Escape"], 7))
    rig.tick(heartbeat=True)
    assert "refused: resolves to" in rig.ctl.counters.last_error
    assert "outside" in rig.ctl.counters.last_error
    rig.raw(rig.ch["script_request"], script_request(["Wave"], 8))   # the same file, by its own name
    rig.run(100)
    assert rig.ctl.director.last is not None and rig.ctl.director.last.request_id == 8


# -- the daemon's modules -------------------------------------------------------------------------

FORBIDDEN_CALLS = {("os", "system"), ("os", "popen"), ("os", "execv"), ("os", "execve"),
                   ("os", "execvp"), ("os", "spawnv"), ("os", "posix_spawn"), ("pickle", "load"),
                   ("pickle", "loads"), ("yaml", "load"), ("importlib", "import_module")}
FORBIDDEN_NAMES = {"eval", "exec", "__import__", "compile"}
FORBIDDEN_IMPORTS = {"subprocess", "pickle", "shelve", "marshal"}


def daemon_modules() -> list[Path]:
    """The controller package's modules that `motiond` imports (in a fresh interpreter)."""
    code = ("import sys, controller.cli.motiond, controller.service.runtime; "
            "print('\\n'.join(m.__file__ for n, m in sys.modules.items() "
            "if n.startswith('controller') and getattr(m, '__file__', None)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    files = [Path(f) for f in out.split()]
    return sorted(f for f in files if f.suffix == ".py" and "msgs" not in f.parts)


def test_the_daemon_starts_no_process_and_evaluates_no_code() -> None:
    modules = daemon_modules()
    assert any(m.name == "controller.py" for m in modules) and len(modules) > 20
    found = []
    for path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) \
                    else [node.module or ""]
                found += [f"{path.name}: import {n}" for n in names
                          if n.split(".")[0] in FORBIDDEN_IMPORTS]
            elif isinstance(node, ast.Call):
                f = node.func
                if isinstance(f, ast.Name) and f.id in FORBIDDEN_NAMES:
                    found.append(f"{path.name}:{node.lineno}: {f.id}()")
                elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                        and (f.value.id, f.attr) in FORBIDDEN_CALLS:
                    found.append(f"{path.name}:{node.lineno}: {f.value.id}.{f.attr}()")
    assert not found, found
