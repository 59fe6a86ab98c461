"""The interface every mode implements, and what behaviours share.

Each mode is one module with the same entry points (as MIT Cheetah-Software
keeps one file per FSM state): enter, run, ready (may the state hand over to a
`when_ready` target now), exit, progress and the gait id it reports. A
behaviour writes segments and gains into the kernel; the kernel turns them into
the joint command once per tick.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from controller.block import Block
from controller.config import Config
from controller.kinematics import QuadrupedKinematics
from controller.native import Kernel


@dataclass
class Robot:
    """The robot model behaviours act on."""
    cfg: Config
    kin: QuadrupedKinematics
    kernel: Kernel

    @property
    def dt(self) -> float:
        return self.cfg.dt

    def gains(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The named gain set, per joint (config/<robot>.yaml `gains`)."""
        g = self.cfg.gains[name]
        return g.kp, g.kd

    def inside_limits(self, q: np.ndarray, margin: float, fallback: np.ndarray) -> np.ndarray:
        """q clipped `margin` rad inside the joint limits; NaN replaced by `fallback`."""
        q = np.where(np.isfinite(q), q, fallback)
        return np.clip(q, self.cfg.q_min + margin, self.cfg.q_max - margin)


@dataclass
class MotorCommand:
    """The latest motor_ctrl arrays and their age (SPEC §6.9)."""
    q_des: np.ndarray
    qd_des: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    tau: np.ndarray
    age_ms: float


@dataclass
class TickContext:
    tick: int
    t: float                 # controller clock, s (tick * dt)
    q: np.ndarray            # measured joint positions
    qd: np.ndarray           # measured joint velocities
    tau: np.ndarray          # measured joint torques
    block: Block             # the active command block
    motor: MotorCommand | None = None
    motion_bar: int = 0      # the queue's motion / user-gait progress (SPEC §4.5)


class BlockClock:
    """Ticks since the active block started: motiond's per-block progress
    counter (SPEC §11), so a block's bar runs 0 -> 100 over its own duration."""

    INTERRUPTED = -2

    def __init__(self) -> None:
        self.uid = -1
        self.count = 0

    def interrupt(self) -> bool:
        """A block of another mode is active: forget ours. True on the first call."""
        first = self.uid != self.INTERRUPTED
        self.uid = self.INTERRUPTED
        return first

    def advance(self, block: Block) -> bool:
        """Count this tick; True when `block` is a new block (count restarts at 1)."""
        if block.uid != self.uid:
            self.uid = block.uid
            self.count = 1
            return True
        self.count += 1
        return False


def percent(count: int, total: int) -> int:
    return 100 if total <= 0 or count >= total else int(count * 100 // total)


class Behaviour:
    mode: int = -1
    # A re-request of this mode does not cancel a pending transition (SPEC §5.6).
    keeps_target = False
    # Safety checks the FSM runs for this state (SPEC §5.8).
    checks_foot_workspace = False

    def __init__(self, robot: Robot) -> None:
        self.robot = robot
        self.cfg = robot.cfg
        self.kernel = robot.kernel

    def enter(self, ctx: TickContext) -> None:
        """Take over; the kernel still holds the previous state's command."""

    def run(self, ctx: TickContext) -> None:
        """One tick of control in the Normal operating mode."""

    def refuses(self, block: Block) -> str | None:
        """Why this state cannot carry out `block` (e.g. an unknown gait), or None."""
        return None

    def ready(self) -> bool:
        """May the state hand over to a `when_ready` target now?"""
        return True

    def exit(self) -> None:
        """Leave the state."""

    def progress(self, ctx: TickContext) -> int:
        return 100

    def reported_gait(self, ctx: TickContext) -> int:
        return 0

    def body_velocity(self) -> np.ndarray | None:
        """The body twist (vx, vy, yaw rate) this state drives, for odometry;
        None when the body does not travel."""
        return None

    # -- shared helpers ---------------------------------------------------
    def entry_pose(self, ctx: TickContext, tolerance_rad: float) -> np.ndarray:
        """Per joint: the previous command if it is within `tolerance_rad` of
        the measurement, else the measurement (SPEC §6.1, §6.5)."""
        previous = self.kernel.pos
        close = np.abs(previous - ctx.q) <= tolerance_rad
        return np.where(close, previous, ctx.q)

    def go_limp(self, ctx: TickContext) -> None:
        """Zero gains, holding the measured position (the OFF command)."""
        self.kernel.track(ctx.q)
        zero = np.zeros(self.kernel.n)
        self.kernel.set_gains(zero, zero)
        self.kernel.tau_ff[:] = 0.0
