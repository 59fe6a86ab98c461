"""The motion optimiser: finds a dynamic motion's joint trajectory for a
quadruped config (the mode-16 jumps, and the recovery stand's roll-overs) by
rolling it out in the physics model (controller/sim/physics.py) and searching
its parameters with CMA-ES (the `cma` package).

A jump is five phases (controller/motion/trajectory.py), from the stand:
crouch (to a body height and a fore-aft shift), push (joints driven towards an
extended pose under feed-forward torques), flight (legs to a landing pose under
soft gains), land (back to the stand pose under landing gains) and settle
(the stand held with the recovery gains). The parameters are those phases'
durations, poses, gains and torques, per leg pair (front, rear); turning
jumps add a yaw pattern (abad and hip torques of opposite sign front/rear and
left/right). Each candidate is rolled out from the controller's own stand (as the
scorecard plays a jump) through the same TrajectoryPlayback and kernel the controller uses, and scored on the
physics body's ground truth: the jump's goal (turn, travel, height), landing
on the feet upright, no trunk contact, ending at the stand.

A roll-over starts lying folded on its back and is four free phases (every joint's target within its limits, and
a duration) then a fold; it is scored on how upright the body ends (and, to
guide the search, how upright it got on the way), from the back first and
then from the sides too (optimise, roll_cost). The recovery stand plays
them (controller/behaviours/recovery.py) as its IMU says.

This is an offline design tool, so ground truth is what it should judge by;
the controller never sees it. `motionctl optimise` runs it and writes the
trajectory file.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from controller.logs import configure
from controller.motion.trajectory import Phase, Trajectory, TrajectoryPlayback, mirror_map, mirrored
from controller.robot.angles import quat_rpy
from controller.robot.config import Config, load_config
from controller.robot.config.damping import given_back
from controller.robot.config.quadruped import Geometry
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.native import Kernel
from controller.sim.limbs import lower_leg_geoms
from controller.sim.physics import PhysicsRobot
from controller.sim.trial import PRELUDE_S, Trial
from controller.sim.workers import Lost, Workers, local_cores
from controller.sim.world import World

# Leg pairs by leg index (FR, FL, RR, RL): front 0, 1; rear 2, 3. Left legs 1, 3.
FRONT = (0, 1)
REAR = (2, 3)
LEFT_SIGN = np.array([-1.0, 1.0, -1.0, 1.0])   # +1 on the left legs
REAR_SIGN = np.array([1.0, 1.0, -1.0, -1.0])   # -1 on the rear legs

# The sim-to-real margins of issue 17: a candidate must work in all of them.
MARGIN_WORLDS = (World(), World(trunk_mass_scale=0.9), World(trunk_mass_scale=1.1),
                 World(friction=0.5), World(friction=1.0))

SETTLE_S = 1.0           # a roll-over's start: lying folded, held this long

# A jump down a stair (mode 16 id 9) is also rolled out off a platform whose
# edge is this far ahead of the body's start, onto the floor below: CyberDog
# 2's front feet 10 cm and its rear feet 0.42 m behind it (the scorecard's
# stair rows, where the stand-up ends 6 cm further on, leave 4 and 36 cm).
STAIR_EDGE = 0.25        # m
# Off a stair the flight lasts longer than on the flat, so the jump lands
# further; there it need only clear the edge with its rear feet and land
# within this (the scorecard's stair rows).
STAIR_TRAVEL = (0.45, 0.75)  # m
AFTER_S = 0.8            # watched after the trajectory ends


@dataclass(frozen=True)
class Param:
    name: str
    start: float
    low: float
    high: float


COMMON = (
    Param("crouch_height", 0.15, 0.10, 0.21),
    Param("crouch_shift", 0.0, -0.06, 0.06),      # feet ahead of the hips (m)
    Param("push_ms", 150.0, 60.0, 300.0),
    Param("push_kp", 20.0, 0.0, 80.0),
    Param("push_kd", 0.5, 0.0, 3.0),
    Param("push_hip_front", -0.6, -1.6, 0.4),
    Param("push_knee_front", 0.8, 0.5, 2.3),
    Param("push_hip_rear", -0.6, -1.6, 0.4),
    Param("push_knee_rear", 0.8, 0.5, 2.3),
    Param("tau_hip_front", 2.0, -12.0, 12.0),
    Param("tau_knee_front", -6.0, -12.0, 12.0),
    Param("tau_hip_rear", 2.0, -12.0, 12.0),
    Param("tau_knee_rear", -6.0, -12.0, 12.0),
    Param("flight_ms", 200.0, 60.0, 450.0),
    Param("flight_kp", 25.0, 5.0, 80.0),
    Param("flight_kd", 1.0, 0.2, 3.0),
    Param("land_hip_front", -0.9, -1.6, 0.0),
    Param("land_knee_front", 1.4, 0.6, 2.3),
    Param("land_hip_rear", -0.9, -1.6, 0.0),
    Param("land_knee_rear", 1.4, 0.6, 2.3),
    Param("land_ms", 300.0, 100.0, 600.0),
    Param("land_kp", 60.0, 20.0, 100.0),
    Param("land_kd", 2.5, 0.5, 5.0),
)
YAW = (
    Param("tau_abad_yaw", 0.0, -8.0, 8.0),      # front +, rear -
    Param("tau_hip_yaw", 0.0, -8.0, 8.0),       # left +, right -
    Param("abad_yaw", 0.0, -0.4, 0.4),          # push abad target, front +, rear -
)
# A sideways jump pushes every leg's abad the same way (a left-right mirror
# negates the abad, so one sign on all four legs moves every foot the same
# way across) and reaches out to that side for the landing.
SIDE = (
    Param("tau_abad_side", 0.0, -8.0, 8.0),
    Param("abad_side", 0.0, -0.4, 0.4),         # push abad target, every leg
    Param("land_abad_side", 0.0, -0.4, 0.4),    # landing abad target, every leg
)


# COMMON's and YAW's figures were set for CyberDog 2: a 0.24 m stand and a
# 12 N m motor on every joint. Another robot's crouch heights scale with its
# stand height and each feed-forward torque with its joint's torque limit
# (CyberDog 2's are unchanged), so a larger robot is neither asked to crouch
# below its knees' reach nor held to a fraction of its motors.
REFERENCE_STAND = 0.24    # m
REFERENCE_TORQUE = 12.0   # N m
TORQUE_JOINT = {"tau_hip_front": 1, "tau_knee_front": 2, "tau_hip_rear": 1, "tau_knee_rear": 2,
                "tau_abad_yaw": 0, "tau_hip_yaw": 1, "tau_abad_side": 0}


def _for_robot(cfg: Config, q: Param) -> Param:
    if q.name == "crouch_height":
        scale = cfg.stand_height / REFERENCE_STAND
    elif q.name in TORQUE_JOINT:
        scale = float(cfg.torque_limit[TORQUE_JOINT[q.name]]) / REFERENCE_TORQUE
    else:
        return q
    return Param(q.name, q.start * scale, q.low * scale, q.high * scale)


ROLL_PHASES = 4
ROLL_MS = (100.0, 600.0)
ROLL_FOLD_MS = 400.0


@dataclass(frozen=True)
class Goal:
    """What a motion must do, judged on the body's ground truth."""
    name: str
    travel: float = 0.0       # m forward (start heading)
    lateral: float = 0.0      # m to the left (start heading): a sideways jump
    yaw: float = 0.0          # rad, + left
    rise: float = 0.0         # m: apex base height over the start, at least
    turning: bool = False
    roll_start: float | None = None   # a roll-over: lying folded at this roll (rad)
    stairs: tuple[float, ...] = ()    # also jump off platforms this high (m)
    from_sides: bool = False          # a roll-over: also from lying on a side (side_starts)

    def worlds(self, nominal: bool = False) -> tuple[World, ...]:
        """Where a candidate is rolled out: the margin worlds (or only the
        unchanged one) and, for a jump down a stair, each stair."""
        flat = (World(),) if nominal else MARGIN_WORLDS
        return flat + tuple(World(drop=h, at=STAIR_EDGE) for h in self.stairs)

    def params(self, cfg: Config) -> tuple[Param, ...]:
        if self.roll_start is None:
            extra = (YAW if self.turning else ()) + (SIDE if self.lateral else ())
            return tuple(_for_robot(cfg, q) for q in COMMON + extra)
        fold = _fold(cfg)
        out = []
        for k in range(ROLL_PHASES):
            out += [Param(f"p{k}_{name}", float(fold[j]), float(cfg.q_min[j]), float(cfg.q_max[j]))
                    for j, name in enumerate(cfg.joint_names)]
            out.append(Param(f"p{k}_ms", 300.0, *ROLL_MS))
        return tuple(out)


