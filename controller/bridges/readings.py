"""The robot's joints as a bridge last took them: checked against what the
robot can read (finite, within 0.3 rad of a joint's limit: an all-zero or
corrupt message is not a state to start from), and the joint_state they make
for motiond, once per reading: a tick with no new reading sends none (motiond
judges the gaps: its joint_state timeout and its sensor checks). In the
wire's order and convention (the config's joint_map)."""
from __future__ import annotations

import numpy as np

from controller import msgs
from controller.robot.config import Config

PLAUSIBLE_MARGIN = 0.3         # rad beyond a joint limit that a reading may still be


class JointReadings:
    def __init__(self, cfg: Config) -> None:
        jm = cfg.joint_map
        lo, hi = jm.positions_to_wire(cfg.q_min), jm.positions_to_wire(cfg.q_max)
        self.q_lo = np.minimum(lo, hi) - PLAUSIBLE_MARGIN
        self.q_hi = np.maximum(lo, hi) + PLAUSIBLE_MARGIN
        self.names = jm.wire_names
        n = cfg.num_joints
        self.q, self.qd, self.tau = np.zeros(n), np.zeros(n), np.zeros(n)
        self.new = False          # a reading taken that no joint_state has carried yet
        self._msg = msgs.joint_state_t()
        self._msg.num_joints = n

    def take(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, source: str) -> str | None:
        """Keep these readings, or say why they cannot be the robot's (None: kept)."""
        if not (np.isfinite(q).all() and np.isfinite(qd).all() and np.isfinite(tau).all()):
            return f"{source}: a value is not finite"
        outside = np.flatnonzero((q < self.q_lo) | (q > self.q_hi))
        if outside.size:
            j = int(outside[0])
            return (f"{source}: joint {j} ({self.names[j]}) reads {q[j]:.3f} rad, impossible for "
                    f"this robot (a zero or corrupt state)")
        self.q[:], self.qd[:], self.tau[:] = q, qd, tau
        self.new = True
        return None

    def joint_state(self, utime: int, battery_voltage: float = 0.0) -> bytes:
        """The joint_state of the last reading (which it then carries: `new` clears)."""
        self.new = False
        js = self._msg
        js.utime = utime
        js.position, js.velocity, js.torque = self.q.tolist(), self.qd.tolist(), self.tau.tolist()
        js.battery_voltage = battery_voltage
        return js.encode()
