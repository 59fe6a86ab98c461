"""`motionctl validate` (controller/motion/validate.py): every shipped motion file
passes, and each kind of broken file fails with a message that names the
file, the place in it (step, frame or line) and the reason. Bad files are
written under tmp_path; nothing opens a socket."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from controller.motion import validate as v
from controller.motion.mof import MOF_HEADER
from controller.motion.validate import Finding, validate_paths
from controller.robot.config import load_config

ROOT = Path(__file__).resolve().parent.parent
MOTIONS = sorted((ROOT / "gaits" / "motions" / "cyberdog2").glob("*.toml"))
SCRIPTS = sorted((ROOT / "config" / "scripts" / "humanoid20").glob("*.yaml"))
STAND_MOF = ROOT / "tests" / "fixtures" / "stand.mof"
HUMANOID20 = ROOT / "config" / "humanoid20.yaml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, findings
    return findings[0]


def failure(path: Path, **kw: Any) -> str:
    """The message of the one failing Finding for `path`."""
    f = only(validate_paths([path], **kw))
    assert not f.ok, f
    assert f.path == path
    assert str(path) in f.message       # the message names the file
    return f.message


# -- shipped files -------------------------------------------------------------------------
def test_shipped_files_are_there():
    assert MOTIONS and SCRIPTS and STAND_MOF.is_file()


@pytest.mark.parametrize("path", MOTIONS + SCRIPTS + [STAND_MOF], ids=lambda p: p.name)
def test_every_shipped_motion_file_passes(path):
    f = only(validate_paths([path]))
    assert f.ok, f.message
    assert f.message.startswith("ok (")


def test_ok_messages_summarise_the_file():
    toml, script, mof = validate_paths([MOTIONS[0], SCRIPTS[0], STAND_MOF])
    assert toml.message.endswith(" s)") and " steps, " in toml.message
    assert " frames, " in script.message and "robot humanoid20" in script.message
    assert mof.message == "ok (motion stand: 1 joint line, 0.1 s; columns from nao22.yaml)"


# -- keyframe scripts -------------------------------------------------------------------------
def frame(ms: float, *targets: str) -> str:
    lines = [f"- duration: {ms}", "  targets:"]
    lines += [f"    - {{{t}}}" for t in targets]
    return "\n".join(lines) + "\n"


def test_script_with_an_unknown_joint_id(tmp_path):
    path = write(tmp_path / "tail.yaml",
                 frame(500, "id: r_knee, position: 0.5, gain: 30")
                 + frame(500, "id: r_knee, position: 0.5, gain: 30",
                         "id: r_tail, position: 0.1, gain: 30"))
    msg = failure(path)
    assert "frame 2, line 7" in msg
    assert "unknown joint id 'r_tail'" in msg
    # No shipped robot has a tail: reported against the one that knows the rest.
    assert "checked against robot humanoid20" in msg


def test_script_position_outside_the_joint_limits(tmp_path):
    path = write(tmp_path / "knee.yaml", frame(1000, "id: r_knee, position: 3.0, gain: 30"))
    msg = failure(path)
    assert "frame 1, line 3" in msg
    assert "r_knee: position 3 rad is outside its limits [0, 2.6]" in msg
    assert "humanoid20" in msg


def test_script_frame_too_fast_for_the_velocity_limit(tmp_path):
    path = write(tmp_path / "fast.yaml",
                 frame(1000, "id: r_knee, position: 0.0, gain: 30")
                 + frame(100, "id: r_knee, position: 2.5, gain: 30"))
    msg = failure(path)
    assert "frame 2, line 6" in msg
    assert "above its limit 7 rad/s" in msg


@pytest.mark.parametrize("ms", [0, -200])
def test_script_duration_zero_or_negative(tmp_path, ms):
    path = write(tmp_path / "still.yaml", frame(ms, "id: r_knee, position: 0.5, gain: 30"))
    msg = failure(path)
    assert "frame 1, line 1" in msg
    assert f"duration must be positive, got {ms} ms" in msg


def test_script_yaml_syntax_error_names_the_line(tmp_path):
    path = write(tmp_path / "broken.yaml", "- duration: 100\n  targets: [\n")
    msg = failure(path)
    assert "line 3" in msg and "not valid YAML" in msg


def test_script_robot_is_the_one_that_knows_its_joints(tmp_path):
    dog = write(tmp_path / "dog.yaml", frame(500, "id: FR_knee, position: 1.0, gain: 30"))
    human = write(tmp_path / "human.yaml", frame(500, "id: R_KNEE, position: 1.0, gain: 30"))
    found = validate_paths([dog, human])
    assert [f.ok for f in found] == [True, True]
    assert found[0].message.endswith("robot cyberdog2)")
    assert found[1].message.endswith("robot humanoid20)")


def test_script_against_a_given_robot(tmp_path):
    path = write(tmp_path / "dog.yaml", frame(500, "id: FR_knee, position: 1.0, gain: 30"))
    msg = failure(path, cfg=load_config(HUMANOID20))
    assert "unknown joint id 'FR_knee'" in msg and "r_knee" in msg
    assert only(validate_paths([SCRIPTS[0]], config=HUMANOID20)).ok


def test_script_with_a_config_that_does_not_load(tmp_path):
    bad = write(tmp_path / "robot.yaml", "robot: x\nkind: spider\n")
    msg = failure(SCRIPTS[0], config=bad)
    assert f"cannot check against {bad}" in msg and "spider" in msg


# -- step-list motions (.toml) -----------------------------------------------------------------
def step(**fields: Any) -> str:
    def value(x: Any) -> Any:
        return f'"{x}"' if isinstance(x, str) else str(x).lower() if isinstance(x, bool) else x
    return "[[step]]\n" + "".join(f"{k} = {value(x)}\n" for k, x in fields.items()) + "\n"


def test_toml_first_step_with_duration_zero(tmp_path):
    path = write(tmp_path / "m.toml", step(type="transition", height=0.2, duration=0)
                 + step(type="transition", height=0.24, duration=500))
    msg = failure(path)
    assert "step 1: duration: 0 ticks" in msg and "never ends" in msg


def test_toml_negative_duration(tmp_path):
    path = write(tmp_path / "m.toml", step(type="transition", height=0.2, duration=500)
                 + step(type="transition", height=0.24, duration=-5))
    msg = failure(path)
    assert "step 2: duration: must be >= 0 ms, got -5" in msg


def test_toml_field_of_the_wrong_type(tmp_path):
    path = write(tmp_path / "m.toml", step(type="transition", height=0.2, duration=500)
                 + step(type="pose", body_cmd="up", duration=500))
    msg = failure(path)
    assert "step 2: body_cmd: expected an array of 6 numbers" in msg


def test_toml_step_without_type(tmp_path):
    path = write(tmp_path / "m.toml", step(duration=500))
    assert "step 1: a step needs a `type` or a `file`" in failure(path)


def test_toml_warnings_are_counted_but_do_not_fail(tmp_path):
    path = write(tmp_path / "m.toml", step(type="transition", height=0.2, duration=500,
                                           duraton=700))
    f = only(validate_paths([path]))
    assert f.ok and f.message == "ok (1 step, 0.5 s, 1 warning)"
    assert "duraton: unknown key" in f.warnings[0]


def test_toml_include_resolves_from_the_files_directory(tmp_path):
    write(tmp_path / "parts" / "down.toml", step(type="transition", height=0.18, duration=600))
    main = write(tmp_path / "main.toml", step(file="parts/down.toml")
                 + step(type="transition", height=0.24, duration=400))
    assert only(validate_paths([main])).message == "ok (2 steps, 1 s)"


def test_toml_error_in_an_included_file_names_that_file(tmp_path):
    part = write(tmp_path / "parts" / "bad.toml", step(type="transition", duration=-1))
    main = write(tmp_path / "main.toml", step(file="parts/bad.toml"))
    msg = failure(main)
    assert f"{main}: in an included file: {part.resolve()}: step 1: duration: must be >= 0 ms" \
        in msg


def test_a_command_sequence_gets_a_hint(tmp_path):
    path = write(tmp_path / "seq.toml", step(mode=12, gait_id=0, duration=0))
    assert "a command sequence or Gait Params file, not a motion file" in failure(path)


# -- .mof motion nets ----------------------------------------------------------------------------
JOINT_LINE = " ".join(["*"] * len(MOF_HEADER)) + " 1 100"


def mof(name: str, *body: str) -> str:
    return "\n".join([f"motion_id = {name}", "label start", JOINT_LINE, *body,
                      "transition allMotions extern start"]) + "\n"


def test_mof_transition_to_a_label_the_motion_lacks(tmp_path):
    path = write(tmp_path / "wave.mof", mof("wave", "transition wave wave again"))
    msg = failure(path)
    assert f"{path}:4: motion 'wave' has no label 'again'" in msg


def test_mof_transition_to_a_missing_label_of_another_file(tmp_path):
    a = write(tmp_path / "a.mof", mof("a", "transition b b middle"))
    b = write(tmp_path / "b.mof", mof("b"))
    fa, fb = validate_paths([a, b])
    assert fb.ok
    assert not fa.ok and f"{a}:4: motion 'b' has no label 'middle'" in fa.message


def test_mof_transition_to_an_unknown_motion(tmp_path):
    path = write(tmp_path / "wave.mof", mof("wave", "transition wave ghost start"))
    assert f"{path}:4: transition to unknown motion 'ghost'" in failure(path)


def test_mof_files_given_together_link_as_one_net(tmp_path):
    a = write(tmp_path / "a.mof", mof("a", "transition b b start"))
    b = write(tmp_path / "b.mof", mof("b", "transition a a start"))
    assert all(f.ok for f in validate_paths([a, b]))
    assert "unknown request 'b'" in failure(a)      # alone, `b` is nowhere


def test_mof_link_error_points_at_the_refused_file(tmp_path):
    a = write(tmp_path / "a.mof", mof("a", "transition a b start"))
    b = write(tmp_path / "b.mof", mof("b").replace(" 1 100", " 1 0"))
    fa, fb = validate_paths([a, b])
    assert not fb.ok and f"{b}:3: duration must be positive" in fb.message
    assert not fa.ok and f"transition to unknown motion 'b' ({b} defines it" in fa.message


def test_mof_line_outside_the_limits_and_too_fast(tmp_path):
    cols = ["*"] * len(MOF_HEADER)
    cols[MOF_HEADER.index("LL3")] = "150"       # knee far past its limit
    far = write(tmp_path / "far.mof", mof("far", " ".join(cols) + " 1 500"))
    assert f"{far}:4: LL3 = 150 deg puts l_knee" in failure(far)
    cols[MOF_HEADER.index("LL3")] = "0"
    start = " ".join(cols) + " 1 500"
    cols[MOF_HEADER.index("LL3")] = "100"
    fast = write(tmp_path / "fast.mof", mof("fast", start, " ".join(cols) + " 1 100"))
    msg = failure(fast)
    assert f"{fast}:5: LL3 moves 100.0 deg in 100 ms" in msg and "velocity limit" in msg


# -- arguments -----------------------------------------------------------------------------------
def test_a_directory_is_walked_recursively_and_sorted(tmp_path):
    write(tmp_path / "b" / "walk.toml", step(type="transition", height=0.2, duration=500))
    write(tmp_path / "a.yaml", frame(500, "id: r_knee, position: 0.5, gain: 30"))
    write(tmp_path / "c" / "stand.mof", STAND_MOF.read_text())
    write(tmp_path / "notes.txt", "not a motion")
    write(tmp_path / ".git" / "hidden.toml", "garbage")
    found = validate_paths([tmp_path])
    assert [f.path.relative_to(tmp_path).as_posix() for f in found] == \
        ["a.yaml", "b/walk.toml", "c/stand.mof"]
    assert all(f.ok for f in found), found


def test_a_file_named_and_found_in_a_directory_is_checked_once(tmp_path):
    path = write(tmp_path / "stand.mof", STAND_MOF.read_text())
    assert only(validate_paths([path, tmp_path])).ok


def test_missing_path_unknown_type_and_empty_directory(tmp_path):
    notes = write(tmp_path / "notes.txt", "x")
    empty = tmp_path / "empty"
    empty.mkdir()
    missing, unknown, nothing = validate_paths([tmp_path / "gone.toml", notes, empty])
    assert (missing.ok, missing.message) == (False, "no such file")
    assert not unknown.ok and unknown.message.startswith("unknown file type")
    assert not nothing.ok and "no motion files" in nothing.message


def test_a_crashing_loader_becomes_a_failure_of_that_file(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr(v, "load_motion", boom)
    monkeypatch.setattr(v, "parse_mof", boom)
    toml, mof_file, script = validate_paths([MOTIONS[0], STAND_MOF, SCRIPTS[0]])
    assert not toml.ok and toml.message == f"{MOTIONS[0]}: unexpected RuntimeError: boom"
    assert not mof_file.ok and "unexpected RuntimeError: boom" in mof_file.message
    assert script.ok


# -- the command ---------------------------------------------------------------------------------
def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="motionctl")
    parser.add_argument("--config")             # motionctl's own, for the LCM link
    v.add_parser(parser.add_subparsers(dest="command", required=True), "validate")
    return parser.parse_args(list(argv))


def test_run_exits_0_when_every_file_is_ok(capsys):
    args = parse("--config", "lcm.yaml", "validate", str(MOTIONS[0]), str(STAND_MOF))
    assert args.config == "lcm.yaml" and args.robot_config is None
    assert args.func(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"OK   {MOTIONS[0]}: ok (")
    assert out[1].startswith(f"OK   {STAND_MOF}: ok (")
    assert out[-1] == "2 files, 0 failed"


def test_run_exits_1_with_a_failure_and_prints_warnings(tmp_path, capsys):
    bad = write(tmp_path / "bad.yaml", frame(0, "id: r_knee, position: 0.5, gain: 30"))
    odd = write(tmp_path / "odd.toml", step(type="transition", height=0.2, duration=500, x=1))
    args = parse("validate", "--warnings", "--config", str(HUMANOID20), str(bad), str(odd))
    assert v.run(args, object()) == 1
    out = capsys.readouterr().out
    assert f"FAIL {bad}: {bad}: frame 1, line 1: duration must be positive" in out
    assert f"OK   {odd}: ok (1 step, 0.5 s, 1 warning)" in out
    assert "     warning: " in out and "x: unknown key" in out
    assert out.endswith("2 files, 1 failed\n")
    assert "Traceback" not in out