GOALS = {
    "yaw-left": Goal("yaw-left", yaw=math.pi / 2, turning=True),
    "forward": Goal("forward", travel=0.6),
    "forward-short": Goal("forward-short", travel=0.3),
    "forward-stair": Goal("forward-stair", travel=0.5, stairs=(0.10, 0.15, 0.20)),
    "left": Goal("left", lateral=0.2),
    "up": Goal("up", rise=0.30),
    "roll-back": Goal("roll-back", roll_start=math.pi, from_sides=True),
}


def side_starts(cfg: Config, goal: Goal) -> tuple[float, ...]:
    """Where a roll-over is also rolled out from, at once (no settling): a
    side the recovery stand plays it on rather than its mirror image
    (`scripts.recovery.roll_through`: 0 both, else the side of its sign),
    lying on it and 0.05 rad either way, for a roll that does not hinge on
    the exact angle."""
    if goal.roll_start is None or not goal.from_sides:
        return ()
    through = cfg.scripts.roll_through if cfg.scripts is not None else 0
    sides = (1.0, -1.0) if through == 0 else (float(through),)
    return tuple(side * math.pi / 2 + d for side in sides for d in (0.0, -0.05, 0.05))


def _fold(cfg: Config) -> np.ndarray:
    return np.clip(np.asarray(cfg.fold_pose, dtype=float), cfg.q_min + 0.01, cfg.q_max - 0.01)


