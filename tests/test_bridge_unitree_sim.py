"""The Go2 bridge against Unitree's own simulator (../shared/peers/
unitree_mujoco, unmodified, run under Xvfb from the peers' venv that `make
peers` builds): motiond --bridge unitree_go2 stands the simulator's Go2 up
and lies it down for a CyberDog 2 client, judged on the simulator's own
rt/sportmodestate. DDS stays on the loopback of the test's network namespace
(config/go2_unitree_sim.yaml: interface lo)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import lcm
import pytest
from harness import command

from controller import msgs
from controller.bridges.dds import use_interface
from controller.bridges.status import ACTIVE
from controller.robot.config import load_config
from controller.robot.resources import CONFIG_DIR, DATA_ROOT

pytestmark = pytest.mark.udpm

ROOT = Path(__file__).resolve().parent.parent
PEER = (DATA_ROOT / "../shared/peers/unitree_mujoco/simulate_python").resolve()
PEERS_PYTHON = Path(os.environ.get("MOTIOND_PEERS_PYTHON", ROOT / ".venv-peers" / "bin" / "python"))
CONFIG = CONFIG_DIR / "go2_unitree_sim.yaml"
CFG = load_config(CONFIG)
CH = CFG.lcm.channels
STANDING_Z = 0.30      # m: the simulator's body (its IMU site) over the floor, stood (0.325)
LYING_Z = 0.16         # m: lying (0.117 at rest)


def kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class Client:
    """A CyberDog 2 client on LCM, and a listener on the simulator's DDS."""

    def __init__(self) -> None:
        use_interface(CFG.bridge.interface)
        from cyclonedds.domain import DomainParticipant
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic

        from controller.bridges.unitree_idl import SportModeState_
        self.dp = DomainParticipant(CFG.bridge.domain)
        self.sport = DataReader(self.dp, Topic(self.dp, "rt/sportmodestate", SportModeState_))
        self.cmd = lcm.LCM(CFG.lcm.url("command"))
        self.rx = lcm.LCM(CFG.lcm.url("joint"))
        self.rx.subscribe(CH["bridge_status"], self._on_bridge)
        self.bridge: msgs.bridge_status_t | None = None
        self.z: list[tuple[float, float]] = []       # (monotonic s, z)
        self.life_count = 0
        self.last: bytes | None = None
        self.running = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        while self.running:
            self.rx.handle_timeout(20)
            for s in self.sport.take(N=64):
                self.z.append((time.monotonic(), float(s.position[2])))

    def _on_bridge(self, _ch: str, data: bytes) -> None:
        self.bridge = msgs.bridge_status_t.decode(data)

    def send(self, mode: int, gait: int = 0) -> None:
        self.life_count += 1
        self.last = command(mode, gait, self.life_count, 0).encode()
        self.cmd.publish(CH["command"], self.last)

    def hold(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.last is not None:
                self.cmd.publish(CH["command"], self.last)
            time.sleep(0.1)

    def heights(self, since: float) -> list[float]:
        return [z for t, z in self.z if t >= since]


@pytest.fixture
def go2() -> Iterator[Client]:
    if not PEER.is_dir():
        pytest.fail(f"Unitree's simulator is not at {PEER} (the peers beside the repository)")
    if not PEERS_PYTHON.is_file():
        pytest.fail(f"no {PEERS_PYTHON}: run `make peers` (the simulator's own venv)")
    xvfb = shutil.which("xvfb-run")
    if xvfb is None:
        pytest.fail("xvfb-run is missing: apt-get install -y xvfb (make does it as root)")
    # Its viewer renders in software: a small screen and one render thread
    # leave the cores to its physics and to motiond (it is not modified).
    env = {**os.environ, "LP_NUM_THREADS": "1"}
    sim = subprocess.Popen([xvfb, "-a", "-s", "-screen 0 400x300x24", str(PEERS_PYTHON), "unitree_mujoco.py"],
                           cwd=PEER, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    daemon = subprocess.Popen([sys.executable, "-m", "controller.cli.motiond", "--config", str(CONFIG),
                               "--bridge", "unitree_go2"], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, start_new_session=True)
    client = Client()
    try:
        yield client
    finally:
        client.running = False
        client.thread.join(timeout=2)
        kill(daemon)
        kill(sim)
        assert daemon.stderr is not None
        log = daemon.stderr.read().decode(errors="replace")
        faults = [line for line in log.splitlines() if '"FAULT"' in line]
        assert not faults, f"the bridge faulted: {faults[:3]}"


def test_a_cyberdog2_client_stands_and_lies_down_unitrees_simulated_go2(go2: Client) -> None:
    end = time.monotonic() + 30.0
    while not (go2.bridge is not None and go2.bridge.state == ACTIVE and go2.z):
        assert time.monotonic() < end, f"the bridge is not ACTIVE: {go2.bridge and go2.bridge.reason}"
        time.sleep(0.1)
    assert go2.z[-1][1] < LYING_Z                  # the simulator starts with the Go2 lying
    go2.send(12)
    go2.hold(4.0)
    assert go2.z[-1][1] > STANDING_Z, f"not stood: z {go2.z[-1][1]:.3f}"
    start = time.monotonic()
    go2.hold(2.0)
    held = go2.heights(start)
    assert len(held) > 50 and min(held) > STANDING_Z      # stands still, no fall
    go2.send(7)
    go2.hold(4.0)
    assert go2.z[-1][1] < LYING_Z
    assert go2.bridge is not None and go2.bridge.state == ACTIVE and go2.bridge.commands_sent > 2000
