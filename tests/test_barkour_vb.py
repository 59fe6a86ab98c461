"""Google Barkour vB (a second test robot from its maker's model, on the
Unitree Go1's pattern, tests/test_go1.py): config/barkour_vb.yaml is
`motionctl new-robot barkour_vb` with only the maker's figures put in, and
its body is the maker's MJCF (config/physics/barkour_vb.xml, MuJoCo
Menagerie's figures, meshes left out, the feet Menagerie's MJX spheres) as
the simulator builds it. What it scores is docs/robots/barkour_vb.md."""
from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest
from maker_model import assert_the_body_keeps_the_makers_figures

from controller.robot.config import Geometry, load_config
from controller.robot.kinematics import QuadrupedKinematics
from controller.sim.trial import Trial

CFG = load_config(Path(__file__).resolve().parents[1] / "config" / "barkour_vb.yaml")
assert isinstance(CFG.geometry, Geometry)
GEOMETRY = CFG.geometry
MAKER = CFG.path.parent / "physics" / "barkour_vb.xml"
JOINTS: list[str] = CFG.sim["mjcf_joints"]         # the model's joints, in the wire's order
FEET: dict[str, str] = CFG.sim["mjcf_feet"]

# Menagerie's figures (google_barkour_vb/barkour_vb.xml), written again here
# so that a slip in the transcription shows: body -> mass (kg).
MASSES = {"torso": 6.04352,
          **{f"leg_{s}": 0.787 for s in ("front_left", "hind_left", "front_right", "hind_right")},
          **{f"upper_leg_{s}": 1.155 for s in ("front_left", "hind_left", "front_right", "hind_right")},
          **{b: 0.171238 for b in ("lower_leg_front_left", "lower_leg_2", "lower_leg_3", "lower_leg_4")}}


def maker() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(MAKER))


def test_the_makers_file_carries_menageries_figures() -> None:
    m = maker()
    assert {m.body(b).name: float(m.body_mass[b]) for b in range(1, m.nbody)} == MASSES
    assert sum(m.body_mass) == pytest.approx(14.496472)
    for j in range(1, m.njnt):
        name, dof = m.joint(j).name, m.jnt_dofadr[j]
        assert (m.dof_damping[dof], m.dof_armature[dof], m.dof_frictionloss[dof]) == (0.024, 0.011, 0.13), name
        kind = name.split("_")[0]
        ranges = {"abduction": [-1.0472, 1.0472], "hip": [-1.54706, 3.02902], "knee": [0.0, 2.44346]}
        np.testing.assert_array_equal(m.jnt_range[j], ranges[kind], err_msg=name)
    for a in range(m.nu):
        np.testing.assert_array_equal(m.actuator_forcerange[a], [-18.0, 18.0])
        assert m.actuator_gainprm[a][0] == 50.0 and list(m.actuator_biasprm[a][:3]) == [0.0, -50.0, -0.5]
    # The maker's collision shapes are all meshes, left out; the feet are
    # Menagerie's MJX spheres, and the torso ours: the box of its inertial.
    colliding = [g for g in range(m.ngeom) if m.geom_contype[g] or m.geom_conaffinity[g]]
    assert sorted(m.geom(g).name for g in colliding) == sorted([*FEET.values(), "torso_box"])
    box, torso = m.geom("torso_box"), m.body("torso").id
    assert m.geom_bodyid[box.id] == torso and m.geom_type[box.id] == mujoco.mjtGeom.mjGEOM_BOX
    i_x, i_y, i_z = m.body_inertia[torso]
    equivalent = np.sqrt(6.0 / m.body_mass[torso] * np.array([i_y + i_z - i_x, i_x + i_z - i_y, i_x + i_y - i_z])) / 2
    np.testing.assert_allclose(m.geom_size[box.id], equivalent, atol=1e-4)
    np.testing.assert_allclose(m.geom_pos[box.id], m.body_ipos[torso])
    np.testing.assert_allclose(m.geom_quat[box.id], m.body_iquat[torso], atol=1e-6)
    # The feet touch the floor, never the torso box they fold under.
    excluded = {(int(a), int(b)) for a, b in zip(m.exclude_signature >> 16, m.exclude_signature & 0xFFFF)}
    for foot in FEET.values():
        leg = int(m.geom_bodyid[m.geom(foot).id])
        assert (min(torso, leg), max(torso, leg)) in excluded, foot
    for g in colliding:
        if g == box.id:
            continue
        assert m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE and m.geom_size[g][0] == 0.0175
        np.testing.assert_array_equal(m.geom_pos[g], [-0.21425, -0.0779806, 0.0])
        np.testing.assert_array_equal(m.geom_solimp[g][:3], [0.015, 1.0, 0.031])
        np.testing.assert_array_equal(m.geom_friction[g], [0.8, 0.02, 0.01])
    assert m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    key = m.key("home")
    np.testing.assert_array_equal(key.qpos[:7], [0, 0, 0.28, 1, 0, 0, 0])
    np.testing.assert_array_equal(key.qpos[7:], [0.0, 0.5, 1.0] * 4)


