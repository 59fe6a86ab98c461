"""`motionctl optimise`: make a dynamic motion's trajectory (a mode-16 jump,
a recovery roll-over) for the robot config by optimising it in physics
(controller/sim/motion_optimiser.py)."""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from controller.cli.client import EXIT_CODES_HELP, Formatter
from controller.cli.commands import summary
from controller.robot.config import Config
from controller.robot.resources import CONFIG_DIR
from controller.sim.progress import Progress

EXIT_OK, EXIT_ERROR = 0, 1

DESCRIPTION = """\
Optimise a dynamic motion for the quadruped of --config in its MuJoCo
physics model and write it as a trajectory file (docs/SCRIPTS.md "Jumps").
Jumps (yaw-left: +90 degrees; forward: 0.6 m; forward-short: 0.3 m;
forward-stair: 0.5 m; left: 0.2 m sideways; up: the body 0.30 m over its
start) are crouch, push with feed-forward torques, flight, landing and
settle, per leg pair, rolled out from the controller's own stand and scored on the
body's ground truth: the goal, landing on the four feet upright, no trunk
contact, back at the stand height. The roll-over (roll-back: from lying on
the back, and at once from each side in the unchanged world) is four free
joint-space phases and a fold, scored on how upright the body ends, first
from the back alone until it gets up there, then from every start; the
recovery stand (mode 12) plays it and its mirror image as its IMU says,
the roll-over itself on the side it does better from (the file records it
as `roll_through`: set scripts.recovery.roll_through to it).
CMA-ES (the `cma` package) searches the phases' durations, poses, gains and
torques through the controller's own trajectory player. A jump's score is
its worst over the margin worlds (trunk mass x0.9 and x1.1, floor friction
0.5 and 1.0, and the unchanged world; forward-stair also off 10, 15 and 20
cm platforms, where it must land 0.45-0.75 m on), the roll-over's half its
mean from the back and half its mean from its better side (the recovery
retries); --nominal drops the margin worlds. --world NAME
rolls every candidate out again in each of those worlds with the named
world of config/physics/worlds.yaml laid over it (real_actuators_3ms: the
motors' torque-speed envelope and a 3 ms delay), so the motion is made for
ideal and real motors at once. --mirror also
writes the left-right mirror image (a right turn from a left one). Point
the config's `scripts.trajectories`, its mode-16 gaits and
`scripts.recovery` at the files. Takes a few minutes on two cores.

`two-leg` searches the two-leg stand's figures (mode 64, the config's
`two_leg` section: how low and nose-up it kneels, how fast it rears up and
lands, how high it rides on two legs, how hard its balance pushes), played
as the scorecard's row "two-leg stand (64/0)" in its five worlds (--nominal:
the unchanged one) and judged by that row's checks, from CyberDog 2's or
Go2's figures scaled to the robot, each also as a robot that kneels on its
calves needs them (docs/SCRIPTS.md "Two-leg stand"), or from the config's
own; -o names the
config to write beside --config, which it extends with the section and
mode 64. The mass model the stand balances with is read from the robot's
MJCF or physics file unless the config writes `mass_model`.

`all` makes every jump (gaits 0-6 and 9 of mode 16, the right-hand ones as
mirror images), the roll-over and the two-leg stand, one after the other,
the trajectories into the directory -o names, and writes
NAME_optimised.yaml beside the config: it extends the config with the
`scripts` and `two_leg` sections that play them (run the robot with it).
A trajectory already in the directory is kept (--fresh makes it again),
so a run stopped half way goes on where it stopped. The two-leg stand is
searched first in the unchanged world, then in all five from there, and
stops once it passes every world with a margin. The roll-over is searched
from CyberDog 2's and from Go2's (config/trajectories/), the better kept,
and played on the side it gets up from (`roll_through` in the config it
writes). Measured on Go1 on two cores at --generations 20: 5-8 minutes a
jump (45 for the six), the two-leg stand 2-3 minutes a generation in its
five worlds (use --ray on a cluster to go faster); Barkour vB: jumps about
2 minutes each, the roll-over 13 minutes for its two searches, the whole
run some 25."""


