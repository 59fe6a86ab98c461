"""The quadruped's `balance` section: the single-rigid-body model and weights
of the convex MPC that chooses stance foot forces in mode 11, and the gains
and foot placement that go with it (controller/motion/mpc.py,
controller/behaviours/locomotion.py, docs/LOCOMOTION.md). Absent, mode 11
runs its gaits open loop.

The body model (`mass`, `inertia`, `com_offset`) may be left out: each
missing figure is then derived from the robot's physics figures at the stand
pose (controller/robot/mass_properties.py)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from controller.robot.config.reader import ConfigError, Reader
from controller.robot.config.scale import DAMPING, STIFFNESS, Scale
from controller.robot.mass_properties import BodyFigures, stand_body


@dataclass(frozen=True)
class TerrainConfig:
    """`balance.terrain`: blind terrain adaptation (controller/motion/terrain.py)."""
    pitch_limit: float = 0.4      # rad: the most the body pitches with the ground
    dead_band: float = 0.05       # ground slope (tan, filtered) taken as flat
    filter_s: float = 0.3         # s: the ground slope's low-pass time constant
    stumble_lag: float = 0.03     # m: a swing foot this far behind its target is held back
    stumble_apex: float = 0.12    # m: the swing height after a stumble
    adapt_s: float = 2.0          # s: swings stay that high this long after one
    reach_down: float = 0.12      # m: the furthest a foot reaches below the plane for the ground
    reach_rate: float = 0.5       # m/s: how fast it reaches
    load: float = 12.0            # N: a foot pressing this hard is on the ground



BODY_KEYS = ("mass", "inertia", "com_offset")   # derived from the physics figures when missing


@dataclass(frozen=True)
class BalanceConfig:
    mass: float                   # kg, the whole robot as the MPC models it
    inertia: np.ndarray           # (3,) kg m^2, principal moments in the body frame
    com_offset: np.ndarray        # (3,) m, centre of mass from the body origin
    friction: float               # friction cone the forces stay inside
    force_max: float              # N, largest normal force of one foot
    weights: np.ndarray           # (12,) roll pitch yaw, x y z, wx wy wz, vx vy vz
    regularisation: float         # weight on the forces themselves
    step: float                   # s, one MPC step (the gait segment)
    horizon: int                  # steps
    latency_ticks: int            # a plan is used this many ticks after its state was sampled
    position_slack: float         # m, how far the reference position may lead the estimate
    stance_kp: np.ndarray         # (3,) per joint type: soft joint gains on stance legs
    stance_kd: np.ndarray
    placement_gain: float         # s: landing point moves by this x (v_est - v_cmd)
    position_gain: float = 0.0    # landing point moves by this x (com - reference), ...
    position_reach: float = 0.03  # ... at most this far (m)
    # (12,) the MPC's weights while a motion or user gait runs (ids >= 50:
    # dances whose steps mostly ask the body to stay where it is); None: weights
    motion_weights: np.ndarray | None = None
    terrain: TerrainConfig = TerrainConfig()   # blind terrain adaptation (controller/motion/terrain.py)
    derived: tuple[str, ...] = ()     # body keys taken from the physics figures ...
    derived_from: Path | None = None  # ... in this file


def _terrain(b: Reader, scale: Scale) -> TerrainConfig:
    """`balance.terrain`: the blind terrain adaptation's figures (a foot's
    `load` left out: scaled to the robot's mass)."""
    d = TerrainConfig(load=scale.force("balance.terrain.load"))
    if "terrain" not in b.data:
        return d
    t = b.sub("terrain")
    return TerrainConfig(
        pitch_limit=t.number("pitch_limit", 0.0, 0.8, d.pitch_limit),
        dead_band=t.number("dead_band", 0.0, 0.5, d.dead_band),
        filter_s=t.number("filter_s", 0.002, 5.0, d.filter_s),
        stumble_lag=t.number("stumble_lag", 0.005, 0.5, d.stumble_lag),
        stumble_apex=t.number("stumble_apex", 0.0, 0.3, d.stumble_apex),
        adapt_s=t.number("adapt_s", 0.0, 60.0, d.adapt_s),
        reach_down=t.number("reach_down", 0.0, 0.3, d.reach_down),
        reach_rate=t.number("reach_rate", 0.0, 5.0, d.reach_rate),
        load=t.number("load", 0.0, 1000.0, d.load),
    )


