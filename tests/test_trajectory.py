"""Optimised joint trajectories (controller/motion/trajectory.py): the file
format's checks, the playback's timing on the kernel, and the shipped jump
files (config/trajectories/cyberdog2) against the robot and each other."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from controller.behaviours.base import make_robot
from controller.motion.trajectory import Phase, Trajectory, TrajectoryError, TrajectoryPlayback, load
from controller.robot.config import load_config
from controller.robot.native import Kernel
from controller.sim.motion_optimiser import GOALS, build, mirror

ROOT = Path(__file__).resolve().parent.parent
CFG = load_config(ROOT / "config" / "cyberdog2.yaml")
DIR = ROOT / "config" / "trajectories" / "cyberdog2"
assert CFG.scripts is not None
# The config's mode-16 gaits: gait id -> trajectory name.
JUMP_FILES = {gait: names[0] for gait, names in CFG.scripts.modes[16].gaits.items()}
STAND = make_robot(CFG, Kernel(CFG.q_min, CFG.q_max, CFG.v_max)).stand_pose()


def two_phase() -> Trajectory:
    n = CFG.num_joints
    crouch = STAND + np.tile([0.0, -0.2, 0.4], 4)
    return Trajectory("t", (
        Phase("crouch", 100, "quintic", crouch, np.full(n, 50.0), np.full(n, 1.0), np.zeros(n)),
        Phase("push", 40, "linear", STAND, np.full(n, 20.0), np.full(n, 0.5),
              np.tile([0.0, 2.0, -5.0], 4)),
    ))


def write(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "J.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_trajectory_survives_its_own_file_exactly_to_the_written_digits(tmp_path):
    traj = two_phase()
    path = tmp_path / "T.yaml"
    path.write_text(traj.to_yaml(CFG.tick_hz, CFG.joint_names, "a header"))
    assert path.read_text().startswith("# a header\n")
    back = load(path, CFG.joint_names, CFG.tick_hz)
    assert [p.ticks for p in back.phases] == [100, 40]
    for a, b in zip(traj.phases, back.phases):
        assert (a.name, a.profile) == (b.name, b.profile)
        for key in ("q", "kp", "kd", "tau"):
            np.testing.assert_allclose(getattr(b, key), getattr(a, key), atol=5e-5)


@pytest.mark.parametrize("change, message", [
    ({"joints": ["a"] * 12}, "are not this robot's"),
    ({"phases": []}, "non-empty list"),
    ({"phases": [{"duration_ms": 0}]}, "duration_ms must be a number > 0"),
    ({"phases": [{"duration_ms": 10, "profile": "step"}]}, "profile must be one of"),
    ({"phases": [{"duration_ms": 10, "q": [0.0] * 11}]}, "`q` must be 12 numbers"),
    ({"phases": [{"duration_ms": 10, "speed": 1}]}, "unknown keys ['speed']"),
])
def test_a_broken_file_is_refused_with_its_place_and_reason(tmp_path, change, message):
    good = yaml.safe_load(two_phase().to_yaml(CFG.tick_hz, CFG.joint_names))
    doc = {**good, **change}
    if "phases" in change and change["phases"]:
        doc["phases"] = [{**good["phases"][0], **change["phases"][0]}]
    path = write(tmp_path, doc)
    with pytest.raises(TrajectoryError) as err:
        load(path, CFG.joint_names, CFG.tick_hz)
    assert str(path) in str(err.value) and message in str(err.value)


@pytest.mark.parametrize("field, value, message", [
    ("q", 3.0, "outside its limits"), ("tau", 13.0, "over its torque limit"), ("kp", -1.0, "kp and kd"),
])
def test_the_robot_check_names_the_joint_and_the_limit(field, value, message):
    traj = two_phase()
    bad = getattr(traj.phases[1], field).copy()
    bad[2] = value
    phases = (traj.phases[0], Phase(**{**traj.phases[1].__dict__, field: bad}))
    with pytest.raises(TrajectoryError, match=message):
        Trajectory("t", phases).check(CFG, CFG.torque_limit)


def test_playback_reaches_each_phase_target_at_its_end_tick_with_its_gains_and_torques():
    traj = two_phase()
    k = Kernel(CFG.q_min, CFG.q_max, CFG.v_max, step_max=CFG.v_max * CFG.dt)
    start = STAND.copy()
    k.track(start)
    play = TrajectoryPlayback(traj, CFG.dt)
    t0 = 700
    play.start(k, t0, start)
    seen = {}
    for tick in range(t0, t0 + 150):
        play.step(tick)
        k.step(tick * CFG.dt)
        seen[tick - t0] = (k.pos.copy(), k.kp.copy(), k.tau.copy(), play.phase)
    crouch, push = traj.phases
    np.testing.assert_allclose(seen[100][0], crouch.q, atol=1e-12)        # the crouch's end
    assert seen[99][3] is crouch and seen[100][3] is push
    np.testing.assert_array_equal(seen[100][1], push.kp)
    np.testing.assert_array_equal(seen[100][2], push.tau)
    np.testing.assert_allclose(seen[140][0], push.q, atol=1e-12)          # the push's end
    assert seen[140][3] is None and play.done
    np.testing.assert_array_equal(seen[140][2], 0.0)       # no feed-forward after the last phase
    assert k.flagged == 0


@pytest.mark.parametrize("gait, name", sorted(JUMP_FILES.items()))
def test_every_shipped_jump_loads_and_fits_the_robot(gait, name):
    traj = load(DIR / f"{name}.yaml", CFG.joint_names, CFG.tick_hz)
    traj.check(CFG, CFG.torque_limit)
    assert [p.name for p in traj.phases] == ["crouch", "push", "flight", "land", "settle"]
    np.testing.assert_allclose(traj.phases[-1].q, STAND, atol=0.01)     # it ends at the stand
    assert np.any(traj.phases[1].tau != 0), "the push drives torque"


def test_the_command_line_offers_exactly_the_optimiser_s_goals():
    from controller.cli.optimise_cmd import MOTIONS
    assert sorted(MOTIONS) == sorted(GOALS)


@pytest.mark.parametrize("left_name, right_name", [("JumpYawLeft", "JumpYawRight"), ("JumpLeft", "JumpRight")])
def test_the_right_jump_is_the_mirror_image_of_the_left_and_mirroring_twice_is_identity(
        left_name: str, right_name: str) -> None:
    left = load(DIR / f"{left_name}.yaml", CFG.joint_names, CFG.tick_hz)
    right = load(DIR / f"{right_name}.yaml", CFG.joint_names, CFG.tick_hz)
    made = mirror(left, CFG, "R")
    again = mirror(made, CFG, "L")
    for a, b, c in zip(made.phases, right.phases, again.phases):
        assert a.ticks == b.ticks
        for key in ("q", "kp", "kd", "tau"):
            np.testing.assert_allclose(getattr(a, key), getattr(b, key), atol=5e-5)
        orig = left.phases[[p.name for p in left.phases].index(c.name)]
        np.testing.assert_array_equal(c.q, orig.q)


@pytest.mark.parametrize("left_name, right_name", [("JumpYawLeft", "JumpYawRight"), ("JumpLeft", "JumpRight")])
def test_go1s_right_jumps_are_the_mirror_images_of_its_left_ones(left_name: str, right_name: str) -> None:
    """config/go1.yaml has no scripts section: a mirror image is made by the
    legs' own pairs (FR<->FL, RR<->RL, abad negated), as `optimise all`
    made Go1's; `optimise yaw-left --mirror` on it crashed before."""
    go1 = load_config(ROOT / "config" / "go1.yaml")
    assert go1.scripts is None
    where = ROOT / "config" / "trajectories" / "go1"
    left = load(where / f"{left_name}.yaml", go1.joint_names, go1.tick_hz)
    right = load(where / f"{right_name}.yaml", go1.joint_names, go1.tick_hz)
    for a, b in zip(mirror(left, go1, "R").phases, right.phases, strict=True):
        for key in ("q", "kp", "kd", "tau"):
            np.testing.assert_allclose(getattr(a, key), getattr(b, key), atol=5e-5)


