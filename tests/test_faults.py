"""Faults of the robot side the daemon must survive (docs/RELIABILITY.md), in
process on the simulated clock: joint_state stops, and a joint does not follow
its target. The daemon-level half is test_faults_daemon.py."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from harness import TICK_NS, Rig
from structlog.testing import capture_logs

from controller import msgs
from controller.core.faults import TrackingWatch
from controller.core.fsm import EDAMP_HOLD_TICKS
from controller.robot.config import SafetyConfig

DONE, EDAMP, BAN_TRANS = 0, 3, 5
OFFLINE = 1                      # motor_error bit0


@pytest.fixture
def standing() -> Rig:
    r = Rig(record_joints=True)
    r.stand()
    return r


def joint_state(rig: Rig, position: Iterable[float]) -> bytes:
    """A joint_state at `position`, with the torques the sim's motors give
    (zeros would read as dead motors to the sensor watch)."""
    js = msgs.joint_state_t()
    js.num_joints = rig.cfg.num_joints
    js.position = [float(x) for x in position]
    js.velocity = [0.0] * rig.cfg.num_joints
    tau = getattr(rig.robot, "tau", None)
    js.torque = [float(x) for x in tau] if tau is not None else [0.0] * rig.cfg.num_joints
    return js.encode()


def events(logs: Sequence[Mapping[str, Any]], name: str) -> list[Mapping[str, Any]]:
    return [e for e in logs if e["event"] == name]


def damped(rig: Rig) -> bool:
    """The last joint command is the passive damper: no stiffness, some damping."""
    k = rig.ctl.kernel
    return not k.kp.any() and bool(k.kd.any())


# -- joint_state loss --------------------------------------------------------------------
def test_joint_state_loss_damps_on_the_25th_tick_after_the_last_one(standing: Rig) -> None:
    r = standing
    r.run(100)
    last_ns = r.now_ns
    r.tick()                              # takes in the last joint_state
    r.feed_joint_state = False
    with capture_logs() as logs:
        r.run_until(lambda r: r.ctl.last_reported[2] == EDAMP, 200)
    gap_ns = r.now_ns - TICK_NS - last_ns         # the tick that went to EDAMP
    assert gap_ns == 50_000_000
    # The tick before still stood; the first damped joint_cmd is on that very tick.
    assert r.joint_cmds[-2].kp[2] > 0 and not any(r.joint_cmds[-1].kp) and any(r.joint_cmds[-1].kd)
    assert (r.mode, r.last.mode, r.last.switch_status) == (7, 7, EDAMP)
    assert all(e & OFFLINE for e in r.ctl.response.motor_error)
    assert r.ctl.counters.last_error == ("no joint_state for 50 ms (safety.joint_state_timeout_ms 50): "
                                         "damping (EDAMP) until a new command")
    lost = events(logs, "joint_state_lost")
    assert len(lost) == 1 and lost[0]["gap_ms"] == 50.0 and lost[0]["action"] == "damping (EDAMP)"
    assert lost[0]["log_level"] == "warning"


def test_after_joint_state_returns_only_a_new_command_stands_the_robot_up(standing: Rig) -> None:
    r = standing
    r.feed_joint_state = False
    r.run(100)
    assert r.last.switch_status == EDAMP
    # A command during the outage is refused and counted, and never runs later.
    rejected = r.ctl.counters.commands_rejected
    r.send(12)
    r.run(20)
    assert r.ctl.counters.commands_rejected == rejected + 1
    assert r.ctl.counters.last_error.startswith("command mode 12 refused: no joint_state for")
    r.run(1000)
    with capture_logs() as logs:
        r.feed_joint_state = True
        r.tick()
    back = events(logs, "joint_state_back")
    assert len(back) == 1 and back[0]["outage_ms"] == pytest.approx(1122, abs=2)
    assert not any(e & OFFLINE for e in r.ctl.response.motor_error)
    assert "joint_state back after" in r.ctl.counters.last_error
    # Heartbeats of the last life_count (the refused 12) change nothing, for as
    # long as they come: the robot stays in the damper, EDAMP reported.
    r.run(EDAMP_HOLD_TICKS * 2 * 2, heartbeat=True)
    assert (r.mode, r.last.mode, r.last.switch_status) == (7, 7, EDAMP)
    assert not r.ctl.kernel.kp.any()                # passive (the damping ends after 6 s, SPEC §6.5)
    assert r.body_height() < 0.12                   # lying on its belly
    r.send(12)                                      # a new life_count
    r.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 5000)
    assert r.last.switch_status == DONE


def test_joint_state_loss_in_off_stays_off_and_refuses_commands() -> None:
    r = Rig(record_joints=True)
    r.run(20)
    r.feed_joint_state = False
    with capture_logs() as logs:
        r.run(100)
    assert events(logs, "joint_state_lost")[0]["action"] == "staying OFF"
    assert r.mode == 0 and r.last.mode == 0
    assert not any(r.joint_cmds[-1].kp) and not any(r.joint_cmds[-1].kd)
    assert all(e & OFFLINE for e in r.ctl.response.motor_error)
    r.send(12)
    r.run(500)
    assert r.mode == 0
    r.feed_joint_state = True
    r.run(500)                                     # back: still OFF, nothing was kept
    assert r.mode == 0 and r.ctl.counters.last_error.startswith("joint_state back after")
    r.send(12)
    r.run(100)
    assert r.mode == 12


def test_before_the_first_joint_state_nothing_trips_and_off_is_not_left() -> None:
    r = Rig(sim=False)
    with capture_logs() as logs:
        r.run(1000)
        r.send(12)
        r.run(100)
    assert not events(logs, "joint_state_lost")
    assert r.mode == 0 and r.last.switch_status == BAN_TRANS
    assert r.ctl.counters.last_error == "mode 12 refused: no joint_state has been received yet"


@pytest.mark.parametrize("bad", ["wrong_count", "not_finite", "garbage"])
def test_bad_joint_state_packets_do_not_count_as_joint_state(standing: Rig, bad: str) -> None:
    r = standing
    r.feed_joint_state = False
    assert r.robot is not None
    packet = {"wrong_count": lambda: joint_state(r, r.robot.q)[:-20],
              "not_finite": lambda: joint_state(r, [float("nan")] * 12),
              "garbage": lambda: b"\x00" * 7}[bad]
    start = r.now_ns
    while r.last.switch_status != EDAMP:
        r.raw(r.ch["joint_state"], packet())
        r.tick()
    assert r.now_ns - TICK_NS - start == 48_000_000     # the last good one came 2 ms before start
    assert r.ctl.counters.packets_rejected >= 24


def test_flapping_joint_state_logs_at_most_once_a_second(standing: Rig) -> None:
    r = standing
    with capture_logs() as logs:
        for _ in range(30):                # 30 outages of 60 ms in 3 s
            r.feed_joint_state = False
            r.run(60)
            r.feed_joint_state = True
            r.run(40)
    lost = events(logs, "joint_state_lost")
    assert 3 <= len(lost) <= 4
    assert len(lost) + sum(e["suppressed"] for e in lost) <= 30
    assert r.mode == 7                      # and it never stood back up


def test_a_move_goal_during_the_outage_is_refused(standing: Rig) -> None:
    r = standing
    r.feed_joint_state = False
    r.run(100)
    goal = msgs.motion_goal_t()
    goal.kind, goal.goal_id, goal.distance, goal.timeout = 1, 9, 0.5, 10.0
    r.raw(r.ch["motion_goal"], goal.encode())
    r.tick()
    assert r.last_out is not None
    done = [msgs.motion_event_t.decode(d) for _, ch, d in r.last_out.messages if ch == r.ch["motion_event"]]
    assert [(e.goal_id, e.reason) for e in done] == [(9, 4)]          # REFUSED
    assert "no joint_state" in done[0].text
    r.feed_joint_state = True
    r.run(EDAMP_HOLD_TICKS * 2 + 200)
    assert r.mode == 7


@pytest.mark.parametrize("stand", [False, True])
def test_motor_ctrl_does_not_take_over_during_the_outage(stand: bool) -> None:
    r = Rig()
    r.stand() if stand else r.run(20)
    r.feed_joint_state = False
    r.run(60)
    mode = r.mode
    frame = msgs.motor_ctrl_lcmt()
    frame.q_des = [float(x) for x in r.ctl.q]
    frame.qd_des, frame.kp_des, frame.kd_des, frame.tau_des = [0.0] * 12, [20.0] * 12, \
        [1.0] * 12, [0.0] * 12
    for _ in range(200):
        r.raw(r.ch["motor_ctrl"], frame.encode())
        r.tick()
    assert r.mode == mode == (7 if stand else 0) and not r.ctl.kernel.kp.any()


# -- tracking error --------------------------------------------------------------------
def off_target(r: Rig, joint: int, ticks: int, offset: float = 1.5) -> None:
    """`ticks` ticks on which joint_state reports `joint` `offset` rad from its target.
    A reading that far off in one tick is also an encoder jump (its own
    check, tests/test_sensor_watch.py): this watches the tracking check alone."""
    assert r.robot is not None
    r.ctl.faults.sensor_watch.c = replace(r.ctl.faults.sensor_watch.c, encoder_jump_rad=6.3)
    for _ in range(ticks):
        q = r.robot.q.copy()
        q[joint] = r.ctl.kernel.pos[joint] + offset
        r.raw(r.ch["joint_state"], joint_state(r, q))   # after the sim's: the one taken in
        r.tick()


@pytest.mark.parametrize("ticks, trips", [(1, False), (9, False), (10, True)])
def test_tracking_error_trips_after_exactly_the_configured_ticks(standing: Rig, ticks: int,
                                                                  trips: bool) -> None:
    r = standing
    s = r.cfg.safety                                              # 20 ms = 10 ticks
    assert (s.joint_state_timeout_ms, s.tracking_error_rad, s.tracking_error_ms,
            s.tracking_min_kp) == (50.0, 0.8, 20.0, 1.0)
    with capture_logs() as logs:
        off_target(r, 2, ticks)                                   # FR_knee
    assert (r.ctl.last_reported[2] == EDAMP) == trips
    assert (r.mode == 7) == trips
    if trips:
        assert r.last.mode == 7 and r.last.switch_status == EDAMP and damped(r)
        assert r.ctl.counters.last_error == (
            "FR_knee is 1.50 rad from its target for 20 ms (safety.tracking_error_rad 0.8) "
            "in RECOVERY_STAND: damping (EDAMP) until a new command")
        [line] = events(logs, "tracking_error")
        assert line["joint"] == "FR_knee" and line["error_rad"] == 1.5
        # No SPEC field carries it: motor_error and footpos_error stay 0.
        assert r.ctl.response.motor_error == [0] * 12 and r.ctl.fsm.footpos_error == 0
    else:
        r.run(200)
        assert r.mode == 12 and r.last.switch_status == DONE


def test_a_break_in_the_error_restarts_the_count(standing: Rig) -> None:
    r = standing
    for _ in range(5):
        off_target(r, 4, 9)
        r.tick()                                # one good sample in between
    assert r.mode == 12


def test_after_a_tracking_fault_heartbeats_keep_it_damped_and_a_new_command_recovers(
        standing: Rig) -> None:
    r = standing
    off_target(r, 7, 10)
    assert r.ctl.last_reported[2] == EDAMP
    r.run(EDAMP_HOLD_TICKS * 2 + 400, heartbeat=True)
    assert (r.mode, r.last.switch_status) == (7, EDAMP)
    r.send(12)
    r.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 5000)


def test_a_move_goal_in_edamp_is_refused(standing: Rig) -> None:
    r = standing
    off_target(r, 7, 10)
    goal = msgs.motion_goal_t()
    goal.kind, goal.goal_id, goal.distance, goal.timeout = 1, 11, 0.5, 10.0
    r.raw(r.ch["motion_goal"], goal.encode())
    r.tick()
    assert r.last_out is not None
    done = [msgs.motion_event_t.decode(d) for _, ch, d in r.last_out.messages if ch == r.ch["motion_event"]]
    assert [(e.goal_id, e.reason) for e in done] == [(11, 4)]          # REFUSED
    assert done[0].text == "refused: the robot is in EDAMP: a recovery stand (12) first"


@pytest.mark.parametrize("where", ["off", "damper_lie_down", "compliant_swing_leg"])
def test_limp_damped_and_compliant_joints_are_not_checked(where: str) -> None:
    r = Rig()
    joint = 4                                          # FL_hip
    if where != "off":
        r.stand()
    if where == "damper_lie_down":
        r.send(7, 1)                                   # stiff (kp 60-80) but the damper
        r.run(100)
    elif where == "compliant_swing_leg":
        r.send(21, 2, contact=0b1101, foot_pose=[0.0, 0.0, 0.05], duration=2000)  # FL swings
        r.run(100)
        assert r.ctl.kernel.kp[joint] == 0.5
    mode = r.mode
    off_target(r, joint, 50)
    assert r.mode == mode and r.ctl.last_reported[2] != EDAMP
    if where == "compliant_swing_leg":
        off_target(r, 1, 10)                           # FR_hip carries the body: checked
        assert r.ctl.last_reported[2] == EDAMP


def test_the_worst_posture_of_the_sim_does_not_trip_it(standing: Rig) -> None:
    """Mode 3 at its extreme postures is the sim's worst tracking (0.66 rad
    for 20 ms on a knee, docs/RELIABILITY.md): below the 0.8 rad default."""
    r = standing
    for rpy, z in (([0.4, 0.3, 0.6], 0.15), ([-0.4, -0.25, -0.6], 0.35)):
        r.send(3, 0, rpy_des=rpy, pos_des=[0, 0, z])
        r.run(1500)
    assert r.mode == 3 and r.last.switch_status == DONE


# -- the watch's count in C (csrc/watch.c) against the numpy it replaced ---------------------

def _tracking_reference(over: np.ndarray, q: np.ndarray, target: np.ndarray, kp: np.ndarray,
                        s: SafetyConfig, ticks: int) -> tuple[int, float] | None:
    err = np.abs(q - target)
    bad = (err > s.tracking_error_rad) & (kp >= s.tracking_min_kp)
    over += 1
    over *= bad
    if over.max() < ticks:
        return None
    joint = int(np.argmax(np.where(over >= ticks, err, -1.0)))
    return joint, float(err[joint])


def test_the_tracking_count_in_c_matches_the_numpy_rule_tick_by_tick() -> None:
    s = SafetyConfig(tracking_error_rad=0.3, tracking_error_ms=10.0, tracking_min_kp=5.0)
    watch = TrackingWatch(s, 12, 500.0)
    over = np.zeros(12, dtype=np.int64)
    rng = np.random.default_rng(5)
    q, target, kp = np.zeros(12), np.zeros(12), np.zeros(12)
    found = 0
    for tick in range(3000):
        # Errors near the bound, some joints limp: runs build up and break.
        q[:] = rng.normal(0.0, 0.3, 12)
        target[:] = rng.normal(0.0, 0.05, 12)
        kp[:] = rng.choice([0.0, 4.9, 5.0, 30.0], 12)
        if tick % 7 == 0:
            q[3] = target[3] + 0.5           # joint 3 far off for a while, stiff
            kp[3] = 30.0
        if tick % 11 == 0:                   # equals: the first is reported
            q[8], target[8], kp[8] = q[3], target[3], 30.0
        want = _tracking_reference(over, q, target, kp, s, watch.ticks)
        got = watch.check(q, target, kp)
        assert got == want, tick
        assert np.array_equal(watch.over, over)
        if got is not None:
            found += 1
            watch.reset()
            over[:] = 0
    assert found > 0                          # the comparison saw trips, not only runs


def test_the_tracking_watch_refuses_arrays_it_cannot_read() -> None:
    watch = TrackingWatch(SafetyConfig(), 12, 500.0)
    with pytest.raises(ValueError, match="12 contiguous float64"):
        watch.check(np.zeros(11), np.zeros(12), np.zeros(12))
    with pytest.raises(ValueError, match="12 contiguous float64"):
        watch.check(np.zeros(12, dtype=np.float32), np.zeros(12), np.zeros(12))
    with pytest.raises(ValueError, match="12 contiguous float64"):
        watch.check(np.zeros(24)[::2], np.zeros(12), np.zeros(12))


def test_a_command_refused_after_the_heartbeat_lapsed_says_so(standing: Rig) -> None:
    """The newcomer's trap (typing one motionctl after another): the stand's
    heartbeat stops, the robot is laid down, and the next command's refusal
    names the lapse; the next command the damper takes clears it."""
    r = standing
    r.run(600, heartbeat=False)                     # > 500 ms without a command
    lapse = "the heartbeat lapsed (no command for 500 ms), so the robot was sent to PURE_DAMPER (7)"
    assert r.mode == 7 and r.ctl.counters.timeouts == 1 and r.ctl.counters.last_error == lapse
    r.send(21, 5, pos_des=[0.0, 0.0, 0.2])
    r.run(100)
    assert r.last.switch_status == BAN_TRANS
    assert r.ctl.counters.last_error == \
        f"mode 21 refused: PURE_DAMPER cannot switch to POSE_CTRL (transition table): {lapse}"
    r.send(12)                                      # stand again: accepted, the lapse is history
    r.run(100)
    assert r.mode == 12
    r.send(13)
    r.run(100)
    assert r.ctl.counters.last_error == "mode 13 refused: mode 13 is not a known mode"


def test_a_move_goal_on_a_lying_robot_is_refused_at_once_with_the_reason(standing: Rig) -> None:
    """Not ACCEPTED and then REFUSED: the goal cannot walk from the damper,
    and its one answer says so; standing, the same goal is taken."""
    r = standing
    r.send(7, 1)
    r.run(3000)
    assert r.mode == 7
    goal = msgs.motion_goal_t()
    goal.kind, goal.goal_id, goal.distance, goal.timeout = 1, 12, 0.5, 10.0
    r.raw(r.ch["motion_goal"], goal.encode())
    r.tick()
    assert r.last_out is not None
    done = [msgs.motion_event_t.decode(d) for _, ch, d in r.last_out.messages if ch == r.ch["motion_event"]]
    assert [(e.goal_id, e.kind, e.reason) for e in done] == [(12, 1, 4)]          # GOAL_DONE REFUSED only
    assert done[0].text == ("refused: PURE_DAMPER cannot switch to LOCOMOTION (transition table): "
                            "stand the robot up first (mode 12)")
    r.send(12)
    r.run(3000)
    goal.goal_id = 13
    r.raw(r.ch["motion_goal"], goal.encode())
    r.tick()
    done = [msgs.motion_event_t.decode(d) for _, ch, d in r.last_out.messages if ch == r.ch["motion_event"]]
    assert [(e.goal_id, e.kind) for e in done] == [(13, 5)]                      # ACCEPTED
