"""The CyberDog 2's own motion files, unchanged, on motiond in physics (issue 37):
a representative few of `make physics`'s "robot file" rows (every file is
there), judged as the scorecard judges them on ground truth: no fall, no
trunk contact, upright at the end, no step refused, the bar at 100 only at
the end, and the body's travel and turn as the steps command.

The files are the peer copy beside the repository (../shared/peers/
cyberdog2_motion_files, Apache-2.0), read in place, never copied."""
from __future__ import annotations

import math

import pytest

from controller.motion.motions import MotionLibrary, load_motion
from controller.protocol.block import Block
from controller.robot.config import ConfigError, load_config
from controller.robot.config.motions import MotionsConfig, load_motions
from controller.robot.config.reader import Reader
from controller.robot.resources import DATA_ROOT
from controller.sim import scorecard
from controller.sim.motion_path import commanded_path

PEER = (DATA_ROOT / "../shared/peers/cyberdog2_motion_files").resolve()
CFG = load_config()


def peer_rows() -> dict[str, scorecard.Row]:
    if not PEER.is_dir():
        pytest.fail(f"the CyberDog 2's motion files are not at {PEER} (the peers "
                    "directory beside the repository, as CI lays it)")
    rows = scorecard.expand("cyberdog2", scorecard.CARD_DATA["robots"]["cyberdog2"])
    return {r.name: r for r in rows if r.name.startswith("robot file ")}


@pytest.mark.parametrize("name", [
    "preinstalled/cyberdog2_swing_head_posCtrl.toml",     # pose steps that yaw about ctrl_point
    "preinstalled/cyberdog2_ballet.toml",                 # motion gaits 69 and 68 (a turning trot)
    "user/parameter/cyberdog2_user81_front_lift.toml",    # user gait 81 from the robot's own define
])
def test_a_robot_file_does_on_motiond_what_it_does_on_the_robot(name: str) -> None:
    rows = peer_rows()
    row = scorecard.run_row(rows[f"robot file {name}"])
    assert not row.error, row.error
    failed = {k: (row.metrics.get(k), limit) for k, (ok, limit) in row.verdicts.items() if not ok}
    assert not failed, failed
    for metric in ("refused_s", "path_error_share", "turn_error_share", "bar_early_s"):
        assert metric in row.verdicts


def test_every_robot_file_has_a_row() -> None:
    rows = peer_rows()
    files = sorted(p.relative_to(PEER) for d in ("preinstalled", "user/parameter")
                   for p in (PEER / d).glob("*.toml"))
    assert len(files) >= 48
    assert {f"robot file {f}" for f in files} == set(rows)


def test_the_commanded_path_integrates_the_steps() -> None:
    loco = CFG.locomotion
    assert loco is not None
    from controller.behaviours.locomotion import load_motion_gaits
    from controller.motion.gait_table import load_gaits
    gaits = load_gaits(loco.gaits_dir, 4)
    gaits.update(load_motion_gaits(loco.gaits_dir, 4, gaits))
    ballet = load_motion(PEER / "preinstalled" / "cyberdog2_ballet.toml", PEER, 2.0)
    path = commanded_path(ballet, gaits.get, CFG.dt)
    # 6 s of gait 68 at yaw 0.3 rad/s and 0.025 m/s to the right, the rest in place.
    assert path.yaw == pytest.approx(1.8, abs=1e-9)
    assert path.distance == pytest.approx(0.15, abs=1e-9)
    # Turning while it sidesteps: the arc's chord, 0.15 m x sinc(0.9).
    assert math.hypot(path.x, path.y) == pytest.approx(0.15 * math.sin(0.9) / 0.9, rel=1e-3)
    # A window clamps: 50 (special pronk) takes no velocity; 16/4 jumps the
    # 30 cm its trajectory file is named for (0.286 m at its data end, in flight).
    pronk = [Block(mode=11, gait_id=50, vel_des=(0.5, 0.0, 0.0), duration=1000),
             Block(mode=16, gait_id=4, duration=395)]
    path = commanded_path(pronk, gaits.get, CFG.dt)
    assert (path.x, path.y, path.yaw) == pytest.approx((0.30, 0.0, 0.0))


