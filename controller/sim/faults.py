"""Broken parts injected into the physics body (a scorecard step's `fault:`,
docs/RELIABILITY.md "Broken parts"). The controller is told nothing: it
sees only what a real robot's joint_state and imu would show.

Kinds (`joint` a config joint name, `foot` a leg name):
- motor_dead {joint}: the motor gives no torque (a blown driver);
- motor_weak {joint, share: 0.5}: it gives that share of its torque;
- encoder_freeze {joint}: the joint's reading stops where it is;
- encoder_jump {joint, rad: 0.3}: the reading jumps by that much and stays off;
- gyro_bias {axis: 0, rad_s: 0.2}: the gyro's axis (0 x, 1 y, 2 z) gains a bias;
- imu_freeze: the imu repeats its last sample;
- foot_ice {foot, s: 1.0, friction: 0.05}: that foot slides as on ice for s;
- battery_sag {share: 0.3, s: 10}: the supply sags, the torque limit and the
  battery voltage falling by that share over s seconds.

A motor driver runs its law on its own encoder, so a wrong reading moves
the joint as the driver believes it: the law runs on the reading.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from controller.robot.config import ConfigError

KINDS = ("motor_dead", "motor_weak", "encoder_freeze", "encoder_jump", "gyro_bias", "imu_freeze",
         "foot_ice", "battery_sag")
ICE_PRIORITY = 10        # the icy foot's friction governs its contacts


@dataclass
class Fault:
    kind: str
    joint: int | None = None
    foot: str | None = None
    value: float = 0.0              # share, rad, rad/s or friction
    seconds: float = 0.0
    axis: int = 0
    start: float = 0.0              # sim time it was injected
    state: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_spec(cls, spec: dict[str, Any], joint_names: list[str], legs: list[str], where: str) -> Fault:
        kind = spec.get("kind")
        if kind not in KINDS:
            raise ConfigError(f"{where}: fault: kind {kind!r} is not one of {list(KINDS)}")
        f = cls(kind)
        if kind.startswith(("motor", "encoder")):
            name = spec.get("joint")
            if name not in joint_names:
                raise ConfigError(f"{where}: fault: joint {name!r} is not one of {joint_names}")
            f.joint = joint_names.index(name)
        f.value = float(spec.get("share", spec.get("rad", spec.get("rad_s", spec.get("friction", {
            "motor_weak": 0.5, "encoder_jump": 0.3, "gyro_bias": 0.2, "foot_ice": 0.05,
            "battery_sag": 0.3}.get(kind, 0.0))))))
        f.seconds = float(spec.get("s", {"foot_ice": 1.0, "battery_sag": 10.0}.get(kind, 0.0)))
        f.axis = int(spec.get("axis", 0))
        if kind == "foot_ice":
            if spec.get("foot") not in legs:
                raise ConfigError(f"{where}: fault: foot {spec.get('foot')!r} is not one of {legs}")
            f.foot = str(spec["foot"])
        return f


class FaultInjector:
    """The faults of one physics body, applied every tick (PhysicsRobot)."""

    def __init__(self, n: int) -> None:
        self.faults: list[Fault] = []
        self.torque_scale = np.ones(n)      # controller order
        self.encoder_offset = np.zeros(n)   # reading - truth, controller order (jumps)
        self.held_q: dict[int, float] = {}  # frozen readings
        self.voltage_scale = 1.0

    @property
    def any(self) -> bool:
        return bool(self.faults)

    def add(self, fault: Fault, now: float) -> None:
        fault.start = now
        self.faults.append(fault)

    def update(self, robot: Any) -> None:
        """Set this tick's effects on `robot` (a PhysicsRobot) from every fault."""
        now = float(robot.data.time)
        scale = np.ones_like(self.torque_scale)
        self.voltage_scale = 1.0
        for f in self.faults:
            age = now - f.start
            if f.kind == "motor_dead":
                scale[f.joint] = 0.0
            elif f.kind == "motor_weak":
                scale[f.joint] *= f.value
            elif f.kind == "battery_sag":
                sag = 1.0 - f.value * min(1.0, age / f.seconds) if f.seconds > 0 else 1.0 - f.value
                scale *= sag
                self.voltage_scale = sag
            elif f.kind == "encoder_jump":
                self.encoder_offset[f.joint] = f.value
            elif f.kind == "encoder_freeze" and f.joint is not None and f.joint not in self.held_q:
                self.held_q[f.joint] = float(robot.reading.q[f.joint])
            elif f.kind == "gyro_bias" and not f.state:
                robot.sensors.bias[f.axis] += f.value
                f.state["on"] = True
            elif f.kind == "imu_freeze":
                robot.sensors.hold_imu = True
            elif f.kind == "foot_ice":
                self._ice(robot, f, age < f.seconds)
        self.torque_scale[:] = scale
        robot.sensors.hold_q = self.held_q

    @staticmethod
    def _ice(robot: Any, f: Fault, on: bool) -> None:
        g = robot.model.geom(f"{f.foot}_foot").id
        if on and "friction" not in f.state:
            f.state["friction"] = robot.model.geom_friction[g, 0]
            f.state["priority"] = robot.model.geom_priority[g]
            robot.model.geom_friction[g, 0] = f.value
            robot.model.geom_priority[g] = ICE_PRIORITY
        elif not on and "friction" in f.state and not f.state.get("off"):
            robot.model.geom_friction[g, 0] = f.state["friction"]
            robot.model.geom_priority[g] = f.state["priority"]
            f.state["off"] = True

    def driver_offset(self, truth_q: np.ndarray) -> np.ndarray:
        """What each driver's encoder reads minus the truth (controller order)."""
        offset = self.encoder_offset.copy()
        for j, held in self.held_q.items():
            offset[j] = held - truth_q[j]
        return offset
