"""The CyberDog 2 bridge: motiond's joint wire to the robot's own motor SDK
wire (SPEC §1.7a), on a clock the caller gives (a pure state machine: the
placements in controller/bridges/run.py add the sockets).

Robot side, on the robot's LCM: `motor_ctrl` out (port 7667); `spi_data` and
`motor_ctrl_state` in (7667), `state_estimator` in (7669). motiond side:
`joint_cmd` in; `joint_state`, `imu` and `bridge_status` out.

The wire carries the board's own joint convention (§7's: knee positive),
which is motiond's CyberDog 2 convention, in motiond's leg order (FR, FL, RR,
RL; abad, hip, knee): the bridge moves values, it does not turn them (the
motor SDK's {+1, -1, -1} signs are only its users' view).

States (bridge_status):
  STARTING  no fresh, plausible spi_data and state_estimator yet: nothing is
            sent to the robot and motiond gets no joint_state, so it cannot
            leave OFF (never start from a stale or zero state).
  ENTERING  all-zero motor_ctrl frames every tick until the board's
            motor_ctrl_state says it takes low-level commands (err_flag bit1
            clear: its entry wait of ~2.5 s is over). motiond still gets no
            joint_state: a command it sent now would not reach the motors.
  ACTIVE    each joint_cmd goes out as one motor_ctrl at once; joint_state
            goes to motiond on each tick a new spi_data came in, imu on each
            a new state_estimator did (from the newest of each).
  FAULT     the robot state went stale (> state_timeout_ms), or the board
            reports its 500 ms command timeout (bit1) or stopped reporting:
            nothing more is sent (the firmware decays a command after 10 ms
            and damps the robot down after 500 ms: CyberDog 2's own safe
            command is no command), and motiond is told (bridge_status FAULT:
            its RobotFaultWatch damps, EDAMP). After FAULT_HOLD_NS the bridge
            starts over from ENTERING once the state is fresh again.
"""
from __future__ import annotations

import math

import numpy as np

from controller import msgs
from controller.bridges.readings import JointReadings
from controller.bridges.status import ACTIVE, ENTERING, FAULT, STARTING, BridgeStatus, TickOut
from controller.robot.angles import quat_to_rotation
from controller.robot.config import Config

ERR_LOST = 1 << 1              # motor_ctrl_state err_flag bit1 (SPEC §6.9)
FAULT_HOLD_NS = 1_000_000_000  # a FAULT stands at least this long (motiond sees it)
LEGS = 4

# Robot-side ports, as run.py names them.
ROBOT, ESTIMATOR = "robot", "estimator"
CHANNELS = {"spi_data": ROBOT, "motor_ctrl_state": ROBOT, "state_estimator": ESTIMATOR}


