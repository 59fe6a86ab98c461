"""The quadruped's state estimate (controller/core/estimator.py) from its IMU
and legs, and the odometry that walks by it, judged in physics against the
simulator's ground truth with the sensor imperfections on. The figures
asserted here are what this first estimator reaches under the open-loop
trot (issue 16 asks for more: 3 % of distance, 0.05 m/s RMS); the
assertions keep it from sliding back, and show it beats the
commanded-velocity odometry it replaces.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from harness import Rig

from controller import msgs
from controller.robot.config import ConfigError, load_config
from controller.robot.config.estimator import EstimatorConfig, load_estimator
from controller.robot.config.reader import Reader
from controller.sim.trial import Trial


def standing() -> Trial:
    trial = Trial(load_config())
    trial.send(12)
    trial.run(3.0)
    return trial


def test_standing_the_estimate_holds_the_true_height_and_attitude() -> None:
    trial = standing()
    est = trial.ctl.estimator
    assert est is not None
    truth = trial.robot.truth()
    assert est.position[2] == pytest.approx(truth.position[2], abs=0.01)
    assert np.abs(est.velocity).max() < 0.02
    assert np.allclose(est.rpy[:2], truth.rpy[:2], atol=0.01)
    assert (est.trust == 1.0).all()                 # four feet carry the body


def test_trotting_the_estimate_and_the_odometry_follow_the_body() -> None:
    trial = standing()
    est = trial.ctl.estimator
    assert est is not None
    trial.send(11, 3, vel_des=[0.5, 0.0, 0.0], step_height=[0.06, 0.06])
    trial.run(1.0)                                  # into the gait
    start, odom_start = trial.robot.truth().position.copy(), trial.ctl.odom.forward
    errors = []
    for _ in range(5000):                           # 10 s
        trial.tick()
        errors.append(est.velocity[:2] - trial.robot.truth().velocity[:2])
    travel = float(trial.robot.truth().position[0] - start[0])
    odom = trial.ctl.odom.forward - odom_start
    rms = np.sqrt(np.mean(np.square(errors), axis=0))
    assert travel > 4.0                             # the body really walked (closed loop: 5 m)
    # Issue 16's figures: position error within 3 % of the distance, velocity
    # RMS error within 0.05 m/s. Measured: -0.1 %, 0.034 m/s; -7 % without
    # the rolling foot's correction, -20 % open loop (stance feet slid).
    assert abs(odom - travel) < 0.03 * travel
    assert float(np.hypot(*rms)) < 0.05
    # A swinging leg is never trusted: at every tick at most the stance pair.
    assert est.trust.sum() <= 4


def test_standing_still_the_gyro_bias_is_learned_and_the_yaw_holds() -> None:
    """The simulated IMU's gyro has a bias and its orientation's yaw drifts
    with it; standing, the estimator learns the bias and keeps the yaw."""
    trial = standing()
    est = trial.ctl.estimator
    assert est is not None
    true_bias = trial.robot.sensors.bias
    assert abs(true_bias[2]) > 0.001                # the seed's bias is worth learning
    assert est.gyro_bias[2] == pytest.approx(true_bias[2], abs=3e-4)
    yaw0, true0, seen0 = est.rpy[2], trial.robot.truth().rpy[2], trial.robot.sensors.yaw_drift
    trial.run(20.0)
    seen_drift = trial.robot.sensors.yaw_drift - seen0
    true_turn = trial.robot.truth().rpy[2] - true0
    assert abs(seen_drift) > 0.02                   # what the raw IMU yaw did
    assert abs((est.rpy[2] - yaw0) - true_turn) < 0.005


def test_walking_does_not_teach_the_bias() -> None:
    trial = standing()
    est = trial.ctl.estimator
    assert est is not None
    learned = est.still_samples
    trial.send(11, 3, vel_des=[0.0, 0.0, 0.5], step_height=[0.06, 0.06])
    trial.run(2.0)
    # Only the few ticks before the first foot lifts (the gait starts on four feet).
    assert est.still_samples - learned < 10


def test_the_odometry_holds_still_when_not_walking() -> None:
    trial = standing()
    before = (trial.ctl.odom.x, trial.ctl.odom.y)
    trial.send(21, 0, rpy_des=[0.2, 0.0, 0.0], duration=1000)
    trial.run(2.0)
    assert (trial.ctl.odom.x, trial.ctl.odom.y) == before


def imu_packet(quaternion: list[float], gyro: list[float] | None = None) -> bytes:
    m = msgs.imu_t()
    m.quaternion = quaternion
    m.gyro = gyro or [0.0, 0.0, 0.0]
    m.accel = [0.0, 0.0, 9.81]
    return m.encode()


@pytest.mark.parametrize("quaternion,gyro,reason", [
    ([0.5, 0.0, 0.0, 0.0], None, "quaternion norm 0.500, not 1"),
    ([1.0, 0.0, 0.0, 0.0], [float("nan"), 0.0, 0.0], "a value is not finite"),
    ([float("inf"), 0.0, 0.0, 0.0], None, "a value is not finite")])
def test_a_bad_imu_packet_is_dropped_and_counted(quaternion: list[float], gyro: list[float] | None,
                                                reason: str) -> None:
    rig = Rig(sim="joint")                          # no IMU of its own: only the packet sent here
    rig.run(20)
    rejected = rig.ctl.counters.packets_rejected
    rig.raw(rig.ch["imu"], imu_packet(quaternion, gyro))
    rig.tick()
    assert rig.ctl.counters.packets_rejected == rejected + 1
    assert rig.ctl.faults.imu_watch.last_ns is None        # never taken
    assert reason in rig.ctl.counters.last_error


def test_the_estimator_figures_come_from_the_config() -> None:
    base = load_config()
    assert base.estimator == EstimatorConfig(0.02, 0.02, 0.002, 0.001, 0.1, 0.001, 12.0, 8.0)
    # A load no foot reaches standing: no leg is trusted, whatever the gait says.
    heavy = replace(base, estimator=EstimatorConfig(contact_force=200.0, contact_band=10.0))
    trial = Trial(heavy)
    trial.send(12)
    trial.run(2.0)
    est = trial.ctl.estimator
    assert est is not None and (est.trust == 0.0).all()


@pytest.mark.parametrize("section,message", [
    ({"contact_force": 10.0, "contact_band": 20.0}, "contact_band: 20.0 N is more than contact_force"),
    ({"sensor_velocity": 0.0}, "sensor_velocity: 0.0 is outside"),
    ({"process_foot": "a lot"}, "process_foot: expected float")])
def test_bad_estimator_figures_are_refused_with_the_key(section: dict[str, Any], message: str) -> None:
    path = load_config().path
    with pytest.raises(ConfigError, match=rf"{path}: estimator\.{message}"):
        load_estimator(Reader(path, {"estimator": section}))
