"""The controller core on the simulated clock with the simulated robot:
life_count, timeout, queue timing, transitions, progress and response cadence."""
from typing import Any

import numpy as np
import pytest
from harness import Rig, command
from structlog.testing import capture_logs

from controller import msgs
from controller.core.fsm import BAN_TRANS

DONE, TRANSITIONING = 0, 1


@pytest.fixture
def rig():
    return Rig()


@pytest.fixture
def standing():
    r = Rig()
    r.stand()
    return r


def test_boots_off_and_reports_at_50_hz(rig):
    rig.run(200, heartbeat=False)
    assert rig.mode == 0
    assert all(r.mode == 0 and r.bar == 100 and r.switch_status == DONE for r in rig.responses)
    assert [r.tick for r in rig.responses] == list(range(0, 100, 10))


def test_off_to_pose_is_refused_with_ban_trans(rig):
    rig.run(20)
    rig.send(21, 0, duration=0)
    rig.run(100)
    assert rig.mode == 0
    assert rig.last.switch_status == BAN_TRANS and rig.last.mode == 0
    assert "refused" in rig.ctl.counters.last_error


@pytest.mark.parametrize("mode, gait", [(11, 49), (16, 8), (22, 2), (62, 70), (62, -3),
                                        (64, 15), (99, 1)])
def test_refused_modes_and_gaits_leave_the_robot_where_it_is(standing, mode, gait):
    """Unknown modes, gaits without a script or definition (locomotion 49,
    jump 8, force jump 2, two-leg 15, motion 70 refused by the config, a
    negative motion id): status 5 and no motion. (An unmapped motion id plays
    the all-in-one: tests/test_motions.py. Gait 110
    before any upload runs the on-disk default: tests/test_user_gait_files.py.)"""
    q_before = standing.ctl.kernel.pos.copy()
    standing.send(mode, gait, duration=0)
    standing.run(100)
    assert standing.mode == 12
    assert standing.last.switch_status == BAN_TRANS
    np.testing.assert_allclose(standing.ctl.kernel.pos, q_before, atol=1e-9)


def test_stand_up_progress_and_cadence(rig):
    rig.run(20)
    rig.send(12)
    rig.run(3000)
    bars = [r.bar for r in rig.responses if r.mode == 12]
    assert bars == sorted(bars), "progress never goes back"
    assert {0, 80, 99, 100} <= set(bars)
    t99 = next(r.tick for r in rig.responses if r.mode == 12 and r.bar == 99)
    t100 = next(r.tick for r in rig.responses if r.mode == 12 and r.bar == 100)
    assert t100 - t99 == 5
    # While the bar is 95-99 a response goes out every tick, plus one at the first 100.
    ticks = [r.tick for r in rig.responses if t99 <= r.tick <= t100]
    assert ticks == list(range(t99, t100 + 1))
    after = [r.tick for r in rig.responses if r.tick > t100]
    assert all(t % 10 == 0 for t in after)
    assert rig.body_height() == pytest.approx(rig.cfg.stand_height, abs=0.015)
    assert rig.last.contact == 0b1111            # all four feet carry the body
    assert rig.responses[0].contact == 0         # limp and lying at boot


def test_timeout_lies_down_exactly_500_ms_after_the_last_packet(standing):
    standing.run(300)
    last_packet_ns = standing.now_ns
    standing.tick(heartbeat=True)
    standing.run(1000, heartbeat=False)
    first7 = next(r for r in standing.responses if r.mode == 7)
    assert first7.t_ns - last_packet_ns == 500_000_000
    assert standing.ctl.counters.timeouts == 1
    # The old life_count is only a heartbeat: the damper stays.
    standing.tick(heartbeat=True)
    standing.run(500)
    assert standing.mode == 7
    # A new life_count takes over again.
    standing.send(12)
    standing.run(50)
    assert standing.mode == 12


def test_timeout_from_off_stays_off(rig):
    rig.run(20)
    rig.send(21)       # refused from OFF; the client then goes silent
    rig.run(1000, heartbeat=False)
    assert rig.mode == 0 and rig.last.mode == 0


