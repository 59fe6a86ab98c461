"""User gaits (SPEC §8) in `motionctl validate` and `validate --physics`
(controller/motion/validate.py, controller/sim/physics_check.py), and the
scorecard's `upload:` step (controller/sim/scorecard.py).

Gait Def and Gait Params files are told apart from step lists by their first
line and checked with the parsers the daemon runs on an upload; in physics,
Params pair with a Def, are uploaded with it on user_gait_file and run as
mode 62/110, one row per step. Simulated time is kept short: the physics runs
use a two-step Params file (under 2 s) or the Def alone (about 3.6 s), each
after the 3 s stand.
"""
from __future__ import annotations

import argparse
import io
import shutil
import textwrap
from pathlib import Path

import pytest

from controller.motion import validate as v
from controller.motion.validate import GAIT_DEF, GAIT_PARAMS, TOML, kind_of
from controller.robot.config import load_config
from controller.robot.resources import CONFIG_DIR
from controller.sim import physics_check as pc
from controller.sim.scorecard import Row, load_card, run_row

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_DEF = ROOT / "gaits" / "user" / "Gait_Def_example.toml"
EXAMPLE_PARAMS = ROOT / "gaits" / "user" / "Gait_Params_example_full.toml"

STEP = """\
[[step]]
mode = 11
gait_id = {gait}
contact = 15
value = 0
duration = {ms}
vel_des = [0.0, 0.0, 0.0]
rpy_des = [0.0, 0.0, 0.0]
pos_des = [0.0, 0.0, 0.0]
acc_des = [5.0, 5.0, 1.0, 1.0, 1.0, 10.0]
ctrl_point = [0.0, 0.0, 0.4]
foot_pose = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
step_height = [{height}, {height}]
"""
# One 1.2 s cycle of the example's walk in place, then 0.6 s of the stand.
SHORT_PARAMS = ("# Gait Params\n" + STEP.format(gait=110, ms=1200, height="40040.0")
                + STEP.format(gait=31, ms=600, height="0.05"))


def validate(*argv: str) -> tuple[int, list[str]]:
    parser = argparse.ArgumentParser(prog="motionctl")
    v.add_parser(parser.add_subparsers(dest="command", required=True), "validate", physics=pc.PhysicsCheck)
    out = io.StringIO()
    code = v.run(parser.parse_args(["validate", *argv]), out=out)
    return code, out.getvalue().splitlines()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# -- static ----------------------------------------------------------------------------
def test_the_first_line_makes_a_toml_a_user_gait(tmp_path: Path) -> None:
    assert kind_of(EXAMPLE_DEF) == GAIT_DEF
    assert kind_of(EXAMPLE_PARAMS) == GAIT_PARAMS
    # The header must be the very first characters, as the upload checks it.
    late = write(tmp_path / "late.toml", "\n# Gait Params\n[[step]]\nmode = 12\n")
    assert kind_of(late) == TOML
    code, out = validate(str(EXAMPLE_DEF), str(EXAMPLE_PARAMS))
    assert code == 0
    assert out == [
        f"OK   {EXAMPLE_DEF}: ok (Gait Def: 8 sections, a 1.2 s cycle, robot cyberdog2)",
        f"OK   {EXAMPLE_PARAMS}: ok (Gait Params: 5 steps, 13 s, robot cyberdog2)",
        "2 files, 0 failed"]


def test_a_broken_gait_def_names_the_line(tmp_path: Path) -> None:
    # The daemon skips a section that does not fit (and says which line); a
    # cycle over 30 s it refuses.
    bad = write(tmp_path / "def.toml", textwrap.dedent("""\
        # Gait Def
        [[section]]
        contact = [1, 1, 0, 1]
        duration = 8
        [[section]]
        contact = [1, 2, 1, 1]
        duration = 8
        [[section]]
        contact = [1, 1, 1, 1]
        duration = 2
        """))
    code, out = validate("--warnings", str(bad))
    assert code == 0
    assert out[0] == f"OK   {bad}: ok (Gait Def: 2 sections, a 0.3 s cycle, robot cyberdog2, 1 warning)"
    assert out[1].startswith(f"     warning: {bad}: line 6: section of line 5 skipped: contact needs 4 values")
    long = write(tmp_path / "long.toml", "# Gait Def\n" + "[[section]]\ncontact = [1, 1, 1, 1]\n"
                 "duration = 600\n" * 2)
    code, out = validate(str(long))
    assert code == 1
    assert out[0] == (f"FAIL {long}: {long}: the cycle is 1200 segments; at most 1000 (30 s) "
                      "are allowed")


def test_broken_gait_params_fail_naming_the_step_or_line(tmp_path: Path) -> None:
    nested = write(tmp_path / "nested.toml", "# Gait Params\n" + STEP.format(gait=110, ms=600, height=0)
                   + "[[step]]\nmode = 62\ngait_id = 1\nduration = 600\n")
    syntax = write(tmp_path / "syntax.toml", "# Gait Params\n[[step]]\nmode = 11\nduration = = 3\n")
    code, out = validate(str(nested), str(syntax))
    assert code == 1
    assert out[0] == (f"FAIL {nested}: {nested}: step 2: mode: 62: a motion step cannot start "
                      "another motion")
    assert out[1].startswith(f"FAIL {syntax}: {syntax}: line 4: not valid TOML")


def test_a_gait_def_on_a_robot_without_a_gait_generator_fails(tmp_path: Path) -> None:
    code, out = validate("--config", str(CONFIG_DIR / "humanoid20.yaml"), str(EXAMPLE_DEF))
    assert code == 1
    assert "robot humanoid20 has no quadruped gait generator" in out[0]


