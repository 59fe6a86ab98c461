"""The real motor of a physics run (controller/sim/actuators.py), each part
held to its definition: the torque-speed envelope, the transport delay,
the encoder's steps, the gear's play, and the figures from the published
motor constants."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import mujoco
import numpy as np
import pytest

from controller.robot.config import ConfigError, load_config
from controller.robot.motors import envelope
from controller.robot.resources import CONFIG_DIR
from controller.sim.actuators import Actuators, MotorFigures, electric_envelope
from controller.sim.physics import PhysicsRobot
from controller.sim.world import World

CFG = load_config(CONFIG_DIR / "cyberdog2.yaml")
QUIET = replace(CFG, sim={**CFG.sim, "sensors": {"enabled": False}})
KNEE = 2                      # the front right knee, in the controller's order


def test_the_envelope_is_full_torque_to_the_knee_then_a_straight_line_to_none_braking_full() -> None:
    limit, knee, no_load = np.array([12.0]), np.array([20.0]), np.array([30.0])
    for speed, driving in [(0.0, 12.0), (10.0, 12.0), (20.0, 12.0), (25.0, 6.0), (30.0, 0.0), (40.0, 0.0)]:
        low, high = envelope(np.array([speed]), limit, knee, no_load)
        assert high[0] == pytest.approx(driving) and low[0] == pytest.approx(-12.0)
        low, high = envelope(np.array([-speed]), limit, knee, no_load)
        assert low[0] == pytest.approx(-driving) and high[0] == pytest.approx(12.0)


def test_cyberdog2s_envelope_comes_from_its_published_motor_constants() -> None:
    figures = MotorFigures.load(CFG, {"voltage": 24.0, "resistance": 0.173, "torque_constant": 0.05,
                                      "gear": 7.75}, {}, CONFIG_DIR)
    no_load = 24.0 / (2 * 0.05 * 7.75)
    assert figures.no_load_speed == pytest.approx(np.full(12, no_load))
    # At the knee the current the voltage still drives gives exactly the limit.
    w = figures.knee_speed[0]
    assert 7.75 * 1.5 * 0.05 * (24.0 - 2 * 0.05 * 7.75 * w) / 0.173 == pytest.approx(12.0)
    knee, _ = electric_envelope(np.array([100.0]), 24.0, 0.173, 0.05, 7.75)
    assert knee[0] == 0.0        # a limit beyond the stall torque: no flat part at all


def test_motor_figures_refuse_what_cannot_be() -> None:
    base = {"knee_speed": 20.0, "no_load_speed": 30.0}
    bads: list[dict[str, Any]] = [{"knee_speed": 30.0}, {"delay_s": 0.006}, {"encoder_resolution": -1.0},
                                  {"backlash": [0.1, 0.2]}, {"warp": 1}]
    for bad in bads:
        with pytest.raises(ConfigError, match="motor"):
            MotorFigures.load(CFG, base, bad, CONFIG_DIR)
    with pytest.raises(ConfigError, match="no_load_speed"):
        MotorFigures.load(CFG, {"delay_s": 0.002}, {}, CONFIG_DIR)


def _floating(world: dict[str, Any]) -> PhysicsRobot:
    """CyberDog 2 in the air without gravity: its joints move freely."""
    robot = PhysicsRobot(QUIET, World.from_spec(world, "test"))
    robot.model.opt.gravity[:] = 0.0
    robot.data.qpos[2] = 2.0
    mujoco.mj_forward(robot.model, robot.data)
    return robot


def _full_knee_torque(robot: PhysicsRobot, ticks: int) -> float:
    """Drive the knee with its full torque from rest (toward its far limit,
    2 rad away); its top speed."""
    z = np.zeros(12)
    tau = z.copy()
    tau[KNEE] = -12.0 if robot.q[KNEE] > 1.5 else 12.0
    top = 0.0
    for _ in range(ticks):
        robot.step(z, z, z, z, tau, CFG.dt)
        top = max(top, abs(float(robot.qd[KNEE])))
    return top


def test_a_knee_driven_at_full_torque_never_passes_its_no_load_speed() -> None:
    ideal = _full_knee_torque(_floating({}), 40)
    real_robot = _floating({"actuators": {}})
    real = _full_knee_torque(real_robot, 40)
    a = real_robot.actuators
    assert a is not None
    print(f"knee top speed: ideal {ideal:.1f} rad/s, real {real:.1f} rad/s "
          f"(knee {a.knee[KNEE]:.1f}, no load {a.no_load[KNEE]:.1f})")
    assert ideal > a.no_load[KNEE]
    assert a.knee[KNEE] < real < a.no_load[KNEE]


@pytest.mark.parametrize("delay_s", [0.0, 0.0015, 0.002, 0.0035, 0.004, 0.005])
def test_a_command_acts_after_its_transport_delay(delay_s: float) -> None:
    """A torque step sent at tick 1 shows in the motor's force at the end of
    the first tick whose last physics step is at least the delay later:
    tick floor(delay / step / 4) + 1 of 4 physics steps each."""
    robot = _floating({"actuators": {"delay_s": delay_s}})
    z = np.zeros(12)
    tau = z.copy()
    tau[KNEE] = 1.0
    seen = None
    for tick in range(1, 5):
        robot.step(z, z, z, z, tau, CFG.dt)
        if seen is None and abs(robot.tau[KNEE]) > 0.5:
            seen = tick
    steps = round(delay_s / robot.model.opt.timestep)
    assert seen == steps // robot.substeps + 1


def test_the_encoder_counts_in_steps_and_within_half_a_step() -> None:
    robot = _floating({"actuators": {"encoder_resolution": 0.01}})
    _full_knee_torque(robot, 5)
    seen, true = robot.reading.q, robot.q
    assert np.allclose(seen / 0.01, np.round(seen / 0.01), atol=1e-9)
    assert np.max(np.abs(seen - true)) <= 0.005 + 1e-12
    assert np.max(np.abs(seen - true)) > 0.0


def test_the_rotor_takes_up_the_play_before_it_follows_the_joint() -> None:
    a = Actuators(MotorFigures.load(CFG, {"knee_speed": 20.0, "no_load_speed": 30.0}, {}, CONFIG_DIR),
                  np.full(1, 12.0), np.full(1, 20.0), np.full(1, 30.0), np.full(1, 0.1), 0.0005, np.zeros(1))
    assert a.follow(np.array([0.04]))[0] == pytest.approx(-0.04)     # inside the play: the rotor stays
    assert a.follow(np.array([0.3]))[0] == pytest.approx(-0.05)      # pulled along, half the play behind
    assert a.follow(np.array([0.25]))[0] == pytest.approx(0.0)       # back: the play opens first
    assert a.follow(np.array([0.1]))[0] == pytest.approx(0.05)       # then the rotor is pushed back


def test_with_play_the_driver_holds_the_rotor_and_the_joint_rests_inside_the_play() -> None:
    """A joint held by kp alone, pushed by a small torque: with play it
    moves by half the play further than without (the law holds the rotor)."""
    def moved(backlash: float) -> float:
        robot = _floating({"actuators": {"backlash": backlash, "delay_s": 0.0}})
        q0 = robot.q.copy()
        z = np.zeros(12)
        kp, kd = np.full(12, 20.0), np.full(12, 0.5)
        push = z.copy()
        push[KNEE] = -0.5        # N m on top of the law, away from the folded knee's limit
        for _ in range(300):
            robot.step(q0, z, kp, kd, push, CFG.dt)
        return float(q0[KNEE] - robot.q[KNEE])
    assert moved(0.1) - moved(0.0) == pytest.approx(0.05, abs=0.005)


def test_frictionloss_replaces_the_physics_files_figure() -> None:
    robot = PhysicsRobot(CFG, World.from_spec({"actuators": {"frictionloss": 0.5}}, "test"))
    assert robot.model.dof_frictionloss[robot.vadr] == pytest.approx(np.full(12, 0.5))


def test_a_robot_without_motor_figures_refuses_real_actuators() -> None:
    humanoid = load_config(CONFIG_DIR / "humanoid20.yaml")
    with pytest.raises(ConfigError, match="no motor figures"):
        PhysicsRobot(humanoid, World.from_spec("real_actuators", "test"))