def test_an_ordinary_gaits_path_ramps_and_couples_as_the_walk_does() -> None:
    """SPEC §6.4: an ordinary gait's velocity is rate-limited (x +1 / -2
    m/s^2 by default) and full |vx| halves the yaw allowance; a motion gait's
    holds from its step's start (SPEC §12.A.1)."""
    loco = CFG.locomotion
    assert loco is not None
    from controller.motion.gait_table import load_gaits
    gaits = load_gaits(loco.gaits_dir, 4)
    trot = gaits[5]
    assert (trot.accel.x_up, trot.accel.x_down, trot.window_max[0]) == (1.0, 2.0, 1.6)
    # 1 s up to 1 m/s (0.5 m), 1 s at it, then a stand: down at 2 m/s^2 (0.25 m).
    steps = [Block(mode=11, gait_id=5, vel_des=(1.0, 0.0, 0.0), duration=1000),
             Block(mode=11, gait_id=1, duration=500)]
    path = commanded_path(steps, gaits.get, CFG.dt)
    assert path.x == pytest.approx(0.5 + 1.0 + 0.25, abs=2e-3) and path.yaw == 0.0
    # At the window's top speed the yaw window (2.5 rad/s) is halved.
    full = [Block(mode=11, gait_id=5, vel_des=(1.6, 0.0, 2.5), duration=5000)]
    path = commanded_path(full, gaits.get, CFG.dt)
    ramp = 2.5 / 2 / trot.accel.yaw          # s to reach 1.25 rad/s
    assert path.yaw == pytest.approx(1.25 * (10.0 - ramp / 2), abs=2e-3)
    # Any other mode between two walks stops the body.
    stop = [Block(mode=11, gait_id=5, vel_des=(1.0, 0.0, 0.0), duration=1000),
            Block(mode=21, gait_id=1, duration=10),
            Block(mode=11, gait_id=5, vel_des=(1.0, 0.0, 0.0), duration=1000)]
    assert commanded_path(stop, gaits.get, CFG.dt).x == pytest.approx(2 * 1.5, abs=2e-3)


def test_a_pose_offset_counts_where_the_body_ends_over_its_feet() -> None:
    """Mode 21 moves the body over its feet by +pos_des and turns it by
    -rpy_des[2]; a height transition (21/5) or a stand puts it back over
    them, a jump takes the offset along."""
    def pose(x: float = 0.0, y: float = 0.0, yaw: float = 0.0) -> Block:
        return Block(mode=21, gait_id=1, pos_des=(x, y, 0.0), rpy_des=(0.0, 0.0, yaw), duration=100)
    sit = load_motion(PEER / "preinstalled" / "cyberdog2_sitDown_posCtrl.toml", PEER, 2.0)
    path = commanded_path(sit, lambda _id: None, CFG.dt)
    assert (path.x, path.y, path.yaw) == pytest.approx((-0.13, 0.0, 0.0))    # -0.05, then -0.08
    back = [pose(x=-0.1, yaw=0.3), Block(mode=21, gait_id=5, pos_des=(0, 0, 0.25), duration=100)]
    assert commanded_path(back, lambda _id: None, CFG.dt).x == 0.0
    # Turned right by 0.3 (yaw +0.3), then 0.1 forward in that heading; a jump keeps it.
    kept = [pose(yaw=0.3), pose(x=0.1), Block(mode=16, gait_id=6, duration=100)]
    path = commanded_path(kept, lambda _id: None, CFG.dt)
    assert (path.x, path.y, path.yaw) == pytest.approx((0.1 * math.cos(0.3), -0.1 * math.sin(0.3), -0.3))


