"""The 20-servo humanoid's building blocks: config/humanoid20.yaml, the 6-DoF
leg kinematics and the open-loop quintic walk. Pure functions, no sockets."""
import itertools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from controller.motion.biped_walk import QuinticWalk, Spline, WalkParams, load_walk_params
from controller.robot.config import ConfigError, load_config
from controller.robot.humanoid_kinematics import (
    LEG_JOINTS,
    LEG_SIDES,
    FootPose,
    HumanoidGeometry,
    HumanoidLegKinematics,
    rpy_of,
)
from controller.robot.kinematics import rotation_rpy

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "config" / "humanoid20.yaml"
DT = 0.002
GROUPS = {"right_leg": 6, "left_leg": 6, "right_arm": 3, "left_arm": 3, "head": 2}


@pytest.fixture(scope="module")
def cfg():
    return yaml.safe_load(CONFIG.read_text())


@pytest.fixture(scope="module")
def kin(cfg):
    return HumanoidLegKinematics(HumanoidGeometry.from_mapping(cfg["geometry"]))


@pytest.fixture(scope="module")
def params(cfg):
    return load_walk_params(CONFIG.parent / cfg["locomotion"]["walk"])


@pytest.fixture(scope="module")
def limits(cfg):
    j = cfg["joints"]
    return (np.array([x["min"] for x in j]), np.array([x["max"] for x in j]),
            np.array([x["vmax"] for x in j]))


@pytest.fixture
def walk(params, kin):
    return QuinticWalk(params, kin)


def pose_vector(cfg, name):
    pose = cfg["poses"][name]
    return np.array([pose[j["name"]] for j in cfg["joints"]])


# ------------------------------------------------------------------ config

def test_config_lists_20_joints_legs_first_in_wire_order(cfg):
    assert cfg["kind"] == "humanoid"
    names = [j["name"] for j in cfg["joints"]]
    assert len(names) == 20 == len(set(names))
    groups = [j["group"] for j in cfg["joints"]]
    expected = [g for g, n in GROUPS.items() for _ in range(n)]
    assert groups == expected
    # Legs first: motor_error[12] of the CyberDog response covers them.
    assert names[:12] == [f"{s[0]}_{j}" for s in LEG_SIDES for j in LEG_JOINTS]
    for j in cfg["joints"]:
        assert j["min"] < j["max"]
        assert 6.0 <= j["vmax"] <= 8.0
    for group, tau in cfg["torque_limit"].items():
        assert group in GROUPS and 4.0 <= tau <= 10.0
    assert set(cfg["torque_limit"]) == set(GROUPS)


def test_every_pose_lists_every_joint_inside_the_limits(cfg, limits):
    q_min, q_max, _ = limits
    names = {j["name"] for j in cfg["joints"]}
    assert {"fold", "crouch", "stand", "lie"} <= set(cfg["poses"])
    for name, pose in cfg["poses"].items():
        assert set(pose) == names, name
        q = pose_vector(cfg, name)
        assert np.all((q >= q_min) & (q <= q_max)), name
    assert cfg["sim"]["start_pose"] in cfg["poses"]


def test_gains_cover_every_group_in_joint_order(cfg):
    for name in ("pose", "recovery", "lie_down", "damper", "posture", "walk"):
        entry = cfg["gains"][name]
        assert set(entry) == set(GROUPS), name
        for group, n in GROUPS.items():
            kp, kd = entry[group]["kp"], entry[group]["kd"]
            assert len(kp) == len(kd) == n, (name, group)
            assert min(kp) >= 0 and min(kd) >= 0


def test_lcm_block_matches_the_quadruped(cfg):
    dog = yaml.safe_load((ROOT / "config" / "cyberdog2.yaml").read_text())
    assert cfg["lcm"] == dog["lcm"]


def test_fsm_table(cfg):
    fsm = yaml.safe_load((CONFIG.parent / cfg["fsm"]).read_text())
    assert set(fsm["modes"]) == {0, 7, 11, 12, 21, 60}
    assert all(isinstance(m["name"], str) for m in fsm["modes"].values())
    t = {src: (set(e.get("immediate", [])), set(e.get("when_ready", [])))
         for src, e in fsm["transitions"].items()}
    assert t == {0: ({7, 12}, set()), 7: ({0, 12, 60}, set()), 12: ({0, 7}, {11, 21, 60}),
                 21: ({0, 7, 11, 12, 60}, set()), 11: ({0}, {7, 12, 21, 60}),
                 60: ({0, 7, 12}, {11, 21})}


