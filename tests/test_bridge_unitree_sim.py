"""The Go2 bridge against Unitree's own simulator (../shared/peers/
unitree_mujoco, unmodified, run under Xvfb from the peers' venv that `make
peers` builds): motiond --bridge unitree_go2 drives the simulator's Go2 for
a CyberDog 2 client: stand, trot 0.5 m/s for 5 s, turn, lie down, judged on
the simulator's own rt/sportmodestate. DDS stays on the loopback of the
test's network namespace (config/go2_unitree_sim.yaml: interface lo). The
simulator and motiond each get a core of their own (taskset), as the
config's comment says; the trot goes backward, as the simulator's scene has
a bar 8 cm high 1.1 m ahead of the robot and stairs beyond (issue 41's
ground, not this test's)."""
from __future__ import annotations

import gc
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import lcm
import pytest
from harness import command, idle_software_renderer, pin, stop_group

from controller import msgs
from controller.bridges.dds import use_interface
from controller.bridges.status import ACTIVE
from controller.robot.config import load_config
from controller.robot.resources import CONFIG_DIR, DATA_ROOT

pytestmark = [pytest.mark.udpm, pytest.mark.realtime]

ROOT = Path(__file__).resolve().parent.parent
PEER = (DATA_ROOT / "../shared/peers/unitree_mujoco/simulate_python").resolve()
PEERS_PYTHON = Path(os.environ.get("MOTIOND_PEERS_PYTHON", ROOT / ".venv-peers" / "bin" / "python"))
CONFIG = CONFIG_DIR / "go2_unitree_sim.yaml"
CFG = load_config(CONFIG)
CH = CFG.lcm.channels
STANDING_Z = 0.30      # m: the simulator's body (its IMU site) over the floor, stood (0.325)
LYING_Z = 0.16         # m: lying (0.117 at rest)
TROT_VX = -0.5         # m/s, backward: the scene's obstacles are ahead
TURN_WZ = 0.5          # rad/s


