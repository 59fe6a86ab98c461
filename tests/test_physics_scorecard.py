"""The physics scorecard (controller/sim/scorecard.py, config/physics/scorecard.yaml)
and the trial it runs (controller/sim/trial.py): a smoke of `make physics`.

The metrics are checked on traces whose answer is known by construction,
the card's data is checked for rows that could never be judged, and one
real row runs in physics.
"""
from __future__ import annotations

import dataclasses
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

from controller.robot.config import ConfigError, load_config
from controller.sim import scorecard
from controller.sim.physics import PhysicsRobot
from controller.sim.progress import Progress, clock
from controller.sim.scorecard import Row, expand, foot_slip, judge, load_card, run_row
from controller.sim.trial import Trial
from controller.sim.world import World

CARD = load_card()


def all_rows() -> list[Row]:
    return [r for robot, spec in CARD["robots"].items() for r in expand(robot, spec)]


def test_every_check_names_a_metric_the_scorecard_measures() -> None:
    trial = Trial(load_config(), sensors={"enabled": False})
    trial.send(12)
    trial.run(0.1)
    every_event = scorecard.Marks(push=0, goal=0, script=0, fault=0)  # a push's, a goal's and a getup's too
    measured = set(scorecard.measure(trial, 0, {"target": "stand"}, np.zeros(3), marks=every_event))
    for row in all_rows():
        motion = set(scorecard.MOTION_METRICS) if "motion" in row.spec else set()
        assert set(row.spec["checks"]) <= measured | motion, (row.robot, row.name)
        assert all("s" in step for step in row.spec["steps"]), (row.robot, row.name)
        assert row.issue in (15, 16, 17, 18, 19, 37, 38, 41)


def test_every_robot_and_every_gait_and_motion_has_rows() -> None:
    rows = all_rows()
    assert {r.robot for r in rows} == {"cyberdog2", "go2", "go1", "barkour_vb", "humanoid20", "op3", "nao22"}
    cfg = load_config()
    names = {r.name for r in rows if r.robot == "cyberdog2"}
    assert cfg.motions is not None
    for motion_id in cfg.motions.files:
        assert f"motion (62/{motion_id})" in names
    gait_rows = {r.spec["steps"][0]["gait_id"] for r in rows
                 if r.robot == "cyberdog2" and r.spec["steps"][0].get("mode") == 11}
    assert {1, 3, 9, 27, 31} <= gait_rows


def test_foot_slip_is_the_slide_while_on_the_ground() -> None:
    # One foot at 1 m/s for one tick on the ground (counted from the next tick),
    # 2 ticks sliding 1 cm each, lifted, lands, slides 0.5 cm once.
    v = [0.0, 1.0, 1.0, 5.0, 0.0, 0.5]
    slide = np.array([[[x, 0.0]] for x in v])
    down = frozenset({"FR_foot"})
    contacts = [down, down, down, frozenset(), down, down]
    assert foot_slip(slide, contacts, ["FR_foot"], 0.01) == pytest.approx(0.02)


