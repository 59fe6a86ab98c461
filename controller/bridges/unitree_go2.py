"""The Unitree Go2 bridge: motiond's joint wire to the Go2's low-level
Unitree SDK2 wire over DDS (`rt/lowcmd` out, `rt/lowstate` in), on a clock
the caller gives (a pure state machine: controller/bridges/dds.py adds DDS).

The joint_cmd motiond publishes is already in the Go2's convention and motor
order: the config's joint_map (config/go2_robot.yaml: the SDK's motor index,
FR, FL, RR, RL; hip and knee negated). Wire slot k is motor k of LowCmd_.

States (bridge_status):
  STARTING  no fresh LowState_, or the motion switcher's answer not yet in:
            nothing is sent, motiond gets no joint_state.
  ACTIVE    each joint_cmd goes out as one LowCmd_ (head 0xFE 0xEF,
            level_flag 0xFF, mode 0x01 per motor, the SDK's CRC); joint_state
            and imu go to motiond on each tick a new LowState_ came in, from
            the newest (a repeated copy would read as a frozen encoder, and
            a late one's catch-up as a jump: motiond judges the real gaps).
  FAULT     a sport mode owns the robot (the bridge never sends then), or
            LowState_ went stale (> state_timeout_ms): the robot gets the
            Go2's safe command every tick, damping (kp 0, kd damping_kd),
            and motiond is told (its RobotFaultWatch damps, EDAMP). A stale
            fault clears (ACTIVE again) once LowState_ is fresh for
            FAULT_HOLD_NS; a sport mode's does not.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from controller import msgs
from controller._kernel import ffi, lib
from controller.bridges.readings import JointReadings
from controller.bridges.status import ACTIVE, FAULT, STARTING, BridgeStatus, TickOut
from controller.robot.config import Config

FAULT_HOLD_NS = 1_000_000_000
JOINTS = 12
HEAD = (0xFE, 0xEF)
LEVEL_LOW = 0xFF                # level_flag of low-level commands
SERVO = 0x01                    # motor mode: the servo on (0 would be off)


JOINT_CMD_SIZE = 8 + 8 + 8 + 2 + 5 * 4 * JOINTS   # a joint_command_t of 12 joints, fingerprint in
TARGETS_AT = 26                                   # its position, velocity, kp, kd, torque (BE float32)


def lowcmd(targets: np.ndarray, out: bytearray) -> bytes:
    """The serialized LowCmd_ (CDR, as DDS carries it, with the SDK's CRC:
    csrc/crc.c) for targets (5, 12): q, dq, tau, kp, kd."""
    c = [ffi.from_buffer("double[]", row) for row in targets]
    lib.mk_unitree_lowcmd(c[0], c[1], c[2], c[3], c[4], JOINTS, ffi.from_buffer(out))
    return bytes(out)


class UnitreeGo2Bridge:
    name = "unitree_go2"

    def __init__(self, cfg: Config) -> None:
        if cfg.num_joints != JOINTS:
            raise ValueError(f"the Go2's wire carries 12 joints; {cfg.robot} has {cfg.num_joints}")
        self.cfg = cfg
        self.bcfg = cfg.bridge
        self.timeout_ns = int(self.bcfg.state_timeout_ms * 1e6)
        self.joints = JointReadings(cfg)
        self.status = BridgeStatus(self.name, JOINTS)
        self.state_ns: int | None = None
        self.released: bool | None = None   # None: the motion switcher's answer is not in
        self.release_text = ""
        self.capped: set[str] = set()    # the gains kp_max / kd_max have capped (logged once)
        self.quat = np.array([1.0, 0.0, 0.0, 0.0])
        self.gyro = np.zeros(3)
        self.accel = np.zeros(3)
        self.volts = 0.0
        self._out = bytearray(812)
        self._targets = np.zeros((5, JOINTS))        # q, dq, tau, kp, kd: the C packer's rows
        damping = np.zeros((5, JOINTS))
        damping[4] = self.bcfg.damping_kd
        self._damping = lowcmd(damping, self._out)
        self._fingerprint = msgs.joint_command_t._get_packed_fingerprint()
        self._imu = msgs.imu_t()

    @property
    def state(self) -> int:
        return self.status.state

    # -- the robot's side -------------------------------------------------------------
    def motion_switcher(self, released: bool, text: str) -> None:
        """The motion switcher's answer: released (no sport mode owns the
        robot, or a simulator without one), and what was found, in words."""
        self.released, self.release_text = released, text

    def lowstate(self, now_ns: int, msg: Any, crc_ok: bool = True) -> None:
        """A LowState_ off DDS (`crc_ok`: its CRC checked out, or is not checked)."""
        self.status.counters.states_received += 1
        if not crc_ok:
            self.status.dropped(now_ns, "robot_message_rejected", "LowState_: wrong CRC", state=True)
            return
        motors = msg.motor_state[:JOINTS]
        q = np.array([m.q for m in motors])
        qd = np.array([m.dq for m in motors])
        tau = np.array([m.tau_est for m in motors])
        imu = msg.imu_state
        quat = np.array(imu.quaternion, dtype=float)
        rest = np.concatenate([quat, imu.gyroscope, imu.accelerometer])
        if not np.isfinite(rest).all():
            self.status.dropped(now_ns, "robot_message_rejected", "LowState_: a value is not finite",
                                state=True)
            return
        norm = float(np.linalg.norm(quat))
        if abs(norm - 1.0) > 0.01:
            self.status.dropped(now_ns, "robot_message_rejected",
                                f"LowState_: quaternion norm {norm:.3f}, not 1", state=True)
            return
        why = self.joints.take(q, qd, tau, "LowState_")
        if why is not None:
            self.status.dropped(now_ns, "robot_message_rejected", why, state=True)
            return
        self.quat[:] = quat / norm
        self.gyro[:], self.accel[:] = imu.gyroscope, imu.accelerometer
        volts = float(msg.power_v)
        self.volts = volts if math.isfinite(volts) and volts > 0.0 else 0.0
        self.state_ns = now_ns

    # -- motiond's joint command --------------------------------------------------------
    def joint_cmd(self, now_ns: int, data: bytes) -> bytes | None:
        """The LowCmd_ to send for a joint_cmd from motiond, or None."""
        if self.status.state != ACTIVE:
            self.status.dropped(now_ns, "joint_cmd_not_sent", f"the bridge is {self.status.text()}")
            return None
        if len(data) != JOINT_CMD_SIZE or data[:8] != self._fingerprint \
                or int.from_bytes(data[24:26], "big") != JOINTS:
            self.status.dropped(now_ns, "joint_cmd_rejected",
                                f"not a joint_command_t of 12 joints ({len(data)} bytes)")
            return None
        # position, velocity, kp, kd, torque as sent; the packer wants q, dq, tau, kp, kd.
        sent = np.frombuffer(data, ">f4", 5 * JOINTS, TARGETS_AT).reshape(5, JOINTS)
        if not np.isfinite(sent).all():
            self.status.dropped(now_ns, "joint_cmd_rejected", "a value is not finite")
            return None
        t = self._targets
        t[0], t[1], t[2] = sent[0], sent[1], sent[4]
        t[3] = self._capped(sent[2], self.bcfg.kp_max, "kp")
        t[4] = self._capped(sent[3], self.bcfg.kd_max, "kd")
        self.status.counters.commands_sent += 1
        return lowcmd(t, self._out)

    def _capped(self, gains: np.ndarray, cap: float | None, name: str) -> np.ndarray:
        """The gains within `cap` (bridge.kp_max / kd_max; None: as they are);
        the first time one is capped, a log line says so."""
        if cap is None or gains.max() <= cap:
            return gains
        if name not in self.capped:
            self.capped.add(name)
            self.status.log.info("gain_capped", gain=name, cap=cap, asked=round(float(gains.max()), 3),
                                 why=f"bridge.{name}_max")
        return np.minimum(gains, cap)

    # -- the tick -----------------------------------------------------------------------

    def tick(self, now_ns: int, utime: int) -> TickOut:
        out = TickOut()
        age = math.inf if self.state_ns is None else now_ns - self.state_ns
        stale = None if age <= self.timeout_ns else (
            "no LowState_ yet" if self.state_ns is None else
            f"no LowState_ for {age / 1e6:.0f} ms (bridge.state_timeout_ms {self.bcfg.state_timeout_ms:g})")
        state = self.status.state
        if self.released is False:
            if state != FAULT:
                self.status.enter(now_ns, FAULT, self.release_text)
        elif state == STARTING:
            if stale is not None:
                self.status.reason = stale
            elif self.released is None:
                self.status.reason = "asking the motion switcher who owns the robot"
            else:
                self.status.enter(now_ns, ACTIVE)
        elif state == ACTIVE and stale is not None:
            self.status.enter(now_ns, FAULT, stale, stale=True)
        elif state == FAULT and stale is None and now_ns - self.status.since_ns >= FAULT_HOLD_NS:
            self.status.enter(now_ns, ACTIVE)
        if self.status.state == FAULT and self.released is not False:
            out.to_robot.append(self._damping)     # the Go2's safe command
        if self.status.state == ACTIVE and self.joints.new:
            out.to_motiond += [("joint_state", self.joints.joint_state(utime, self.volts)),
                               ("imu", self._imu_msg(utime))]
        status = self.status.message(now_ns, utime, age / 1e6)
        if status is not None:
            out.to_motiond.append(("bridge_status", status))
        return out

    def _imu_msg(self, utime: int) -> bytes:
        m = self._imu
        m.utime = utime
        m.quaternion, m.gyro, m.accel = self.quat.tolist(), self.gyro.tolist(), self.accel.tolist()
        return m.encode()
