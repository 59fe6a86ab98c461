"""`motionctl joint-check` (controller/cli/joint_check_cmd.py): the verdict
on its readings, and a run against motiond's joint-space sim."""
from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.cli.joint_check_cmd import judge

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


@pytest.mark.udpm
def test_joint_check_moves_one_joint_through_mode_15_and_reads_it_back() -> None:
    daemon = subprocess.Popen([sys.executable, "-m", "controller.cli.motiond", "--sim", "joint"], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        # Unpowered, the joint sim's legs splay under the body's weight until
        # the belly rests (FL_abad to its +0.68 limit, 0.4 s after the daemon
        # starts): inwards is the way that is free whenever this reads it.
        out = motionctl("joint-check", "FL_abad", "--degrees", "-4")
        assert out.returncode == 0, out.stdout + out.stderr
        assert "commanded -4.0 deg, measured -4.0 deg" in out.stdout
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