def _kinematics(cfg: Config) -> QuadrupedKinematics:
    if not isinstance(cfg.geometry, Geometry):
        raise ValueError(f"{cfg.path}: jumps are for quadrupeds")
    return QuadrupedKinematics(cfg.geometry)


def build(cfg: Config, goal: Goal, x: Sequence[float] | np.ndarray, name: str = "motion") -> Trajectory:
    """The motion's phases from a parameter vector (goal.params order)."""
    if goal.roll_start is not None:
        return _build_roll(cfg, x, name)
    p = dict(zip((q.name for q in goal.params(cfg)), (float(v) for v in x)))
    p.setdefault("tau_abad_yaw", 0.0)
    p.setdefault("tau_hip_yaw", 0.0)
    p.setdefault("abad_yaw", 0.0)
    for name in ("tau_abad_side", "abad_side", "land_abad_side"):
        p.setdefault(name, 0.0)
    kin = _kinematics(cfg)
    n = cfg.num_joints
    hz = cfg.tick_hz

    def ticks(ms: float) -> int:
        return max(1, int(round(ms * hz / 1000.0)))

    def pairs(hip_f: float, knee_f: float, hip_r: float, knee_r: float,
              abad: np.ndarray | None = None) -> np.ndarray:
        q = np.zeros((4, 3))
        q[list(FRONT), 1], q[list(FRONT), 2] = hip_f, knee_f
        q[list(REAR), 1], q[list(REAR), 2] = hip_r, knee_r
        if abad is not None:
            q[:, 0] = abad
        return clip(q.reshape(-1))

    def clip(q: np.ndarray) -> np.ndarray:
        margin = 0.01
        return np.clip(q, cfg.q_min + margin, cfg.q_max - margin)

    def gains(abad: float, leg: float) -> np.ndarray:
        return np.tile([abad, leg, leg], n // 3)

    stand, _ = kin.inverse(kin.stance_feet(cfg.stand_height, cfg.stand_com_x))
    stand = clip(stand.reshape(-1))
    crouch, _ = kin.inverse(kin.stance_feet(p["crouch_height"], cfg.stand_com_x - p["crouch_shift"]))
    crouch = clip(crouch.reshape(-1))
    rec = cfg.gains["recovery"]
    rec_kp, rec_kd = rec.kp, rec.kd
    zero = np.zeros(n)

    push_abad = p["abad_yaw"] * REAR_SIGN + p["abad_side"]
    push_q = pairs(p["push_hip_front"], p["push_knee_front"], p["push_hip_rear"],
                   p["push_knee_rear"], push_abad)
    tau = np.zeros((4, 3))
    tau[list(FRONT), 1], tau[list(FRONT), 2] = p["tau_hip_front"], p["tau_knee_front"]
    tau[list(REAR), 1], tau[list(REAR), 2] = p["tau_hip_rear"], p["tau_knee_rear"]
    tau[:, 0] += p["tau_abad_yaw"] * REAR_SIGN + p["tau_abad_side"]
    tau[:, 1] += p["tau_hip_yaw"] * LEFT_SIGN
    limit = cfg.torque_limit.reshape(4, 3)
    push_tau = np.clip(tau, -limit, limit).reshape(-1)
    land_q = pairs(p["land_hip_front"], p["land_knee_front"], p["land_hip_rear"],
                   p["land_knee_rear"], stand.reshape(4, 3)[:, 0] + p["land_abad_side"])

    phases = (
        Phase("crouch", ticks(400), "quintic", crouch, rec_kp, rec_kd, zero),
        Phase("push", ticks(p["push_ms"]), "linear", push_q, gains(40.0, p["push_kp"]),
              gains(1.0, p["push_kd"]), push_tau),
        Phase("flight", ticks(p["flight_ms"]), "cubic", land_q, gains(40.0, p["flight_kp"]),
              gains(1.0, p["flight_kd"]), zero),
        Phase("land", ticks(p["land_ms"]), "quintic", stand, gains(60.0, p["land_kp"]),
              gains(2.0, p["land_kd"]), zero),
        Phase("settle", ticks(400), "linear", stand, rec_kp, rec_kd, zero),
    )
    return Trajectory(name, phases)


def _build_roll(cfg: Config, x: Sequence[float] | np.ndarray, name: str) -> Trajectory:
    n = cfg.num_joints
    values = np.asarray(x, dtype=float)
    rec = cfg.gains["recovery"]
    zero = np.zeros(n)
    hz = cfg.tick_hz
    phases = []
    for k in range(ROLL_PHASES):
        chunk = values[k * (n + 1):(k + 1) * (n + 1)]
        q = np.clip(chunk[:n], cfg.q_min + 0.01, cfg.q_max - 0.01)
        ticks = max(1, int(round(float(chunk[n]) * hz / 1000.0)))
        phases.append(Phase(f"roll {k + 1}", ticks, "linear", q, rec.kp, rec.kd, zero))
    phases.append(Phase("fold", int(round(ROLL_FOLD_MS * hz / 1000.0)), "quintic", _fold(cfg),
                        rec.kp, rec.kd, zero))
    return Trajectory(name, tuple(phases))


def mirror(traj: Trajectory, cfg: Config, name: str, meta: dict[str, Any] | None = None,
           pairs: tuple[list[tuple[str, str]], list[str]] | None = None) -> Trajectory:
    """The left-right mirror image (a right turn from a left one), by
    `pairs` or mirror_pairs(cfg): FR<->FL, RR<->RL, abad negated."""
    pairs = mirror_pairs(cfg) if pairs is None else pairs
    swap, sign = mirror_map(cfg.joint_names, tuple(pairs[0]), frozenset(pairs[1]))
    return mirrored(traj, name, swap, sign, meta)


def mirror_pairs(cfg: Config) -> tuple[list[tuple[str, str]], list[str]]:
    """The config's scripts.mirror pairs and negated joints, or, without
    them, the quadruped's own: each joint of a right leg (R as the name's
    second letter, FR, RR) with the same joint of its left twin, the abad
    joints negated (the controller's convention: a leg's abad turns the
    other way on the other side)."""
    sc = cfg.scripts
    if sc is not None and sc.mirror_pairs:
        return list(sc.mirror_pairs), sorted(sc.mirror_negate)
    pairs, negate = [], []
    for leg in cfg.legs:
        if len(leg) == 2 and leg[1] == "R" and f"{leg[0]}L" in cfg.legs:
            for name in cfg.joint_names:
                if name.startswith(f"{leg}_"):
                    joint = name.split("_", 1)[1]
                    pairs.append((name, f"{leg[0]}L_{joint}"))
                    if joint == "abad":
                        negate += [name, f"{leg[0]}L_{joint}"]
    return pairs, negate


@dataclass
class Outcome:
    """What a rollout did, from ground truth."""
    travel: float = 0.0
    lateral: float = 0.0
    yaw: float = 0.0
    rise: float = 0.0
    end_tilt: float = 0.0
    max_tilt: float = 0.0
    end_height: float = 0.0
    trunk_contact_s: float = 0.0   # s on the ground by anything but a foot or a lower leg
    shank_contact_s: float = 0.0   # s with a lower leg (a calf) on the ground
    airborne_s: float = 0.0
    end_on_feet: bool = False
    saturation: float = 0.0
    fell: bool = False
    up: float = 1.0           # the body's z axis . the world's z at the end (1 upright, -1 on its back)
    best_up: float = -1.0     # the most upright it was on the way
    extra: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, float]:
        keys = ("travel", "lateral", "yaw", "rise", "end_tilt", "max_tilt", "end_height",
                "trunk_contact_s", "shank_contact_s", "airborne_s", "saturation", "up")
        out = {k: round(float(getattr(self, k)), 4) for k in keys}
        out["end_on_feet"] = int(self.end_on_feet)
        return out


