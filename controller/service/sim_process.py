"""The simulated robot as its own process, speaking the robot's LCM as a
robot bridge does: joint_cmd in; joint_state, imu and sim_state out, every
tick, in real time. `motiond` without `--sim` then runs exactly as on the
robot (`motionctl sim`).

Each tick, on absolute deadlines (the daemon's own sleep, controller/service/
runtime.py): publish the sensors, sleep to the next deadline, take the
newest joint_cmd that arrived and run one tick of physics under it. A
joint_cmd that is malformed, for another number of joints or not finite is
dropped, counted and logged (rate-limited). Without a joint_cmd for
COMMAND_TIMEOUT_S the motors go limp (zero torque), as a motor driver whose
host stopped talking does.
"""
from __future__ import annotations

import time

import numpy as np

from controller.logs import RateLimit, get_logger
from controller.robot.config import Config
from controller.robot.native import lib
from controller.service.transport import Bus
from controller.sim.bridge import WireBridge
from controller.sim.robot import SimulatedRobot

COMMAND_TIMEOUT_S = 0.1


class SimProcess:
    def __init__(self, cfg: Config, sim: SimulatedRobot, bus: Bus) -> None:
        self.cfg = cfg
        self.sim = sim
        self.bus = bus
        self.ch = cfg.lcm.channels
        n = cfg.num_joints
        self.q_des = np.zeros(n)
        self.qd_des = np.zeros(n)
        self.kp = np.zeros(n)
        self.kd = np.zeros(n)
        self.tau = np.zeros(n)
        self.bridge = WireBridge(cfg)
        self.last_command_ns: int | None = None
        self.rejected = 0
        self.commands = 0
        self.ticks = 0
        self.stop_requested = False
        self.log = get_logger("motion-sim")
        self.reject_log = RateLimit()
        bus.subscribe("joint", self.ch["joint_cmd"])

    def request_stop(self, *_: object) -> None:
        self.stop_requested = True

    def _take(self, data: bytes, now_ns: int) -> None:
        try:
            c = self.bridge.command(data)      # the robot's joint convention on the wire
        except ValueError as exc:
            return self._reject(now_ns, str(exc))
        self.q_des, self.qd_des, self.kp, self.kd, self.tau = c.q, c.qd, c.kp, c.kd, c.tau
        self.last_command_ns = now_ns
        self.commands += 1
        return None

    def _reject(self, now_ns: int, reason: str) -> None:
        self.rejected += 1
        if self.reject_log.allow("joint_cmd_rejected", now_ns) is not None:
            self.log.warning("joint_cmd_rejected", reason=reason, count=self.rejected)

    def _limp(self, now_ns: int) -> bool:
        return self.last_command_ns is None or now_ns - self.last_command_ns > COMMAND_TIMEOUT_S * 1e9

    def tick(self, now_ns: int) -> None:
        """Take the newest joint_cmd, run one tick of physics, publish the sensors."""
        for _channel, data in self.bus.drain():
            self._take(bytes(data), now_ns)
        if self._limp(now_ns):
            zero = np.zeros(self.cfg.num_joints)
            self.sim.step(zero, zero, zero, zero, zero, self.cfg.dt)
        else:
            self.sim.step(self.q_des, self.qd_des, self.kp, self.kd, self.tau, self.cfg.dt)
        self.ticks += 1
        self.publish()

    def publish(self) -> None:
        utime = time.time_ns() // 1000
        for name, data in self.sim.messages(utime):
            self.bus.publish("joint", self.ch[name], data)

    def run(self, max_ticks: int | None = None) -> int:
        period = int(round(1e9 / self.cfg.tick_hz))
        self.publish()                  # the first joint_state lets motiond leave OFF
        deadline = lib.mk_now_ns()
        late = 0
        while not self.stop_requested and (max_ticks is None or self.ticks < max_ticks):
            deadline += period
            lib.mk_sleep_until(deadline)
            now = lib.mk_now_ns()
            if now - deadline > period:
                late += 1
                deadline = now          # fell behind: do not try to catch up
            self.tick(now)
        self.log.info("sim_stopped", ticks=self.ticks, commands=self.commands,
                      rejected=self.rejected, late_ticks=late)
        return 0
