"""Where a robot bridge runs (docs/REAL_ROBOT.md):

* in motiond's process (`motiond --bridge cyberdog2`): the runtime drives it
  as it drives the simulated robot (InProcessBridge: each tick reads what
  the robot sent, and the tick's joint_cmd goes out as soon as it is made),
  the lowest latency;
* as its own process beside motiond (`motionctl bridge cyberdog2`,
  BridgeProcess): joint_cmd in and joint_state / imu / bridge_status out on
  motiond's joint port, for isolation or another machine.

And the other end for trying it without the robot: BoardProcess, CyberDog
2's board emulated in physics on the robot's wire (`motionctl board-emulator`).

Both check first that motiond's joint port is not the robot's own (there
motiond would take the bridge's motor_ctrl for a client's: mode 15).
"""
from __future__ import annotations

import select
import time
from typing import Any, Protocol

import numpy as np

from controller.bridges.cyberdog2 import CHANNELS, CyberDog2Bridge
from controller.bridges.status import TickOut
from controller.logs import get_logger
from controller.robot.config import Config, ConfigError
from controller.robot.config.bridge import BRIDGES
from controller.service.transport import Bus


class Bridge(Protocol):
    name: str
    status: Any

    def joint_cmd(self, now_ns: int, data: bytes) -> bytes | None: ...
    def tick(self, now_ns: int, utime: int) -> TickOut: ...


class Link(Protocol):
    def take(self, now_ns: int) -> None: ...
    def send(self, frames: list[bytes]) -> None: ...
    def filenos(self) -> list[int]: ...


def make_bridge(cfg: Config, name: str) -> tuple[Bridge, Link]:
    """The bridge `name` and its link to the robot (ConfigError if this
    config cannot run it)."""
    check_wires(cfg, name)
    if name == "cyberdog2":
        cd2 = CyberDog2Bridge(cfg)
        return cd2, RobotLink(cfg, cd2)
    try:
        from controller.bridges.dds import DdsLink
        from controller.bridges.unitree_go2 import UnitreeGo2Bridge
    except ImportError as exc:
        raise ConfigError(f"the unitree_go2 bridge needs cyclonedds ({exc}): "
                          "pip install 'motiond[go2]' (docs/DEPENDENCIES.md)") from None
    go2 = UnitreeGo2Bridge(cfg)
    return go2, DdsLink(cfg, go2)


def check_wires(cfg: Config, name: str) -> None:
    """ConfigError unless `name` is a bridge this config can run: a known one,
    on robot ports apart from motiond's joint port."""
    if name not in BRIDGES:
        raise ConfigError(f"bridge {name!r}: the bridges are {', '.join(BRIDGES)}")
    if cfg.bridge.kind != name:
        raise ConfigError(f"{cfg.path}: bridge.kind is {cfg.bridge.kind!r}, not {name!r}")
    if name != "cyberdog2":
        return
    joint = cfg.lcm.url("joint").split("?")[0]
    for port_name in ("robot", "estimator"):
        if cfg.bridge.url(port_name).split("?")[0] == joint:
            raise ConfigError(
                f"{cfg.path}: motiond's joint port {cfg.lcm.ports['joint']} is the robot's own "
                f"{port_name} port ({joint}): motiond would take the bridge's motor_ctrl for a "
                f"client's. Move motiond's (lcm.ports.joint), as config/cyberdog2_robot.yaml does")


class RobotLink:
    """The robot's own LCM: its messages into the bridge, motor_ctrl out."""

    def __init__(self, cfg: Config, bridge: CyberDog2Bridge) -> None:
        self.bridge = bridge
        self.bus = Bus(cfg.bridge)
        for channel, port_name in CHANNELS.items():
            self.bus.subscribe(port_name, channel)

    def take(self, now_ns: int) -> None:
        for channel, data in self.bus.drain():
            self.bridge.robot_packet(now_ns, channel, data)

    def send(self, frames: list[bytes]) -> None:
        for frame in frames:
            self.bus.publish("robot", "motor_ctrl", frame)

    def filenos(self) -> list[int]:
        return self.bus.filenos()


