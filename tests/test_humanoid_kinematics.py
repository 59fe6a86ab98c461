"""The humanoid leg kinematics with a tilted hip yaw axis
(controller/robot/humanoid_kinematics.py, `geometry.hip_yaw_axis`): NAO's
hip yaw-pitch (config/nao22.yaml) turns each leg about an axis leaning 45
degrees in the y-z plane. Forward, sole Jacobian and the closed-form inverse
must all be exact for it; a vertical axis (humanoid20, the default) keeps
the kinematics it had. The model-against-MuJoCo checks are in
tests/test_physics_humanoid_model.py. Pure functions, no sockets."""
from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from controller.motion.biped_walk import QuinticWalk
from controller.robot.config import Config, load_config
from controller.robot.humanoid_kinematics import (
    LEG_SIDES,
    HumanoidConfigError,
    HumanoidGeometry,
    HumanoidLegKinematics,
)

ROOT = Path(__file__).resolve().parent.parent
NAO = ROOT / "config" / "nao22.yaml"
HUMANOID = ROOT / "config" / "humanoid20.yaml"


def geometry_of(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())["geometry"]
    assert isinstance(data, dict)
    return data


Nao = tuple[Config, HumanoidLegKinematics]


@pytest.fixture(scope="module")
def nao() -> Nao:
    cfg = load_config(NAO)
    assert isinstance(cfg.geometry, HumanoidGeometry)
    return cfg, HumanoidLegKinematics(cfg.geometry)


def random_leg(rng: np.random.Generator, cfg: Config, i: int) -> list[float]:
    """One leg's joints, uniform inside its limits."""
    k = cfg.leg_indices[6 * i:6 * i + 6]
    return [float(x) for x in rng.uniform(cfg.q_min[k], cfg.q_max[k])]


def shifted(q: list[float], j: int, by: float) -> list[float]:
    return [x + by if n == j else x for n, x in enumerate(q)]


def on_principal_branch(kin: HumanoidLegKinematics, q: list[float]) -> bool:
    """The IK returns the knee bent forward (q3 > 0) with the hip above the
    ankle in the foot's frame; NAO's limits allow a slightly negative knee
    and far-out ankles that are the other branch of the same sole pose."""
    w = math.atan2(-kin.l1 * math.sin(q[3]), kin.l1 * math.cos(q[3]) + kin.l2)
    return abs(w - q[4]) < math.pi / 2 - 0.05 and q[3] > 0.01


def test_nao22_reads_the_tilted_axes_from_its_config(nao: Nao) -> None:
    _, kin = nao
    s = math.sqrt(0.5)
    np.testing.assert_allclose(kin.yaw_axis["right"], (0.0, s, s), atol=1e-8)
    np.testing.assert_allclose(kin.yaw_axis["left"], (0.0, s, -s), atol=1e-8)
    # humanoid20 names no axis: the hip yaw is vertical, as before.
    plain = HumanoidLegKinematics(HumanoidGeometry.from_mapping(geometry_of(HUMANOID)))
    assert plain.yaw_axis == {side: (0.0, 0.0, 1.0) for side in LEG_SIDES}


def test_nao22_inverse_of_forward_gives_back_the_joints(nao: Nao) -> None:
    """inverse(forward(q)) == q within 1e-6 rad for random joint angles
    inside NAO's limits, hip yaw-pitch included (on the IK's branch), and
    the soles agree to 1e-9 for every sample."""
    cfg, kin = nao
    rng = np.random.default_rng(19)
    checked = 0
    turned = 0.0
    for n in range(2000):
        i = n % 2
        side = LEG_SIDES[i]
        q = random_leg(rng, cfg, i)
        foot = kin.forward(q, side)
        q2, clipped = kin.inverse_pose(foot, side)
        assert not clipped
        again = kin.forward(q2.tolist(), side)
        np.testing.assert_allclose(again.position, foot.position, atol=1e-9)
        np.testing.assert_allclose(again.rotation, foot.rotation, atol=1e-9)
        q3, _ = kin.inverse(foot.position.tolist(), foot.rpy.tolist(), side)
        np.testing.assert_allclose(q3, q2, atol=1e-9)
        if on_principal_branch(kin, q):
            np.testing.assert_allclose(q2, q, atol=1e-6)
            checked += 1
            turned = max(turned, abs(q[0]))
    assert checked > 1000 and turned > 1.0


def test_nao22_inverse_is_exact_for_walking_feet(nao: Nao) -> None:
    """Feet flat, turned about the vertical by up to 0.4 rad, under a trunk
    leaning as the walk leans it: the IK's joints put the sole back where
    asked. About the 45 degree axis the joint turns the foot's heading by
    less than its angle, so NAO's hip yaw-pitch goes further than the
    heading (a vertical-axis IK would give the heading itself)."""
    cfg, kin = nao
    rng = np.random.default_rng(7)
    for n in range(400):
        side = LEG_SIDES[n % 2]
        y = (0.05 if side == "left" else -0.05) + rng.uniform(-0.03, 0.03)
        position = (rng.uniform(-0.05, 0.05), y, -cfg.stand_height + rng.uniform(0.0, 0.03))
        rpy = (0.0, rng.uniform(-0.1, 0.1), rng.uniform(-0.4, 0.4))
        q, clipped = kin.inverse(position, rpy, side)
        assert not clipped
        foot = kin.forward(q.tolist(), side)
        np.testing.assert_allclose(foot.position, position, atol=1e-9)
        np.testing.assert_allclose(foot.rpy, rpy, atol=1e-9)
        if abs(rpy[2]) > 0.2:
            assert 1.03 * abs(rpy[2]) < abs(q[0]) < 2.2 * abs(rpy[2]), (rpy, q)


