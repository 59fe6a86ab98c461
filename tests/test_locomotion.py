"""Mode 11: the gait generator and locomotion through the whole controller.

Generator-level tests run the generator and the leg IK directly (fast, every
gait); controller-level tests use the in-process rig with the simulated robot
on the fake clock and look at what the daemon publishes.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from harness import Rig
from numpy.typing import ArrayLike

from controller import msgs
from controller.motion.gait import GaitCommand, GaitGenerator
from controller.motion.gait_table import GaitError, load_gait, load_gaits
from controller.robot.config import Geometry, load_config
from controller.robot.kinematics import QuadrupedKinematics

CFG = load_config()
assert isinstance(CFG.geometry, Geometry) and CFG.locomotion is not None    # the default: the quadruped
KIN = QuadrupedKinematics(CFG.geometry)
LOCO = CFG.locomotion
GAITS = load_gaits(LOCO.gaits_dir, 4)
STEPPING = sorted(g for g, d in GAITS.items() if not d.stand)
STAND_Q = KIN.inverse(KIN.stance_feet(CFG.stand_height, CFG.stand_com_x))[0]
TRANSITIONING, BAN_TRANS = 1, 5


def generator() -> GaitGenerator:
    gen = GaitGenerator(KIN, LOCO, CFG.dt, GAITS)
    gen.start(STAND_Q, GAITS[1])
    return gen


def walk(gen: GaitGenerator, gait_id: int, v: ArrayLike, ticks: int,
         step_height: float = 0.05) -> list[np.ndarray]:
    cmd = GaitCommand(GAITS[gait_id], np.asarray(v, dtype=float), step_height, 0.0)
    return [gen.step(cmd) for _ in range(ticks)]


def test_every_supported_gait_id_has_a_definition():
    expected = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 20, 21, 22, 23, 24, 25, 26, 27, 30, 31}
    assert set(GAITS) == expected


@pytest.mark.parametrize("gait_id", STEPPING)
def test_contact_pattern_matches_the_definition(gait_id):
    """Steady state: each leg's stance share is its duty and each leg lands
    at its offset after FR, to the tick."""
    gait = GAITS[gait_id]
    gen = generator()
    v = 0.3 * np.minimum(-gait.window_min, gait.window_max) * [1, 0, 0]
    walk(gen, gait_id, v, 3 * gen.cycle_ticks + 200)   # settle into the timing
    cycle = gen.cycle_ticks
    timing = gen.timing
    assert timing is not None
    swinging: list[np.ndarray] = []
    landed: list[list[int]] = [[] for _ in range(4)]
    for k in range(2 * cycle):
        before = gen.swinging.copy()
        walk(gen, gait_id, v, 1)
        swinging.append(gen.swinging.copy())
        for lander in np.flatnonzero(before & ~gen.swinging):
            landed[lander].append(k)
    duty = 1.0 - np.mean(swinging, axis=0)
    np.testing.assert_allclose(duty, timing.duty(), atol=1.0 / cycle)
    seg = gen.segment_ticks
    first_stance = [int(np.flatnonzero(timing.contact[:, leg] & (timing.run_start[:, leg] == 0))[0])
                    for leg in range(4)]
    for leg in range(4):
        expected = (first_stance[leg] - first_stance[0]) * seg
        assert (landed[leg][0] - landed[0][0]) % cycle == expected % cycle


@pytest.mark.parametrize("gait_id", STEPPING)
def test_swing_apex_is_the_step_height(gait_id):
    """Foot lift measured by forward kinematics of the IK joint targets."""
    gait = GAITS[gait_id]
    gen = generator()
    v = 0.2 * gait.window_max * [1, 0, 0]
    walk(gen, gait_id, v, 2 * gen.cycle_ticks + 200, step_height=0.05)
    ground = -(gen.height - KIN.foot_radius)
    lift = []
    for feet in walk(gen, gait_id, v, 2 * gen.cycle_ticks, step_height=0.05):
        q, clipped = KIN.inverse(feet)
        assert not clipped.any()
        lift.append(KIN.forward(q)[:, 2] - ground)
    apex = np.max(lift, axis=0)
    expected = gait.step_height(0.05)
    np.testing.assert_allclose(apex, expected, rtol=0.05)


def test_a_foot_that_sinks_into_the_floor_rises_out_of_it_before_its_stride():
    """geometry.foot_sink (a soft foot, Menagerie's Go1): the swing's apex is
    over the floor's surface, the sink above the stance feet, and the foot is
    out of the floor by 15 % of its swing, when its stride has moved some
    3 %; it sinks back over the last 15 %, landing where it would have."""
    sink = 0.015
    geometry = CFG.geometry
    assert isinstance(geometry, Geometry)
    kin = QuadrupedKinematics(replace(geometry, foot_sink=sink))
    gen = GaitGenerator(kin, LOCO, CFG.dt, GAITS)
    gen.start(kin.inverse(kin.stance_feet(CFG.stand_height, CFG.stand_com_x))[0], GAITS[1])
    v = [0.3, 0.0, 0.0]
    walk(gen, 3, v, 2 * gen.cycle_ticks + 200, step_height=0.05)
    ground = -(gen.height - kin.foot_radius)
    shares, lifts, strides = [], [], []
    for _ in range(gen.cycle_ticks):
        feet = walk(gen, 3, v, 1, step_height=0.05)[0]
        if gen.swinging[0]:
            shares.append(gen.swing_tick[0] / gen.swing_ticks[0])
            lifts.append(feet[0, 2] - ground)
            start, end = gen.lift[0, 0], gen.landing[0, 0]
            strides.append((feet[0, 0] - start) / (end - start))
    share, lift, stride = np.array(shares), np.array(lifts), np.array(strides)
    assert share.min() < 0.02 and share.max() > 0.98             # one whole swing
    assert max(lift) - sink == pytest.approx(GAITS[3].step_height(0.05), rel=0.05)
    out = (share >= 0.15) & (share <= 0.85)
    assert np.all(lift[out] >= sink - 1e-9)
    first_out = int(np.flatnonzero(out)[0])
    assert stride[first_out] < 0.04
    assert lift[-1] < 0.1 * sink and lift[0] < 0.1 * sink       # lifts off and lands on the stance height


def test_step_height_rule_ratio_and_clamps():
    assert GAITS[3].step_height(0.05) == pytest.approx(0.05)
    assert GAITS[3].step_height(0.2) == pytest.approx(0.06)
    assert GAITS[5].step_height(0.05) == pytest.approx(0.06)      # ratio 1.2
    assert GAITS[5].step_height(0.0) == pytest.approx(0.03)       # min 0.03
    assert GAITS[5].step_height(1.0) == pytest.approx(0.072)      # 0.06 x 1.2
    assert GAITS[7].step_height(0.0) == pytest.approx(0.005)      # bound
    assert GAITS[2].step_height(0.0) == pytest.approx(0.015)      # pronk


@pytest.mark.parametrize("gait_id, v, expected", [
    (3, [5.0, 0, 0], [1.2, 0, 0]),
    (3, [-5.0, 0, 0], [-1.2, 0, 0]),
    (6, [1.0, 0, 0], [0.2, 0, 0]),
    (27, [0, 5.0, 0], [0, 0.2, 0]),
    (27, [0, 0, -9.0], [0, 0, -1.3]),
    (3, [5.0, 5.0, 0], [1.2, 0.2, 0]),          # full vx halves the vy allowance
])
def test_commands_are_clamped_to_the_gait_window(gait_id, v, expected):
    gen = generator()
    walk(gen, gait_id, v, 2500)
    np.testing.assert_allclose(gen.v, expected, atol=1e-9)


def test_velocity_is_rate_limited_by_the_gait_accelerations():
    gen = generator()
    walk(gen, 3, [1.0, 0, 0], 1)
    dv = []
    for _ in range(100):
        before = gen.v[0]
        walk(gen, 3, [1.0, 0, 0], 1)
        dv.append(gen.v[0] - before)
    assert max(dv) == pytest.approx(1.0 * CFG.dt)                 # +1 m/s^2
    walk(gen, 3, [1.0, 0, 0], 1000)
    before = gen.v[0]
    walk(gen, 3, [0.0, 0, 0], 1)
    assert before - gen.v[0] == pytest.approx(2.0 * CFG.dt)       # -2 m/s^2


@pytest.mark.parametrize("gait_id", STEPPING)
def test_random_commands_across_the_window_respect_joint_limits(gait_id):
    """Property test: seeded random velocities (corners and interior), step
    heights and pitches; every IK target reachable, inside the joint limits,
    and no joint faster than its velocity limit."""
    gait = GAITS[gait_id]
    rng = np.random.default_rng(gait_id)
    gen = generator()
    previous = None
    for k in range(2000):
        if k % 200 == 0:
            if k % 400 == 0:
                v = np.where(rng.random(3) < 0.5, gait.window_min, gait.window_max)
            else:
                v = rng.uniform(gait.window_min, gait.window_max)
            cmd = GaitCommand(gait, v, rng.uniform(0.0, 0.1), rng.uniform(-0.4, 0.4))
        q, clipped = KIN.inverse(gen.step(cmd))
        q = q.reshape(-1)
        assert not clipped.any(), f"tick {k}: a foot out of reach"
        assert np.all(q >= CFG.q_min) and np.all(q <= CFG.q_max), f"tick {k}: {q}"
        if previous is not None:
            assert np.all(np.abs(q - previous) / CFG.dt <= CFG.v_max), f"tick {k}"
        previous = q


def test_a_bad_gait_file_names_the_file_and_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: 40\nperiod: 10\nstance: 12\noffsets: [0, 5, 5, 0]\n"
                   "window: {min: [-1, -1, -1], max: [1, 1, 1]}\n")
    with pytest.raises(GaitError, match=r"bad.yaml: stance"):
        load_gait(bad, 4)


# -- through the controller -------------------------------------------------------
@pytest.fixture
def walking() -> Rig:
    rig = Rig(record_joints=True)
    rig.stand()
    return rig


@pytest.fixture
def walking_without_imu() -> Rig:
    """On the joint-space sim, which has no IMU: the odometry rule for a
    robot without one is exact integration of the commanded, limited
    velocity, and these tests hold it to that. The odometry from the IMU and
    the legs is tested in physics in test_estimator.py."""
    rig = Rig(record_joints=True, sim="joint")
    rig.stand()
    return rig


def odometry(rig: Rig) -> msgs.localization_lcmt | None:
    assert rig.last_out is not None
    data = rig.last_out.get(rig.ch["global_to_robot"])
    return msgs.localization_lcmt.decode(data) if data is not None else None


def test_ten_seconds_at_0_3_m_s_give_3_m_of_odometry(walking_without_imu):
    rig = walking_without_imu
    rig.send(11, 3, vel_des=[0.3, 0, 0])
    rig.run(2)
    start = None
    samples = []
    for _ in range(5000):                       # 10 s
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        msg = odometry(rig)
        if msg is not None:
            start = start or msg
            samples.append(msg)
    end = samples[-1]
    assert start is not None
    travelled = end.xyz[0] - start.xyz[0]
    assert travelled == pytest.approx(3.0, rel=0.02)
    assert abs(end.xyz[1]) < 1e-6 and abs(end.rpy[2]) < 1e-6
    assert end.vBody[0] == pytest.approx(0.3, abs=1e-6)
    # 50 Hz: one message every 10 ticks (20 ms of robot time)
    assert len(samples) == 500
    assert end.timestamp - start.timestamp == 499 * 20_000_000


def test_trot_forward_while_turning_lifts_feet_and_reports_the_gait(walking):
    rig = walking
    rig.send(11, 3, vel_des=[0.4, 0, 0.3], step_height=[0.05, 0.05])
    rig.run(3000)
    assert (rig.last.mode, rig.last.gait_id, rig.last.switch_status) == (11, 3, 0)
    gen = rig.ctl.fsm.state.gen
    np.testing.assert_allclose(gen.v, [0.4, 0, 0.3], atol=1e-9)
    q = np.array([j.position for j in rig.joint_cmds[-300:]])
    z = np.array([KIN.forward(row.reshape(4, 3))[:, 2] for row in q])
    lift = z.max(axis=0) - z.min(axis=0)
    np.testing.assert_allclose(lift, 0.05, rtol=0.05)
    # The simulated joints follow the command.
    assert np.max(np.abs(rig.robot.q - rig.ctl.kernel.pos)) < 0.15


def test_gait_changes_only_at_a_cycle_boundary(walking):
    rig = walking
    rig.send(11, 3, vel_des=[0.1, 0, 0])
    rig.run(1000)
    gen = rig.ctl.fsm.state.gen
    rig.send(11, 6, vel_des=[0.1, 0, 0])        # walk
    statuses = []
    for _ in range(400):
        before = gen.gait.id
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        statuses.append((rig.ctl.last_reported[1], rig.ctl.last_reported[2]))
        if gen.gait.id != before:
            assert gen.boundary and gen.gait.id == 6
            break
    else:
        pytest.fail("the gait never switched")
    assert statuses[-1] == (6, 0)
    # Until the switch the response showed the old gait, TRANSITIONING.
    assert all(s == (3, TRANSITIONING) for s in statuses[1:-1])


def test_switching_to_a_narrower_gait_slows_down_first(walking):
    rig = walking
    rig.send(11, 3, vel_des=[0.8, 0, 0])
    rig.run(1500)
    gen = rig.ctl.fsm.state.gen
    rig.send(11, 6, vel_des=[0.8, 0, 0])
    rig.run_until(lambda r: gen.gait.id == 6, 3000)
    assert gen.v[0] <= 0.2 + 1e-9                 # inside the walk's window at the switch


def test_leaving_locomotion_slows_down_and_finishes_the_cycle(walking):
    rig = walking
    rig.send(11, 3, vel_des=[0.5, 0, 0])
    rig.run(1500)
    loco = rig.ctl.fsm.state
    gen = loco.gen
    rig.send(12)
    slow_since = None
    for k in range(3000):
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        if rig.mode != 11:
            break       # handed over on this tick
        assert rig.ctl.last_reported[2] == TRANSITIONING
        if slow_since is None and gen.speed() <= LOCO.leave_speed:
            slow_since = k
    assert rig.mode == 12
    # The generator's state on the hand-over tick:
    assert gen.speed() <= LOCO.leave_speed and gen.boundary and not gen.airborne().any()
    assert gen.gait.id == LOCO.leave_gait
    assert slow_since is not None
    assert k - slow_since >= gen.cycle_ticks       # at least one more full cycle
    rig.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 3000)


def test_a_timed_walk_is_followed_by_the_stand_filler(walking):
    rig = walking
    rig.send(11, 3, duration=1000, vel_des=[0.3, 0, 0])
    rig.run(1000)
    assert rig.last.bar >= 95
    rig.run(1500)
    gen = rig.ctl.fsm.state.gen
    assert rig.ctl.queue.active.gait_id == 1 and rig.last.gait_id == 1
    assert (rig.mode, rig.last.switch_status) == (11, 0)
    assert np.all(gen.v == 0.0) and not gen.swinging.any()


def test_a_refused_gait_while_walking_stops_the_robot(walking):
    rig = walking
    rig.send(11, 3, vel_des=[0.4, 0, 0])
    rig.run(1000)
    rig.send(11, 49, vel_des=[0.4, 0, 0])
    rig.run(1500)
    assert rig.last.switch_status == BAN_TRANS and rig.mode == 11
    assert np.all(np.abs(rig.ctl.fsm.state.gen.v) < 1e-9)


def test_vertical_leg_bit_lowers_the_body_and_pitch_is_clamped(walking):
    rig = walking
    rig.send(11, 3, vel_des=[0.1, 0, 0], rpy_des=[0, 0.5, 0], value=0x2)
    rig.run(2000)
    gen = rig.ctl.fsm.state.gen
    assert gen.height == pytest.approx(LOCO.vertical_leg_height)
    assert gen.pitch == pytest.approx(LOCO.pitch_limit)


def test_variable_frequency_trot_picks_its_timing_by_speed(walking):
    rig = walking
    rig.send(11, 26, vel_des=[0.1, 0, 0])
    rig.run(2000)
    gen = rig.ctl.fsm.state.gen
    slow = gen.timing.segments
    rig.send(11, 26, vel_des=[1.2, 0, 0])
    rig.run(4000)
    assert gen.timing.segments < slow
    assert rig.last.gait_id == 26 and rig.last.switch_status == 0
    assert gen.v[0] == pytest.approx(1.2)


# -- motion goals -------------------------------------------------------------------
def goal(kind: int, goal_id: int, **fields: float) -> bytes:
    msg = msgs.motion_goal_t()
    msg.kind, msg.goal_id = kind, goal_id
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg.encode()


def run_goal(rig: Rig, data: bytes, max_ticks: int) -> list[msgs.motion_event_t]:
    rig.raw(rig.ch["motion_goal"], data)
    events: list[msgs.motion_event_t] = []
    for _ in range(max_ticks):
        rig.tick()
        assert rig.last_out is not None
        for _, channel, payload in rig.last_out.messages:
            if channel == rig.ch["motion_event"]:
                events.append(msgs.motion_event_t.decode(payload))
        if any(e.kind == 1 for e in events):
            break
    return events


def test_a_move_distance_goal_stops_on_the_target(walking_without_imu):
    rig = walking_without_imu
    start = rig.ctl.odom.x
    events = run_goal(rig, goal(1, 41, distance=1.0, timeout=20.0), 10000)
    assert [(e.goal_id, e.kind) for e in events] == [(41, 5), (41, 1)]
    assert events[-1].reason == 1                                   # REACHED
    rig.run(1000, heartbeat=False)                                  # let it brake fully
    assert rig.ctl.odom.x - start == pytest.approx(1.0, abs=0.02)
    assert abs(rig.ctl.odom.y) < 1e-6


def test_a_move_that_cannot_arrive_in_time_reports_timeout(walking):
    events = run_goal(walking, goal(1, 42, distance=5.0, timeout=2.0), 3000)
    assert events[-1].kind == 1 and events[-1].reason == 2          # TIMEOUT
    assert 0.2 < events[-1].value < 5.0


def test_a_goal_from_the_lying_robot_is_refused():
    rig = Rig()
    rig.run(20)
    events = run_goal(rig, goal(2, 43, speed=0.2, rotation=0.0, timeout=5.0), 500)
    assert events[-1].kind == 1 and events[-1].reason == 4          # REFUSED
    assert rig.mode == 0


def test_a_command_preempts_a_running_goal(walking):
    rig = walking
    rig.raw(rig.ch["motion_goal"], goal(2, 44, speed=0.2, rotation=0.0, timeout=30.0))
    rig.run(1000)
    rig.send(11, 1)
    seen = []
    for _ in range(5):
        rig.tick()
        for _, channel, payload in rig.last_out.messages:
            if channel == rig.ch["motion_event"]:
                seen.append(msgs.motion_event_t.decode(payload))
    assert [(e.goal_id, e.kind, e.reason) for e in seen] == [(44, 1, 3)]
    assert not rig.ctl.goals.active


def test_battery_trigger_fires_once_from_joint_state(walking):
    rig = walking
    rig.raw(rig.ch["motion_goal"], goal(6, 45, voltage=22.0, enable=1))
    rig.run(100)
    rig.robot.battery_voltage = 21.5
    seen = []
    for _ in range(200):
        rig.tick(heartbeat=True)
        for _, channel, payload in rig.last_out.messages:
            if channel == rig.ch["motion_event"]:
                seen.append(msgs.motion_event_t.decode(payload))
    assert [(e.kind, round(e.value, 1)) for e in seen] == [(4, 21.5)]


# -- user gaits (SPEC §8) -----------------------------------------------------------
USER_DIR = LOCO.gaits_dir.parent / "user"


def upload(rig: Rig, name: str) -> int:
    fs = msgs.file_send_lcmt()
    fs.data = (USER_DIR / name).read_text()
    rig.raw(rig.ch["user_gait_file"], fs.encode())
    rig.tick()
    assert rig.last_out is not None
    return msgs.file_recv_lcmt.decode(rig.last_out.get(rig.ch["user_gait_result"])).result


def test_the_custom_gait_example_runs_as_a_motion(walking):
    """The official example's flow: upload Def, then Params, stand, then
    62/110 with {7, D 4000} queued behind it (discarded, SPEC §10.7)."""
    rig = walking
    assert upload(rig, "Gait_Def_example.toml") == 0
    assert upload(rig, "Gait_Params_example_full.toml") == 0
    steps = rig.ctl.gaits.user_params
    rig.send(62, 110, duration=4320)
    rig.send(7, 0, duration=4000)
    rig.run(20)
    loco = rig.ctl.fsm.state
    assert rig.mode == 11 and loco.gen.gait.id == 110
    assert (rig.last.mode, rig.last.gait_id) == (62, 110)
    bars, lifts = [], []
    total_ms = sum(b.duration for b in steps) * 2
    for _ in range(int(total_ms / 2) + 100):
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        if rig.last.mode == 62:
            bars.append(rig.last.bar)
        lifts.append(loco.gen.swinging.copy())
    assert bars == sorted(bars) and bars[0] >= 1 and max(bars) == 100
    # One leg in the air at a time, as the Def says.
    assert max(np.sum(lifts, axis=1)) == 1 and np.any(lifts)
    # Ends standing in 11/31 (the filler), the damper block behind 62 was dropped.
    rig.run(600)
    assert (rig.mode, rig.last.gait_id, rig.last.switch_status) == (11, 31, 0)
    assert rig.ctl.odom.x > 0.3


def test_user_gait_steps_sent_directly_drive_the_progress_counters(walking):
    rig = walking
    assert upload(rig, "Gait_Def_example.toml") == 0
    rig.send(11, 110, duration=1200, step_height=[30030.0, 30030.0])
    rig.send(11, 110, duration=1200, step_height=[30030.0, 30030.0])
    rig.run(50)
    assert rig.ctl.queue.total == 2
    assert rig.last.gait_id == 110 and 1 <= rig.last.bar <= 60
    rig.run(2400)
    assert rig.ctl.queue.remaining == 0
    assert np.allclose(rig.ctl.fsm.state.gen.swing_apex[rig.ctl.fsm.state.gen.swing_apex > 0], 0.03)


def test_62_110_without_params_is_refused(walking):
    rig = walking
    rig.send(62, 110)
    rig.run(100)
    assert rig.last.switch_status == BAN_TRANS
    assert rig.ctl.counters.last_error == \
        "mode 62 refused: motion 110 needs Gait Params uploaded on user_gait_file"


def test_a_foot_outside_its_workspace_while_walking_gives_edamp(walking):
    """SPEC §5.8 in mode 11: a measured foot above -L/6 (here a folded leg)."""
    rig = walking
    rig.send(11, 3, vel_des=[0.2, 0, 0])
    rig.run(500)
    assert rig.ctl.fsm.footpos_error == 0            # normal walking never trips it
    js = msgs.joint_state_t()
    js.num_joints = 12
    js.position = list(rig.robot.q[:9]) + [0.0, -2.79, 0.6]  # RL foot swung up above its hip
    js.velocity, js.torque = [0.0] * 12, [0.0] * 12
    rig.raw(rig.ch["joint_state"], js.encode())
    rig.tick()
    assert rig.ctl.last_reported[2] == 3 and rig.mode == 7           # EDAMP
    assert rig.ctl.fsm.footpos_error == 1 << 11                      # RL z



def _workspace_bits_reference(feet: np.ndarray, hip: np.ndarray, x_limit: float, z_limit: float,
                              far: float) -> int:
    """SPEC 5.8/5.9's rule in plain Python floats (what csrc/watch.c replaced)."""
    bits = 0
    for i, ((fx, _, fz), (hx, _, hz)) in enumerate(zip(feet.tolist(), hip.tolist())):
        x, z = fx - hx, fz - hz
        if abs(x) > x_limit:
            bits |= 1 << (3 * i)
        if z > z_limit or x * x + z * z > far:
            bits |= 1 << (3 * i + 2)
    return bits


def test_the_foot_workspace_bits_in_c_follow_the_rule_at_and_around_its_bounds() -> None:
    from controller.robot.native import ffi, lib
    kin = KIN
    reach, rng = kin.reach, np.random.default_rng(2)
    x_limit, z_limit, far = reach * np.sin(np.radians(40.0)), -reach / 6.0, (reach + 1e-3) ** 2
    seen = set()
    for trial in range(3000):
        feet = kin.hip + rng.uniform(-1.2 * reach, 0.4 * reach, (4, 3))
        if trial % 3 == 0:                  # exactly on a bound: not beyond it
            feet[trial % 4, 0] = kin.hip[trial % 4, 0] + x_limit
            feet[(trial + 1) % 4, 2] = kin.hip[(trial + 1) % 4, 2] + z_limit
        feet = np.ascontiguousarray(feet)
        want = _workspace_bits_reference(feet, kin.hip, x_limit, z_limit, far)
        got = lib.mk_foot_workspace_bits(4, ffi.from_buffer("double[]", feet), kin.native.hip,
                                         x_limit, z_limit, far)
        assert got == want, trial
        seen.add(want)
    assert len(seen) > 100                  # many combinations of legs and bits were compared


@pytest.mark.parametrize("path", ["config/cyberdog2.yaml", "config/go2.yaml"])
def test_stream_feet_is_ik_then_the_limits_then_stream_to_the_bit(path: str) -> None:
    """QuadrupedRobot.stream_feet (one C call) writes the kernel and `out`
    exactly as kin.inverse, inside_limits and Kernel.stream did in turn,
    for feet in reach, out of reach and not finite."""
    from controller.core.controller import Controller
    segment = ("t0", "dur", "q0", "q1", "v0", "v1", "profile")
    a, b = Controller(load_config(path)), Controller(load_config(path))
    ra, rb = a.robot, b.robot
    n, rng = a.cfg.num_joints, np.random.default_rng(8)
    stand = ra.kin.stance_feet(a.cfg.stand_height, a.cfg.stand_com_x)
    q_prev = ra.stand_pose()
    for trial in range(500):
        feet = stand + rng.normal(0.0, 0.12 if trial % 4 else 0.5, stand.shape)
        if trial % 9 == 0:
            feet[trial % 4, trial % 3] = np.nan
        fallback = q_prev + rng.normal(0.0, 0.05, n)
        margin = float(rng.choice([0.0, 0.02]))
        out = np.empty(n)
        ra.stream_feet(feet, fallback, margin, q_prev, out)
        q, _ = rb.kin.inverse(feet)
        want = rb.inside_limits(q.reshape(-1), margin, fallback)
        rb.kernel.stream(want, q_prev, rb.dt)
        assert out.tobytes() == want.tobytes(), trial
        for f in segment:
            assert getattr(ra.kernel, f).tobytes() == getattr(rb.kernel, f).tobytes(), (trial, f)
        q_prev = out
    with pytest.raises(ValueError, match="apart from q_prev"):
        ra.stream_feet(stand, q_prev, 0.0, q_prev, q_prev)

def test_the_streamed_joint_targets_keep_their_velocity_past_8_s():
    """Mode 11 streams one target a tick with the velocity that reached it as
    the kernel's feed-forward (kd x qd_des). Sent as a one-tick segment from
    t - dt, it was lost whenever (t - (t - dt)) / dt rounded to 1.0, where the
    kernel holds a finished segment's end with no velocity: a quarter of the
    ticks before t = 8 s and every tick after, so a trot slowed by a fifth 8 s
    after start-up. Every tick of a trot well past 8 s must carry it."""
    rig = Rig()
    rig.send(12)
    rig.run(3000)
    rig.send(11, 3, vel_des=[0.3, 0.0, 0.0], step_height=[0.06, 0.06])
    rig.run(6000)
    assert rig.ctl.tick * rig.cfg.dt > 8.5
    dt = rig.cfg.dt
    for _ in range(150):                         # one whole gait cycle and more
        before = rig.ctl.kernel.pos.copy()
        rig.run(2)
        moved = (rig.ctl.kernel.pos - before) / dt
        assert np.abs(moved).max() > 0.1          # the legs are stepping
        assert np.allclose(rig.ctl.kernel.vel, moved, atol=1e-9)


def test_a_robot_s_windows_replace_its_gait_files():
    """`locomotion.windows` gives a robot its own velocity window per gait:
    the generator clamps to it, the rest of the gait file stays; an id with
    no file or an axis without zero is an error naming the key."""
    import yaml

    from controller.robot.config import ConfigError
    from controller.robot.config.locomotion import load_locomotion
    from controller.robot.config.reader import Reader
    from controller.robot.resources import CONFIG_DIR
    path = CONFIG_DIR / "cyberdog2.yaml"
    data = yaml.safe_load(path.read_text())
    data["locomotion"]["windows"] = {3: {"min": [-0.3, -0.1, -0.5], "max": [0.6, 0.1, 0.5]}}
    loco = load_locomotion(Reader(path, data), path)
    gaits = load_gaits(loco.gaits_dir, 4, loco.windows)
    np.testing.assert_allclose(gaits[3].window_max, [0.6, 0.1, 0.5])
    np.testing.assert_allclose(gaits[3].window_min, [-0.3, -0.1, -0.5])
    np.testing.assert_array_equal(gaits[3].contact, GAITS[3].contact)
    np.testing.assert_array_equal(gaits[9].window_max, GAITS[9].window_max)
    gen = GaitGenerator(KIN, loco, CFG.dt, gaits)
    gen.start(STAND_Q, gaits[1])
    for v, expected in (([0.0, 0.0, -9.0], [0.0, 0.0, -0.5]), ([5.0, 0.0, 0.0], [0.6, 0.0, 0.0])):
        for _ in range(2500):
            gen.step(GaitCommand(gaits[3], np.array(v), 0.05, 0.0))
        np.testing.assert_allclose(gen.v, expected, atol=1e-9)
    with pytest.raises(GaitError, match="locomotion.windows: gait 99"):
        load_gaits(loco.gaits_dir, 4, {99: ((0, 0, 0), (1, 1, 1))})
    data["locomotion"]["windows"] = {3: {"min": [0.1, 0, 0], "max": [1, 1, 1]}}
    with pytest.raises(ConfigError, match=r"locomotion\.windows\.3\.min: every axis must include zero"):
        load_locomotion(Reader(path, data), path)
