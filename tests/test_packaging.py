"""Packaging: the sdist, the wheel built from it, and that wheel installed
into a fresh venv outside the checkout.

The wheel is built from the sdist (as `pip install motiond-*.tar.gz` or any
sdist-to-wheel builder does), with this venv's setuptools, cffi and lcm-gen
(`--no-build-isolation`), into tmp: so a file the sdist lacks fails the build
here, setup.py generates controller/msgs itself (the sdist has none), and no
stale `build/` of the checkout can sneak files in.

The fresh venv has no packages; pip installs the wheel's dependencies with
`--no-index` from a wheelhouse, because the suite runs in a network namespace
with no route to an index. `make test` fills it (`make wheelhouse`, outside
the namespace) at `<venv>/wheelhouse`; MOTIOND_WHEELHOUSE names another one.
The installed console scripts then run from a cwd outside the checkout and
must find the installed data (controller/data/), not the checkout's.

Only the last test opens sockets (`motiond --sim`): it is marked udpm.
"""
from __future__ import annotations

import configparser
import contextlib
import email.parser
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
NAME, VERSION = PYPROJECT["name"], PYPROJECT["version"]
WHEELHOUSE = Path(os.environ.get("MOTIOND_WHEELHOUSE") or Path(sys.prefix) / "wheelhouse")
DATA_DIRS = ("config", "gaits", "lcmtypes")   # installed as controller/data/<dir>
SOURCE_DIRS = ("csrc", *DATA_DIRS)
TIMEOUT_S = 180
# Build products and tool state in a checkout (see .gitignore); the generated
# bindings too, so that setup.py has to make them.
NOT_SOURCES = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
               "*.so", "*.o", "_kernel.c", ".kernel-built", "msgs")


def tree_files(directory: Path) -> set[str]:
    """Files under `directory`, relative to ROOT, as the sdist would carry
    them: no hidden files, no byte code."""
    return {p.relative_to(ROOT).as_posix() for p in directory.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
            and not any(part.startswith(".") for part in p.relative_to(directory).parts)
            and p.suffix not in (".pyc", ".pyo")}


def lcm_structs() -> set[str]:
    """The struct names of lcmtypes/*.lcm: one generated module each."""
    names = set()
    for path in (ROOT / "lcmtypes").glob("*.lcm"):
        names.update(re.findall(r"^\s*struct\s+(\w+)", path.read_text(), re.MULTILINE))
    return names


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that could point a child at the
    checkout or at pip settings of this machine."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PIP_") and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", COLUMNS="1000",
               **extra)
    return env


