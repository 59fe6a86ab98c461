"""The two-leg balance's pieces against their definitions (controller/motion/two_leg.py)
and the `two_leg` / `mass_model` config sections; in physics, the behaviour's
streaming and its failure on four feet. The whole motion in physics is in
tests/test_scripted_modes.py."""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from harness import Rig

from controller.behaviours.two_leg import TwoLegStand
from controller.motion.two_leg import (
    Ref,
    TwoLegBalance,
    centre_of_mass,
    leg_weight_torques,
    link_points,
    lqr_gain,
    min_jerk,
)
from controller.robot.config import ConfigError, load_config
from controller.robot.config.quadruped import Geometry
from controller.robot.config.reader import Reader
from controller.robot.config.two_leg import MassModel, TwoLegPlan, load_mass_model, load_two_leg
from controller.robot.kinematics import QuadrupedKinematics
from controller.sim.physics import PhysicsRobot

CFG = load_config()
assert isinstance(CFG.geometry, Geometry) and CFG.mass_model is not None
KIN = QuadrupedKinematics(CFG.geometry)
MASS: MassModel = CFG.mass_model
DT = CFG.dt


def sagittal(h: float, iyy: float, m: float) -> tuple[np.ndarray, np.ndarray]:
    A = np.zeros((4, 4))
    A[0, 2] = A[1, 3] = 1.0
    A[3, 0] = m * 9.81 / iyy
    B = np.array([[0.0], [0.0], [1.0 / m], [-h / iyy]])
    return A, B


def cost(Ad: np.ndarray, Bd: np.ndarray, Q: np.ndarray, R: np.ndarray, K: np.ndarray) -> np.ndarray:
    """The quadratic cost matrix of the sampled model under u = -K x."""
    closed = Ad - Bd @ K
    P = np.eye(len(Ad))
    for _ in range(200_000):
        P_next = Q + K.T @ R @ K + closed.T @ P @ closed
        if np.max(np.abs(P_next - P)) < 1e-9 * np.max(np.abs(P)):
            return P_next
        P = P_next
    raise AssertionError("the cost did not converge")


@pytest.mark.parametrize("h", [0.2, 0.3, 0.4])
def test_the_lqr_gain_stabilises_the_sampled_model_and_meets_its_riccati_equation(h):
    assert MASS is not None
    A, B = sagittal(h, 0.178, MASS.total)
    Q, R = np.diag([2500.0, 44.0, 11.0, 4.0]), np.array([[1 / 225.0]])
    K = lqr_gain(A, B, Q, R, DT)
    Ad, Bd = np.eye(4) + A * DT, B * DT
    assert np.max(np.abs(np.linalg.eigvals(Ad - Bd @ K))) < 1.0
    # K is the fixed point's gain: another gain costs more (its cost matrix is larger).
    assert np.trace(cost(Ad, Bd, Q, R, K * 1.2)) > np.trace(cost(Ad, Bd, Q, R, K))


def test_an_uncontrollable_model_is_refused():
    A = np.diag([1.0, 0.0])          # the unstable state has no input
    B = np.array([[0.0], [1.0]])
    with pytest.raises(ValueError, match="controllable"):
        lqr_gain(A, B, np.eye(2), np.eye(1), 0.01)


def test_min_jerk_starts_and_ends_at_rest_and_its_derivatives_match_finite_differences():
    T, a, b = 2.0, 0.1, -1.2
    assert min_jerk(-0.1, T, a, b) == Ref(a) and min_jerk(T + 0.1, T, a, b) == Ref(b)
    eps = 1e-6
    for t in np.linspace(0.05, 1.95, 9):
        r, r1, r0 = min_jerk(t, T, a, b), min_jerk(t + eps, T, a, b), min_jerk(t - eps, T, a, b)
        assert r.rate == pytest.approx((r1.value - r0.value) / (2 * eps), abs=1e-6)
        assert r.acc == pytest.approx((r1.rate - r0.rate) / (2 * eps), abs=1e-5)


def test_the_shank_point_at_the_shank_length_is_the_foot():
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = rng.uniform(CFG.q_min, CFG.q_max)
        feet = KIN.forward(q.reshape(4, 3))
        for leg in range(4):
            model = dataclasses.replace(MASS, shank_at=KIN.l3)
            _, shank = link_points(model, KIN.hip[leg], KIN.side[leg] * KIN.l1, KIN.l2, q[3 * leg:3 * leg + 3])
            assert shank == pytest.approx(feet[leg], abs=1e-12)


