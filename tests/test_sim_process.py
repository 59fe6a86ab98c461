"""The simulated robot as its own process (controller/service/sim_process.py,
`motionctl sim`): a robot bridge over LCM.

In process on a stub bus: what it does with good, bad and missing joint
commands. Over udpm in the test namespace: motiond without --sim stands the
MuJoCo robot up through it, driven by an official-style client, judged on the
sim_state ground truth it publishes.
"""
from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lcm
import numpy as np
import pytest
from harness import command

from controller import msgs
from controller.robot.angles import quat_to_rotation
from controller.robot.config import load_config
from controller.service.sim_process import COMMAND_TIMEOUT_S, SimProcess
from controller.sim.physics import PhysicsRobot

ROOT = Path(__file__).resolve().parent.parent
CFG = load_config()
CH = CFG.lcm.channels


class StubBus:
    def __init__(self) -> None:
        self.inbox: list[tuple[str, bytes]] = []
        self.sent: list[tuple[str, bytes]] = []
        self.subscribed: list[str] = []

    def subscribe(self, port: str, channel: str) -> None:
        self.subscribed.append(channel)

    def drain(self, ports: Sequence[str] | None = None) -> list[tuple[str, bytes]]:
        out, self.inbox = self.inbox, []
        return out

    def publish(self, port: str, channel: str, data: Any) -> None:
        self.sent.append((channel, bytes(data)))


def joint_cmd(q: np.ndarray, kp: float = 60.0, kd: float = 2.0, n: int | None = None) -> bytes:
    n = CFG.num_joints if n is None else n
    c = msgs.joint_command_t()
    c.num_joints = n
    c.position = list(q[:n])
    c.velocity = [0.0] * n
    c.kp = [kp] * n
    c.kd = [kd] * n
    c.torque = [0.0] * n
    return c.encode()


def process() -> tuple[SimProcess, StubBus, PhysicsRobot]:
    robot = PhysicsRobot(CFG)
    bus = StubBus()
    return SimProcess(CFG, robot, bus), bus, robot  # type: ignore[arg-type]  # the stub has the Bus calls used


def test_publishes_the_sensors_and_the_ground_truth_every_tick() -> None:
    sim, bus, _ = process()
    assert bus.subscribed == [CH["joint_cmd"]]
    for k in range(10):
        sim.tick(k * 2_000_000)
    channels = [c for c, _ in bus.sent]
    for name in ("joint_state", "imu", "sim_state"):
        assert channels.count(CH[name]) == 10


def test_follows_the_newest_joint_cmd_and_refuses_bad_ones() -> None:
    sim, bus, robot = process()
    stand = CFG.poses["fold"] + 0.3
    bus.inbox = [(CH["joint_cmd"], joint_cmd(CFG.poses["fold"])), (CH["joint_cmd"], joint_cmd(stand)),
                 (CH["joint_cmd"], b"\x00garbage"), (CH["joint_cmd"], joint_cmd(stand, n=6)),
                 (CH["joint_cmd"], joint_cmd(np.full(CFG.num_joints, np.nan)))]
    sim.tick(0)
    assert sim.commands == 2 and sim.rejected == 3
    assert np.array_equal(sim.q_des, np.asarray(stand, dtype=np.float32))
    for k in range(1, 40):         # 80 ms: within the timeout, it holds the last good command
        sim.tick(k * 2_000_000)
    assert np.abs(robot.q - stand).max() < np.abs(robot.q - CFG.poses["fold"]).max()


def test_goes_limp_without_joint_cmd() -> None:
    sim, bus, robot = process()
    bus.inbox = [(CH["joint_cmd"], joint_cmd(CFG.poses["fold"], kp=80.0))]
    sim.tick(0)
    assert not sim._limp(0)
    assert sim._limp(int(COMMAND_TIMEOUT_S * 1e9) + 1)
    for k in range(1, 200):
        sim.tick(k * 2_000_000)
    assert np.abs(robot.tau).max() == 0.0           # no torque once the host went quiet


class Listener:
    """Everything on the joint port's sim_state, decoded."""

    def __init__(self) -> None:
        self.lc = lcm.LCM(CFG.lcm.url("joint"))
        self.states: list[msgs.sim_state_t] = []
        self.imu = 0
        self.lc.subscribe(CH["sim_state"], lambda _c, d: self.states.append(msgs.sim_state_t.decode(d)))
        self.lc.subscribe(CH["imu"], lambda _c, _d: setattr(self, "imu", self.imu + 1))
        self.running = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        while self.running:
            self.lc.handle_timeout(50)

    def close(self) -> None:
        self.running = False
        self.thread.join(1)


@pytest.mark.udpm
def test_motiond_stands_the_mujoco_robot_up_through_the_sim_process(tmp_path: Path) -> None:
    logs = {name: open(tmp_path / f"{name}.log", "w") for name in ("sim", "motiond")}  # noqa: SIM115
    sim = subprocess.Popen([sys.executable, "-m", "controller.cli.motionctl", "sim"], cwd=ROOT,
                           stdout=logs["sim"], stderr=logs["sim"])
    daemon = subprocess.Popen([sys.executable, "-m", "controller.cli.motiond"], cwd=ROOT,
                              stdout=logs["motiond"], stderr=logs["motiond"])
    listener = Listener()
    client = lcm.LCM(CFG.lcm.url("command"))
    try:
        deadline = time.monotonic() + 20
        while len(listener.states) < 50:
            assert sim.poll() is None and daemon.poll() is None, (tmp_path / "sim.log").read_text()
            assert time.monotonic() < deadline, "no sim_state from motionctl sim"
            time.sleep(0.05)
        start_height = listener.states[-1].position[2]
        msg = command(12, 0, 1)                    # the official examples: send, then heartbeat
        feet = sorted(f"{leg}_foot" for leg in CFG.legs)

        def standing(state: Any) -> bool:
            up = quat_to_rotation(state.quaternion)[2, 2]     # cos of the trunk's tilt
            return bool(abs(state.position[2] - CFG.stand_height) < 0.02 and up > np.cos(0.05)
                        and sorted(state.contacts) == feet)

        # Heartbeat until the body stands (the stand takes about 3 s; the deadline
        # only bounds a machine the two processes share with others).
        end = time.monotonic() + 15.0
        while time.monotonic() < end and not standing(listener.states[-1]):
            client.publish(CH["command"], msg.encode())
            time.sleep(0.1)
        for _ in range(10):                        # and it stays standing, heart-beaten
            client.publish(CH["command"], msg.encode())
            time.sleep(0.1)
        last = listener.states[-1]
        assert start_height < 0.15
        assert standing(last), (last.position, last.contacts)
        assert listener.imu >= len(listener.states) - 5          # imu every tick beside it
    finally:
        listener.close()
        for proc in (daemon, sim):
            proc.terminate()
            proc.wait(5)
        for f in logs.values():
            f.close()
    assert "joint_state_lost" not in (tmp_path / "motiond.log").read_text()
