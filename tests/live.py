"""A live motiond on the simulated robot for the udpm tests that drive it as
a user would (test_quickstart.py, test_python_client.py): the daemon in its
own process group, and the simulator's ground truth (sim_state) and the
daemon's controller_status as they come."""
from __future__ import annotations

import math
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import lcm
from harness import stop_group

from controller import msgs
from controller.robot.config import load_config

ROOT = Path(__file__).resolve().parent.parent
CFG = load_config()
STANDING_Z, LYING_Z = 0.22, 0.12      # m, the trunk origin (standing ~0.28, lying ~0.08)


class Truth:
    """sim_state and controller_status, as they come."""

    def __init__(self) -> None:
        self.lc = lcm.LCM(CFG.lcm.url("joint"))
        self.lc.subscribe(CFG.lcm.channels["sim_state"], self._on_state)
        self.lc.subscribe(CFG.lcm.channels["status"], self._on_status)
        # t (this process's monotonic s), x, y, z, yaw, the simulator's own time (s):
        # speeds are judged per simulated second (a host that runs the
        # simulator slower than the clock slows the robot's clock, not its gait).
        self.states: list[tuple[float, float, float, float, float, float]] = []
        self.status: msgs.controller_status_t | None = None
        self.running = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        while self.running:
            self.lc.handle_timeout(50)

    def _on_state(self, _ch: str, data: bytes) -> None:
        s = msgs.sim_state_t.decode(data)
        w, x, y, z = s.quaternion
        yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        self.states.append((time.monotonic(), s.position[0], s.position[1], s.position[2], yaw, s.sim_time))

    def _on_status(self, _ch: str, data: bytes) -> None:
        self.status = msgs.controller_status_t.decode(data)

    def wait_sim(self, seconds: float, patience_s: float) -> float:
        """Wait until the simulator's clock has run `seconds` past its time
        now (at most patience_s on this process's clock: the harness's
        patience, not a bound) and return the monotonic time then."""
        end = time.monotonic() + patience_s
        while not self.states:
            assert time.monotonic() < end, "no sim_state"
            time.sleep(0.02)
        goal = self.states[-1][5] + seconds
        while self.states[-1][5] < goal:
            assert time.monotonic() < end, \
                f"the simulator ran {self.states[-1][5] - goal + seconds:.2f} of {seconds:g} s in {patience_s:g} s"
            time.sleep(0.02)
        return time.monotonic()

    def between(self, t0: float, t1: float) -> list[tuple[float, float, float, float, float, float]]:
        return [s for s in self.states if t0 <= s[0] <= t1]


def sim_rate(a: tuple[float, ...], b: tuple[float, ...], index: int) -> float:
    """How fast states[index] changed from state a to state b, per simulated
    second (a yaw's change taken the short way round)."""
    change = b[index] - a[index]
    if index == 4:
        change = math.remainder(change, 2 * math.pi)
    return change / (b[5] - a[5])


@contextmanager
def live_robot(tmp_path: Path) -> Iterator[Truth]:
    """motiond --sim physics, until it publishes its status; its ground truth."""
    with open(tmp_path / "motiond.log", "w") as log:
        daemon = subprocess.Popen([sys.executable, "-m", "controller.cli.motiond", "--sim", "physics"],
                                  cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    truth = Truth()
    try:
        end = time.monotonic() + 20
        while truth.status is None:
            assert daemon.poll() is None and time.monotonic() < end, (tmp_path / "motiond.log").read_text()
            time.sleep(0.05)
        yield truth
    finally:
        truth.running = False
        truth.thread.join(2)
        stop_group(daemon)
