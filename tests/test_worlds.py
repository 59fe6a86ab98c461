"""Physics worlds as data (config/physics/worlds.yaml, controller/sim/world.py):
each kind of terrain is where and what its keys say, measured on the
built model (rays cast down onto it, contacts, masses)."""
from __future__ import annotations

import math
from typing import Any

import mujoco
import numpy as np
import pytest

from controller.robot.config import ConfigError, load_config
from controller.robot.resources import CONFIG_DIR
from controller.sim.physics import PhysicsRobot
from controller.sim.scorecard import Row, in_world
from controller.sim.world import (
    ROUGH_BEHIND,
    ROUGH_CELL,
    ROUGH_FLAT,
    ROUGH_HALF_WIDTH,
    World,
    named_worlds,
    rough_heights,
)

CFG = load_config(CONFIG_DIR / "cyberdog2.yaml")


def _ground(robot: PhysicsRobot, x: float, y: float = 0.0) -> float:
    """The height of the ground at (x, y): a ray cast down onto the world
    body's geoms only (the robot excluded)."""
    hit = np.zeros(1, np.int32)
    robot_body = robot.model.body("trunk").id
    dist = mujoco.mj_ray(robot.model, robot.data, np.array([x, y, 5.0]), np.array([0.0, 0.0, -1.0]),
                         None, 1, robot_body, hit)
    assert hit[0] >= 0 and robot.is_ground[hit[0]], f"no ground at ({x}, {y})"
    return 5.0 - dist


@pytest.mark.parametrize("name", sorted(named_worlds()))
def test_every_named_world_builds_and_the_robot_starts_on_its_ground(name: str) -> None:
    robot = PhysicsRobot(CFG, World.from_spec(name, "test"))
    assert robot.world.label == name
    assert robot._deepest() >= 0.0          # nothing of the robot inside the ground
    for _ in range(50):                     # it settles: no ground under it would drop it away
        z = np.zeros(12)
        robot.step(robot.q, z, np.full(12, 30.0), np.full(12, 1.0), z, CFG.dt)
    assert robot.truth().contacts, "the robot rests on the ground"
    assert robot.data.qpos[2] > robot.world.start_height


def test_stairs_up_and_down_have_the_rise_and_run_asked_for() -> None:
    up = PhysicsRobot(CFG, World.from_spec({"stairs": [0.1, 0.25, 5], "at": 0.6}, "test"))
    for i in range(6):
        x = 0.6 + (i - 0.5) * 0.25         # the middle of each tread (i 0: the floor before)
        assert _ground(up, x) == pytest.approx(0.1 * i, abs=1e-9)
    assert _ground(up, 0.6 + 5 * 0.25 + 1.0) == pytest.approx(0.5)   # the landing
    down = PhysicsRobot(CFG, World.from_spec({"stairs": [-0.1, 0.25, 5], "at": 0.6}, "test"))
    assert down.world.start_height == pytest.approx(0.5)
    assert _ground(down, 0.0) == pytest.approx(0.5)
    for i in range(1, 6):
        assert _ground(down, 0.6 + (i - 0.5) * 0.25) == pytest.approx(0.5 - 0.1 * i, abs=1e-9)


def test_a_side_slope_rises_to_the_left_at_its_angle_under_the_whole_path() -> None:
    robot = PhysicsRobot(CFG, World.from_spec({"slope": 20, "across": True}, "test"))
    t = math.tan(math.radians(20))
    for x in (-1.0, 0.0, 3.0, 8.0):
        for y in (-0.5, 0.0, 0.5):
            assert _ground(robot, x, y) == pytest.approx((y + 1.0) * t, abs=1e-6)


def test_rough_ground_has_the_rms_and_correlation_asked_for_and_a_flat_start() -> None:
    rms, length = 0.02, 0.2
    heights, level = rough_heights((rms, length, 7))
    x = -ROUGH_BEHIND + ROUGH_CELL * np.arange(heights.shape[1])
    rough = heights[:, x > 1.0] - level
    assert float(np.sqrt(np.mean(rough ** 2))) == pytest.approx(rms, rel=0.1)
    lag = int(round(length / ROUGH_CELL))
    corr = float(np.mean(rough[:, :-lag] * rough[:, lag:]) / np.mean(rough ** 2))
    print(f"rms {np.sqrt(np.mean(rough ** 2)):.4f} m, correlation at {length} m {corr:.3f} (1/e = 0.368)")
    assert corr == pytest.approx(math.exp(-1), abs=0.08)
    assert np.allclose(heights[:, np.abs(x) < ROUGH_FLAT], level)
    assert not np.allclose(heights, rough_heights((rms, length, 8))[0])     # the seed matters
    robot = PhysicsRobot(CFG, World.from_spec({"rough": [rms, length, 7]}, "test"))
    for px, py in [(1.5, 0.3), (4.0, -1.2)]:
        i, j = int(round((py + ROUGH_HALF_WIDTH) / ROUGH_CELL)), int(round((px + ROUGH_BEHIND) / ROUGH_CELL))
        assert _ground(robot, px, py) == pytest.approx(heights[i, j], abs=1e-4)


