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
from live import live_robot
from PIL import ImageGrab

ROOT = Path(__file__).resolve().parent.parent


def motionctl(*args: str, env: dict[str, str] | None = None, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "controller.cli.motionctl", *args], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_view_without_a_display_says_so() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = motionctl("view", env=env)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "no display" in err and "motionctl render" in err


def start_screen(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path, str]:
    """Xvfb on a display it picks free (-displayfd: two tests at once, in
    make test's parallel udpm pass, never share one), once a client can
    connect (a fixed 1 s, then waiting for its socket file, both still met
    "Failed to open display" in CI)."""
    xvfb = shutil.which("Xvfb")
    assert xvfb, "Xvfb is missing: sudo apt-get install -y xvfb (make installs it when root)"
    xvfb_log = tmp_path / "xvfb.log"
    read, write = os.pipe()
    screen = subprocess.Popen([xvfb, "-displayfd", str(write), "-screen", "0", "800x600x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=xvfb_log.open("w"), pass_fds=(write,))
    os.close(write)
    with os.fdopen(read) as told:
        number = told.readline().strip()      # written once the display is up; "" if Xvfb died
    assert number, f"Xvfb exited: {xvfb_log.read_text()}"
    display = f":{number}"
    deadline = time.monotonic() + 15
    while True:
        assert screen.poll() is None, f"Xvfb exited: {xvfb_log.read_text()}"
        try:
            ImageGrab.grab(xdisplay=display)
            return screen, xvfb_log, display
        except OSError:
            assert time.monotonic() < deadline, f"Xvfb did not accept clients: {xvfb_log.read_text()}"
            time.sleep(0.1)


def robot_on_screen(viewer: subprocess.Popen[str], seconds: float, display: str) -> bool:
    """A screenshot within `seconds` shows the robot (its blue-grey, in some 200 pixels)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and viewer.poll() is None:
        time.sleep(0.5)
        image = np.asarray(ImageGrab.grab(xdisplay=display).convert("RGB")).astype(int)
        robot = (image[..., 2] - image[..., 0] > 30) & (image[..., 2] < 200)
        if image.std() > 10 and robot.sum() > 200:
            return True
    return False


@pytest.mark.udpm
def test_view_shows_the_running_simulator_on_a_virtual_screen(tmp_path: Path) -> None:
    screen, xvfb_log, display = start_screen(tmp_path)
    sim = motionctl("sim")
    env = {**os.environ, "DISPLAY": display}
    viewer = None
    try:
        viewer = motionctl("view", "--seconds", "6", env=env)
        seen = robot_on_screen(viewer, 30, display)
        out, err = viewer.communicate(timeout=30)
        assert seen, (f"the screen stayed blank or showed no robot; viewer said: {err}; "
                                  f"Xvfb said: {xvfb_log.read_text()}")
        assert viewer.returncode == 0, err
        assert "viewer closed after" in out
    finally:
        for proc in (viewer, sim, screen):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(10)


# realtime: the trot lives on the real clock (the hold's heartbeat, the 500
# ms timeout) with a software-GL viewer beside it; beside another pass's
# process the robot once got 0.78 m, once 0 m, in 120 s (the daemon or its
# heartbeat starved, not the walk), and alone it walks 2 m in some 5 s.
@pytest.mark.udpm
@pytest.mark.realtime
def test_the_view_follows_the_robot_as_it_walks_2_m(tmp_path: Path) -> None:
    """The tracking camera keeps the robot in the picture once it has
    trotted 2 m away from where it stood (it once looked at the origin: its
    point, subtree_com, was never computed)."""
    screen, _, display = start_screen(tmp_path)
    env = {**os.environ, "DISPLAY": display, "XDG_RUNTIME_DIR": str(tmp_path)}
    viewer = None
    with live_robot(tmp_path) as truth:
        try:
            for argv in (["hold", "--start"], ["send", "--mode", "stand", "--wait"],
                         ["send", "--mode", "trot", "--vel", "0.5", "0", "0", "--wait"]):
                done = subprocess.run([sys.executable, "-m", "controller.cli.motionctl", *argv], cwd=ROOT,
                                      env=env, capture_output=True, text=True, timeout=60)
                assert done.returncode == 0, done.stdout + done.stderr
            # The trot takes ~5 s to get 2 m away here; the bound is only a
            # hang guard (CI's machine, with a software-GL viewer beside the
            # simulator, once needed more than 20 s). What is judged is the
            # picture once the robot is 2 m away, not how soon.
            viewer = motionctl("view", "--seconds", "150", env=env)
            start, end = time.monotonic(), time.monotonic() + 120
            while truth.states[-1][1] < 2.0:
                assert viewer.poll() is None, viewer.communicate()[1]
                assert time.monotonic() < end, (f"the robot did not get 2 m away in "
                                                f"{time.monotonic() - start:.0f} s (x {truth.states[-1][1]:.2f} m)")
                time.sleep(0.2)
            # A software-GL frame can take seconds on a loaded machine.
            assert robot_on_screen(viewer, 20, display), "2 m away the view shows no robot"
            # SIGTERM (or Ctrl-C) closes it cleanly: it once segfaulted, aborted
            # or hung past 10 s, GLFW torn down at exit under its render thread.
            viewer.terminate()
            _, err = viewer.communicate(timeout=10)
            assert viewer.returncode == 130, f"exit {viewer.returncode}: {err[-2000:]}"
        finally:
            subprocess.run([sys.executable, "-m", "controller.cli.motionctl", "hold", "--stop"], cwd=ROOT,
                           env=env, capture_output=True, timeout=10)
            for proc in (viewer, screen):
                if proc is not None and proc.poll() is None:
                    proc.terminate()
                    proc.wait(10)
