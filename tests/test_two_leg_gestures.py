"""Mode 64's gestures 1-14 (SPEC §12.E.2): the front feet's paths, and in
physics the heart drawn on two legs within 2 cm of the SPEC's path, and the
obstacle swings: a free swing raises no false alarm; a hand held into the
swing's path is felt, the swing turns back (7), and once the hand is gone
the greeting finishes on four feet. Judged on the simulator's ground truth."""
from __future__ import annotations

import numpy as np
import pytest

from controller.behaviours.two_leg import GESTURE_LEAD_S, GESTURE_SETTLE_S, GIVE_UP_TOUCHES, TwoLegStand
from controller.motion import gestures
from controller.robot.config import load_config
from controller.sim.trial import Trial
from controller.sim.world import World

CFG = load_config()
# A hand above the front right foot's swing once the robot is up (m, from the start).
HAND = [0.14, -0.135, 0.535, 0.06, 0.035, 0.01]


def fr_fl(x: float, y: float, z: float) -> np.ndarray:
    return np.array([[x, y, z], [x, -y, z]])


@pytest.mark.parametrize("gait", [1, 2, 3, 4, 5, 8, 9, 11, 12, 13, 14])
def test_every_gesture_starts_and_ends_under_the_hips(gait: int) -> None:
    assert gestures.feet(gait, 0.0) == pytest.approx(gestures.HOME)
    end = gestures.feet(gait, gestures.length(gait))
    if gait % 10 == 2:
        assert end == pytest.approx(fr_fl(0.0, -0.09, -0.25))     # Welcome ends 1 cm lower
    elif gait % 10 in (4, 5, 8, 9):
        assert end == pytest.approx(fr_fl(0.0, -0.1, -0.3))      # the held pose
    else:
        assert end == pytest.approx(gestures.HOME)


def test_the_gestures_pass_the_spec_points_at_the_spec_times() -> None:
    # Welcome, one move per 0.5 s: apart, crossed, apart.
    assert gestures.feet(2, 0.5) == pytest.approx(fr_fl(0.0, -0.08, -0.2))
    assert gestures.feet(2, 1.0) == pytest.approx(fr_fl(0.0, 0.04, -0.2))
    assert gestures.feet(12, 1.5) == pytest.approx(fr_fl(0.0, -0.08, -0.2))
    # Hand up and down: FR down and back while FL goes up and forward, then swapped.
    assert gestures.feet(3, 0.3) == pytest.approx(np.array([[-0.15, -0.03, -0.22], [0.15, 0.03, -0.14]]))
    assert gestures.feet(13, 0.7) == pytest.approx(np.array([[0.15, -0.03, -0.14], [-0.15, 0.03, -0.22]]))
    # Heart: crossed at 0.5 s, out at its widest (y 0.18 out) half-way through the curve, the point
    # (x -0.08) at its end, (-0.07, 0.03, -0.27) held after.
    assert gestures.feet(1, 0.5) == pytest.approx(gestures.HEART_START)
    mid = gestures.feet(1, 0.5 + 0.75)
    assert mid[:, 1] == pytest.approx([0.03 - 0.18, -0.03 + 0.18]) and mid[0, 2] == pytest.approx(-0.12)
    assert gestures.feet(11, 2.0)[:, 0] == pytest.approx([-0.08, -0.08])
    assert gestures.feet(1, 2.5) == pytest.approx(fr_fl(-0.07, 0.03, -0.27))
    assert [gestures.length(g) for g in (1, 3, 6, 13)] == [3.5, 1.4, 11.0, 1.4]


def greet(gait: int, world: World | None = None) -> tuple[Trial, TwoLegStand, int]:
    trial = Trial(CFG, world=world)
    trial.send(12)
    trial.run(2.5)
    start = len(trial.trace.t)
    trial.send(64, gait)
    stand = trial.ctl.fsm.behaviours[64]
    assert isinstance(stand, TwoLegStand)
    trial.run(0.1)
    assert stand.stage == "kneel"
    return trial, stand, start


