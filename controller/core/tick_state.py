"""The controller's state its parts share (controller/core/controller.py
holds it and hands itself to each part: packets.py, fault_checks.py,
sources.py, script_source.py, gait_uploads.py, publisher.py). Typed here,
as a Protocol, so that a part says what it reads and writes without
importing the Controller; the parts themselves are handed to one another
explicitly."""
from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from controller.behaviours.base import Imu
from controller.core.director import Director
from controller.core.estimator import QuadrupedEstimator
from controller.core.fsm import Fsm
from controller.core.goals import Event, GoalExecutor
from controller.core.odometry import Odometry
from controller.core.outbox import Timing
from controller.core.reports import Counters
from controller.logs import RateLimit
from controller.motion.motions import MotionLibrary
from controller.protocol.block import Block
from controller.protocol.intake import Intake
from controller.protocol.queue import CommandQueue
from controller.robot.config import Config
from controller.robot.config.joint_map import JointMap
from controller.robot.native import Kernel


class TickState(Protocol):
    cfg: Config
    log: Any
    ch: dict[str, str]
    tick: int
    epoch_offset_ns: int
    shutting_down: bool
    # the robot and its modes
    kin: Any
    kernel: Kernel
    joint_map: JointMap
    fsm: Fsm
    director: Director
    motions: MotionLibrary | None
    # the commands
    intake: Intake
    queue: CommandQueue
    last_active: Block
    last_reported: tuple[int, int, int, int]
    fault_now: bool
    goals: GoalExecutor
    goal_gait: int
    events: list[Event]
    # the measurements
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    imu_quat: np.ndarray
    imu_gyro: np.ndarray
    imu_accel: np.ndarray
    imu: Imu
    battery_v: float | None
    estimator: QuadrupedEstimator | None
    odom: Odometry
    # what went wrong, and the loop's telemetry
    counters: Counters
    limit: RateLimit
    timing: Timing
