"""The humanoids' MuJoCo models (controller/sim/humanoid_model.py, figures in
config/physics/humanoid20.yaml and nao22.yaml).

The legs are generated from the config, so the sole sites must sit exactly
where the controller's kinematics (controller/robot/humanoid_kinematics.py)
puts the soles; the mass is the figures' sum; every config joint has its
motor with its torque limit. In physics, judged on ground truth: the stand
pose held by the config's stiff PD gains stands, level, at its height.
"""
from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import mujoco
import numpy as np
import pytest
import yaml

from controller.robot.config import Config, ConfigError, load_config
from controller.robot.humanoid_kinematics import LEG_SIDES, HumanoidGeometry, HumanoidLegKinematics
from controller.robot.mass_properties import load_figures
from controller.sim.humanoid_model import box_inertial, humanoid_mjcf
from controller.sim.model import TIMESTEP, physics_path
from controller.sim.physics import PhysicsRobot
from controller.sim.trial import Trial

ROBOTS = ("humanoid20", "nao22")
DROP_MARGIN = 0.002      # m, as controller/sim/physics.py places its robot
Z = np.array([0.0, 0.0, 1.0])


def config(robot: str) -> Config:
    return load_config(f"config/{robot}.yaml")


def mjcf(cfg: Config) -> str:
    path = physics_path(cfg)
    return humanoid_mjcf(cfg, load_figures(path), path)


def model(cfg: Config) -> tuple[mujoco.MjModel, mujoco.MjData]:
    m = mujoco.MjModel.from_xml_string(mjcf(cfg))
    return m, mujoco.MjData(m)


def figures(cfg: Config) -> dict[str, Any]:
    data = yaml.safe_load(physics_path(cfg).read_text())
    assert isinstance(data, dict)
    return data


def qpos_addresses(m: mujoco.MjModel, cfg: Config) -> np.ndarray:
    return np.array([m.jnt_qposadr[m.joint(n).id] for n in cfg.joint_names])


def kinematics(cfg: Config) -> HumanoidLegKinematics:
    assert isinstance(cfg.geometry, HumanoidGeometry)
    return HumanoidLegKinematics(cfg.geometry)


def at_origin(m: mujoco.MjModel, d: mujoco.MjData, qadr: np.ndarray, q: np.ndarray) -> None:
    """Base at the world origin, upright; joints at q; kinematics only."""
    d.qpos[:] = 0.0
    d.qpos[3] = 1.0
    d.qpos[qadr] = q
    mujoco.mj_kinematics(m, d)


def leg_joints(cfg: Config, i: int) -> np.ndarray:
    return cfg.leg_indices[6 * i:6 * i + 6]


def hip_yaw_axis(m: mujoco.MjModel, cfg: Config, i: int) -> np.ndarray:
    return np.array(m.jnt_axis[m.joint(cfg.joint_names[int(leg_joints(cfg, i)[0])]).id])


@pytest.mark.parametrize("robot", ROBOTS)
def test_the_model_loads_with_what_the_physics_body_expects(robot: str) -> None:
    cfg = config(robot)
    m, _ = model(cfg)
    assert m.opt.timestep == TIMESTEP
    trunk = m.body("trunk").id
    assert m.body_parentid[trunk] == 0
    root = m.joint("root")
    assert root.type[0] == mujoco.mjtJoint.mjJNT_FREE and root.bodyid[0] == trunk
    assert m.geom("floor").type[0] == mujoco.mjtGeom.mjGEOM_PLANE
    assert m.site("imu").bodyid[0] == trunk
    for name in ("imu_quat", "imu_gyro", "imu_acc"):
        assert m.sensor(name).objid[0] == m.site("imu").id
    for leg in cfg.legs:
        m.site(f"{leg}_sole")
    assert m.njnt == cfg.num_joints + 1 and m.nu == cfg.num_joints