class Client:
    """A CyberDog 2 client on LCM, and a listener on the simulator's DDS."""

    def __init__(self) -> None:
        use_interface(CFG.bridge.interface)
        from cyclonedds.domain import DomainParticipant
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic

        from controller.bridges.unitree_idl import LowState_, SportModeState_
        self.dp = DomainParticipant(CFG.bridge.domain)
        self.sport = DataReader(self.dp, Topic(self.dp, "rt/sportmodestate", SportModeState_))
        # The heading: the simulator's IMU (its sportmodestate carries no attitude).
        self.low = DataReader(self.dp, Topic(self.dp, "rt/lowstate", LowState_))
        self.yaw: list[tuple[float, float]] = []      # (monotonic s, yaw)
        self.cmd = lcm.LCM(CFG.lcm.url("command"))
        self.rx = lcm.LCM(CFG.lcm.url("joint"))
        self.rx.subscribe(CH["bridge_status"], self._on_bridge)
        self.bridge: msgs.bridge_status_t | None = None
        self.z: list[tuple[float, float]] = []       # (monotonic s, z)
        self.pose: list[tuple[float, float]] = []     # (monotonic s, x)
        self.life_count = 0
        self.last: bytes | None = None
        self.sim_log: IO[bytes] | None = None
        self.daemon_log: IO[bytes] | None = None
        self.running = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        while self.running:
            self.rx.handle_timeout(20)
            for s in self.sport.take(N=64):
                now = time.monotonic()
                self.z.append((now, float(s.position[2])))
                self.pose.append((now, float(s.position[0])))
            for low in self.low.take(N=64):
                w, x, y, z = (float(c) for c in low.imu_state.quaternion)
                self.yaw.append((time.monotonic(), math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))))

    def _on_bridge(self, _ch: str, data: bytes) -> None:
        self.bridge = msgs.bridge_status_t.decode(data)

    def send(self, mode: int, gait: int = 0, **fields: object) -> None:
        self.life_count += 1
        self.last = command(mode, gait, self.life_count, 0, **fields).encode()
        self.cmd.publish(CH["command"], self.last)

    def hold(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.last is not None:
                self.cmd.publish(CH["command"], self.last)
            time.sleep(0.1)

    def close_dds(self) -> None:
        """Delete this process's DDS entities: left alive, cyclonedds' threads
        cost the tests after this one their real-time margin (the 10 kHz
        flood's tick rate fell to 377 Hz behind it)."""
        self.sport = self.low = self.dp = None
        gc.collect()

    def sim_said(self) -> str:
        """The end of what the simulator printed, for a failure's message."""
        if self.sim_log is None:
            return ""
        self.sim_log.seek(0)
        return "Unitree's simulator said:\n" + self.sim_log.read().decode(errors="replace")[-1500:]

    def daemon_said(self) -> str:
        """motiond's log lines but debug, the last 25, for a failure's message."""
        if self.daemon_log is None:
            return ""
        fd = self.daemon_log.fileno()       # pread: the daemon shares the file's offset
        text = os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")
        lines = [line for line in text.splitlines() if '"debug"' not in line]
        return "motiond said:\n" + "\n".join(lines[-25:])

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
    # Its viewer renders in software: a small screen, one render thread, at
    # the idle scheduling class (below), leave the core to its physics.
    env = {**os.environ, "LP_NUM_THREADS": "1"}
    with tempfile.TemporaryFile() as sim_log, tempfile.TemporaryFile() as daemon_log:
        sim = daemon = None
        client: Client | None = None
        try:
            sim = subprocess.Popen([*pin(1), xvfb, "-a", "-s", "-screen 0 400x300x24", str(PEERS_PYTHON),
                                    "unitree_mujoco.py"],
                                   cwd=PEER, env=env, stdout=sim_log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
            daemon = subprocess.Popen([*pin(0), sys.executable, "-m", "controller.cli.motiond", "--config",
                                       str(CONFIG), "--bridge", "unitree_go2"], cwd=ROOT,
                                      stdout=subprocess.DEVNULL, stderr=daemon_log, start_new_session=True)
            client = Client()
            # Its viewer's software renderer draws with the time its physics
            # and its publishers leave (tests/harness.py idle_software_renderer).
            if not idle_software_renderer(sim.pid):
                print("no llvmpipe thread found in Unitree's simulator: its viewer draws at full priority")
            client.sim_log = sim_log
            client.daemon_log = daemon_log
            yield client
        finally:
            if client is not None:
                client.running = False
                client.thread.join(timeout=2)
                client.close_dds()
            for proc in (daemon, sim):
                if proc is not None:
                    stop_group(proc)
            daemon_log.seek(0)
            log = daemon_log.read().decode(errors="replace")
            faults = [line for line in log.splitlines() if '"FAULT"' in line]
            assert not faults, f"the bridge faulted: {faults[:3]}"


def test_a_cyberdog2_client_stands_trots_turns_and_lies_down_unitrees_simulated_go2(go2: Client) -> None:
    end = time.monotonic() + 30.0
    while not (go2.bridge is not None and go2.bridge.state == ACTIVE and go2.z):
        assert time.monotonic() < end, \
            f"the bridge is not ACTIVE: {go2.bridge and go2.bridge.reason}\n{go2.sim_said()}"
        time.sleep(0.1)
    # Unitree's simulator drops the Go2 from its spawn height (0.48 m): it
    # lies on the floor within a second or two of starting. The bridge can be
    # ACTIVE before (the daemon starts in under a second).
    end = time.monotonic() + 10.0
    while go2.z[-1][1] >= LYING_Z:
        assert time.monotonic() < end, f"the simulated Go2 did not come to lie: z {go2.z[-1][1]:.3f}"
        time.sleep(0.1)
    go2.send(12)
    # Standing takes about 2 s of the simulator's time; it keeps the clock's
    # pace only where the host is fast enough, so the wait is the harness's
    # patience, not a bound.
    end = time.monotonic() + 12.0
    while go2.z[-1][1] <= STANDING_Z and time.monotonic() < end:
        go2.hold(0.2)
    go2.hold(1.0)
    assert go2.z[-1][1] > STANDING_Z, f"not stood: z {go2.z[-1][1]:.3f}"
    start = time.monotonic()
    go2.hold(2.0)
    held = go2.heights(start)
    assert len(held) > 50 and min(held) > STANDING_Z      # stands still, no fall
    # Trot 5 s; the speed over its last 3 s, on the simulator's own position.
    go2.send(11, 3, vel_des=[TROT_VX, 0.0, 0.0], step_height=[0.06, 0.06])
    start = time.monotonic()
    go2.hold(2.0)
    t0, x0 = go2.pose[-1]
    go2.hold(3.0)
    t1, x1 = go2.pose[-1]
    vx = (x1 - x0) / (t1 - t0)
    assert abs(vx - TROT_VX) <= 0.1 + 0.2 * abs(TROT_VX), f"trot at {vx:.2f} m/s\n{go2.daemon_said()}\n{go2.sim_said()}"
    assert min(go2.heights(start)) > STANDING_Z - 0.04, "the body sagged or fell while trotting"
    # Turn in place 4.5 s; the yaw rate over its last 3 s (over 2 s it
    # varied from 0.29 to 0.42 rad/s from run to run).
    go2.send(11, 3, vel_des=[0.0, 0.0, TURN_WZ], step_height=[0.06, 0.06])
    start = time.monotonic()
    go2.hold(1.5)
    ta, yaw_a = go2.yaw[-1]
    go2.hold(3.0)
    tb, yaw_b = go2.yaw[-1]
    wz = math.remainder(yaw_b - yaw_a, 2 * math.pi) / (tb - ta)
    assert abs(wz - TURN_WZ) <= 0.1 + 0.2 * TURN_WZ, f"turn at {wz:.2f} rad/s"
    assert min(go2.heights(start)) > STANDING_Z - 0.04
    go2.send(7)
    go2.hold(4.0)
    assert go2.z[-1][1] < LYING_Z
    assert go2.bridge is not None and go2.bridge.state == ACTIVE and go2.bridge.commands_sent > 5000
    print(f"Unitree's simulator: trot {vx:.3f} m/s (asked {TROT_VX}), turn {wz:.3f} rad/s (asked {TURN_WZ}), "
          f"bridge p99 {go2.bridge.forward_p99_us:.0f} us")