@pytest.mark.parametrize("gait, goal", [(1, "forward"), (6, "up"), (0, "yaw-left"), (4, "forward-short"), (2, "left"),
                                       (9, "forward-stair")])
def test_a_shipped_jump_is_the_optimiser_s_build_of_its_recorded_parameters(gait, goal):
    path = DIR / f"{JUMP_FILES[gait]}.yaml"
    traj = load(path, CFG.joint_names, CFG.tick_hz)
    meta = traj.meta
    assert meta is not None and meta["goal"] == goal
    params = meta["parameters"]
    rebuilt = build(CFG, GOALS[goal], [params[p.name] for p in GOALS[goal].params(CFG)])
    for a, b in zip(rebuilt.phases, traj.phases):
        assert a.ticks == b.ticks and a.profile == b.profile
        for key in ("q", "kp", "kd", "tau"):
            np.testing.assert_allclose(getattr(a, key), getattr(b, key), atol=2e-4)


def test_the_stair_jump_is_scored_off_each_stair_where_only_clearing_it_and_the_landing_band_count():
    from controller.sim.motion_optimiser import MARGIN_WORLDS, STAIR_EDGE, STAIR_TRAVEL, Outcome, cost
    goal = GOALS["forward-stair"]
    stairs = goal.worlds()[len(MARGIN_WORLDS):]
    assert goal.worlds()[:len(MARGIN_WORLDS)] == MARGIN_WORLDS
    assert [(w.drop, w.at) for w in stairs] == [(0.10, STAIR_EDGE), (0.15, STAIR_EDGE), (0.20, STAIR_EDGE)]
    assert GOALS["forward"].worlds() == MARGIN_WORLDS and len(goal.worlds(nominal=True)) == 4
    def landed(travel: float, trunk_contact_s: float = 0.0) -> Outcome:
        return Outcome(travel=travel, trunk_contact_s=trunk_contact_s, end_on_feet=True,
                       end_height=CFG.stand_height)

    low, high = STAIR_TRAVEL
    inside = [cost(goal, landed(t), CFG.stand_height, stair=True)
              for t in (low + 0.001, (low + high) / 2, high - 0.001)]
    assert max(inside) == pytest.approx(0.0, abs=1e-9)
    # On a stair a jump short of the band or past it costs like a miss; on the
    # flat the same 0.7 m is 0.2 m past the goal.
    assert cost(goal, landed(low - 0.03), CFG.stand_height, stair=True) > 5.0
    assert cost(goal, landed(high + 0.03), CFG.stand_height, stair=True) > 5.0
    assert cost(goal, landed(0.7), CFG.stand_height) > 100.0
    # A shank that strikes the edge costs as much as off the stair as anywhere.
    struck = cost(goal, landed(0.6, trunk_contact_s=0.01), CFG.stand_height, stair=True)
    assert struck >= 30.0


