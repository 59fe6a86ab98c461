"""`motionctl validate --physics` (controller/motion/validate.py, controller/sim/physics_check.py):
files that pass the static check are played in the MuJoCo simulator from a
stand and judged per step. A shipped motion runs clean; files written to fall
or to put the knees down fail, in the step that does it; without --physics,
nothing of the simulator is imported. Simulated time is kept short (each
file: a 3 s stand, then about a second of motion).
"""
from __future__ import annotations

import argparse
import io
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from controller.motion import validate as v
from controller.motion.motions import load_motion
from controller.motion.validate import Finding
from controller.robot.config import load_config
from controller.robot.resources import CONFIG_DIR
from controller.sim import physics_check as pc

ROOT = Path(__file__).resolve().parent.parent
CYBERDOG2 = load_config(CONFIG_DIR / "cyberdog2.yaml")


def parse(*argv: str, physics: v.PhysicsFactory | None = pc.PhysicsCheck) -> argparse.Namespace:
    """The arguments as motionctl parses them, with the physics run handed in
    as the command line hands it."""
    parser = argparse.ArgumentParser(prog="motionctl")
    v.add_parser(parser.add_subparsers(dest="command", required=True), "validate", physics=physics)
    return parser.parse_args(list(argv))


def validate(*argv: str) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = v.run(parse("validate", *argv), out=out)
    return code, out.getvalue().splitlines()


def shortest_configured_motion() -> tuple[int, Path]:
    """The cyberdog2 motion (id, file) that takes the least time."""
    motions = CYBERDOG2.motions
    assert motions is not None
    def seconds(item: tuple[int, str]) -> int:
        return sum(b.duration for b in load_motion(motions.directory / item[1], motions.directory))
    motion_id, name = min(motions.files.items(), key=seconds)
    return motion_id, motions.directory / name


def test_a_shipped_motion_runs_without_a_fall():
    motion_id, path = shortest_configured_motion()
    blocks = load_motion(path, path.parent)
    assert sum(b.duration for b in blocks) * CYBERDOG2.dt <= 2.0    # keep the test short
    code, out = validate("--physics", str(path))
    assert code == 0, "\n".join(out)
    assert out[0].startswith(f"OK   {path}: ok (")
    assert out[1].startswith(f"  physics: ok (robot cyberdog2, played as mode 62/{motion_id}, "
                             "its configured motion id; ")
    rows = out[2:-1]
    # One row per step, numbered and timed as the file has them, then the hold after.
    assert len(rows) == len(blocks) + 1
    for n, (row, block) in enumerate(zip(rows, blocks, strict=False), start=1):
        assert row.startswith(f"    step {n} ({block.mode}/{block.gait_id}, "
                              f"{round(block.duration * CYBERDOG2.dt, 2):g} s): ok  slip "), row
    assert rows[-1].startswith("    after the end (0.3 s): ok  slip ")
    assert "FELL" not in "\n".join(out) and "TRUNK" not in "\n".join(out)
    assert out[-1] == "1 files, 0 failed; physics: 1 run, 0 not run"


def test_lifting_both_left_feet_puts_the_knees_on_the_ground(tmp_path):
    # Statically a fine motion (a new file, not in the robot's library); in
    # physics the body drops onto its left knees while both left feet lift.
    bad = tmp_path / "lift_left.toml"
    bad.write_text(textwrap.dedent("""\
        [[step]]
        type = "pose"
        foot_support = [1, 1, 1, 1]
        body_cmd = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        foot_pose = [0.0, 0.0, 0.0]
        ctrl_point = [0.0, 0.0, 0.0]
        duration = 200

        [[step]]
        type = "swingleg"
        foot_support = [1, 0, 1, 0]
        foot_pose = [0.0, 0.1, 0.15]
        duration = 1000
        """))
    code, out = validate("--physics", str(bad))
    text = "\n".join(out)
    assert code == 1, text
    assert out[0] == f"OK   {bad}: ok (2 steps, 1.2 s)"
    assert out[1].startswith("  physics: TRUNK CONTACT (robot cyberdog2, played as mode 62/")
    assert "a free motion id" in out[1]
    assert out[2].startswith("    step 1 (21/1, 0.2 s): ok  slip ")
    assert out[3].startswith("    step 2 (21/2, 1 s): TRUNK CONTACT ")
    assert "knee_pad" in out[3]
    assert out[-1] == "1 files, 1 failed; physics: 1 run, 0 not run"


def test_the_robots_own_sit_down_rests_its_knees_where_its_pose_puts_them():
    # The CyberDog 2's own sit-down folds the rear knees to their limit a few
    # mm over the floor (its last pose step): the knee pads touching there is
    # the pose, not a collapse, so it passes; lifting both left feet above
    # (the test before) puts the knees down where no pose puts them and fails.
    from controller.robot.resources import DATA_ROOT
    sit = (DATA_ROOT / "../shared/peers/cyberdog2_motion_files/preinstalled/"
           "cyberdog2_sitDown_posCtrl.toml").resolve()
    if not sit.is_file():
        pytest.fail(f"the CyberDog 2's motion files are not beside the repository ({sit})")
    code, out = validate("--physics", str(sit))
    text = "\n".join(out)
    assert code == 0, text
    knees = [line for line in out if "knee_pad" in line]
    assert knees and all(line.endswith("saturation 0 %") and ": ok  trunk contact " in line
                         and "(allowed: a knee in a pose)" in line for line in knees), text