# -- physics: pairing ------------------------------------------------------------------
def test_gait_params_without_a_def_are_not_run_with_the_reason(tmp_path: Path) -> None:
    alone = write(tmp_path / "alone" / "params.toml", SHORT_PARAMS)
    code, out = validate("--physics", str(alone))
    assert code == 0, "\n".join(out)
    assert out[1] == ("  physics: not run (Gait Params run with a Gait Def: none was given and "
                      "its directory has none; give the Def with it (motionctl validate "
                      "--physics DEF PARAMS))")
    assert out[-1] == "1 files, 0 failed; physics: 0 run, 1 not run"
    # Two Defs beside it: which one is meant is not guessed.
    two = tmp_path / "two"
    params = write(two / "params.toml", SHORT_PARAMS)
    for name in ("a.toml", "b.toml"):
        shutil.copyfile(EXAMPLE_DEF, two / name)
    code, out = validate("--physics", str(params))
    assert out[1] == ("  physics: not run (Gait Params run with a Gait Def: none was given and "
                      "its directory has 2 (a.toml, b.toml); give the Def with it (motionctl "
                      "validate --physics DEF PARAMS))")
    # Given on the command line, the one in its directory is taken...
    check = pc.PhysicsCheck(v.validate_paths([params, two / "a.toml", EXAMPLE_DEF]))
    assert check._pair(params) == ((two / "a.toml").resolve(), "")
    # ...and one that fails validate is the reason it does not run.
    broken = write(tmp_path / "broken" / "def.toml", "# Gait Def\n" + "[[section]]\n"
                   "contact = [1, 1, 1, 1]\nduration = 600\n" * 2)
    check = pc.PhysicsCheck(v.validate_paths([alone, broken]))
    assert check._pair(alone) == (None, "its Gait Def def.toml fails validate")


# -- physics: runs ---------------------------------------------------------------------
def test_a_def_and_params_run_as_motion_110_with_a_row_per_step(tmp_path: Path) -> None:
    params = write(tmp_path / "params.toml", SHORT_PARAMS)
    code, out = validate("--physics", str(EXAMPLE_DEF), str(params))
    text = "\n".join(out)
    assert code == 0, text
    assert out[1] == "  physics: not run (played under its Gait Params: params.toml)"
    assert out[3].startswith("  physics: ok (robot cyberdog2, uploaded with the Gait Def "
                             "Gait_Def_example.toml, played as mode 62/110; "), text
    assert out[4].startswith("    step 1 (11/110, 1.2 s): ok  slip "), text
    assert out[5].startswith("    step 2 (11/31, 0.6 s): ok  slip "), text
    assert out[6].startswith("    after the end (0.3 s): ok  slip "), text
    assert out[7] == "2 files, 0 failed; physics: 1 run, 1 not run"


def test_a_def_alone_walks_in_place_a_row_per_cycle(tmp_path: Path) -> None:
    definition = tmp_path / "def.toml"
    shutil.copyfile(EXAMPLE_DEF, definition)
    code, out = validate("--physics", str(definition))
    text = "\n".join(out)
    assert code == 0, text
    assert out[1].startswith("  physics: ok (robot cyberdog2, walked in place as mode 11/110 "
                             "for 3 cycles with 4 cm steps, no Gait Params given with it; "), text
    assert [line.split(":")[0] for line in out[2:-1]] == [
        "    cycle 1 (1.2 s)", "    cycle 2 (1.2 s)", "    cycle 3 (1.2 s)", "    after the end (0.3 s)"]
    assert all(": ok  slip " in line for line in out[2:-1]), text


# -- the scorecard's upload step ---------------------------------------------------------
def test_the_card_uploads_the_example_and_runs_110() -> None:
    rows = load_card()["robots"]["cyberdog2"]["rows"]
    names = [r["name"] for r in rows]
    row = rows[names.index("user gait example (62/110)")]
    assert names.index("user gait example (62/110)") == names.index("motion (62/{id})") + 1
    uploads = [Path(p) for s in row["steps"] for p in s.get("upload", ())]
    assert [ROOT / p for p in uploads] == [EXAMPLE_DEF, EXAMPLE_PARAMS]
    assert row["steps"][-1]["mode"] == 62 and row["steps"][-1]["gait_id"] == 110
    assert row["margins"] is True


@pytest.mark.parametrize("name, error", [
    ("gaits/user/missing.toml", "upload gaits/user/missing.toml: no such file"),
    ("gaits/user/README.md", "the controller refused the upload of gaits/user/README.md: "
                             "user_gait_file upload refused: the text starts with neither"),
])
def test_an_upload_that_cannot_be_made_is_the_rows_error(name: str, error: str) -> None:
    row = run_row(Row("cyberdog2", "upload", 17, {
        "prelude": "none", "steps": [{"upload": [name], "s": 0.01}], "checks": {}}))
    assert error in row.error


def test_an_upload_step_stores_the_texts() -> None:
    # The same upload the card's row makes, checked in the controller it went to.
    from controller.sim.trial import Trial
    trial = Trial(load_config())
    trial.send_file(EXAMPLE_DEF.read_text())
    trial.send_file(EXAMPLE_PARAMS.read_text())
    trial.run(0.01)
    assert trial.ctl.gaits.user_gait == {"def": EXAMPLE_DEF.read_text(),
                                   "params": EXAMPLE_PARAMS.read_text()}
    assert len(trial.ctl.gaits.user_params) == 5
