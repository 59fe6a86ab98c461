"""The README's quickstart, typed line by line: each line of its block run
as its own process, one second apart (a person reading the next line), on
motiond with the simulated CyberDog 2. Judged on the simulator's ground truth
(sim_state): the robot stands, trots forward, turns, lies down, and the
daemon never times out between the lines (the hold keeps the heartbeat)."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from live import LYING_Z, ROOT, STANDING_Z, Truth, live_robot, sim_rate

pytestmark = pytest.mark.udpm

GAP_S = 1.0


def quickstart() -> list[str]:
    """The README's quickstart lines, comments dropped."""
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- quickstart -->", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


@pytest.fixture
def robot(tmp_path: Path) -> Iterator[Truth]:
    with live_robot(tmp_path) as truth:
        yield truth


def test_the_readmes_quickstart_typed_line_by_line(robot: Truth, tmp_path: Path) -> None:
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)}       # this test's own hold
    lines = quickstart()
    assert [shlex.split(line)[1:3] for line in lines][:2] == [["hold", "--start"], ["send", "--mode"]]
    ran: list[tuple[str, float, str]] = []                        # line, when it ended, what it said
    lapses: list[int] = []                                        # the daemon's timeouts after each
    try:
        for line in lines:
            argv = shlex.split(line)
            assert argv[0] == ".venv/bin/motionctl", line
            done = subprocess.run([sys.executable, "-m", "controller.cli.motionctl", *argv[1:]], cwd=ROOT,
                                  env=env, capture_output=True, text=True, timeout=90)
            assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
            ran.append((line, time.monotonic(), done.stdout))
            lapses.append(robot.status.timeouts if robot.status is not None else -1)
            time.sleep(GAP_S)                                    # reading the next line
    finally:
        subprocess.run([sys.executable, "-m", "controller.cli.motionctl", "hold", "--stop"], cwd=ROOT, env=env,
                       capture_output=True, timeout=10)
    said = {line.split()[1] + " " + " ".join(line.split()[2:4]): out for line, _, out in ran}
    assert "hold started" in said["hold --start"]
    assert "done: RECOVERY_STAND (12) gait 0" in said["send --mode stand"]
    assert "through the hold" in said["send --mode stand"]

    def gap(i: int) -> list[tuple[float, float, float, float, float, float]]:
        return robot.between(ran[i][1], ran[i][1] + GAP_S)
    stand, trot, turn, lie = gap(1), gap(2), gap(3), gap(4)
    assert len(stand) > 50 and min(s[3] for s in stand) > STANDING_Z      # standing in the pause after it
    vx = sim_rate(trot[0], trot[-1], 1)
    assert abs(vx - 0.3) <= 0.1 + 0.2 * 0.3, f"trot at {vx:.2f} m/s"      # still trotting: held
    wz = sim_rate(turn[0], turn[-1], 4)
    assert abs(wz - 0.5) <= 0.1 + 0.2 * 0.5, f"turn at {wz:.2f} rad/s"
    assert min(s[3] for s in trot + turn) > STANDING_Z - 0.04             # no stumble
    assert max(s[3] for s in lie) < LYING_Z                               # lying
    assert robot.states[-1][3] < LYING_Z                                   # and after walk.toml too
    # No heartbeat lapsed while the hold ran (up to `hold --stop`, line 6).
    assert lapses[:5] == [0] * 5, (lapses, robot.status and robot.status.last_error)


def test_teleop_driven_by_a_key_stream_stands_trots_and_lies_down(robot: Truth) -> None:
    """`motionctl teleop` with its keys from a pipe (as a test drives a
    keyboard): 1 stands, www trots at 0.3 m/s, x lies down and quits."""
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli.motionctl", "teleop"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdin is not None

    def press(keys: str, then_s: float) -> float:
        """Type keys, then wait then_s of the simulator's time (a slow host
        runs it slower than the clock)."""
        assert proc.stdin is not None
        proc.stdin.write(keys)
        proc.stdin.flush()
        return robot.wait_sim(then_s, 20.0 * then_s) if then_s else time.monotonic()

    stood = press("1", 4.0)
    trotted = press("www", 4.0)
    press("x", 0.0)
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    assert proc.stdout is not None
    out = proc.stdout.read()
    assert "asked: LOCOMOTION gait 3 vx +0.30" in out and "teleop: done" in out
    assert min(s[3] for s in robot.between(stood - 0.5, stood)) > STANDING_Z
    trot = robot.between(trotted - 2.0, trotted)
    vx = sim_rate(trot[0], trot[-1], 1)
    assert abs(vx - 0.3) <= 0.1 + 0.2 * 0.3, f"trot at {vx:.2f} m/s"
    assert robot.states[-1][3] < LYING_Z
