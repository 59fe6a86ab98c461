"""The official CyberDog 2 client flows in physics (issue 16's "done when"):
basic_motion's trot and customized_gait's user gait move the MuJoCo body as
they command, judged on the simulator's ground truth with the sensor
imperfections on.

basic_motion: stand (12), set the body height (21/5, pos_des z 0.22 over
400 ms), then trot with gait 26 turning at 0.5 rad/s (step height 6 cm,
its stale pos_des still in the message) for 5 s, then lie down (7).
customized_gait: upload the Gait Def, then the Params, and run them as
62/110 with {7, D 4000} behind it (SPEC §8, §10.7). Each Params step is
judged by issue 16's tracking rule over its own time (less its first
0.5 s, the acceleration).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from controller import msgs
from controller.robot.config import load_config
from controller.sim.trial import Trial

USER_DIR = Path(__file__).resolve().parent.parent / "gaits" / "user"
SETTLE_S = 0.5


def vx_limit(command: float) -> float:
    return 0.05 + 0.1 * abs(command)


def wz_limit(command: float) -> float:
    return 0.1 + 0.1 * abs(command)


def standing() -> Trial:
    trial = Trial(load_config())
    trial.send(12)
    trial.run(3.0)
    return trial


def upright_without_trunk_contact(trial: Trial, start: int, tilt: float) -> None:
    rpy = np.array(trial.trace.rpy[start:])
    assert np.abs(rpy[:, :2]).max() < tilt
    touched = {g for contacts in trial.trace.contacts[start:] for g in contacts if not g.endswith("_foot")}
    assert not touched


def test_basic_motion_trot_turns_the_body_as_commanded() -> None:
    trial = standing()
    trial.send(21, 5, pos_des=[0.0, 0.0, 0.22], duration=400)
    trial.run(0.5)
    start = len(trial.trace.t)
    trial.send(11, 26, vel_des=[0.0, 0.0, 0.5], step_height=[0.06, 0.06], pos_des=[0.0, 0.0, 0.22])
    trial.run(5.0)
    tail = np.array(trial.trace.body_velocity[-int(3.0 / trial.cfg.dt):])
    wz, vx, vy = float(tail[:, 2].mean()), float(tail[:, 0].mean()), float(tail[:, 1].mean())
    assert abs(wz - 0.5) <= wz_limit(0.5)
    assert abs(vx) <= vx_limit(0.0) and abs(vy) <= vx_limit(0.0)
    upright_without_trunk_contact(trial, start, 0.1)
    assert trial.trace.mode[-1] == 11
    trial.send(7, 0)
    trial.run(3.0)
    assert trial.trace.mode[-1] == 7
    assert trial.robot.truth().position[2] < 0.1            # the body lies on the ground


def upload(trial: Trial, name: str) -> None:
    m = msgs.file_send_lcmt()
    m.data = (USER_DIR / name).read_text()
    trial.pending.append((trial.ch["user_gait_file"], m.encode()))
    trial.run(0.5)                      # the example waits 0.5 s after the Def, 0.1 s after the Params


def test_customized_gait_walks_each_step_as_its_params_say() -> None:
    trial = standing()
    upload(trial, "Gait_Def_example.toml")
    upload(trial, "Gait_Params_example_full.toml")
    steps = trial.ctl.gaits.user_params
    assert len(steps) >= 3
    start = len(trial.trace.t)
    trial.send(62, 110, duration=4320)
    trial.send(7, 0, duration=4000)     # discarded behind the motion (SPEC §10.7)
    total = sum(b.duration for b in steps)
    trial.run(total * trial.cfg.dt)
    assert trial.trace.mode[-1] == 62 or trial.trace.gait[-1] == 110
    velocity = np.array(trial.trace.body_velocity[start:])
    at, settle = 0, int(round(SETTLE_S / trial.cfg.dt))
    moved = False
    for block in steps:
        part = velocity[at + settle:at + block.duration]
        at += block.duration
        vx, vy, wz = part.mean(axis=0)
        want = block.vel_des
        assert abs(vx - want[0]) <= vx_limit(want[0]), (block, vx)
        assert abs(vy - want[1]) <= vx_limit(want[1]), (block, vy)
        assert abs(wz - want[2]) <= wz_limit(want[2]), (block, wz)
        moved |= abs(want[0]) > 0.05 and abs(vx) > 0.05
    assert moved                        # the file walks somewhere, and so did the body
    upright_without_trunk_contact(trial, start, 0.2)

