"""`motionctl optimise two-leg`: the two-leg stand's plan (mode 64, the
config's `two_leg` section) searched for a robot in physics.

The stand itself is closed loop (controller/behaviours/two_leg.py): what a
new robot needs is the figures of its stages and of its balance, which
CyberDog 2's and Go2's were tuned in physics for. This searches the ones
that depend on the body (how low and nose-up it kneels, how fast it rears
up and lands, how high its centre of mass rides on two legs, how hard the
sagittal balance pushes) with CMA-ES (the `cma` package), from CyberDog 2's
or Go2's figures scaled to the robot (heights by its stand and legs, the
balance's force by its mass), whichever does better, or from the config's
own `two_leg`. A candidate is the
robot's config with those figures, played as the scorecard plays its row
"two-leg stand (64/0)" (controller/sim/scorecard.py `play`, the same row
and checks, in each of its margin worlds), and judged on the simulator's
ground truth: reared up, nothing but the feet touched, back on four feet
upright, progress 100. The greeting keeps the SPEC's block: the stages
last 8.7 s in all (the greeting gets what the others leave, at least
GREET_MIN_S).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from controller.logs import configure
from controller.robot.config import Config, load_config
from controller.robot.config.quadruped import Geometry
from controller.robot.config.scripts import ScriptedModeConfig, ScriptsConfig
from controller.robot.config.two_leg import TwoLegConfig, TwoLegGains, TwoLegPlan
from controller.robot.mjcf_mass_model import derived_mass_model
from controller.sim.motion_optimiser import Result, local_cores
from controller.sim.workers import Workers
from controller.sim.world import World

ROW = "two-leg stand (64/0)"   # the card's row a candidate is played as
GAITS = (0, 10)                # the greetings mode 64 plays (SPEC §9: 0, and 10 "Thanks")
BLOCK_S = 8.7                  # s: every stage together (SPEC §9's greeting block)
GREET_MIN_S = 0.3              # s on two legs, waving, at least
REAR_AIM = 1.3                 # rad nose up: the card's `rear` check (1.2) and a margin, the cost's slope
REAR_MAX = 1.45                # rad: past this the nose is near going over backwards
PASS_COST = 1.0                # a candidate under this passes every check of the row (see cost())
TARGET_COST = 0.5              # the search stops under this: every check passed, with a margin

# CyberDog 2's figures the search scales from (config/cyberdog2.yaml).
REFERENCE_MASS = 8.0           # kg, geometry.mass
REFERENCE_R_FORCE = 20.0       # N


@dataclass(frozen=True)
class Figure:
    """A searched figure of the `two_leg` section: `key` in the plan (or
    under `balance` when `balance`), between `low` and `high` times the
    robot's `unit` (see units()); `cyberdog2` and `go2` are those robots'
    own figures in that unit (config/cyberdog2.yaml, config/go2.yaml), the
    two starts the search chooses from."""
    key: str
    low: float
    high: float
    cyberdog2: float
    go2: float
    unit: str = "1"
    balance: bool = False


FIGURES = (
    Figure("kneel_height", 0.70, 1.15, 0.875, 0.964, "stand"),   # 0.21 m of a 0.24 stand; 0.27 of 0.28
    Figure("kneel_pitch", -0.10, 0.40, 0.25, 0.10),              # rad nose up
    Figure("rear_s", 1.5, 4.0, 2.3, 2.9),
    Figure("height", 0.90, 1.40, 1.259, 1.103, "leg"),           # 0.37 m over 0.294 m legs; 0.47 over 0.426
    Figure("land_s", 1.2, 3.0, 1.9, 2.3),
    Figure("lean_s", 0.3, 1.2, 0.8, 0.7),
    Figure("reach_s", 0.3, 0.7, 0.5, 0.4),
    Figure("stand_s", 0.4, 1.0, 0.6, 0.6),
    Figure("r_force", 0.4, 1.6, 1.0, 0.737, "mass", balance=True),  # 20 N at 8 kg; 28 N at 15.2 kg
    Figure("q_pitch_rate", 0.08, 0.30, 0.15, 0.12, balance=True),   # rad/s
    Figure("pitch", 1.05, 1.40, 1.25, 1.25),                     # rad nose up on two legs
    Figure("q_pitch", 0.08, 0.40, 0.165, 0.165, balance=True),    # rad
    Figure("q_x", 0.02, 0.12, 0.06, 0.06, balance=True),          # m
    Figure("q_vx", 0.5, 3.0, 1.4, 1.4, balance=True),             # m/s
    Figure("rear_lead", 0.0, 0.3, 0.0, 0.0),                      # rad; 0: the reference on the clock
    Figure("rear_height_ease", 1.0, 3.0, 1.0, 1.0),
)
REFERENCES = ("cyberdog2", "go2")
# Each reference is also started from as a robot that kneels on its calves
# would need it (docs/SCRIPTS.md "Two-leg stand", where Go1's rear-up was
# made to work by hand): kneeling level and higher than it stands, so that
# its shanks stand as steep as the legs allow; rearing up slower, to a
# lower pitch, the reference waiting for a trunk the calves hold back and
# the legs straightening early. In the figures' units.
KNEELING_ON_CALVES = {"kneel_height": 1.1, "kneel_pitch": 0.0, "rear_s": 3.0, "pitch": 1.2,
                      "rear_lead": 0.1, "rear_height_ease": 2.0}


def units(cfg: Config) -> dict[str, float]:
    """What each figure's bounds are in, for this robot."""
    geometry = cfg.geometry
    assert isinstance(geometry, Geometry)
    leg = float(geometry.hip_link + geometry.knee_link)
    return {"1": 1.0, "stand": cfg.stand_height,
            "leg": leg, "mass": REFERENCE_R_FORCE * float(geometry.mass) / REFERENCE_MASS}


