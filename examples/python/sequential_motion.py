#!/usr/bin/env python3
"""A timed command sequence, the way the CyberDog 2's sequential example
sends one: each step a command block with its duration in ms, queued by the
controller and run back to back (SPEC §3), here read from a TOML file in the
official format and sent through motiond's Python client.

    .venv/bin/python examples/python/sequential_motion.py config/sequences/stand_pose_lie.toml

Steps with duration 0 wait until the mode reports it has finished; a run of
timed steps is sent 100 ms apart, as the official examples space them, and
waited for as a whole.
"""
from __future__ import annotations

import argparse
import time

from controller.client import Robot
from controller.motion.sequence import load_sequence

SPACING_S = 0.1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="a command sequence (.toml, one [[step]] per command)")
    parser.add_argument("--namespace", help="the motiond started with --namespace NAME")
    args = parser.parse_args()
    steps = load_sequence(args.file)
    with Robot(args.namespace) as robot:
        timed_s = 0.0
        for step in steps:
            fields = {k: v for k, v in step.fields.items() if k not in ("mode", "gait_id", "life_count")}
            if step.duration == 0:
                time.sleep(timed_s)              # the queued blocks run out first
                timed_s = 0.0
                robot.send(step.mode, step.gait_id, **fields)
            else:
                robot.send(step.mode, step.gait_id, wait=False, **fields)
                time.sleep(SPACING_S)
                timed_s = max(0.0, timed_s + step.duration / 1000 - SPACING_S)
            print(f"step {step.number}: mode {step.mode} gait {step.gait_id} -> {robot.state}")
        time.sleep(timed_s)


if __name__ == "__main__":
    main()
