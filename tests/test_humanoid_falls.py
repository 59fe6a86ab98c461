"""A humanoid that falls (config `fall`, controller/core/fall.py): the IMU
sees it early, the robot stops, braces and is limp before its upper body
hits the ground, says so, and does not walk until it has stood up again."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from controller import msgs
from controller.behaviours.base import Imu
from controller.core.fall import FallDetector
from controller.core.goals import EventKind, Reason
from controller.robot.config import ConfigError, load_config
from controller.robot.config.fall import load_optional_fall
from controller.robot.config.reader import Reader
from controller.robot.resources import CONFIG_DIR
from controller.sim.trial import Trial

DT = 0.002


def level(pitch: float, roll: float = 0.0) -> Imu:
    """The IMU of a torso at this pitch and roll."""
    return Imu(roll=roll, pitch=pitch)


def detector() -> FallDetector:
    cfg = load_config(CONFIG_DIR / "humanoid20.yaml")
    assert cfg.fall is not None
    return FallDetector(cfg.fall, DT)


def feed(det: FallDetector, pitches: np.ndarray, roll: float = 0.0) -> list[bool]:
    out = []
    for p in pitches:
        det.update(level(float(p), roll))
        out.append(det.falling())
    return out


def test_tipping_past_the_tilt_at_the_rate_is_a_fall_with_its_direction() -> None:
    det = detector()
    # 2 rad/s forward from upright: a fall once past 0.45 rad, not before.
    pitches = np.arange(0.0, 0.7, 2.0 * DT)
    seen = feed(det, pitches)
    first = pitches[seen.index(True)]
    assert 0.45 <= first < 0.47 and det.forward
    det = detector()
    feed(det, -pitches)
    assert det.falling() and not det.forward and det.direction == "backward"
    det = detector()                                   # sideways counts too
    for r in np.arange(0.0, 0.7, 2.0 * DT):
        det.update(level(0.0, float(r)))
    assert det.falling() and det.direction == "right"  # positive roll: the right side down


def test_leaning_slowly_lying_still_or_rising_is_no_fall() -> None:
    det = detector()
    assert not any(feed(det, np.arange(0.0, 0.8, 0.5 * DT)))     # 0.5 rad/s: a lean
    det = detector()
    assert not any(feed(det, np.full(500, 1.57)))                 # lying on the floor
    det = detector()
    assert not any(feed(det, np.arange(1.57, 0.0, -3.0 * DT)))    # getting up
    det.update(None)                                              # IMU gone: no verdict
    assert det.tilt is None and not det.falling()


@pytest.mark.parametrize("data, error", [
    ({"tilt": 0.5, "tilt_rate": 1, "passive_tilt": 0.4, "protect_s": 0.1, "front": "stand",
      "back": "stand", "gains": "pose"}, "above tilt"),
    ({"tilt": 0.5, "tilt_rate": 1, "passive_tilt": 0.8, "protect_s": 0.1, "front": "dive",
      "back": "stand", "gains": "pose"}, "'dive' is not a pose"),
    ({"tilt": 0.5, "tilt_rate": 1, "passive_tilt": 0.8, "protect_s": 0.1, "front": "stand",
      "back": "stand", "gains": "soft"}, "'soft' is not a set"),
    ({"tilt": 0.5, "tilt_rate": 1, "passive_tilt": 0.8, "protect_s": 0.1, "front": "stand",
      "back": "stand", "gains": "pose", "roll_out": 1}, "unknown key"),
])
def test_a_bad_fall_section_names_the_key(data: dict, error: str) -> None:
    cfg = load_config(CONFIG_DIR / "humanoid20.yaml")
    with pytest.raises(ConfigError, match=error):
        load_optional_fall(Reader(Path("x.yaml"), {"fall": data}), cfg.poses, cfg.gains)


def pushed_over(push: float, events: list[msgs.motion_event_t]) -> Trial:
    """humanoid20 standing, then pushed (m/s forward); `events` collects
    every motion_event it publishes."""
    cfg = load_config(CONFIG_DIR / "humanoid20.yaml")

    def record(port: str, utime: int, channel: str, data: bytes) -> None:
        if channel == cfg.lcm.channels["motion_event"]:
            events.append(msgs.motion_event_t.decode(data))

    trial = Trial(cfg, recorder=record)
    trial.send(12)
    trial.run(3.0)
    trial.robot.data.qvel[0] += push
    return trial


@pytest.mark.parametrize("push, forward", [(0.8, True), (-0.8, False)])
def test_pushed_over_it_braces_goes_limp_before_the_impact_and_says_so(
        push: float, forward: bool) -> None:
    published: list[msgs.motion_event_t] = []
    trial = pushed_over(push, published)
    ctl = trial.ctl
    start = len(trial.trace.t)
    k = ctl.kernel
    over = 0.0                                 # the largest step of a stiff joint's target past its limit
    for _ in range(1000):
        before = k.pos.copy()
        trial.tick()
        stiff = k.kp > 0
        over = max(over, float(np.max((np.abs(k.pos - before) - k.step_max)[stiff], initial=0.0)))
    assert over <= 1e-9                        # bracing starts from the targets the fall interrupted
    events = [e for e in published if e.kind == EventKind.FALL]
    tr = trial.trace
    seen = [i for i, f in enumerate(tr.fall_seen[start:]) if f]
    assert len(seen) == 1                      # reported once
    upper = [i for i, c in enumerate(tr.contacts[start:])
             if any(not g.endswith(("_foot", "_shank", "_thigh")) for g in c)]
    assert upper and upper[0] > seen[0] + 25   # seen at least 50 ms before the impact
    assert not tr.stiff[start + upper[0]]      # limp by then
    assert any(tr.stiff[start + seen[0]:start + upper[0]])   # braced in between
    assert ctl.fsm.ori_error == 1 and tr.mode[-1] == 0
    assert ("forward" if forward else "backward") in ctl.counters.last_error
    assert len(events) == 1 and events[0].value >= 0.45
    assert events[0].text == f"falling {'forward' if forward else 'backward'}"
    # No walking from the floor: 11 is refused until a stand.
    trial.send(11, 3, vel_des=[0.1, 0.0, 0.0])
    trial.run(0.5)
    assert tr.mode[-1] == 0


def test_without_a_fall_section_the_push_just_topples_it_stiff() -> None:
    """The same push with the feature off (no `fall`): no detection, the
    joints stay stiff into the impact (what the section changes)."""
    cfg = load_config(CONFIG_DIR / "humanoid20.yaml")
    trial = Trial(replace(cfg, fall=None))
    trial.send(12)
    trial.run(3.0)
    trial.robot.data.qvel[0] += 0.8
    start = len(trial.trace.t)
    trial.run(2.0)
    tr = trial.trace
    assert not any(tr.fall_seen)
    upper = [i for i, c in enumerate(tr.contacts[start:])
             if any(not g.endswith(("_foot", "_shank", "_thigh")) for g in c)]
    assert upper and tr.stiff[start + upper[0]]


def getup_trial(events: list[msgs.motion_event_t], lying: bool) -> Trial:
    """humanoid20 with the 1 s Stand script counted as a getup (it cannot
    lift a lying robot), lying face down (`lying`) or standing, the damper on."""
    cfg = load_config(CONFIG_DIR / "humanoid20.yaml")
    assert cfg.fall is not None
    cfg = replace(cfg, fall=replace(cfg.fall, except_scripts=frozenset({"Stand"})))

    def record(port: str, utime: int, channel: str, data: bytes) -> None:
        if channel == cfg.lcm.channels["motion_event"]:
            events.append(msgs.motion_event_t.decode(data))

    trial = Trial(cfg, recorder=record)
    if lying:
        trial.robot.place(cfg.poses["stand"], (0.0, 1.5708, 0.0))
        trial.run(0.5)
        trial.send(7, 0)
    else:
        trial.send(12)
        trial.run(3.0)
    trial.run(0.5)
    trial.send_script("Stand", 44)
    return trial


def test_a_getup_that_leaves_the_robot_down_is_played_once_more_then_reported_failed() -> None:
    events: list[msgs.motion_event_t] = []
    trial = getup_trial(events, lying=True)
    trial.run(4.0)
    ours = [e for e in events if e.goal_id == 44]
    assert [e.kind for e in ours] == [EventKind.SCRIPT_STARTED, EventKind.SCRIPT_STARTED,
                                      EventKind.SCRIPT_DONE]
    done = ours[-1]
    assert done.reason == Reason.FAILED and "still down after a retry" in done.text
    assert "getup Stand failed: the torso is" in trial.ctl.counters.last_error
    assert trial.trace.mode[-1] == 7                 # left in the damper, not standing up


def test_a_getup_that_ends_upright_just_finishes() -> None:
    events: list[msgs.motion_event_t] = []
    trial = getup_trial(events, lying=False)
    trial.run(2.0)
    ours = [e for e in events if e.goal_id == 44]
    assert [e.kind for e in ours] == [EventKind.SCRIPT_STARTED, EventKind.SCRIPT_DONE]
    assert ours[-1].reason == Reason.FINISHED and trial.trace.mode[-1] == 12


def test_the_imus_tilt_is_the_angle_of_the_torsos_up_axis_from_the_vertical() -> None:
    from controller.robot.kinematics import rotation_rpy
    for roll, pitch, yaw in [(0.0, 0.0, 0.0), (0.3, -0.2, 1.0), (-1.2, 0.4, -2.0), (0.0, 1.5, 0.3)]:
        up = rotation_rpy(roll, pitch, yaw) @ np.array([0.0, 0.0, 1.0])
        assert Imu(roll=roll, pitch=pitch).tilt == pytest.approx(math.acos(up[2]), abs=1e-12)
