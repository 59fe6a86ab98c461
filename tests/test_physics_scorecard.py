"""The physics scorecard (controller/sim/scorecard.py, config/physics/scorecard.yaml)
and the trial it runs (controller/sim/trial.py): a smoke of `make physics`.

The metrics are checked on traces whose answer is known by construction,
the card's data is checked for rows that could never be judged, and one
real row runs in physics.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from controller.robot.config import load_config
from controller.sim import scorecard
from controller.sim.scorecard import Row, expand, foot_slip, judge, load_card, run_row
from controller.sim.trial import Trial

CARD = load_card()


def all_rows() -> list[Row]:
    return [r for robot, spec in CARD["robots"].items() for r in expand(robot, spec)]


def test_every_check_names_a_metric_the_scorecard_measures() -> None:
    trial = Trial(load_config(), sensors={"enabled": False})
    trial.send(12)
    trial.run(0.1)
    measured = set(scorecard.measure(trial, 0, {"target": "stand"}, np.zeros(3)))
    for row in all_rows():
        assert set(row.spec["checks"]) <= measured, (row.robot, row.name)
        assert all("s" in step for step in row.spec["steps"]), (row.robot, row.name)
        assert row.issue in (15, 16, 17, 18, 19)


def test_every_robot_and_every_gait_and_motion_has_rows() -> None:
    rows = all_rows()
    assert {r.robot for r in rows} == {"cyberdog2", "humanoid20", "nao22"}
    cfg = load_config()
    names = {r.name for r in rows if r.robot == "cyberdog2"}
    assert cfg.motions is not None
    for motion_id in cfg.motions.files:
        assert f"motion (62/{motion_id})" in names
    gait_rows = {r.spec["steps"][0]["gait_id"] for r in rows
                 if r.robot == "cyberdog2" and r.spec["steps"][0].get("mode") == 11}
    assert {1, 3, 9, 27, 31} <= gait_rows


def test_foot_slip_is_the_slide_while_on_the_ground() -> None:
    # One foot: on the ground for 3 samples sliding 2 cm, lifted, lands 10 cm on, slides 1 cm.
    xs = [0.0, 0.01, 0.02, 0.5, 0.12, 0.13]
    feet = np.array([[[x, 0.0, 0.0]] for x in xs])
    down = frozenset({"FR_foot"})
    contacts = [down, down, down, frozenset(), down, down]
    assert foot_slip(feet, contacts, ["FR_foot"]) == pytest.approx(0.02)


def test_judge_applies_the_per_command_tolerance() -> None:
    checks = {"vx_error": {"max": 0.05, "per_command": 0.1}, "tilt": {"max": 0.1},
              "rear": {"min": 1.2}}
    metrics = {"vx_error": 0.14, "tilt": 0.05, "rear": 0.3}
    v = judge(metrics, checks, np.array([1.0, 0.0, 0.0]))
    assert v["vx_error"] == (True, "<= 0.15")
    assert v["tilt"][0] and not v["rear"][0]
    v = judge(metrics, checks, np.array([0.5, 0.0, 0.0]))
    assert not v["vx_error"][0]                 # limit 0.1 at 0.5 m/s
    assert not judge({"x": math.nan}, {"x": {"max": 1.0}}, np.zeros(3))["x"][0]
    assert judge({}, {"x": {"max": 1.0}}, np.zeros(3))["x"] == (False, "not measured")


def test_the_stand_row_runs_in_physics_and_is_judged_on_ground_truth() -> None:
    row = next(r for r in all_rows() if r.robot == "cyberdog2" and r.name == "stand up (12)")
    done = run_row(row)
    assert done.error == ""
    stand = load_config().stand_height
    assert abs(done.metrics["height"] - stand) == pytest.approx(done.metrics["height_error"])
    assert done.metrics["height"] > 0.2 and done.metrics["end_on_feet"] == 1.0
    assert done.passed
    out = scorecard.to_json([done])
    assert json.loads(json.dumps(out))["rows"][0]["checks"]["tilt"]["passed"] is True


def test_a_row_that_physically_fails_is_marked_failed() -> None:
    """Lying on its back with nothing commanded: the stand row's criteria fail."""
    row = next(r for r in all_rows() if r.robot == "cyberdog2" and r.name == "stand up (12)")
    spec = {**row.spec, "start_rpy": [math.pi, 0.0, 0.0], "steps": [{"mode": 7, "gait_id": 0, "s": 1}]}
    done = run_row(Row("cyberdog2", "on its back", 15, spec))
    assert done.error == "" and not done.passed
    assert not done.verdicts["end_on_feet"][0] and not done.verdicts["tilt"][0]
    assert done.metrics["tilt"] == pytest.approx(math.pi, abs=0.1)
