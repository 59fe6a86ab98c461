"""Per-tick cost of the gait generators (issue 3), for `make bench`.

Measures, on this machine and in this run:

* baseline: one C kernel step for the same number of joints (the fixed cost
  every tick pays whatever the mode);
* quadruped (12 joints): GaitGenerator.step + leg IK, trotting (gait 3) at
  0.4 m/s while turning;
* humanoid (20 joints, 12 driven): QuinticWalk.step + joint_targets, walking
  at 0.1 m/s.

Each figure is the median over REPEATS runs of the mean over TICKS ticks, in
microseconds, and its ratio to the baseline of the same joint count. No
network is opened.
"""
from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from controller.motion.biped_walk import QuinticWalk, load_walk_params
from controller.motion.gait import GaitCommand, GaitGenerator
from controller.motion.gait_table import load_gaits
from controller.robot.config import Geometry, load_config
from controller.robot.humanoid_kinematics import HumanoidGeometry, HumanoidLegKinematics
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.native import Kernel

TICKS = 2000
REPEATS = 7

State = TypeVar("State")


def per_tick_us(setup: Callable[[], State], tick: Callable[[State], object]) -> float:
    runs = []
    for _ in range(REPEATS):
        state = setup()
        t0 = time.perf_counter()
        for _ in range(TICKS):
            tick(state)
        runs.append((time.perf_counter() - t0) / TICKS * 1e6)
    return statistics.median(runs)


def kernel_baseline(n: int) -> float:
    def setup():
        k = Kernel(np.full(n, -3.0), np.full(n, 3.0), np.full(n, 30.0), step_max=0.06)
        k.move(np.zeros(n), np.ones(n), 0.0, 1.0)
        return [k, 0.0]

    def tick(state):
        state[1] += 0.002
        state[0].step(state[1])
    return per_tick_us(setup, tick)


def quadruped() -> float:
    cfg = load_config(ROOT / "config" / "cyberdog2.yaml")
    geometry, locomotion = cfg.geometry, cfg.locomotion
    assert isinstance(geometry, Geometry) and locomotion is not None    # a quadruped config
    kin = QuadrupedKinematics(geometry)
    gaits = load_gaits(locomotion.gaits_dir, 4)
    q0 = kin.inverse(kin.stance_feet(cfg.stand_height, cfg.stand_com_x))[0]
    cmd = GaitCommand(gaits[3], np.array([0.4, 0.0, 0.3]), 0.05, 0.0)

    def setup():
        gen = GaitGenerator(kin, locomotion, cfg.dt, gaits)
        gen.start(q0, gaits[1])
        for _ in range(500):            # reach steady trotting first
            gen.step(cmd)
        return gen

    def tick(gen):
        kin.inverse(gen.step(cmd))
    return per_tick_us(setup, tick)


def humanoid() -> float:
    path = ROOT / "config" / "humanoid20.yaml"
    data = yaml.safe_load(path.read_text())
    kin = HumanoidLegKinematics(HumanoidGeometry.from_mapping(data["geometry"]))
    params = load_walk_params(path.parent / data["locomotion"]["walk"])
    velocity = (0.1, 0.0, 0.0)

    def setup():
        walk = QuinticWalk(params, kin)
        walk.reset(standing=True)
        for _ in range(500):
            walk.step(0.002, velocity)
        return walk

    def tick(walk):
        walk.joint_targets(walk.step(0.002, velocity))
    return per_tick_us(setup, tick)


def measure() -> dict:
    rows = {}
    for name, joints, fn in (("quadruped trot (gait 3)", 12, quadruped),
                             ("humanoid quintic walk", 20, humanoid)):
        base = kernel_baseline(joints)
        cost = fn()
        rows[name] = {"joints": joints, "us_per_tick": cost, "kernel_us": base,
                      "ratio": cost / base}
    return {"ticks": TICKS, "repeats": REPEATS, "generators": rows}


def report(result: dict) -> list[str]:
    lines = [f"gait generator per tick: median of {result['repeats']} runs x {result['ticks']} ticks",
             f"{'generator':26} {'joints':>6} {'us/tick':>9} {'kernel us':>10} {'ratio':>7}"]
    for name, r in result["generators"].items():
        lines.append(f"{name:26} {r['joints']:6d} {r['us_per_tick']:9.1f} {r['kernel_us']:10.2f} "
                     f"{r['ratio']:7.1f}")
    return lines


def main() -> None:
    print("\n".join(report(measure())))


if __name__ == "__main__":
    main()
