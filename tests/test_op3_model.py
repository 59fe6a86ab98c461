"""ROBOTIS OP3 from its maker's model (the first step of a second humanoid
from a maker's MJCF): config/physics/op3.xml is MuJoCo Menagerie's
robotis_op3/op3.xml written out by hand, meshes left out, every collision
mesh but the feet replaced by a box of ours (marked "ours:" in the file).
These tests hold the file to Menagerie's figures, written again here so that
a slip in the transcription shows, and stand the body in plain MuJoCo.
What the model says against the controller's humanoid is
docs/robots/op3.md; tests/test_op3.py drives it with the controller."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pytest

MAKER = Path(__file__).resolve().parents[1] / "config" / "physics" / "op3.xml"

# Menagerie's figures (robotis_op3/op3.xml): body -> mass (kg).
MASSES = {
    "body_link": 1.34928,
    "head_pan_link": 0.01176, "head_tilt_link": 0.13631,
    **{f"{s}_sho_pitch_link": 0.01176 for s in "lr"},
    **{f"{s}_sho_roll_link": 0.17758 for s in "lr"},
    **{f"{s}_el_link": 0.04127 for s in "lr"},
    **{f"{s}_hip_yaw_link": 0.01181 for s in "lr"},
    **{f"{s}_hip_roll_link": 0.17886 for s in "lr"},
    **{f"{s}_hip_pitch_link": 0.11543 for s in "lr"},
    **{f"{s}_knee_link": 0.04015 for s in "lr"},
    **{f"{s}_ank_pitch_link": 0.17886 for s in "lr"},
    **{f"{s}_ank_roll_link": 0.06934 for s in "lr"},
}
TOTAL_MASS = 3.14747

# joint -> axis, in the maker's order. Menagerie gives no joint a range: every
# joint is unlimited and only the actuators' control range bounds it.
AXES = {
    "head_pan": (0, 0, 1), "head_tilt": (0, -1, 0),
    "l_sho_pitch": (0, 1, 0), "l_sho_roll": (-1, 0, 0), "l_el": (1, 0, 0),
    "r_sho_pitch": (0, -1, 0), "r_sho_roll": (-1, 0, 0), "r_el": (1, 0, 0),
    "l_hip_yaw": (0, 0, -1), "l_hip_roll": (-1, 0, 0), "l_hip_pitch": (0, 1, 0),
    "l_knee": (0, 1, 0), "l_ank_pitch": (0, -1, 0), "l_ank_roll": (1, 0, 0),
    "r_hip_yaw": (0, 0, -1), "r_hip_roll": (-1, 0, 0), "r_hip_pitch": (0, -1, 0),
    "r_knee": (0, -1, 0), "r_ank_pitch": (0, 1, 0), "r_ank_roll": (1, 0, 0),
}
FORCE_RANGE = (-5.0, 5.0)          # N m, every actuator
CTRL_RANGE = (-3.141592, 3.141592)  # rad, every actuator
KP = 21.1                           # N m/rad, every actuator; no kv
FEET = ("l_foot", "l_foot_wide", "r_foot", "r_foot_wide")


def maker() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(MAKER))


def with_floor() -> mujoco.MjModel:
    spec = mujoco.MjSpec.from_file(str(MAKER))
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 0.05])
    return spec.compile()


def ours_in_file() -> list[tuple[str, str]]:
    """(body name, comment) for every geom the file marks "ours:"; the geom
    must follow its comment directly and be in the collision class."""
    tree = ET.parse(MAKER, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    found: list[tuple[str, str]] = []
    for body in tree.iter("body"):
        children = list(body)
        for i, child in enumerate(children):
            if not isinstance(child.tag, str) and (child.text or "").strip().startswith("ours:"):
                geom = children[i + 1]
                assert geom.tag == "geom" and geom.get("class") == "collision", body.get("name")
                found.append((str(body.get("name")), (child.text or "").strip()))
    return found


def test_the_file_compiles_with_menageries_masses_joints_and_actuators() -> None:
    m = maker()
    assert {m.body(b).name: float(m.body_mass[b]) for b in range(1, m.nbody)} == MASSES
    assert sum(m.body_mass) == pytest.approx(TOTAL_MASS, abs=1e-9)
    assert m.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    hinges = [m.joint(j).name for j in range(1, m.njnt)]
    assert hinges == list(AXES)
    assert len(hinges) == 20          # 2 x 6 legs, 2 x 3 arms, 2 head
    for j in range(1, m.njnt):
        name, dof = m.joint(j).name, m.jnt_dofadr[j]
        assert m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE
        np.testing.assert_array_equal(m.jnt_axis[j], AXES[name], err_msg=name)
        assert not m.jnt_limited[j], name                  # the maker gives no range
        assert (m.dof_damping[dof], m.dof_armature[dof], m.dof_frictionloss[dof]) == (1.084, 0.045, 0.03)
    assert [m.actuator(a).name for a in range(m.nu)] == [f"{j}_act" for j in AXES]
    for a in range(m.nu):
        assert m.joint(m.actuator_trnid[a][0]).name == hinges[a]
        np.testing.assert_array_equal(m.actuator_forcerange[a], FORCE_RANGE)
        np.testing.assert_array_equal(m.actuator_ctrlrange[a], CTRL_RANGE)
        assert m.actuator_forcelimited[a] and m.actuator_ctrllimited[a]
        assert m.actuator_gainprm[a][0] == KP and list(m.actuator_biasprm[a][:3]) == [0.0, -KP, 0.0]
    # No keyframe and no solver options in the model or its scene.
    assert m.nkey == 0
    assert m.opt.timestep == 0.002 and m.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL
    # The maker's feet, as the maker gives them: two boxes per foot.
    for name in FEET:
        g = m.geom(name)
        side = 1.0 if name.startswith("l") else -1.0
        assert g.type[0] == mujoco.mjtGeom.mjGEOM_BOX
        wide = name.endswith("wide")
        np.testing.assert_array_equal(g.size, [0.057, 0.039, 0.004] if wide else [0.0635, 0.028, 0.004])
        np.testing.assert_array_equal(g.pos, [0.024, side * (0.0125 if wide else 0.013), -0.0265])
        assert m.body(g.bodyid[0]).name == f"{name[0]}_ank_roll_link"
    for g in range(m.ngeom):
        np.testing.assert_array_equal(m.geom_solref[g], [0.004, 1.0])
    excluded = {(m.exclude_signature[i] >> 16, m.exclude_signature[i] & 0xFFFF) for i in range(m.nexclude)}
    assert excluded == {(m.body(f"{s}_hip_yaw_link").id, m.body(f"{s}_hip_pitch_link").id) for s in "lr"}


def test_every_primitive_of_ours_is_a_collision_box_sized_from_the_model() -> None:
    """One box of ours on every link that had a collision mesh (all but the
    ankle roll links, whose feet are the maker's boxes): either the
    inertial's equivalent uniform box (at its centre, turned by its quat) or
    a box from the link's joint to its child's joint, its cross-section the
    equivalent box's two smaller half-sizes (figures rounded to 0.1 mm)."""
    m = maker()
    marked = dict(ours_in_file())              # one box per link: body -> its comment
    assert len(marked) == len(ours_in_file())
    ours = [g for g in range(m.ngeom) if m.geom(g).name == ""]
    assert sorted(m.body(m.geom_bodyid[g]).name for g in ours) == sorted(marked)
    assert sorted(marked) == sorted(b for b in MASSES if "ank_roll" not in b)
    spans = sorted(b for b, text in marked.items() if "equivalent box" not in text)
    assert spans == sorted(f"{s}_{link}_link" for s in "lr" for link in ("sho_roll", "hip_pitch", "knee"))
    assert {m.geom(g).name for g in range(m.ngeom)} - {""} == set(FEET)
    for g in ours:
        b = m.geom_bodyid[g]
        name = m.body(b).name
        assert m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX, name
        assert m.geom_contype[g] and m.geom_conaffinity[g] and m.geom_group[g] == 3, name
        mass, inertia = m.body_mass[b], m.body_inertia[b]
        a = np.sqrt(3.0 / (2.0 * mass) * (inertia.sum() - 2.0 * inertia))
        size = m.geom_size[g]
        if "equivalent box" in marked[name]:
            np.testing.assert_allclose(m.geom_quat[g], m.body_iquat[b], atol=1e-6, err_msg=name)
            np.testing.assert_allclose(size, a, atol=5e-5, err_msg=name)
        else:
            children = [c for c in range(m.nbody) if m.body_parentid[c] == b]
            assert len(children) == 1, name
            span = m.body_pos[children[0]]
            along = int(np.argmax(np.abs(span)))
            assert size[along] == pytest.approx(np.linalg.norm(span) / 2, abs=1e-4), name
            assert m.geom_pos[g][along] == pytest.approx(span[along] / 2, abs=1e-9), name
            np.testing.assert_allclose(sorted(np.delete(size, along)), sorted(a)[:2], atol=5e-5, err_msg=name)


def test_op3_stands_under_its_own_position_actuators_at_zero() -> None:
    """No keyframe: every joint at zero (legs straight), the actuators holding
    zero, on a floor, 2 s of plain mj_step. It drops the 21 mm from the
    maker's start height onto its feet and stays up on them."""
    m = with_floor()
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    assert d.ncon == 0                        # nothing of ours overlaps at zero
    start = float(d.qpos[2])
    lowest, touching = start, set()
    floor = m.geom("floor").id
    while d.time < 2.0:
        mujoco.mj_step(m, d)
        lowest = min(lowest, float(d.qpos[2]))
        for c in d.contact[:d.ncon]:
            other = c.geom2 if c.geom1 == floor else c.geom1
            touching.add(m.geom(other).name or m.body(m.geom_bodyid[other]).name)
    assert lowest > 0.8 * start
    assert touching == set(FEET)
    up = d.xmat[m.body("body_link").id].reshape(3, 3)[:, 2]
    assert up[2] > np.cos(0.1)                # within 0.1 rad of upright


def test_the_leg_figures_of_docs_robots_op3() -> None:
    """The figures docs/robots/op3.md gives, measured on the compiled model
    with every joint at zero, in the body_link frame."""
    m = maker()
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    origin = d.xpos[m.body("body_link").id]
    at = {m.joint(j).name: d.xanchor[j] - origin for j in range(1, m.njnt)}
    axis = {m.joint(j).name: d.xaxis[j] for j in range(1, m.njnt)}
    # Each leg joint's sign against the controller's axes (yaw +z, roll +x, pitch +y).
    signs = {"hip_yaw": (-1, -1), "hip_roll": (-1, -1), "hip_pitch": (1, -1),
             "knee": (1, -1), "ank_pitch": (-1, 1), "ank_roll": (1, 1)}
    ours = {"hip_yaw": 2, "hip_roll": 0, "hip_pitch": 1, "knee": 1, "ank_pitch": 1, "ank_roll": 0}
    for joint, (left, right) in signs.items():
        for s, sign in (("l", left), ("r", right)):
            expected = np.zeros(3)
            expected[ours[joint]] = sign
            np.testing.assert_allclose(axis[f"{s}_{joint}"], expected, atol=1e-12, err_msg=f"{s}_{joint}")
    for s, y in (("l", 0.035), ("r", -0.035)):
        hip = np.array([0.0001, y, -0.0285])       # where hip roll meets hip pitch
        ankle = np.array([0.0001, y, -0.24865])    # where ankle pitch meets ankle roll
        np.testing.assert_allclose(at[f"{s}_hip_roll"][1:], hip[1:], atol=1e-12)
        np.testing.assert_allclose(at[f"{s}_hip_pitch"][[0, 2]], hip[[0, 2]], atol=1e-12)
        # The yaw axis meets the roll axis but passes 0.1 mm behind the hip centre.
        np.testing.assert_allclose(at[f"{s}_hip_yaw"][:2], [0.0, y], atol=1e-12)
        np.testing.assert_allclose(at[f"{s}_ank_pitch"][[0, 2]], ankle[[0, 2]], atol=1e-12)
        np.testing.assert_allclose(at[f"{s}_ank_roll"][1:], ankle[1:], atol=1e-12)
        knee = at[f"{s}_knee"]
        assert knee[0] == pytest.approx(0.0001) and hip[2] - knee[2] == pytest.approx(0.11015)   # thigh
        assert knee[2] - ankle[2] == pytest.approx(0.11)                                         # shank
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        for name in (f"{s}_foot", f"{s}_foot_wide"):
            g = m.geom(name).id
            half = np.abs(d.geom_xmat[g].reshape(3, 3)) @ m.geom_size[g]
            lo = np.minimum(lo, d.geom_xpos[g] - origin - half)
            hi = np.maximum(hi, d.geom_xpos[g] - origin + half)
        assert ankle[2] - lo[2] == pytest.approx(0.0305)                  # ankle_height
        assert hi[0] - lo[0] == pytest.approx(0.127)                      # foot_length
        assert hi[1] - lo[1] == pytest.approx(0.078)                      # foot_width
        centre = (lo + hi) / 2 - ankle                                    # the sole's centre
        np.testing.assert_allclose(centre[:2], [-0.0001, 0.0125 if s == "l" else -0.0125], atol=1e-12)