def test_optimise_all_writes_every_motion_and_a_config_that_plays_them(tmp_path, monkeypatch, capsys):
    """`motionctl optimise all` on a config with no scripts section (the
    new-robot skeleton): every jump and the roll-over written into the
    directory (the right-hand jumps as mirror images, by the legs' own
    mirror pairs), and `<name>_optimised.yaml` beside the config that
    extends it and loads with mode 16's eight gaits and the roll-over. The
    search itself is the optimiser's (tested with it): here it returns each
    goal's starting guess."""
    from controller.cli import motionctl
    from controller.sim import motion_optimiser
    from controller.sim.motion_optimiser import Result

    assert motionctl.main(["new-robot", "mydog", "-o", str(tmp_path / "mydog.yaml")]) == 0
    asked = []

    starts = {}

    def fake(config_path, goal, worlds, start=None, sigma=None, **_):
        asked.append(goal.name)
        starts[goal.name] = (len(worlds), start, sigma)
        cfg = load_config(config_path)
        # A roll-over that gets up from the back and from the side of negative roll only.
        rolled = [{"world": "unchanged", "cost": -0.6, "start": 3.1416},
                  {"world": "unchanged, from roll +1.57", "cost": 1.0, "start": 1.5708},
                  {"world": "unchanged, from roll -1.57", "cost": -0.6, "start": -1.5708}]
        return Result(np.array([p.start for p in goal.params(cfg)]), 1.0,
                      rolled if goal.roll_start is not None else [], 1, 1)

    monkeypatch.setattr(motion_optimiser, "optimise", fake)
    from controller.sim import two_leg_optimiser

    def fake_two_leg(config_path, worlds, **_):
        asked.append("two-leg")
        starts["two-leg"] = (len(worlds), None, None)
        cfg = load_config(config_path)
        return Result(two_leg_optimiser.start_values(cfg, "go2"), 0.3, [{"world": "unchanged", "cost": 0.3}], 1, 1)

    monkeypatch.setattr(two_leg_optimiser, "optimise", fake_two_leg)
    capsys.readouterr()
    code = motionctl.main(["--config", str(tmp_path / "mydog.yaml"), "optimise", "all",
                           "-o", str(tmp_path / "trajectories" / "mydog"), "--generations", "1"])
    assert code == 0, capsys.readouterr().err
    assert asked == ["yaw-left", "forward", "left", "forward-short", "up", "forward-stair", "roll-back", "two-leg"]
    # The jumps from the optimiser's guess in the five margin worlds; the
    # roll-over from CyberDog 2's and Go2's recorded parameters (a search
    # from each), in the margin worlds too (from the back; its sides in the
    # unchanged one).
    assert all(starts[name][0] >= 5 and starts[name][1:] == (None, 0.25) for name in asked[:-2]), starts
    worlds, start, sigma = starts["roll-back"]
    assert worlds == 5 and start is not None and sigma == 0.15
    cfg = load_config(tmp_path / "mydog.yaml")
    names = [p.name for p in motion_optimiser.GOALS["roll-back"].params(cfg)]
    for robot, given in zip(("cyberdog2", "go2"), start, strict=True):
        seed = yaml.safe_load((ROOT / "config" / "trajectories" / robot / "RollBack.yaml").read_text())
        assert given == [seed["optimised"]["parameters"][n] for n in names], robot
    written = sorted(p.stem for p in (tmp_path / "trajectories" / "mydog").glob("*.yaml"))
    assert written == sorted(["JumpYawLeft", "JumpYawRight", "JumpLong", "JumpLeft", "JumpRight", "JumpShort",
                              "JumpHigh", "JumpDownStair", "RollBack"])
    assert starts["two-leg"][0] == 5          # the card's five worlds
    cfg = load_config(tmp_path / "mydog_optimised.yaml")
    assert cfg.robot == "mydog" and cfg.scripts is not None
    assert {g: n[0] for g, n in cfg.scripts.modes[16].gaits.items()} == {
        0: "JumpYawLeft", 1: "JumpLong", 2: "JumpLeft", 3: "JumpYawRight", 4: "JumpShort", 5: "JumpRight",
        6: "JumpHigh", 9: "JumpDownStair"}
    assert cfg.scripts.rolls == {"back": "RollBack"}
    # Played on the side it gets up from (its mirror image on the other).
    assert cfg.scripts.roll_through == -1
    assert yaml.safe_load((tmp_path / "trajectories" / "mydog" / "RollBack.yaml").read_text()
                          )["optimised"]["roll_through"] == -1
    # The two-leg stand: its searched figures and mode 64, the mass model
    # read from the robot's physics file.
    assert cfg.scripts.modes[64].kind == "two_leg" and sorted(cfg.scripts.modes[64].gaits) == [0, 10]
    assert cfg.two_leg.plan.kneel_height == pytest.approx(0.964 * cfg.stand_height, abs=1e-4)
    assert cfg.mass_model is not None and cfg.mass_model.total == pytest.approx(cfg.geometry.mass, rel=0.02)
    # Run again, it keeps the trajectories there (a run stopped half way
    # goes on) and searches the two-leg stand; --fresh makes them all again.
    (tmp_path / "trajectories" / "mydog" / "JumpHigh.yaml").unlink()
    asked.clear()
    code = motionctl.main(["--config", str(tmp_path / "mydog.yaml"), "optimise", "all",
                           "-o", str(tmp_path / "trajectories" / "mydog"), "--generations", "1"])
    assert code == 0 and asked == ["up", "two-leg"]
    assert "JumpLong.yaml is there: kept" in capsys.readouterr().out
    again = load_config(tmp_path / "mydog_optimised.yaml").scripts
    assert again is not None and again.modes[16].gaits.keys() == cfg.scripts.modes[16].gaits.keys()
    asked.clear()
    code = motionctl.main(["--config", str(tmp_path / "mydog.yaml"), "optimise", "all", "--fresh",
                           "-o", str(tmp_path / "trajectories" / "mydog"), "--generations", "1"])
    assert code == 0 and len(asked) == 8
    right = load(tmp_path / "trajectories" / "mydog" / "JumpRight.yaml", cfg.joint_names, cfg.tick_hz)
    left = load(tmp_path / "trajectories" / "mydog" / "JumpLeft.yaml", cfg.joint_names, cfg.tick_hz)
    fr, fl = cfg.joint_names.index("FR_abad"), cfg.joint_names.index("FL_abad")
    assert right.phases[1].q[fr] == pytest.approx(-left.phases[1].q[fl])      # mirrored, abad negated
    assert "wrote" in capsys.readouterr().out


