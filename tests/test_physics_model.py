"""The MuJoCo model and physics robot (controller/sim/model.py, controller/sim/physics.py).

The model is generated from the robot config, so its feet must sit exactly
where the controller's kinematics puts them; its mass is the published
figures' sum. In physics, judged on ground truth (never on the controller's
own numbers): the stand stands at the configured height, level, on its four
feet, and a client that stops heart-beating has the robot lie down softly.
"""
from __future__ import annotations

from dataclasses import replace

import mujoco
import numpy as np
import pytest
import yaml
from harness import Rig

from controller.robot.config import Geometry, load_config
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.mass_properties import Inertial, combine, inertia_matrix
from controller.sim.joint_sim import SimRobot
from controller.sim.mjcf import robot_mjcf
from controller.sim.model import physics_path
from controller.sim.physics import PhysicsRobot
from controller.sim.robot import JOINT, PHYSICS, make_sim

CFG = load_config()
assert isinstance(CFG.geometry, Geometry)
GEO: Geometry = CFG.geometry
FEET = frozenset(f"{leg}_foot" for leg in CFG.legs)


def model() -> tuple[mujoco.MjModel, mujoco.MjData]:
    m = mujoco.MjModel.from_xml_string(robot_mjcf(CFG))
    return m, mujoco.MjData(m)


def test_model_feet_and_lower_legs_are_where_the_controllers_kinematics_puts_them() -> None:
    m, d = model()
    assert isinstance(CFG.geometry, Geometry)
    kin = QuadrupedKinematics(CFG.geometry)
    qadr = [m.jnt_qposadr[m.joint(n).id] for n in CFG.joint_names]
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(500):
        q = rng.uniform(CFG.q_min, CFG.q_max)
        d.qpos[:] = 0.0
        d.qpos[3] = 1.0          # base at the origin, upright
        d.qpos[qadr] = q
        mujoco.mj_kinematics(m, d)
        feet = np.array([d.site(f"{leg}_foot").xpos for leg in CFG.legs])
        worst = max(worst, float(np.abs(feet - kin.forward(q.reshape(4, 3))).max()))
        # The lower legs too: a ball foot rolls with its lower leg
        # (QuadrupedKinematics.rolled), so their orientation must be the model's.
        shanks = np.array([d.body(f"{leg}_knee").xmat.reshape(3, 3) for leg in CFG.legs])
        worst = max(worst, float(np.abs(shanks - kin.shank_rotation(q.reshape(4, 3))).max()))
    assert worst < 1e-6


def test_a_ball_foot_rolls_its_radius_times_its_tilt() -> None:
    kin = QuadrupedKinematics(GEO)
    q = np.tile([0.0, -0.94, 1.47], (4, 1))
    assert np.abs(kin.rolled(q, q, np.eye(3))).max() == 0.0
    # The knee bent 0.1 rad more: the lower leg pitches 0.1 rad back (about -y
    # in the body frame), so the ball rolls back 0.1 r; a yaw of the whole body
    # rolls nothing.
    bent = q.copy()
    bent[:, 2] += 0.1
    rolled = kin.rolled(q, bent, np.eye(3))
    assert rolled[:, 0] == pytest.approx(np.full(4, -0.1 * GEO.foot_radius), rel=1e-9)
    assert np.abs(rolled[:, 1:]).max() < 1e-12
    c, s = np.cos(0.3), np.sin(0.3)
    yaw = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    assert np.abs(kin.rolled(q, q, yaw)).max() < 1e-12


def test_model_mass_and_limits_come_from_the_figures_and_the_config() -> None:
    m, _ = model()
    figures = yaml.safe_load(physics_path(CFG).read_text())
    links = sum(figures["links"][k]["mass"] for k in ("abad", "hip", "knee"))
    expected = figures["trunk"]["mass"] + 4 * links + 12 * figures["rotors"]["mass"]
    assert m.body_subtreemass[m.body("trunk").id] == pytest.approx(expected, rel=1e-9)
    for k, name in enumerate(CFG.joint_names):
        j = m.joint(name)
        assert tuple(j.range) == pytest.approx((CFG.q_min[k], CFG.q_max[k]))
        assert float(j.armature[0]) == figures["actuator"]["armature"]
        assert tuple(m.actuator(name).forcerange) == pytest.approx((-CFG.torque_limit[k], CFG.torque_limit[k]))


