"""`motionctl check-config` and the precision of the config loader's messages.

Each case writes a broken copy of a shipped config (config/cyberdog2.yaml,
config/humanoid20.yaml, config/nao22.yaml) into a copy of config/ and gaits/
in tmp, so its relative paths (fsm, gaits, motions, scripts, walk, mof) still
resolve, and checks that the verdict names the file, the key path and the
reason. No sockets: check-config reads files only (one test makes sure).
"""
from __future__ import annotations

import re
import shutil
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from controller.cli import check_config
from controller.cli import motionctl as mc
from controller.robot.config import DEFAULT_CONFIG, load_config

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("cyberdog2.yaml", "go2.yaml", "humanoid20.yaml", "nao22.yaml")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of config/ and gaits/, side by side as in the checkout."""
    base = tmp_path_factory.mktemp("tree")
    shutil.copytree(ROOT / "config", base / "config")
    shutil.copytree(ROOT / "gaits", base / "gaits")
    return base


def variant(tree: Path, source: str, name: str, change: Callable[[Any], None]) -> Path:
    """config/<name>.yaml in the copied tree: `source` with `change` applied."""
    data = yaml.safe_load((ROOT / "config" / source).read_text())
    change(data)
    path = tree / "config" / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def check(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = mc.main(["check-config", *argv])
    out = capsys.readouterr()
    assert out.err == ""
    return code, out.out


def at(keys: tuple[Any, ...]) -> Callable[[Any], tuple[Any, Any]]:
    def parent(data: Any) -> tuple[Any, Any]:
        for key in keys[:-1]:
            data = data[key]
        return data, keys[-1]
    return parent


def set_(*keys: Any, value: Any) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        node, key = at(keys)(data)
        node[key] = value
    return change


def drop(*keys: Any) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        node, key = at(keys)(data)
        del node[key]
    return change


# -- the shipped configs -----------------------------------------------------------------
@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_configs_are_ok_with_a_summary_from_the_file(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "config" / name
    data = yaml.safe_load(path.read_text())
    fsm = yaml.safe_load((path.parent / data["fsm"]).read_text())
    joints = (len(data["legs"]) * len(data["leg_joints"]) if data["kind"] == "quadruped"
              else len(data["joints"]))
    code, out = check(str(path), capsys=capsys)
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith(f"OK   {path}: robot {data['robot']}, {data['kind']}, "
                            f"{joints} joints, {data['tick_hz']:g} Hz, "
                            f"{len(fsm['modes'])} FSM modes, ")
    # Every shipped motion, script and .mof file loads; the only warnings are
    # CyberDog 2's explained inconsistencies (SHIPPED_WARNINGS).
    warnings = [line.removeprefix("     warning: ") for line in out.splitlines()[1:]]
    assert all(line.startswith("     warning: ") for line in out.splitlines()[1:])
    expected = SHIPPED_WARNINGS.get(name, [])
    assert [w.split(":")[0] for w in warnings] == [e.split(":")[0] for e in expected], warnings
    for warning, start in zip(warnings, expected):
        assert warning.startswith(start), warning


# What check-config says about config/cyberdog2.yaml, each true: the walk's
# height range (SPEC §6.4's 0.32 m) reaches above the legs' 0.313 m, and the
# gait files carry SPEC §6.4's velocity windows, which the pace's 150 ms
# stance and the slow trots' long stances cannot step at CyberDog 2's
# half_stride; the generator caps the speed there, as the message says.
SHIPPED_WARNINGS = {"cyberdog2.yaml": [
    "locomotion.height_range[1]: the walk's highest at 0.32 m is beyond the legs' reach with the feet under the "
    "hips (at most 0.313 m",
    "gait 8 (pace, 08_pace.yaml): its window is faster than a stance of 0.150 s can step: vx 2 > 1.47 m/s",
    "gait 21 (trot 14-8, 21_trot_14_8.yaml): its window is faster than a stance of 0.240 s can step: wz 2.3 > 2.05",
    "gait 22 (trot 16-10, 22_trot_16_10.yaml): its window is faster than a stance of 0.300 s can step: wz 2.1 > 1.64",
    "gait 23 (trot 18-11, 23_trot_18_11.yaml): its window is faster than a stance of 0.330 s can step: wz 1.9 > 1.49",
    "gait 24 (trot 20-12, 24_trot_20_12.yaml): its window is faster than a stance of 0.360 s can step: wz 1.7 > 1.37",
    "gait 25 (trot 22-14, 25_trot_22_14.yaml): its window is faster than a stance of 0.420 s can step: wz 1.5 > 1.17",
], "go2.yaml": [   # Go2's longer legs step the rest; the pace's 1 m/s sideways is still beyond them
    "gait 8 (pace, 08_pace.yaml): its window is faster than a stance of 0.150 s can step: vy 1 > 0.87 m/s",
]}


def test_without_a_path_it_checks_motionctl_config_else_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = check(capsys=capsys)
    assert code == 0 and out.startswith(f"OK   {DEFAULT_CONFIG}: robot ")
    nao = ROOT / "config" / "nao22.yaml"
    assert mc.main(["--config", str(nao), "check-config"]) == 0
    assert capsys.readouterr().out.startswith(f"OK   {nao}: robot nao22, ")


def test_several_paths_one_verdict_each_and_exit_1_if_any_fails(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    good = ROOT / "config" / "humanoid20.yaml"
    kindless = tmp_path / "robot.yaml"                     # neither a robot config nor an FSM table
    kindless.write_text("robot: somebody\ntick_hz: 500\n")
    code, out = check(str(good), str(kindless), capsys=capsys)
    lines = out.splitlines()
    assert code == 1 and len(lines) == 2
    assert lines[0].startswith(f"OK   {good}: ")
    assert lines[1] == f"FAIL {kindless}: kind: missing"


def test_check_config_opens_no_socket(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("check-config opened a socket")
    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr("lcm.LCM", refuse)
    assert check(str(ROOT / "config" / "cyberdog2.yaml"), capsys=capsys)[0] == 0


# -- common mistakes: the message names the key path and the reason ----------------------
QUADRUPED_CASES = [
    ("missing_key", drop("lcm", "ports", "joint"), "lcm.ports.joint: missing"),
    ("missing_section", drop("geometry"), "geometry: missing"),
    ("wrong_type", set_("tick_hz", value="fast"), "tick_hz: expected float, got str 'fast'"),
    ("wrong_type_list", set_("legs", value="FR"), "legs: expected list, got str 'FR'"),
    ("bool_for_number", set_("lcm", "status_hz", value=True),
     "lcm.status_hz: expected float, got bool True"),
    ("out_of_range", set_("geometry", "mass", value=-1), "geometry.mass: -1.0 is outside [0.1, 500.0]"),
    ("out_of_range_port", set_("lcm", "ports", "command", value=70000),
     "lcm.ports.command: 70000.0 is outside [1, 65535]"),
    ("short_vector", set_("gains", "pose", "kp", value=[1, 2]),
     "gains.pose.kp: expected a list of 3 numbers, got [1, 2]"),
    ("pose_outside_limits", set_("poses", "fold", value=[0.0, -1.38, 3.0]),
     "poses.fold: outside the joint limits at ['FR_knee', 'FL_knee', 'RR_knee', 'RL_knee']"),
    ("bad_joint_name", set_("scripts", "mirror", "negate", value=["FR_abd"]),
     "scripts.mirror.negate: unknown joints ['FR_abd']"),
    ("unknown_leg", set_("legs", value=["FR", "FL", "RR", "LR"]), "joint_limits.LR: missing"),
    ("gain_set_without_kd", drop("gains", "swing", "kd"), "gains.swing.kd: missing"),
    ("unknown_fsm_file", set_("fsm", value="nope_fsm.yaml"),
     "fsm: {dir}/nope_fsm.yaml is not a file"),
    ("unknown_gait_directory", set_("locomotion", "gaits", value="../gaits/nope"),
     "locomotion.gaits: {root}/gaits/nope is not a directory"),
    ("unknown_motion_directory", set_("motions", "directory", value="../gaits/nope"),
     "motions.directory: {root}/gaits/nope is not a directory"),
    ("unknown_script_directory", set_("scripts", "directories", value=["scripts/nope"]),
     "scripts.directories[0]: {dir}/scripts/nope is not a directory"),
    ("motion_path_not_a_name", set_("motions", "ids", 1, value="../x.toml"),
     "motions.ids.1: '../x.toml': expected a bare file name in `directory`"),
    ("unknown_fsm_mode", set_("scripts", "modes", 99, value={"gaits": {0: "JumpHigh"}}),
     "scripts.modes.99: not a mode of the FSM table"),
]

HUMANOID_CASES = [
    ("missing_pose_joint", drop("poses", "stand", "r_knee"), "poses.stand.r_knee: missing"),
    ("missing_required_pose", drop("poses", "crouch"), "poses.crouch: missing"),
    ("wrong_type", set_("geometry", "thigh", value="x"),
     "geometry.thigh: expected a number in [0.01, 2.0], got 'x'"),
    ("out_of_range", set_("joints", 3, "vmax", value=500), "joints[3].vmax: 500.0 is outside [0.1, 100.0]"),
    ("min_not_below_max", set_("joints", 3, "min", value=3.0), "joints[3].max: min 3.0 is not below max 2.6"),
    ("bad_joint_name", set_("poses", "stand", "r_kneee", value=0.3),
     "poses.stand: unknown joints ['r_kneee']"),
    ("duplicate_joint", set_("joints", 3, "name", value="r_hip_roll"),
     "joints[3].name: 'r_hip_roll' is listed twice"),
    ("bad_group_name", set_("joints", 0, "group", value="right_lag"),
     "joints: group right_leg has 5 joints; a leg has 6"),
    ("bad_mirror_joint", set_("scripts", "mirror", "negate", value=["l_hip_yw"]),
     "scripts.mirror.negate: unknown joints ['l_hip_yw']"),
    ("missing_group_torque", drop("torque_limit", "head"), "torque_limit.head: missing"),
    ("short_group_gains", set_("gains", "walk", "head", "kp", value=[1]),
     "gains.walk.head.kp: expected a list of 2 numbers, got [1]"),
    ("default_gait_not_walking", set_("locomotion", "default_gait", value=9),
     "locomotion.default_gait: 9 is not one of walk_gaits [3]"),
    ("unknown_walk_file", set_("locomotion", "walk", value="../gaits/humanoid/nope.yaml"),
     "locomotion.walk: {root}/gaits/humanoid/nope.yaml: cannot read"),
    ("unknown_fsm_file", set_("fsm", value="nope_fsm.yaml"), "fsm: {dir}/nope_fsm.yaml is not a file"),
    ("unknown_script_mode", set_("scripts", "mode", value=61), "scripts.mode: 61 is not a mode of"),
    ("walk_gains_without_walk", drop("locomotion"),
     "gains.walk: set, but there is no `locomotion` section"),
]

NAO_CASES = [
    ("bad_mof_joint", set_("mof_columns", "HP", value="hed_yaw"),
     "mof_columns.HP: 'hed_yaw' is not a joint of this robot"),
    ("unknown_mof_directory", set_("mof", "directory", value="nope"),
     "mof.directory: {dir}/nope is not a directory"),
    ("unknown_gain_set", set_("mof_hardness", "full_gains", value="nope"),
     "mof_hardness.full_gains: 'nope' is not a gain set under `gains`"),
    ("hardness_out_of_range", set_("mof_hardness", "default", value=150),
     "mof_hardness.default: 150.0 is outside [0.0, 100.0]"),
]


@pytest.mark.parametrize(("source", "name", "change", "expected"), [
    pytest.param(source, *case, id=f"{Path(source).stem}-{case[0]}")
    for source, cases in (("cyberdog2.yaml", QUADRUPED_CASES), ("humanoid20.yaml", HUMANOID_CASES),
                          ("nao22.yaml", NAO_CASES))
    for case in cases
])
def test_a_broken_config_fails_naming_file_key_and_reason(tree: Path, source: str, name: str,
                                                         change: Callable[[Any], None],
                                                         expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = variant(tree, source, f"{Path(source).stem}_{name}", change)
    code, out = check(str(path), capsys=capsys)
    expected = expected.format(dir=tree / "config", root=tree)
    assert code == 1
    assert out.startswith(f"FAIL {path}: {expected}"), out
    assert len(out.splitlines()) == 1


def test_the_unbroken_copy_loads(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The broken copies fail for their change alone: unchanged, each loads."""
    for source in SHIPPED:
        path = variant(tree, source, f"{Path(source).stem}_unchanged", lambda _d: None)
        assert check(str(path), capsys=capsys)[0] == 0


