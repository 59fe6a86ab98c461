"""The Go2 bridge's wire and state machine (controller/bridges/unitree_go2.py,
dds.py), without DDS: the LowCmd_ bytes and their CRC, what it sends in each
state, and what the motion switcher's answers mean. The end-to-end run on
Unitree's own simulator is tests/test_bridge_unitree_sim.py."""
from __future__ import annotations

import random
import struct
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from controller import msgs
from controller._kernel import ffi, lib
from controller.bridges.dds import judge_switcher
from controller.bridges.status import ACTIVE, FAULT, STARTING
from controller.bridges.unitree_go2 import FAULT_HOLD_NS, UnitreeGo2Bridge, lowcmd
from controller.bridges.unitree_idl import CDR_HEADER, CRC_WORDS, LOWCMD_C, LOWCMD_CDR, LowCmd_
from controller.robot.config import load_config
from controller.robot.resources import CONFIG_DIR

ROBOT = load_config(CONFIG_DIR / "go2_robot.yaml")
SIM = load_config(CONFIG_DIR / "go2_unitree_sim.yaml")
TICK = 2_000_000


def crc_reference(words: list[int]) -> int:
    """CRC-32/MPEG-2, bit by bit, each 32-bit word most significant bit first."""
    crc = 0xFFFFFFFF
    for w in words:
        for bit in range(31, -1, -1):
            top = (crc >> 31) ^ ((w >> bit) & 1)
            crc = (crc << 1) & 0xFFFFFFFF
            if top:
                crc ^= 0x04C11DB7
    return crc


def lowcmd_values(q: Any, dq: Any, tau: Any, kp: Any, kd: Any) -> list[Any]:
    """LowCmd_'s fields in order (crc 0), 12 motors in servo mode: the
    reference the C packer is held to."""
    values: list[Any] = [0xFE, 0xEF, 0xFF, 0, 0, 0, 0, 0, 0]
    for k in range(12):
        values += [1, q[k], dq[k], tau[k], kp[k], kd[k], 0, 0, 0]
    values += [0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0] * 8
    values += [0] * 4 + [0] * 55 + [0, 0]
    return values


def crc_of(values: list[Any]) -> int:
    layout = LOWCMD_C.pack(*values)
    return int(lib.mk_crc32_words(ffi.cast("uint32_t *", ffi.from_buffer(layout)), CRC_WORDS))


def lowcmd_bytes(values: list[Any]) -> bytes:
    values[-1] = crc_of(values)
    return CDR_HEADER + LOWCMD_CDR.pack(*values)


def test_the_crc_is_the_sdks_algorithm() -> None:
    rng = random.Random(7)
    for _ in range(5):
        q = [rng.uniform(-2, 2) for _ in range(12)]
        values = lowcmd_values(q, [0.1] * 12, [0.5] * 12, [60.0] * 12, [2.0] * 12)
        layout = struct.pack("<4B4IH2x" + "B3x5f3I" * 20 + "4B" + "55Bx2I", *values)
        words = list(struct.unpack("<203I", layout))[:202]
        assert crc_of(values) == crc_reference(words)


def test_the_c_packer_writes_the_reference_bytes() -> None:
    rng = np.random.default_rng(3)
    targets = rng.uniform(-3, 3, (5, 12))
    q, dq, tau, kp, kd = targets
    assert lowcmd(targets, bytearray(812)) == lowcmd_bytes(lowcmd_values(q, dq, tau, kp, kd))


def test_lowcmd_bytes_are_what_cyclonedds_serialises() -> None:
    values = lowcmd_values([0.1 * k for k in range(12)], [0.0] * 12, [1.5] * 12, [40.0] * 12, [1.0] * 12)
    data = lowcmd_bytes(values)
    assert data[:4] == CDR_HEADER
    fields = LOWCMD_CDR.unpack(data[4:])
    msg = LowCmd_(head=[0xFE, 0xEF], level_flag=0xFF, crc=fields[-1])
    for k in range(12):
        m = msg.motor_cmd[k]
        m.mode, m.q, m.dq, m.tau, m.kp, m.kd = 1, 0.1 * k, 0.0, 1.5, 40.0, 1.0
    ref = msg.serialize()
    assert data == ref.ljust((len(ref) + 3) & ~3, b"\0")
    assert fields[-1] == crc_of(lowcmd_values([0.1 * k for k in range(12)], [0.0] * 12, [1.5] * 12,
                                              [40.0] * 12, [1.0] * 12))


def lowstate(q: list[float] | None = None, quat: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0)) -> Any:
    q = q if q is not None else [0.0, 0.9, -1.8] * 4       # the Go2's own convention: knee negative
    motors = [SimpleNamespace(q=v, dq=0.0, tau_est=0.0) for v in q] + \
             [SimpleNamespace(q=0.0, dq=0.0, tau_est=0.0)] * 8
    imu = SimpleNamespace(quaternion=list(quat), gyroscope=[0.0] * 3, accelerometer=[0.0, 0.0, 9.81])
    return SimpleNamespace(motor_state=motors, imu_state=imu, power_v=28.8)


def joint_cmd(kp: float = 60.0, kd: float = 5.0) -> bytes:
    m = msgs.joint_command_t()
    m.num_joints = 12
    m.position = [0.0, 0.9, -1.8] * 4
    m.velocity = m.torque = [0.0] * 12
    m.kp, m.kd = [kp] * 12, [kd] * 12
    return m.encode()


def decoded(frame: bytes) -> tuple[Any, ...]:
    return LOWCMD_CDR.unpack(frame[4:])