def test_the_centre_of_mass_is_the_mass_weighted_mean_and_mirrors_with_the_legs():
    q = CFG.poses["fold"].copy()
    com = centre_of_mass(MASS, KIN.hip, KIN.side, KIN.l1, KIN.l2, q)
    assert com[1] == pytest.approx(MASS.trunk_com[1] * MASS.trunk / MASS.total, abs=1e-12)
    # Swinging both front legs forward moves it forward by the moved mass's share.
    q2 = q.copy()
    q2[[1, 4]] += 0.3
    com2 = centre_of_mass(MASS, KIN.hip, KIN.side, KIN.l1, KIN.l2, q2)
    moved = 0.0
    for leg in (0, 1):
        a = link_points(MASS, KIN.hip[leg], KIN.side[leg] * KIN.l1, KIN.l2, q[3 * leg:3 * leg + 3])
        b = link_points(MASS, KIN.hip[leg], KIN.side[leg] * KIN.l1, KIN.l2, q2[3 * leg:3 * leg + 3])
        moved += MASS.thigh * (b[0][0] - a[0][0]) + MASS.shank * (b[1][0] - a[1][0])
    assert com2[0] - com[0] == pytest.approx(moved / MASS.total, abs=1e-12)


def test_the_leg_weight_torques_are_the_gradient_of_the_legs_potential_energy():
    g = np.array([0.3, -0.2, -9.7])
    q = np.array([0.2, -1.1, 1.6])
    hip, ly = KIN.hip[2], KIN.side[2] * KIN.l1

    def potential(qq: np.ndarray) -> float:
        thigh, shank = link_points(MASS, hip, ly, KIN.l2, qq)
        return -float(MASS.thigh * thigh @ g + MASS.shank * shank @ g)

    tau = leg_weight_torques(MASS, hip, ly, KIN.l2, q.copy(), g)
    eps = 1e-6
    for j in range(3):
        dq = np.zeros(3)
        dq[j] = eps
        assert tau[j] == pytest.approx((potential(q + dq) - potential(q - dq)) / (2 * eps), abs=1e-6)


def test_the_feet_forces_sum_to_the_wanted_force_and_turn_the_wanted_tilt_and_heading_moment():
    """Level body, no gravity compensation asked of the PD (height at its
    reference): the two forces add up to the force the law asked for, and
    their moment about the centre of mass has the roll and yaw the PD asked
    for."""
    assert CFG.balance is not None
    bal = TwoLegBalance(KIN, MASS, CFG.balance.inertia, DT, CFG.two_leg.gains)
    q = np.tile([0.0, -0.9, 1.5], 4)
    rot = np.eye(3)
    feet, J = KIN.forward_jacobian(q.reshape(4, 3))
    assert J is not None
    bal.measure(rot, np.zeros(3), feet, J, q, np.zeros(12))
    bal.roll = 0.05           # a tilt to correct
    bal.yaw = 0.1
    tau = bal.step(rot, feet, J, q, Ref(bal.pitch), Ref(bal.h), bal.x, 0.0, 1e9)
    f = bal.forces[[2, 3]]
    assert np.all(bal.forces[[0, 1]] == 0.0) and np.all(f[:, 2] > 0)
    r = feet[[2, 3]] - bal.com
    r[:, 2] -= KIN.foot_radius
    moment = np.cross(r, f).sum(axis=0)
    g = CFG.two_leg.gains
    inertia = np.diag(CFG.balance.inertia)
    assert moment[0] == pytest.approx(inertia[0, 0] * -g.roll_kp * 0.05, rel=1e-6)
    assert moment[2] == pytest.approx(inertia[2, 2] * -g.yaw_kp * 0.1, rel=1e-6)
    assert f.sum(axis=0)[2] == pytest.approx(MASS.total * 9.81, rel=1e-9)
    assert np.all(tau[:6] == 0.0) and np.any(tau[6:] != 0.0)


def sections() -> dict:
    data = yaml.safe_load(CFG.path.read_text())
    return {"two_leg": data["two_leg"], "mass_model": data["mass_model"]}