# The optimiser's goals (controller/sim/motion_optimiser.py GOALS), named here so
# that building the parser does not import MuJoCo (render sets MUJOCO_GL first).
MOTIONS = ("forward", "forward-short", "forward-stair", "left", "up", "yaw-left", "roll-back")
TWO_LEG = "two-leg"      # the two-leg stand's figures (controller/sim/two_leg_optimiser.py)

# `optimise all`: each motion, the file it is written to, its mode-16 gait
# (None: the recovery's roll-over) and its mirror image's file and gait; the
# names and gait ids are CyberDog 2's (config/cyberdog2.yaml scripts.modes.16).
# `optimise all` searches the roll-over from CyberDog 2's and from Go2's and
# keeps the better (both in the controller's joint convention like every
# robot's): on Unitree's A1 CyberDog 2's search ended every start on the
# feet at its first generation, where one from the fold pose had Go1 still
# upside down after 6 generations (20 minutes); on Barkour vB, CyberDog 2's
# left it on its back after 20 generations (cost 1.55) and Go2's stood it
# up (0.27), though CyberDog 2's rolled out better before the search. Each
# search gets it up from the back first, in every margin world, then from
# the sides too (motion_optimiser.optimise): made in the unchanged world
# from all its starts at once, Barkour vB's got up from one side only and
# from the back in two rolls (6.5 s of the card's 6), and searched from the
# back in the unchanged world alone it got up there but not with friction
# 0.5 (4 of the card's 25 rows behind it failed); from the back in the
# five worlds, all 25 passed. Its search steps
# wider than a --start's usual 0.08: on A1, 0.08 kept it upside down for
# 8 generations (cost 1.16 to -0.10), 0.15 found every start on the feet in
# the first (-0.66); Go1's was made at 0.15 from Go2's.
ROLL_SEEDS = tuple(CONFIG_DIR / "trajectories" / robot / "RollBack.yaml" for robot in ("cyberdog2", "go2"))
ROLL_SIGMA = 0.15
# `optimise all` makes the two-leg stand pass the card's five worlds, as the
# jumps: unlike a roll-over, nothing retries a greeting that falls, and a
# search in the unchanged world alone soon found Barkour vB figures that
# rear up only 0.006 rad past the card's 1.2 there (cost 0.018): no margin
# for another floor or load was asked of them. (It gets there in stages,
# the unchanged world first: two_leg_optimiser.optimise.)
TWO_LEG_NOMINAL = False

ALL = (("yaw-left", "JumpYawLeft", 0, "JumpYawRight", 3),
       ("forward", "JumpLong", 1, None, None),
       ("left", "JumpLeft", 2, "JumpRight", 5),
       ("forward-short", "JumpShort", 4, None, None),
       ("up", "JumpHigh", 6, None, None),
       ("forward-stair", "JumpDownStair", 9, None, None),
       ("roll-back", "RollBack", None, None, None))


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "optimise", help=summary("optimise"),
        description=DESCRIPTION, epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    p.add_argument("motion", choices=(*MOTIONS, TWO_LEG, "all"),
                   help="what the motion must do; `two-leg`: the two-leg stand's figures; `all`: every "
                        "jump, the roll-over and the two-leg stand, one after the other, into the "
                        "directory -o names, and a config that uses them")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE",
                   help="the trajectory file to write (.yaml); with `two-leg`, the config to write "
                        "(beside --config, extending it); with `all`, the directory for the files")
    p.add_argument("--mirror", type=Path, metavar="FILE",
                   help="also write the left-right mirror image here")
    p.add_argument("--generations", type=int, default=40, metavar="N",
                   help="CMA-ES generations (default: %(default)s)")
    p.add_argument("--population", type=int, default=0, metavar="N",
                   help="candidates per generation (default: CMA-ES's own for the parameter count)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default: %(default)s)")
    p.add_argument("--workers", type=int, default=0, metavar="N",
                   help="rollout processes (default: one per core, up to 8)")
    p.add_argument("--ray", metavar="auto|ADDRESS", default=None,
                   help="run the rollouts on a running Ray cluster: `auto` or the head's host:port "
                        "(`pip install 'motiond[ray]'`, docs/PHYSICS.md). Default: local processes")
    p.add_argument("--start", type=Path, metavar="FILE",
                   help="start from the parameters a trajectory file of this motion records "
                        "(default: the optimiser's generic guess)")
    p.add_argument("--sigma", type=float, default=None, metavar="S",
                   help="CMA-ES's initial step, as a share of each parameter's range "
                        "(default: 0.25, or 0.08 with --start, to refine near it)")
    p.add_argument("--nominal", action="store_true",
                   help="score in the unchanged world only (faster, no margins)")
    p.add_argument("--world", action="append", default=[], metavar="NAME",
                   help="also score in each world with this named world (config/physics/worlds.yaml) "
                        "laid over it, e.g. real_actuators_3ms; repeatable")
    p.add_argument("--fresh", action="store_true",
                   help="with `all`: make every trajectory again (default: one already in the "
                        "directory is kept, so a run stopped half way goes on where it stopped)")
    p.set_defaults(func=run)
    return p


