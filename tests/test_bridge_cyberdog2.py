"""The CyberDog 2 bridge (controller/bridges/cyberdog2.py) between motiond
and an emulator of the robot's motion-control board (controller/sim/
cyberdog2_board.py: the physics body under the board's mode-15 rules), on
one simulated clock (tests/bridge_chain.py). Judged on the body's ground
truth and on what crossed the robot's wire."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bridge_chain import Chain, frame_gains

from controller import msgs
from controller.bridges.cyberdog2 import CyberDog2Bridge
from controller.bridges.run import check_wires
from controller.bridges.status import ACTIVE, ENTERING, FAULT, STARTING
from controller.core.faults import MOTOR_FAULT_TICKS
from controller.robot.config import ConfigError, load_config
from controller.robot.resources import CONFIG_DIR

STAND_Z = 0.22      # m: the trunk of a stood CyberDog 2 (stand height 0.25 less sag)
LYING_Z = 0.12      # m: below this it lies on its belly


def entered(chain: Chain) -> Chain:
    chain.run_until(lambda: chain.bridge.state == ACTIVE, 6.0)
    return chain


def stood(chain: Chain | None = None) -> Chain:
    chain = entered(chain or Chain())
    chain.send(12)
    chain.run(3.0)
    assert chain.z[-1] > STAND_Z
    return chain


def test_the_bridge_takes_the_board_into_low_level_control_before_motiond_sees_a_joint() -> None:
    chain = Chain()
    ticks = 0
    while chain.bridge.state != ACTIVE:
        # Until then motiond got no joint_state: it stays OFF, measuring nothing.
        assert chain.ctl.fsm.mode == 0 and not chain.ctl.fsm.measured
        chain.tick()
        ticks += 1
        assert ticks < 3000
    # The board's entry wait (SPEC §6.9: ~2.5 s) and its all-zero frame.
    assert 2.3 < chain.seconds(ticks) < 3.5
    frames = chain.sent_frames
    assert len(frames) >= chain.cfg.bridge.entry_frames
    assert all(not frame_gains(f).any() for _, f in frames), "only all-zero frames while entering"
    assert chain.ctl.fsm.measured     # the tick that found it ACTIVE gave motiond the joints


def test_a_zero_or_impossible_robot_state_is_never_started_from() -> None:
    cfg = load_config()
    bridge = CyberDog2Bridge(cfg)
    zero = msgs.spi_data_t()               # every joint at 0 rad: the knee cannot be there
    est = msgs.state_estimator_lcmt()
    est.quat = [1.0, 0.0, 0.0, 0.0]
    now = 1_000_000_000
    for k in range(20):
        t = now + k * 2_000_000
        bridge.robot_packet(t, "spi_data", zero.encode())
        bridge.robot_packet(t, "state_estimator", est.encode())
        out = bridge.tick(t, t // 1000)
        assert not out.to_robot and all(key == "bridge_status" for key, _ in out.to_motiond)
    assert bridge.state == STARTING and "no spi_data yet" in bridge.status.reason
    assert bridge.status.counters.states_rejected == 20
    # A plausible state starts the entry.
    good = msgs.spi_data_t()
    good.q_hip, good.q_knee = [1.2] * 4, [2.4] * 4
    t = now + 50_000_000
    bridge.robot_packet(t, "spi_data", good.encode())
    bridge.robot_packet(t, "state_estimator", est.encode())
    bridge.tick(t, t // 1000)
    assert bridge.state == ENTERING
    out = bridge.tick(t + 2_000_000, (t + 2_000_000) // 1000)
    assert len(out.to_robot) == 1 and not frame_gains(out.to_robot[0]).any()


def test_basic_motion_stand_trot_lie_down_through_the_bridge() -> None:
    chain = stood()
    chain.send(11, 26, vel_des=[0.3, 0.0, 0.0], step_height=[0.06, 0.06])
    chain.run(4.0)
    window = 2.0
    n = int(window * chain.cfg.tick_hz)
    vx = (chain.x[-1] - chain.x[-n]) / window
    assert abs(vx - 0.3) <= 0.05 + 0.1 * 0.3
    assert min(chain.z[-n:]) > STAND_Z
    chain.send(7)
    chain.run(3.0)
    assert chain.z[-1] < LYING_Z
    assert chain.bridge.state == ACTIVE
    assert chain.response is not None and chain.response.mode == 7


def test_a_client_that_stops_is_laid_down_by_motiond_through_the_bridge() -> None:
    chain = stood()
    chain.beating = False
    chain.run(3.5)
    assert chain.ctl.fsm.mode == 7 and chain.ctl.counters.timeouts == 1
    assert chain.z[-1] < LYING_Z
    assert chain.bridge.state == ACTIVE     # motiond's damper went through


def test_a_dropped_link_is_a_fault_and_the_firmware_lies_the_robot_down() -> None:
    chain = stood()
    start = len(chain.z)
    cut_ns = chain.now_ns
    chain.board.deaf = chain.board.mute = True      # the cable is out, both ways
    took = chain.run_until(lambda: chain.bridge.state == FAULT, 1.0)
    assert took <= chain.cfg.bridge.state_timeout_ms / 1e3 + 0.004
    assert "no spi_data" in chain.bridge.status.reason
    chain.run(0.01)
    assert chain.ctl.fsm.operating != 0 and "robot bridge fault" in chain.ctl.counters.last_error
    sent_after = [t for t, _ in chain.sent_frames if t > cut_ns + int(0.06e9)]
    assert not sent_after, "nothing is sent to the robot after the fault (its firmware damps)"
    chain.run(3.0)
    # The board's own rules: the last command decays after 10 ms, and 500 ms on
    # the robot is damped down (no motor_ctrl reached it after the cut).
    z = np.array(chain.z[start:])
    assert z[-1] < LYING_Z
    half_s = int(0.5 * chain.cfg.tick_hz)
    assert z[half_s] > z[-1] + 0.05, "it went down after the board's timeout, not at once"
    assert chain.board.firmware.fsm.mode == 7
    # Plugged back in: the bridge asks the board again, then motiond stands it.
    chain.board.deaf = chain.board.mute = False
    chain.run_until(lambda: chain.bridge.state == ACTIVE, 6.0)
    chain.send(12)
    chain.run(3.0)
    assert chain.z[-1] > STAND_Z


def test_a_motor_flag_damps_the_robot_and_shows_in_motor_error() -> None:
    chain = stood()
    knee = chain.cfg.joint_names.index("FR_knee")
    chain.board.motor_flags[knee] = 1 << 2           # driver chip fault
    chain.run((MOTOR_FAULT_TICKS - 2) / chain.cfg.tick_hz)
    assert chain.ctl.fsm.mode == 12, "a flag must stand 25 ticks (SPEC §5.8)"
    chain.run(0.05)
    assert chain.ctl.fsm.mode == 7
    assert "FR_knee 0x4 (driver chip fault)" in chain.ctl.counters.last_error
    chain.run(0.1)
    assert chain.response is not None and chain.response.motor_error[knee] == 1 << 2
    chain.send(12)                                  # refused while the flag stands
    chain.run(2.5)
    assert chain.ctl.fsm.mode == 7 and chain.z[-1] < LYING_Z
    assert "refused: motor fault" in chain.ctl.counters.last_error
    chain.board.motor_flags[knee] = 0               # the driver recovers
    chain.run(1.0)                                  # and EDAMP's hold (3.1 s, SPEC §5.6) ends
    chain.send(12)
    chain.run(3.0)
    assert chain.z[-1] > STAND_Z and chain.response.motor_error[knee] == 0


def test_a_bad_joint_cmd_is_dropped_and_counted() -> None:
    chain = entered(Chain())
    bridge = chain.bridge
    cmd = msgs.joint_command_t()
    cmd.num_joints = 12
    cmd.position = [float("nan")] + [0.0] * 11
    cmd.velocity = cmd.kp = cmd.kd = cmd.torque = [0.0] * 12
    before = bridge.status.counters.commands_dropped
    assert bridge.joint_cmd(chain.now_ns, cmd.encode()) is None
    assert bridge.joint_cmd(chain.now_ns, b"\x00" * 20) is None
    assert bridge.status.counters.commands_dropped == before + 2


def test_the_bridge_refuses_to_share_the_robots_port_with_motiond() -> None:
    with pytest.raises(ConfigError, match="lcm.ports.joint"):
        check_wires(load_config(), "cyberdog2")
    check_wires(load_config(CONFIG_DIR / "cyberdog2_robot.yaml"), "cyberdog2")
    with pytest.raises(ConfigError, match="the bridges are"):
        check_wires(load_config(CONFIG_DIR / "cyberdog2_robot.yaml"), "go3")


def test_the_robot_types_carry_the_robots_own_fingerprints() -> None:
    # SPEC §1.7 and §1.7a give the base hashes; on the wire each is rotated left once.
    for kind, base in ((msgs.spi_data_t, 0x4da50a8960be7463),
                       (msgs.state_estimator_lcmt, 0x0c69618890a997af)):
        wire = ((base << 1) | (base >> 63)) & 0xFFFFFFFFFFFFFFFF
        assert kind._get_packed_fingerprint() == wire.to_bytes(8, "big"), kind.__name__
    assert len(msgs.state_estimator_lcmt().encode()) == 192     # SPEC §1.7, fingerprint included


def test_the_robot_config_extends_the_shipped_one(tmp_path: Path) -> None:
    robot = load_config(CONFIG_DIR / "cyberdog2_robot.yaml")
    base = load_config()
    assert robot.lcm.ports == {**base.lcm.ports, "joint": 7677}
    assert robot.lcm.names == base.lcm.names and robot.robot == base.robot
    assert np.array_equal(robot.q_max, base.q_max)
    loop = tmp_path / "a.yaml"
    loop.write_text("extends: b.yaml\n")
    (tmp_path / "b.yaml").write_text("extends: a.yaml\n")
    with pytest.raises(ConfigError, match="a loop"):
        load_config(loop)