def test_two_leg_keys_are_checked():
    data = sections()
    data["two_leg"]["pitchh"] = 1.0
    with pytest.raises(ConfigError, match="pitchh"):
        load_two_leg(Reader(Path("robot.yaml"), data))
    data = sections()
    data["two_leg"]["min_pitch"], data["two_leg"]["pitch"] = 1.4, 1.2
    with pytest.raises(ConfigError, match="min_pitch"):
        load_two_leg(Reader(Path("robot.yaml"), data))
    data = sections()
    data["two_leg"]["balance"]["r_force"] = -3
    with pytest.raises(ConfigError, match="r_force"):
        load_two_leg(Reader(Path("robot.yaml"), data))
    data = sections()
    del data["mass_model"]["shank"]
    with pytest.raises(ConfigError, match="shank"):
        load_mass_model(Reader(Path("robot.yaml"), data))
    # Missing keys keep their defaults; an absent section is all defaults.
    data = sections()
    del data["two_leg"]["greet_s"]
    assert load_two_leg(Reader(Path("robot.yaml"), data)).plan.greet_s == TwoLegPlan().greet_s
    assert load_two_leg(Reader(Path("robot.yaml"), {})).plan == TwoLegPlan()


def test_the_shipped_figures_add_up_to_the_robot():
    assert MASS is not None and CFG.balance is not None
    # The link masses (published figures) give the MPC's whole-robot mass within 2 %.
    assert MASS.total == pytest.approx(CFG.balance.mass, rel=0.02)
    plan = CFG.two_leg.plan
    assert plan.min_pitch <= plan.pitch
    assert not math.isnan(sum(getattr(plan, f"{s}_s") for s in
                              ("kneel", "rear", "greet", "reach", "land", "lean", "stand")))


# -- in physics: the behaviour ---------------------------------------------------------

def greeting_rig() -> tuple[Rig, TwoLegStand, PhysicsRobot]:
    """A robot standing in 12 until 12 s after start-up, then sent 64/0."""
    rig = Rig()
    rig.stand()
    rig.run(12_000 - (rig.now_ns - Rig.now_ns) / 1e6)
    assert rig.ctl.fsm.state.mode == 12 and rig.ctl.last_reported[3] == 100
    behaviour = rig.ctl.fsm.behaviours[64]
    assert isinstance(behaviour, TwoLegStand) and isinstance(rig.robot, PhysicsRobot)
    rig.send(64, 0)
    return rig, behaviour, rig.robot


def test_the_stages_stream_their_targets_with_the_velocity_that_reaches_them_at_any_uptime():
    """Long after start-up (where a one-tick segment from t - dt lost its
    velocity on most ticks), every kneel tick's command carries the velocity
    from the last target to this one."""
    rig, behaviour, _ = greeting_rig()
    rig.tick()
    assert behaviour.stage == "kneel"
    k, dt = rig.ctl.kernel, rig.cfg.dt
    moving = 0
    for _ in range(round(0.8 / dt)):
        before = k.pos.copy()
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        assert behaviour.stage == "kneel"
        np.testing.assert_allclose(k.vel, (k.pos - before) / dt, atol=1e-9)
        moving += bool(np.abs(k.vel).max() > 0.05)
    assert moving > round(0.5 / dt), "the kneel's targets hardly moved"


def test_a_trunk_rearing_up_again_on_four_feet_fails_the_greeting_never_100():
    """A nose-up spin (8 rad/s) given to the trunk early in the stand stage
    rears it up on its rear feet: the motion fails as lost, its progress stays
    at 75 and never reaches 100 afterwards, however the body ends."""
    rig, behaviour, robot = greeting_rig()
    plan = rig.cfg.two_leg.plan
    ticks = round((plan.kneel_s + plan.rear_s + plan.greet_s + plan.reach_s + plan.land_s
                   + plan.lean_s + 1.0) / rig.cfg.dt)
    for _ in range(ticks):
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        if behaviour.stage == "stand":
            break
    assert behaviour.stage == "stand" and behaviour.failed is None
    robot.data.qvel[4] -= 8.0          # about the body's y axis: nose up
    bars = []
    for _ in range(round(3.0 / rig.cfg.dt)):
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        bars.append(rig.ctl.last_reported[3])
    failure = behaviour.failure()
    assert failure is not None and "lost the body in stand" in failure, failure
    assert "TWO_LEG_STAND failed: lost the body" in rig.ctl.counters.last_error
    assert max(bars) == 75 and bars[-1] == 75