def test_a_walk_brings_only_the_feet_it_lifts_to_the_body() -> None:
    """After a pose offset, a walk brings the feet its timetable lifts to the
    body: all four in a trot, the two rear ones in a rear lift (so a height
    transition then puts the body over a centre of the feet that moved by
    half the offset), none in a stand."""
    loco = CFG.locomotion
    assert loco is not None
    from controller.behaviours.locomotion import load_motion_gaits
    from controller.motion.gait_table import load_gaits
    gaits = load_gaits(loco.gaits_dir, 4)
    gaits.update(load_motion_gaits(loco.gaits_dir, 4, gaits))
    def ending(gait_id: int, walks: int = 1) -> float:
        steps = [Block(mode=21, gait_id=1, pos_des=(0.06, 0.0, 0.0), duration=100),
                 *[Block(mode=11, gait_id=gait_id, duration=500)] * walks,
                 Block(mode=21, gait_id=5, pos_des=(0.0, 0.0, 0.24), duration=100)]
        return commanded_path(steps, gaits.get, CFG.dt).x
    assert ending(3) == pytest.approx(0.06)      # a trot: every foot stepped
    assert ending(65) == pytest.approx(0.03)     # a rear lift: the front feet stayed ...
    assert ending(65, walks=6) == pytest.approx(0.03)     # ... however many steps it takes
    assert ending(70) == pytest.approx(0.015)    # a pitch-down: one foot
    assert ending(31) == 0.0                     # a stand: none


# -- motions.robot_files: the robot's own folder in the config ------------------------------


def robot_files_section(extra: dict[str, object] | None = None) -> MotionsConfig:
    here = DATA_ROOT / "config" / "robot.yaml"     # where such a config would sit
    data = {"motions": {"robot_files": str(PEER), **(extra or {})}}
    return load_motions(Reader(here, data), here)


def test_robot_files_maps_every_id_of_the_spec_to_the_robots_file() -> None:
    motions = robot_files_section({"unmapped": 0})
    expected = {0, *range(1, 7), *range(8, 35), 70, *range(80, 92), 96, 111, 112}
    assert set(motions.files) == expected
    assert motions.files[11] == "preinstalled/cyberdog2_ballet.toml"
    assert motions.files[81] == "user/parameter/cyberdog2_user81_front_lift.toml"
    library = MotionLibrary(motions.directory, motions.files, 2.0, motions.unmapped)
    assert not library.errors
    # An id without a file plays the all-in-one (SPEC §4.1: 0 and any unmapped id).
    ids = (60, 61, 92, 97, 100)
    assert all(len(library.expand(i, 0) or []) == len(library.motions[0]) for i in ids)


def test_robot_files_is_checked() -> None:
    with pytest.raises(ConfigError, match="not both"):
        robot_files_section({"directory": "."})
    with pytest.raises(ConfigError, match="`ids` goes with `directory`"):
        robot_files_section({"ids": {1: "x.toml"}})
    with pytest.raises(ConfigError, match="unmapped: motion 7 is not mapped"):
        robot_files_section({"unmapped": 7})
    here = DATA_ROOT / "config" / "robot.yaml"
    with pytest.raises(ConfigError, match="holds none of the robot's motion files"):
        load_motions(Reader(here, {"motions": {"robot_files": str(DATA_ROOT / "gaits")}}), here)
    # Without `unmapped`, an id without a file is refused, naming the library.
    motions = robot_files_section()
    library = MotionLibrary(motions.directory, motions.files, 2.0, motions.unmapped)
    assert library.expand(60, 0) is None and "not in the motion library" in library.why_missing(60)


def test_a_motion_rows_result_is_written_as_json() -> None:
    """bench/physics.json takes plain numbers and booleans (a numpy float in
    the commanded path once made every verdict a numpy bool)."""
    import json
    row = peer_rows()["robot file preinstalled/cyberdog2_sitDown_posCtrl_left.toml"]
    done = scorecard.run_row(row)
    assert not done.error, done.error
    text = json.dumps(scorecard.to_json([done]))
    assert '"path_error_share"' in text
