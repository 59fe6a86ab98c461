"""The biped walk's feedback (controller/motion/biped_balance.py): the swing
foot is placed from the measured torso, so a tilted torso does not misplace
it; the capture-point step goes where the pendulum says; and in physics the
sideways walk that fell open loop keeps humanoid20 up."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from controller.motion.biped_balance import WalkFeedback
from controller.motion.biped_walk import QuinticWalk, WalkFrame
from controller.robot.config import load_config
from controller.robot.config.walk import WalkBalance
from controller.robot.humanoid_kinematics import FootPose, HumanoidGeometry, HumanoidLegKinematics
from controller.robot.kinematics import rotation_rpy
from controller.robot.resources import CONFIG_DIR
from controller.sim.trial import Trial

DT = 0.002


def walk_and_feedback(balance: WalkBalance) -> tuple[QuinticWalk, WalkFeedback]:
    cfg = load_config(CONFIG_DIR / "humanoid20.yaml")
    assert cfg.walk is not None
    params = replace(cfg.walk.params, balance=balance)
    assert isinstance(cfg.geometry, HumanoidGeometry)
    walk = QuinticWalk(params, HumanoidLegKinematics(cfg.geometry))
    return walk, WalkFeedback(params, DT)


def to_mid_swing(walk: QuinticWalk, command: tuple[float, float, float]) -> WalkFrame:
    """Step the walk until its second step is past the middle of its swing."""
    steps = 0
    frame = walk.step(DT, command)
    while True:
        frame = walk.step(DT, command)
        if frame.phase < 0.01:
            steps += 1
        if steps >= 1 and walk.swing_progress() > 0.6:
            return frame


def test_on_plan_the_feedback_changes_nothing() -> None:
    walk, fb = walk_and_feedback(WalkBalance(tilt_gain=1.0, capture_gain=(1.0, 1.0),
                                             max_shift=0.05))
    frame = to_mid_swing(walk, (0.1, 0.0, 0.0))
    planned = (frame.right, frame.left)
    right, left, ankle = fb.adjust(frame, walk, (frame.trunk[3], frame.trunk[4]),
                                   np.zeros(3), planned)
    for got, want in zip((right, left), planned):
        np.testing.assert_allclose(got.position, want.position, atol=1e-12)
        np.testing.assert_allclose(got.rotation, want.rotation, atol=1e-12)
    np.testing.assert_allclose(fb.shift, 0.0, atol=1e-12)
    assert ankle == (0.0, 0.0)


@pytest.mark.parametrize("roll, pitch", [(-0.09, 0.0), (0.0, 0.06), (0.05, -0.04)])
def test_a_tilted_torso_still_puts_the_swing_foot_where_the_walk_planned_it(
        roll: float, pitch: float) -> None:
    """The torso turned about its own origin (a stance hip giving way): the
    swing foot's target, seen from the tilted torso, is the planned point
    in the level frame and the sole is level, not off by height x tilt."""
    walk, fb = walk_and_feedback(WalkBalance(tilt_gain=1.0))
    frame = to_mid_swing(walk, (0.0, 0.05, 0.0))
    planned = {"right": frame.right, "left": frame.left}
    plan_tilt = rotation_rpy(frame.trunk[3], frame.trunk[4], 0.0)
    tilted = rotation_rpy(frame.trunk[3] + roll, frame.trunk[4] + pitch, 0.0)
    # The stance sole, measured from the tilted torso, is where the plan has it.
    sup = frame.support
    measured = {side: FootPose(tilted.T @ plan_tilt @ p.position, tilted.T @ plan_tilt @ p.rotation)
                for side, p in planned.items()}
    right, left, _ = fb.adjust(frame, walk, (frame.trunk[3] + roll, frame.trunk[4] + pitch),
                               np.zeros(3), (measured["right"], measured["left"]))
    swing = left if sup == "right" else right
    want = planned["left" if sup == "right" else "right"]
    w = min(1.0, walk.swing_progress() / 0.5)
    assert w == 1.0
    np.testing.assert_allclose(tilted @ swing.position, plan_tilt @ want.position, atol=1e-9)
    np.testing.assert_allclose(tilted @ swing.rotation, plan_tilt @ want.rotation, atol=1e-9)
    # Open loop it would have landed height x tilt away.
    miss = np.linalg.norm((tilted @ want.position - plan_tilt @ want.position)[:2])
    assert miss > 0.3 * max(abs(roll), abs(pitch)) * 0.9


def test_the_capture_step_follows_the_trunks_stray_and_its_rate() -> None:
    """A trunk that strays sideways at a steady rate: the landing moves by
    capture_gain x (e + de/dt / omega), omega = sqrt(g / trunk height), and
    the walk is told so."""
    walk, fb = walk_and_feedback(WalkBalance(capture_gain=(0.0, 1.0), max_shift=0.1))
    frame = walk.step(DT, (0.1, 0.0, 0.0))
    while walk.step(DT, (0.1, 0.0, 0.0)).phase > 0.01:   # to the start of the second step
        pass
    frame = walk.step(DT, (0.1, 0.0, 0.0))
    sup = frame.support
    rate = 0.05                                            # m/s sideways
    for k in range(150):                                   # 0.3 s of the 0.4 s step
        frame = walk.step(DT, (0.1, 0.0, 0.0))
        planned = {"right": frame.right, "left": frame.left}
        stray = rate * DT * (k + 1)
        planned_sup = planned[sup]
        moved = FootPose(planned_sup.position - np.array([0.0, stray, 0.0]), planned_sup.rotation)
        measured = (moved, planned["left"]) if sup == "right" else (planned["right"], moved)
        fb.adjust(frame, walk, (frame.trunk[3], frame.trunk[4]), np.zeros(3), measured)
    omega = math.sqrt(9.81 / 0.40)
    expect = stray + rate / omega
    assert walk.swing_progress() > 0.5                     # fully faded in
    assert fb.shift[1] == pytest.approx(expect, rel=0.01)
    assert fb.shift[0] == 0.0
    assert walk._landing_shift[1] == pytest.approx(fb.shift[1] * math.cos(frame.trunk[5]), abs=2e-3)


def sideways(balance: WalkBalance | None) -> float:
    """humanoid20 walks sideways at 0.05 m/s for 6 s in physics (sensor
    imperfections on); the largest torso tilt (ground truth)."""
    cfg = load_config(CONFIG_DIR / "humanoid20.yaml")
    if balance is not None:
        assert cfg.walk is not None
        cfg = replace(cfg, walk=replace(cfg.walk, params=replace(cfg.walk.params, balance=balance)))
    trial = Trial(cfg)
    trial.send(12)
    trial.run(3.0)
    start = len(trial.trace.t)
    trial.send(11, 3, vel_des=[0.0, 0.05, 0.0])
    trial.run(6.0)
    return float(np.abs(np.array(trial.trace.rpy[start:])[:, :2]).max())


def test_the_sideways_walk_falls_open_loop_and_stays_up_with_the_feedback() -> None:
    assert sideways(WalkBalance()) > 1.0          # open loop: over on its side
    assert sideways(None) < 0.15                  # the shipped walk file's feedback


def test_the_walks_odometry_follows_the_legs_not_the_command() -> None:
    """global_to_robot's pose comes from leg odometry (controller/core/
    biped_estimator.py): over 8 s at 0.1 m/s humanoid20 walks about 0.13 m/s
    in physics, and the odometry's travel matches the true one within 10 %,
    where the command's integral would be some 25 % short."""
    cfg = load_config(CONFIG_DIR / "humanoid20.yaml")
    trial = Trial(cfg)
    trial.send(12)
    trial.run(3.0)
    start = len(trial.trace.t)
    x0 = trial.ctl.odom.x
    trial.send(11, 3, vel_des=[0.1, 0.0, 0.0])
    trial.run(8.0)
    tr = trial.trace
    truth = float(tr.position[-1][0] - tr.position[start][0])
    odom = trial.ctl.odom.x - x0
    commanded = 0.1 * 8.0
    assert truth > commanded * 1.15                      # the body outwalks its command
    assert odom == pytest.approx(truth, rel=0.1)
    assert trial.ctl.odom.z == pytest.approx(cfg.stand_height, abs=0.02)


@pytest.mark.parametrize("balance, error", [
    ({"tilt_gain": 1.5}, r"balance.tilt_gain: expected a number in \[0.0, 1.0\], got 1.5"),
    ({"ankle_gyro": [0.1]}, r"balance.ankle_gyro: expected \[a, b\]"),
    ({"capture": [1, 1]}, r"balance: unknown keys \['capture'\]"),
    ("on", "balance: expected a mapping"),
])
def test_a_bad_balance_section_names_the_key(balance: object, error: str) -> None:
    from controller.robot.config.walk import WalkParams
    from controller.robot.humanoid_kinematics import HumanoidConfigError
    cfg = load_config(CONFIG_DIR / "humanoid20.yaml")
    assert cfg.walk is not None
    import yaml
    data = yaml.safe_load(cfg.walk.path.read_text())
    data["balance"] = balance
    with pytest.raises(HumanoidConfigError, match=error):
        WalkParams.from_mapping(data, "walk.yaml")