# -- what the daemon would refuse at start, while still running --------------------------
def test_a_motion_file_that_does_not_load_is_a_warning_not_a_failure(
        tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = variant(tree, "cyberdog2.yaml", "cyberdog2_missing_motion",
                   set_("motions", "ids", 1, value="missing.toml"))
    code, out = check(str(path), capsys=capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith(f"OK   {path}: robot cyberdog2, ")
    assert len(lines) == 2 + len(SHIPPED_WARNINGS["cyberdog2.yaml"])   # and cyberdog2's own, after it
    assert lines[1].startswith("     warning: motions.ids.1: ")
    assert "missing.toml" in lines[1] and lines[1].endswith("(mode 62 refuses this id)")
    # the daemon agrees: the config loads, the id's file is the problem
    motions = load_config(path).motions
    assert motions is not None
    assert motions.files[1] == "missing.toml"


def test_a_bad_mof_file_is_a_warning_naming_file_and_line(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mof_dir = tree / "gaits" / "mof" / "nao22"
    bad = mof_dir / "broken.mof"
    bad.write_text((mof_dir / "nod.mof").read_text().replace("motion_id = nod",
                                                             "motion_id = broken", 1) + "garbage\n")
    try:
        path = variant(tree, "nao22.yaml", "nao22_broken_mof",
                       set_("mof", "files", value=["stand.mof", "nod.mof", "broken.mof"]))
        code, out = check(str(path), capsys=capsys)
    finally:
        bad.unlink()
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith(f"OK   {path}: robot nao22, ")
    assert len(lines) == 2 and lines[1].startswith(f"     warning: {bad}:")
    assert lines[1].endswith("(left out of the .mof net)")


def test_a_bad_script_is_a_warning(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scripts = tree / "config" / "scripts" / "humanoid20"
    bad = scripts / "Broken.yaml"
    bad.write_text("- duration: 100\n  targets:\n    - {id: no_such_joint, position: 0}\n")
    try:
        code, out = check(str(tree / "config" / "humanoid20.yaml"), capsys=capsys)
    finally:
        bad.unlink()
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert lines[1].startswith(f"     warning: {bad}") and lines[1].endswith("(script refused)")


def test_a_loader_crash_is_a_fail_line_not_a_traceback(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    def crash(_path: Any) -> None:
        raise KeyError("boom")
    monkeypatch.setattr(check_config, "load_config", crash)
    code, out = check("some.yaml", capsys=capsys)
    assert code == 1
    assert out.startswith("FAIL some.yaml: the config loader crashed (KeyError: 'boom')")


def test_the_shipped_state_machine_tables_are_named_as_such_and_checked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tables = sorted(str(p) for p in (ROOT / "config").glob("*_fsm.yaml"))
    code, out = check(*tables, capsys=capsys)
    assert code == 0 and len(tables) == 3
    assert all("a state-machine table (what a robot config's `fsm:` names), not a robot config" in line
               for line in out.splitlines()), out
    assert "OK   " + tables[0] + ": a state-machine table" in out and "14 modes" in out
    broken = tmp_path / "broken_fsm.yaml"
    broken.write_text("modes:\n  0: {name: \"OFF\"}\ntransitions:\n  0: {immediate: [7]}\n")
    code, out = check(str(broken), capsys=capsys)
    assert code == 1 and out.startswith(f"FAIL {broken}: transitions.0.immediate: 7 is not a mode listed"), out


# -- a robot's own MJCF (sim.mjcf): compiled as the simulator builds it --------------------
OWN_JOINTS = [f"{leg}_{j}_joint" for leg in ("FL", "FR", "RL", "RR") for j in ("hip", "thigh", "calf")]


def own_model(**sim: Any) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        data.setdefault("sim", {}).update({"mjcf": "physics/go2_own.xml", "mjcf_joints": OWN_JOINTS, **sim})
    return change


@pytest.mark.parametrize(("name", "sim", "expected"), [
    ("own_ok", {}, None),
    ("own_named_feet", {"mjcf_feet": {leg: f"{leg}_toe" for leg in ("FR", "FL", "RR", "RL")}}, None),
    ("own_bad_foot", {"mjcf_feet": {"FR": "FR_toe", "FL": "FL_toe", "RR": "RR_paw", "RL": "RL_toe"}},
     "sim.mjcf_feet.RR: no geom named 'RR_paw' in the model"),
    ("own_missing", {"mjcf": "physics/nothing.xml"}, "sim.mjcf: {dir}/physics/nothing.xml is not a file"),
    ("own_bad_joint", {"mjcf_joints": [*OWN_JOINTS[:-1], "RR_ankle_joint"]},
     "sim.mjcf: ['RR_ankle_joint'] are not joints of the model (sim.mjcf_joints)"),
    ("own_broken_xml", {"mjcf": "physics/broken.xml"}, "sim.mjcf: {dir}/physics/broken.xml does not load"),
])
def test_an_own_mjcf_is_built_as_the_simulator_builds_it(tree: Path, name: str, sim: dict[str, Any],
                                                         expected: str | None,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A missing file, a joint or foot the model lacks, XML MuJoCo cannot
    read: FAIL with the key; the model as it is (feet found at the legs'
    ends, or named): OK."""
    (tree / "config" / "physics" / "broken.xml").write_text("<mujoco><worldbody><body></mujoco>")
    path = variant(tree, "go2.yaml", f"go2_{name}", own_model(**sim))
    code, out = check(str(path), capsys=capsys)
    if expected is None:
        assert code == 0 and out.startswith(f"OK   {path}"), out
    else:
        assert code == 1 and out.startswith(f"FAIL {path}: {expected.format(dir=tree / 'config')}"), out


@pytest.mark.parametrize(("name", "edit", "expected"), [
    ("damped", lambda x: x.replace('damping="0.01"', 'damping="2"'), "joints carry damping (up to 2 N m s/rad"),
    ("soft_feet", lambda x: x.replace('size="0.022"', 'size="0.022" solimp="0.5 0.95 0.01"'),
     "foot's contact is softer than MuJoCo's default"),
    ("long_calf", lambda x: x.replace('pos="0 0 -0.213"/>', 'pos="0 0 -0.25"/>'),
     "foot is 37 mm from where the config puts it"),
    ("no_limits", lambda x: re.sub(r' ctrlrange="[^"]*"', "", x), "the model gives no torque limit for 12 joints"),
    ("weak_calves", lambda x: x.replace('ctrlrange="-45.43 45.43"', 'ctrlrange="-30 30"'),
     "torque_limit differs from the model's actuators on 4 joints"),
    # Spot's way: the limits on the joints (actuatorfrcrange), none on the actuators.
    ("joint_limits", lambda x: re.sub(r' ctrlrange="[^"]*"', "", x).replace(
        '<default class="knee"><joint ', '<default class="knee"><joint actuatorfrcrange="-30 30" ').replace(
        '<joint axis="0 1 0" ', '<joint axis="0 1 0" actuatorfrcrange="-23.7 23.7" '),
     "torque_limit differs from the model's actuators on 4 joints (FL_calf_joint: the model 30 N m"),
])
def test_an_own_mjcf_that_builds_is_warned_of_what_will_cost_the_robot(
        tree: Path, name: str, edit: Callable[[str], str], expected: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    source = tree / "config" / "physics" / "go2_own.xml"
    (tree / "config" / "physics" / f"{name}.xml").write_text(edit(source.read_text()))
    path = variant(tree, "go2.yaml", f"go2_model_{name}", own_model(mjcf=f"physics/{name}.xml"))
    code, out = check(str(path), capsys=capsys)
    assert code == 0 and out.startswith(f"OK   {path}"), out
    warnings = [line for line in out.splitlines() if "sim.mjcf:" in line]
    assert len(warnings) == 1 and expected in warnings[0], out


def test_the_own_go2_model_draws_no_model_warning(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = variant(tree, "go2.yaml", "go2_model_clean", own_model())
    code, out = check(str(path), capsys=capsys)
    assert code == 0 and "sim.mjcf:" not in out, out


def _op3_direction(joint: str, value: int) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        data["joint_map"]["direction"][joint] = value
    return change


def test_op3_on_its_makers_model_draws_the_damping_and_the_elbows_axes(tree: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A humanoid's own MJCF is checked as a quadruped's: the soles where
    the leg kinematics put them over 200 poses (no warning: within 5 mm),
    every joint's axis against the controller's convention (OP3's map
    agrees with its axes; its elbows turn about x where the controller's
    turn about y, which no direction can say), and what the model costs
    (OP3's 1.084 N m s/rad on every joint)."""
    code, out = check(str(tree / "config" / "op3.yaml"), capsys=capsys)
    assert code == 0
    warnings = [line for line in out.splitlines() if "sim.mjcf:" in line]
    assert len(warnings) == 2, out
    assert "turns 2 joints about another axis than the controller's: r_elbow (+x, the controller's +y), " \
        "l_elbow (+x, the controller's +y)" in warnings[0], out
    assert "20 joints carry damping (up to 1.084 N m s/rad" in warnings[1], out


@pytest.mark.parametrize(("joint", "value", "axis"), [("head_pitch", 1, "-y"), ("l_shoulder_pitch", -1, "+y"),
                                                      ("r_knee", 1, "-y")])
def test_a_humanoid_direction_the_models_axis_contradicts_is_named(
        tree: Path, joint: str, value: int, axis: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The sole check sees the legs only; the axes check names any joint,
    the head and arms too, with the direction its axis says."""
    path = variant(tree, "op3.yaml", f"op3_axis_{joint}", _op3_direction(joint, value))
    code, out = check(str(path), capsys=capsys)
    assert code == 0
    lines = [line for line in out.splitlines() if "disagrees with the model's joint axes" in line]
    assert len(lines) == 1, out
    assert f"on 1 joint: {joint} (the model's axis {axis}: direction {-value}, the config {value})" in lines[0], out


@pytest.mark.parametrize(("joint", "value", "side"), [("r_knee", 1, "right"), ("l_hip_roll", 1, "left")])
def test_a_humanoid_joint_map_that_turns_a_joint_the_wrong_way_is_found(
        tree: Path, joint: str, value: int, side: str, capsys: pytest.CaptureFixture[str]) -> None:
    """OP3's right knee turns about -y (direction -1), its hip roll about -x:
    the model's direction written instead puts the sole centimetres from
    where the controller's kinematics put it, and check-config says which
    sole and what to correct."""
    path = variant(tree, "op3.yaml", f"op3_{joint}", _op3_direction(joint, value))
    code, out = check(str(path), capsys=capsys)
    assert code == 0
    soles = [line for line in out.splitlines() if "sole is" in line]
    assert len(soles) == 1 and f"the model's {side} sole is" in soles[0] and "joint_map" in soles[0], out