def test_a_slippery_patch_governs_the_friction_of_a_foot_on_it() -> None:
    robot = PhysicsRobot(CFG, World.from_spec({"patches": [[0.1, -1.0, 2.0]], "friction": 0.9}, "test"))
    z = np.zeros(12)
    for _ in range(100):
        robot.step(robot.q, z, np.full(12, 30.0), np.full(12, 1.0), z, CFG.dt)
    d = robot.data
    names = [robot.geom_names[g] for g in d.contact.geom[:d.ncon].ravel()]
    assert any(n.startswith("terrain_patch") for n in names)
    on_patch = [d.contact.friction[k][0] for k in range(d.ncon)
                if "terrain_patch0" in (robot.geom_names[d.contact.geom[k][0]],
                                        robot.geom_names[d.contact.geom[k][1]])]
    assert on_patch and np.allclose(on_patch, 0.1)


def _foot_contacts(robot: PhysicsRobot) -> list[tuple[float, np.ndarray]]:
    """(sliding friction, solimp) of every foot-on-floor contact while the
    robot drops 0.2 s onto its folded legs."""
    cfg, z, found = robot.cfg, np.zeros(12), []
    feet = {f"{leg}_foot" for leg in cfg.legs}
    for _ in range(100):
        robot.step(robot.q, z, np.full(12, 30.0), np.full(12, 1.0), z, cfg.dt)
        d = robot.data
        found += [(float(d.contact.friction[k][0]), d.contact.solimp[k].copy()) for k in range(d.ncon)
                  if {robot.geom_names[g] for g in d.contact.geom[k]} & feet]
    return found


def test_a_friction_world_changes_the_friction_and_keeps_a_makers_soft_feet_soft() -> None:
    """Barkour vB's feet are softer than its floor (solimp 0.015 1 0.031):
    the margin worlds "friction 0.5" and "1.2" (under and over the foot's
    0.8) make every foot contact's friction theirs, and leave its softness
    what it is in the unchanged world."""
    cfg = load_config(CONFIG_DIR / "barkour_vb.yaml")
    plain = _foot_contacts(PhysicsRobot(cfg))
    assert plain and not np.allclose(plain[0][1][:3], [0.9, 0.95, 0.001])   # not MuJoCo's default
    for friction in (0.5, 1.2):
        changed = _foot_contacts(PhysicsRobot(cfg, World.from_spec({"friction": friction}, "test")))
        assert changed and all(f == pytest.approx(friction) for f, _ in changed)
        for _, solimp in changed:
            np.testing.assert_allclose(solimp, plain[0][1])


def test_a_payload_adds_its_share_of_the_robots_mass_where_it_is_put() -> None:
    plain = PhysicsRobot(CFG)
    loaded = PhysicsRobot(CFG, World.from_spec({"payload": [0.3, 0.05, 0.0, 0.07]}, "test"))
    trunk = plain.model.body("trunk").id
    m0, m1 = plain.model.body_subtreemass[trunk], loaded.model.body_subtreemass[trunk]
    assert m1 == pytest.approx(1.3 * m0)
    assert loaded.model.body("payload").pos == pytest.approx([0.05, 0.0, 0.07])
    assert loaded.model.body_mass[loaded.model.body("payload").id] == pytest.approx(0.3 * m0)


def test_a_soft_floor_sets_the_grounds_contact_softness() -> None:
    robot = PhysicsRobot(CFG, World.from_spec({"soft": [0.06, 1.0], "step": 0.03}, "test"))
    for name in ("floor", "terrain_step"):
        assert robot.model.geom(name).solref == pytest.approx([0.06, 1.0])


def test_worlds_refuse_what_cannot_be_built_and_name_the_known_ones() -> None:
    bads: list[dict[str, Any]] = [{"stairs": [0.1, 0.25]}, {"stairs": [0.1, 0.25, 2.5]}, {"across": True},
                                  {"rough": [0.02, 0.01, 1]}, {"patches": [[0, 1, 1]]}, {"payload": [-0.1, 0, 0, 0]},
                                  {"drop": 0.1, "stairs": [-0.1, 0.25, 3]}, {"curb": [0.05, 0]},
                                  {"across": 1, "slope": 5}, {"rough": [0.01, 0.2, 1, 30.0]}]
    for bad in bads:
        with pytest.raises(ConfigError, match="world"):
            World.from_spec(bad, "test")
    with pytest.raises(ConfigError, match="stairs_10cm_up"):
        World.from_spec("no_such_world", "test")


def test_use_starts_from_a_named_world_and_changes_it() -> None:
    w = World.from_spec({"use": "stairs_10cm_up", "friction": 0.5}, "test")
    assert w.stairs == (0.1, 0.25, 5.0) and w.friction == 0.5
    assert "stairs" in w.label and "friction 0.5" in w.label


def test_in_world_runs_each_row_again_in_the_named_world_on_top_of_its_own() -> None:
    rows = [Row("cyberdog2", "trot", 16, {"world": {"friction": 0.4}, "steps": []}),
            Row("cyberdog2", "stand", 15, {"steps": []})]
    out = in_world(rows, "real_actuators_3ms")
    assert [r.name for r in out] == ["trot [real_actuators_3ms]", "stand [real_actuators_3ms]"]
    worlds = [World.from_spec(r.spec["world"], r.name) for r in out]
    assert worlds[0].friction == 0.4 and dict(worlds[0].actuators or ()) == {"delay_s": 0.003}
    assert worlds[1].friction is None
    with pytest.raises(ConfigError, match="no world"):
        in_world(rows, "nowhere")