BALL_XML = """<mujoco><option timestep="0.001"/><worldbody>
  <geom type="plane" size="5 5 0.1" friction="{mu} 0.005 0.0001"/>
  <body pos="0 0 {r}"><freejoint/>
    <geom type="{kind}" size="{r} {r} {r}" mass="1" friction="{mu} 0.005 0.0001"/><site name="c"/></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("kind, mu, slides", [("sphere", 1.0, False), ("box", 0.0, True)])
def test_contact_slide_counts_sliding_not_rolling(kind: str, mu: float, slides: bool) -> None:
    # A ball set rolling at 0.5 m/s keeps its contact point still; a box on ice
    # slides with its whole sole. Both centres travel.
    import mujoco

    from controller.sim.trial import contact_slide
    r = 0.02
    model = mujoco.MjModel.from_xml_string(BALL_XML.format(mu=mu, r=r, kind=kind))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    data.qvel[0] = 0.5
    if kind == "sphere":
        data.qvel[4] = 0.5 / r                # rolling: w_y = v / r
    offset = np.array([[0.0, 0.0, -r]])
    buffer, moved, start = np.zeros(6), np.zeros(2), data.qpos[0]
    for _ in range(200):
        mujoco.mj_step(model, data)
        moved += contact_slide(model, data, [0], offset, buffer)[0] * model.opt.timestep
    travel = data.qpos[0] - start
    assert travel > 0.05
    if slides:
        assert moved[0] == pytest.approx(travel, rel=0.02)
    else:
        assert abs(moved[0]) < 0.05 * travel


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


def test_recovery_time_is_when_the_sliding_mean_is_back_for_good() -> None:
    dt = 0.002
    # Trotting at 0.5 m/s, pushed to vy 0.5 for 1 s (500 samples), then back at once.
    speed = np.zeros((2000, 2))
    speed[:, 0] = 0.5
    speed[:500, 1] = 0.5
    command = np.array([0.5, 0.0, 0.0])
    # A 150-sample window holds at most 30 pushed samples (mean vy 0.1) from sample 470 on.
    assert scorecard.recovery_time(speed, command, dt) == pytest.approx((470 + 150) * dt)
    speed[-1000:, 1] = 0.5                      # pushed again: never back to stay
    assert scorecard.recovery_time(speed, command, dt) == math.inf
    speed[:, 1] = 0.0
    speed[:, 0] = 0.3                           # 0.2 m/s short of 0.5: beyond 0.05 + 10 %
    assert scorecard.recovery_time(speed, command, dt) == math.inf


def test_goal_errors_are_measured_in_the_frame_the_goal_started_in() -> None:
    x, y, turned = scorecard.arc_end(1.0, 1.57)
    assert (x, y, turned) == pytest.approx((0.637, 0.636, 1.57), abs=1e-3)
    assert scorecard.arc_end(2.0, 0.0) == (2.0, 0.0, 0.0)
    # Facing +y in the world, walked 1.98 m along it and turned 0.05 rad.
    pos = np.array([[1.0, 1.0], [1.0, 2.0], [1.0, 2.98]])
    yaw = np.array([math.pi / 2, math.pi / 2, math.pi / 2 + 0.05])
    position, yaw_error = scorecard.goal_errors(pos, yaw, (2.0, 0.0, 0.0))
    assert position == pytest.approx(0.02) and yaw_error == pytest.approx(0.05)


def test_belief_errors_judge_the_odometry_against_the_truth() -> None:
    n = 101
    true_xy = np.column_stack([np.linspace(0.0, 10.0, n), np.zeros(n)])
    yaw = np.linspace(0.0, 0.02, n)
    # Odometry believes 2 % too much travel and no turn; velocity off by (0.03, 0.04).
    odom = np.column_stack([true_xy[:, 0] * 1.02, np.zeros(n), np.zeros(n)])
    velocity = np.tile([0.5, 0.0], (n, 1))
    m = scorecard.belief_errors(odom, velocity + [0.03, 0.04], true_xy, yaw, velocity)
    assert m["odom_position_error_share"] == pytest.approx(0.02)
    assert m["odom_travel_error_share"] == pytest.approx(0.02)
    assert m["odom_yaw_error"] == pytest.approx(0.02)
    assert m["velocity_rms_error"] == pytest.approx(0.05)
    still = scorecard.belief_errors(odom[:1].repeat(3, 0), velocity[:3], true_xy[:1].repeat(3, 0),
                                    yaw[:3], velocity[:3])
    assert math.isnan(still["odom_position_error_share"])   # no travel: no share


def test_goal_rows_send_a_move_the_controller_accepts_or_are_refused() -> None:
    msg = scorecard.goal_message({"distance": 1.0, "angle": 1.57}, 10.0)
    assert (msg.distance, msg.angle, msg.timeout) == pytest.approx((1.0, 1.57, 10.0))
    with pytest.raises(ConfigError, match="want distance"):
        scorecard.goal_message({"sideways": 1.0}, 10.0)
    with pytest.raises(ConfigError, match="would be refused"):
        scorecard.goal_message({"distance": float("nan")}, 10.0)


def test_a_world_changes_the_physics_and_not_the_controller() -> None:
    cfg = load_config()
    plain = PhysicsRobot(cfg)
    world = World.from_spec({"friction": 0.4, "trunk_mass_scale": 1.1, "step": 0.03}, "test")
    robot = PhysicsRobot(cfg, world)
    m0, m1 = plain.model, robot.model
    assert m1.geom("floor").friction[0] == pytest.approx(0.4)
    assert m1.geom("terrain_step").friction[0] == pytest.approx(0.4)
    assert m1.body("trunk").mass[0] == pytest.approx(1.1 * m0.body("trunk").mass[0])
    assert m1.body("trunk").inertia == pytest.approx(1.1 * m0.body("trunk").inertia)
    assert m1.geom("terrain_step").size[2] == pytest.approx(0.015)
    assert "terrain_step" in robot.ground_names
    # Downhill: the robot starts on a platform as high as the ramp descends.
    down = PhysicsRobot(cfg, World.from_spec({"slope": -10}, "test"))
    top = 4.0 * math.sin(math.radians(10))
    assert down.world.start_height == pytest.approx(top)
    lowest_foot = min(down.data.site_xpos[down.model.site(f"{leg}_foot").id][2] for leg in cfg.legs)
    assert top < lowest_foot < top + 0.1
    with pytest.raises(ConfigError, match="unknown keys"):
        World.from_spec({"gravity": 3}, "test")
    with pytest.raises(ConfigError, match="positive"):
        World.from_spec({"friction": 0}, "test")
    with pytest.raises(ConfigError, match="world:"):
        World.from_spec({"slope": "steep"}, "test")


def test_a_margins_row_runs_again_in_each_margin_world_under_its_own_name() -> None:
    card = scorecard.load_card()
    rows = scorecard.expand("cyberdog2", card["robots"]["cyberdog2"])
    names = [r.name for r in rows]
    base = "jump (16/6) up"
    variants = [r for r in rows if r.name.startswith(base + " [")]
    assert base in names
    assert [r.name for r in variants] == [
        f"{base} [trunk mass x0.9]", f"{base} [trunk mass x1.1]",
        f"{base} [friction 0.5]", f"{base} [friction 1]"]
    worlds = [World.from_spec(r.spec["world"], r.name) for r in variants]
    assert [w.trunk_mass_scale for w in worlds] == [0.9, 1.1, 1.0, 1.0]
    assert [w.friction for w in worlds] == [None, None, 0.5, 1.0]
    assert all(r.spec["checks"] == variants[0].spec["checks"] for r in variants)


def test_a_row_may_name_the_robots_own_figures_instead_of_numbers() -> None:
    """walk_min/walk_max (per axis of vel_des) and height_min/height_max
    come from the robot's config, so one humanoid row fits both robots; an
    unknown name or a walk figure on a robot without a biped walk is an error."""
    from controller.robot.resources import CONFIG_DIR
    h20, nao = (load_config(CONFIG_DIR / f"{r}.yaml") for r in ("humanoid20", "nao22"))
    assert scorecard.resolve(h20, ["walk_max", 0, "walk_min"], "t") == [0.25, 0, -0.5]
    assert scorecard.resolve(nao, ["walk_max", "walk_min", 0], "t") == [0.15, -0.08, 0]
    assert scorecard.resolve(nao, [0, 0, "height_min"], "t") == [0, 0, 0.18]
    assert scorecard.target_height(h20, "height_max") == 0.42
    assert scorecard.resolve(h20, 3, "t") == 3
    with pytest.raises(ConfigError, match="walk_fast"):
        scorecard.resolve(h20, ["walk_fast", 0, 0], "t")
    with pytest.raises(ConfigError, match="no biped walk"):
        scorecard.resolve(load_config(CONFIG_DIR / "cyberdog2.yaml"), ["walk_max", 0, 0], "t")
    # The quadrupeds' height rows: the stand height with an offset, the range's ends.
    cd2, go2 = (load_config(CONFIG_DIR / f"{r}.yaml") for r in ("cyberdog2", "go2"))
    assert scorecard.resolve(cd2, [0, 0, "stand_height + 0.04"], "t")[2] == pytest.approx(0.28)
    assert scorecard.resolve(go2, [0, 0, "stand_height + 0.04"], "t")[2] == pytest.approx(0.32)
    assert scorecard.target_height(go2, "height_max") == 0.36
    assert scorecard.target_height(cd2, "stand_height-0.1") == pytest.approx(0.14)
    assert scorecard.resolve(cd2, "stand_height", "t") == 0.24
    with pytest.raises(ConfigError, match="stand_height \\* 2"):
        scorecard.resolve(cd2, [0, 0, "stand_height * 2"], "t")
    # The posture row holds each robot at its own stand height (CyberDog 2's 0.24 m as before).
    posture = next(r for r in all_rows() if r.robot == "go2" and r.name == "posture roll 0.2 (3/0)").spec
    assert scorecard.resolve(go2, posture["steps"][0]["pos_des"], "t")[2] == 0.28
    assert scorecard.target_height(cd2, posture["target"]) == 0.24


def test_a_robot_named_by_its_config_file_is_scored_by_its_kinds_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`make physics ROBOT=path/to/robot.yaml`: a config the card does not
    list is scored by the rows of the card's robot of its kind, under its own
    name; a file that does not load is refused with the reason."""
    import yaml
    shipped = load_config()
    root = shipped.path.parent
    data = yaml.safe_load(shipped.path.read_text())
    data["robot"] = "mydog"
    data["fsm"] = str(root / data["fsm"])
    data["locomotion"]["gaits"] = str((root / data["locomotion"]["gaits"]).resolve())
    data["locomotion"]["user_gaits"] = str((root / data["locomotion"]["user_gaits"]).resolve())
    data["motions"]["directory"] = str((root / data["motions"]["directory"]).resolve())
    data["scripts"]["trajectories"] = [str(root / t) for t in data["scripts"]["trajectories"]]
    data["sim"]["physics"] = str(root / "physics" / "cyberdog2.yaml")
    path = tmp_path / "mydog.yaml"
    path.write_text(yaml.safe_dump(data))
    monkeypatch.setattr(scorecard, "CARD_DATA", load_card())      # the run registers mydog in it
    monkeypatch.setattr(scorecard, "configure", lambda *_: None)  # the suite's logging stays as it is
    out = tmp_path / "card.json"
    assert scorecard.main(["--robot", str(path), "--only", "stand up (12)", "--jobs", "1", "-o", str(out)]) == 0
    result = json.loads(out.read_text())
    assert [(r["robot"], r["row"]) for r in result["rows"]] == [("mydog", "stand up (12)")]
    assert result["rows"][0]["passed"]
    (tmp_path / "broken.yaml").write_text("robot: broken\n")
    assert scorecard.main(["--robot", str(tmp_path / "broken.yaml"), "-o", str(out)]) == 2