def start_parameters(path: Path, goal: Any, cfg: Config) -> list[float]:
    """The parameters a trajectory file's `optimised` block records, in the
    goal's order; ValueError if it has none or not these. A turning jump may
    start from a straight jump's file: the yaw parameters it lacks start at
    the optimiser's guess (no turn), as may a sideways jump its sideways
    ones (straight)."""
    import yaml

    from controller.sim.motion_optimiser import SIDE, YAW

    doc = yaml.safe_load(path.read_text())
    params = (doc or {}).get("optimised", {}).get("parameters") if isinstance(doc, dict) else None
    if not isinstance(params, dict):
        raise ValueError("no `optimised: parameters` in it")
    given = {p.name: float(params[p.name]) for p in goal.params(cfg)
             if isinstance(params.get(p.name), (int, float))}
    yaw = {q.name: q.start for q in YAW} if goal.turning else {}
    if goal.lateral:
        yaw.update({q.name: q.start for q in SIDE})
    missing = [p.name for p in goal.params(cfg) if p.name not in given and p.name not in yaw]
    if missing:
        raise ValueError(f"it lacks the {goal.name} parameters {missing}")
    return [given.get(p.name, yaw.get(p.name, 0.0)) for p in goal.params(cfg)]


def run(args: argparse.Namespace, cfg: Config) -> int:
    if cfg.kind != "quadruped" or cfg.num_joints != 12:
        print(f"motionctl: optimise: {cfg.path} is not a 12-joint quadruped", file=sys.stderr)
        return EXIT_ERROR
    sigma = args.sigma if args.sigma is not None else (0.08 if args.start is not None else 0.25)
    if args.generations < 1 or args.population < 0 or args.workers < 0 or not 0.0 < sigma <= 1.0:
        print("motionctl: optimise: --generations >= 1, --population and --workers >= 0, "
              "--sigma in (0, 1]", file=sys.stderr)
        return EXIT_ERROR
    from controller.robot.config import ConfigError
    from controller.sim.world import World
    for name in args.world:
        try:
            World.from_spec(name, "--world")
        except ConfigError as exc:
            print(f"motionctl: optimise: {exc}", file=sys.stderr)
            return EXIT_ERROR
    if args.motion == "all":
        return run_all(args, cfg)
    if args.motion == TWO_LEG:
        return run_two_leg_config(args, cfg)
    return run_one(args, cfg, args.motion, args.output, args.mirror)


