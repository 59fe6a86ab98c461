"""Describing a new quadruped (issue 18): `motionctl new-robot`'s skeleton,
`check-config`'s consistency warnings, and `balance`'s figures derived from
the physics figures (controller/robot/mass_properties.py).

Each check-config case edits a copy of config/cyberdog2.yaml (in a copy of
config/ and gaits/ in tmp, so its relative paths resolve) or of the skeleton,
and checks that the warning names the key and the numbers. No sockets.
"""
from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import pytest
import yaml
from harness import Rig
from test_config_docs import KIND_SECTIONS, undocumented

from controller.cli import config_checks, new_robot
from controller.cli import motionctl as mc
from controller.robot.config import ConfigError, Geometry, load_config
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.mass_properties import load_figures, stand_angles, stand_body, total_mass
from controller.robot.mjcf_figures import posed_body
from controller.sim.mjcf import robot_mjcf
from controller.sim.physics import PhysicsRobot

ROOT = Path(__file__).resolve().parent.parent
CYBERDOG = ROOT / "config" / "cyberdog2.yaml"
MARK = config_checks.PLACEHOLDER_MARK


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of config/ and gaits/, side by side as in the checkout."""
    base = tmp_path_factory.mktemp("tree")
    shutil.copytree(ROOT / "config", base / "config", ignore=shutil.ignore_patterns("trajectories"))
    shutil.copytree(ROOT / "config" / "trajectories", base / "config" / "trajectories")
    shutil.copytree(ROOT / "gaits", base / "gaits")
    return base


def check(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = mc.main(["check-config", *argv])
    out = capsys.readouterr()
    assert out.err == ""
    return code, out.out.splitlines()


def warnings(lines: list[str]) -> list[str]:
    """The warning lines after the OK line (and the line naming the figures
    scaled from CyberDog 2's, which the skeleton leaves out)."""
    prefix = "     warning: "
    rest = lines[2:] if lines[1:2] and lines[1].startswith("     scaled: gains.pose, ") else lines[1:]
    assert all(line.startswith(prefix) for line in rest), lines
    return [line[len(prefix):] for line in rest]


def variant(tree: Path, name: str, change: Callable[[dict[str, Any]], None],
            source: Path = CYBERDOG) -> Path:
    data = yaml.safe_load(source.read_text())
    change(data)
    path = tree / "config" / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def new(name: str, *extra: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = mc.main(["new-robot", name, *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


# -- new-robot ---------------------------------------------------------------------------
def test_new_robot_writes_a_skeleton_that_loads_beside_the_shipped_configs(
        tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tree)
    monkeypatch.setattr(new_robot, "FSM_TABLE", tree / "config" / "cyberdog_fsm.yaml")
    monkeypatch.setattr(new_robot, "GAITS", tree / "gaits" / "quadruped")
    code, out, err = new("mydog", capsys=capsys)
    assert (code, err) == (0, "")
    config, physics = tree / "config" / "mydog.yaml", tree / "config" / "physics" / "mydog.yaml"
    assert out.startswith("wrote config/mydog.yaml and config/physics/mydog.yaml")
    text = config.read_text()
    # Beside the shipped configs the paths are relative, as theirs are.
    assert "\nfsm: cyberdog_fsm.yaml\n" in text and "  gaits: ../gaits/quadruped\n" in text
    assert "  physics: physics/mydog.yaml\n" in text
    cfg = load_config(config)
    assert (cfg.robot, cfg.kind, cfg.num_joints, cfg.legs) == ("mydog", "quadruped", 12, ["FR", "FL", "RR", "RL"])
    assert load_figures(physics)["trunk"]["mass"] == 4.03
    # The balance's body model comes from the physics figures it names.
    assert cfg.balance is not None and cfg.balance.derived == ("mass", "inertia", "com_offset")
    assert cfg.balance.derived_from == physics.resolve()
    assert cfg.balance.mass == pytest.approx(total_mass(load_figures(physics), 4, physics))
    # The skeleton has every key the shipped quadruped has, but the mode
    # sections it leaves out (motions, scripts, the two-leg stand's, mode 80's
    # defaults), the body model it derives and the figures it scales from
    # CyberDog 2's (the gains, the MPC's forces, the contact loads).
    shipped = yaml.safe_load(CYBERDOG.read_text())
    skeleton = yaml.safe_load(text)
    left_out = {"motions", "scripts", "mass_model", "two_leg", "rl_reset", "gains"}
    assert set(shipped) - set(skeleton) == left_out
    assert set(shipped["balance"]) - set(skeleton["balance"]) == {
        "mass", "inertia", "com_offset", "force_max", "regularisation", "stance_kp", "stance_kd"}
    assert set(shipped["estimator"]) - set(skeleton["estimator"]) == {"contact_force", "contact_band"}
    assert set(cfg.gains) == set(load_config(CYBERDOG).gains) and "gains.swing" in cfg.scaled
    for section in ("geometry", "poses", "locomotion", "lcm"):
        assert set(skeleton[section]) >= set(shipped[section]), section
    assert set(yaml.safe_load(physics.read_text())) == set(yaml.safe_load(
        (ROOT / "config" / "physics" / "cyberdog2.yaml").read_text()))
    assert set(skeleton["joint_map"]) == {"wire_order", "direction", "offset"}


def test_every_key_of_the_skeleton_is_documented(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/CONFIG.md has a row for every key new-robot writes."""
    target = tmp_path / "dog.yaml"
    assert new("dog", "-o", str(target), capsys=capsys)[0] == 0
    data = yaml.safe_load(target.read_text())
    assert undocumented(data, KIND_SECTIONS["quadruped"]) == []


def test_new_robot_anywhere_else_names_the_shipped_files_by_absolute_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "robots" / "dog.yaml"
    code, _, err = new("dog", "-o", str(target), capsys=capsys)
    assert (code, err) == (0, "")
    data = yaml.safe_load(target.read_text())
    assert Path(data["fsm"]).is_absolute() and Path(data["locomotion"]["gaits"]).is_absolute()
    assert data["sim"]["physics"] == "physics/dog.yaml"
    assert (tmp_path / "robots" / "physics" / "dog.yaml").is_file()
    assert load_config(target).robot == "dog"


def test_new_robot_refuses_to_overwrite_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "dog.yaml"
    target.write_text("mine\n")
    code, out, err = new("dog", "-o", str(target), capsys=capsys)
    assert code == 1 and out == "" and f"{target} already exists; pass --force" in err
    assert target.read_text() == "mine\n" and not (tmp_path / "physics").exists()
    code, _, err = new("dog", "-o", str(target), "--force", capsys=capsys)
    assert (code, err) == (0, "") and load_config(target).robot == "dog"


@pytest.mark.parametrize("name", ["../dog", "my dog", "", "-x"])
def test_new_robot_refuses_a_name_that_is_not_one(name: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = new(name, "-o", str(tmp_path / "x.yaml"), capsys=capsys)
    assert code == 1
    assert not (tmp_path / "x.yaml").exists()


def test_the_templates_are_the_package_data(tmp_path: Path) -> None:
    """The templates live under config/, which the wheel installs as
    controller/data/config (pyproject.toml), where resources.CONFIG_DIR points."""
    assert new_robot.CONFIG_TEMPLATE == ROOT / "config" / "templates" / "quadruped.yaml"
    assert new_robot.PHYSICS_TEMPLATE.parent == new_robot.CONFIG_TEMPLATE.parent
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"controller.data.config" = "config"' in pyproject and '"controller.data.config" = ["**/*"]' in pyproject


def marked_lines(path: Path) -> int:
    return sum(MARK in line and not line.lstrip().startswith("#") for line in path.read_text().splitlines())


def test_check_config_lists_every_placeholder_of_the_skeleton_until_it_is_measured(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "dog.yaml"
    assert new("dog", "-o", str(target), capsys=capsys)[0] == 0
    physics = tmp_path / "physics" / "dog.yaml"
    code, lines = check(str(target), capsys=capsys)
    assert code == 0 and lines[0].startswith(f"OK   {target}: robot dog, quadruped, 12 joints")
    marked = [w for w in warnings(lines) if "is still CyberDog 2's figure (a placeholder)" in w]
    in_config = [w for w in marked if "(physics figures" not in w]
    in_physics = [w for w in marked if f"(physics figures, {physics})" in w]
    # One warning per marked line (not the comments that explain the mark),
    # naming the key path and the value.
    assert len(in_config) == marked_lines(target) > 30
    assert len(in_physics) == marked_lines(physics) > 15
    assert "geometry.hip_link: 0.12 is still CyberDog 2's figure (a placeholder): measure yours" in " ".join(marked)
    assert any(w.startswith("joint_limits.RR: [[-0.6807, 0.6807], [-3.1416, 0.9774]") for w in in_config)
    assert any(w.startswith("joint_map.wire_order: [FR_abad, FR_hip,") for w in in_config)
    assert not any(w.startswith("gains.") for w in in_config)   # scaled, not placeholders
    assert lines[1].startswith("     scaled: gains.pose, ") and "forces x 1.06)" in lines[1]   # 8.5 kg
    assert any(w.startswith("links.knee.mass (physics figures") and ": 0.116 is still" in w for w in in_physics)
    # A measured figure, its mark taken off, is no longer listed.
    text = target.read_text()
    line = next(ln for ln in text.splitlines() if ln.lstrip().startswith("hip_link:"))
    target.write_text(text.replace(line, "  hip_link: 0.13"))
    _, after = check(str(target), capsys=capsys)
    assert not any(w.startswith("geometry.hip_link:") for w in warnings(after))
    assert len(warnings(after)) == len(warnings(lines)) - 1


def test_the_skeleton_stands_up_in_physics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A user starts from the skeleton: it is a robot the simulator can run
    (the physics body built from the config and the physics skeleton)."""
    target = tmp_path / "dog.yaml"
    assert new("dog", "-o", str(target), capsys=capsys)[0] == 0
    rig = Rig(config_path=str(target))
    robot = rig.robot
    assert isinstance(robot, PhysicsRobot)
    rig.run(20)
    rig.send(12)
    rig.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 5000)
    rig.run(500)
    assert abs(robot.truth().position[2] - rig.cfg.stand_height) < 0.01


# -- check-config's consistency warnings ---------------------------------------------------
def cyberdog_warnings(lines: list[str]) -> list[str]:
    """The warnings config/cyberdog2.yaml itself has (see the shipped-config test)."""
    return [w for w in warnings(lines) if w.startswith(("locomotion.height_range[1]:", "gait "))]


def test_a_stand_height_beyond_the_legs_reach(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(d: dict[str, Any]) -> None:
        d["poses"]["stand_height"] = 0.40
    code, lines = check(str(variant(tree, "too_high", change)), capsys=capsys)
    found = [w for w in warnings(lines) if w.startswith("poses.stand_height:")]
    assert code == 0 and len(found) == 1
    assert found[0].startswith("poses.stand_height: the stand (mode 12's goal) at 0.4 m is beyond the legs' reach "
                               "with the feet under the hips (at most 0.313 m: geometry.hip_link 0.12 + knee_link "
                               "0.17391 + foot_radius 0.019)")
    assert "the legs hold the body between 0.1" in found[0]
    # The stand is out of reach: no torque verdict on it.
    assert not any(w.startswith("torque_limit") for w in warnings(lines))


def test_a_stand_pose_outside_the_joint_limits(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(d: dict[str, Any]) -> None:
        d["poses"]["stand_height"] = 0.10
    _, lines = check(str(variant(tree, "too_low", change)), capsys=capsys)
    found = [w for w in warnings(lines) if w.startswith("poses.stand_height:")]
    assert len(found) == 1
    m = re.search(r"puts (\w+)_knee at ([\d.]+) rad, ([\d.]+) above joint_limits\.\w+\[2\]'s upper 2\.5307 "
                  r"and 3 more; inside the limits the legs hold the body between ([\d.]+) and ([\d.]+) m", found[0])
    assert m, found[0]
    # The numbers are the kinematics': the knee of the stand at 0.10 m, and the
    # lowest stand inside the limits.
    cfg = load_config(tree / "config" / "too_low.yaml")
    assert isinstance(cfg.geometry, Geometry)
    kin = QuadrupedKinematics(cfg.geometry)
    knee = kin.inverse(kin.stance_feet(0.10, cfg.stand_com_x))[0][:, 2].max()
    assert float(m[2]) == pytest.approx(knee, abs=1e-3)
    assert float(m[3]) == pytest.approx(knee - 2.5307, abs=1e-3)
    lowest = float(m[4])
    assert kin.inverse(kin.stance_feet(lowest, cfg.stand_com_x))[0][:, 2].max() <= 2.5307
    assert kin.inverse(kin.stance_feet(lowest - 0.001, cfg.stand_com_x))[0][:, 2].max() > 2.5307


def test_a_pose_height_range_end_inside_the_limits_but_not_their_margin(
        tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Mode 21 keeps 0.06 rad clear of the limits: 0.125 m is inside the
    limits but not inside that margin."""
    def change(d: dict[str, Any]) -> None:
        d["pose_height_range"] = [0.125, 0.30]
    _, lines = check(str(variant(tree, "low_pose", change)), capsys=capsys)
    found = [w for w in warnings(lines) if w.startswith("pose_height_range")]
    assert len(found) == 1 and found[0].startswith("pose_height_range[0]: mode 21's lowest pose at 0.125 m puts ")
    assert "(less the 0.06 rad this motion keeps clear)" in found[0]


def test_a_gait_too_fast_for_the_stride(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(d: dict[str, Any]) -> None:
        d["locomotion"]["half_stride"] = [0.03, 0.2]
    _, lines = check(str(variant(tree, "short_stride", change)), capsys=capsys)
    trot = [w for w in warnings(lines) if w.startswith("gait 3 (trot medium, 03_trot_medium.yaml)")]
    # Gait 3: 5 segments of 30 ms in stance; 1.2 m/s would stride 0.18 m, the
    # feet reach 2 x 0.03 m: 0.4 m/s.
    assert trot == ["gait 3 (trot medium, 03_trot_medium.yaml): its window is faster than a stance of 0.150 s "
                    "can step: vx 1.2 > 0.40 m/s (a 0.180 m stride, the feet reach 2 x locomotion.half_stride[0] "
                    "= 0.060 m); the generator caps the speed there: lower the window, shorten the stance, or "
                    "raise locomotion.half_stride if the legs reach further"]


def test_a_swing_faster_than_the_joints_turn(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(d: dict[str, Any]) -> None:
        d["joint_velocity_limit"] = [30.0, 30.0, 10.0]
    _, lines = check(str(variant(tree, "slow_knee", change)), capsys=capsys)
    trot = [w for w in warnings(lines) if w.startswith("gait 3 (trot medium")]
    assert len(trot) == 1
    assert re.search(r"a swing of 0\.150 s moving the foot [\d.]+ m at the window's top speed and lifting it "
                     r"0\.060 m needs the knee at [\d.]+ rad/s, over joint_velocity_limit\[2\] 10", trot[0]), trot
    # The unchanged config's knee (30 rad/s) keeps up with gait 3.
    _, shipped = check(str(CYBERDOG), capsys=capsys)
    assert not any(w.startswith("gait 3 ") for w in warnings(shipped))


def test_a_torque_limit_too_small_to_stand(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(d: dict[str, Any]) -> None:
        d["torque_limit"] = [12.0, 12.0, 1.5]
    _, lines = check(str(variant(tree, "weak_knee", change)), capsys=capsys)
    found = [w for w in warnings(lines) if w.startswith("torque_limit")]
    cfg = load_config(tree / "config" / "weak_knee.yaml")
    assert isinstance(cfg.geometry, Geometry) and cfg.balance is not None
    kin = QuadrupedKinematics(cfg.geometry)
    jac = kin.jacobian(kin.inverse(kin.stance_feet(cfg.stand_height, cfg.stand_com_x))[0])
    knee = float(np.abs(jac[:, 2, 2]).max() * cfg.balance.mass * 9.81 / 4)   # J^T f, f straight up
    assert 1.5 < knee < 12.0
    assert found == [f"torque_limit: standing at poses.stand_height 0.24 m, the knees need {knee:.1f} N m to carry "
                     f"balance.mass 8.3644 kg ({8.3644 * 9.81 / 4:.1f} N a foot through the stand pose's Jacobian, "
                     "J^T f) but torque_limit for the knee is 1.5 N m: check the motors' figure (datasheet x gear "
                     "ratio), the mass, or stand lower or with the feet nearer under the knees"]
    # Enough to stand, not to trot: twice the load on a foot.
    def trot(d: dict[str, Any]) -> None:
        d["torque_limit"] = [12.0, 12.0, round(knee * 1.5, 2)]
    _, lines = check(str(variant(tree, "trot_knee", trot)), capsys=capsys)
    found = [w for w in warnings(lines) if w.startswith("torque_limit")]
    assert len(found) == 1 and found[0].startswith("torque_limit: trotting (two feet carry the body) at ")


def test_a_balance_mass_far_from_the_physics_figures(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(d: dict[str, Any]) -> None:
        d["balance"]["mass"] = 12.0
    _, lines = check(str(variant(tree, "heavy", change)), capsys=capsys)
    found = [w for w in warnings(lines) if w.startswith("balance.mass")]
    assert found == ["balance.mass: 12 kg, but the physics figures (cyberdog2.yaml) add up to 8.518 kg (+41 %): "
                     "the MPC would push for a robot of another weight; weigh the robot and correct one of them, "
                     "or leave balance.mass out to derive it"]
    # Within 10 %: quiet (the shipped 8.3644 against 8.518 is 1.8 % off).
    _, shipped = check(str(CYBERDOG), capsys=capsys)
    assert not any(w.startswith("balance.mass") for w in warnings(shipped))


def test_a_balance_mass_far_from_the_own_mjcfs_bodies(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With `sim.mjcf` the model is the robot: its bodies' total (15.206 kg
    for Go2's) is what balance.mass is held to, the physics file is not asked for."""
    def change(d: dict[str, Any]) -> None:
        d.setdefault("sim", {}).update({"mjcf": "physics/go2_own.xml", "mjcf_joints": OWN_JOINTS,
                                        "physics": "physics/none.yaml"})
        d["balance"]["mass"] = 20.0
    _, lines = check(str(variant(tree, "go2_heavy", change, GO2)), capsys=capsys)
    found = [w for w in warnings(lines) if w.startswith(("balance.mass", "sim.physics"))]
    assert found == ["balance.mass: 20 kg, but the bodies of its own MJCF (go2_own.xml) add up to 15.206 kg "
                     "(+32 %): the MPC would push for a robot of another weight; weigh the robot and correct one "
                     "of them, or leave balance.mass out to derive it"]


def test_no_physics_figures(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(d: dict[str, Any]) -> None:
        d["sim"]["physics"] = "physics/nope.yaml"
    code, lines = check(str(variant(tree, "no_physics", change)), capsys=capsys)
    found = [w for w in warnings(lines) if w.startswith("sim.physics")]
    assert code == 0 and len(found) == 1
    assert found[0].startswith(f"sim.physics: no physics figures ({tree / 'config' / 'physics' / 'nope.yaml'} does "
                               "not exist): the robot cannot be scored in physics")
    # Without them, a balance that leaves its mass out cannot load: the daemon's refusal.
    def derive(d: dict[str, Any]) -> None:
        change(d)
        del d["balance"]["mass"]
    path = variant(tree, "no_physics_derived", derive)
    code, lines = check(str(path), capsys=capsys)
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith(f"FAIL {path}: balance.mass: missing, and it cannot be derived from the physics "
                               f"figures: {tree / 'config' / 'physics' / 'nope.yaml'}: no physics figures")


def test_every_consistency_warning_is_quiet_on_a_consistent_config(
        tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The warnings above come from the change alone: cyberdog2 with its
    walk's height range inside the reach has only its gait windows' warnings."""
    def change(d: dict[str, Any]) -> None:
        d["locomotion"]["height_range"] = [0.23, 0.30]
    code, lines = check(str(variant(tree, "consistent", change)), capsys=capsys)
    assert code == 0
    assert all(w.startswith("gait ") for w in warnings(lines)), lines


# -- balance's derived figures ---------------------------------------------------------------
def test_the_stand_angles_are_the_kinematics_inverse() -> None:
    cfg = load_config(CYBERDOG)
    assert isinstance(cfg.geometry, Geometry)
    kin = QuadrupedKinematics(cfg.geometry)
    for height, com_x in ((0.24, 0.01), (0.15, -0.03), (0.30, 0.05)):
        q = kin.inverse(kin.stance_feet(height, com_x))[0]
        assert np.allclose(stand_angles(cfg.geometry, height, com_x), q, atol=1e-12)


def test_the_derived_body_is_the_physics_models_at_the_stand() -> None:
    """The derivation from the physics file (numpy, the legs' kinematics)
    weighs what the simulator builds from it: MuJoCo's own bodies of the
    generated model, posed at the stand and summed in the trunk's frame
    (controller/robot/mjcf_figures.py, the route a robot's own MJCF takes)."""
    cfg = load_config(CYBERDOG)
    assert isinstance(cfg.geometry, Geometry)
    model = mujoco.MjModel.from_xml_string(robot_mjcf(cfg))
    q = stand_angles(cfg.geometry, cfg.stand_height, cfg.stand_com_x)
    mass, com, inertia = posed_body(model, q.reshape(-1), list(cfg.joint_names), "generated")
    body = stand_body(cfg.path, cfg.robot, cfg.sim, cfg.geometry, cfg.stand_height, cfg.stand_com_x)
    assert body.mass == pytest.approx(mass, rel=1e-9)
    assert np.allclose(body.com_offset, com, atol=1e-9)
    assert np.allclose(body.inertia, np.diag(inertia), rtol=1e-9)


def derived_cyberdog() -> tuple[Any, Any]:
    cfg = load_config(CYBERDOG)
    assert isinstance(cfg.geometry, Geometry) and cfg.balance is not None
    return cfg.balance, stand_body(cfg.path, cfg.robot, cfg.sim, cfg.geometry, cfg.stand_height, cfg.stand_com_x)


def test_the_derived_mass_and_roll_inertia_are_within_5_percent_of_cyberdog2s_stated() -> None:
    stated, body = derived_cyberdog()
    assert stated.mass == 8.3644 and body.mass == pytest.approx(8.3644, rel=0.05)
    assert body.inertia[0] == pytest.approx(0.07641, rel=0.05)


def test_go2s_balance_figures_are_the_derived_ones() -> None:
    """config/go2.yaml states the body model it computed from MuJoCo's model
    of its physics figures: the derivation agrees to its rounding."""
    cfg = load_config(ROOT / "config" / "go2.yaml")
    assert isinstance(cfg.geometry, Geometry) and cfg.balance is not None and cfg.balance.derived == ()
    body = stand_body(cfg.path, cfg.robot, cfg.sim, cfg.geometry, cfg.stand_height, cfg.stand_com_x)
    assert body.mass == pytest.approx(cfg.balance.mass, abs=0.001)
    assert np.allclose(body.inertia, cfg.balance.inertia, atol=1e-4)
    assert np.allclose(body.com_offset, cfg.balance.com_offset, atol=1e-4)


def test_a_written_figure_wins_and_each_missing_one_is_derived(tree: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        del d["balance"]["inertia"]
    cfg = load_config(variant(tree, "derive_inertia", change))
    assert cfg.balance is not None and cfg.balance.derived == ("inertia",)
    assert cfg.balance.mass == 8.3644 and cfg.balance.com_offset.tolist() == [0.027, 0.0, 0.0]
    _, body = derived_cyberdog()
    assert cfg.balance.inertia.tolist() == body.inertia.tolist()


# -- balance's figures from the robot's own MJCF (sim.mjcf) ------------------------------------
OWN_JOINTS = [f"{leg}_{j}_joint" for leg in ("FL", "FR", "RL", "RR") for j in ("hip", "thigh", "calf")]
GO2 = ROOT / "config" / "go2.yaml"


def go2_from_its_model(mjcf: str = "physics/go2_own.xml") -> Callable[[dict[str, Any]], None]:
    """Go2 with its own MJCF (Unitree's joint convention) and no body figure
    written in balance."""
    def change(data: dict[str, Any]) -> None:
        data.setdefault("sim", {}).update({"mjcf": mjcf, "mjcf_joints": OWN_JOINTS})
        for key in ("mass", "inertia", "com_offset"):
            del data["balance"][key]
    return change


def test_with_its_own_mjcf_the_body_is_weighed_from_the_model_not_the_physics_file(tree: Path) -> None:
    """config/physics/go2_own.xml carries Go2's figures in Unitree's joint
    convention; posed at the stand through the config's joint map it weighs
    what the physics file gives through the generated model, to the figures'
    digits. The physics file is not read: it is gone from the tree."""
    physics = tree / "config" / "physics" / "go2.yaml"
    figures = physics.read_text()
    physics.unlink()
    try:
        cfg = load_config(variant(tree, "go2_weighed_by_its_model", go2_from_its_model(), GO2))
    finally:
        physics.write_text(figures)
    assert cfg.balance is not None and cfg.balance.derived == ("mass", "inertia", "com_offset")
    assert cfg.balance.derived_from == (tree / "config" / "physics" / "go2_own.xml").resolve()
    by_file = load_config(GO2)
    assert isinstance(by_file.geometry, Geometry)
    body = stand_body(by_file.path, by_file.robot, by_file.sim, by_file.geometry, by_file.stand_height,
                      by_file.stand_com_x)
    assert cfg.balance.mass == pytest.approx(body.mass, rel=1e-9)
    assert np.allclose(cfg.balance.com_offset, body.com_offset, atol=1e-6)
    assert np.allclose(cfg.balance.inertia, body.inertia, rtol=1e-5)
    assert by_file.balance is not None
    assert cfg.balance.mass == pytest.approx(by_file.balance.mass, abs=0.001)   # go2.yaml's stated figure


def test_the_model_is_posed_through_the_joint_map(tree: Path) -> None:
    """Without the joint map (the identity) the knees, negative in Unitree's
    convention, are sent positive and out of the model's range: the body's
    centre of mass comes out elsewhere. The map is what makes it the stand."""
    def no_map(data: dict[str, Any]) -> None:
        go2_from_its_model()(data)
        del data["joint_map"]
    right = load_config(variant(tree, "go2_mapped", go2_from_its_model(), GO2))
    wrong = load_config(variant(tree, "go2_unmapped", no_map, GO2))
    assert right.balance is not None and wrong.balance is not None
    assert float(np.abs(right.balance.com_offset - wrong.balance.com_offset).max()) > 0.005


@pytest.mark.parametrize(("sim", "expected"), [
    ({"mjcf": "physics/nothing.xml"}, "physics/nothing.xml is not a file"),
    ({"mjcf_joints": OWN_JOINTS[:-1]}, "sim.mjcf_joints: expected the model's 12 joint names"),
    ({"mjcf_joints": [*OWN_JOINTS[:-1], "RR_ankle_joint"]}, "['RR_ankle_joint'] are not joints of the model"),
])
def test_a_body_that_cannot_be_weighed_from_the_model_says_why(tree: Path, sim: dict[str, Any],
                                                                expected: str) -> None:
    def change(data: dict[str, Any]) -> None:
        go2_from_its_model()(data)
        data["sim"].update(sim)
    with pytest.raises(ConfigError) as err:
        load_config(variant(tree, "go2_unweighable", change, GO2))
    message = str(err.value)
    assert "balance.mass: missing, and it cannot be derived from its own MJCF (sim.mjcf)" in message
    assert expected in message, message
