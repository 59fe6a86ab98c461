"""The Java types jar and `motionctl spy` (controller/service/lcmjava.py, controller/cli/spy_cmd.py).

lcm-spy scans its class path for LCM types before it opens its window and
prints how many it found; without a display it then stops with a
HeadlessException, before it opens its LCM URL. The headless tests give it
memq:// (in-process) anyway, so they touch no network. The one test that
starts `motionctl spy` on the config's udpm URLs is marked udpm and runs only
in the private network namespace.

The expected types are read from lcmtypes/*.lcm here, never listed by hand.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from controller import msgs
from controller.cli import motionctl
from controller.robot.config import load_config
from controller.service import lcmjava

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
MISSING = [tool for tool in ("javac", "jar", "java") if shutil.which(tool) is None]
needs_jdk = pytest.mark.skipif(bool(MISSING), reason=f"no {', '.join(MISSING)} on PATH "
                               f"(Debian: apt-get install {lcmjava.JDK_PACKAGE})")
FOUND = re.compile(r"^Found (\d+) LCM types$", re.MULTILINE)
HEADLESS = "-Djava.awt.headless=true -Xmx128m -Xms64m"


def lcm_structs(lcm_dir: Path, pattern: str = "*.lcm") -> set[str]:
    """`package.struct` for every struct in the .lcm files, comments ignored."""
    names: set[str] = set()
    for path in sorted(lcm_dir.glob(pattern)):
        text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", path.read_text(), flags=re.DOTALL)
        package = re.search(r"\bpackage\s+([\w.]+)\s*;", text)
        prefix = f"{package.group(1)}." if package else ""
        names.update(prefix + s for s in re.findall(r"\bstruct\s+(\w+)\s*\{", text))
    return names


STRUCTS = lcm_structs(lcmjava.LCMTYPES_DIR)


def jar_classes(jar: Path) -> set[str]:
    with zipfile.ZipFile(jar) as z:
        return {n[:-len(".class")].replace("/", ".") for n in z.namelist()
                if n.endswith(".class") and "$" not in n}


def run_spy_headless(classpath: Path | None) -> subprocess.CompletedProcess[str]:
    """The wheel's lcm-spy script, with no display, on an in-process URL."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "CLASSPATH")}
    env["LCM_JVM_OPT"] = HEADLESS
    if classpath is not None:
        env["CLASSPATH"] = str(classpath)
    return subprocess.run([str(lcmjava.lcm_tool("lcm-spy")), "--lcm-url", "memq://"],
                          env=env, capture_output=True, text=True, timeout=60, check=False)


def found_types(output: str) -> list[int]:
    return [int(n) for n in FOUND.findall(output)]