def run_all(args: argparse.Namespace, cfg: Config) -> int:
    """Every jump and the roll-over into the directory args.output, then a
    config beside cfg's (`<name>_optimised.yaml`, extending it) whose
    `scripts` section plays them."""
    from controller.sim.motion_optimiser import mirror_pairs
    from controller.sim.two_leg_optimiser import MODE_64

    if args.start is not None or args.mirror is not None:
        print("motionctl: optimise all: --start and --mirror are for one motion", file=sys.stderr)
        return EXIT_ERROR
    out = args.output
    out.mkdir(parents=True, exist_ok=True)
    pairs = mirror_pairs(cfg)
    gaits: dict[int, str] = {}
    for motion, name, gait, mirror_name, mirror_gait in ALL:
        mirror_path = out / f"{mirror_name}.yaml" if mirror_name else None
        if gait is not None:
            gaits[gait] = name
        if mirror_gait is not None and mirror_name is not None:
            gaits[mirror_gait] = mirror_name
        if not args.fresh and (out / f"{name}.yaml").exists() and (mirror_path is None or mirror_path.exists()):
            # A run stopped half way goes on where it stopped.
            print(f"== {motion}: {out / name}.yaml is there: kept (--fresh makes it again)", flush=True)
            continue
        print(f"== {motion}: {out / name}.yaml", flush=True)
        # The roll-over searched from CyberDog 2's and Go2's (see ROLL_SEEDS).
        roll = motion == "roll-back"
        motion_args = argparse.Namespace(**{**vars(args), "sigma": args.sigma or ROLL_SIGMA}) if roll else args
        code = run_one(motion_args, cfg, motion, out / f"{name}.yaml", mirror_path, pairs,
                       list(ROLL_SEEDS) if roll else None)
        if code != EXIT_OK:
            return code
    print("== two-leg: the two-leg stand's figures", flush=True)
    two_leg = two_leg_search(argparse.Namespace(**{**vars(args), "motion": TWO_LEG, "nominal": TWO_LEG_NOMINAL,
                                                   "sigma": None}), cfg)
    if two_leg is None:
        return EXIT_ERROR
    overlay = cfg.path.with_name(f"{cfg.path.stem}_optimised.yaml")
    where = os.path.relpath(out.resolve(), overlay.parent.resolve())
    listed = ", ".join(f"{g}: {n}" for g, n in sorted(gaits.items()))
    mirror_lines = ""
    if cfg.scripts is None or not cfg.scripts.mirror_pairs:
        mirror_lines = ("  mirror:\n    pairs: [" + ", ".join(f"[{a}, {b}]" for a, b in pairs[0]) + "]\n"
                        "    negate: [" + ", ".join(pairs[1]) + "]\n")
    overlay.write_text(
        f"# {cfg.path.name} with the motions `motionctl --config {cfg.path.name} optimise all -o {args.output}`\n"
        f"# made for it in physics (docs/SCRIPTS.md \"Jumps\"): run the robot with this file.\n"
        f"extends: {cfg.path.name}\n"
        f"{two_leg}"
        "scripts:\n"
        f"  trajectories: [{where}]\n"
        f"  recovery: {{roll_back: RollBack, roll_through: {made_roll_through(out / 'RollBack.yaml', cfg)}}}\n"
        f"{mirror_lines}"
        "  modes:\n"
        "    16:\n"
        "      kind: trajectory\n"
        "      settle_ms: 100\n"
        f"      gaits: {{{listed}}}\n"
        f"{MODE_64}")
    print(f"wrote {overlay}: run the robot with --config {overlay}")
    return EXIT_OK


def made_roll_through(path: Path, cfg: Config) -> int:
    """The `scripts.recovery.roll_through` the roll-over in `path` was made
    for (its `optimised: roll_through`; 0 in a file from before it was
    recorded: the roll-over first from either side)."""
    from controller.motion.trajectory import load

    through = (load(path, cfg.joint_names, cfg.tick_hz).meta or {}).get("roll_through", 0)
    return through if through in (-1, 0, 1) else 0