def test_repeated_life_count_is_ignored(standing):
    msg = command(21, 5, life_count=standing.life_count, duration=1000, pos_des=[0, 0, 0.15])
    standing.raw(standing.ch["command"], msg.encode())
    standing.run(100)
    assert standing.mode == 12
    assert standing.ctl.counters.heartbeats > 0


def active_blocks(rig, ticks):
    """(mode, gait) of the active block per tick."""
    seen = []
    for _ in range(ticks):
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        b = rig.ctl.last_active
        seen.append((b.mode, b.gait_id, b.uid))
    return seen


def runs(seen: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    out: list[list[int]] = []
    for mode, gait, uid in seen:
        if out and out[-1][2] == uid:
            out[-1][3] += 1
        else:
            out.append([mode, gait, uid, 1])
    return [(m, g, n) for m, g, _, n in out]


def test_queued_sequence_runs_in_order_with_exact_durations(standing):
    standing.send(21, 0, duration=300, rpy_des=[0, 0.2, 0])
    standing.tick()
    standing.send(21, 0, duration=200, rpy_des=[0, -0.2, 0])
    standing.tick()
    standing.send(21, 5, duration=500, pos_des=[0, 0, 0.2])
    seen = runs(active_blocks(standing, 900))
    # The first block started two ticks before the recording began.
    assert seen[0][:2] == (21, 0) and seen[0][2] == 150 - 2
    assert seen[1] == (21, 0, 100)
    assert seen[2] == (21, 5, 250)
    assert seen[3][:2] == (21, 3)   # the pose-hold filler
    assert standing.last.switch_status == DONE


def test_duration_zero_preempts_a_queued_sequence(standing):
    for _ in range(3):
        standing.send(21, 0, duration=1000, pos_des=[0, 0, 0.01])
        standing.tick()
    standing.run(100)
    standing.send(7, 1)
    standing.run(20)
    assert standing.mode == 7 and len(standing.ctl.queue) == 1


def test_relative_pose_is_relative(standing):
    standing.send(21, 0, duration=0)
    standing.run(10)
    start = standing.ctl.kernel.pos.copy()
    standing.send(21, 0, duration=500, rpy_des=[0, 0.3, 0])   # head up ...
    standing.tick()
    standing.send(21, 0, duration=300, rpy_des=[0, -0.3, 0])  # ... and "down", queued
    standing.run(498)
    pitched = standing.ctl.kernel.pos.copy()
    standing.run(400)
    assert np.abs(pitched - start).max() > 0.1
    np.testing.assert_allclose(standing.ctl.kernel.pos, start, atol=1e-6)


def test_relative_pose_moves_at_a_constant_rate_and_reports_progress(standing):
    standing.send(21, 0, duration=400, pos_des=[0, 0, -0.04])
    z = []
    bars = []
    for _ in range(200):
        standing.tick()
        feet = standing.ctl.kin.forward(standing.ctl.kernel.pos.reshape(4, 3))
        z.append(feet[:, 2].mean())
        bars.append(standing.ctl.last_reported[3])
    steps = np.diff(z)
    np.testing.assert_allclose(steps, 0.04 / 200, rtol=1e-6)
    assert bars[99] == 50 and bars[-1] == 100


def test_compliant_swing_leg_gains(standing):
    standing.send(21, 2, duration=400, contact=0b1110, foot_pose=[0.03, 0, 0.05])
    standing.run(50)
    kp, kd = standing.ctl.kernel.kp, standing.ctl.kernel.kd
    np.testing.assert_allclose(kp[:3], [40, 0.5, 0.5])     # FR lifted: compliant
    np.testing.assert_allclose(kd[:3], [2, 0.05, 0.05])
    np.testing.assert_allclose(kp[3:], [40, 30, 30] * 3)   # stance legs: pose gains
    assert standing.last.gait_id == 2


def test_absolute_height_is_clamped_and_reached(standing):
    standing.send(21, 5, duration=1000, pos_des=[0, 0, 0.5])   # beyond 0.30: clamped
    standing.run(1100)
    q = standing.ctl.kernel.pos.reshape(4, 3)
    assert standing.ctl.kin.body_height(q) == pytest.approx(0.30, abs=1e-3)
    standing.send(21, 5, duration=1000, pos_des=[0, 0, 0.15])
    standing.run(1500)   # it waits for the 400 ms pose-hold filler ahead of it
    q = standing.ctl.kernel.pos.reshape(4, 3)
    assert standing.ctl.kin.body_height(q) == pytest.approx(0.15, abs=1e-6)
    assert standing.body_height() == pytest.approx(0.15, abs=0.02)   # the sim followed


def test_active_lie_down_reaches_the_lie_pose_in_1200_ms(standing):
    standing.send(7, 1)
    standing.tick()
    start = standing.ctl.tick
    standing.run_until(lambda r: r.last.mode == 7 and r.last.bar == 100, 2000)
    assert standing.ctl.tick - start == 600
    np.testing.assert_allclose(standing.ctl.kernel.pos, standing.cfg.lie_pose, atol=1e-9)
    standing.run(900)
    assert standing.ctl.kernel.kp.max() == 0.0 and standing.ctl.kernel.kd.max() > 0.0


def test_passive_damper_progress(standing):
    standing.send(7, 0)
    standing.tick()
    bars = {}
    for _ in range(2100):
        standing.tick(heartbeat=standing.ctl.tick % 50 == 0)
        bars[standing.ctl.fsm.state.count] = standing.ctl.last_reported[3]
    assert bars[1500] == 50 and bars[1999] == 66 and bars[2000] == 100
    assert standing.ctl.kernel.kp.max() == 0.0


def test_nan_command_is_rejected_and_counted(standing):
    q_before = standing.ctl.kernel.pos.copy()
    standing.send(21, 0, duration=500, rpy_des=[0, float("inf"), 0])
    standing.run(100)
    c = standing.ctl.counters
    assert c.commands_rejected == 1 and "rpy_des" in c.last_error
    np.testing.assert_allclose(standing.ctl.kernel.pos, q_before, atol=1e-9)


@pytest.mark.parametrize("data", [
    b"",
    b"\x00" * 7,
    command(12, life_count=7).encode()[:50],                 # truncated
    command(12, life_count=7).encode() + b"\x00" * 100,      # oversized
    msgs.robot_control_response_lcmt().encode(),             # wrong fingerprint
    bytes(range(256)) * 4,
])
def test_bad_packets_are_dropped_and_counted(standing, data):
    before = standing.ctl.counters.packets_rejected
    standing.raw(standing.ch["command"], data)
    standing.raw(standing.ch["joint_state"], data)
    standing.raw(standing.ch["motor_ctrl"], data)
    standing.run(10)
    assert standing.ctl.counters.packets_rejected == before + 3
    assert standing.mode == 12


def test_joint_state_with_the_wrong_joint_count_is_rejected(standing):
    js = msgs.joint_state_t()
    js.num_joints = 3
    js.position, js.velocity, js.torque = [0.0] * 3, [0.0] * 3, [0.0] * 3
    standing.raw(standing.ch["joint_state"], js.encode())
    standing.tick()
    assert standing.ctl.counters.packets_rejected == 1


def test_outputs_stay_finite_and_inside_limits_through_a_session(rig):
    rig.record_joints = True
    rig.stand()
    steps: list[tuple[int, int, int, dict[str, Any]]] = [
        (21, 0, 400, dict(rpy_des=[0.5, 0.5, 0.5])), (21, 5, 300, dict(pos_des=[0, 0, 0.1])),
        (3, 0, 0, dict(rpy_des=[1, 1, 1], pos_des=[0, 0, 0.4])),
        (21, 0, 200, dict(foot_pose=[0.3, 0.3, 0.3], contact=0b1101)), (7, 1, 0, {})]
    for m, g, d, kw in steps:
        rig.send(m, g, duration=d, **kw)
        rig.run(800)
    pos = np.array([j.position for j in rig.joint_cmds])
    assert np.isfinite(pos).all()
    assert (pos >= rig.cfg.q_min - 1e-6).all() and (pos <= rig.cfg.q_max + 1e-6).all()


def test_posture_absolute_is_rate_limited_and_clamped(standing):
    standing.send(3, 0, duration=0, rpy_des=[0, 1.0, 0], pos_des=[0, 0, 0.24])
    standing.run(4)
    assert standing.mode == 3
    behaviour = standing.ctl.fsm.state
    pitches = []
    for _ in range(400):
        standing.tick(heartbeat=standing.ctl.tick % 50 == 0)
        pitches.append(behaviour.pose[4])
    rates = np.diff(pitches) / 0.002
    assert rates.max() <= 2.0 + 1e-9
    assert np.diff(rates).max() / 0.002 <= 10.0 + 1e-6
    assert pitches[-1] == pytest.approx(0.30)


def test_posture_incremental_offsets_accumulate(standing):
    standing.send(3, 1, duration=200, pos_des=[0, 0, -0.02])
    standing.tick()
    standing.send(3, 1, duration=200, pos_des=[0, 0, -0.02])
    standing.run(1000)
    behaviour = standing.ctl.fsm.state
    assert behaviour.pose[2] == pytest.approx(-0.04)


def motor_msg(q, kp=20.0, kd=1.0):
    m = msgs.motor_ctrl_lcmt()
    m.q_des = list(q)
    m.qd_des = [0.0] * 12
    m.kp_des = [kp] * 12
    m.kd_des = [kd] * 12
    m.tau_des = [0.0] * 12
    return m.encode()


def test_motor_ctrl_entry_wait_mutation_limit_and_loss(rig):
    rig.run(20)
    zero = motor_msg(rig.robot.q, kp=0.0, kd=0.0)
    for i in range(1300):
        rig.raw(rig.ch["motor_ctrl"], zero)
        rig.tick()
        if i == 1000:   # inside the 2.5 s entry wait: high damping, not limp
            np.testing.assert_allclose(rig.ctl.kernel.kd, 4.0)
    behaviour = rig.ctl.fsm.state
    assert rig.mode == 15 and behaviour.err_flag & 0b10 == 0  # the entry wait is over
    # Half a radian from the measured angles, inward: inside the limits, but
    # beyond the mutation limit of every joint.
    q = rig.robot.q.copy()
    delta = np.zeros(12)
    delta[0::3] = -0.5 * np.sign(q[0::3])
    delta[1::3] = 0.5
    delta[2::3] = -0.5
    rig.raw(rig.ch["motor_ctrl"], motor_msg(q + delta))
    previous = rig.ctl.kernel.pos.copy()
    rig.tick()
    limit = np.tile(np.radians([8, 10, 12]), 4)
    # The target is pulled to within the mutation limit of the measured angle;
    # the output then approaches it no faster than the per-tick step limit.
    np.testing.assert_allclose(rig.ctl.kernel.q1 - rig.ctl.q, np.clip(delta, -limit, limit),
                               atol=1e-9)
    step = rig.cfg.v_max * rig.cfg.dt
    assert (np.abs(rig.ctl.kernel.pos - previous) <= step + 1e-9).all()
    assert behaviour.err_flag & 0b11100 == 0b11100
    # motor_ctrl stops while a client keeps robot_control_cmd alive with mode -1
    # heartbeats: first the stale-command scaling, then high damping.
    heartbeat = command(-1, life_count=0).encode()
    for i in range(300):
        if i % 50 == 0:
            rig.raw(rig.ch["command"], heartbeat)
        rig.tick()
        if i == 100:
            assert behaviour.err_flag & 0b11 == 0b01
    assert rig.mode == 15 and behaviour.err_flag & 0b10
    np.testing.assert_allclose(rig.ctl.kernel.kd, 4.0)
    assert rig.ctl.kernel.kp.max() == 0.0
    # With the heartbeat gone too, the timeout damper takes over.
    rig.run(600, heartbeat=False)
    assert rig.mode == 7


def test_motor_ctrl_is_ignored_when_mode_15_is_refused(standing):
    standing.raw(standing.ch["motor_ctrl"], motor_msg(standing.robot.q))
    standing.run(10)
    assert standing.mode == 12   # 12 -> 15 is not in the table
    assert "motor_ctrl ignored" in standing.ctl.counters.last_error


def test_estop_becomes_off_after_eleven_ticks(standing):
    standing.send(21, 0)
    standing.run(10)
    from controller.behaviours.base import TickContext
    c = standing.ctl
    c.fsm.estop(TickContext(c.tick, 0.0, c.q, c.qd, c.tau, c.last_active))
    statuses = []
    for _ in range(20):
        standing.tick()
        statuses.append((c.last_reported[2], c.last_active.mode))
    assert statuses[0] == (2, 21)
    assert (0, 0) in statuses and statuses.index((0, 0)) in (11, 12)


def test_shutdown_commands_the_damper(standing):
    standing.ctl.shutdown()
    standing.run(10)
    assert standing.mode == 7
    assert standing.ctl.kernel.kp.max() == 0.0


@pytest.mark.parametrize("text, result", [
    ("# Gait Def\n[[section]]\ncontact = [1, 0, 0, 1]\nduration = 5\n", 0),
    ("# Gait Params\n[[step]]\nmode = 11\ngait_id = 110\nduration = 1000\n", 0),
    ("hello", 1),                                          # neither header
    ("# Gait Params\n# nothing else\n", 1),               # no [[step]] (SPEC §11)
    ("# Gait Params\n[[step]]\nmode = 11\nduration = 0\n", 1),  # never ends
    ("# Gait Params\n[[step]\n", 1),                      # not TOML
])
def test_user_gait_uploads_are_answered_and_bad_ones_refused(rig, text, result):
    fs = msgs.file_send_lcmt()
    fs.data = text
    rig.raw(rig.ch["user_gait_file"], fs.encode())
    rig.tick()
    data = rig.last_out.get(rig.ch["user_gait_result"])
    assert msgs.file_recv_lcmt.decode(data).result == result
    stored = text if result == 0 else None
    assert rig.ctl.gaits.user_gait.get("def" if "Def" in text else "params") == stored
    assert (rig.ctl.counters.commands_rejected == 1) == (result == 1)


def test_foot_outside_workspace_in_posture_gives_sticky_edamp(standing):
    standing.send(3, 0, pos_des=[0, 0, 0.24])
    standing.run(20)
    assert standing.mode == 3
    js = msgs.joint_state_t()
    js.num_joints = 12
    js.velocity, js.torque = [0.0] * 12, [0.0] * 12
    # Feet stretched far forward (|x| > L sin 60), reached in steps a joint
    # can make (a one-tick leap is an encoder jump, a fault of its own).
    start, end = standing.ctl.q.copy(), np.array([0.0, -1.57, 0.55] * 4)
    steps = int(np.ceil(np.abs(end - start).max() / 0.2))
    with capture_logs() as logs:
        for k in range(1, steps + 1):
            js.position = (start + (end - start) * k / steps).tolist()
            standing.raw(standing.ch["joint_state"], js.encode())
            standing.tick()
            if standing.ctl.last_reported[2] == 3:
                break
    c = standing.ctl
    assert c.last_reported[2] == 3 and standing.mode == 7           # EDAMP, damper state
    assert c.fsm.footpos_error & 0b001_001_001_001 == 0b001_001_001_001   # x bit of every leg
    # The stop says why, once, and names each foot (rule 6: a clear reason).
    stops = [e for e in logs if e["event"] == "safety_stop"]
    assert len(stops) == 1 and stops[0]["status"] == 3
    assert all(f"{leg} x" in stops[0]["reason"] for leg in c.cfg.legs)
    assert c.counters.last_error.startswith("EDAMP: foot outside its workspace")
    standing.run(60)
    assert c.last_active.mode == 7          # the §3.5 override replaced the 3 command
    standing.run(3200)                      # past the 1550-tick hold: still EDAMP while 7
    assert c.last_reported[2] == 3 and standing.mode == 7
    standing.send(12)
    standing.run(10)
    assert standing.mode == 12 and c.last_reported[2] != 3


def test_motiond_help_describes_the_options():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "controller.cli.motiond", "--help"],
                         capture_output=True, text=True, check=True).stdout
    for option in ("--config", "--sim", "--log-level", "--ticks"):
        assert option in out