def test_progress_prints_a_line_per_row_off_a_terminal_and_one_bar_on_it() -> None:
    lines = io.StringIO()
    p = Progress(3, "rows", lines, tty=False)
    p.step("cyberdog2 stand", True)
    p.step("go2 trot", False)
    out = lines.getvalue().splitlines()
    assert out[0].startswith("[1/3] ok   cyberdog2 stand (0:00 elapsed, ~0:00 left)")
    assert out[1].startswith("[2/3] FAIL go2 trot")
    bar = io.StringIO()
    p = Progress(2, "rows", bar, tty=True)
    p.step("a")
    p.step("b")
    assert bar.getvalue().count("\r") == 2 and "[############............] 1/2 rows" in bar.getvalue()
    assert bar.getvalue().endswith("\n")                   # the line is left behind at the end
    assert clock(3725) == "1:02:05" and clock(65.4) == "1:05"


def test_progress_under_a_command_that_prints_its_own_lines() -> None:
    """validate --physics and optimise print a line per item themselves: off a
    terminal the bar adds nothing; on one it shows the item under way and
    steps aside (clears its line) for theirs."""
    quiet = io.StringIO()
    p = Progress(2, "files", quiet, tty=False, lines=0)
    p.show("running a.toml")
    p.count()
    p.step("b")
    assert quiet.getvalue() == ""
    term = io.StringIO()
    p = Progress(3, "generations", term, tty=True, lines=0)
    p.show("running a.toml")
    assert term.getvalue().endswith("0/3 generations, 0:00 elapsed: running a.toml")
    p.clear()
    p.count(ok=False)
    p.clear()                                              # the bar's line wiped for the caller's
    assert term.getvalue().endswith("\r\x1b[2K")
    p.show("running b.toml")
    assert "1/3 generations, 1 failed, 0:00 elapsed, ~0:00 left: running b.toml" in term.getvalue()
    p.close()                                              # stopped short of 3: the line is ended
    assert term.getvalue().endswith("\n")