class InProcessBridge:
    """A bridge in motiond's process, in the runtime's simulated robot's
    place (controller/sim/robot.py's SimulatedRobot): `messages` each tick,
    `command` with each joint_cmd. `live`: read at the tick, not after the
    command (the robot answers in its own time)."""

    live = True

    def __init__(self, cfg: Config, name: str) -> None:
        self.bridge, self.link = make_bridge(cfg, name)

    def messages(self, utime: int, truth: bool = True) -> list[tuple[str, bytes]]:
        now_ns = time.monotonic_ns()
        self.link.take(now_ns)
        out = self.bridge.tick(now_ns, utime)
        self.link.send(out.to_robot)
        return out.to_motiond

    def command(self, data: bytes) -> None:
        start = time.monotonic_ns()
        frame = self.bridge.joint_cmd(start, data)
        if frame is not None:
            self.link.send([frame])
            self.bridge.status.forwarded(time.monotonic_ns() - start)

    def step(self, q_des: np.ndarray, qd_des: np.ndarray, kp: np.ndarray, kd: np.ndarray,
             tau_ff: np.ndarray, dt: float) -> None:
        raise NotImplementedError("a real robot moves under joint_cmd only (command)")


class BridgeProcess:
    """`motionctl bridge NAME`: the bridge on its own, between motiond's
    joint port and the robot's wire, ticking at the config's rate; each
    joint_cmd is forwarded the moment it arrives."""

    def __init__(self, cfg: Config, name: str) -> None:
        self.cfg = cfg
        self.bridge, self.link = make_bridge(cfg, name)
        self.motiond = Bus(cfg.lcm)
        self.ch = cfg.lcm.channels
        self.motiond.subscribe("joint", self.ch["joint_cmd"])
        self.period_ns = int(round(1e9 / cfg.tick_hz))
        self.epoch_offset_ns = time.time_ns() - time.monotonic_ns()
        self.log = get_logger(f"bridge.{name}")
        self.stop = False
        self.polled = False      # the robot's link has no descriptor to wait on (DDS)

    def _publish(self, out: TickOut) -> None:
        self.link.send(out.to_robot)
        for key, data in out.to_motiond:
            self.motiond.publish("joint", self.ch[key], data)

    def _take(self) -> None:
        now_ns = time.monotonic_ns()
        self.link.take(now_ns)
        for _, data in self.motiond.drain():
            start = time.monotonic_ns()
            frame = self.bridge.joint_cmd(start, data)
            if frame is not None:
                self.link.send([frame])
                self.bridge.status.forwarded(time.monotonic_ns() - start)

    def run(self, seconds: float | None = None) -> int:
        self.log.info("bridge_start", bridge=self.bridge.name, motiond=self.cfg.lcm.url("joint"))
        fds = self.link.filenos() + self.motiond.filenos()
        self.polled = not self.link.filenos()
        start = deadline = time.monotonic_ns()
        while not self.stop and (seconds is None or deadline - start < seconds * 1e9):
            deadline += self.period_ns
            while True:
                wait = (deadline - time.monotonic_ns()) / 1e9
                if wait <= 0:
                    break
                # DDS has no descriptor to wait on: look at least every 0.5 ms.
                ready, _, _ = select.select(fds, [], [], wait if not self.polled else min(wait, 5e-4))
                if ready or self.polled:
                    self._take()
            self._take()
            now_ns = time.monotonic_ns()
            self._publish(self.bridge.tick(now_ns, (now_ns + self.epoch_offset_ns) // 1000))
            if time.monotonic_ns() - deadline > 10 * self.period_ns:
                deadline = time.monotonic_ns()      # fell far behind: start the grid again
        self.log.info("bridge_stop", **vars(self.bridge.status.counters))
        return 0


class BoardProcess:
    """CyberDog 2's board emulator (controller/sim/cyberdog2_board.py) on the
    robot's own LCM (the config's `bridge` URLs), in real time at the
    config's tick rate: `motionctl board-emulator`."""

    def __init__(self, cfg: Config) -> None:
        from controller.sim.cyberdog2_board import BoardEmulator  # imports mujoco
        self.board = BoardEmulator(cfg)
        self.bus = Bus(cfg.bridge)
        self.bus.subscribe("robot", "motor_ctrl")
        self.period_ns = int(round(1e9 / cfg.tick_hz))
        self.stop = False

    def run(self, seconds: float | None = None) -> int:
        now = start = time.monotonic_ns()
        while not self.stop and (seconds is None or now - start < seconds * 1e9):
            for port, channel, data in self.board.step(now, list(self.bus.drain())):
                self.bus.publish(port, channel, data)
            now += self.period_ns
            delay = (now - time.monotonic_ns()) / 1e9
            if delay > 0:
                time.sleep(delay)
            elif delay < -0.1:
                now = time.monotonic_ns()    # far behind (an overloaded machine): resume from now
        return 0
