"""An emulator of CyberDog 2's motion-control board as the motor SDK sees it
(SPEC §1.7a), to test the CyberDog 2 bridge without the robot: the physics
body, driven by the board's firmware, which here is motiond's own core in
mode 15 (SPEC §6.9's rules: the entry wait and its all-zero frame, the 10 ms
decay, the mutation clamp, and after 500 ms without motor_ctrl the robot
damped down), on a clock the caller gives.

In: `motor_ctrl`. Out, every board tick: `spi_data` and `motor_ctrl_state`
(the robot's port) and `state_estimator` (its estimator port); and, as a
simulator's extra that no robot sends, `sim_state` (the ground truth) at
50 Hz on the robot's port, for tests to judge the body by.

Where it is not the board (docs/REAL_ROBOT.md): once motor_ctrl has stopped
for 500 ms, the core leaves mode 15 for its damper (mode 7) where the board
stays in mode 15 with high damping; both lie the robot down damped, and
the emulator keeps reporting motor_ctrl_state with bit1 set and the
command's age, as the board does. On new frames the core enters mode 15
again with its entry wait, as the board clears bit1 only after its wait and
an all-zero frame. The state estimate carries the IMU's attitude, rate and
specific force (p and v are not estimated: zeros); motor flags are whatever
a test injects (`motor_flags`), temperatures 40 °C.
"""
from __future__ import annotations

import numpy as np

from controller import msgs
from controller.core.controller import Controller
from controller.robot.angles import quat_rpy, quat_to_rotation
from controller.robot.config import Config
from controller.sim.physics import PhysicsRobot
from controller.sim.robot import SENSORS
from controller.sim.world import World

ERR_LOST = 1 << 1
TRUTH_EVERY = 10     # ticks between two sim_state (ground truth) messages: 50 Hz
LEGS = 4


class BoardEmulator:
    def __init__(self, cfg: Config, world: World | None = None) -> None:
        self.cfg = cfg
        self.firmware = Controller(cfg)
        self.robot = PhysicsRobot(cfg, world)
        self.ch = cfg.lcm.channels
        self.motor_flags = np.zeros(12, dtype=np.int32)   # injected motor faults (wire order)
        self.deaf = False          # the link is cut: motor_ctrl no longer arrives
        self.mute = False          # ... and nothing is published
        self.last_rx_ns: int | None = None
        self.ever_motor = False
        self.ticks = 0
        self._spi = msgs.spi_data_t()
        for name in ("tmp_abad", "tmp_hip", "tmp_knee"):
            setattr(self._spi, name, [40] * LEGS)
        self._est = msgs.state_estimator_lcmt()
        self._state = msgs.motor_ctrl_state_lcmt()

    def step(self, now_ns: int, packets: list[tuple[str, bytes]]) -> list[tuple[str, str, bytes]]:
        """One board tick at `now_ns` with the robot-wire packets that arrived
        since the last: the firmware's tick, the body's, then what the board
        publishes as (port: "robot" or "estimator", channel, bytes)."""
        utime = now_ns // 1000
        inbox = [(self.ch[key], data) for key, data in self.robot.messages(utime, truth=False)
                 if key in SENSORS]
        if not self.deaf:
            for channel, data in packets:
                if channel == "motor_ctrl":
                    inbox.append((self.ch["motor_ctrl"], data))
                    self.last_rx_ns = now_ns
                    self.ever_motor = True
        out = self.firmware.step(now_ns, inbox)
        command = out.get(self.ch["joint_cmd"])
        assert command is not None
        self.robot.command(bytes(command))
        if self.mute:
            return []
        published = [("robot", "spi_data", self._spi_data()),
                     ("estimator", "state_estimator", self._estimate(now_ns))]
        self.ticks += 1
        if self.ticks % TRUTH_EVERY == 0:     # the simulator's ground truth, for tests
            published.append(("robot", "sim_state", self.robot.sim_state(utime)))
        state = out.get(self.ch["motor_ctrl_state"])
        if state is not None:
            published.append(("robot", "motor_ctrl_state", bytes(state)))
        elif self.ever_motor:
            assert self.last_rx_ns is not None
            self._state.err_flag = ERR_LOST
            self._state.ctrl_topic_interval = (now_ns - self.last_rx_ns) / 1e6
            published.append(("robot", "motor_ctrl_state", self._state.encode()))
        return published

    def _spi_data(self) -> bytes:
        r, m = self.robot.reading, self._spi
        q, qd, tau = r.q.reshape(LEGS, 3), r.qd.reshape(LEGS, 3), r.tau.reshape(LEGS, 3)
        m.q_abad, m.q_hip, m.q_knee = (q[:, j].tolist() for j in range(3))
        m.qd_abad, m.qd_hip, m.qd_knee = (qd[:, j].tolist() for j in range(3))
        m.tau_abad, m.tau_hip, m.tau_knee = (tau[:, j].tolist() for j in range(3))
        m.flags = [int(f) for f in self.motor_flags]
        return m.encode()

    def _estimate(self, now_ns: int) -> bytes:
        r, m = self.robot.reading, self._est
        rot = quat_to_rotation(r.quaternion)
        m.quat = r.quaternion.tolist()
        m.rpy = list(quat_rpy(r.quaternion))
        m.omegaBody = r.gyro.tolist()
        m.omegaWorld = (rot @ r.gyro).tolist()
        m.aBody = r.accel.tolist()
        m.aWorld = (rot @ r.accel).tolist()
        m.timestamp = now_ns
        return m.encode()