@pytest.fixture(scope="module")
def jar(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if MISSING:
        pytest.skip(f"no {', '.join(MISSING)} on PATH")
    path = tmp_path_factory.mktemp("jar") / "motiond-types.jar"
    lcmjava.build_types_jar(path)
    return path


@pytest.fixture(scope="module")
def spy_baseline() -> int:
    """How many types lcm-spy finds in its own jars alone."""
    if MISSING:
        pytest.skip(f"no {', '.join(MISSING)} on PATH")
    proc = run_spy_headless(None)
    counts = found_types(proc.stdout)
    assert len(counts) == 1, proc.stdout + proc.stderr
    return counts[0]


def test_lcm_files_parse_into_structs():
    # The parser the other tests rely on finds a struct in every shipped file.
    for path in lcmjava.LCMTYPES_DIR.glob("*.lcm"):
        assert f"msgs.{path.stem}" in lcm_structs(path.parent, path.name)
    assert "msgs.robot_control_cmd_lcmt" in STRUCTS


@needs_jdk
def test_jar_holds_a_class_for_every_struct(jar):
    assert jar_classes(jar) == STRUCTS


@needs_jdk
def test_lcm_spy_finds_every_type_in_the_jar(jar, spy_baseline):
    proc = run_spy_headless(jar)
    out = proc.stdout + proc.stderr
    assert found_types(proc.stdout) == [spy_baseline + len(STRUCTS)], out
    assert "Bad LCM Type" not in out
    # It got as far as its window: the type scan is complete, no socket opened.
    assert "HeadlessException" in out and proc.returncode != 0


@needs_jdk
def test_lcm_spy_decodes_each_wire_fingerprint_as_its_type(jar, tmp_path):
    """lcm-spy picks a decoder by the fingerprint at the head of each message.
    Ask its type database with the fingerprints the Python bindings (what
    motiond sends) put on the wire: each must map to the struct of that name."""
    classes = tmp_path / "classes"
    lcm_jar = lcmjava.lcm_jar()
    subprocess.run(["javac", "-d", str(classes), "-cp", str(lcm_jar),
                    str(FIXTURES / "SpyTypes.java")], check=True, timeout=60)
    wire = {getattr(msgs, name.split(".")[-1])._get_packed_fingerprint().hex(): name
            for name in STRUCTS}
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env["CLASSPATH"] = str(jar)
    proc = subprocess.run(["java", "-Djava.awt.headless=true", "-cp",
                           f"{lcm_jar}{os.pathsep}{classes}", "SpyTypes", *wire],
                          env=env, capture_output=True, text=True, timeout=60, check=True)
    decoded = dict(line.split() for line in proc.stdout.splitlines()
                   if re.fullmatch(r"[0-9a-f]{16} \S+", line))
    assert decoded == wire


@needs_jdk
def test_jar_is_rebuilt_only_when_stale(tmp_path):
    types = tmp_path / "lcmtypes"
    shutil.copytree(lcmjava.LCMTYPES_DIR, types)
    jar = tmp_path / "out" / "types.jar"
    lcmjava.types_jar(jar, types)
    built = jar.stat().st_mtime_ns
    assert jar_classes(jar) == lcm_structs(types)

    lcmjava.types_jar(jar, types)
    assert jar.stat().st_mtime_ns == built          # fresh: left alone

    # A new type file: the directory and the file are newer than the jar.
    (types / "extra_t.lcm").write_text("package msgs;\nstruct extra_t { int8_t x; }\n")
    later = built + 2_000_000_000
    os.utime(types / "extra_t.lcm", ns=(later, later))
    lcmjava.types_jar(jar, types)
    assert "msgs.extra_t" in jar_classes(jar)
    assert jar_classes(jar) == lcm_structs(types)

    # A removed type file: only the directory's time says so.
    rebuilt = jar.stat().st_mtime_ns
    (types / "extra_t.lcm").unlink()
    os.utime(types, ns=(rebuilt + 1_000_000_000,) * 2)
    lcmjava.types_jar(jar, types)
    assert "msgs.extra_t" not in jar_classes(jar)


def test_missing_jdk_names_the_debian_package(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))         # no javac, jar or java here
    with pytest.raises(lcmjava.LcmJavaError, match=r"javac not found.*default-jdk-headless"):
        lcmjava.build_types_jar(tmp_path / "types.jar")
    assert not (tmp_path / "types.jar").exists()


def test_spy_rejects_an_unknown_port(capsys):
    assert motionctl.main(["spy", "--port", "nosuch", "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert "unknown port 'nosuch'" in err and "response 7670" in err


def lcm_url(line: str) -> str:
    """The --lcm-url argument of a printed lcm-spy command line."""
    found = re.search(r"--lcm-url '([^']+)'", line)
    assert found is not None, line
    return found.group(1)


@needs_jdk
def test_spy_dry_run_starts_one_lcm_spy_per_port(capsys):
    cfg = load_config()
    assert motionctl.main(["spy", "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"CLASSPATH={lcmjava.TYPES_JAR}"
    assert jar_classes(lcmjava.TYPES_JAR) == STRUCTS
    spy = str(lcmjava.lcm_tool("lcm-spy"))
    urls = [lcm_url(line) for line in lines[1:]]
    assert all(line.startswith(spy + " ") for line in lines[1:])
    assert urls == [cfg.lcm.url(port) for port in cfg.lcm.ports]

    assert motionctl.main(["spy", "--dry-run", "--port", "response"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and f"'{cfg.lcm.url('response')}'" in lines[1]


def test_spy_needs_a_display(monkeypatch, capsys):
    if MISSING:
        pytest.skip(f"no {', '.join(MISSING)} on PATH")
    monkeypatch.delenv("DISPLAY", raising=False)
    assert motionctl.main(["spy"]) == 1
    assert "DISPLAY is not set" in capsys.readouterr().err


@pytest.mark.udpm
@needs_jdk
def test_spy_starts_lcm_spy_with_the_types_on_every_port(spy_baseline):
    """The real launch path: three lcm-spy processes on the config's URLs, each
    finding every type. A headless JVM stops each at its window (exit 1),
    which motionctl reports per port."""
    cfg = load_config()
    env = dict(os.environ, DISPLAY=":99", LCM_JVM_OPT=HEADLESS)
    env.pop("CLASSPATH", None)
    proc = subprocess.run([sys.executable, "-m", "controller.cli.motionctl", "spy"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert found_types(proc.stdout) == [spy_baseline + len(STRUCTS)] * len(cfg.lcm.ports), out
    for port in cfg.lcm.ports:
        url = cfg.lcm.url(port)
        assert f"lcm-spy on {url} ({port} port), pid" in proc.stdout
        assert f"lcm-spy on {url} ({port} port) exited with status 1" in proc.stderr
