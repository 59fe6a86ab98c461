"""Every byte the simulated robot and the controller publish over fixed
trial scripts, as one sha256 and a count per robot and channel: run it
before and after a change that must not change behaviour (a refactor), and
compare. Not a test: a tool for one.

    .venv/bin/python tests/output_digest.py before.json
    ... change the code ...
    .venv/bin/python tests/output_digest.py after.json
    .venv/bin/python tests/output_digest.py --compare before.json after.json

The scripts are in process and deterministic (controller/sim/trial.py: the
physics, its seeded sensor noise and the controller on one clock): a stand,
trots and turns, a pose, a jump, a motion, move goals, user gait uploads, a
heartbeat lapse, motor_ctrl, an encoder fault and the lie-downs on both
quadrupeds; a stand, walks, a script, a pose and the damper on both
humanoids.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from typing import Any

from controller import msgs
from controller.robot.config import load_config
from controller.robot.resources import CONFIG_DIR, DATA_ROOT
from controller.sim.faults import Fault
from controller.sim.trial import Trial

Digest = dict[str, list[Any]]


class Recorder:
    def __init__(self) -> None:
        self.hashes: dict[str, Any] = defaultdict(hashlib.sha256)
        self.counts: dict[str, int] = defaultdict(int)

    def __call__(self, port: str, utime: int, channel: str, data: bytes) -> None:
        h = self.hashes[channel]
        h.update(utime.to_bytes(8, "little", signed=True))
        h.update(data)
        self.counts[channel] += 1

    def digest(self) -> Digest:
        return {ch: [self.counts[ch], self.hashes[ch].hexdigest()] for ch in sorted(self.hashes)}


def goal(kind: int, **fields: Any) -> msgs.motion_goal_t:
    msg = msgs.motion_goal_t()
    msg.kind = kind
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg


def quadruped(name: str) -> Digest:
    rec = Recorder()
    cfg = load_config(CONFIG_DIR / f"{name}.yaml")
    t = Trial(cfg, recorder=rec)
    t.run(0.5)
    t.send(12)
    t.run(2.5)
    t.send(11, gait_id=3, vel_des=[0.5, 0, 0], step_height=[0.06, 0.06])
    t.run(2)
    t.send(11, gait_id=3, vel_des=[0.3, 0.1, 0.8], step_height=[0.06, 0.06])
    t.run(1.5)
    t.send(11, gait_id=10, vel_des=[0.4, 0, 0], step_height=[0.05, 0.05])
    t.run(1.5)
    t.send(21, gait_id=0, rpy_des=[0.1, 0.15, 0.1], pos_des=[0, 0, 0.25], duration=1000)
    t.run(1.5)
    t.send(12)
    t.run(1)
    t.send(16, gait_id=0)
    t.run(3)
    t.send(12)
    t.run(1)
    t.send(62, gait_id=0, value=0)
    t.run(1)
    t.send(12)
    t.run(0.5)
    t.send_goal(goal(1, goal_id=5, distance=0.5, timeout=6.0))
    t.run(4)
    t.send_goal(goal(2, goal_id=6, speed=0.2, rotation=0.3, timeout=1.0))
    t.run(0.5)
    t.send_goal(goal(0, goal_id=7))
    t.run(0.5)
    t.send_file((DATA_ROOT / "gaits/user/Gait_Def_example.toml").read_text())
    t.send_file((DATA_ROOT / "gaits/user/Gait_Params_example_full.toml").read_text())
    t.run(0.2)
    t.send(12)
    t.run(0.5)
    t.send(11, gait_id=3, vel_des=[0.3, 0, 0], step_height=[0.06, 0.06])
    t.run(1)
    t.run(1.2, heartbeat=False)                         # the heartbeat lapses
    t.send(12)
    t.run(2)
    t.send(7)
    t.run(1.5)
    m = msgs.motor_ctrl_lcmt()
    m.q_des = list(t.ctl.q[:12])
    m.qd_des, m.kp_des, m.kd_des, m.tau_des = [0.0] * 12, [30.0] * 12, [1.0] * 12, [0.0] * 12
    for _ in range(300):
        t.pending.append((t.ch["motor_ctrl"], m.encode()))
        t.tick()
    t.run(0.7)
    t.send(12)
    t.run(1.5)
    t.send(11, gait_id=3, vel_des=[0.5, 0, 0], step_height=[0.06, 0.06])
    t.run(1.5)
    t.robot.inject(Fault.from_spec({"kind": "encoder_jump", "joint": "FR_hip", "rad": 0.3},
                                   list(cfg.joint_names), list(cfg.legs), "digest"))
    t.run(1)
    for mode in (12, 7, 101):
        t.send(mode)
        t.run(2)
    return rec.digest()


def humanoid(name: str) -> Digest:
    rec = Recorder()
    t = Trial(load_config(CONFIG_DIR / f"{name}.yaml"), recorder=rec)
    t.run(0.5)
    t.send(12)
    t.run(2.5)
    t.send(11, gait_id=0, vel_des=[0.1, 0, 0])
    t.run(3)
    t.send(11, gait_id=0, vel_des=[0.0, 0.05, 0.3])
    t.run(2)
    t.send(12)
    t.run(1)
    t.send_script("Stand", 44)
    t.run(2)
    t.send(21, gait_id=0, rpy_des=[0.0, 0.1, 0.1], duration=1000)
    t.run(1.5)
    t.send(7)
    t.run(2)
    return rec.digest()


ROBOTS = {"cyberdog2": quadruped, "go2": quadruped, "humanoid20": humanoid, "nao22": humanoid}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="where to write the digest (or, with --compare, two digests)")
    parser.add_argument("--compare", action="store_true", help="compare two digests: exit 1 if they differ")
    parser.add_argument("--robot", action="append", choices=sorted(ROBOTS), help="only this robot (repeatable)")
    args = parser.parse_args(argv)
    if args.compare:
        with open(args.files[0]) as f, open(args.files[1]) as g:
            a, b = json.load(f), json.load(g)
        differ = [(r, ch) for r in sorted(set(a) | set(b))
                  for ch in sorted(set(a.get(r, {})) | set(b.get(r, {})))
                  if a.get(r, {}).get(ch) != b.get(r, {}).get(ch)]
        for robot, channel in differ:
            print(f"{robot} {channel}: {a.get(robot, {}).get(channel)} -> {b.get(robot, {}).get(channel)}")
        print("identical" if not differ else f"{len(differ)} channels differ")
        return 1 if differ else 0
    out = {}
    for robot, script in ROBOTS.items():
        if args.robot and robot not in args.robot:
            continue
        out[robot] = script(robot)
        print(robot, sum(n for n, _ in out[robot].values()), "messages", file=sys.stderr)
    with open(args.files[0], "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
