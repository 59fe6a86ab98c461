"""The orientation ESTOP of SPEC §5.8 in physics: a robot that falls over
while trotting or in a pose (21, motiond's addition) is made passive with
ori_error set; one that is standing up
(command 12) is not; without an IMU there is no such check. Judged on the
controller's response and state, the fall itself made by a push on the
physics body (ground truth says it fell)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from harness import Rig

from controller.core.fsm import ORIENTATION_LIMIT
from controller.protocol.constants import EDAMP, ESTOP
from controller.sim.physics import PhysicsRobot


def trotting() -> Rig:
    rig = Rig()
    rig.stand()
    rig.send(11, 3, vel_des=[0.0, 0.0, 0.0], step_height=[0.06, 0.06])
    rig.run(1000)
    assert rig.mode == 11
    return rig


def tip_over(rig: Rig) -> PhysicsRobot:
    robot = rig.robot
    assert isinstance(robot, PhysicsRobot)
    robot.data.qvel[3] += 40.0           # a hard sideways shove: roll rate, rad/s
    return robot


def posing() -> Rig:
    rig = Rig()
    rig.stand()
    rig.send(21, 0, rpy_des=[0.0, 0.1, 0.0], duration=1000)
    rig.run(500)
    assert rig.mode == 21
    return rig


@pytest.mark.parametrize("start", [trotting, posing], ids=["trotting", "posing (21)"])
def test_a_robot_that_falls_is_stopped_with_ori_error(start: Callable[[], Rig]) -> None:
    rig = start()
    robot = tip_over(rig)
    fell_at = None
    for _ in range(1000):
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        if fell_at is None and abs(robot.truth().rpy[0]) >= ORIENTATION_LIMIT:
            fell_at = rig.ctl.tick
        if rig.ctl.fsm.operating == ESTOP:
            break
    assert fell_at is not None, "the shove did not tip the body over"
    assert rig.ctl.fsm.operating == ESTOP and rig.ctl.fsm.ori_error == 1
    # Seen within the IMU's delay (one tick) and the tick that takes it in.
    assert rig.ctl.tick - fell_at <= 3
    assert rig.mode == 0                                  # passive at once (SPEC §5.6.4)
    rig.run(100)
    assert any(r.switch_status == ESTOP for r in rig.responses if r.tick >= fell_at)
    k = rig.ctl.kernel
    assert not np.any(k.kp)                               # no stiffness on a fallen robot


def test_no_orientation_stop_while_standing_up() -> None:
    """Command 12 is the way back up: the check is off for it."""
    rig = Rig()
    rig.stand()
    tip_over(rig)
    rig.run(1000)
    assert rig.ctl.fsm.operating != ESTOP and rig.ctl.fsm.ori_error == 0


def test_no_orientation_check_without_an_imu() -> None:
    rig = Rig(sim="joint")                                # no IMU
    rig.stand()
    rig.send(11, 3, vel_des=[0.0, 0.0, 0.0])
    rig.run(1000)
    assert rig.ctl.fsm.attitude is None and rig.ctl.fsm.operating != ESTOP


def test_an_imu_that_stops_damps_the_robot_once_and_is_logged() -> None:
    rig = Rig()
    rig.stand()
    assert rig.ctl.fsm.attitude is not None
    timeout_ticks = int(rig.cfg.safety.imu_timeout_ms / 2)
    rig.feed_imu = False
    stopped = rig.ctl.tick
    rig.run(2 * rig.cfg.safety.imu_timeout_ms)  # ms; heartbeats go on
    assert rig.ctl.fsm.operating == EDAMP and rig.mode == 7
    assert "no imu for" in rig.ctl.counters.last_error
    tripped = [r.tick for r in rig.responses if r.switch_status == EDAMP]
    # The fault is found on the tick the timeout ends (one tick of slack for
    # the last sample's own tick).
    assert stopped + timeout_ticks - 1 <= tripped[0] <= stopped + timeout_ticks + 1
    assert rig.ctl.fsm.attitude is None         # no orientation check on stale data
    rig.feed_imu = True
    rig.run(20)
    assert rig.ctl.fsm.attitude is not None and not rig.ctl.faults.imu_watch.lost


def test_a_robot_without_an_imu_is_never_damped_for_it() -> None:
    rig = Rig(sim="joint")
    rig.stand()
    rig.run(1000)
    assert rig.ctl.fsm.operating != EDAMP and rig.mode == 12
