"""What the controller does with inputs it must not carry out (docs/VALIDATION.md).

The rules are tested here on the simulated clock; the fields, counters and
log events they use are kept in step with docs/VALIDATION.md by the tests at
the end of this file.
"""
from __future__ import annotations

import numpy as np
import pytest
from harness import Rig

from controller import msgs
from controller.fsm import BAN_TRANS

HUMANOID = "config/humanoid20.yaml"


@pytest.fixture
def standing() -> Rig:
    r = Rig()
    r.stand()
    return r


def off_measured(config: str | None = None) -> Rig:
    r = Rig(config)
    r.run(20)        # joint_state has arrived: leaving OFF is possible
    return r


# -- unknown gaits of known modes: BAN_TRANS -----------------------------------------

@pytest.mark.parametrize("mode, gait", [(7, 5), (7, -1), (12, 3), (12, 127), (21, 4), (21, -5),
                                        (3, 2), (3, 4)])
def test_an_unknown_gait_of_a_known_mode_is_refused(standing: Rig, mode: int, gait: int) -> None:
    q_before = standing.ctl.kernel.pos.copy()
    standing.send(mode, gait)
    standing.run(200)
    assert standing.mode == 12
    assert standing.last.switch_status == BAN_TRANS
    assert standing.last.mode == 12
    assert f"gait {gait} is not a mode-{mode} gait" in standing.ctl.counters.last_error
    np.testing.assert_allclose(standing.ctl.kernel.pos, q_before, atol=1e-9)


@pytest.mark.parametrize("mode, gait", [(7, 0), (7, 1), (21, 5), (21, 2), (3, 0), (3, 1), (3, 3)])
def test_the_known_gaits_of_those_modes_still_run(standing: Rig, mode: int, gait: int) -> None:
    standing.send(mode, gait)
    standing.run(200)
    assert standing.mode == mode
    assert standing.last.switch_status != BAN_TRANS


def test_mode_15_from_a_command_takes_gait_0_only() -> None:
    rig = off_measured()
    rig.send(15, 1)
    rig.run(100)
    assert rig.mode == 0 and rig.last.switch_status == BAN_TRANS
    rig.send(15, 0)
    rig.run(100)
    assert rig.mode == 15       # no motor_ctrl data: the high-damping rule (SPEC §6.9)


def test_off_is_never_refused_whatever_the_gait(standing: Rig) -> None:
    standing.send(0, 9)
    standing.run(20)
    assert standing.mode == 0
    assert (standing.ctl.kernel.kp == 0).all() and (standing.ctl.kernel.kd == 0).all()


def test_a_refused_gait_queued_behind_a_pose_does_not_move_the_body(standing: Rig) -> None:
    """A mode-21 block of an unknown gait becomes active in mode 21 (behind
    the pose-hold filler): the FSM refuses it and the state must not run it,
    though it is of its own mode."""
    standing.send(21, 5, duration=400, pos_des=[0, 0, 0.22])
    standing.run(500)                  # the height block ends; the 21/3 filler holds
    assert standing.mode == 21 and standing.last.switch_status == 0
    height = standing.body_height()
    q = standing.ctl.kernel.pos.copy()
    standing.send(21, 4, duration=600, pos_des=[0, 0, -0.06], rpy_des=[0, 0.3, 0])
    standing.run(1200)                 # filler (<= 400 ms), then the refused block
    assert any(r.switch_status == BAN_TRANS for r in standing.responses[-300:])
    np.testing.assert_allclose(standing.ctl.kernel.pos, q, atol=1e-9)
    assert standing.body_height() == pytest.approx(height, abs=1e-3)


@pytest.mark.parametrize("mode, gait, reason", [(12, 3, "is not a mode-12 gait"),
                                                (12, 17, "needs a roll a biped cannot make"),
                                                (21, 4, "is not a mode-21 gait")])
def test_humanoid_unknown_gaits_are_refused(mode: int, gait: int, reason: str) -> None:
    rig = off_measured(HUMANOID)
    rig.send(12)
    rig.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 8000)
    rig.send(mode, gait)
    rig.run(100)
    assert rig.mode == 12 and rig.last.switch_status == BAN_TRANS
    assert reason in rig.ctl.counters.last_error


