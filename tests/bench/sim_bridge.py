"""A robot bridge for the benchmark: the built-in sim in its own process,
answering each joint_cmd with a joint_state over LCM (and, from the MuJoCo
body, imu and sim_state), as a real robot's bridge does. So `make bench`
measures motiond as it runs on a robot, without the sim in its loop.
BRIDGE_SIM=physics runs the MuJoCo body, else the joint-space sim. Run under
tests/netns.sh only.

    python tests/bench/sim_bridge.py [CONFIG]   (until SIGTERM)
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import lcm

from controller.behaviours.base import make_robot
from controller.robot.config import load_config
from controller.robot.native import Kernel
from controller.sim.robot import make_sim


def main() -> None:
    cfg = load_config(sys.argv[1] if len(sys.argv) > 1 else None)
    kin = make_robot(cfg, Kernel(cfg.q_min, cfg.q_max, cfg.v_max)).kin
    sim, _ = make_sim(cfg, kin, os.environ.get("BRIDGE_SIM", "joint"))
    priority = int(os.environ.get("BRIDGE_PRIORITY", "0"))
    if priority:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    ch = cfg.lcm.channels
    joint = lcm.LCM(cfg.lcm.url("joint"))

    def on_joint_cmd(_channel: str, data: bytes) -> None:
        sim.command(data)       # as the robot's bridge gets it (its joint convention)
        utime = int.from_bytes(data[8:16], "big", signed=True)   # after the 8-byte fingerprint
        for name, payload in sim.messages(utime):
            joint.publish(ch[name], payload)

    joint.subscribe(ch["joint_cmd"], on_joint_cmd)
    # the first joint_state lets motiond leave OFF; then one per joint_cmd
    for name, payload in sim.messages(0):
        joint.publish(ch[name], payload)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        try:
            joint.handle_timeout(100)
        except OSError:          # select() interrupted by a signal (SIGTERM: stop)
            continue


if __name__ == "__main__":
    main()