@pytest.mark.parametrize("robot", ROBOTS)
def test_sole_sites_are_where_the_controllers_kinematics_puts_the_soles(robot: str) -> None:
    """Position to 1e-6 m (and orientation) over 500 random joint sets within
    the limits, every leg joint free: NAO's hip yaw-pitch too, which the
    controller's kinematics turns about the config's tilted
    `geometry.hip_yaw_axis`. The controller's torso frame is the trunk
    body's frame."""
    cfg = config(robot)
    m, d = model(cfg)
    kin = kinematics(cfg)
    qadr = qpos_addresses(m, cfg)
    rng = np.random.default_rng(11)
    worst_p = worst_r = 0.0
    for _ in range(500):
        q = rng.uniform(cfg.q_min, cfg.q_max)
        at_origin(m, d, qadr, q)
        for i, side in enumerate(LEG_SIDES):
            foot = kin.forward(q[leg_joints(cfg, i)], side)
            site = d.site(f"{side}_sole")
            worst_p = max(worst_p, float(np.abs(site.xpos - foot.position).max()))
            worst_r = max(worst_r, float(np.abs(site.xmat.reshape(3, 3) - foot.rotation).max()))
    assert worst_p < 1e-6
    assert worst_r < 1e-9


def axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * k @ k


@pytest.mark.parametrize("robot", ROBOTS)
def test_the_config_and_the_physics_file_agree_on_the_hip_yaw_axis(robot: str) -> None:
    """The controller reads its hip yaw axes from the config
    (geometry.hip_yaw_axis, default z); the simulator from the physics file
    (legs.hip_yaw_axis, default z). Same axes, and the model's joints have
    them. On NAO (Aldebaran "Joints": "Y-Z at 45 deg") they lean 45 degrees."""
    cfg = config(robot)
    m, _ = model(cfg)
    kin = kinematics(cfg)
    physics = figures(cfg)["legs"].get("hip_yaw_axis")
    for i, side in enumerate(LEG_SIDES):
        mine = np.array(kin.yaw_axis[side])
        theirs = Z if physics is None else np.array(physics[side]) / np.linalg.norm(physics[side])
        assert np.abs(mine - theirs).max() < 1e-8, side
        assert np.abs(hip_yaw_axis(m, cfg, i) - mine).max() < 1e-8, side
        tilt = np.degrees(np.arccos(abs(mine[2])))
        assert tilt == pytest.approx({"humanoid20": 0.0, "nao22": 45.0}[robot], abs=1e-6)


def test_nao_hip_yaw_pitch_turns_the_controllers_leg_about_naos_tilted_axis() -> None:
    """NAO's hip yaw-pitch is tilted 45 degrees in the y-z plane: the model
    is the leg with that joint at 0 turned about the tilted axis through the
    hip centre, and so is the controller's kinematics, exactly, at every
    angle. A vertical hip yaw (what the kinematics had before the axis
    was in the config) is off by centimetres once the joint moves."""
    cfg = config("nao22")
    m, d = model(cfg)
    kin = kinematics(cfg)
    assert isinstance(cfg.geometry, HumanoidGeometry)
    vertical = HumanoidLegKinematics(replace(cfg.geometry, hip_yaw_axis={s: (0.0, 0.0, 1.0)
                                                                         for s in LEG_SIDES}))
    qadr = qpos_addresses(m, cfg)
    axes = figures(cfg)["legs"]["hip_yaw_axis"]
    rng = np.random.default_rng(5)
    worst, mine, apart = 0.0, 0.0, 0.0
    for _ in range(200):
        q = rng.uniform(cfg.q_min, cfg.q_max)
        at_origin(m, d, qadr, q)
        for i, side in enumerate(LEG_SIDES):
            axis = np.array(axes[side]) / np.linalg.norm(axes[side])
            legs = q[leg_joints(cfg, i)]
            flat = kin.forward([0.0, *legs[1:]], side)
            hip = np.array(kin.hip[side])
            turn = axis_rotation(axis, legs[0])
            site = d.site(f"{side}_sole")
            worst = max(worst, float(np.abs(site.xpos - (hip + turn @ (flat.position - hip))).max()),
                        float(np.abs(site.xmat.reshape(3, 3) - turn @ flat.rotation).max()))
            foot = kin.forward(legs, side)
            mine = max(mine, float(np.abs(site.xpos - foot.position).max()),
                       float(np.abs(site.xmat.reshape(3, 3) - foot.rotation).max()))
            apart = max(apart, float(np.abs(site.xpos - vertical.forward(legs, side).position).max()))
    assert worst < 1e-9
    assert mine < 1e-9
    assert apart > 0.02