def test_with_a_latency_the_force_acts_on_the_state_the_model_predicts_for_then():
    """latency_s: the sagittal force is the LQR gain on the state predicted
    latency_s ahead by the model x' = A x + B Fx under the last force;
    at 0 it is the gain on the state as measured."""
    assert CFG.balance is not None
    q = np.tile([0.0, -0.9, 1.5], 4)
    rot = np.eye(3)
    feet, J = KIN.forward_jacobian(q.reshape(4, 3))
    assert J is not None

    def force(latency: float, last_fx: float) -> tuple[float, TwoLegBalance]:
        gains = dataclasses.replace(CFG.two_leg.gains, latency_s=latency)
        assert CFG.balance is not None
        bal = TwoLegBalance(KIN, MASS, CFG.balance.inertia, DT, gains)
        bal.measure(rot, np.zeros(3), feet, J, q, np.zeros(12))
        bal.vx, bal.rates = 0.2, np.array([0.0, -0.5, 0.0])      # moving: the prediction has work to do
        bal.fx = last_fx
        bal.step(rot, feet, J, q, Ref(bal.pitch), Ref(bal.h), bal.x, 0.0, 1e9)
        return bal.fx, bal

    now, bal = force(0.0, 3.0)
    state = np.array([0.0, 0.0, 0.2, -0.5])
    k = bal.gain(bal.h)
    assert now == pytest.approx(-float(k @ state), rel=1e-12)
    later, bal = force(0.004, 3.0)
    A, B = sagittal(bal.h, bal.iyy, bal.m)
    ahead = state + 0.004 * (A @ state + B[:, 0] * 3.0)
    assert later == pytest.approx(-float(k @ ahead), rel=1e-6)
    assert abs(later - now) > 0.01 * abs(now)


def test_a_rolling_foot_moves_the_centre_of_pressure_against_its_roll():
    """foot_rolling: a rear foot whose shank turns on the floor (its hip and
    knee rates against the trunk's pitch rate, low-passed) is pushed at a
    centre of pressure foot_rolling x tanh(turn / ROLL_RATE) of its load off
    its centre, against the roll: the balance measures the centre of mass
    from there. At rest, or with none, nothing moves."""
    from controller.motion.two_leg import ROLL_FILTER_S, ROLL_RATE
    assert CFG.balance is not None
    q = np.tile([0.0, -0.9, 1.5], 4)
    rot = np.eye(3)
    feet, J = KIN.forward_jacobian(q.reshape(4, 3))
    assert J is not None

    def x_after(rolling: float, hip_rate: float, ticks: int) -> float:
        gains = dataclasses.replace(CFG.two_leg.gains, foot_rolling=rolling)
        assert CFG.balance is not None
        bal = TwoLegBalance(KIN, MASS, CFG.balance.inertia, DT, gains)
        bal.forces[2:, 2] = [50.0, 70.0]
        qd = np.zeros(12)
        qd[[7, 10]] = hip_rate          # the rear hips: the shanks turn at -hip_rate on the floor
        for _ in range(ticks):
            bal.measure(rot, np.zeros(3), feet, J, q, qd)
        return bal.x

    ticks = 300
    plain = x_after(0.0, -0.5, ticks)
    assert x_after(0.01, 0.0, ticks) == pytest.approx(plain, abs=1e-12)
    turn = 0.5 * (1.0 - (1.0 - DT / (DT + ROLL_FILTER_S)) ** ticks)     # the filter's step response
    shift = -0.01 * 120.0 * math.tanh(turn / ROLL_RATE) / (MASS.total * 9.81)
    assert x_after(0.01, -0.5, ticks) - plain == pytest.approx(shift, rel=1e-9)
    assert shift < -0.007          # a shank turning nose down: the push ahead, the centre of mass behind it
    assert x_after(0.01, 0.5, ticks) - plain == pytest.approx(-shift, rel=1e-9)


def test_go1s_rubber_toes_roll_against_friction_and_other_feet_do_not():
    """The loader's figure (controller/robot/foot_sink.py): the third
    friction figure of a foot geom with six contact dimensions."""
    from controller.robot.foot_sink import feet_rolling_friction
    for name, rolling in (("go1.yaml", 0.01), ("barkour_vb.yaml", 0.0)):
        cfg = load_config(Path(CFG.path).parent / name)
        assert feet_rolling_friction(cfg.path, cfg.sim, cfg.legs, cfg.joint_map) == pytest.approx(rolling)


