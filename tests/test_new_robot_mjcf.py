"""`motionctl new-robot NAME --mjcf FILE` (issue 42 item 8): a quadruped's
config with the figures its maker's model holds read from it
(controller/robot/maker_figures.py), checked against what was written by
hand from the same models (config/go1.yaml, config/go2.yaml) and against
the model itself (check-config's leg check over 200 poses)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from controller.cli import motionctl as mc
from controller.robot.config import Geometry, load_config
from controller.sim.trial import Trial

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "config", tmp_path / "config", ignore=shutil.ignore_patterns("trajectories"))
    shutil.copytree(ROOT / "gaits", tmp_path / "gaits")
    return tmp_path


def new_from(tree: Path, name: str, model: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, Path]:
    target = tree / "config" / f"{name}.yaml"
    code = mc.main(["new-robot", name, "--mjcf", str(tree / "config" / "physics" / model), "-o", str(target)])
    out = capsys.readouterr()
    return code, out.out + out.err, target


def check(path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert mc.main(["check-config", str(path)]) == 0
    return capsys.readouterr().out.splitlines()


def test_go1_from_its_model_has_the_figures_written_by_hand(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, path = new_from(tree, "go1m", "go1.xml", capsys)
    assert code == 0 and "not in the model" not in out
    assert not (tree / "config" / "physics" / "go1m.yaml").exists()      # the model is the physics
    ours, hand = load_config(path), load_config(ROOT / "config" / "go1.yaml")
    assert isinstance(ours.geometry, Geometry) and isinstance(hand.geometry, Geometry)
    np.testing.assert_array_equal(ours.joint_map.order, hand.joint_map.order)
    np.testing.assert_array_equal(ours.joint_map.direction, hand.joint_map.direction)
    np.testing.assert_array_equal(ours.joint_map.offset, hand.joint_map.offset)
    np.testing.assert_array_equal(ours.q_min, hand.q_min)
    np.testing.assert_array_equal(ours.q_max, hand.q_max)
    np.testing.assert_array_equal(ours.torque_limit, hand.torque_limit)
    np.testing.assert_array_equal(ours.geometry.hip_offsets, hand.geometry.hip_offsets)
    for key in ("abad_link", "hip_link", "knee_link", "foot_radius", "foot_sink"):
        assert getattr(ours.geometry, key) == getattr(hand.geometry, key), key
    assert ours.geometry.mass == pytest.approx(hand.geometry.mass, abs=1e-3)
    assert ours.stand_height == hand.stand_height
    assert ours.sim["mjcf_joints"] == hand.sim["mjcf_joints"] and ours.sim["mjcf_feet"] == hand.sim["mjcf_feet"]
    # Only what the model does not hold is left marked: the joints' speeds.
    lines = check(path, capsys)
    marked = [line for line in lines if "is still CyberDog 2's figure" in line]
    assert any("joint_velocity_limit" in line for line in marked)
    assert not any(key in line for line in marked for key in ("joint_map", "joint_limits", "torque_limit",
                                                              "geometry.", "stand_height"))


def test_go2s_model_in_unitrees_order_and_what_it_does_not_hold(tree: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """config/physics/go2_own.xml: Go2 in Unitree's own joint order (FL
    first), without actuators or a keyframe."""
    code, out, path = new_from(tree, "go2m", "go2_own.xml", capsys)
    assert code == 0
    assert "not in the model: torque_limit: the model's actuators give no force range" in out
    assert "not in the model: poses.stand_height: the model has no keyframe" in out
    ours, hand = load_config(path), load_config(ROOT / "config" / "go2.yaml")
    assert isinstance(ours.geometry, Geometry) and isinstance(hand.geometry, Geometry)
    assert ours.joint_map.wire_names[:3] == ["FL_abad", "FL_hip", "FL_knee"]
    np.testing.assert_allclose(ours.geometry.hip_offsets, hand.geometry.hip_offsets, atol=1e-4)
    for key in ("abad_link", "hip_link", "knee_link", "foot_radius"):
        assert getattr(ours.geometry, key) == pytest.approx(getattr(hand.geometry, key), abs=1e-4), key
    np.testing.assert_allclose(ours.q_min, hand.q_min, atol=1e-4)
    np.testing.assert_allclose(ours.q_max, hand.q_max, atol=1e-4)
    lines = check(path, capsys)
    assert any(line.startswith("     warning: torque_limit: ") and "placeholder" in line for line in lines)
    assert not any("from where the config puts it" in line for line in lines)


def test_barkours_turned_zeros_and_mirrored_abductions_match_its_model(
        tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Barkour vB's zero pose has the thighs pointing back and the knees
    folded, and its left abductions turn about -x: the joint map carries
    both, and the legs land where the model puts its feet."""
    code, _, path = new_from(tree, "barkour_m", "barkour_vb.xml", capsys)
    assert code == 0
    cfg = load_config(path)
    names = cfg.joint_names
    assert cfg.joint_map.offset[names.index("FR_hip")] == pytest.approx(np.pi / 2, abs=1e-4)
    assert cfg.joint_map.offset[names.index("FR_knee")] == pytest.approx(8 * np.pi / 9, abs=1e-4)
    assert cfg.joint_map.direction[names.index("FL_abad")] == -cfg.joint_map.direction[names.index("FR_abad")]
    lines = check(path, capsys)
    assert not any("from where the config puts it" in line for line in lines)
    # And it stands from what new-robot wrote, on the simulator's truth.
    t = Trial(cfg)
    t.send(12)
    t.run(3.0)
    truth = t.robot.truth()
    assert truth.position[2] == pytest.approx(cfg.stand_height, abs=0.01)
    assert max(abs(a) for a in truth.rpy[:2]) < 0.05


