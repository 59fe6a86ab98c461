"""LIFTED (SPEC §5.4, §5.6, §5.8; issue 16): the quadruped picked up while it
stands in mode 3 goes to mode 9 with switch_status 4, its legs go to the
stand pose without feed-forward, and it stands in 3 again once it is put
down; shifting its weight never counts as a lift. The same in closed-loop
mode 11 while it trots; trotting and every other gait never count as a
lift. In physics, lifted by a "hand": a force on the trunk holding it at a
height, as a person would."""
from __future__ import annotations

import hashlib
from typing import Any

import mujoco
import numpy as np
import pytest

from controller.behaviours.lifted import Lifted
from controller.behaviours.locomotion import Locomotion
from controller.protocol.constants import LIFTED
from controller.robot.config import load_config
from controller.sim.trial import Trial

CFG = load_config()


class Hand:
    """Holds the trunk at a height and level: a stiff spring and damper on
    its position and attitude, plus the whole robot's weight."""

    def __init__(self, trial: Trial) -> None:
        m = trial.robot.model
        self.data = trial.robot.data
        self.trunk = m.body("trunk").id
        self.weight = float(m.body_subtreemass[self.trunk]) * 9.81
        self.xy = self.data.xpos[self.trunk][:2].copy()

    def hold(self, z: float) -> None:
        d = self.data
        pos, vel = d.xpos[self.trunk], d.cvel[self.trunk]     # cvel: (angular, linear)
        force = np.zeros(3)
        force[:2] = 800.0 * (self.xy - pos[:2]) - 60.0 * vel[3:5]
        force[2] = self.weight + 1500.0 * (z - pos[2]) - 80.0 * vel[5]
        rot = d.xmat[self.trunk].reshape(3, 3)
        tilt = np.zeros(3)
        mujoco.mju_mat2Quat(q := np.zeros(4), rot.reshape(-1))
        mujoco.mju_quat2Vel(tilt, q, 1.0)
        tilt[2] = 0.0                                          # the hand does not turn it
        d.xfrc_applied[self.trunk, :3] = force
        d.xfrc_applied[self.trunk, 3:] = -30.0 * tilt - 2.0 * vel[:3]

    def release(self) -> None:
        self.data.xfrc_applied[self.trunk] = 0.0


def run_holding(trial: Trial, hand: Hand, z: float, seconds: float) -> None:
    for _ in range(int(seconds * CFG.tick_hz)):
        hand.hold(z)
        trial.tick()


def standing_in_3() -> Trial:
    trial = Trial(CFG)
    trial.send(12)
    trial.run(3.0)
    trial.send(3)
    trial.run(1.0)
    return trial


def test_picked_up_in_qp_stand_it_goes_soft_to_lifted_and_stands_again_when_put_down() -> None:
    trial = standing_in_3()
    assert trial.trace.mode[-1] == 3
    height = float(trial.robot.truth().position[2])           # 3 without pos_des: its lowest
    hand = Hand(trial)
    lifted_at = len(trial.trace.t)
    run_holding(trial, hand, 0.45, 1.0)                      # feet 20 cm off the floor
    modes = np.array(trial.trace.mode[lifted_at:])
    status = np.array(trial.trace.switch_status[lifted_at:])
    first = int(np.argmax(modes == Lifted.mode))
    assert modes[first] == Lifted.mode and status[first] == LIFTED
    assert first * CFG.dt < 0.5                               # lift_ms 100 plus the rise
    assert (trial.ctl.kernel.tau_ff == 0.0).all()
    assert np.allclose(trial.ctl.kernel.kp, trial.ctl.robot.gains("recovery")[0])
    # Put down: the trunk is lowered until the feet carry it, then let go.
    run_holding(trial, hand, 0.22, 1.0)
    hand.release()
    trial.run(2.0)                                           # past LIFTED's 2 s hold
    assert trial.trace.mode[-1] == 3                         # the heart-beaten 3 resumes
    assert trial.trace.switch_status[-1] == 0
    truth = trial.robot.truth()
    assert abs(truth.rpy[0]) < 0.1 and abs(truth.rpy[1]) < 0.1
    assert abs(truth.position[2] - height) < 0.02


def test_a_lifted_robot_takes_12_at_once_and_stays_lifted_for_11_until_it_lands() -> None:
    trial = standing_in_3()
    hand = Hand(trial)
    run_holding(trial, hand, 0.45, 0.5)
    assert trial.trace.mode[-1] == Lifted.mode
    trial.send(11, 3)                                         # not at once, not in the air
    run_holding(trial, hand, 0.45, 2.5)
    assert trial.trace.mode[-1] == Lifted.mode
    trial.send(12)
    run_holding(trial, hand, 0.45, 0.05)
    assert trial.trace.mode[-1] == 12


