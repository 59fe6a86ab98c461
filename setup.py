"""Build hook: generates the LCM bindings and compiles the C kernel.

pyproject.toml holds the metadata and says what goes into the wheel; this
file does the two build steps that are code:

* controller/msgs/ (git-ignored) is generated from lcmtypes/*.lcm with
  lcm-gen when it is missing or older than a .lcm file, so a clean checkout
  or an sdist (which ships lcmtypes/, not the generated modules) builds on
  its own. lcm-gen comes with the `lcm` wheel, a build requirement.
* the kernel is compiled by cffi in API mode (cffi_modules).
"""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
LCMTYPES = ROOT / "lcmtypes"
MSGS = ROOT / "controller" / "msgs"


def find_lcm_gen() -> str:
    """lcm-gen from the `lcm` wheel: next to this interpreter, in its scripts
    directory, or on PATH (pip's isolated build environment puts its own
    scripts directory there)."""
    name = "lcm-gen.exe" if os.name == "nt" else "lcm-gen"
    for directory in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        if (directory / name).is_file():
            return str(directory / name)
    found = shutil.which("lcm-gen")
    if found:
        return found
    sys.exit("setup.py: lcm-gen not found next to the Python interpreter or on PATH; "
             "it comes with the `lcm` package (pip install 'lcm>=1.5'), which is a "
             "build requirement of motiond")


def generate_msgs() -> None:
    """(Re)generate controller/msgs from lcmtypes/*.lcm, from scratch, so a
    removed type does not linger; as `make types` does."""
    sources = sorted(LCMTYPES.glob("*.lcm"))
    if not sources:
        return   # nothing to generate from; the package list will say what is missing
    stamp = MSGS / "__init__.py"
    if stamp.is_file() and all(stamp.stat().st_mtime >= s.stat().st_mtime for s in sources):
        return
    shutil.rmtree(MSGS, ignore_errors=True)
    lcm_gen = find_lcm_gen()
    subprocess.run([lcm_gen, "--python", "--ppath", str(ROOT / "controller"),
                    *map(str, sources)], check=True)
    if not stamp.is_file():
        sys.exit(f"setup.py: {lcm_gen} did not produce {stamp}")


generate_msgs()
setup(cffi_modules=["csrc/build_kernel.py:ffibuilder"])