def bounds(cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    u = units(cfg)
    return (np.array([f.low * u[f.unit] for f in FIGURES]), np.array([f.high * u[f.unit] for f in FIGURES]))


def start_values(cfg: Config, reference: str) -> np.ndarray:
    """A start of the search: the config's own `two_leg` figures
    (`reference` "own"), or a reference robot's (REFERENCES) scaled to this
    one, "<reference> on calves" with KNEELING_ON_CALVES laid over them."""
    if reference == "own":
        plan, gains = cfg.two_leg.plan, cfg.two_leg.gains
        return np.array([getattr(gains if f.balance else plan, f.key) for f in FIGURES], dtype=float)
    u = units(cfg)
    name, _, variant = reference.partition(" ")
    over = KNEELING_ON_CALVES if variant == "on calves" else {}
    return np.array([over.get(f.key, getattr(f, name)) * u[f.unit] for f in FIGURES])


STARTS = (*REFERENCES, *(f"{r} on calves" for r in REFERENCES))   # the search's starts (start_values)


def figures_of(cfg: Config, x: Sequence[float] | np.ndarray) -> tuple[TwoLegPlan, TwoLegGains]:
    """The plan and the balance of the candidate `x`: the searched figures,
    the greeting what the block leaves, the rest the config's own."""
    plan_values: dict[str, Any] = {f.key: round(float(v), 4) for f, v in zip(FIGURES, x) if not f.balance}
    gain_values: dict[str, Any] = {f.key: round(float(v), 4) for f, v in zip(FIGURES, x) if f.balance}
    plan = replace(cfg.two_leg.plan, **plan_values)
    others = block_s(replace(plan, greet_s=0.0))
    plan = replace(plan, greet_s=round(max(GREET_MIN_S, BLOCK_S - others), 4),
                   min_pitch=min(plan.min_pitch, plan.pitch))
    return plan, replace(cfg.two_leg.gains, **gain_values)


def with_two_leg(cfg: Config, plan: TwoLegPlan, gains: TwoLegGains) -> Config:
    """The config playing mode 64 (gaits GAITS) with this plan and balance
    (and the mass model of its MJCF or physics file when it writes none,
    as the loader derives it for a config that plays kind two_leg; the
    feet's rolling friction comes with `gains`, the loader's)."""
    mode = ScriptedModeConfig({g: () for g in GAITS}, "parts", 0.0, True, "two_leg")
    scripts = cfg.scripts or ScriptsConfig((), 15, None, (), frozenset(), {})
    scripts = replace(scripts, modes={**scripts.modes, 64: mode})
    mass_model = cfg.mass_model or derived_mass_model(cfg.path, cfg.robot, cfg.sim, cfg.geometry, cfg.joint_map)
    return replace(cfg, two_leg=TwoLegConfig(plan, gains), scripts=scripts, mass_model=mass_model)


def block_s(plan: TwoLegPlan) -> float:
    return (plan.kneel_s + plan.rear_s + plan.greet_s + plan.reach_s + plan.land_s + plan.lean_s
            + plan.stand_s)


def cost(metrics: dict[str, Any], verdicts: dict[str, tuple[bool, str]], over_block_s: float) -> float:
    """Lower is better. First how far the stand got (its progress: 25 a
    stage), then each of the card's checks it fails (`verdicts`, the card's
    judge: 1 each), then by how
    much: a candidate that reared up and fell over is nearer than one that
    never reared. One that passes every check of the card costs under 1
    (what is left: half the tilt it ends with, its lower legs' contact, a
    nose-up short of REAR_AIM or past REAR_MAX)."""
    def number(key: str, worst: float) -> float:
        value = metrics.get(key)
        return worst if value is None or not math.isfinite(float(value)) else float(value)
    bar, rear, tilt = number("bar", 0.0), number("rear", 0.0), number("end_tilt", 3.2)
    contact = number("trunk_contact_s", 2.0)
    failed = sum(not ok for ok, _ in verdicts.values())
    return (3.0 * (100.0 - bar) / 25.0 + failed + 0.5 * min(contact, 2.0) + 0.5 * min(tilt, 3.2)
            + 2.0 * max(0.0, REAR_AIM - rear) + 2.0 * max(0.0, rear - REAR_MAX)
            + 0.02 * min(number("shank_contact_s", 10.0), 10.0) + 0.5 * over_block_s)


_worker: dict[str, Any] = {}


def _init(config_path: str, worlds: Sequence[dict[str, Any]], log_level: str | None = None) -> None:
    from controller.sim.scorecard import card_row

    if log_level is not None:
        configure(log_level)
    _worker["cfg"] = load_config(config_path)
    _worker["spec"] = card_row(ROW)
    _worker["worlds"] = list(worlds)


def _evaluate(x: Sequence[float]) -> tuple[float, list[dict[str, Any]]]:
    from controller.sim.scorecard import play

    cfg, spec = _worker["cfg"], _worker["spec"]
    plan, gains = figures_of(cfg, x)
    over = max(0.0, block_s(plan) - BLOCK_S)
    candidate = with_two_leg(cfg, plan, gains)
    rows: list[dict[str, Any]] = []
    for world in _worker["worlds"]:
        label = World.from_spec(world, ROW).label
        metrics, verdicts = play(candidate, {**spec, "world": world, "margins": False}, f"{ROW} [{label}]")
        keep = ("rear", "trunk_contact_s", "shank_contact_s", "end_tilt", "end_on_feet", "bar")
        rows.append({"world": label, **{k: metrics.get(k) for k in keep},
                     "cost": round(cost(metrics, verdicts, over), 4)})
    return max(float(r["cost"]) for r in rows), rows


def worlds(nominal: bool) -> list[dict[str, Any]]:
    """The worlds a candidate is played in, as a row's `world:` mappings:
    the unchanged one, and (not `nominal`) the card's margin worlds."""
    from controller.sim.scorecard import MARGINS

    return [{}] if nominal else [{}, *MARGINS]


def optimise(config_path: str, worlds: Sequence[dict[str, Any]], generations: int = 20, population: int = 0,
             sigma: float = 0.25, seed: int = 1, workers: int = 0, own_start: bool = False,
             ray: str | None = None, progress: Callable[[int, float, list[dict[str, Any]]], None] | None = None,
             log_level: str | None = None) -> Result:
    """CMA-ES over FIGURES scaled to [0, 1] between their bounds; a
    candidate costs its worst over `worlds`. Workers as the motion
    optimiser's (controller/sim/motion_optimiser.py).

    In stages: with margin worlds, first in the unchanged world alone
    until a candidate passes the row there (costs under PASS_COST, at most
    half the generations), then in every world from the best of that; the
    last stage stops early once a candidate costs under TARGET_COST in
    every world. Searched in the five worlds from the start, Barkour vB's
    stand never passed in 10 generations; first in the unchanged world, it
    passed there at once and then in all five (docs/SCRIPTS.md)."""
    cfg = load_config(config_path)
    low, high = bounds(cfg)
    starts = [start_values(cfg, "own")] if own_start else [start_values(cfg, r) for r in STARTS]
    stages: list[tuple[list[dict[str, Any]], float]] = [(list(worlds), TARGET_COST)]
    if len(worlds) > 1:
        stages.insert(0, ([{}], PASS_COST))
    best: Result | None = None
    left = generations
    for i, (stage_worlds, target) in enumerate(stages):
        budget = max(1, generations // 2) if i < len(stages) - 1 else left
        best = _stage(config_path, stage_worlds, starts, low, high, budget, population, sigma, seed, workers,
                      ray, progress, log_level, target, best)
        left = max(1, generations - best.generations)
        starts = [best.x]
    assert best is not None
    return best


def _stage(config_path: str, worlds: Sequence[dict[str, Any]], starts: list[np.ndarray], low: np.ndarray,
           high: np.ndarray, generations: int, population: int, sigma: float, seed: int, workers: int,
           ray: str | None, progress: Callable[[int, float, list[dict[str, Any]]], None] | None,
           log_level: str | None, target: float, before: Result | None) -> Result:
    """One stage of optimise(): the starts played in `worlds`, CMA-ES from
    the best of them for at most `generations`, or until `target`; counts
    on from `before` (the stage before, whose best is judged again here)."""
    import cma

    from controller.sim.motion_optimiser import _generations, best_start

    span = high - low
    options = {"bounds": [0.0, 1.0], "seed": seed, "verbose": -9, "maxiter": generations}
    if population:
        options["popsize"] = population
    procs = workers or max(1, min(local_cores(), 8))
    with Workers(procs, ray, initializer=_init, initargs=(config_path, list(worlds), log_level)) as pool:
        best = best_start(pool, starts, _evaluate)
        if before is not None:
            best.evaluations += before.evaluations
            best.generations, best.lost = before.generations, before.lost
        if best.cost >= target:
            es = cma.CMAEvolutionStrategy(((best.x - low) / span).clip(0, 1).tolist(), sigma, options)
            _generations(es, pool, low, span, best, progress, _evaluate, target)
    return best


def section(cfg: Config, x: Sequence[float] | np.ndarray, result: Result, command: str) -> str:
    """The `two_leg` section and the mode-64 entry the candidate `x` makes,
    as YAML lines to lay over the config (what the search found, in which
    worlds, at what cost, as comments)."""
    plan, gains = figures_of(cfg, x)
    searched = {f.key for f in FIGURES}
    lines = [f"# Mode 64, the two-leg stand: its figures made in physics by `{command}`",
             f"# (controller/sim/two_leg_optimiser.py; cost {result.cost:.3f} after {result.evaluations} rollouts,",
             "# worst world of each: " + ", ".join(
                 f"{o['world']} {o['cost']:.3f}" for o in result.outcomes) + ").",
             "# The mass model is read from the robot's MJCF or physics file unless the config writes one.",
             "two_leg:"]
    for key in ("kneel_s", "kneel_height", "kneel_pitch", "rear_s", "pitch", "height", "min_pitch", "greet_s",
                "wave", "reach_s", "land_s", "lean_s", "stand_s", "pitch_integral", "rear_lead",
                "rear_height_ease"):
        mark = "   # searched" if key in searched else ""
        lines.append(f"  {key}: {float(getattr(plan, key)):g}{mark}")
    lines.append("  balance:")
    for key in ("q_x", "q_pitch", "q_vx", "q_pitch_rate", "r_force", "height_kp", "height_kd",
                "velocity_filter_s", "friction"):
        mark = "   # searched" if key in searched else ""
        lines.append(f"    {key}: {float(getattr(gains, key)):g}{mark}")
    return "\n".join(lines) + "\n"


MODE_64 = ("    64:\n"
           "      kind: two_leg\n"
           "      keeps_target: true     # a pending 64 -> 21 completes even if 64 is re-sent (SPEC §5.6)\n"
           f"      gaits: [{', '.join(str(g) for g in GAITS)}]\n")


def outcome_line(outcomes: list[dict[str, Any]]) -> str:
    worst = max(outcomes, key=lambda o: o["cost"]) if outcomes else {}
    return f"worst: {worst.get('world', '')}  " + "  ".join(
        f"{k} {v:g}" for k, v in worst.items() if k != "world" and isinstance(v, (int, float)))