def load_balance(r: Reader, path: Path | None = None, body: dict[str, Any] | None = None,
                 joint_map: Any = None) -> BalanceConfig | None:
    """The `balance` section; `path` (the config file) and `body` (the
    quadruped schema's values: geometry, stand height) let a missing body
    figure be derived from the physics figures, or from the robot's own
    MJCF (`sim.mjcf`, posed through `joint_map`)."""
    if "balance" not in r.data:
        return None
    b = r.sub("balance")
    missing = tuple(key for key in BODY_KEYS if key not in b.data)
    # Figures left out are CyberDog 2's scaled to the robot (scale.py).
    scale = body.get("scale") if body is not None else None
    scale = scale if scale is not None else Scale(1.0, 1.0)
    figures = _derive(r, b, missing, path, body, joint_map) if missing else None
    config = BalanceConfig(
        mass=b.number("mass", 0.1, 1000.0) if figures is None or "mass" not in missing else figures.mass,
        inertia=figures.inertia if figures is not None and "inertia" in missing else b.vector("inertia", 3),
        com_offset=(figures.com_offset if figures is not None and "com_offset" in missing
                    else b.vector("com_offset", 3)),
        friction=b.number("friction", 0.05, 2.0),
        force_max=b.number("force_max", 1.0, 10000.0, scale.force("balance.force_max")),
        weights=b.vector("weights", 12),
        regularisation=b.number("regularisation", 1e-9, 1.0, scale.regularisation()),
        step=b.number("step", 0.005, 0.2),
        horizon=int(b.number("horizon", 2, 40)),
        latency_ticks=int(b.number("latency_ticks", 0, 20, 2)),
        position_slack=b.number("position_slack", 0.0, 1.0, 0.1),
        stance_kp=b.vector("stance_kp", 3) if "stance_kp" in b.data else scale.kp(STIFFNESS["balance.stance_kp"]),
        stance_kd=b.vector("stance_kd", 3) if "stance_kd" in b.data else scale.kd(DAMPING["balance.stance_kd"]),
        placement_gain=b.number("placement_gain", 0.0, 1.0, 0.1),
        position_gain=b.number("position_gain", 0.0, 2.0, 0.0),
        position_reach=b.number("position_reach", 0.0, 0.1, 0.03),
        motion_weights=b.vector("motion_weights", 12) if "motion_weights" in b.data else None,
        terrain=_terrain(b, scale),
        derived=missing,
        derived_from=figures.source if figures is not None else None,
    )
    if np.any(config.inertia <= 0.0):
        raise b.fail("inertia", f"{config.inertia.tolist()}: every moment must be positive")
    for key in ("weights", "motion_weights"):
        weights = getattr(config, key)
        if weights is not None and np.any(weights < 0.0):
            raise b.fail(key, "weights cannot be negative")
    if np.any(config.stance_kp < 0.0) or np.any(config.stance_kd < 0.0):
        raise b.fail("stance_kp", "gains cannot be negative")
    return config


def _derive(r: Reader, b: Reader, missing: tuple[str, ...], path: Path | None,
            body: dict[str, Any] | None, joint_map: Any) -> BodyFigures:
    """The whole robot at the stand pose from its physics figures (or its
    own MJCF), for the `missing` body keys; a ConfigError naming the first
    of them if it cannot be had."""
    if path is None or body is None:
        raise b.fail(missing[0], "missing")
    robot, sim = r.data.get("robot"), r.data.get("sim", {})
    try:
        return stand_body(path, str(robot), sim if isinstance(sim, dict) else {}, body["geometry"],
                          body["stand_height"], body["stand_com_x"], joint_map)
    except ConfigError as exc:
        source = "its own MJCF (sim.mjcf)" if isinstance(sim, dict) and "mjcf" in sim else "the physics figures"
        raise b.fail(missing[0], f"missing, and it cannot be derived from {source}: {exc} "
                                 "(write the figure, or give the robot a physics file or its MJCF: "
                                 "docs/NEW_ROBOT.md)") from exc
