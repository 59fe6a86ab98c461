"""controller.core.odometry: arc integration, set / reset and the localization_lcmt it fills."""
from __future__ import annotations

import math

import pytest

from controller import msgs
from controller.core.odometry import Odometry
from controller.robot.angles import wrap_angle


def drive(odom: Odometry, twist: tuple[float, float, float], seconds: float, steps: int) -> None:
    dt = seconds / steps
    for _ in range(steps):
        odom.integrate(twist, dt)


def test_straight_line() -> None:
    odom = Odometry()
    drive(odom, (0.5, 0.0, 0.0), 2.0, 1000)
    assert (odom.x, odom.y, odom.yaw) == pytest.approx((1.0, 0.0, 0.0), abs=1e-9)
    assert odom.path_length == pytest.approx(1.0)
    assert odom.forward == pytest.approx(1.0)
    assert odom.turned == 0.0
    assert (odom.vx_world, odom.vy_world) == (0.5, 0.0)


def test_backwards_counts_negative_forward_but_positive_path() -> None:
    odom = Odometry()
    drive(odom, (-0.25, 0.0, 0.0), 2.0, 100)
    assert odom.x == pytest.approx(-0.5)
    assert odom.forward == pytest.approx(-0.5)
    assert odom.path_length == pytest.approx(0.5)


@pytest.mark.parametrize("steps", [8, 1000, 6283])
def test_circle_closes_after_two_pi_whatever_the_step(steps: int) -> None:
    # r = v / w = 1 m; one turn takes 2 pi / w = 4 pi s. Arc integration is
    # exact for a constant twist, so even 8 steps close the circle (Euler
    # would miss by metres).
    odom = Odometry()
    drive(odom, (0.5, 0.0, 0.5), 2.0 * math.pi, steps)   # half a turn
    assert (odom.x, odom.y) == pytest.approx((0.0, 2.0), abs=1e-9)
    assert abs(odom.yaw) == pytest.approx(math.pi, abs=1e-9)
    drive(odom, (0.5, 0.0, 0.5), 2.0 * math.pi, steps)
    assert (odom.x, odom.y, odom.yaw) == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)
    assert odom.turned == pytest.approx(2.0 * math.pi)
    assert odom.path_length == pytest.approx(2.0 * math.pi)


def test_sideways_twist_matches_the_closed_form() -> None:
    # Body velocity (vx, vy) rotating at w: position = integral of R(w t) v dt.
    vx, vy, w, t = 0.3, -0.2, 0.7, 1.5
    odom = Odometry()
    drive(odom, (vx, vy, w), t, 3)
    s, c = math.sin(w * t) / w, (1.0 - math.cos(w * t)) / w
    assert odom.x == pytest.approx(s * vx - c * vy, abs=1e-12)
    assert odom.y == pytest.approx(c * vx + s * vy, abs=1e-12)
    assert odom.path_length == pytest.approx(math.hypot(vx, vy) * t)


def test_tiny_rotation_uses_the_series_without_losing_precision() -> None:
    odom = Odometry()
    odom.integrate((1.0, 0.0, 1e-9), 0.002)
    assert odom.x == pytest.approx(0.002, rel=1e-12)
    assert odom.y == pytest.approx(0.002 * 1e-9 * 0.002 / 2.0, rel=1e-6)


def test_world_velocity_follows_the_heading() -> None:
    odom = Odometry()
    odom.set(0.0, 0.0, math.pi / 2)
    odom.integrate((0.4, 0.1, 0.0), 0.002)
    assert (odom.vx_world, odom.vy_world) == pytest.approx((-0.1, 0.4))
    assert (odom.vx, odom.vy, odom.wz) == (0.4, 0.1, 0.0)
    assert odom.y == pytest.approx(0.4 * 0.002)


def test_set_moves_the_pose_but_keeps_the_counters() -> None:
    odom = Odometry()
    drive(odom, (0.5, 0.0, 0.25), 1.0, 10)
    counters = (odom.path_length, odom.forward, odom.turned)
    odom.set(1.0, -2.0, 3.5)
    assert (odom.x, odom.y) == (1.0, -2.0)
    assert odom.yaw == pytest.approx(3.5 - 2.0 * math.pi)
    assert (odom.path_length, odom.forward, odom.turned) == counters
    odom.integrate((1.0, 0.0, 0.0), 0.1)
    assert odom.x == pytest.approx(1.0 + 0.1 * math.cos(3.5))
    assert odom.y == pytest.approx(-2.0 + 0.1 * math.sin(3.5))


def test_reset_zeroes_everything() -> None:
    odom = Odometry()
    drive(odom, (0.5, 0.1, 0.25), 1.0, 10)
    odom.z = 0.3
    odom.reset()
    fresh = Odometry()
    assert vars(odom) == vars(fresh)
    assert odom.x == odom.path_length == odom.turned == odom.vx == odom.z == 0.0


@pytest.mark.parametrize("angle, wrapped", [(0.0, 0.0), (math.pi, -math.pi), (-math.pi, -math.pi),
                                            (3 * math.pi / 2, -math.pi / 2), (-7.0, -7.0 + 2 * math.pi)])
def test_wrap_angle(angle: float, wrapped: float) -> None:
    assert wrap_angle(angle) == pytest.approx(wrapped)


def test_fill_writes_localization_lcmt_in_place() -> None:
    odom = Odometry()
    odom.set(1.0, 2.0, math.pi / 2)
    odom.integrate((0.5, 0.0, 0.2), 0.0)      # dt 0: only the velocities change
    odom.z, odom.pitch = 0.25, 0.05
    msg = msgs.localization_lcmt()
    xyz = msg.xyz
    assert odom.fill(msg, 1_700_000_000_123_456_789) is msg
    assert msg.xyz is xyz                      # no new list per tick
    assert msg.xyz == pytest.approx([1.0, 2.0, 0.25])
    assert msg.rpy == pytest.approx([0.0, 0.05, math.pi / 2])
    assert msg.vBody == [0.5, 0.0, 0.0]
    assert msg.omegaBody == [0.0, 0.0, 0.2]
    assert msg.vxyz == pytest.approx([0.0, 0.5, 0.0])
    assert msg.timestamp == 1_700_000_000_123_456_789
    decoded = msgs.localization_lcmt.decode(msg.encode())
    assert decoded.xyz == pytest.approx([1.0, 2.0, 0.25])
    assert decoded.timestamp == msg.timestamp
