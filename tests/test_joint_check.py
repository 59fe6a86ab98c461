"""`motionctl joint-check` (controller/cli/joint_check_cmd.py): the verdict
on its readings, and a run against motiond's joint-space sim."""
from __future__ import annotations

import math
import re
import subprocess
import sys
import time
from pathlib import Path

import lcm
import pytest

from controller import msgs
from controller.cli.joint_check_cmd import judge
from controller.robot.config import load_config

ROOT = Path(__file__).resolve().parent.parent
DEG = math.radians(1.0)


def test_a_joint_that_follows_its_command_passes() -> None:
    v = judge("FR_hip", 5 * DEG, 0.8, 0.8 + 4.6 * DEG, 0.2 * DEG)
    assert v.ok and "the foot swings forward" in " ".join(v.lines)


def test_a_reading_against_the_command_fails() -> None:
    v = judge("FR_knee", 5 * DEG, 1.5, 1.5 - 4.0 * DEG, 0.0)
    assert not v.ok and "against the command" in v.lines[-1]


def test_a_joint_that_does_not_move_fails() -> None:
    v = judge("RL_abad", -4 * DEG, 0.0, -0.5 * DEG, 0.0)
    assert not v.ok and "barely moved" in v.lines[-1]
    assert "to the robot's right" in " ".join(v.lines)


def motionctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli.motionctl", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def settled(daemon: subprocess.Popen[bytes], patience_s: float = 20.0) -> None:
    """Wait until the daemon's joint_state has stopped changing (0.2 s apart)."""
    cfg = load_config()
    lc = lcm.LCM(cfg.lcm.url("joint"))
    last: list[list[float]] = []
    lc.subscribe(cfg.lcm.channels["joint_state"],
                 lambda _c, d: last.append(list(msgs.joint_state_t.decode(d).position)))
    end, before = time.monotonic() + patience_s, None
    while time.monotonic() < end:
        assert daemon.poll() is None, "motiond exited"
        lc.handle_timeout(200)
        if last:
            now = last[-1]
            if before is not None and max(abs(a - b) for a, b in zip(now, before)) < 1e-4:
                return
            before = now
            last.clear()
    raise AssertionError(f"the joints never settled in {patience_s} s")


@pytest.mark.udpm
def test_joint_check_moves_one_joint_through_mode_15_and_reads_it_back() -> None:
    daemon = subprocess.Popen([sys.executable, "-m", "controller.cli.motiond", "--sim", "joint"], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Unpowered, the joint sim's legs splay under the body's weight until
        # the belly rests (FL_abad to its +0.68 limit, 0.4 s after the daemon
        # starts): checked once they have, inwards, the way that is free.
        settled(daemon)
        out = motionctl("joint-check", "FL_abad", "--degrees", "-4")
        assert out.returncode == 0, out.stdout + out.stderr
        # The reading is taken on the real clock while the joint still
        # settles under the body's weight: within half a degree.
        measured = re.search(r"commanded -4\.0 deg, measured ([+-][0-9.]+) deg", out.stdout)
        assert measured and abs(float(measured.group(1)) + 4.0) <= 0.5, out.stdout
        assert "OK: the reading follows the command" in out.stdout
        # The sim starts folded, the knee at its limit: bending it more is refused, with the way out.
        out = motionctl("joint-check", "FL_knee", "--degrees", "5")
        assert out.returncode == 2 and "--degrees -5" in out.stdout
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)


def test_bad_arguments_are_refused_before_anything_is_sent() -> None:
    out = motionctl("joint-check", "FR_ankle")
    assert out.returncode == 2 and "not a joint" in out.stdout
    out = motionctl("joint-check", "FR_knee", "--degrees", "20")
    assert out.returncode == 2 and "within 8 degrees" in out.stdout
