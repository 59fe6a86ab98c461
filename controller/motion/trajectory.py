"""Joint trajectories with torque feed-forward: the format of the optimised
dynamic motions (the mode-16 jumps), their checks, and their playback.

A trajectory file (config/trajectories/<robot>/<name>.yaml) is a list of
phases played back to back from the entry pose:

    joints: [FR_abad, FR_hip, ...]   # the order of every vector below
    phases:
      - name: push
        duration_ms: 120
        profile: linear              # linear | cubic | quintic
        q: [...]                     # rad, position target at the phase's end
        kp: [...]                    # N m/rad, from the phase's start
        kd: [...]                    # N m s/rad
        tau: [...]                   # N m feed-forward, held over the phase

Each joint's target moves from the previous phase's target (the first phase:
the entry pose) to `q` over the phase; the joint command is
tau + kp (q_target - q) + kd (qd_target - qd), as a motor driver applies it.
Files written by the optimiser (`motionctl optimise`) also carry an
`optimised` mapping (objective, parameters, what it measured), which the
player ignores.

Pure: no clock reads; playback writes kernel segments on tick boundaries, so a
replay is exact to the tick.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from controller.motion.scripts import PROFILE_CODE, PROFILES, JointLimits
from controller.robot.config.reader import parse_yaml
from controller.robot.native import Kernel

SUFFIX = ".yaml"


class TrajectoryError(ValueError):
    """A trajectory file is unreadable or breaks a rule; the message names the
    file, the phase (1-based) and the reason."""


@dataclass(frozen=True)
class Phase:
    name: str
    ticks: int
    profile: str
    q: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    tau: np.ndarray

    def as_yaml(self, tick_hz: float) -> dict[str, Any]:
        def vec(a: np.ndarray) -> list[float]:
            return [round(float(x), 4) for x in a]
        return {"name": self.name, "duration_ms": round(self.ticks * 1000.0 / tick_hz, 3),
                "profile": self.profile, "q": vec(self.q), "kp": vec(self.kp),
                "kd": vec(self.kd), "tau": vec(self.tau)}


@dataclass(frozen=True)
class Trajectory:
    name: str
    phases: tuple[Phase, ...]
    source: Path | None = None
    meta: dict[str, Any] | None = None

    @property
    def total_ticks(self) -> int:
        return sum(p.ticks for p in self.phases)

    def check(self, robot: JointLimits, torque_limit: np.ndarray) -> None:
        """Every target inside the joint limits, gains >= 0, feed-forward
        within the torque limits; raises TrajectoryError naming the phase."""
        for i, p in enumerate(self.phases, 1):
            reason = _phase_fault(p, robot, torque_limit)
            if reason:
                raise TrajectoryError(f"{self.source or self.name}: phase {i} ({p.name}): {reason}")

    def to_yaml(self, tick_hz: float, joints: list[str], header: str = "") -> str:
        doc: dict[str, Any] = {"joints": list(joints),
                               "phases": [p.as_yaml(tick_hz) for p in self.phases]}
        if self.meta:
            doc["optimised"] = self.meta
        body = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=200)
        lines = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
        return lines + body


def _phase_fault(p: Phase, robot: JointLimits, torque_limit: np.ndarray) -> str | None:
    for label, vec in (("q", p.q), ("kp", p.kp), ("kd", p.kd), ("tau", p.tau)):
        if vec.shape != (len(robot.joint_names),) or not np.all(np.isfinite(vec)):
            return f"{label} needs {len(robot.joint_names)} finite numbers"
    out = np.flatnonzero((p.q < robot.q_min - 1e-9) | (p.q > robot.q_max + 1e-9))
    if out.size:
        j = int(out[0])
        return (f"{robot.joint_names[j]} target {p.q[j]:.4f} is outside its limits "
                f"[{robot.q_min[j]:.4f}, {robot.q_max[j]:.4f}]")
    if np.any(p.kp < 0) or np.any(p.kd < 0):
        return "kp and kd must be >= 0"
    over = np.flatnonzero(np.abs(p.tau) > torque_limit + 1e-9)
    if over.size:
        j = int(over[0])
        return f"{robot.joint_names[j]} feed-forward {p.tau[j]:.3f} N m is over its torque limit {torque_limit[j]:g}"
    return None


def load(path: Path, joints: list[str], tick_hz: float) -> Trajectory:
    """Read a trajectory file written for a robot with these joint names."""
    try:
        doc = parse_yaml(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise TrajectoryError(f"{path}: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("phases"), list) or not doc["phases"]:
        raise TrajectoryError(f"{path}: needs `joints` and a non-empty list `phases`")
    names = doc.get("joints")
    if names != list(joints):
        raise TrajectoryError(f"{path}: joints {names} are not this robot's {list(joints)}")
    phases = []
    for i, raw in enumerate(doc["phases"], 1):
        where = f"{path}: phase {i}"
        if not isinstance(raw, dict):
            raise TrajectoryError(f"{where}: a phase is a mapping")
        unknown = set(raw) - {"name", "duration_ms", "profile", "q", "kp", "kd", "tau"}
        if unknown:
            raise TrajectoryError(f"{where}: unknown keys {sorted(unknown)}")
        duration = raw.get("duration_ms")
        if isinstance(duration, bool) or not isinstance(duration, (int, float)) \
                or not math.isfinite(duration) or duration <= 0:
            raise TrajectoryError(f"{where}: duration_ms must be a number > 0, got {duration!r}")
        profile = raw.get("profile", "linear")
        if profile not in PROFILES:
            raise TrajectoryError(f"{where}: profile must be one of {PROFILES}, got {profile!r}")
        vectors = {}
        for key in ("q", "kp", "kd", "tau"):
            try:
                vectors[key] = np.asarray(raw[key], dtype=float)
            except (KeyError, TypeError, ValueError) as exc:
                raise TrajectoryError(f"{where}: `{key}` must be {len(joints)} numbers") from exc
            if vectors[key].shape != (len(joints),):
                raise TrajectoryError(f"{where}: `{key}` must be {len(joints)} numbers")
        ticks = max(1, int(math.floor(duration * tick_hz / 1000.0 + 0.5)))
        phases.append(Phase(str(raw.get("name", f"phase {i}")), ticks, profile, **vectors))
    meta = doc.get("optimised") if isinstance(doc.get("optimised"), dict) else None
    return Trajectory(path.stem, tuple(phases), path, meta)


def find(name: str, directories: tuple[Path, ...] | list[Path], robot: JointLimits,
         torque_limit: np.ndarray) -> Trajectory:
    """The trajectory `name` from the first directory that has it, loaded and
    checked against the robot; TrajectoryError naming what is wrong."""
    path = next((d / (name + SUFFIX) for d in directories if (d / (name + SUFFIX)).is_file()), None)
    if path is None:
        raise TrajectoryError(f"no trajectory {name!r} in {[str(d) for d in directories]}")
    traj = load(path, robot.joint_names, robot.tick_hz)
    traj.check(robot, torque_limit)
    return traj


def mirrored(traj: Trajectory, name: str, swap: np.ndarray, sign: np.ndarray,
             meta: dict[str, Any] | None = None) -> Trajectory:
    """The left-right mirror image: joint i takes joint swap[i]'s values, and
    positions and torques are multiplied by sign (-1 on roll and yaw axes)."""
    phases = tuple(Phase(p.name, p.ticks, p.profile, (p.q * sign)[swap], p.kp[swap], p.kd[swap],
                         (p.tau * sign)[swap]) for p in traj.phases)
    return Trajectory(name, phases, traj.source, meta)


def mirror_map(joints: list[str], pairs: tuple[tuple[str, str], ...] | list[tuple[str, str]],
               negate: frozenset[str] | set[str]) -> tuple[np.ndarray, np.ndarray]:
    """(swap, sign) for `mirrored` from a config's mirror pairs and negated joints."""
    index = {n: i for i, n in enumerate(joints)}
    swap = np.arange(len(joints))
    for a, b in pairs:
        swap[index[a]], swap[index[b]] = index[b], index[a]
    sign = np.array([-1.0 if n in negate else 1.0 for n in joints])
    return swap, sign


