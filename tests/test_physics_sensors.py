"""The physics body's sensors (controller/sim/sensors.py) and its ground
truth (sim_state): what a controller may see, and what only tools may.

The sensors report the true state with configured noise, bias and delay;
every statistic below is measured against the simulator's ground truth.
sim_state is that ground truth, and nothing in the controller reads it.
"""
from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from harness import Rig

from controller import msgs
from controller.robot.angles import quat_multiply
from controller.robot.config import ConfigError
from controller.service.runtime import Runtime
from controller.sim.physics import PhysicsRobot
from controller.sim.sensors import SensorConfig

ROOT = Path(__file__).resolve().parent.parent
IDEAL = {"enabled": False}


def physics_rig(sensors: dict[str, Any] | None = None) -> Rig:
    rig = Rig()
    if sensors is not None:
        rig.cfg = replace(rig.cfg, sim={**rig.cfg.sim, "sensors": sensors})
    rig.robot = PhysicsRobot(rig.cfg)
    return rig


def standing(sensors: dict[str, Any] | None = None) -> Rig:
    rig = physics_rig(sensors)
    rig.send(12)
    rig.run(2500)
    return rig


def imu(rig: Rig) -> msgs.imu_t:
    assert isinstance(rig.robot, PhysicsRobot)
    return msgs.imu_t.decode(rig.robot.imu(0))


def test_ideal_sensors_report_the_true_state_of_this_tick() -> None:
    rig = physics_rig(IDEAL)
    rig.send(12)
    robot = rig.robot
    assert isinstance(robot, PhysicsRobot)
    for _ in range(200):
        rig.tick()
        truth = robot.truth()
        js = msgs.joint_state_t.decode(robot.joint_state(0))
        m = imu(rig)
        assert np.allclose(js.position, robot.q, atol=1e-6)       # float32 on the wire
        assert np.allclose(js.velocity, robot.qd, atol=1e-4)
        assert np.allclose(m.quaternion, truth.quaternion, atol=1e-6)
        assert np.allclose(m.gyro, truth.angular_velocity, atol=1e-4)


def test_at_rest_the_accelerometer_reads_gravity_and_the_gyro_its_bias() -> None:
    rig = standing()
    robot = rig.robot
    assert isinstance(robot, PhysicsRobot)
    acc, gyro, true_rate = [], [], []
    for _ in range(500):
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        m = imu(rig)
        acc.append(m.accel)
        gyro.append(m.gyro)
        true_rate.append(robot.truth().angular_velocity)
    acc_mean = np.mean(acc, axis=0)
    assert acc_mean[2] == pytest.approx(9.81, abs=0.05)
    assert np.abs(acc_mean[:2]).max() < 0.2          # standing nearly level
    bias = robot.sensors.bias
    assert np.abs(bias).max() > 0                      # a bias was drawn
    error = np.mean(np.array(gyro) - np.array(true_rate), axis=0)
    # The mean error over 500 samples is the bias, to a few sigma / sqrt(500).
    assert np.allclose(error, bias, atol=4 * 0.004 / np.sqrt(500))


def test_noise_has_the_configured_spread() -> None:
    config = {"encoder_noise": 1e-3, "gyro_noise": 0.01, "gyro_bias": 0.0, "delay_ticks": 0}
    rig = standing(config)
    robot = rig.robot
    assert isinstance(robot, PhysicsRobot)
    q_err, gyro_err = [], []
    for _ in range(1000):
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        q_err.append(np.array(msgs.joint_state_t.decode(robot.joint_state(0)).position) - robot.q)
        gyro_err.append(np.array(imu(rig).gyro) - robot.truth().angular_velocity)
    assert np.std(q_err) == pytest.approx(1e-3, rel=0.1)
    assert np.std(gyro_err) == pytest.approx(0.01, rel=0.1)


def test_readings_arrive_the_configured_ticks_late() -> None:
    exact = {"encoder_noise": 0.0, "encoder_velocity_noise": 0.0, "gyro_noise": 0.0,
             "gyro_bias": 0.0, "accel_noise": 0.0, "orientation_noise": 0.0}
    for delay in (1, 3):
        rig = physics_rig({**exact, "delay_ticks": delay})
        rig.send(12)
        robot = rig.robot
        assert isinstance(robot, PhysicsRobot)
        true_q = [robot.q]
        for _ in range(100):
            rig.tick()
            true_q.append(robot.q)
        seen = np.array(msgs.joint_state_t.decode(robot.joint_state(0)).position)
        assert np.allclose(seen, true_q[-1 - delay], atol=1e-6)
        assert not np.allclose(seen, true_q[-1], atol=1e-4)      # the legs are moving


