"""The interface every mode implements, and what behaviours share.

Each mode is one module with the same entry points (as MIT Cheetah-Software
keeps one file per FSM state): enter, run, ready (may the state hand over to a
`when_ready` target now), exit, progress and the gait id it reports. A
behaviour writes segments and gains into the kernel; the kernel turns them into
the joint command once per tick.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from controller.motion.balance import BodyEstimate
from controller.motion.forces import GRAVITY, leg_torques, weight_forces
from controller.motion.planner import Planner
from controller.protocol.block import Block
from controller.robot.config import HUMANOID_LEG_GROUPS, Config, Geometry
from controller.robot.humanoid_kinematics import (
    LEG_SIDES,
    FootPose,
    HumanoidGeometry,
    HumanoidLegKinematics,
)
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.native import Kernel, double_ptr, ffi, lib


class Robot:
    """The robot model behaviours act on: the config, the kernel, the leg
    kinematics, and the few body questions modes 7, 12 and 21 ask (stand
    pose, body at a height), answered per robot kind by the subclasses so
    that behaviours do not branch on the kind. `make_robot` picks one."""

    kin: Any

    def __init__(self, cfg: Config, kin: Any, kernel: Kernel) -> None:
        self.cfg = cfg
        self.kin = kin
        self.kernel = kernel
        # Joints whose passive damping the damper releases early (SPEC §6.5:
        # the quadruped's abad); none unless a kind says otherwise.
        self.damper_early_release = np.zeros(cfg.num_joints, dtype=bool)
        # After the command timeout's lie-down: go passive (a quadruped lies
        # on its belly), or keep holding the lie pose (a biped sits; limp, it
        # falls onto its back).
        self.holds_lie_pose = False
        # Who solves the MPC (controller/motion/planner.py); the controller
        # makes an inline one, the daemon may hand in a worker process.
        self.planner: Planner | None = None
        # Work a behaviour leaves for after the tick's joint command is on the
        # bus (an MPC request: nothing this tick's command uses); the
        # controller runs and clears it then (Controller.act).
        self.deferred: list[Callable[[], None]] = []
        # The limits as C reads them (inside_limits), kept alive here.
        self._limit_arrays = tuple(np.ascontiguousarray(a, dtype=np.float64) for a in (cfg.q_min, cfg.q_max))
        self._limits = tuple(double_ptr(a) for a in self._limit_arrays)

    @property
    def dt(self) -> float:
        return self.cfg.dt

    def gains(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The named gain set, per joint (config/<robot>.yaml `gains`)."""
        g = self.cfg.gains[name]
        return g.kp, g.kd

    def inside_limits(self, q: np.ndarray, margin: float, fallback: np.ndarray) -> np.ndarray:
        """q clipped `margin` rad inside the joint limits; NaN (or an
        infinity) replaced by `fallback`; a new array (csrc/limits.c)."""
        n = self.cfg.num_joints
        q = np.ascontiguousarray(q, dtype=np.float64)
        fallback = np.ascontiguousarray(fallback, dtype=np.float64)
        if q.shape != (n,) or fallback.shape != (n,):
            raise ValueError(f"inside_limits: {n} joint values expected, got {q.shape} and {fallback.shape}")
        out = np.empty(n)
        lib.mk_inside_limits(n, ffi.from_buffer("double[]", q), ffi.from_buffer("double[]", fallback),
                             *self._limits, margin, ffi.from_buffer("double[]", out))
        return out

    def stand_pose(self) -> np.ndarray:
        """Every joint of the standing robot (mode 12's goal)."""
        raise NotImplementedError

    def stream_feet(self, feet: np.ndarray, fallback: np.ndarray, margin: float,
                    q_prev: np.ndarray, out: np.ndarray) -> None:
        """This tick's joint set points for the feet `feet` (legs, 3, body
        frame), streamed into the kernel: a legged kind with foot IK only."""
        raise NotImplementedError

    def height_pose(self, height: float) -> np.ndarray:
        """Every joint for the body level at `height` over flat feet under the
        hips (mode 21 gait 5)."""
        raise NotImplementedError

    def body_height(self, q: np.ndarray) -> float:
        """Body origin above flat ground for joint angles q (wire order)."""
        raise NotImplementedError

    def weight_support(self, body: BodyEstimate | None, stance: np.ndarray, out: np.ndarray) -> None:
        """Feed-forward torques that carry the weight on the stance legs, into
        `out`; none by default (the PD alone holds a pose)."""
        out[:] = 0.0