def test_nao_turns_in_place_in_physics() -> None:
    """A short physics run of the turn that needs the tilted axis: from the
    stand (mode 12), the walk (11/3) at 0.3 rad/s for 4 s turns the trunk
    (ground truth) by most of the commanded angle, to the left, upright and
    on its feet. With the vertical-axis IK the same run turned 0.07 rad,
    drifted 17 cm and rocked past 0.15 rad."""
    cfg = config("nao22")
    trial = Trial(cfg)
    trial.send(12)
    trial.run(3.0)
    start = len(trial.trace.t)
    trial.send(11, 3, vel_des=[0.0, 0.0, 0.3])
    trial.run(4.0)
    tr = trial.trace
    assert tr.mode[-1] == 11
    yaw = np.unwrap(np.array(tr.rpy[start:])[:, 2])
    assert 0.75 < yaw[-1] - yaw[0] < 1.3, yaw[-1] - yaw[0]     # 1.2 rad commanded, ramped in
    tilt = np.abs(np.array(tr.rpy[start:])[:, :2]).max()
    assert tilt < 0.15, tilt
    feet = {f"{leg}_foot" for leg in cfg.legs}
    assert all(c <= feet for c in tr.contacts[start:])
    drift = np.linalg.norm(np.array(tr.position[-1][:2]) - np.array(tr.position[start][:2]))
    assert drift < 0.05, drift


def masses(link: dict[str, Any]) -> float:
    return sum(masses(p) for p in link["parts"]) if "parts" in link else float(link["mass"])


@pytest.mark.parametrize("robot", ROBOTS)
def test_total_mass_is_the_figures_sum(robot: str) -> None:
    cfg = config(robot)
    m, _ = model(cfg)
    fig = figures(cfg)
    leg = sum(masses(link) for link in fig["legs"]["links"].values())
    arm = sum(masses(j["link"]) for j in fig["arm"])
    head = sum(masses(j["link"]) for j in fig["head"])
    expected = masses(fig["trunk"]) + 2 * leg + 2 * arm + head
    assert m.body_subtreemass[m.body("trunk").id] == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx({"humanoid20": 5.0, "nao22": 5.30539}[robot], abs=1e-6)
    assert expected == pytest.approx(cfg.geometry.mass, rel=0.01)   # the controller's load model


@pytest.mark.parametrize("robot", ROBOTS)
def test_every_joint_has_its_motor_torque_limit_range_and_actuator_figures(robot: str) -> None:
    cfg = config(robot)
    m, _ = model(cfg)
    acts = figures(cfg)["actuators"]
    for k, name in enumerate(cfg.joint_names):
        motor = m.actuator(name)
        assert motor.trntype[0] == mujoco.mjtTrn.mjTRN_JOINT and motor.trnid[0] == m.joint(name).id
        assert tuple(motor.forcerange) == pytest.approx((-cfg.torque_limit[k], cfg.torque_limit[k]))
        assert motor.forcelimited[0] and motor.gaintype[0] == mujoco.mjtGain.mjGAIN_FIXED
        j = m.joint(name)
        assert tuple(j.range) == pytest.approx((cfg.q_min[k], cfg.q_max[k]))
        (act,) = [a for a in acts.values() if any(name == b or name.endswith("_" + b) for b in a["joints"])]
        assert (float(j.armature[0]), float(m.dof_damping[j.dofadr[0]]),
                float(m.dof_frictionloss[j.dofadr[0]])) == pytest.approx(
                    (act["armature"], act["damping"], act["frictionloss"]))


def test_a_joint_without_an_actuator_type_is_a_config_error() -> None:
    cfg = config("humanoid20")
    fig = copy.deepcopy(load_figures(physics_path(cfg)))
    fig["actuators"]["mx64"]["joints"].remove("elbow")
    with pytest.raises(ConfigError, match=r"no actuator type for joints \['r_elbow', 'l_elbow'\]"):
        humanoid_mjcf(cfg, fig, physics_path(cfg))


def test_box_inertia_is_the_solid_box() -> None:
    i = box_inertial(1.2, np.array([0.0, 0.0, -0.1]), np.array([0.1, 0.2, 0.3]))
    assert np.allclose(np.diag(i.inertia), [1.2 / 12 * (0.04 + 0.09), 1.2 / 12 * (0.01 + 0.09),
                                             1.2 / 12 * (0.01 + 0.04)])


