#!/usr/bin/env python3
"""The CyberDog 2's basic-motion flow on motiond's Python client: stand up,
lift the head, lower it back, trot forward, turn, and lie down.

The maker's basic example sends these same commands with hand-kept
life_counts and heartbeats and waits on the response for each; here the
client keeps both (controller/client/robot.py). Run it with motiond going
(`make run` in another terminal):

    .venv/bin/python examples/python/basic_motion.py [--namespace NAME]
"""
from __future__ import annotations

import argparse

from controller.client import Robot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespace", help="the motiond started with --namespace NAME")
    parser.add_argument("--config", help="robot config (default: config/cyberdog2.yaml)")
    args = parser.parse_args()
    with Robot(args.namespace, args.config) as robot:    # leaving the block lies it down
        robot.stand()
        print("standing:", robot.state)
        robot.pose(pitch=0.3, seconds=0.5)                # head up: mode 21, +pitch over 0.5 s
        robot.pose(pitch=-0.3, seconds=0.3)               # and back down to level (it is relative)
        robot.walk(vx=0.3, seconds=3.0)                   # trot forward, then stand
        robot.walk(wz=0.5, seconds=3.0)                   # turn on the spot to the left
        print("odometry:", robot.odometry)


if __name__ == "__main__":
    main()