def test_a_model_that_is_not_a_12_joint_quadruped_is_refused_with_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    legs = "".join(f"""
      <body name="{n}_hip" pos="{x} {y} 0"><joint name="{n}_a" axis="1 0 0"/><geom size="0.03"/>
        <body name="{n}_thigh"><joint name="{n}_h" axis="0 1 0"/><geom size="0.03"/>
          <body name="{n}_calf" pos="0 0 -0.2"><joint name="{n}_k" axis="0 1 0"/>
            <geom type="sphere" size="0.02" pos="0 0 -0.2"/></body></body></body>"""
                   for n, x, y in (("FR", 0.2, -0.05), ("FL", 0.2, 0.05)))
    model = tmp_path / "biped.xml"
    model.write_text(f"""<mujoco><worldbody><body name="base"><freejoint/>
      <geom type="box" size="0.2 0.1 0.05"/>{legs}</body></worldbody></mujoco>""")
    code = mc.main(["new-robot", "biped", "--mjcf", str(model), "-o", str(tmp_path / "biped.yaml")])
    err = capsys.readouterr().err
    assert code == 1 and "2 legs hang on the floating body; a quadruped has four" in err
    assert not (tmp_path / "biped.yaml").exists()


def with_missing_mesh(tree: Path, collides: bool) -> Path:
    """Go1's model as a maker ships it without its mesh files: a mesh asset
    whose file is not there, drawn by a geom on the trunk (visual, or
    colliding), and a texture whose file is not there either."""
    contact = "" if collides else ' contype="0" conaffinity="0"'
    text = (tree / "config" / "physics" / "go1.xml").read_text()
    text = text.replace('<compiler angle="radian" autolimits="true"/>',
                        '<compiler angle="radian" autolimits="true" meshdir="assets" texturedir="assets"/>\n'
                        '  <asset><mesh name="trunk_look" file="trunk.obj"/>'
                        '<texture name="trunk_skin" type="2d" file="trunk.png"/>'
                        '<material name="carbon" texture="trunk_skin"/></asset>', 1)
    text = text.replace("<freejoint/>",
                        f'<freejoint/><geom type="mesh" mesh="trunk_look" material="carbon"{contact}/>', 1)
    path = tree / "config" / "physics" / "go1_look.xml"
    path.write_text(text)
    return path


def test_a_makers_model_without_its_mesh_files(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Menagerie's models are often taken without their assets folder: the
    meshes that only draw the robot are left out, said so, and the robot is
    the same; a mesh that collides is refused with what to do."""
    with_missing_mesh(tree, collides=False)
    code, out, path = new_from(tree, "go1look", "go1_look.xml", capsys)
    assert code == 0, out
    lines = check(path, capsys)
    assert any("files missing, the look they give left out" in line and "mesh trunk.obj (1 visual geom)" in line
               and "texture trunk.png" in line for line in lines), lines
    cfg, hand = load_config(path), load_config(ROOT / "config" / "go1.yaml")
    assert cfg.geometry.mass == pytest.approx(hand.geometry.mass, abs=1e-3)
    t = Trial(cfg)                                  # the simulator builds its body from it, and it stands
    assert t.robot.model.nmesh == 0
    t.send(12)
    t.run(3.0)
    assert t.robot.truth().position[2] == pytest.approx(cfg.stand_height, abs=0.01)
    with_missing_mesh(tree, collides=True)
    code, out, _ = new_from(tree, "go1hit", "go1_look.xml", capsys)
    assert code != 0
    assert "trunk.obj is missing" in out and "collides" in out and "primitive collision geom" in out