@pytest.mark.parametrize("first", [
    command(-1, life_count=5),
    command(12, life_count=-1),
    command(12, life_count=3, vel_des=[float("nan"), 0, 0]),
])
def test_a_first_packet_that_queues_nothing_leaves_the_robot_off(rig, first):
    rig.raw(rig.ch["command"], first.encode())
    rig.tick()
    rig.run(100)
    assert rig.mode == 0 and rig.last.mode == 0


def test_edamp_reports_3_even_after_a_refusal(standing):
    standing.send(3, 0, pos_des=[0, 0, 0.24])
    standing.run(20)
    standing.send(16, 8)          # no such jump: refused, status 5
    standing.run(20)
    assert standing.last.switch_status == BAN_TRANS
    js = msgs.joint_state_t()
    js.num_joints = 12
    js.position = [0.0, -1.57, 0.55] * 4
    js.velocity, js.torque = [0.0] * 12, [0.0] * 12
    standing.raw(standing.ch["joint_state"], js.encode())
    standing.run(100)
    assert standing.mode == 7 and standing.ctl.last_reported[2] == 3
    assert standing.ctl.last_active.mode == 7      # the §3.5 override fired


def max_step(rig, ticks):
    """The largest change of any stiff joint's target between two ticks. A limp
    joint's target (kp 0: OFF, the damper) follows the measurement and drives
    nothing; e.g. a command the legs cannot follow ends in the damper by the
    tracking-error check (docs/RELIABILITY.md)."""
    prev = rig.ctl.kernel.pos.copy()
    worst = 0.0
    for _ in range(ticks):
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        stiff = rig.ctl.kernel.kp > 0
        worst = max(worst, float(np.abs(rig.ctl.kernel.pos - prev)[stiff].max(initial=0.0)))
        prev = rig.ctl.kernel.pos.copy()
    return worst