def test_poses_are_flat_footed_and_stand_is_the_ik_at_stand_height(cfg, kin):
    for name in cfg["poses"]:
        q = pose_vector(cfg, name)
        for i, side in enumerate(LEG_SIDES):
            foot = kin.forward(q[6 * i:6 * i + 6], side)
            np.testing.assert_allclose(foot.rotation, np.eye(3), atol=1e-5)
            np.testing.assert_allclose(foot.position[:2], kin.hip[side][:2], atol=1e-5)
    q_stand, clipped = kin.stance_legs(cfg["stand_height"])
    assert not clipped
    assert kin.body_height(pose_vector(cfg, "stand")) == pytest.approx(cfg["stand_height"],
                                                                       abs=1e-5)
    np.testing.assert_allclose(pose_vector(cfg, "stand")[:12], q_stand, atol=1e-5)


def test_walk_rest_pose_is_the_stand_pose(cfg, params, kin, walk):
    hips = cfg["geometry"]["hip_offset"]
    assert params.trunk_height == cfg["stand_height"]
    assert params.foot_distance == pytest.approx(hips["left"][1] - hips["right"][1])
    walk.reset()
    q = walk.joint_targets(walk.step(DT, (0.0, 0.0, 0.0)))
    assert walk.is_stopped()
    np.testing.assert_allclose(q, pose_vector(cfg, "stand")[:12], atol=1e-5)


def test_walk_params_errors_name_the_key(params):
    data = yaml.safe_load((ROOT / "gaits" / "humanoid" / "quintic_walk.yaml").read_text())
    data["double_support_ratio"] = 1.5
    with pytest.raises(ValueError, match="double_support_ratio"):
        WalkParams.from_mapping(data, "walk.yaml")
    data = yaml.safe_load((ROOT / "gaits" / "humanoid" / "quintic_walk.yaml").read_text())
    data["velocity_limits"]["y"] = [0.1]
    with pytest.raises(ValueError, match=r"velocity_limits\.y"):
        WalkParams.from_mapping(data, "walk.yaml")


# ----------------------------------------------------------- config loader

def test_config_is_per_joint_for_both_kinds() -> None:
    hum = load_config(CONFIG)
    dog = load_config()
    assert hum.kind == "humanoid" and hum.num_joints == 20
    assert hum.joint_names[:2] == ["r_hip_yaw", "r_hip_roll"]
    for cfg in (hum, dog):
        n = cfg.num_joints
        assert cfg.torque_limit.shape == cfg.v_max.shape == cfg.q_min.shape == (n,)
        for gains in cfg.gains.values():
            assert gains.kp.shape == gains.kd.shape == (n,)
        for pose in cfg.poses.values():
            assert pose.shape == (n,)
    # Quadruped triples tiled over the legs; humanoid groups in joint order.
    np.testing.assert_allclose(dog.gains["pose"].kp, [40, 30, 30] * 4)
    np.testing.assert_allclose(hum.gains["walk"].kp[12:15], [10, 10, 8])
    np.testing.assert_allclose(hum.torque_limit[[0, 11, 12, 19]], [8.4, 8.4, 6.0, 6.0])
    assert {"fold", "crouch", "stand", "lie"} <= set(hum.poses)
    assert hum.walk is not None and hum.walk.walk_gaits == {3} and hum.locomotion is None
    assert dog.motor_ctrl_mutation_limit is not None
    assert dog.walk is None and dog.motor_ctrl_mutation_limit.shape == (12,)


def write_variant(tmp_path: Path, edit: Callable[[dict[str, Any]], object]) -> Path:
    data = yaml.safe_load(CONFIG.read_text())
    data["locomotion"]["walk"] = str(ROOT / "gaits" / "humanoid" / "quintic_walk.yaml")
    data["scripts"]["directories"] = [str(CONFIG.parent / d) for d in data["scripts"]["directories"]]
    edit(data)
    path = tmp_path / "humanoid.yaml"
    path.write_text(yaml.safe_dump(data))
    # The FSM table is named relative to the config.
    (tmp_path / data["fsm"]).write_text((CONFIG.parent / data["fsm"]).read_text())
    return path