def two_leg_search(args: argparse.Namespace, cfg: Config) -> str | None:
    """The two-leg stand's figures searched in physics (controller/sim/
    two_leg_optimiser.py): the `two_leg` section's YAML lines, or None
    (said why on stderr)."""
    from controller.sim import two_leg_optimiser as search
    from controller.sim.workers import WorkersError

    if args.world:
        print("motionctl: optimise two-leg: --world is for the trajectories (the two-leg stand is played "
              "in the card's own worlds)", file=sys.stderr)
        return None
    own = cfg.scripts is not None and any(m.kind == "two_leg" for m in cfg.scripts.modes.values())
    started = time.monotonic()
    bar = Progress(args.generations, "generations", lines=0)

    def progress(generation: int, cost: float, outcomes: list[dict[str, Any]]) -> None:
        bar.clear()
        print(f"generation {generation:3d}  cost {cost:9.3f}  {search.outcome_line(outcomes)}", flush=True)
        bar.step(f"cost {cost:.3f}")

    try:
        result = search.optimise(str(cfg.path), search.worlds(args.nominal), generations=args.generations,
                                 population=args.population, sigma=args.sigma or 0.25, seed=args.seed,
                                 workers=args.workers, own_start=own, ray=args.ray, progress=progress,
                                 log_level="critical")
    except WorkersError as exc:
        print(f"motionctl: optimise: {exc}", file=sys.stderr)
        return None
    bar.close()
    command = (f"motionctl --config {cfg.path.name} optimise {args.motion} --generations {args.generations} "
               f"--seed {args.seed}{' --nominal' if args.nominal else ''}")
    print(f"two-leg stand: cost {result.cost:.3f} ({result.evaluations} rollouts, "
          f"{time.monotonic() - started:.0f} s){'' if result.cost < 1.0 else ': it fails the card (cost >= 1)'}")
    if result.lost:
        print(f"motionctl: optimise: {result.lost} candidates were lost with their workers (costed "
              f"as failures)", file=sys.stderr)
    return search.section(cfg, result.x, result, command)


def run_two_leg_config(args: argparse.Namespace, cfg: Config) -> int:
    """`optimise two-leg -o FILE`: the config FILE (beside cfg's, extending
    it) with the two-leg stand's searched figures and mode 64."""
    from controller.sim.two_leg_optimiser import MODE_64

    if args.start is not None or args.mirror is not None:
        print("motionctl: optimise two-leg: --start and --mirror are for a trajectory", file=sys.stderr)
        return EXIT_ERROR
    if args.output.resolve().parent != cfg.path.resolve().parent or args.output.suffix != ".yaml":
        print(f"motionctl: optimise two-leg: -o names the config to write, a .yaml beside {cfg.path} "
              "(it extends that config, whose relative paths it then shares)", file=sys.stderr)
        return EXIT_ERROR
    text = two_leg_search(args, cfg)
    if text is None:
        return EXIT_ERROR
    args.output.write_text(f"# {cfg.path.name} with the two-leg stand made for it in physics: run the robot "
                           f"with this file.\nextends: {cfg.path.name}\n{text}scripts:\n  modes:\n{MODE_64}")
    print(f"wrote {args.output}: run the robot with --config {args.output}")
    return EXIT_OK