def motor(fields: tuple[Any, ...], k: int) -> tuple[Any, ...]:
    """(mode, q, dq, tau, kp, kd) of motor k in an unpacked LowCmd_."""
    start = 9 + 9 * k
    return fields[start:start + 6]


def active(cfg: Any = SIM) -> tuple[UnitreeGo2Bridge, int]:
    bridge = UnitreeGo2Bridge(cfg)
    now = 1_000_000_000
    bridge.lowstate(now, lowstate())
    bridge.motion_switcher(True, "no sport mode")
    bridge.tick(now, now // 1000)
    assert bridge.state == ACTIVE
    return bridge, now


def test_nothing_is_sent_until_the_motion_switcher_has_answered() -> None:
    bridge = UnitreeGo2Bridge(SIM)
    now = 1_000_000_000
    bridge.lowstate(now, lowstate())
    out = bridge.tick(now, now // 1000)
    assert bridge.state == STARTING and "motion switcher" in bridge.status.reason
    assert not out.to_robot and [k for k, _ in out.to_motiond] == ["bridge_status"]
    assert bridge.joint_cmd(now, joint_cmd()) is None


def test_a_sport_mode_is_a_fault_and_the_bridge_never_sends() -> None:
    bridge = UnitreeGo2Bridge(ROBOT)
    released, text = judge_switcher((0, '{"name": "normal", "form": "0"}'), ROBOT.bridge)
    assert not released and "sport mode 'normal'" in text
    bridge.motion_switcher(released, text)
    now = 1_000_000_000
    for k in range(5):
        t = now + k * TICK
        bridge.lowstate(t, lowstate())
        out = bridge.tick(t, t // 1000)
        assert bridge.state == FAULT and not out.to_robot
        assert bridge.joint_cmd(t, joint_cmd()) is None


def test_what_the_motion_switcher_says_is_judged() -> None:
    assert judge_switcher((0, '{"name": ""}'), ROBOT.bridge)[0]
    assert not judge_switcher((3104, ""), ROBOT.bridge)[0]
    assert not judge_switcher((0, "not json"), ROBOT.bridge)[0]
    # No answer: a real Go2 has a switcher, Unitree's simulator has none.
    released, text = judge_switcher(None, ROBOT.bridge)
    assert not released and "bridge.simulator: true" in text
    assert judge_switcher(None, SIM.bridge)[0]


def test_joint_cmd_goes_out_as_lowcmd_with_the_gains_capped_where_the_config_says() -> None:
    bridge, now = active(SIM)
    fields = decoded(bridge.joint_cmd(now, joint_cmd(kp=160.0, kd=5.0)) or b"")
    assert fields[:3] == (0xFE, 0xEF, 0xFF)
    mode, q, _, _, kp, kd = motor(fields, 2)
    assert mode == 1 and q == pytest.approx(-1.8) and kp == 90.0 and kd == 3.0
    robot, now = active(ROBOT)
    _, _, _, _, kp, kd = motor(decoded(robot.joint_cmd(now, joint_cmd(kp=160.0, kd=5.0)) or b""), 2)
    assert kp == 160.0 and kd == 5.0        # the real Go2: as commanded


def test_stale_lowstate_damps_the_robot_and_tells_motiond() -> None:
    bridge, now = active(SIM)
    timeout_ns = int(SIM.bridge.state_timeout_ms * 1e6)
    t = now + timeout_ns + TICK
    out = bridge.tick(t, t // 1000)
    assert bridge.state == FAULT and "no LowState_ for" in bridge.status.reason
    assert bridge.status.counters.stale_events == 1
    status = [msgs.bridge_status_t.decode(d) for k, d in out.to_motiond if k == "bridge_status"]
    assert status and status[0].state == FAULT
    (frame,) = out.to_robot
    fields = decoded(frame)
    for k in range(12):
        mode, _, dq, tau, kp, kd = motor(fields, k)
        assert (mode, kp, kd, dq, tau) == (1, 0.0, SIM.bridge.damping_kd, 0.0, 0.0)
    assert bridge.joint_cmd(t, joint_cmd()) is None
    # Fresh again: after the hold, ACTIVE.
    t2 = t + FAULT_HOLD_NS
    bridge.lowstate(t2, lowstate())
    bridge.tick(t2, t2 // 1000)
    assert bridge.state == ACTIVE


def test_an_impossible_lowstate_is_rejected_and_counted() -> None:
    bridge = UnitreeGo2Bridge(SIM)
    now = 1_000_000_000
    bridge.lowstate(now, lowstate(q=[0.0] * 12))        # knee at 0: not a Go2's
    bridge.lowstate(now, lowstate(quat=(0.5, 0.0, 0.0, 0.0)))
    bridge.lowstate(now, lowstate(q=[float("nan")] + [0.0, 0.9, -1.8] * 3 + [0.0, 0.0]))
    assert bridge.status.counters.states_rejected == 3 and bridge.state_ns is None


def test_joint_state_and_imu_follow_the_lowstate() -> None:
    bridge, now = active(SIM)
    q = [0.05, 0.8, -1.6] * 4
    bridge.lowstate(now + TICK, lowstate(q=q))
    out = dict(bridge.tick(now + TICK, (now + TICK) // 1000).to_motiond)
    js = msgs.joint_state_t.decode(out["joint_state"])
    assert np.allclose(js.position, q, atol=1e-6) and js.battery_voltage == pytest.approx(28.8)
    imu = msgs.imu_t.decode(out["imu"])
    assert imu.accel[2] == pytest.approx(9.81, abs=1e-5)