def test_posture_switches_between_absolute_and_incremental_without_a_jump(standing):
    standing.send(3, 0, duration=1000, rpy_des=[0, 0.25, 0], pos_des=[0, 0, 0.18])
    assert max_step(standing, 700) < 0.03          # ... and into the 3/1 filler
    assert standing.ctl.last_active.gait_id == 1
    standing.send(3, 1, duration=500, pos_des=[0, 0, -0.02])
    standing.run(600)
    standing.send(3, 0, pos_des=[0, 0, 0.24])
    assert max_step(standing, 600) < 0.03


def test_a_refused_request_stops_the_pose_where_it_is(standing):
    standing.send(21, 5, duration=2000, pos_des=[0, 0, 0.15])
    standing.run(400)
    standing.send(11, 49)       # no such gait: refused
    standing.run(10)
    frozen = standing.ctl.kernel.pos.copy()
    standing.run(1000)
    assert standing.last.switch_status == BAN_TRANS
    np.testing.assert_allclose(standing.ctl.kernel.pos, frozen, atol=1e-12)


@pytest.mark.parametrize("mode, gait, duration, fields", [
    (21, 5, 2, dict(pos_des=[0, 0, 0.10])),
    (21, 0, 2, dict(rpy_des=[0.4, 0.4, 0.4])),
    (21, 0, 0, dict(rpy_des=[0, 2e6, 0])),
    (21, 0, 0, dict(pos_des=[0, 0, -2e5])),
    (21, 0, 400, dict(ctrl_point=[1e4, 0, 0], rpy_des=[0, 0, 0.001])),
])
def test_wild_pose_commands_never_make_a_joint_target_jump(standing, mode, gait, duration, fields):
    standing.send(mode, gait, duration=duration, **fields)
    assert max_step(standing, 400) <= standing.cfg.v_max.max() * standing.cfg.dt + 1e-9
    pos = standing.ctl.kernel.pos
    assert np.isfinite(pos).all()
    assert (pos >= standing.cfg.q_min).all() and (pos <= standing.cfg.q_max).all()