def test_optimise_world_scores_every_margin_world_again_on_real_motors(tmp_path, monkeypatch, capsys):
    """`--world real_actuators_3ms`: the optimiser gets the margin worlds and
    each of them again with the real motors laid over it (the friction or
    mass change kept); the file records the worlds and the command line; an
    unknown world is refused before anything runs."""
    from controller.cli import motionctl
    from controller.sim import motion_optimiser
    from controller.sim.motion_optimiser import MARGIN_WORLDS, Result

    seen = []

    def fake(config_path, goal, worlds, **_):
        seen.append(tuple(worlds))
        cfg = load_config(config_path)
        # A roll-over that gets up from the back and from the side of negative roll only.
        rolled = [{"world": "unchanged", "cost": -0.6, "start": 3.1416},
                  {"world": "unchanged, from roll +1.57", "cost": 1.0, "start": 1.5708},
                  {"world": "unchanged, from roll -1.57", "cost": -0.6, "start": -1.5708}]
        return Result(np.array([p.start for p in goal.params(cfg)]), 1.0,
                      rolled if goal.roll_start is not None else [], 1, 1)

    monkeypatch.setattr(motion_optimiser, "optimise", fake)
    out = tmp_path / "Up.yaml"
    assert motionctl.main(["--config", "config/go2.yaml", "optimise", "up", "-o", str(out),
                           "--generations", "1", "--world", "real_actuators_3ms"]) == 0
    (worlds,) = seen
    n = len(MARGIN_WORLDS)
    assert worlds[:n] == MARGIN_WORLDS and len(worlds) == 2 * n
    for ideal, real in zip(worlds[:n], worlds[n:]):
        assert ideal.actuators is None and real.actuators == (("delay_s", 0.003),)
        assert (real.friction, real.trunk_mass_scale) == (ideal.friction, ideal.trunk_mass_scale)
    labels = [w.label for w in worlds[n:]]
    assert "friction 0.5, real actuators (delay_s 0.003)" in labels
    text = out.read_text()
    assert "--world real_actuators_3ms" in text and "real actuators (delay_s 0.003)" in text
    capsys.readouterr()
    assert motionctl.main(["--config", "config/go2.yaml", "optimise", "up", "-o", str(out),
                           "--world", "moon"]) == 1
    assert "no world 'moon'" in capsys.readouterr().err and len(seen) == 1