class Rollout:
    """A physics body that starts every rollout from the same start: for a
    jump, the controller's own stand, as the scorecard's row plays it (the
    robot stood up by mode 12 and held PRELUDE_S); for a roll-over
    (`roll_start`), lying folded at that roll angle."""

    def __init__(self, cfg: Config, world: World | None = None, roll_start: float | None = None,
                 settle: bool = True) -> None:
        """`settle` False: the roll-over starts the moment the body is placed
        (as the recovery stand rolls at once from a side), not after
        SETTLE_S at rest."""
        self.cfg = cfg
        self.world = world or World()
        self.start = roll_start
        self.label = self.world.label + ("" if settle else f", from roll {roll_start:+.2f}")
        if roll_start is None:
            # The stand the jump is played from on the card: the controller's
            # (its gains, its height over a soft foot's sink, its feed-forward),
            # not the IK pose held by the recovery gains, which started a
            # Go1 turning jump 0.27 rad short of the card's run of the same file.
            trial = Trial(cfg, world=world)
            trial.send(12)
            trial.run(PRELUDE_S)
            self.robot = trial.robot
        else:
            self.robot = PhysicsRobot(cfg, world)
            hold = _fold(cfg)
            self.robot.place(hold, (roll_start, 0.0, 0.0))
            kp, kd = cfg.gains["recovery"].kp, cfg.gains["recovery"].kd
            zero = np.zeros(cfg.num_joints)
            for _ in range(int(SETTLE_S * cfg.tick_hz) if settle else 1):
                self.robot.step(hold, zero, kp, kd, zero, cfg.dt)
        self.fall_tilt = 1.2 if roll_start is None else math.inf   # a roll-over is all tilt
        m = self.robot.model
        self.state = np.empty(mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_PHYSICS))
        mujoco.mj_getState(m, self.robot.data, self.state, mujoco.mjtState.mjSTATE_PHYSICS)
        self.feet = {m.geom(g).id for g in range(m.ngeom) if m.geom(g).name.endswith("_foot")}
        # What may touch besides the feet, as the scorecard judges it: the
        # lower legs (a maker's calf on soft feet touches on every landing).
        self.lower = lower_leg_geoms(m, cfg, list(self.robot.model_map.order), self.feet)
        self.allowed = self.feet | self.lower
        self.ground = self.robot.is_ground
        self.trunk = m.body("trunk").id

    def run(self, traj: Trajectory) -> Outcome:
        cfg, robot = self.cfg, self.robot
        m, d = robot.model, robot.data
        mujoco.mj_setState(m, d, self.state, mujoco.mjtState.mjSTATE_PHYSICS)
        mujoco.mj_forward(m, d)
        kernel = Kernel(cfg.q_min, cfg.q_max, cfg.v_max, step_max=cfg.v_max * cfg.dt)
        damping = given_back(cfg.joint_damping)
        scratch = np.zeros(cfg.num_joints)
        q0 = robot.q
        kernel.track(q0)
        play = TrajectoryPlayback(traj, cfg.dt)
        tick0 = 1000
        play.start(kernel, tick0, q0)
        start = d.qpos[:3].copy()
        yaw0 = quat_rpy(d.qpos[3:7])[2]
        out = Outcome()
        total = traj.total_ticks + int(AFTER_S * cfg.tick_hz)
        apex = start[2]
        saturated = 0
        yaw_prev, yaw_turned = yaw0, 0.0
        for i in range(total):
            tick = tick0 + i
            play.step(tick)
            kernel.step(tick * cfg.dt)
            if damping is not None:
                kernel.add_damping(damping, cfg.torque_limit, scratch)
            robot.step(kernel.pos, kernel.vel, kernel.kp, kernel.kd, kernel.tau, cfg.dt)
            saturated += bool(np.any(np.abs(robot.tau) >= robot.limit - 1e-9))
            roll, pitch, yaw = quat_rpy(d.qpos[3:7])
            yaw_turned += (yaw - yaw_prev + math.pi) % (2 * math.pi) - math.pi
            yaw_prev = yaw
            tilt = max(abs(roll), abs(pitch))
            out.max_tilt = max(out.max_tilt, tilt)
            apex = max(apex, float(d.qpos[2]))
            touching = self._touching()
            if not touching:
                out.airborne_s += cfg.dt
            if touching - self.allowed:
                out.trunk_contact_s += cfg.dt
            if touching & self.lower:
                out.shank_contact_s += cfg.dt
            up = float(d.xmat[self.trunk][8])       # the trunk's z axis, world z component
            out.best_up = max(out.best_up, up)
            if tilt > self.fall_tilt:
                out.fell = True
                break
        c, s = math.cos(yaw0), math.sin(yaw0)
        moved = d.qpos[:3] - start
        out.travel = float(c * moved[0] + s * moved[1])
        out.lateral = float(-s * moved[0] + c * moved[1])
        out.yaw = yaw_turned
        out.rise = apex - float(start[2])
        roll, pitch, _ = quat_rpy(d.qpos[3:7])
        out.end_tilt = max(abs(roll), abs(pitch))
        out.end_height = float(d.qpos[2])
        out.up = float(d.xmat[self.trunk][8])
        touching = self._touching()
        out.end_on_feet = bool(touching) and touching <= self.allowed and self.feet <= touching
        out.saturation = saturated / max(1, total)
        return out

    def _touching(self) -> set[int]:
        d = self.robot.data
        pairs = d.contact.geom[:d.ncon]
        ground = self.ground[pairs]
        return set(pairs[ground[:, 1], 0].tolist()) | set(pairs[ground[:, 0], 1].tolist())