def run_one(args: argparse.Namespace, cfg: Config, motion: str, output: Path, mirror_path: Path | None,
            pairs: tuple[list[tuple[str, str]], list[str]] | None = None, seeds: list[Path] | None = None) -> int:
    """Optimise one motion into `output` (and its mirror image into
    `mirror_path`, by `pairs` or motion_optimiser.mirror_pairs), from the
    trajectory files `seeds` (a search from each, the best kept; default:
    --start, or the optimiser's guess)."""
    from controller.sim.motion_optimiser import GOALS, build, mirror, optimise, roll_cost
    from controller.sim.workers import WorkersError
    from controller.sim.world import on_top

    if seeds is None:
        seeds = [args.start] if args.start is not None else []
    sigma = args.sigma if args.sigma is not None else (0.08 if seeds else 0.25)
    goal = GOALS[motion]
    starts = []
    for seed in seeds:
        try:
            starts.append(start_parameters(seed, goal, cfg))
        except (OSError, ValueError) as exc:
            print(f"motionctl: optimise: --start {seed}: {exc}", file=sys.stderr)
            return EXIT_ERROR
    worlds = goal.worlds(args.nominal)
    worlds += tuple(on_top(w, name, "--world") for name in args.world for w in worlds)
    started = time.monotonic()
    # On a terminal a bar with the time left (stderr); the lines are the results.
    bar = Progress(args.generations * max(1, len(starts)), "generations", lines=0)

    def progress(generation: int, cost: float, outcomes: list[dict[str, Any]]) -> None:
        worst = max(outcomes, key=lambda o: o["cost"]) if outcomes else {}
        bar.clear()                           # the result line where the bar was, the bar below it
        print(f"generation {generation:3d}  cost {cost:9.3f}  worst: {worst.get('world', '')}  "
              + "  ".join(f"{k} {v:g}" for k, v in worst.items() if k in
                          ("travel", "lateral", "yaw", "rise", "end_tilt", "trunk_contact_s", "end_on_feet", "up")),
              flush=True)
        bar.step(f"cost {cost:.3f}")

    try:
        result = optimise(str(cfg.path), goal, worlds, generations=args.generations,
                          population=args.population, sigma=sigma, seed=args.seed,
                          workers=args.workers, start=starts or None, ray=args.ray, progress=progress,
                          log_level="warning")
    except WorkersError as exc:
        print(f"motionctl: optimise: {exc}", file=sys.stderr)
        return EXIT_ERROR
    bar.close()
    meta = {
        "goal": motion, "cost": round(result.cost, 4), "evaluations": result.evaluations,
        "generations": result.generations, "seed": args.seed,
        "worlds": [w.label for w in worlds],
        "outcomes": result.outcomes,
        "parameters": {p.name: round(float(v), 5) for p, v in zip(goal.params(cfg), result.x)},
    }
    if goal.roll_start is not None:
        # The side it gets up better from: the recovery plays it there (motion_optimiser.roll_cost).
        meta["roll_through"] = roll_cost([o["cost"] for o in result.outcomes],
                                         [o.get("start") for o in result.outcomes])[1]
    traj = build(cfg, goal, result.x, output.stem)
    traj = type(traj)(traj.name, traj.phases, meta=meta)
    traj.check(cfg, cfg.torque_limit)
    header = (f"Motion `{motion}` for {cfg.path.name}, made by\n"
              f"  motionctl --config {cfg.path.name} optimise {motion} "
              f"--generations {args.generations} --seed {args.seed}"
              f"{f' --start {os.path.relpath(seeds[result.first], cfg.path.parent)}' if seeds else ''}"
              f"{f' --sigma {args.sigma:g}' if args.sigma is not None else ''}"
              f"{f' --population {args.population}' if args.population else ''}"
              f"{' --nominal' if args.nominal else ''}"
              f"{''.join(f' --world {name}' for name in args.world)}\n"
              "(controller/sim/motion_optimiser.py; the format: controller/motion/trajectory.py).\n"
              "Regenerate it rather than editing it by hand. `outcomes` are what the physics\n"
              "body did with it in each world of `worlds`, from ground truth.")
    output.write_text(traj.to_yaml(cfg.tick_hz, cfg.joint_names, header))
    print(f"wrote {output} (cost {result.cost:.3f}, {result.evaluations} rollouts, "
          f"{time.monotonic() - started:.0f} s)")
    if meta.get("roll_through"):
        print(f"it gets up better from the side of roll sign {meta['roll_through']:+d}: play it with "
              f"`scripts.recovery.roll_through: {meta['roll_through']}` (the mirror image from the other side)")
    if result.lost:
        print(f"motionctl: optimise: {result.lost} candidates were lost with their workers (costed "
              f"as failures)", file=sys.stderr)
    if mirror_path is not None:
        image = mirror(traj, cfg, mirror_path.stem, {"mirrored_from": output.name}, pairs)
        mirror_path.write_text(image.to_yaml(
            cfg.tick_hz, cfg.joint_names, header + f"\nMirrored left-right from {output.name}."))
        print(f"wrote {mirror_path}")
    return EXIT_OK