def test_a_script_that_tips_the_humanoid_over_fell(tmp_path):
    # The right foot lifts with the weight still over both feet: the robot
    # topples to the right during the hold.
    bad = tmp_path / "LiftRight.yaml"
    bad.write_text(textwrap.dedent("""\
        - duration: 400
          targets:
            - {id: r_hip_pitch,   position: -0.768, gain: 30, torque: 100}
            - {id: r_knee,        position: 1.535,  gain: 30, torque: 100}
            - {id: r_ankle_pitch, position: -0.768, gain: 30, torque: 100}
        - duration: 800
          targets:
            - {id: r_hip_pitch,   position: -0.768, gain: 30, torque: 100}
        """))
    code, out = validate("--physics", str(bad))
    text = "\n".join(out)
    assert code == 1, text
    assert out[0].startswith(f"OK   {bad}: ok (2 frames, 1.2 s, robot humanoid20)")
    assert out[1].startswith("  physics: FELL (robot humanoid20, played by a script request "
                             "in the script mode 60; ")
    # humanoid20's fall detection (config `fall`) saw it and stopped the script.
    assert out[2].startswith("    it did not finish: the controller saw the robot falling "
                             "and stopped it (falling ")
    assert "falling right" in out[2]
    assert out[3].startswith("    frame 1 (0.4 s): ok  ")
    # Stopped in frame 2, it goes down after the script's (early) end.
    assert out[5].startswith("    after the end (0.3 s): FELL at ")
    fell_at = float(out[5].split("FELL at ")[1].split(" s")[0])
    assert 0.4 <= fell_at <= 1.2          # within frame 2's window
    tilt = float(out[5].split("(tilt ")[1].split(" rad")[0])
    assert tilt > pc.FALL_TILT


def test_without_physics_nothing_of_the_simulator_is_imported():
    _, path = shortest_configured_motion()
    probe = ("import sys\n"
             "from controller.cli.motionctl import main\n"
             f"code = main(['validate', {str(path)!r}])\n"
             "print(code, sorted(m for m in sys.modules if m == 'mujoco' or m.startswith('mujoco.')"
             " or m == 'controller.sim.physics_check'))\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.splitlines()[-1] == "0 []", done.stdout + done.stderr


def test_physics_without_a_physics_run_handed_in_is_a_clear_error(capsys):
    _, path = shortest_configured_motion()
    assert v.run(parse("validate", "--physics", str(path), physics=None)) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--physics is not available here" in captured.err


def test_a_robot_without_a_script_mode_is_reported_as_not_run(tmp_path: Path) -> None:
    # cyberdog2 has no script mode: a keyframe script for its legs is checked
    # but not run in physics, and that is said, not passed silently.
    script = tmp_path / "Crouch.yaml"
    targets = "\n".join(f"      - {{id: {leg}_{joint}, position: {q:.4f}, gain: 25}}"
                        for leg in ("FR", "FL", "RR", "RL")
                        for joint, q in zip(("abad", "hip", "knee"), (0.0, -1.1, 1.8)))
    script.write_text(f"frames:\n  - duration: 800\n    targets:\n{targets}\n")
    code, out = validate("--physics", "--config", str(CONFIG_DIR / "cyberdog2.yaml"), str(script))
    assert code == 0
    assert out[1] == ("  physics: not run (robot cyberdog2 has no script mode (config "
                      "scripts.mode): its scripts play only inside its scripted modes)")
    assert out[-1] == "1 files, 0 failed; physics: 0 run, 1 not run"


def test_a_step_list_on_a_robot_without_a_motion_library_is_not_run():
    _, path = shortest_configured_motion()
    report = pc.PhysicsCheck([]).report(
        Finding(path, "ok", True, robot=load_config(CONFIG_DIR / "humanoid20.yaml")))
    assert not report.ran and not report.failed
    assert report.lines() == ["  physics: not run (robot humanoid20 has no motion library "
                              "(config `motions`), so no mode 62)"]


def row(**kw: object) -> pc.Row:
    fields: dict = dict(label="step 4 (7/1, 2 s)", start_s=3.0, seconds=2.0, fell_at=None, tilt=0.1,
                        trunk_s=1.25, trunk_geoms=("trunk",), slip=0.03, saturation=0.021)
    return pc.Row(**(fields | kw))


def test_trunk_contact_fails_a_step_unless_it_lies_down():
    lying = row(lying=True)
    assert not lying.failed
    assert lying.line() == ("step 4 (7/1, 2 s): ok  trunk contact 1.25 s (trunk) (allowed: a "
                            "lie-down or getup step)  slip 0.030 m (over 0.02 m)  saturation 2 %")
    standing = row(label="step 4 (21/1, 2 s)")
    assert standing.failed
    assert standing.line().startswith("step 4 (21/1, 2 s): TRUNK CONTACT 1.25 s (trunk)  slip ")
    fell = row(lying=True, fell_at=3.42, tilt=1.3)
    assert fell.failed        # a fall fails even a lie-down step
    assert fell.line().startswith("step 4 (7/1, 2 s): FELL at 3.42 s (tilt 1.30 rad)  trunk contact 1.25 s")
    report = pc.Report(Path("x.toml"), "cyberdog2", "played as mode 62/127", rows=[lying])
    assert not report.failed and report.lines()[0].startswith("  physics: ok (")


def test_a_getup_may_go_down_on_purpose_and_is_judged_by_its_end():
    # StandUpBack is in humanoid20's fall.except_scripts: from a stand it
    # sits down onto its hands and rises again; the frames may tilt and
    # touch, the end must be upright on the feet.
    code, out = validate("--physics", "config/scripts/humanoid20/StandUpBack.yaml")
    text = "\n".join(out)
    assert code == 0, text
    assert out[1].startswith("  physics: ok (robot humanoid20, a getup (config fall.except_scripts")
    assert "allowed: a lie-down or getup step" in text          # it did touch the floor
    assert out[-2].startswith("    after the end (0.3 s): ok  ")