def test_combined_inertia_follows_the_parallel_axis_theorem() -> None:
    a = Inertial(1.0, np.array([0.1, 0.0, 0.0]), inertia_matrix([1e-3, 2e-3, 3e-3, 0, 0, 0]))
    b = Inertial(1.0, np.array([-0.1, 0.0, 0.0]), inertia_matrix([1e-3, 2e-3, 3e-3, 0, 0, 0]))
    both = combine([a, b])
    assert both.mass == 2.0 and np.allclose(both.com, 0.0)
    # Each mass 0.1 m off the x axis adds m d^2 = 0.01 about y and z, nothing about x.
    assert np.allclose(np.diag(both.inertia), [2e-3, 4e-3 + 0.02, 6e-3 + 0.02])
    mirrored = Inertial(1.0, np.array([0.0, 0.2, 0.0]),
                        inertia_matrix([1.0, 1.0, 1.0, 0.1, 0.2, 0.3])).mirrored_y()
    assert mirrored.com[1] == -0.2
    assert (mirrored.inertia[0, 1], mirrored.inertia[0, 2], mirrored.inertia[1, 2]) == (-0.1, 0.2, -0.3)


def physics_rig() -> Rig:
    rig = Rig()
    rig.robot = PhysicsRobot(rig.cfg)
    return rig


def stood_up() -> tuple[Rig, PhysicsRobot]:
    rig = physics_rig()
    robot = rig.robot
    assert isinstance(robot, PhysicsRobot)
    rig.run(20)
    rig.send(12)
    rig.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 5000)
    rig.run(500)
    return rig, robot


def test_the_stand_stands_at_its_height_level_on_four_feet_in_physics() -> None:
    rig, robot = stood_up()
    heights, tilts = [], []
    for _ in range(250):          # 0.5 s of standing
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        truth = robot.truth()
        heights.append(truth.position[2])
        tilts.append(max(abs(truth.rpy[0]), abs(truth.rpy[1])))
        assert truth.contacts == FEET, truth.contacts
    # The legs carry the weight by feed-forward: no sag of weight / kp (5.7 mm
    # on the PD alone).
    assert abs(np.median(heights) - CFG.stand_height) < 0.002, np.median(heights)
    assert max(tilts) < 0.02
    assert np.ptp(heights) < 0.002       # still, not bouncing


def test_a_client_that_stops_heart_beating_has_the_robot_lie_down_softly() -> None:
    rig, robot = stood_up()
    touch_down = None
    for _ in range(1000):           # 2 s without a heartbeat: timeout at 0.5 s, then the damper
        rig.tick(heartbeat=False)
        truth = robot.truth()
        if touch_down is None and "trunk_shell" in truth.contacts:
            touch_down = -truth.velocity[2]
        assert max(abs(truth.rpy[0]), abs(truth.rpy[1])) < 0.3    # never tips over
    assert rig.mode == 7
    truth = robot.truth()
    assert "trunk_shell" in truth.contacts          # lying on its belly
    assert truth.position[2] < 0.5 * CFG.stand_height
    assert touch_down is not None
    assert touch_down < 0.3                         # m/s: let down, not dropped (issue 17's bar)


def test_physics_is_deterministic_bit_for_bit() -> None:
    runs: list[np.ndarray] = []
    for _ in range(2):
        rig = physics_rig()
        rig.run(20)
        rig.send(12)
        rig.run(600)
        robot = rig.robot
        assert isinstance(robot, PhysicsRobot)
        runs.append(robot.data.qpos.copy())
    assert runs[0].tobytes() == runs[1].tobytes()


def test_motiond_sim_is_physics_where_a_model_exists_else_the_joint_sim() -> None:
    dog = Rig()
    robot, kind = make_sim(dog.cfg, dog.ctl.kin)
    assert kind == PHYSICS and isinstance(robot, PhysicsRobot)
    robot, kind = make_sim(dog.cfg, dog.ctl.kin, JOINT)
    assert kind == JOINT and isinstance(robot, SimRobot)
    humanoid = Rig("config/humanoid20.yaml")
    robot, kind = make_sim(humanoid.cfg, humanoid.ctl.kin)
    assert kind == PHYSICS and isinstance(robot, PhysicsRobot)
    # A robot whose physics figures are missing runs on the joint-space sim.
    unmodelled = replace(dog.cfg, sim={**dog.cfg.sim, "physics": "no-such-figures.yaml"})
    robot, kind = make_sim(unmodelled, dog.ctl.kin)
    assert kind == JOINT and isinstance(robot, SimRobot)
    with pytest.raises(ValueError, match="simulator 'mujoco'"):
        make_sim(dog.cfg, dog.ctl.kin, "mujoco")


