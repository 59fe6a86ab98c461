"""Java side of the LCM types: the jar lcm-spy needs to decode motiond's traffic.

lcm-spy decodes a message only when a class with the message's fingerprint
is on its class path. This module finds the lcm wheel's tools (lcm-gen,
lcm-spy, lcm.jar), and builds `build/lcmtypes/motiond-types.jar` from every
`.lcm` file in lcmtypes/: lcm-gen --java, javac against lcm.jar, jar. The jar
is rebuilt when it is missing or older than any input (a type file, the
lcmtypes directory itself, which changes when a file is removed, or lcm.jar).

Runs programs and writes files; opens no sockets.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from controller.robot.resources import BUILD_DIR, LCMTYPES_DIR

TYPES_JAR = BUILD_DIR / "lcmtypes" / "motiond-types.jar"
JDK_PACKAGE = "default-jdk-headless"   # Debian/Ubuntu: javac, jar and java


class LcmJavaError(RuntimeError):
    """A tool or file the Java build or lcm-spy needs is missing, or a step failed."""


def lcm_prefix() -> Path:
    """Where the lcm wheel keeps bin/, lib/, include/ and share/java/ (site-packages).

    Found from the `lcm` package's location without importing it, so no
    native library is loaded just to find a path.
    """
    spec = importlib.util.find_spec("lcm")
    if spec is None or spec.origin is None:
        raise LcmJavaError("the lcm Python package is not installed (pip install 'lcm>=1.5')")
    return Path(spec.origin).resolve().parent.parent


def lcm_jar() -> Path:
    jar = lcm_prefix() / "share" / "java" / "lcm.jar"
    if not jar.is_file():
        raise LcmJavaError(f"{jar} not found: the lcm wheel (lcm>=1.5) ships lcm.jar there; "
                           "reinstall it with pip install --force-reinstall 'lcm>=1.5'")
    return jar


def lcm_tool(name: str) -> Path:
    """One of the wheel's programs: lcm-gen (native) or lcm-spy (a shell script)."""
    tool = lcm_prefix() / "bin" / name
    if not os.access(tool, os.X_OK):
        raise LcmJavaError(f"{tool} not found: the lcm wheel (lcm>=1.5) ships {name} there")
    return tool


def java_tool(name: str) -> str:
    """The path of a JDK program (javac, jar, java) on PATH, or a message naming the package."""
    found = shutil.which(name)
    if found is None:
        raise LcmJavaError(f"{name} not found on PATH: install a Java development kit "
                           f"(Debian/Ubuntu: sudo apt-get install -y {JDK_PACKAGE})")
    return found


def lcm_files(lcm_dir: Path = LCMTYPES_DIR) -> list[Path]:
    files = sorted(lcm_dir.glob("*.lcm"))
    if not files:
        raise LcmJavaError(f"no .lcm files in {lcm_dir}")
    return files


def jar_is_stale(jar: Path, lcm_dir: Path = LCMTYPES_DIR) -> bool:
    if not jar.is_file():
        return True
    inputs = [lcm_dir, *lcm_files(lcm_dir), lcm_jar()]
    newest = max(p.stat().st_mtime_ns for p in inputs)
    return jar.stat().st_mtime_ns < newest


def types_jar(jar: Path = TYPES_JAR, lcm_dir: Path = LCMTYPES_DIR, *, force: bool = False) -> Path:
    """The jar of every type in `lcm_dir`, built first if missing or stale."""
    if force or jar_is_stale(jar, lcm_dir):
        build_types_jar(jar, lcm_dir)
    return jar


def build_types_jar(jar: Path = TYPES_JAR, lcm_dir: Path = LCMTYPES_DIR) -> None:
    """lcm-gen --java, javac, jar; the jar is replaced in one rename, so a
    concurrent reader never sees half a jar."""
    sources = lcm_files(lcm_dir)
    javac, jar_tool = java_tool("javac"), java_tool("jar")
    classpath = lcm_jar()
    lcm_gen = lcm_tool("lcm-gen")
    jar.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lcmtypes-", dir=jar.parent) as tmp:
        src, classes, out = Path(tmp, "src"), Path(tmp, "classes"), Path(tmp, jar.name)
        _run([lcm_gen, "--java", "--jpath", src, *sources], "lcm-gen")
        java_files = sorted(src.rglob("*.java"))
        if not java_files:
            raise LcmJavaError(f"lcm-gen wrote no Java files for {lcm_dir}")
        _run([javac, "-nowarn", "-encoding", "UTF-8", "-cp", classpath, "-d", classes,
              *java_files], "javac")
        _run([jar_tool, "cf", out, "-C", classes, "."], "jar")
        os.replace(out, jar)


def _run(argv: list[str | Path], what: str) -> None:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()
        raise LcmJavaError(f"{what} failed (exit {proc.returncode}): {detail}")