def place(m: mujoco.MjModel, d: mujoco.MjData, qadr: np.ndarray, q: np.ndarray) -> None:
    """Joints at q, trunk level, the lowest geom DROP_MARGIN above the floor
    (as PhysicsRobot places its robot)."""
    at_origin(m, d, qadr, q)
    floor = m.geom("floor").id
    lowest = np.inf
    for g in range(m.ngeom):
        if g == floor:
            continue
        rot = d.geom_xmat[g].reshape(3, 3)
        size = m.geom_size[g]
        if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE:
            reach = size[0]
        elif m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE:
            reach = size[0] + abs(rot[2, 2]) * size[1]
        else:
            reach = float(np.abs(rot[2]) @ size[:3])
        lowest = min(lowest, float(d.geom_xpos[g][2] - reach))
    d.qpos[2] -= lowest - DROP_MARGIN
    mujoco.mj_forward(m, d)


def rpy(quat: np.ndarray) -> tuple[float, float]:
    w, x, y, z = quat
    return (float(np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))),
            float(np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))))


@pytest.mark.parametrize("robot", ROBOTS)
def test_the_stand_pose_held_stiff_for_one_second_stands_level_at_its_height(robot: str) -> None:
    """The config's stand pose, placed on the floor and held by its stiffest
    stand gains (`recovery`, mode 12's) with the motor law of
    controller/sim/physics.py (PD at every physics step, clipped to the
    torque limit): the trunk stays within 3 cm of stand_height, roll and
    pitch under 0.1 rad, on its two soles. Friction and damping are the
    figures', not tuned for this."""
    cfg = config(robot)
    m, d = model(cfg)
    qadr = qpos_addresses(m, cfg)
    vadr = np.array([m.jnt_dofadr[m.joint(n).id] for n in cfg.joint_names])
    act = np.array([m.actuator(n).id for n in cfg.joint_names])
    q_des = cfg.poses["stand"]
    gains = cfg.gains["recovery"]
    floor = m.geom("floor").id
    place(m, d, qadr, q_des)
    heights, tilts = [], []
    for _ in range(int(round(1.0 / m.opt.timestep))):
        tau = gains.kp * (q_des - d.qpos[qadr]) - gains.kd * d.qvel[vadr]
        d.ctrl[act] = np.clip(tau, -cfg.torque_limit, cfg.torque_limit)
        mujoco.mj_step(m, d)
        heights.append(float(d.qpos[2]))
        tilts.append(max(abs(a) for a in rpy(d.qpos[3:7])))
    assert max(abs(h - cfg.stand_height) for h in heights) < 0.03, (min(heights), max(heights))
    assert max(tilts) < 0.1, max(tilts)
    touching = {m.geom(int(g)).name for pair in d.contact.geom[:d.ncon] if floor in pair
                for g in pair if g != floor}
    assert touching == {f"{leg}_foot" for leg in cfg.legs}


@pytest.mark.parametrize("robot", ROBOTS)
def test_the_physics_body_runs_the_humanoid_model(robot: str) -> None:
    """PhysicsRobot (controller/sim/physics.py) takes the model as it is:
    actuators by joint name, the floor, the imu sensors; it starts in the
    config's sim start pose on its soles."""
    cfg = config(robot)
    robot_body = PhysicsRobot(cfg)
    start = cfg.poses[cfg.sim.get("start_pose", "fold")]
    gains = cfg.gains["recovery"]
    zero = np.zeros(cfg.num_joints)
    for _ in range(100):
        robot_body.step(start, zero, gains.kp, gains.kd, zero, cfg.dt)
    truth = robot_body.truth()
    assert truth.contacts == {f"{leg}_foot" for leg in cfg.legs}
    assert max(abs(a) for a in truth.rpy[:2]) < 0.1
    assert np.abs(robot_body.q - start).max() < 0.1


@pytest.mark.parametrize("robot", ["humanoid20", "nao22"])
def test_the_command_timeout_sits_the_humanoid_down_upright_in_physics(robot: str) -> None:
    # Issue 19: for a biped the timeout's "lie down" is a controlled sit, not
    # a collapse onto its back. Judged on ground truth.
    from controller.sim.trial import Trial
    trial = Trial(load_config(f"config/{robot}.yaml"))
    trial.send(12)
    for _ in range(1500):
        trial.tick()
    for _ in range(3000):                    # the heartbeat stops: 6 s
        trial.tick(heartbeat=False)
    assert trial.trace.mode[-1] == 7
    velocity = np.array(trial.trace.velocity)
    assert velocity[:, 2].min() > -0.5       # no drop
    roll, pitch, _ = trial.trace.rpy[-1]
    assert max(abs(roll), abs(pitch)) < 0.3, trial.trace.rpy[-1]