def finish(trial: Trial, stand: TwoLegStand, start: int, seconds: float) -> None:
    for _ in range(int(seconds / CFG.dt)):
        trial.tick()
        if stand.stage == "done":
            break
    trial.run(0.2)
    tr = trial.trace
    assert stand.failed is None and tr.bar[-1] == 100
    assert not {g for c in tr.contacts[start:] for g in c} - set(trial.feet)
    assert np.abs(np.array(tr.rpy[-1][:2])).max() < 0.1
    bars = [b for b, m in zip(tr.bar[start:], tr.mode[start:], strict=True) if m == 64]
    assert [b for i, b in enumerate(bars) if i == 0 or b != bars[i - 1]] == [0, 25, 50, 75, 100]


def test_the_heart_is_drawn_on_two_legs_within_2_cm_of_the_spec_path() -> None:
    trial, stand, start = greet(1)
    d = trial.robot.data
    trunk = trial.robot.model.body("trunk").id
    errors = []
    while stand.stage != "reach":
        assert stand.stage != "done", stand.failed
        trial.tick()
        if stand.stage == "greet":
            s = (trial.ctl.tick - 1 - stand.stage_tick) * CFG.dt      # into the gesture stage
            if s >= GESTURE_LEAD_S + 0.05:
                rot = d.xmat[trunk].reshape(3, 3)
                rel = (np.array(trial.trace.feet[-1][:2]) - d.xpos[trunk]) @ rot - stand.kin.hip[:2]
                errors.append(np.abs(rel - gestures.feet(1, s - GESTURE_LEAD_S)).max())
    assert len(errors) > 1000 and max(errors) < 0.02
    assert set(trial.trace.gait[start + 1:]) == {1}
    finish(trial, stand, start, 8.0)


def test_a_free_swing_feels_no_obstacle() -> None:
    trial, stand, start = greet(6)
    finish(trial, stand, start, 21.0)
    assert stand.swing_contacts == 0 and stand.swing_phase > 9.0     # 11 s of swinging, never stopped


def test_a_hand_in_the_swing_is_felt_the_swing_turns_back_and_the_greeting_ends_on_four_feet() -> None:
    trial, stand, start = greet(7, World.from_spec({"obstacle": HAND}, "test"))
    while not (stand.stage == "greet" and stand.watch.filtered is not None):
        trial.tick()
    trial.robot.place_obstacle()
    placed = len(trial.trace.t)
    while stand.swing_contacts == 0:
        trial.tick()
        assert (len(trial.trace.t) - placed) * CFG.dt < 0.6, "no contact felt on the first swing out"
    phase = stand.swing_phase % 1.0
    assert phase < 0.5                                   # felt on the way out
    trial.run(gestures.REBOUND_TICKS * CFG.dt + 0.1)
    assert 0.5 < stand.swing_phase % 1.0 < 1.0           # turned back: on the way home
    trial.robot.place_obstacle(False)                    # the hand is taken away
    finish(trial, stand, start, 21.0)


def test_a_hand_that_stays_in_the_swing_ends_the_greeting_early_on_four_feet() -> None:
    # Gesture 7 turns back 100 ticks after each touch and swings out again: a
    # hand left there is touched on every swing out, and each touch pitches
    # the trunk on two legs. After GIVE_UP_TOUCHES the greeting ends early.
    trial, stand, start = greet(7, World.from_spec({"obstacle": HAND}, "test"))
    while not (stand.stage == "greet" and stand.watch.filtered is not None):
        trial.tick()
    trial.robot.place_obstacle()
    began = stand.stage_tick
    while stand.stage == "greet":
        trial.tick()
    assert stand.swing_contacts == GIVE_UP_TOUCHES
    played = (trial.ctl.tick - began) * CFG.dt
    assert played < GESTURE_SETTLE_S + GESTURE_LEAD_S + gestures.length(7) - 1.0
    finish(trial, stand, start, 21.0)
