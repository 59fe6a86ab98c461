"""The simulated robot `motiond --sim` drives: the MuJoCo physics body
(controller/sim/physics.py) when the robot has a physics model, else the
joint-space sim (controller/sim/joint_sim.py), which moves joints only.
`--sim joint` asks for the joint-space sim on any robot."""
from __future__ import annotations

from typing import Protocol

import numpy as np

from controller.robot.config import Config, ConfigError
from controller.robot.humanoid_kinematics import HumanoidLegKinematics
from controller.robot.kinematics import QuadrupedKinematics
from controller.sim.joint_sim import SimRobot
from controller.sim.mjcf import has_model

PHYSICS, JOINT = "physics", "joint"
# What the controller takes in of a simulated robot's messages, as it does
# from a robot bridge: its joint state and its IMU.
SENSORS = ("joint_state", "imu")
KINDS = (PHYSICS, JOINT)


class SimulatedRobot(Protocol):
    """What the runtime needs of a simulated robot: the messages it
    publishes before the tick (joint_state, and from the physics body imu and
    sim_state), and one tick under the controller's joint_cmd after it, as
    the robot's bridge receives it (`command`, in the robot's joint
    convention: controller/sim/bridge.py); `step` takes the same command as
    arrays in the controller's convention (tests and tools)."""

    def messages(self, utime: int, truth: bool = True) -> list[tuple[str, bytes]]: ...

    def step(self, q_des: np.ndarray, qd_des: np.ndarray, kp: np.ndarray, kd: np.ndarray,
             tau_ff: np.ndarray, dt: float) -> None: ...

    def command(self, data: bytes) -> None: ...


def make_sim(cfg: Config, kin: QuadrupedKinematics | HumanoidLegKinematics,
             kind: str = PHYSICS, world: str | None = None) -> tuple[SimulatedRobot, str]:
    """The simulated robot of `kind` and the kind it is: physics falls back
    to the joint-space sim for a robot without a physics model yet. `world`
    names a world of config/physics/worlds.yaml for the physics body
    (ConfigError if there is none of that name, or no physics body)."""
    if kind not in KINDS:
        raise ValueError(f"simulator {kind!r}: expected one of {KINDS}")
    if kind == PHYSICS and has_model(cfg):
        from controller.sim.physics import PhysicsRobot  # imports mujoco
        from controller.sim.world import World
        return PhysicsRobot(cfg, World.from_spec(world, "--world") if world else None), PHYSICS
    if world:
        raise ConfigError(f"--world {world}: worlds are for the physics body, and {cfg.robot} "
                          f"runs the joint-space sim here")
    return SimRobot(cfg, kin), JOINT