def test_nao22_sole_jacobian_matches_finite_differences(nao: Nao) -> None:
    cfg, kin = nao
    rng = np.random.default_rng(23)
    h = 1e-6
    for i, side in enumerate(LEG_SIDES):
        for _ in range(20):
            q = random_leg(rng, cfg, i)
            sole, jac = kin.sole_jacobian(q, side)
            np.testing.assert_allclose(sole, kin.forward(q, side).position, atol=1e-12)
            for j in range(6):
                diff = (kin.forward(shifted(q, j, h), side).position
                        - kin.forward(shifted(q, j, -h), side).position) / (2 * h)
                np.testing.assert_allclose(jac[:, j], diff, atol=1e-8)
            # Column 0 turns about the tilted axis through the hip centre.
            lever = sole - np.array(kin.hip[side])
            np.testing.assert_allclose(jac[:, 0], np.cross(kin.yaw_axis[side], lever), atol=1e-12)


def test_the_nao22_walk_turning_gets_its_feet_exactly(nao: Nao) -> None:
    """The walk's joint targets while turning put both soles where the walk
    frame wants them (forward of the targets, torso frame)."""
    cfg, kin = nao
    assert cfg.walk is not None
    walk = QuinticWalk(cfg.walk.params, kin)
    walk.reset()
    worst, turned = 0.0, 0.0
    for _ in range(1000):
        frame = walk.step(cfg.dt, (0.05, 0.0, 0.4))
        q = walk.joint_targets(frame)
        assert not walk.ik_clipped
        turned = max(turned, abs(q[0]), abs(q[6]))
        for i, side in enumerate(LEG_SIDES):
            want = frame.right if side == "right" else frame.left
            got = kin.forward(q[6 * i:6 * i + 6].tolist(), side)
            worst = max(worst, float(np.abs(got.position - want.position).max()),
                        float(np.abs(got.rotation - want.rotation).max()))
    assert worst < 1e-9
    assert turned > 0.05


def test_a_vertical_axis_in_the_config_is_the_default() -> None:
    data = geometry_of(HUMANOID)
    plain = HumanoidLegKinematics(HumanoidGeometry.from_mapping(data))
    explicit = HumanoidLegKinematics(HumanoidGeometry.from_mapping(
        {**data, "hip_yaw_axis": {"right": [0, 0, 2], "left": [0, 0, 1]}}))
    rng = np.random.default_rng(3)
    for n in range(200):
        side = LEG_SIDES[n % 2]
        q = rng.uniform(-0.6, 0.6, 6).tolist()
        a, b = plain.forward(q, side), explicit.forward(q, side)
        assert np.array_equal(a.position, b.position) and np.array_equal(a.rotation, b.rotation)
        pa, _ = plain.inverse_pose(a, side)
        pb, _ = explicit.inverse_pose(a, side)
        assert np.array_equal(pa, pb)


def test_an_axis_pointing_down_turns_the_other_way() -> None:
    """[0, 0, -1] is the vertical with the joint's sign reversed: the IK's
    hip yaw is the negative of the default's, the other joints the same."""
    data = geometry_of(HUMANOID)
    up = HumanoidLegKinematics(HumanoidGeometry.from_mapping(data))
    down = HumanoidLegKinematics(HumanoidGeometry.from_mapping(
        {**data, "hip_yaw_axis": {"right": [0, 0, -1], "left": [0, 0, -1]}}))
    q, _ = up.inverse((0.02, -0.06, -0.38), (0.05, -0.1, 0.3), "right")
    r, _ = down.inverse((0.02, -0.06, -0.38), (0.05, -0.1, 0.3), "right")
    np.testing.assert_allclose(r, [-q[0], *q[1:]], atol=1e-12)


@pytest.mark.parametrize("axis, message", [
    ({"right": [0.1, 0.7, 0.7], "left": [0, 0.7, -0.7]}, "hip_yaw_axis.right: the axis must lie in the y-z plane"),
    ({"right": [0, 0, 0], "left": [0, 0.7, -0.7]}, "hip_yaw_axis.right: a joint axis must not be zero"),
    ({"right": [0, 1, 0.2], "left": [0, 0.7, -0.7]}, "hip_yaw_axis.right: the axis leans more than 60 degrees"),
    ({"right": [0, 0.7, 0.7]}, "hip_yaw_axis.left: expected [x, y, z], got None"),
    ({"right": [0, 0.7, "z"], "left": [0, 0.7, -0.7]}, "hip_yaw_axis.right: expected [x, y, z]"),
    ({"right": [0, 0.7, math.nan], "left": [0, 0.7, -0.7]}, "hip_yaw_axis.right: expected [x, y, z]"),
    ([0, 0, 1], "hip_yaw_axis: expected {right: [x, y, z], left: [x, y, z]}"),
])
def test_bad_hip_yaw_axes_are_refused_naming_the_key(axis: Any, message: str) -> None:
    data = copy.deepcopy(geometry_of(NAO))
    data["hip_yaw_axis"] = axis
    with pytest.raises(HumanoidConfigError) as err:
        HumanoidGeometry.from_mapping(data)
    assert str(err.value).startswith(f"geometry.{message}"), str(err.value)