def test_standing_in_qp_stand_and_shifting_the_body_never_count_as_a_lift() -> None:
    trial = standing_in_3()
    for rpy in ([0.0, 0.3, 0.0], [0.3, 0.0, 0.0], [0.0, -0.3, 0.3]):
        trial.send(3, rpy_des=rpy)
        trial.run(1.0)
    assert set(trial.trace.mode[2000:]) == {3}
    assert LIFTED not in trial.trace.switch_status


def trotting(gait: int, vx: float) -> Trial:
    trial = Trial(CFG)
    trial.send(12)
    trial.run(3.0)
    trial.send(11, gait, vel_des=[vx, 0.0, 0.0], step_height=[0.06, 0.06])
    trial.run(2.0)
    return trial


def test_picked_up_while_trotting_closed_loop_it_goes_to_lifted_and_trots_again_when_put_down() -> None:
    trial = trotting(3, 0.5)
    loco = trial.ctl.fsm.state
    assert isinstance(loco, Locomotion) and loco.closed      # the MPC's feed-forward is on
    hand = Hand(trial)
    lifted_at = len(trial.trace.t)
    run_holding(trial, hand, 0.45, 1.0)
    modes = np.array(trial.trace.mode[lifted_at:])
    first = int(np.argmax(modes == Lifted.mode))
    assert modes[first] == Lifted.mode and trial.trace.switch_status[lifted_at + first] == LIFTED
    assert first * CFG.dt < 0.5
    assert (trial.ctl.kernel.tau_ff == 0.0).all()
    run_holding(trial, hand, 0.22, 1.0)
    hand.release()
    trial.run(3.0)                                           # LIFTED's 2 s, then 11 again
    assert trial.trace.mode[-1] == 11 and trial.trace.switch_status[-1] == 0
    truth = trial.robot.truth()
    assert abs(truth.rpy[0]) < 0.2 and abs(truth.rpy[1]) < 0.2 and truth.position[2] > 0.15


@pytest.mark.parametrize(("gait", "vx"), [(3, 1.0), (10, 0.96), (8, 1.2), (2, 0.11), (7, 0.18)])
def test_walking_closed_loop_never_counts_as_a_lift(gait: int, vx: float) -> None:
    trial = trotting(gait, vx)
    trial.run(3.0)
    assert set(trial.trace.mode[-2500:]) == {11}
    assert LIFTED not in trial.trace.switch_status


def test_the_checks_taken_before_the_last_commands_change_nothing() -> None:
    """Controller.sense takes the lift detector's evidence and the foot
    workspace bits (Fsm.sample) before the runtime's last command drain, so
    that a late command reaches its joint command sooner. Taken in Fsm.step
    instead (sense without them), a trot, a lift and a put-down publish the
    same messages, byte for byte."""
    def run(before_drain: bool) -> tuple[str, list[int]]:
        trial = Trial(CFG)
        ctl = trial.ctl
        digest = hashlib.sha256()
        step, sense = ctl.step, ctl.sense

        def sense_without_sample(now_ns: int, inbox: list[tuple[str, bytes]]) -> None:
            ctl.fsm.sample = lambda *_: None                  # type: ignore[method-assign]
            try:
                sense(now_ns, inbox)
            finally:
                del ctl.fsm.sample

        def hashed(*args: Any, **kwargs: Any) -> Any:
            out = step(*args, **kwargs)
            for _, channel, data in out.messages:
                digest.update(channel.encode())
                digest.update(bytes(data))
            return out
        if not before_drain:
            ctl.sense = sense_without_sample                  # type: ignore[method-assign]
        ctl.step = hashed                                     # type: ignore[method-assign]
        trial.send(12)
        trial.run(2.0)
        trial.send(11, 3, vel_des=[0.5, 0.0, 0.0], step_height=[0.06, 0.06])
        trial.run(1.5)
        hand = Hand(trial)
        run_holding(trial, hand, 0.45, 0.6)
        run_holding(trial, hand, 0.22, 0.6)
        hand.release()
        trial.run(2.2)
        return digest.hexdigest(), trial.trace.mode

    sampled, modes = run(True)
    assert Lifted.mode in modes and modes[-1] == 11      # the lift check was exercised, and left
    assert run(False) == (sampled, modes)
