"""The robot side of the joint messages, for the simulated robots: what a
robot's motor bridge does with joint_cmd and joint_state, in the robot's own
joint convention (the config's `joint_map`).

The simulated bodies (controller/sim/physics.py, joint_sim.py) move in the
controller's convention, as their models are built from its config; this
module turns a joint_cmd off the wire into their arrays and their joint
readings into the joint_state the robot would publish. So a robot with
another wire order, joint directions or zero offsets runs in simulation
through exactly the map it runs through on the real bridge.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from controller import msgs
from controller.robot.config import Config


@dataclass
class JointCommand:
    """One joint_cmd in the controller's convention and order."""
    q: np.ndarray
    qd: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    tau: np.ndarray


class WireBridge:
    def __init__(self, cfg: Config) -> None:
        self.map = cfg.joint_map.copy()     # its own: the sim may run on its own thread
        self.n = cfg.num_joints
        self.state = msgs.joint_state_t()
        self.state.num_joints = self.n
        self._wire = np.empty(self.n)

    def joint_state(self, utime: int, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
                    battery_voltage: float) -> bytes:
        """The robot's joint_state for joints at q, qd, tau (the controller's convention)."""
        m, jm, w = self.state, self.map, self._wire
        m.utime = utime
        m.position = jm.positions_to_wire(q, w).tolist()
        m.velocity = jm.signed_to_wire(qd, w).tolist()
        m.torque = jm.signed_to_wire(tau, w).tolist()
        m.battery_voltage = battery_voltage
        return m.encode()

    def command(self, data: bytes) -> JointCommand:
        """A joint_cmd off the wire in the controller's convention; ValueError
        (the reason) for a message that is not one this robot can take."""
        try:
            c = msgs.joint_command_t.decode(data)
        except Exception as exc:  # noqa: BLE001 - any undecodable packet is refused alike
            raise ValueError(f"not a joint_command_t ({exc})") from exc
        if c.num_joints != self.n:
            raise ValueError(f"{c.num_joints} joints, the robot has {self.n}")
        fields = [np.asarray(getattr(c, f), dtype=float) for f in ("position", "velocity", "kp", "kd", "torque")]
        if not all(np.isfinite(f).all() for f in fields):
            raise ValueError("a value is not finite")
        jm = self.map
        position, velocity, kp, kd, torque = fields
        return JointCommand(jm.positions_from_wire(position), jm.signed_from_wire(velocity),
                            jm.plain_from_wire(kp), jm.plain_from_wire(kd), jm.signed_from_wire(torque))
