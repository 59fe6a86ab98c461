"""`motionctl view` (controller/service/view.py): MuJoCo's viewer on a
running simulator, on a virtual screen (Xvfb, Debian package `xvfb`, which
`make` installs), with `motionctl sim` publishing sim_state in the test
namespace; a screenshot of the screen shows the robot. Without a display it
says so and exits 1."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import ImageGrab

ROOT = Path(__file__).resolve().parent.parent
DISPLAY = ":93"


def motionctl(*args: str, env: dict[str, str] | None = None, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "controller.cli.motionctl", *args], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_view_without_a_display_says_so() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = motionctl("view", env=env)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "no display" in err and "motionctl render" in err


@pytest.mark.udpm
def test_view_shows_the_running_simulator_on_a_virtual_screen() -> None:
    xvfb = shutil.which("Xvfb")
    assert xvfb, "Xvfb is missing: sudo apt-get install -y xvfb (make installs it when root)"
    screen = subprocess.Popen([xvfb, DISPLAY, "-screen", "0", "800x600x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sim = motionctl("sim")
    env = {**os.environ, "DISPLAY": DISPLAY}
    viewer = None
    try:
        # Xvfb is ready once its socket exists (a fixed 1 s was too short on a
        # busy CI VM: "Failed to open display").
        ready = Path(f"/tmp/.X11-unix/X{DISPLAY[1:]}")
        deadline = time.monotonic() + 15
        while not ready.exists():
            assert screen.poll() is None and time.monotonic() < deadline, "Xvfb should start"
            time.sleep(0.1)
        time.sleep(0.2)
        viewer = motionctl("view", "--seconds", "6", env=env)
        shot = None
        end = time.monotonic() + 30
        while time.monotonic() < end and viewer.poll() is None:
            time.sleep(0.5)
            image = np.asarray(ImageGrab.grab(xdisplay=DISPLAY).convert("RGB")).astype(int)
            robot = (image[..., 2] - image[..., 0] > 30) & (image[..., 2] < 200)
            if image.std() > 10 and robot.sum() > 200:
                shot = image
                break
        out, err = viewer.communicate(timeout=30)
        assert shot is not None, f"the screen stayed blank or showed no robot; viewer said: {err}"
        assert viewer.returncode == 0, err
        assert "viewer closed after" in out
    finally:
        for proc in (viewer, sim, screen):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(10)
