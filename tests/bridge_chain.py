"""motiond, the CyberDog 2 bridge and the board emulator wired together on
one simulated clock, without sockets: each tick the board publishes, the
bridge takes it in and ticks, motiond steps on what the bridge gave it, and
its joint_cmd goes through the bridge to the board (arriving at the board's
next tick, as over the wire)."""
from __future__ import annotations

from typing import Any

import numpy as np

from controller import msgs
from controller.bridges.cyberdog2 import CyberDog2Bridge
from controller.core.controller import Controller
from controller.robot.config import Config, load_config
from controller.sim.cyberdog2_board import BoardEmulator

HEARTBEAT_TICKS = 50      # a client re-sends its command every 100 ms


class Chain:
    def __init__(self, cfg: Config | None = None) -> None:
        self.cfg = cfg or load_config()
        self.ctl = Controller(self.cfg)
        self.bridge = CyberDog2Bridge(self.cfg)
        self.board = BoardEmulator(self.cfg)
        self.ch = self.cfg.lcm.channels
        self.now_ns = 1_000_000_000
        self.tick_ns = int(round(1e9 / self.cfg.tick_hz))
        self.to_board: list[tuple[str, bytes]] = []
        self.sent_frames: list[tuple[int, bytes]] = []   # (tick time, motor_ctrl) the bridge sent
        self.to_motiond: list[tuple[str, bytes]] = []    # the last tick's
        self.life_count = 0
        self.heartbeat: bytes | None = None
        self.pending: list[tuple[str, bytes]] = []
        self.beating = True
        self.response: msgs.robot_control_response_lcmt | None = None
        self.z: list[float] = []      # ground truth trunk height per tick
        self.x: list[float] = []

    def send(self, mode: int, gait_id: int = 0, **fields: Any) -> None:
        self.life_count = (self.life_count + 1) % 128
        m = msgs.robot_control_cmd_lcmt()
        m.mode, m.gait_id, m.life_count = mode, gait_id, self.life_count
        for name, value in fields.items():
            current = getattr(m, name)
            if isinstance(current, list):
                value = [float(v) for v in value] + [0.0] * (len(current) - len(value))
            setattr(m, name, value)
        self.heartbeat = m.encode()
        self.pending.append((self.ch["command"], self.heartbeat))

    def tick(self) -> None:
        now = self.now_ns
        for _, channel, data in self.board.step(now, self.to_board):
            self.bridge.robot_packet(now, channel, data)
        self.to_board = []
        out = self.bridge.tick(now, now // 1000)
        for frame in out.to_robot:
            self._to_board(frame)
        self.to_motiond = out.to_motiond
        inbox = [(self.ch[key], data) for key, data in out.to_motiond]
        if self.pending:
            inbox += self.pending
            self.pending = []
        elif self.beating and self.heartbeat is not None and self.ctl.tick % HEARTBEAT_TICKS == 0:
            inbox.append((self.ch["command"], self.heartbeat))
        result = self.ctl.step(now, inbox)
        response = result.get(self.ch["response"])
        if response is not None:
            self.response = msgs.robot_control_response_lcmt.decode(bytes(response))
        joint_cmd = result.get(self.ch["joint_cmd"])
        assert joint_cmd is not None
        forwarded = self.bridge.joint_cmd(now, bytes(joint_cmd))
        if forwarded is not None:
            self._to_board(forwarded)
        truth = self.board.robot.truth()
        self.z.append(float(truth.position[2]))
        self.x.append(float(truth.position[0]))
        self.now_ns += self.tick_ns

    def _to_board(self, frame: bytes) -> None:
        self.to_board.append(("motor_ctrl", frame))
        self.sent_frames.append((self.now_ns, frame))

    def run(self, seconds: float) -> None:
        for _ in range(int(round(seconds * self.cfg.tick_hz))):
            self.tick()

    def run_until(self, predicate: Any, seconds: float) -> float:
        """Tick until predicate() holds; the simulated seconds it took."""
        for i in range(int(round(seconds * self.cfg.tick_hz))):
            if predicate():
                return i / self.cfg.tick_hz
            self.tick()
        raise AssertionError(f"not within {seconds} s")

    def seconds(self, ticks: int) -> float:
        return ticks / self.cfg.tick_hz


def frame_gains(frame: bytes) -> np.ndarray:
    m = msgs.motor_ctrl_lcmt.decode(frame)
    return np.array(list(m.kp_des) + list(m.kd_des) + list(m.tau_des))