# Inside these bands a jump meets its SPEC target with room to spare (the
# targets: turns ±10°, travel ±0.1 m); outside them the cost climbs steeply.
TURN_BAND = 0.10          # rad
TRAVEL_BAND = 0.06        # m


def _outside(error: float, band: float) -> float:
    return (max(0.0, abs(error) - band) / 0.01) ** 2


def cost(goal: Goal, o: Outcome, stand_height: float, stair: bool = False) -> float:
    """Lower is better; each term is about 1 at its tolerance. `stair`: the
    rollout jumped off a platform (travel need only be within STAIR_TRAVEL)."""
    if goal.roll_start is not None:
        # Upright at the end; how upright it got on the way guides the search.
        return (1.0 - o.up) - 0.5 * (1.0 + o.best_up) + 2.0 * o.saturation
    j = 0.0
    if goal.turning:
        j += ((o.yaw - goal.yaw) / 0.05) ** 2 + (math.hypot(o.travel, o.lateral) / 0.1) ** 2
        j += _outside(o.yaw - goal.yaw, TURN_BAND)
    elif goal.lateral:
        j += (o.yaw / 0.08) ** 2 + (o.travel / 0.08) ** 2
        j += ((o.lateral - goal.lateral) / 0.05) ** 2 + _outside(o.lateral - goal.lateral, TRAVEL_BAND)
    else:
        j += (o.yaw / 0.08) ** 2 + (o.lateral / 0.08) ** 2
        if goal.rise > 0:
            j += (max(0.0, goal.rise - o.rise) / 0.02) ** 2 + (o.travel / 0.1) ** 2
        elif stair:
            low, high = STAIR_TRAVEL
            j += _outside(o.travel - (low + high) / 2, (high - low) / 2)
        else:
            j += ((o.travel - goal.travel) / 0.05) ** 2 + _outside(o.travel - goal.travel, TRAVEL_BAND)
    # Any touch of the ground but by a foot or a lower leg costs as much as
    # missing the goal by its tolerance several times over (the scorecard
    # allows none): a brief knee or thigh strike on landing must not buy a
    # closer goal. A calf on the ground is allowed, as the scorecard allows it
    # (it reports it apart), but a clean landing is preferred.
    j += (20.0 if o.trunk_contact_s > 0 else 0.0) + 1000.0 * o.trunk_contact_s
    j += 10.0 * o.shank_contact_s
    j += (0.0 if o.end_on_feet else 20.0) + (100.0 if o.fell else 0.0)
    j += (o.end_tilt / 0.1) ** 2 + (max(0.0, o.max_tilt - 0.4) / 0.1) ** 2
    j += ((o.end_height - stand_height) / 0.03) ** 2
    j += 2.0 * o.saturation
    return j