@pytest.mark.parametrize("edit, where", [
    (lambda d: d["joints"][3].update(min=3.0), "joints[3].max"),
    (lambda d: d["poses"]["stand"].pop("head_yaw"), "poses.stand.head_yaw"),
    (lambda d: d["poses"]["lie"].update(r_knee=3.0), "poses: lie: outside the joint limits"),
    (lambda d: d["gains"]["walk"]["head"].update(kp=[1.0]), "gains.walk.head.kp"),
    (lambda d: d["torque_limit"].pop("left_arm"), "torque_limit.left_arm"),
    (lambda d: d["joints"][5].update(group="right_arm"), "joints: group right_leg has 5 joints"),
    (lambda d: d["gains"].pop("walk"), "gains.walk: missing"),
    (lambda d: d.pop("locomotion"), "gains.walk: set, but there is no `locomotion`"),
    (lambda d: d["locomotion"].update(default_gait=4), "locomotion.default_gait"),
    (lambda d: d["geometry"].update(thigh=-1), "geometry.thigh"),
    (lambda d: d["locomotion"].update(walk="nowhere.yaml"), "locomotion.walk"),
])
def test_humanoid_config_errors_name_file_and_key(tmp_path: Path, edit: Callable[[dict[str, Any]], object],
                                                  where: str) -> None:
    path = write_variant(tmp_path, edit)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert str(path) in message
    for part in where.split(": "):
        assert part in message, message


def test_legs_are_found_by_group_wherever_they_are(tmp_path: Path) -> None:
    def arms_and_head_first(d):
        d["joints"] = d["joints"][12:] + d["joints"][:12]
    cfg = load_config(write_variant(tmp_path, arms_and_head_first))
    assert cfg.leg_indices.tolist() == list(range(8, 20))
    assert cfg.joint_names[8:10] == ["r_hip_yaw", "r_hip_roll"]
    assert not cfg.leg_indices.flags.writeable      # one shared copy


def test_a_humanoid_without_locomotion_has_no_walk(tmp_path: Path) -> None:
    def no_walk(d):
        d.pop("locomotion")
        d["gains"].pop("walk")
    cfg = load_config(write_variant(tmp_path, no_walk))
    assert cfg.walk is None and "walk" not in cfg.gains


def test_walk_height_must_match_the_stand(tmp_path: Path) -> None:
    walk = yaml.safe_load((ROOT / "gaits" / "humanoid" / "quintic_walk.yaml").read_text())
    walk["trunk_height"] = 0.38
    (tmp_path / "walk.yaml").write_text(yaml.safe_dump(walk))
    path = write_variant(tmp_path, lambda d: d["locomotion"].update(walk="walk.yaml"))
    with pytest.raises(ConfigError, match="locomotion.walk: walk.yaml: trunk_height 0.38"):
        load_config(path)


# -------------------------------------------------------------- kinematics

def random_leg(rng, limits, side):
    q_min, q_max, _ = limits
    k = 0 if side == "right" else 6
    return rng.uniform(q_min[k:k + 6], q_max[k:k + 6])


def on_principal_branch(kin, q):
    """IK returns the solution with the hip above the ankle in the foot's
    frame; far-out random ankle angles can land on the other branch."""
    w = math.atan2(-kin.l1 * math.sin(q[3]), kin.l1 * math.cos(q[3]) + kin.l2)
    return abs(w - q[4]) < math.pi / 2 - 0.05 and q[3] > 0.01


def test_rotation_convention_matches_the_quadruped_module():
    rpy = (0.3, -0.2, 0.7)
    np.testing.assert_allclose(FootPose.from_rpy((0, 0, 0), rpy).rotation,
                               rotation_rpy(*rpy), atol=1e-12)
    np.testing.assert_allclose(rpy_of(rotation_rpy(*rpy)), rpy, atol=1e-12)


def test_ik_fk_round_trip_on_random_reachable_poses(kin, limits):
    rng = np.random.default_rng(3)
    checked = 0
    for i in range(600):
        side = LEG_SIDES[i % 2]
        q = random_leg(rng, limits, side)
        foot = kin.forward(q, side)
        q2, clipped = kin.inverse(foot.position, foot.rpy, side)
        assert not clipped
        again = kin.forward(q2, side)
        np.testing.assert_allclose(again.position, foot.position, atol=1e-6)
        np.testing.assert_allclose(again.rotation, foot.rotation, atol=1e-6)
        q3, _ = kin.inverse_pose(foot, side)
        np.testing.assert_allclose(q3, q2, atol=1e-9)
        if on_principal_branch(kin, q):
            np.testing.assert_allclose(q2, q, atol=1e-6)
            checked += 1
    assert checked > 300