def test_orientation_yaw_drifts_with_the_gyro_bias() -> None:
    rig = standing({"gyro_bias": 0.02, "orientation_noise": 0.0, "seed": 3})
    robot = rig.robot
    assert isinstance(robot, PhysicsRobot)
    seconds = rig.ctl.tick * rig.cfg.dt
    true_q = robot.truth().quaternion
    seen = np.array(imu(rig).quaternion)
    # seen = drift * truth: the relative rotation is a yaw of bias_z * time.
    inverse = true_q * np.array([1, -1, -1, -1])
    relative = quat_multiply(seen, inverse)
    yaw = 2 * np.arctan2(relative[3], relative[0])
    assert yaw == pytest.approx(robot.sensors.bias[2] * seconds, abs=2e-3)


def test_sensor_noise_is_reproducible_from_its_seed() -> None:
    def run(seed: int) -> bytes:
        rig = physics_rig({"seed": seed})
        rig.send(12)
        rig.run(200)
        assert isinstance(rig.robot, PhysicsRobot)
        return rig.robot.joint_state(0) + rig.robot.imu(0)
    assert run(5) == run(5)
    assert run(5) != run(6)


@pytest.mark.parametrize("key,value,reason", [
    ("gyro_noise", -1.0, "outside"), ("delay_ticks", 100, "outside"),
    ("enabled", "yes", "expected bool"), ("accel_noise", float("nan"), "finite")])
def test_bad_sensor_figures_are_refused_with_the_key(key: str, value: Any, reason: str) -> None:
    rig = Rig()
    with pytest.raises(ConfigError, match=rf"sim\.sensors\.{key}: .*{reason}"):
        SensorConfig.from_sim({"sensors": {key: value}}, rig.cfg.path)


def test_sim_state_is_the_ground_truth() -> None:
    rig = standing()
    robot = rig.robot
    assert isinstance(robot, PhysicsRobot)
    s = msgs.sim_state_t.decode(robot.sim_state(123))
    t = robot.truth()
    assert s.utime == 123
    assert s.sim_time == pytest.approx(rig.ctl.tick * rig.cfg.dt)
    assert np.array_equal(s.position, t.position) and np.array_equal(s.quaternion, t.quaternion)
    assert np.array_equal(s.velocity, t.velocity)
    assert np.allclose(s.q, robot.q, atol=1e-6)
    assert set(s.contacts) == {f"{leg}_foot" for leg in rig.cfg.legs} == set(t.contacts)


def core_modules() -> list[Path]:
    folders = ("protocol", "core", "behaviours", "motion", "robot")
    return [p for f in folders for p in (ROOT / "controller" / f).rglob("*.py")]


def test_nothing_in_the_controller_reads_sim_state() -> None:
    """The only mention of sim_state below the sim is its channel's name in
    the config; the runtime never subscribes to it."""
    mentions = []
    for path in core_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and "sim_state" in node.value:
                mentions.append(path.relative_to(ROOT).as_posix())
            if isinstance(node, ast.Attribute) and node.attr == "sim_state_t":
                mentions.append(path.relative_to(ROOT).as_posix())
    assert set(mentions) == {"controller/robot/config/lcm.py"}

    class Bus:
        def __init__(self) -> None:
            self.subscribed: list[str] = []
            self.published: list[str] = []
            self.taken = {"command": 0, "joint": 0}
            self.crc = {"command": 0, "joint": 0}

        def subscribe(self, port: str, channel: str) -> None:
            self.subscribed.append(channel)

        def drain(self, ports: Sequence[str] | None = None) -> list[tuple[str, bytes]]:
            return []

        def publish(self, port: str, channel: str, data: Any) -> None:
            self.published.append(channel)

    for sim in (None, PhysicsRobot(Rig().cfg)):
        rig = Rig(sim=False)
        bus = Bus()
        rt = Runtime(rig.ctl, bus, sim=sim)
        rt._tick(rig.now_ns)
        ch = rig.cfg.lcm.channels
        assert ch["sim_state"] not in bus.subscribed
        # With a sim, the first tick publishes the readings it takes in and,
        # after its joint_cmd has moved the body, the next tick's.
        readings = 2 if sim is not None else 0
        assert bus.published.count(ch["sim_state"]) == readings
        assert bus.published.count(ch["imu"]) == readings
        if sim is not None:
            order = [c for c in bus.published if c in (ch["sim_state"], ch["joint_cmd"])]
            assert order == [ch["sim_state"], ch["joint_cmd"], ch["sim_state"]]


def test_the_controller_ignores_a_sim_state_in_its_inbox() -> None:
    """Same inputs plus a sim_state claiming the robot is upside down: the
    controller's outputs are byte-identical."""
    a, b = physics_rig(), physics_rig()
    lie = msgs.sim_state_t()
    lie.quaternion = [0.0, 1.0, 0.0, 0.0]
    for rig in (a, b):
        rig.send(12)
    for _ in range(300):
        b.raw(b.ch["sim_state"], lie.encode())
        a.tick()
        b.tick()
        assert a.last_out is not None and b.last_out is not None
        assert [bytes(m[2]) for m in a.last_out.messages] == [bytes(m[2]) for m in b.last_out.messages]
