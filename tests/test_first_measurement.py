"""Every motion starts from the measured pose, whatever arrives in the same
tick (DESIGN principle 6): a command that shares the first tick's inbox with
the first joint_state, in either order, starts where the joints are, exactly
as one that comes a tick later. On a robot this is a daemon restarted under a
client that keeps heart-beating its command.

For each shipped robot and each mode its transition table allows from OFF:
the first stiff joint command is within one tick's step limit of the pose
the controller measured in that tick, and no fault trips while it runs.
"""
from __future__ import annotations

import numpy as np
import pytest
from harness import Rig, command

from controller import msgs
from controller.core.fsm import EDAMP

ROBOTS = {"cyberdog2": None, "humanoid20": "config/humanoid20.yaml", "nao22": "config/nao22.yaml"}
# How the command meets the first measurement: in the same inbox before or
# after it, on the very first tick or after ticks without any joint_state
# (a bridge that starts late), or one tick after it.
TIMINGS = ("same_tick_command_first", "same_tick_state_first", "late_bridge_same_tick",
           "next_tick")
RUN_TICKS = 300


def _cases() -> list[tuple[str, int, int]]:
    cases = []
    for robot, path in ROBOTS.items():
        rig = Rig(path)
        table = rig.cfg.fsm
        for mode in sorted(table.immediate.get(0, frozenset()) | table.when_ready.get(0, frozenset())):
            behaviour = rig.ctl.fsm.behaviours.get(mode)
            if behaviour is None or mode == 15:    # 15 comes from motor_ctrl (below)
                continue
            for gait in sorted(behaviour.gaits or {0}):
                cases.append((robot, mode, gait))
    return cases