def test_sole_jacobian_matches_finite_differences(kin, limits):
    rng = np.random.default_rng(2)
    for side in LEG_SIDES:
        for _ in range(5):
            q = random_leg(rng, limits, side)
            sole, jac = kin.sole_jacobian(q, side)
            np.testing.assert_allclose(sole, kin.forward(q, side).position, atol=1e-12)
            h = 1e-6
            for i in range(6):
                dq = np.zeros(6)
                dq[i] = h
                diff = (kin.forward(q + dq, side).position - kin.forward(q - dq, side).position) / (2 * h)
                np.testing.assert_allclose(jac[:, i], diff, atol=1e-7)


@pytest.mark.parametrize("target", [
    (0.0, 0.0, -1.0),    # far below
    (0.6, -0.3, -0.2),   # far out in front
    None,                # ankle on the hip centre: no direction left
    (0.0, 0.0, 0.5),     # above the hip
])
@pytest.mark.parametrize("side", LEG_SIDES)
def test_out_of_reach_targets_are_flagged_and_finite(kin, side, target):
    hip = np.array(kin.hip[side])
    rpy = (0.1, -0.2, 0.3)
    if target is None:  # the sole ankle_height below the hip along the foot's z
        target = -kin.h * rotation_rpy(*rpy)[:, 2]
    q, clipped = kin.inverse(hip + np.array(target), rpy, side)
    assert clipped and np.isfinite(q).all()
    foot = kin.forward(q, side)
    # Orientation kept; the ankle sits on the reachable shell.
    np.testing.assert_allclose(foot.rotation, rotation_rpy(*rpy), atol=1e-9)
    ankle = foot.position + kin.h * foot.rotation[:, 2]
    reach = np.linalg.norm(ankle - hip)
    assert min(abs(reach - kin.r_max), abs(reach - kin.r_min)) < 1e-9


# ------------------------------------------------------------------ splines

def test_quintic_spline_meets_its_knots():
    knots = [(0.0, 0.0, 0.5, 0.0), (0.3, 1.0, 0.0, -2.0), (1.0, -0.5, 0.2, 1.0)]
    s = Spline(knots)
    h = 1e-7
    for t, p, v, a in knots:
        assert s.pos(t) == pytest.approx(p, abs=1e-12)
        assert s.vel(t) == pytest.approx(v, abs=1e-9)
        # Acceleration from each side of the knot: C2 where segments meet.
        if t > 0.0:
            assert (s.vel(t) - s.vel(t - h)) / h == pytest.approx(a, abs=1e-3)
        if t < 1.0:
            assert (s.vel(t + h) - s.vel(t)) / h == pytest.approx(a, abs=1e-3)
    assert s.pos(-1.0) == 0.0 and s.pos(2.0) == -0.5


# -------------------------------------------------------------------- walk

def world_feet(kin, frame, q):
    """Sole poses in the odometry frame from the joint targets (through FK)."""
    x, y, z, roll, pitch, yaw = frame.trunk
    r_trunk = rotation_rpy(roll, pitch, yaw)
    out = {}
    for i, side in enumerate(LEG_SIDES):
        foot = kin.forward(q[6 * i:6 * i + 6], side)
        out[side] = (np.array([x, y, z]) + r_trunk @ foot.position, r_trunk @ foot.rotation)
    return out


def corners(params):
    axes = [(lo, 0.0, hi) for lo, hi in zip(params.velocity_min, params.velocity_max)]
    return [c for c in itertools.product(*axes) if any(c)]


def test_feet_stay_flat_in_the_world_across_the_window(walk, kin, params):
    rng = np.random.default_rng(5)
    lo, hi = np.array(params.velocity_min), np.array(params.velocity_max)
    commands = corners(params) + [tuple(rng.uniform(lo, hi)) for _ in range(8)]
    for cmd in commands:
        walk.reset()
        for k in range(int(1.6 / DT)):
            frame = walk.step(DT, cmd if k < 600 else (0.0, 0.0, 0.0))
            if k % 7:
                continue  # FK is slow-ish; every 7th tick covers every phase
            for side, (_, rot) in world_feet(kin, frame, walk.joint_targets(frame)).items():
                roll, pitch, _ = rpy_of(rot)
                assert abs(roll) < 1e-6 and abs(pitch) < 1e-6, (cmd, side, k)