# -- the search ---------------------------------------------------------------

_worker: dict[str, Any] = {}
LOST_COST = 1e6      # a candidate never evaluated: worse than any that ran
# A roll-over's first stage ends once it gets up from the back (cost, from
# cost(): standing is -1 plus twice its saturation; lying on the back, 1.5-2).
BACK_UP_COST = 0.0


def _init(config_path: str, goal_name: str, worlds: Sequence[World], log_level: str | None = None) -> None:
    if log_level is not None:
        # The controllers that stand each rollout's body up log as a daemon's
        # do; in a worker of the optimiser that is noise.
        configure(log_level)
    cfg = load_config(config_path)
    goal = GOALS[goal_name]
    _worker["cfg"] = cfg
    _worker["goal"] = goal
    # A roll-over from the back in every world, from the sides in the first
    # (the unchanged one): the card's rows from a side start on the back
    # once the folded body has fallen there (Barkour vB), and every world
    # more would cost six rollouts a candidate.
    _worker["rollouts"] = [Rollout(cfg, w, goal.roll_start) for w in worlds] + [
        Rollout(cfg, worlds[0], start, settle=False) for start in side_starts(cfg, goal)]


def _evaluate(x: Sequence[float], back_only: bool = False) -> tuple[float, list[dict[str, Any]]]:
    """A candidate's cost and what it did in each rollout (`back_only`: a
    roll-over from the back alone, optimise's first stage)."""
    cfg, goal = _worker["cfg"], _worker["goal"]
    traj = build(cfg, goal, x)
    rows = []
    rollouts = [r for r in _worker["rollouts"] if not back_only or r.start == goal.roll_start]
    for r in rollouts:
        o = r.run(traj)
        stair = r.world.drop > 0
        rows.append({"world": r.label, **o.as_dict(),
                     "cost": round(cost(goal, o, cfg.stand_height, stair), 4)})
    costs = [row["cost"] for row in rows]
    # A jump must work in every world; a roll-over is retried by the recovery
    # stand as its IMU says (roll_cost).
    if goal.roll_start is None:
        return max(costs), rows
    starts = [r.start for r in rollouts]
    for row, start in zip(rows, starts):
        row["start"] = None if start is None else round(start, 4)   # roll_cost reads it again from a file
    return roll_cost(costs, starts)[0], rows