class FirstTicks:
    """A rig driven packet by packet: which joint_state the controller took
    in on each tick, and each joint command it sent."""

    def __init__(self, robot: str) -> None:
        self.rig = Rig(ROBOTS[robot], record_joints=True, feed_joint_state=False)
        self.measured: list[np.ndarray | None] = []   # per tick: the pose taken in, if any
        self.latest: np.ndarray | None = None

    def tick(self, state: bool, packets: list[tuple[str, bytes]], state_first: bool = True) -> None:
        rig = self.rig
        inbox = list(packets)
        if state:
            assert rig.robot is not None
            data = rig.robot.joint_state(rig.now_ns // 1000)
            self.latest = np.array(msgs.joint_state_t.decode(data).position)
            inbox.insert(0 if state_first else len(inbox), (rig.ch["joint_state"], data))
        self.measured.append(self.latest)
        rig.pending = inbox
        rig.tick()

    def first_stiff(self) -> tuple[int, np.ndarray, np.ndarray]:
        """(tick, command's positions, stiff-joint mask) of the first joint
        command with any kp > 0."""
        for i, jc in enumerate(self.rig.joint_cmds):
            kp = np.array(jc.kp)
            if kp.any():
                return i, np.array(jc.position), kp > 0
        raise AssertionError("no stiff joint command was sent")


def _command(rig: Rig, mode: int, gait: int) -> tuple[str, bytes]:
    rig.life_count += 1
    msg = command(mode, gait, rig.life_count)
    rig.heartbeat_msg = msg
    return rig.ch["command"], msg.encode()


def _check(ft: FirstTicks) -> None:
    rig = ft.rig
    tick, position, stiff = ft.first_stiff()
    measured = ft.measured[tick]
    assert measured is not None, f"tick {tick} commanded stiffly before any joint_state"
    step = rig.cfg.v_max * rig.cfg.dt
    gap = np.abs(position - measured)
    worst = int(np.argmax(np.where(stiff, gap - step, -np.inf)))
    assert np.all(gap[stiff] <= step[stiff] + 1e-5), (
        f"tick {tick}: {rig.cfg.joint_names[worst]} commanded {position[worst]:.3f} rad with "
        f"kp {rig.joint_cmds[tick].kp[worst]:g}, measured {measured[worst]:.3f} "
        f"(step limit {step[worst]:.3f} rad)")


@pytest.mark.parametrize("timing", TIMINGS)
@pytest.mark.parametrize(("robot", "mode", "gait"), _cases())
def test_a_command_with_the_first_joint_state_starts_from_the_measured_pose(
        robot: str, mode: int, gait: int, timing: str) -> None:
    ft = FirstTicks(robot)
    rig = ft.rig
    if timing == "late_bridge_same_tick":
        for _ in range(5):
            ft.tick(state=False, packets=[])
    if timing == "next_tick":
        ft.tick(state=True, packets=[])
        ft.tick(state=True, packets=[_command(rig, mode, gait)])
    else:
        ft.tick(state=True, packets=[_command(rig, mode, gait)],
                state_first=timing != "same_tick_command_first")
    assert rig.heartbeat_msg is not None
    for i in range(RUN_TICKS):
        ft.tick(state=True, packets=[(rig.ch["command"], rig.heartbeat_msg.encode())]
                if i % 50 == 0 else [])
        assert rig.ctl.fsm.operating != EDAMP, (
            f"EDAMP {i} ticks in: {rig.ctl.counters.last_error}")
    assert rig.ctl.fsm.mode == mode, (rig.ctl.fsm.mode, rig.ctl.counters.last_error)
    if any(np.any(jc.kp) for jc in rig.joint_cmds):
        _check(ft)
    else:
        # The passive damper commands no stiffness at all: nothing can jump.
        assert mode == 7 and gait == 0


def _motor_frame(q: np.ndarray, kp: float, kd: float) -> bytes:
    msg = msgs.motor_ctrl_lcmt()
    msg.q_des = q.tolist()
    msg.kp_des = [kp] * len(q)
    msg.kd_des = [kd] * len(q)
    return msg.encode()


@pytest.mark.parametrize("state_first", (True, False))
def test_motor_ctrl_with_the_first_joint_state_starts_from_the_measured_pose(state_first: bool) -> None:
    """Mode 15's pass-through: a motor_ctrl frame asking for zero angles at
    full stiffness in the first tick's inbox commands nothing stiff (SPEC
    §6.9's entry wait damps from the measured pose); once the wait is over
    and a zero frame has come, the first stiff frame starts from where the
    joints are."""
    ft = FirstTicks("cyberdog2")
    rig = ft.rig
    channel = rig.ch["motor_ctrl"]
    ft.tick(state=True, packets=[(channel, _motor_frame(np.zeros(12), 60.0, 2.0))],
            state_first=state_first)
    for i in range(1400):
        assert ft.latest is not None
        frame = _motor_frame(ft.latest, 0.0, 0.0) if i < 1300 else \
            _motor_frame(ft.latest + 0.05, 60.0, 2.0)
        ft.tick(state=True, packets=[(channel, frame)])
        if i < 1250:
            assert not np.any(rig.joint_cmds[-1].kp), f"stiff during the entry wait, tick {i}"
    assert rig.ctl.fsm.mode == 15
    _check(ft)


def test_the_kernel_seed_takes_the_measurement_only_while_it_tracks_it_limp() -> None:
    rig = Rig()
    k = rig.ctl.kernel
    q = np.linspace(-1.0, 1.0, k.n)
    assert k.seed(q) and np.array_equal(k.pos, q)          # nothing commanded yet
    k.kp[3] = 10.0
    assert not k.seed(q + 1.0) and np.array_equal(k.pos, q)   # a stiff output
    k.kp[:] = 0.0
    k.hold(q + 0.5)                                        # a limp hold of a target
    assert not k.seed(q + 1.0) and np.array_equal(k.pos, q)
    k.track(q + 0.2)                                       # a limp state's tracking
    assert k.seed(q + 1.0) and np.array_equal(k.pos, q + 1.0)