class TrajectoryPlayback:
    """Plays a Trajectory into a Kernel, phase by phase on tick boundaries."""

    def __init__(self, trajectory: Trajectory, dt: float) -> None:
        self.trajectory = trajectory
        self.dt = dt
        starts = np.cumsum([0] + [p.ticks for p in trajectory.phases])
        self.starts = starts[:-1]
        self.end = int(starts[-1])
        self.t0 = 0
        self.index = -1
        self.previous = np.zeros(0)
        self.kernel: Kernel | None = None

    @property
    def done(self) -> bool:
        return self.kernel is not None and self.index >= len(self.trajectory.phases)

    @property
    def phase(self) -> Phase | None:
        ph = self.trajectory.phases
        return ph[self.index] if 0 <= self.index < len(ph) else None

    def start(self, kernel: Kernel, tick: int, q_start: np.ndarray) -> None:
        self.kernel = kernel
        self.t0 = tick
        self.index = -1
        self.previous = np.array(q_start, dtype=float)
        self.step(tick)

    def step(self, tick: int) -> None:
        """Begin every phase due by `tick`; after the last, the final target
        stays held with the last phase's gains and no feed-forward."""
        k = self.kernel
        assert k is not None, "start() first"
        phases = self.trajectory.phases
        elapsed = tick - self.t0
        while self.index + 1 < len(phases) and elapsed >= self.starts[self.index + 1]:
            self.index += 1
            p = phases[self.index]
            begin = (self.t0 + int(self.starts[self.index])) * self.dt
            k.move(self.previous, p.q, begin, p.ticks * self.dt, PROFILE_CODE[p.profile])
            k.set_gains(p.kp, p.kd)
            k.tau_ff[:] = p.tau
            self.previous = p.q
        if self.index == len(phases) - 1 and elapsed >= self.end:
            self.index += 1
            k.tau_ff[:] = 0.0