class QuadrupedRobot(Robot):
    kin: QuadrupedKinematics

    def __init__(self, cfg: Config, kin: QuadrupedKinematics, kernel: Kernel) -> None:
        super().__init__(cfg, kin, kernel)
        self.damper_early_release = np.arange(cfg.num_joints) % 3 == 0
        self._clipped = np.zeros(len(kin.hip), dtype=np.uint8)     # stream_feet's IK flags
        self._clipped_ptr = ffi.from_buffer("uint8_t[]", self._clipped)

    def stream_feet(self, feet: np.ndarray, fallback: np.ndarray, margin: float,
                    q_prev: np.ndarray, out: np.ndarray) -> None:
        """The locomotion's tick into the kernel in one C call (csrc/legs.c,
        mk_leg_targets): the joints for `feet` (kin.inverse), clamped
        `margin` inside the limits with `fallback` for a non-finite angle
        (inside_limits), streamed as this tick's set points with the
        velocity from `q_prev` (Kernel.stream); the clamped joints into
        `out`. q_prev and out: float64 of num_joints, not the same array."""
        n = self.cfg.num_joints
        for name, a in (("q_prev", q_prev), ("out", out)):
            if a.shape != (n,) or a.dtype != np.float64 or not a.flags.c_contiguous:
                raise ValueError(f"stream_feet: {name} must be {n} contiguous float64 values")
        if out is q_prev or feet.shape != (n // 3, 3) or np.shape(fallback) != (n,):
            raise ValueError(f"stream_feet: {n // 3} feet, {n} fallback angles and an out "
                             f"apart from q_prev expected")
        lib.mk_leg_targets(self.kin.native, ffi.from_buffer("double[]", np.ascontiguousarray(feet, dtype=np.float64)),
                           ffi.from_buffer("double[]", np.ascontiguousarray(fallback, dtype=np.float64)),
                           *self._limits, margin, self.kernel.native, ffi.from_buffer("double[]", q_prev),
                           self.dt, ffi.from_buffer("double[]", out), self._clipped_ptr)
        self.kernel.tracking = False

    def stand_pose(self) -> np.ndarray:
        q, _ = self.kin.inverse(self.kin.stance_feet(self.cfg.stand_height, self.cfg.stand_com_x))
        return q.reshape(-1)

    def height_pose(self, height: float) -> np.ndarray:
        q, _ = self.kin.inverse(self.kin.stance_feet(height))
        return q.reshape(-1)

    def body_height(self, q: np.ndarray) -> float:
        return self.kin.body_height(np.asarray(q).reshape(-1, 3))

    def weight_support(self, body: BodyEstimate | None, stance: np.ndarray, out: np.ndarray) -> None:
        """Into `out`: the feed-forward joint torques with which the stance
        legs carry the robot's weight (config `balance` mass; vertical forces,
        least squares, no moment about the centre of mass), so that
        position-controlled poses do not sag by weight / kp. Zero without a
        state estimate."""
        out[:] = 0.0
        bal = self.cfg.balance
        if body is None or bal is None or not stance.any():
            return
        legs = np.flatnonzero(stance)
        rot = body.rot
        feet = body.feet[legs] - bal.com_offset
        feet[:, 2] -= self.kin.foot_radius               # the contact point, not the ball's centre
        f = weight_forces(feet @ rot.T, float(-bal.mass * GRAVITY[2]))
        leg_torques(body.jacobian, rot, f, legs, out)


class HumanoidRobot(Robot):
    """The legs are the config's `leg_indices` (right then left, in the IK's
    order), wherever they are in wire order; the arms and head have no task
    of their own and hold their stand pose."""
    kin: HumanoidLegKinematics
    LEG_LIMBS = frozenset(HUMANOID_LEG_GROUPS)

    def __init__(self, cfg: Config, kin: Any, kernel: Kernel) -> None:
        super().__init__(cfg, kin, kernel)
        self.holds_lie_pose = True

    def stand_pose(self) -> np.ndarray:
        return self.cfg.poses["stand"].copy()

    def height_pose(self, height: float) -> np.ndarray:
        q = self.stand_pose()
        q[self.cfg.leg_indices], _ = self.kin.stance_legs(height)
        return q

    def body_height(self, q: np.ndarray) -> float:
        return self.kin.body_height(np.asarray(q)[self.cfg.leg_indices])

    def feet(self, q: np.ndarray) -> tuple[FootPose, FootPose]:
        """(right, left) sole poses in the torso frame for joint angles q."""
        legs = np.asarray(q)[self.cfg.leg_indices]
        return (self.kin.forward(legs[:6], LEG_SIDES[0]), self.kin.forward(legs[6:], LEG_SIDES[1]))

    def legs_for(self, feet: tuple[FootPose, FootPose]) -> tuple[np.ndarray, bool]:
        """The 12 leg joints putting the soles at (right, left); True if the IK
        had to pull a foot back into reach."""
        return self.kin.inverse_legs(*feet)


def make_robot(cfg: Config, kernel: Kernel) -> Robot:
    """The robot model for the config's kind, with its leg kinematics."""
    if cfg.kind == "humanoid":
        assert isinstance(cfg.geometry, HumanoidGeometry)
        return HumanoidRobot(cfg, HumanoidLegKinematics(cfg.geometry), kernel)
    assert isinstance(cfg.geometry, Geometry)
    return QuadrupedRobot(cfg, QuadrupedKinematics(cfg.geometry), kernel)


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
class Imu:
    """The IMU as the behaviours see it (any robot kind, while it is fresh):
    the attitude filter's roll and pitch (with the yaw left out the body's
    rotation is Ry(pitch) Rx(roll)) and the body rates. The controller fills
    one in place per tick."""
    roll: float = 0.0
    pitch: float = 0.0
    gyro: np.ndarray = field(default_factory=lambda: np.zeros(3))

    @property
    def tilt(self) -> float:
        """The torso's angle from upright (its z axis against the vertical), rad."""
        return math.acos(max(-1.0, min(1.0, math.cos(self.roll) * math.cos(self.pitch))))


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
    # Set by the FSM when it refused `block` and runs the current state anyway
    # (BAN_TRANS): the state must not carry the block out, even one of its own mode.
    refused: bool = False
    # The state estimate (a quadruped with a fresh IMU and a running
    # estimator), None otherwise: closed-loop mode 11 needs it.
    body: BodyEstimate | None = None
    # The IMU while it is fresh (every robot kind), None otherwise.
    imu: Imu | None = None
    # A humanoid's (right, left) soles in the torso frame from the measured
    # joints, as the biped estimate computed them this tick; None until then.
    soles: tuple[FootPose, FootPose] | None = None


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


def replay_refusal(name: str, playing: int | None, gait: int, errors: dict[int, str],
                   known: Iterable[int]) -> str | None:
    """Why a mode that replays one motion per gait id (16, 64) refuses gait
    `gait`: another gait is playing (`playing`; SPEC §11: the reference
    freezes), the gait's motion was refused at start, or it has none."""
    if playing is not None and gait != playing:
        return f"{name} is playing gait {playing}; send another mode before gait {gait}"
    if gait in errors:
        return f"{name} gait {gait} was refused at start: {errors[gait]}"
    if gait not in known:
        return f"gait {gait} is not a {name} motion (known: {sorted(known)})"
    return None


def landed(body: BodyEstimate, contact_force: float, still_rate: float) -> bool:
    """Every foot carries contact_force N by the estimate and the body turns
    slower than still_rate rad/s: back on the ground after a jump."""
    return bool(np.all(body.force[:, 2] >= contact_force)) and float(np.linalg.norm(body.gyro)) < still_rate


def percent(count: int, total: int) -> int:
    return 100 if total <= 0 or count >= total else int(count * 100 // total)


class Behaviour:
    mode: int = -1
    # A re-request of this mode does not cancel a pending transition (SPEC §5.6).
    keeps_target = False
    # The controller checks that stiff joints follow their targets
    # (controller/core/faults.py); states that do not position-control the joints
    # (OFF, the damper, motor_ctrl's pass-through) say False.
    checks_tracking = True
    # The gait ids this mode carries out (SPEC §5.3); None: it takes any.
    # Another id is refused with BAN_TRANS instead of running as some default
    # (the reference runs it and reports status 1 for ever, SPEC §5.7).
    gaits: frozenset[int] | None = None

    def __init__(self, robot: Robot) -> None:
        self.robot = robot
        self.cfg = robot.cfg
        self.kernel = robot.kernel

    def enter(self, ctx: TickContext) -> None:
        """Take over; the kernel still holds the previous state's command."""

    def run(self, ctx: TickContext) -> None:
        """One tick of control in the Normal operating mode."""

    def foot_workspace(self) -> tuple[float, float] | None:
        """The foot-workspace check the FSM runs for this state (SPEC §5.8):
        None, or (largest |x| as a leg angle in degrees, share s: each foot
        must stay below -s x leg length)."""
        return None

    def refuses(self, block: Block) -> str | None:
        """Why this state cannot carry out `block` (e.g. an unknown gait), or None."""
        if self.gaits is not None and block.mode == self.mode and block.gait_id not in self.gaits:
            return f"gait {block.gait_id} is not a mode-{self.mode} gait (known: {sorted(self.gaits)})"
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

    def planned_contact(self) -> int | None:
        """Feet the motion plans on the ground, bit i = leg i; None when the
        state plans no steps (all feet down as far as it is concerned)."""
        return None

    def limbs_in_use(self) -> frozenset[str] | None:
        """The limbs (config `limbs`) this state drives now; None: all of
        them. A script may play on the others beside it (director.py)."""
        return None

    def failure(self) -> str | None:
        """Why the motion physically failed (e.g. a jump that did not land on
        its feet), or None; the controller logs it once and puts it in
        controller_status.last_error, and the progress never reaches 100."""
        return None

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