def test_only_selects_whole_names_their_variants_or_a_pattern() -> None:
    assert scorecard.selected("stand up (12)", ["stand up (12)"])
    assert not scorecard.selected("two-leg stand", ["stand"])          # not a piece of a name
    assert scorecard.selected("motion (62/14) [friction 1]", ["motion (62/14)"])     # its variants
    assert not scorecard.selected("motion (62/14) [friction 1]", ["motion (62/1)"])
    assert scorecard.selected("a 0.2 rad/s yaw gyro bias standing", ["*gyro bias*"])
    assert scorecard.selected("motion (62/14) [friction 1]", ["motion (62/1?) [friction *]"])   # brackets plain
    assert scorecard.selected("anything", None) and scorecard.selected("anything", [])


def test_a_filter_that_selects_nothing_says_what_there_is(capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import motionctl
    assert motionctl.main(["physics", "--only", "no such row"]) == 2
    err = capsys.readouterr().err
    assert "no row is named 'no such row' (a whole name, or a pattern with * or ?); rows are named like: " in err
    assert motionctl.main(["physics", "--robot", "spot"]) == 2
    robots = "cyberdog2, go2, go1, barkour_vb, humanoid20, op3, nao22"
    assert f"no robot spot in the card (robots: {robots})" in capsys.readouterr().err


def test_every_shipped_row_has_what_it_needs_in_its_robots_config() -> None:
    """The "not configured" verdict is for a new robot's config: no row of
    a shipped robot is skipped by it. The test robots (issue 42: new-robot
    and the maker's figures) lack only what `optimise all` makes and the
    two-leg stand's sections."""
    configs = {robot: load_config(Path(scorecard.CONFIG_DIR) / spec["config"])
               for robot, spec in CARD["robots"].items()}
    test_robots = {"go1", "barkour_vb"}
    why = {(r.robot, r.name): scorecard.missing_for(configs[r.robot], r.spec) for r in all_rows()}
    assert [key for key, reason in why.items() if reason and key[0] not in test_robots] == []
    for (robot, name), reason in why.items():
        if reason and robot in test_robots:
            assert "motionctl optimise all" in reason or "two-leg stand" in reason, (robot, name, reason)


def test_what_a_config_lacks_is_named_for_the_row() -> None:
    cfg = load_config()
    assert cfg.scripts is not None
    jump = {"steps": [{"mode": 16, "gait_id": 6, "s": 3}]}
    assert scorecard.missing_for(cfg, jump) is None
    no_high = dataclasses.replace(cfg.scripts.modes[16], gaits={0: cfg.scripts.modes[16].gaits[0]})
    fewer = dataclasses.replace(cfg, scripts=dataclasses.replace(cfg.scripts, modes={**cfg.scripts.modes, 16: no_high}))
    assert scorecard.missing_for(fewer, jump) == ("this robot's jump (mode 16) has no gait 6 "
                                                  "(scripts.modes.16.gaits lists [0])")
    back = {"start_rpy": [0.0, 3.1416, 0.0], "steps": [{"mode": 12, "s": 6}]}
    assert scorecard.missing_for(cfg, back) is None
    no_roll = dataclasses.replace(cfg, scripts=dataclasses.replace(cfg.scripts, rolls=None))
    assert "no roll-over for the recovery from its back or side" in str(scorecard.missing_for(no_roll, back))
    assert scorecard.missing_for(no_roll, {**back, "start_rpy": [0.0, 0.0, 0.0]}) is None   # on its belly
    assert scorecard.missing_for(no_roll, {**back, "rl_policy": "policy.bin"}) is None      # its own policy


def test_a_new_robots_missing_modes_are_rows_not_configured_not_failures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`motionctl new-robot`'s skeleton has no jumps, two-leg stand or
    roll-over: those rows say so and what to add, and are counted apart;
    the stand row runs."""
    from controller.cli import motionctl
    assert motionctl.main(["new-robot", "mydog", "-o", str(tmp_path / "mydog.yaml")]) == 0
    monkeypatch.setattr(scorecard, "CARD_DATA", load_card())
    monkeypatch.setattr(scorecard, "configure", lambda *_: None)
    capsys.readouterr()
    out = tmp_path / "card.json"
    rows = ["stand up (12)", "jump (16/6) up", "two-leg stand (64/0)", "stand from the back (12)"]
    argv = ["--robot", str(tmp_path / "mydog.yaml"), "--jobs", "1", "-o", str(out)]
    assert scorecard.main([*argv, *(a for row in rows for a in ("--only", row))]) == 0
    result = {r["row"]: r for r in json.loads(out.read_text())["rows"] if "[" not in r["row"]}
    assert result["stand up (12)"]["passed"] and not result["stand up (12)"]["error"]
    assert result["jump (16/6) up"]["error"].startswith("not configured: this robot has no jump (mode 16)")
    assert "run `motionctl optimise all`" in result["jump (16/6) up"]["error"]
    assert result["two-leg stand (64/0)"]["error"].startswith("not configured: this robot has no two-leg stand")
    assert result["stand from the back (12)"]["error"].startswith("not configured: this robot has no roll-over")
    printed = capsys.readouterr()
    assert "1/16 rows pass (15 not configured for the robot)" in printed.out
    # The progress lines say so too: neither ok nor FAIL.
    assert "] n/c  mydog jump (16/6) up (" in printed.err and "FAIL" not in printed.err