def test_the_simulated_body_keeps_every_figure_of_the_makers_model() -> None:
    """The simulator swaps the actuators for its motors and adds the floor,
    the IMU and its sensors and the foot sites; the bodies, joints and
    collision shapes stay as the maker's file gives them (the torso renamed
    trunk, the feet <leg>_foot)."""
    sim = assert_the_body_keeps_the_makers_figures(CFG, MAKER, "torso", FEET)
    assert sum(sim.body_mass) == pytest.approx(14.496472)
    # The IMU: the simulator's, at the body origin (the maker's IMU frame,
    # 6 cm lower and turned half a turn about z, is left out).
    np.testing.assert_array_equal(sim.site("imu").pos, [0.0, 0.0, 0.0])


def test_the_configs_leg_is_the_makers_leg() -> None:
    """geometry and the joint map, derived from the model: hip offsets where
    each hip axis meets its abduction axis, abad_link the foot plane's
    offset, hip_link and knee_link the knee and foot distances. Through the
    joint map the controller's legs put the feet where the model does, to
    0.35 mm (the hind left's lower leg sits that much further out)."""
    m = maker()
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    at = {m.joint(j).name: d.xanchor[j].copy() for j in range(1, m.njnt)}
    legs = {"FL": "front_left", "RL": "hind_left", "FR": "front_right", "RR": "hind_right"}
    for leg, side in legs.items():
        abad, hip, knee = at[f"abduction_{side}"], at[f"hip_{side}"], at[f"knee_{side}"]
        foot = d.geom_xpos[m.geom(FEET[leg]).id]
        offset = np.asarray(GEOMETRY.hip_offsets[CFG.legs.index(leg)])
        np.testing.assert_allclose(offset, [hip[0], abad[1], abad[2]], atol=1e-6, err_msg=leg)
        assert abs(hip[2] - abad[2]) < 1e-9                 # the hip axis meets the abduction axis
        assert np.linalg.norm(knee - hip) == pytest.approx(np.hypot(GEOMETRY.hip_link, knee[1] - hip[1]))
        assert np.linalg.norm((foot - knee)[[0, 2]]) == pytest.approx(GEOMETRY.knee_link, abs=1e-6)
        lateral = abs(foot[1] - abad[1])
        assert lateral == pytest.approx(GEOMETRY.abad_link, abs=0.00036), leg
    kin = QuadrupedKinematics(GEOMETRY)
    rng = np.random.default_rng(7)
    feet = [m.geom(FEET[leg]).id for leg in CFG.legs]
    worst = 0.0
    for _ in range(200):
        q = rng.uniform(CFG.q_min, CFG.q_max)
        d.qpos[:] = m.qpos0
        for name, angle in zip(JOINTS, CFG.joint_map.positions_to_wire(q)):
            d.qpos[m.joint(name).qposadr[0]] = angle
        mujoco.mj_kinematics(m, d)
        worst = max(worst, float(np.abs(kin.forward(q.reshape(4, 3)) - d.geom_xpos[feet]).max()))
    assert worst < 0.0004