def rear_stage(**plan: Any) -> TwoLegStand:
    """The greeting's behaviour on CyberDog 2, its plan changed, as the rear-up begins
    (its balance's state set by hand: no physics runs)."""
    rig = Rig()
    behaviour = rig.ctl.fsm.behaviours[64]
    assert isinstance(behaviour, TwoLegStand)
    behaviour.plan = dataclasses.replace(behaviour.plan, **plan)
    behaviour.ref0 = np.array([0.0, 0.2])
    behaviour.rear_clock, behaviour.height_pitch, behaviour.stage = 0.0, None, "rear"
    return behaviour


def test_a_governed_rear_up_waits_for_a_trunk_held_back_and_runs_with_one_that_follows():
    """rear_lead: the reference's clock runs at full speed while the trunk
    keeps up, slows as it lags, and stops with the reference rear_lead
    ahead of a trunk that does not move; the height follows the reference."""
    dt = DT
    nothing: Any = None                          # a governed clock is its own: no tick is read
    follows = rear_stage(rear_lead=0.1, rear_s=2.0)
    for _ in range(500):
        ref = follows._rear_reference(nothing)
        follows.balance.pitch = ref.value
    assert follows.rear_clock == pytest.approx(500 * dt)
    assert follows.height_pitch == (ref.value, ref.rate)
    held = rear_stage(rear_lead=0.1, rear_s=2.0)
    held.balance.pitch = 0.0
    for _ in range(1500):
        ref = held._rear_reference(nothing)
    clock = held.rear_clock
    assert 0.3 < clock < 1.0 and ref.value == pytest.approx(-0.1, abs=0.002)
    held._rear_reference(nothing)
    assert held.rear_clock - clock < 0.02 * dt and abs(ref.rate) < 0.02
    assert not held._rear_done(type("Ctx", (), {"tick": held.stage_tick + round(2.3 / dt)})())


def test_rearing_up_the_height_can_rise_ahead_of_the_pitch():
    """rear_height_ease k: the height rises 1 - (1 - s)^k of its way at a share
    s of the pitch's, rearing up; landing, and with k 1, in proportion."""
    stand = rear_stage(rear_height_ease=2.0, pitch=1.0, height=0.4)
    stand.height_pitch = (-0.5, -1.0)           # half way up, turning nose up at 1 rad/s
    h = stand._height_for_pitch()
    assert h.value == pytest.approx(0.2 + 0.2 * 0.75) and h.rate == pytest.approx(0.2 * 2 * 0.5 / -1.0 * -1.0)
    stand.stage = "land"
    assert stand._height_for_pitch().value == pytest.approx(0.3)
    stand.stage = "rear"
    stand.plan = dataclasses.replace(stand.plan, rear_height_ease=1.0)
    assert stand._height_for_pitch().value == pytest.approx(0.3)


def test_a_config_on_its_own_mjcf_reads_the_toes_rolling_friction():
    """The loader: Go1's optimised config plays mode 64 and writes no
    `foot_rolling`, so it is its model's (0.01 m), as in go1.yaml, which
    does not play it; written, it overrides."""
    shipped = Path(CFG.path).parent / "go1_optimised.yaml"
    cfg = load_config(shipped)
    assert cfg.scripts is not None and cfg.scripts.modes[64].kind == "two_leg"
    assert "foot_rolling" not in shipped.read_text()
    assert cfg.two_leg.gains.foot_rolling == pytest.approx(0.01)
    assert load_config(Path(CFG.path).parent / "go1.yaml").two_leg.gains.foot_rolling == pytest.approx(0.01)
    from controller.robot.config.loader import _with_foot_rolling
    none = dataclasses.replace(cfg, two_leg=dataclasses.replace(
        cfg.two_leg, gains=dataclasses.replace(cfg.two_leg.gains, foot_rolling=0.0)))
    written = Reader(shipped, {"two_leg": {"balance": {"foot_rolling": 0}}})
    assert _with_foot_rolling(written, none).two_leg.gains.foot_rolling == 0.0
    assert _with_foot_rolling(Reader(shipped, {}), none).two_leg.gains.foot_rolling == pytest.approx(0.01)