def _evaluate_back(x: Sequence[float]) -> tuple[float, list[dict[str, Any]]]:
    """A roll-over from the back alone (optimise's first stage)."""
    return _evaluate(x, back_only=True)


def roll_cost(costs: Sequence[float], starts: Sequence[float | None]) -> tuple[float, int]:
    """A roll-over's cost from its rollouts' `costs` (each lying at its roll
    angle in `starts`: on the back, or on a side) and the side it should be played on
    (`scripts.recovery.roll_through`: the sign of the side whose starts did
    better, 0 with none). Half is the start from the back, as the recovery
    plays it first; half the side it does better from: the recovery plays
    its mirror image on the other side (given `roll_through`), so one side
    that gets up is enough. Averaged over all seven starts, the back was one
    seventh of it: on Barkour vB the search stood the body up from one side
    (three starts) and left it on the other side after a roll from the back,
    and the recovery needed a second roll (6.5 s of the card's 6)."""
    if not costs:
        return math.inf, 0
    on_side = [s is not None and abs(math.cos(s)) < 0.5 for s in starts]
    back = [c for side, c in zip(on_side, costs) if not side]
    sides = {sign: [c for side, s, c in zip(on_side, starts, costs) if side and math.copysign(1.0, s or 0.0) == sign]
             for sign in (1.0, -1.0)}
    means = {side: float(np.mean(v)) for side, v in sides.items() if v}
    if not means:
        return float(np.mean(back)), 0
    through = min(means, key=lambda side: means[side])
    return 0.5 * (float(np.mean(back)) + means[through]), int(through)


@dataclass
class Result:
    x: np.ndarray
    cost: float
    outcomes: list[dict[str, Any]]
    evaluations: int
    generations: int
    lost: int = 0        # candidates whose workers died twice (costed LOST_COST)
    first: int = 0       # of several starts, the one the kept search began from