def test_joint_targets_stay_inside_position_and_velocity_limits(walk, params, limits):
    """Property loop with a fixed seed: random commands across the window,
    switched every 0.1-1 s, with stops and the window's corners thrown in."""
    q_min, q_max, v_max = limits[0][:12], limits[1][:12], limits[2][:12]
    rng = np.random.default_rng(11)
    lo, hi = np.array(params.velocity_min), np.array(params.velocity_max)
    walk.reset()
    q_prev = walk.joint_targets(walk.step(DT, (0.0, 0.0, 0.0)))
    worst = 0.0
    for _ in range(60):
        r = rng.random()
        if r < 0.1:
            cmd = np.zeros(3)
        elif r < 0.4:
            cmd = np.where(rng.random(3) < 0.5, lo, hi)
        else:
            cmd = rng.uniform(lo, hi) * 1.5  # beyond the window: clamped
        for _ in range(int(rng.uniform(0.1, 1.0) / DT)):
            q = walk.joint_targets(walk.step(DT, cmd))
            assert not walk.ik_clipped
            assert np.all((q >= q_min) & (q <= q_max)), (cmd, q)
            speed = np.abs(q - q_prev) / DT
            assert np.all(speed < v_max), (cmd, speed)
            worst = max(worst, float(np.max(speed / v_max)))
            q_prev = q
    assert worst > 0.5  # the loop did exercise fast walking


def test_swing_apex_is_the_foot_rise(walk, kin, params):
    walk.reset()
    apex: dict[str, list[float]] = {"left": [], "right": []}
    current = {"left": 0.0, "right": 0.0}
    for _k in range(int(4.0 / DT)):
        frame = walk.step(DT, (0.2, 0.05, 0.2))
        feet = world_feet(kin, frame, walk.joint_targets(frame))
        for side, (pos, _) in feet.items():
            if side == frame.support or frame.double_support:
                # A standing foot is on the ground; a finished swing is recorded.
                assert abs(pos[2]) < 1e-9
                if current[side] > 0.0:
                    apex[side].append(current[side])
                current[side] = 0.0
            else:
                current[side] = max(current[side], pos[2])
    heights = apex["left"] + apex["right"]
    assert len(heights) >= 8
    for h in heights:
        assert h == pytest.approx(params.foot_rise, rel=0.05)


def foot_tracks(walk, kin, schedule, dt):
    """Torso-frame and world sole positions per tick for a command schedule
    [(seconds, cmd)], then zero until stopped."""
    walk.reset()
    torso, world, stopped_at = [], [], None
    t, k = 0.0, 0
    while True:
        cmd = (0.0, 0.0, 0.0)
        elapsed = 0.0
        for seconds, c in schedule:
            if t < elapsed + seconds:
                cmd = c
                break
            elapsed += seconds
        frame = walk.step(dt, cmd)
        q = walk.joint_targets(frame)
        feet = world_feet(kin, frame, q)
        torso.append(np.concatenate([frame.left.position, frame.right.position]))
        world.append(np.concatenate([feet["left"][0], feet["right"][0]]))
        t += dt
        k += 1
        if walk.is_stopped() and t > sum(s for s, _ in schedule):
            stopped_at = t
            break
        assert k < 20 / dt
    return np.array(torso), np.array(world), stopped_at


def test_start_and_stop_are_smooth(walk, kin, params):
    schedule = [(1.3, (0.2, 0.0, 0.0)), (0.9, (0.1, -0.06, 0.3))]
    jumps = {}
    for dt in (0.002, 0.0005):
        torso, world, stopped_at = foot_tracks(walk, kin, schedule, dt)
        # The stop: at most the running step plus the closing step.
        assert stopped_at - sum(s for s, _ in schedule) <= 2 * params.step_duration + dt
        for name, track in (("torso", torso), ("world", world)):
            v = np.diff(track, axis=0) / dt
            # Zero velocity at the start and at the end.
            assert np.abs(v[0]).max() < 1e-3 and np.abs(v[-1]).max() < 1e-3, name
            jumps[(name, dt)] = np.abs(np.diff(v, axis=0)).max()
    for name in ("torso", "world"):
        # Continuous velocity: its largest change per tick shrinks with the
        # tick (a jump would not), and stays a plausible acceleration.
        assert jumps[(name, 0.0005)] < 0.35 * jumps[(name, 0.002)], name
        assert jumps[(name, 0.002)] / 0.002 < 30.0, name