def test_the_motor_law_is_the_drivers_at_the_current_state_clipped_to_the_limit() -> None:
    """What each motor applies, evaluated by MuJoCo at every physics step:
    tau_ff + kp (q_des - q) + kd (qd_des - qd), clipped to the torque limit."""
    robot = PhysicsRobot(CFG)
    rng = np.random.default_rng(3)
    n = CFG.num_joints
    for kp_scale in (20.0, 2000.0):                  # the second saturates most joints
        q_des = robot.q + rng.uniform(-0.2, 0.2, n)
        qd_des = rng.uniform(-1.0, 1.0, n)
        kp, kd = np.full(n, kp_scale), np.full(n, 1.0)
        tau_ff = rng.uniform(-1.0, 1.0, n)
        robot.step(q_des, qd_des, kp, kd, tau_ff, CFG.dt)
        mujoco.mj_forward(robot.model, robot.data)    # the force at the state reached
        applied = robot.data.actuator_force[robot.act]
        expected = np.clip(tau_ff + kp * (q_des - robot.q) + kd * (qd_des - robot.qd),
                           -CFG.torque_limit, CFG.torque_limit)
        assert np.allclose(applied, expected, atol=1e-9)
    assert np.isclose(np.abs(applied), CFG.torque_limit).sum() >= n // 2


@pytest.mark.parametrize("rpy", [(0.0, 0.0, 0.3), (0.0, 0.2, 0.0)])
def test_a_relative_pose_turns_the_body_as_told_with_its_feet_still(rpy: tuple[float, float, float]) -> None:
    # The ball feet roll as the legs tilt; a pose that pinned their centres
    # turned CyberDog 2 0.35 rad for 0.3 of yaw.
    rig, robot = stood_up()
    start = np.array(robot.truth().rpy)
    feet_ids = [robot.model.site(f"{leg}_foot").id for leg in CFG.legs]
    rig.send(21, 0, duration=1000, rpy_des=list(rpy), contact=15)
    rig.run(1500)
    turned = np.array(robot.truth().rpy) - start
    # The body turns by -rpy_des, as the CyberDog 2's does (SPEC §6.1).
    assert turned == pytest.approx(-np.array(rpy), abs=0.03), turned
    assert robot.truth().contacts == FEET
    assert robot.data.site_xpos[feet_ids][:, 2].max() < GEO.foot_radius + 0.002


@pytest.mark.parametrize("config", ["config/cyberdog2.yaml", "config/go2.yaml"])
def test_the_drawn_head_and_colours_change_nothing_the_body_does(config: str) -> None:
    """The figures' `appearance` (a head and a face drawn on the trunk, the
    legs' colours) touches nothing and weighs nothing: the same pushes give
    the same motion, bit for bit, with and without it."""
    from controller.robot.mass_properties import load_figures
    from controller.sim.model import quadruped_mjcf

    cfg = load_config(config)
    path = physics_path(cfg)
    figures = load_figures(path)
    plain = {k: v for k, v in figures.items() if k != "appearance"}
    models = [mujoco.MjModel.from_xml_string(quadruped_mjcf(cfg, f, path)) for f in (figures, plain)]
    assert models[0].ngeom == models[1].ngeom + 2 and models[0].geom("look_head").contype == 0
    assert models[0].body_mass.tolist() == models[1].body_mass.tolist()
    ends = []
    for m in models:
        d = mujoco.MjData(m)
        d.qpos[2], d.qpos[3:7] = 0.35, [0.96, 0.2, 0.1, 0.1]   # dropped tumbling onto the floor
        rng = np.random.default_rng(0)
        for _ in range(2000):
            d.ctrl[:] = rng.normal(0.0, 3.0, m.nu)
            mujoco.mj_step(m, d)
        ends.append(d.qpos.copy())
    assert np.array_equal(ends[0], ends[1])


def test_a_bad_appearance_names_the_file_and_the_key() -> None:
    from controller.robot.config import ConfigError
    from controller.sim.model import quadruped_mjcf

    path = physics_path(CFG)
    figures = yaml.safe_load(path.read_text())
    figures["appearance"] = {"boxes": {"head": {"size": [0.1, 0.1], "pos": [0, 0, 0], "rgba": [1, 1, 1, 1]}}}
    with pytest.raises(ConfigError, match=r"cyberdog2.yaml: appearance.boxes: size and pos are 3 numbers"):
        quadruped_mjcf(CFG, figures, path)
    figures["appearance"] = {"legs": [2, 0, 0, 1]}
    with pytest.raises(ConfigError, match=r"appearance: .*four numbers 0-1"):
        quadruped_mjcf(CFG, figures, path)