def test_limits_torques_and_stand_height_are_the_models() -> None:
    """joint_limits are the model's ranges through the joint map (each
    range's ends mapped, the knee's swapped), torque_limit its actuators'
    force ranges, stand_height its home key, at which the feet touch the
    floor."""
    m = maker()
    lo, hi = [], []
    for name in JOINTS:
        lo.append(m.jnt_range[m.joint(name).id][0])
        hi.append(m.jnt_range[m.joint(name).id][1])
    a = CFG.joint_map.positions_from_wire(np.array(lo))
    b = CFG.joint_map.positions_from_wire(np.array(hi))
    np.testing.assert_allclose(CFG.q_min, np.minimum(a, b), atol=2e-7)
    np.testing.assert_allclose(CFG.q_max, np.maximum(a, b), atol=2e-7)
    np.testing.assert_array_equal(CFG.torque_limit, np.full(12, 18.0))
    key = m.key("home")
    assert CFG.stand_height == key.qpos[2]
    d = mujoco.MjData(m)
    d.qpos[:] = key.qpos
    mujoco.mj_kinematics(m, d)
    lowest = min(d.geom_xpos[m.geom(f).id][2] - 0.0175 for f in FEET.values())
    assert abs(lowest) < 0.001
    # The key in the controller's convention: hips back, knees bent backward.
    home = CFG.joint_map.positions_from_wire(np.array([key.qpos[m.joint(n).qposadr[0]] for n in JOINTS]))
    np.testing.assert_allclose(home.reshape(4, 3), [[0.0, 0.5 - np.pi / 2, 8 * np.pi / 9 - 1.0]] * 4, atol=1e-6)
    assert GEOMETRY.mass == pytest.approx(sum(m.body_mass), abs=0.001)


def test_the_joints_damping_and_the_feet_sink_come_from_the_makers_model() -> None:
    """Not written in config/barkour_vb.yaml: joint_damping is the model's
    0.024 N m s/rad on every joint; geometry.foot_sink what its soft feet
    (Menagerie's solimp 0.015 1 0.031) sink standing: 6.8 mm."""
    assert CFG.joint_damping is not None
    np.testing.assert_array_equal(CFG.joint_damping, np.full(12, 0.024))
    assert 0.005 <= GEOMETRY.foot_sink <= 0.009


@pytest.fixture(scope="module")
def trial() -> dict[str, object]:
    """One run: stand up (mode 12) from the fold, then trot at 0.5 m/s;
    ground truth recorded at the points the tests judge."""
    t = Trial(CFG)
    t.send(12)
    t.run(4.0)
    out: dict[str, object] = {"stand": t.robot.truth(), "bar": t.trace.bar[-1]}
    t.send(11, 3, vel_des=[0.5, 0.0, 0.0], step_height=[0.06, 0.06])
    t.run(2.0)
    x0, s0 = t.robot.truth().position[0], t.robot.data.time
    t.run(2.0)
    truth = t.robot.truth()
    out["vx"] = (truth.position[0] - x0) / (t.robot.data.time - s0)
    out["trot"] = truth
    return out


def test_barkour_stands_from_new_robots_defaults_and_the_makers_figures(trial: dict) -> None:
    truth = trial["stand"]
    assert truth.position[2] == pytest.approx(CFG.stand_height, abs=0.005)
    assert max(abs(a) for a in truth.rpy[:2]) < 0.05
    assert truth.contacts == {f"{leg}_foot" for leg in CFG.legs}
    assert trial["bar"] == 100


def test_barkour_trots_at_its_command(trial: dict) -> None:
    """0.5 m/s asked, judged on the simulator's ground truth."""
    assert trial["vx"] == pytest.approx(0.5, abs=0.1)
    truth = trial["trot"]
    assert truth.position[2] > CFG.stand_height - 0.04
    assert max(abs(a) for a in truth.rpy[:2]) < 0.1