def test_stop_returns_both_feet_side_by_side_and_upright(walk, kin, params, cfg):
    walk.reset()
    for _ in range(int(2.0 / DT)):
        walk.step(DT, (0.2, 0.08, 0.4))
    assert not walk.is_stopped()
    for _ in range(int(2 * params.step_duration / DT) + 1):
        frame = walk.step(DT, (0.0, 0.0, 0.0))
    assert walk.is_stopped() and frame.support == "both"
    assert frame.velocity == (0.0, 0.0, 0.0) and frame.trunk[4] == 0.0
    np.testing.assert_allclose(walk.joint_targets(frame), pose_vector(cfg, "stand")[:12],
                               atol=1e-5)


def test_first_step_goes_with_the_outer_foot(walk):
    walk.reset()
    frame = walk.step(DT, (0.0, 0.05, 0.0))
    assert frame.support == "right"   # moving left: the left foot steps out first
    walk.reset()
    frame = walk.step(DT, (0.0, -0.05, 0.0))
    assert frame.support == "left"


def test_executed_velocity_integrates_to_the_distance_walked(walk, kin):
    walk.reset()
    travelled = 0.0
    for _ in range(int(10.0 / DT)):
        frame = walk.step(DT, (0.1, 0.0, 0.0))
        travelled += frame.velocity[0] * DT
    assert travelled == pytest.approx(1.0, abs=0.03)
    assert frame.trunk[0] == pytest.approx(travelled, abs=0.06)
    # After the stop, the odometry from integrating the executed body twist
    # matches where the trunk came to rest, turns included.
    walk.reset()
    x = y = yaw = 0.0
    for k in range(int(6.0 / DT)):
        cmd = (0.15, 0.04, 0.3) if k < int(4.0 / DT) else (0.0, 0.0, 0.0)
        frame = walk.step(DT, cmd)
        vx, vy, w = frame.velocity
        mid = yaw + w * DT / 2
        x += (math.cos(mid) * vx - math.sin(mid) * vy) * DT
        y += (math.sin(mid) * vx + math.cos(mid) * vy) * DT
        yaw += w * DT
    assert walk.is_stopped()
    np.testing.assert_allclose(frame.trunk[:2], (x, y), atol=2e-3)
    assert frame.trunk[5] == pytest.approx(yaw, abs=1e-6)


def test_non_finite_commands_count_as_zero(walk):
    walk.reset()
    frame = walk.step(DT, (float("nan"), float("inf"), 0.0))
    assert walk.is_stopped() and np.isfinite(walk.joint_targets(frame)).all()


def test_first_step_ramps_in_within_the_acceleration_limits(walk, params):
    walk.reset()
    cmd = params.velocity_max
    seen = []
    for _ in range(int(3 * params.step_duration / DT)):
        seen.append(walk.step(DT, cmd).velocity)
    v = np.array(seen)
    per_step = np.array(params.acceleration_max) * params.step_duration
    # Step 1 moves at most one acceleration quantum, step 2 two, step 3 three.
    n = round(params.step_duration / DT)
    for k in range(3):
        assert np.all(np.abs(v[k * n + 1:(k + 1) * n - 1]) <= (k + 1) * per_step + 1e-9)
    assert v[-2, 0] > v[n // 2, 0] > 0.0


def test_reset_not_standing_starts_leaning_and_stops_upright(walk, params):
    walk.reset(standing=False)
    frame = walk.step(DT, (0.0, 0.0, 0.0))
    assert walk.is_stopped() and frame.trunk[4] == pytest.approx(params.trunk_pitch)
    for _ in range(int(1.0 / DT)):
        frame = walk.step(DT, (0.1, 0.0, 0.0))
        assert frame.trunk[4] == pytest.approx(params.trunk_pitch)
    while not walk.is_stopped():
        frame = walk.step(DT, (0.0, 0.0, 0.0))
    assert frame.trunk[4] == 0.0