# -- motion goals: only a refusal counts as a rejected command ---------------------------

def goal(kind: int, goal_id: int, **fields: float) -> bytes:
    msg = msgs.motion_goal_t()
    msg.kind, msg.goal_id = kind, goal_id
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg.encode()


def events(rig: Rig) -> list[msgs.motion_event_t]:
    return [msgs.motion_event_t.decode(data) for _, ch, data in rig.last_out.messages
            if ch == rig.ch["motion_event"]]


def test_a_refused_goal_is_counted_and_a_cancelled_move_is_not_an_error(standing: Rig) -> None:
    c = standing.ctl.counters
    standing.raw(standing.ch["motion_goal"], goal(1, 7, distance=1.0, timeout=float("nan")))
    standing.tick()
    assert [(e.goal_id, e.kind, e.reason) for e in events(standing)] == [(7, 1, 4)]  # GOAL_DONE REFUSED
    assert c.commands_rejected == 1 and c.last_error == "motion goal 7: timeout is not finite"

    standing.raw(standing.ch["motion_goal"], goal(1, 8, distance=1.0, timeout=20.0))
    standing.run(200, heartbeat=False)
    standing.raw(standing.ch["motion_goal"], goal(2, 9, speed=0.1, timeout=5.0))   # pre-empts 8
    standing.tick()
    standing.raw(standing.ch["motion_goal"], goal(0, 10))                            # STOP: cancels 9
    standing.tick()
    assert c.commands_rejected == 1, c.last_error
    assert c.last_error == "motion goal 7: timeout is not finite"


# -- script requests: oversized arrays and strings, whatever the action -----------------

def script_request(action: int, names: list[str], request_id: int = 3) -> bytes:
    msg = msgs.script_request_t()
    msg.action, msg.request_id = action, request_id
    msg.names, msg.num_names = names, len(names)
    return msg.encode()


@pytest.mark.parametrize("names, reason", [
    (["Stand"] * 17, "give 0 to 16 script names, got 17"),
    (["x" * 65], "a script name is longer than 64 characters")])
def test_an_oversized_cancel_is_refused(names: list[str], reason: str) -> None:
    rig = Rig(HUMANOID)
    rig.run(20)
    rig.raw(rig.ch["script_request"], script_request(1, names))
    rig.tick()
    assert rig.ctl.counters.commands_rejected == 1
    assert rig.ctl.counters.last_error == f"script request 3 refused: {reason}"
    (done,) = events(rig)
    assert (done.goal_id, done.kind, done.reason) == (3, 7, 4)      # SCRIPT_DONE REFUSED
    rig.raw(rig.ch["script_request"], script_request(1, ["x" * 64] * 16, request_id=4))
    rig.tick()                                                   # the largest allowed: a plain cancel
    assert rig.ctl.counters.commands_rejected == 1


def test_a_tiny_script_speed_is_refused_not_raised() -> None:
    """Found by tests/test_fuzz.py (test_every_accepted_script_request_can_be_announced):
    speed 1.12e-44 stretched KickRight to ~1e44 s, beyond the float32 of
    SCRIPT_STARTED's value, and publishing the event raised out of the step."""
    rig = Rig(HUMANOID)
    rig.stand()
    for request_id, speed in ((11, 1.1210387714598537e-44), (12, 0.0099)):
        msg = msgs.script_request_t()
        msg.request_id, msg.priority, msg.speed = request_id, 100, speed
        msg.names, msg.num_names = ["KickRight"], 1
        rig.raw(rig.ch["script_request"], msg.encode())
        rig.tick()
        (done,) = events(rig)
        assert (done.goal_id, done.kind, done.reason) == (request_id, 7, 4)   # SCRIPT_DONE REFUSED
        assert "must be 0 (as written) or a finite number >= 0.01" in done.text
    msg.request_id, msg.speed = 13, 0.5                      # slow, but a motion: plays
    rig.raw(rig.ch["script_request"], msg.encode())
    rig.run(10)
    assert rig.ctl.director.last is not None and rig.ctl.director.last.request_id == 13
