"""The Python client library (controller/client/) and the examples written on
it (examples/python/), against motiond on the simulated CyberDog 2 over
udpm; judged on the simulator's ground truth (sim_state)."""
from __future__ import annotations

import math
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from live import LYING_Z, ROOT, STANDING_Z, Truth, live_robot, sim_rate

from controller.client import Refused, Robot

pytestmark = pytest.mark.udpm


@pytest.fixture
def truth(tmp_path: Path) -> Iterator[Truth]:
    with live_robot(tmp_path) as t:
        yield t


def test_a_robot_stands_walks_turns_moves_to_a_goal_and_lies_down_on_leaving(truth: Truth) -> None:
    with Robot() as robot:
        with pytest.raises(Refused, match=r"mode 21 gait 5 refused: (OFF|PURE_DAMPER) cannot switch to POSE_CTRL "
                                          r"\(transition table\)"):
            robot.send(21, 5, pos_des=[0.0, 0.0, 0.2])      # not standing: the daemon's own reason
        robot.stand()
        assert robot.state is not None and (robot.state.mode, robot.state.progress) >= (12, 95)
        assert truth.states[-1][3] > STANDING_Z
        # Judged per simulated second: a host that runs the simulator slower
        # than the clock gives the 3 s walk less simulated time, not a slower gait.
        before = truth.states[-1]
        robot.walk(vx=0.3, seconds=3.0)                    # ends standing (mode 12)
        assert robot.state is not None and robot.state.mode == 12
        after = truth.states[-1]
        vx = sim_rate(before, after, 1)
        assert 0.5 / 3 < vx < 1.2 / 3, f"walked {after[1] - before[1]:.2f} m in {after[5] - before[5]:.2f} s at 0.3 m/s"
        before = truth.states[-1]
        robot.walk(wz=0.5, seconds=2.0)
        after = truth.states[-1]
        wz = sim_rate(before, after, 4)
        assert 0.5 / 2 < wz < 1.4 / 2, \
            f"turned {wz * (after[5] - before[5]):.2f} rad in {after[5] - before[5]:.2f} s at 0.5 rad/s"
        start = truth.states[-1]
        end_odometry = robot.goal_move(0.5, timeout=20.0)
        now = truth.states[-1]
        assert math.hypot(now[1] - start[1], now[2] - start[2]) == pytest.approx(0.5, abs=0.1)
        assert end_odometry is not None and robot.status is not None and robot.status.timeouts == 0
    time.sleep(0.5)
    assert truth.states[-1][3] < LYING_Z                   # leaving the block laid it down


def test_the_basic_motion_example_runs_as_written(truth: Truth) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / "basic_motion.py")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "standing: State(mode=12" in done.stdout
    xs = [s[1] for s in truth.states]
    assert max(xs) - xs[0] > 0.5                            # it trotted forward
    assert max(s[3] for s in truth.states) > STANDING_Z and truth.states[-1][3] < LYING_Z


def test_the_sequential_example_plays_a_sequence_file(truth: Truth) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / "sequential_motion.py"),
                           "config/sequences/stand_pose_lie.toml"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("step ") == 5 and "step 5: mode 7 gait 1 -> State(mode=7, gait_id=1" in done.stdout
    assert max(s[3] for s in truth.states) > STANDING_Z and truth.states[-1][3] < LYING_Z