def optimise(config_path: str, goal: Goal, worlds: Sequence[World] = (World(),),
             generations: int = 60, population: int = 0, sigma: float = 0.25, seed: int = 1,
             workers: int = 0, start: Sequence[float] | Sequence[Sequence[float]] | None = None,
             ray: str | None = None, progress: Callable[[int, float, list[dict[str, Any]]], None] | None = None,
             log_level: str | None = None) -> Result:
    """CMA-ES over the goal's parameters, each scaled to [0, 1] between its
    bounds; a candidate's cost is its worst over `worlds` (a roll-over's:
    roll_cost). The candidates of a generation run on `workers` local processes
    (0: one a core, up to 8) or on the Ray cluster at `ray`; a candidate
    whose worker died twice costs LOST_COST and is counted in `lost`.
    `log_level`: the workers' logging (controller/logs.py), None to leave it.
    A roll-over is searched in two stages: from the back alone until it
    gets up there (BACK_UP_COST, at most half the generations), then from
    every start for the generations left.
    `start`: the parameters to begin from, or a list of such: a search
    from each (`generations` each), the best of them kept (`first`: from
    which). A start's own cost says little of where its search ends: on
    Barkour vB CyberDog 2's roll-over rolled out better than Go2's and its
    search stayed on the back (1.55 after 20 generations) where Go2's stood
    it up (0.27)."""
    import cma  # the optimiser's own dependency, loaded only here

    params = goal.params(load_config(config_path))
    low = np.array([p.low for p in params])
    span = np.array([p.high for p in params]) - low
    given = np.array(start if start is not None else [p.start for p in params], dtype=float)
    starts = list(given) if given.ndim == 2 else [given]
    options = {"bounds": [0.0, 1.0], "seed": seed, "verbose": -9, "maxiter": generations}
    if population:
        options["popsize"] = population
    procs = workers or max(1, min(local_cores(), 8))
    best: Result | None = None
    counts = (0, 0, 0)          # rollouts, generations and lost candidates of every search so far
    staged = goal.roll_start is not None and goal.from_sides
    with Workers(procs, ray, initializer=_init, initargs=(config_path, goal.name, list(worlds), log_level)) as pool:
        for i, x0 in enumerate(starts):
            got = Result(x0, math.inf, [], *counts, first=i)
            report = progress if best is None else _best_so_far(progress, best)
            left = generations
            if staged:
                # A roll-over from the back alone first, until it gets up
                # there (BACK_UP_COST) or for half the generations; then from
                # every start (roll_cost) from there.
                es = cma.CMAEvolutionStrategy(((x0 - low) / span).clip(0, 1).tolist(), sigma,
                                              {**options, "maxiter": max(1, generations // 2)})
                _generations(es, pool, low, span, got, report, _evaluate_back, BACK_UP_COST)
                left = max(1, generations - (got.generations - counts[1]))
                judged = pool.map(_evaluate, [got.x])[0]       # from every start
                got.cost, got.outcomes = (LOST_COST, []) if isinstance(judged, Lost) else judged
                got.evaluations += 1
            es = cma.CMAEvolutionStrategy(((got.x - low) / span).clip(0, 1).tolist(), sigma,
                                          {**options, "maxiter": left})
            _generations(es, pool, low, span, got, report)
            counts = (got.evaluations, got.generations, got.lost)
            if best is None or got.cost < best.cost:
                best = got
    assert best is not None
    best.evaluations, best.generations, best.lost = counts
    return best


def _best_so_far(progress: Callable[[int, float, list[dict[str, Any]]], None] | None, before: Result
                 ) -> Callable[[int, float, list[dict[str, Any]]], None] | None:
    """The progress of a later start's search, reporting the best of every
    search so far."""
    if progress is None:
        return None

    def report(generation: int, cost: float, outcomes: list[dict[str, Any]]) -> None:
        if cost < before.cost:
            progress(generation, cost, outcomes)
        else:
            progress(generation, before.cost, before.outcomes)
    return report


def best_start(pool: Workers, starts: Sequence[np.ndarray],
               evaluate: Callable[[Any], tuple[float, list[dict[str, Any]]]] = _evaluate) -> Result:
    """Each start rolled out once on the workers: a Result at the one that
    does best (`first` its index), for the search to begin from."""
    tried = [r if isinstance(r, tuple) else (LOST_COST, []) for r in pool.map(evaluate, starts)]
    first = int(np.argmin([c for c, _ in tried]))
    return Result(np.asarray(starts[first]), tried[first][0], tried[first][1], len(starts), 0, first=first)


def _generations(es: Any, pool: Workers, low: np.ndarray, span: np.ndarray, best: Result,
                 progress: Callable[[int, float, list[dict[str, Any]]], None] | None,
                 evaluate: Callable[[Any], tuple[float, list[dict[str, Any]]]] = _evaluate,
                 target: float | None = None) -> None:
    """CMA-ES's generations until it stops, or (`target`) until the best
    candidate costs under `target`: each candidate `evaluate`d on the
    workers (also the two-leg stand's optimiser's loop)."""
    while not es.stop() and (target is None or best.cost >= target):
        unit = es.ask()
        xs = [low + span * np.clip(u, 0, 1) for u in unit]
        got = pool.map(evaluate, xs)
        best.lost += sum(isinstance(r, Lost) for r in got)
        results = [(LOST_COST, [{"world": "lost", "why": r.why, "cost": LOST_COST}]) if isinstance(r, Lost)
                   else r for r in got]
        es.tell(unit, [c for c, _ in results])
        best.evaluations += len(xs)
        best.generations += 1
        i = int(np.argmin([c for c, _ in results]))
        if results[i][0] < best.cost:
            best.x, best.cost, best.outcomes = xs[i], results[i][0], results[i][1]
        if progress is not None:
            progress(best.generations, best.cost, best.outcomes)