class CyberDog2Bridge:
    name = "cyberdog2"

    def __init__(self, cfg: Config) -> None:
        if cfg.num_joints != 3 * LEGS:
            raise ValueError(f"the CyberDog 2 wire carries 12 joints; {cfg.robot} has {cfg.num_joints}")
        self.cfg = cfg
        self.bcfg = cfg.bridge
        self.timeout_ns = int(self.bcfg.state_timeout_ms * 1e6)
        self.joints = JointReadings(cfg)
        self.status = BridgeStatus(self.name, 12)
        self.spi_ns: int | None = None
        self.est: msgs.state_estimator_lcmt | None = None
        self.est_ns: int | None = None
        self.est_new = False          # a state_estimator no imu has carried yet
        self.err_flag: int | None = None
        self.err_ns: int | None = None
        self.entry_frames = 0
        self._zero = msgs.motor_ctrl_lcmt().encode()
        self._cmd = msgs.motor_ctrl_lcmt()
        self._imu = msgs.imu_t()

    @property
    def state(self) -> int:
        return self.status.state

    # -- the robot's messages -----------------------------------------------------------
    def robot_packet(self, now_ns: int, channel: str, data: bytes) -> None:
        """A message off the robot's wire (spi_data, motor_ctrl_state, state_estimator)."""
        kind = {"spi_data": msgs.spi_data_t, "motor_ctrl_state": msgs.motor_ctrl_state_lcmt,
                "state_estimator": msgs.state_estimator_lcmt}.get(channel)
        if kind is None:
            return
        self.status.counters.states_received += 1
        try:
            msg = kind.decode(data)
        except Exception as exc:     # wrong fingerprint, truncated: counted, never raised
            self.status.dropped(now_ns, "robot_message_rejected",
                                f"{channel}: not a valid {kind.__name__} ({exc})", state=True)
            return
        if channel == "spi_data":
            self._take_spi(now_ns, msg)
        elif channel == "state_estimator":
            self._take_estimate(now_ns, msg)
        else:
            self.err_flag, self.err_ns = int(msg.err_flag), now_ns

    def _take_spi(self, now_ns: int, msg: msgs.spi_data_t) -> None:
        q = np.array([v for leg in range(LEGS)
                      for v in (msg.q_abad[leg], msg.q_hip[leg], msg.q_knee[leg])])
        qd = np.array([v for leg in range(LEGS)
                       for v in (msg.qd_abad[leg], msg.qd_hip[leg], msg.qd_knee[leg])])
        tau = np.array([v for leg in range(LEGS)
                        for v in (msg.tau_abad[leg], msg.tau_hip[leg], msg.tau_knee[leg])])
        why = self.joints.take(q, qd, tau, "spi_data")
        if why is not None:
            self.status.dropped(now_ns, "robot_message_rejected", why, state=True)
            return
        self.status.flags[:] = msg.flags
        self.spi_ns = now_ns

    def _take_estimate(self, now_ns: int, msg: msgs.state_estimator_lcmt) -> None:
        values = list(msg.quat) + list(msg.omegaWorld) + list(msg.aWorld)
        if not all(math.isfinite(v) for v in values):
            self.status.dropped(now_ns, "robot_message_rejected",
                                "state_estimator: a value is not finite", state=True)
            return
        norm = math.sqrt(sum(c * c for c in msg.quat))
        if abs(norm - 1.0) > 0.01:
            self.status.dropped(now_ns, "robot_message_rejected",
                                f"state_estimator: quaternion norm {norm:.3f}, not 1", state=True)
            return
        self.est, self.est_ns = msg, now_ns
        self.est_new = True

    # -- motiond's joint command --------------------------------------------------------
    def joint_cmd(self, now_ns: int, data: bytes) -> bytes | None:
        """The motor_ctrl to send for a joint_cmd from motiond, or None."""
        if self.status.state != ACTIVE:
            self.status.dropped(now_ns, "joint_cmd_not_sent",
                                f"the bridge is {self.status.text()}")
            return None
        try:
            msg = msgs.joint_command_t.decode(data)
        except Exception as exc:
            self.status.dropped(now_ns, "joint_cmd_rejected", f"not a valid joint_command_t ({exc})")
            return None
        if msg.num_joints != 12:
            self.status.dropped(now_ns, "joint_cmd_rejected", f"{msg.num_joints} joints, not 12")
            return None
        fields = (msg.position, msg.velocity, msg.kp, msg.kd, msg.torque)
        if not all(math.isfinite(v) for f in fields for v in f):
            self.status.dropped(now_ns, "joint_cmd_rejected", "a value is not finite")
            return None
        c = self._cmd
        c.q_des, c.qd_des, c.kp_des, c.kd_des, c.tau_des = (list(f) for f in fields)
        self.status.counters.commands_sent += 1
        return c.encode()

    # -- the tick -----------------------------------------------------------------------
    def _age_ns(self, since: int | None, now_ns: int) -> float:
        return math.inf if since is None else now_ns - since

    def _stale(self, now_ns: int) -> str | None:
        """Why the robot state is not usable now, or None."""
        for name, since in (("spi_data", self.spi_ns), ("state_estimator", self.est_ns)):
            age = self._age_ns(since, now_ns)
            if age > self.timeout_ns:
                return (f"no {name} yet" if since is None else
                        f"no {name} for {age / 1e6:.0f} ms (bridge.state_timeout_ms "
                        f"{self.bcfg.state_timeout_ms:g})")
        return None

    def _go(self, now_ns: int, state: int, reason: str = "", stale: bool = False) -> None:
        if state == ENTERING and self.status.state != ENTERING:
            self.entry_frames = 0
        self.status.enter(now_ns, state, reason, stale)

    def _board_accepts(self, now_ns: int) -> bool:
        return (self.err_flag is not None and self._age_ns(self.err_ns, now_ns) <= self.timeout_ns
                and not self.err_flag & ERR_LOST)

    def tick(self, now_ns: int, utime: int) -> TickOut:
        """One bridge tick (the robot's rate): the state machine, the entry
        frames, and what motiond gets."""
        out = TickOut()
        stale = self._stale(now_ns)
        state = self.status.state
        in_state_ns = now_ns - self.status.since_ns
        if state == STARTING:
            if stale is None:
                self._go(now_ns, ENTERING, "asking the board for low-level control")
            else:
                self.status.reason = stale
        elif state == ENTERING:
            if stale is not None:
                self._go(now_ns, STARTING, stale)
            elif self._board_accepts(now_ns) and (
                    self.entry_frames == 0 or self.entry_frames >= self.bcfg.entry_frames):
                # Taken (or already in low-level control, e.g. the bridge restarted).
                self._go(now_ns, ACTIVE)
            elif in_state_ns > self.bcfg.entry_timeout_s * 1e9:
                seen = ("no motor_ctrl_state came back; if the board is another machine, "
                        "set bridge.lan: true" if self.err_flag is None
                        else f"motor_ctrl_state err_flag 0x{self.err_flag:x}")
                self._go(now_ns, FAULT, f"the board did not take low-level control in "
                                        f"{self.bcfg.entry_timeout_s:g} s ({seen})")
            else:
                out.to_robot.append(self._zero)
                self.entry_frames += 1
        elif state == ACTIVE:
            if stale is not None:
                self._go(now_ns, FAULT, stale, stale=True)
            elif self._age_ns(self.err_ns, now_ns) > self.timeout_ns:
                self._go(now_ns, FAULT, "no motor_ctrl_state: the board left low-level control")
            elif self.err_flag is not None and self.err_flag & ERR_LOST:
                self._go(now_ns, FAULT, f"the board's 500 ms command timeout fired "
                                        f"(err_flag 0x{self.err_flag:x}): its firmware damps the robot")
        elif state == FAULT and in_state_ns >= FAULT_HOLD_NS and stale is None:
            self._go(now_ns, ENTERING, f"after: {self.status.reason}")
        if self.status.state == ACTIVE:
            if self.joints.new:
                out.to_motiond.append(("joint_state", self.joints.joint_state(utime)))
            if self.est_new:
                self.est_new = False
                out.to_motiond.append(("imu", self._imu_msg(utime)))
        age = min(self._age_ns(self.spi_ns, now_ns), self._age_ns(self.est_ns, now_ns))
        status = self.status.message(now_ns, utime, age / 1e6)
        if status is not None:
            out.to_motiond.append(("bridge_status", status))
        return out

    def _imu_msg(self, utime: int) -> bytes:
        """The IMU in the body frame, from the estimator's world-frame rate and
        acceleration (the motor SDK's fields): rotated back by its attitude."""
        est = self.est
        assert est is not None
        quat = np.array(est.quat, dtype=float)
        quat /= np.linalg.norm(quat)
        rot_t = quat_to_rotation(quat).T
        m = self._imu
        m.utime = utime
        m.quaternion = quat.tolist()
        m.gyro = (rot_t @ np.array(est.omegaWorld, dtype=float)).tolist()
        m.accel = (rot_t @ np.array(est.aWorld, dtype=float)).tolist()
        return m.encode()