def ok(argv: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a command to exit 0, and keep its output."""
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=clean_env(), text=True,
                          capture_output=True, timeout=TIMEOUT_S, check=False)
    assert proc.returncode == 0, (f"{' '.join(map(str, argv))} exited {proc.returncode}\n"
                                  f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


@dataclass(frozen=True)
class Built:
    sdist: Path
    wheel: Path


@dataclass(frozen=True)
class Installed:
    venv: Path
    bin: Path
    package: Path      # the installed controller/
    cwd: Path          # an empty directory outside the checkout


@contextlib.contextmanager
def made_once(name: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, bool]]:
    """A directory to make `name` in, and whether it is made already. Under
    tests/run.sh (MOTIOND_TEST_SHARED) it is shared by the suite's passes:
    the socket-free pass makes it, and the udpm pass, with the one test
    here that opens sockets, finds it made (some 16 s of building each time).
    A make that fails leaves it unmade."""
    shared = os.environ.get("MOTIOND_TEST_SHARED")
    if not shared:
        yield tmp_path_factory.mktemp(name), False
        return
    where = Path(shared) / name
    with open(f"{where}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = where / ".made"
        if made.exists():
            yield where, True
            return
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir()
        yield where, False
        made.touch()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    with made_once("packaging", tmp_path_factory) as (tmp, made):
        assert not tmp.is_relative_to(ROOT)
        if not made:
            # The sdist is made from a copy without build products:
            # setuptools adds the files of an existing
            # motiond.egg-info/SOURCES.txt to a new sdist, so a stale one in
            # the checkout could hide a file MANIFEST.in misses.
            source = tmp / "checkout"
            shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCES))
            build_sdist = "import sys; from setuptools import build_meta as b; b.build_sdist(sys.argv[1])"
            ok([sys.executable, "-c", build_sdist, tmp / "sdist"], cwd=source)
            (sdist,) = (tmp / "sdist").glob("*.tar.gz")
            ok([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                "--no-cache-dir", "-w", tmp / "wheel", sdist], cwd=tmp)
        (sdist,) = (tmp / "sdist").glob("*.tar.gz")
        (wheel,) = (tmp / "wheel").glob("*.whl")
    return Built(sdist, wheel)


@pytest.fixture(scope="module")
def installed(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    if not any(WHEELHOUSE.glob("*.whl")):
        pytest.fail(f"no dependency wheels in {WHEELHOUSE}: run `make wheelhouse` (outside the "
                    "network namespace), or point MOTIOND_WHEELHOUSE at a directory of wheels "
                    "for the dependencies in pyproject.toml")
    with made_once("installed", tmp_path_factory) as (tmp, made):
        venv = tmp / "venv"
        python = venv / "bin" / "python"
        cwd = tmp / "elsewhere"
        if not made:
            # No pip, no site packages: this venv's pip installs into it (pip --python).
            ok([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp)
            ok([sys.executable, "-m", "pip", "--python", python, "install", "--no-index",
                "--find-links", WHEELHOUSE, built.wheel], cwd=tmp)
            cwd.mkdir()
        where = ok([python, "-c", "import controller; print(controller.__file__)"], cwd=tmp)
    return Installed(venv, venv / "bin", Path(where.stdout.strip()).parent, cwd)


# -- the sdist ---------------------------------------------------------------------------
def test_the_sdist_holds_what_the_wheel_is_built_from(built: Built) -> None:
    with tarfile.open(built.sdist) as tar:
        prefix = f"{NAME}-{VERSION}/"
        names = {m.name.removeprefix(prefix) for m in tar.getmembers() if m.isfile()}
    for directory in SOURCE_DIRS:
        want = tree_files(ROOT / directory)
        assert want, directory
        assert {n for n in names if n.startswith(f"{directory}/")} == want, directory
    for name in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md", "docs/CONFIG.md",
                 "controller/__init__.py", "controller/cli/motiond.py", "tests/netns.sh"):
        assert name in names
    # Generated and built files stay out: setup.py regenerates the bindings.
    assert not [n for n in names if n.startswith("controller/msgs/") or n.endswith((".so", ".pyc"))]


# -- the wheel -----------------------------------------------------------------------------
def test_the_wheel_holds_kernel_bindings_code_data_and_entry_points(built: Built) -> None:
    with zipfile.ZipFile(built.wheel) as whl:
        names = set(whl.namelist())
        info = f"{NAME}-{VERSION}.dist-info"
        entry_points = whl.read(f"{info}/entry_points.txt").decode()
        metadata = email.parser.Parser().parsestr(whl.read(f"{info}/METADATA").decode())
    assert {n.split("/")[0] for n in names} == {"controller", info}

    kernels = [n for n in names if re.fullmatch(r"controller/_kernel\.[\w.-]*(so|pyd)", n)]
    assert len(kernels) == 1, kernels

    msgs = {n for n in names if n.startswith("controller/msgs/")}
    assert lcm_structs() and msgs == {"controller/msgs/__init__.py",
                                      *(f"controller/msgs/{s}.py" for s in lcm_structs())}

    code = {p.relative_to(ROOT).as_posix() for p in (ROOT / "controller").rglob("*.py")
            if "msgs" not in p.relative_to(ROOT / "controller").parts}
    assert code <= names, sorted(code - names)

    for directory in DATA_DIRS:
        want = {f"controller/data/{n}" for n in tree_files(ROOT / directory)}
        got = {n for n in names if n.startswith(f"controller/data/{directory}/")}
        assert got == want, directory

    scripts = configparser.ConfigParser()
    scripts.read_string(entry_points)
    assert dict(scripts["console_scripts"]) == PYPROJECT["scripts"]
    assert sorted(metadata.get_all("Requires-Dist") or []) == sorted(
        [*PYPROJECT["dependencies"], *(f'{d}; extra == "{extra}"'
                                       for extra, deps in PYPROJECT["optional-dependencies"].items()
                                       for d in deps)])


# -- installed in a fresh venv, run from elsewhere ---------------------------------------------
def test_the_install_has_its_own_dependencies(installed: Installed) -> None:
    """Everything imports from the fresh venv: nothing from the checkout or
    from the venv that runs these tests."""
    probe = ("import json, controller, controller._kernel, controller.msgs, lcm, numpy, cffi, "
             "yaml, structlog; print(json.dumps({m.__name__: m.__file__ for m in "
             "(controller, controller._kernel, controller.msgs, lcm, numpy, cffi, yaml, structlog)}))")
    files = json.loads(ok([installed.bin / "python", "-c", probe], installed.cwd).stdout)
    outside = {m: f for m, f in files.items() if not Path(f).is_relative_to(installed.venv)}
    assert not outside


def test_installed_commands_find_the_installed_data(installed: Installed) -> None:
    data = installed.package / "data"
    default = data / "config" / "cyberdog2.yaml"
    assert default.is_file() and not default.is_relative_to(ROOT)

    version = ok([installed.bin / "motiond", "--version"], installed.cwd)
    assert version.stdout.strip() == f"motiond {VERSION}"
    usage = ok([installed.bin / "motiond", "--help"], installed.cwd).stdout
    assert usage.startswith("usage: motiond") and f"(default: {default})" in usage
    usage = ok([installed.bin / "motionctl", "--help"], installed.cwd).stdout
    assert usage.startswith("usage: motionctl") and "check-config" in usage

    check = ok([installed.bin / "motionctl", "check-config"], installed.cwd).stdout
    assert check.startswith(f"OK   {default}: robot cyberdog2, quadruped, 12 joints, 500 Hz, ")
    # Every shipped robot loads with its relative paths (FSM table, gaits,
    # motions, scripts, walk, .mof net) resolved in the installed layout.
    configs = [data / "config" / n for n in ("cyberdog2.yaml", "go2.yaml", "humanoid20.yaml", "nao22.yaml")]
    lines = ok([installed.bin / "motionctl", "check-config", *configs], installed.cwd).stdout
    config_verdicts = [line.split(":")[0] for line in lines.splitlines() if not line.startswith("     warning")]
    assert config_verdicts == [f"OK   {c}" for c in configs]      # warnings (tests/test_check_config.py) aside
    assert "../gaits/quadruped" in lines and "quintic_walk.yaml" in lines and ".mof net" in lines

    # validate picks the robot for a script from the installed configs.
    verdicts = ok([installed.bin / "motionctl", "validate", data / "config" / "scripts"],
                  installed.cwd).stdout
    assert verdicts.splitlines()[-1] == f"{len(list((data / 'config' / 'scripts').rglob('*.yaml')))} files, 0 failed"

    # lcm-spy's jar is built from the installed type files into a user cache.
    probe = "from controller.service import lcmjava; print(lcmjava.LCMTYPES_DIR); print(lcmjava.TYPES_JAR)"
    types_dir, jar = ok([installed.bin / "python", "-c", probe], installed.cwd).stdout.split()
    assert Path(types_dir) == data / "lcmtypes" and len(list(Path(types_dir).glob("*.lcm"))) == \
        len(list((ROOT / "lcmtypes").glob("*.lcm")))
    assert not Path(jar).is_relative_to(installed.venv) and Path(jar).name == "motiond-types.jar"


@pytest.mark.udpm
def test_installed_daemon_runs_the_sim_on_the_installed_config(installed: Installed) -> None:
    proc = ok([installed.bin / "motiond", "--sim", "--ticks", "50"], installed.cwd)
    events = [json.loads(line) for line in (proc.stdout + proc.stderr).splitlines()
              if line.startswith("{")]
    start = [e for e in events if e["event"] == "start"]
    assert len(start) == 1
    assert start[0]["config"] == str(installed.package / "data" / "config" / "cyberdog2.yaml")
    assert start[0]["version"] == VERSION and start[0]["sim"] == "physics"
    assert [e["ticks"] for e in events if e["event"] == "shutdown"] == [50]
