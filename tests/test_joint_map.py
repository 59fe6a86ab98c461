"""The joint map (config `joint_map`, controller/robot/config/joint_map.py):
the robot's own joint order, directions and zero offsets on the wire, against
the controller's convention. Only joint_cmd, joint_state and motor_ctrl cross
it; the kernel encodes joint_cmd through it in C (csrc/wire.c)."""
from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml
from harness import Rig

from controller import msgs
from controller.core.controller import Controller
from controller.robot.config import ConfigError, load_config
from controller.robot.config.joint_map import JointMap
from controller.sim.bridge import WireBridge
from controller.sim.physics import PhysicsRobot

CFG = load_config()
NAMES = CFG.joint_names
# A robot that numbers its legs FL, FR, RL, RR, turns hip and knee the other
# way and reads other angles at the controller's zero: every part of the map.
WIRE_ORDER = [f"{leg}_{j}" for leg in ("FL", "FR", "RL", "RR") for j in ("abad", "hip", "knee")]
FLIPPED = np.array([1.0 if n.endswith("abad") else -1.0 for n in NAMES])
OFFSETS = np.array([0.1, -0.3, 0.7, -0.2, 0.05, 1.1, 0.0, 0.25, -0.6, 0.3, -1.2, 2.0])


def go2_like(offsets: bool = True) -> JointMap:
    return JointMap(NAMES, WIRE_ORDER, FLIPPED, OFFSETS if offsets else None)


def test_the_identity_is_the_default_and_cyberdog2_needs_no_map():
    assert CFG.joint_map.identity
    q = np.linspace(-1.0, 1.0, 12)
    assert np.array_equal(CFG.joint_map.positions_to_wire(q), q)


def test_the_map_puts_each_joint_in_its_wire_slot_with_its_sign_and_offset():
    jm = go2_like()
    q = np.arange(12, dtype=float) / 10.0
    wire = jm.positions_to_wire(q)
    for k, name in enumerate(WIRE_ORDER):
        j = NAMES.index(name)
        assert wire[k] == pytest.approx(FLIPPED[j] * q[j] + np.float32(OFFSETS[j]), abs=1e-15)
    assert np.array_equal(jm.signed_to_wire(q), FLIPPED[jm.order] * q[jm.order])
    assert np.array_equal(jm.plain_to_wire(q), q[jm.order])


def test_wire_values_go_through_the_controller_and_back_bit_for_bit():
    """What a float32 wire carries comes back unchanged: order and sign
    always, and the offsets because they are kept at the wire's precision."""
    jm = go2_like()
    rng = np.random.default_rng(7)
    wire = rng.uniform(-3.0, 3.0, (200, 12)).astype(np.float32).astype(np.float64)
    for w in wire:
        q = jm.positions_from_wire(w)
        assert np.array_equal(jm.positions_to_wire(q).astype(np.float32), w.astype(np.float32))
        assert np.array_equal(jm.signed_to_wire(jm.signed_from_wire(w)), w)
        assert np.array_equal(jm.plain_to_wire(jm.plain_from_wire(w)), w)


def test_the_c_encoder_writes_exactly_what_the_map_says():
    jm = go2_like()
    k = Controller(replace(CFG, joint_map=jm)).kernel
    rng = np.random.default_rng(3)
    for name in ("pos", "vel", "kp", "kd", "tau"):
        getattr(k, name)[:] = rng.uniform(-2.0, 2.0, 12)
    fingerprint = int.from_bytes(msgs.joint_command_t._get_packed_fingerprint(), "big")
    sent = msgs.joint_command_t.decode(bytes(k.encode_joint_command(fingerprint, 5, 6)))
    f32 = np.float32
    assert np.array_equal(np.array(sent.position, dtype=f32), jm.positions_to_wire(k.pos).astype(f32))
    assert np.array_equal(np.array(sent.velocity, dtype=f32), jm.signed_to_wire(k.vel).astype(f32))
    assert np.array_equal(np.array(sent.torque, dtype=f32), jm.signed_to_wire(k.tau).astype(f32))
    assert np.array_equal(np.array(sent.kp, dtype=f32), jm.plain_to_wire(k.kp).astype(f32))
    assert np.array_equal(np.array(sent.kd, dtype=f32), jm.plain_to_wire(k.kd).astype(f32))


def test_a_command_round_trip_through_the_map_is_exact():
    """The robot's joint_state in, the measured angles and torques commanded
    straight back: the joint_cmd the robot gets carries its own numbers bit for
    bit, in its own order, and the bridge's side turns it back into exactly
    the controller's arrays."""
    cfg = replace(CFG, joint_map=go2_like())
    ctl = Controller(cfg)
    bridge = WireBridge(cfg)
    rng = np.random.default_rng(11)
    state = msgs.joint_state_t()
    state.num_joints = 12
    state.position = rng.uniform(cfg.q_min, cfg.q_max)[cfg.joint_map.order] * FLIPPED[cfg.joint_map.order]
    state.velocity = rng.uniform(-5, 5, 12).tolist()
    state.torque = rng.uniform(-10, 10, 12).tolist()
    state.battery_voltage = 25.0
    data = state.encode()
    wire_q = msgs.joint_state_t.decode(data).position      # as float32 carried them
    ctl.step(1_000_000_000, [(cfg.lcm.channels["joint_state"], data)])
    k = ctl.kernel
    k.pos[:], k.vel[:], k.tau[:] = ctl.q, ctl.qd, ctl.tau
    k.kp[:], k.kd[:] = np.arange(12.0), np.arange(12.0) / 10
    fingerprint = int.from_bytes(msgs.joint_command_t._get_packed_fingerprint(), "big")
    back = bytes(k.encode_joint_command(fingerprint, 0, 0))
    sent = msgs.joint_command_t.decode(back)
    assert sent.position == wire_q
    assert sent.velocity == msgs.joint_state_t.decode(data).velocity
    assert sent.torque == msgs.joint_state_t.decode(data).torque
    assert list(sent.kp) == np.arange(12.0)[cfg.joint_map.order].tolist()
    c = bridge.command(back)
    assert np.array_equal(c.q, ctl.q) and np.array_equal(c.qd, ctl.qd) and np.array_equal(c.tau, ctl.tau)
    assert np.array_equal(c.kp, np.arange(12.0))


def test_motor_ctrl_is_read_in_the_robots_convention():
    cfg = replace(CFG, joint_map=go2_like())
    ctl = Controller(cfg)
    q = np.linspace(-0.5, 0.5, 12)
    msg = msgs.motor_ctrl_lcmt()
    msg.q_des = cfg.joint_map.positions_to_wire(q).tolist()
    msg.qd_des = cfg.joint_map.signed_to_wire(q).tolist()
    msg.kp_des = cfg.joint_map.plain_to_wire(np.arange(12.0)).tolist()
    msg.kd_des = [1.0] * 12
    msg.tau_des = cfg.joint_map.signed_to_wire(-q).tolist()
    ctl.step(1_000_000_000, [(cfg.lcm.channels["motor_ctrl"], msg.encode())])
    m = ctl.sources.motor_command(1_000_000_000)
    assert m is not None
    np.testing.assert_allclose(m.q_des, q, atol=2e-7)           # float32 on the wire
    np.testing.assert_allclose(m.qd_des, q, atol=1e-7)
    np.testing.assert_allclose(m.tau, -q, atol=1e-7)
    assert np.array_equal(m.kp, np.arange(12.0))


def _stand(joint_map: JointMap) -> Rig:
    rig = Rig(overrides={"joint_map": joint_map}, record_joints=True)
    rig.send(12)
    rig.run(2500)
    return rig


def test_in_physics_a_robot_with_another_wire_convention_moves_exactly_as_without_one():
    """The simulated robot's bridge speaks the map's convention (sim/bridge.py):
    reordered and flipped joints are exact on a float32 wire, so the body does
    bit for bit what it does with the identity map, while every joint_cmd on
    the wire is in the other order and sign. With zero offsets too, the
    float32 rounding differs, and the robot still stands as high."""
    plain = _stand(CFG.joint_map)
    mapped = _stand(go2_like(offsets=False))
    assert isinstance(plain.robot, PhysicsRobot) and isinstance(mapped.robot, PhysicsRobot)
    assert np.array_equal(plain.robot.data.qpos, mapped.robot.data.qpos)
    last_plain, last_mapped = plain.joint_cmds[-1], mapped.joint_cmds[-1]
    jm = mapped.cfg.joint_map
    assert np.array_equal(np.array(last_mapped.position, dtype=np.float32),
                          jm.positions_to_wire(np.array(last_plain.position)).astype(np.float32))
    assert last_mapped.position != last_plain.position
    offset = _stand(go2_like())
    assert isinstance(offset.robot, PhysicsRobot)
    assert offset.mode == 12 and offset.responses[-1].bar == 100
    assert abs(offset.robot.data.qpos[2] - plain.robot.data.qpos[2]) < 1e-3
    assert np.abs(offset.robot.q - plain.robot.q).max() < 1e-3


def with_joint_map(tmp_path: Path, section: dict[str, object]) -> Path:
    """cyberdog2.yaml with this `joint_map`, in a copy of config/ and gaits/
    (a config names its files relative to itself)."""
    root = CFG.path.parent.parent
    shutil.copytree(root / "config", tmp_path / "config")
    shutil.copytree(root / "gaits", tmp_path / "gaits")
    data = yaml.safe_load(CFG.path.read_text())
    data["joint_map"] = section
    path = tmp_path / "config" / "robot.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("section, message", [
    ({"direction": {"knee": 2}}, "each direction is 1 or -1"),
    ({"direction": {"elbow": -1}}, "'elbow' is neither a joint type"),
    ({"offset": {"FR_knee": 7.0}}, "beyond one turn"),
    ({"wire_order": WIRE_ORDER[:-1]}, "missing ['RR_knee']"),
    ({"wire_order": [*WIRE_ORDER[:-1], "FL_abad"]}, "repeated ['FL_abad']"),
    ({"wire_order": [*WIRE_ORDER[:-1], "RR_ankle"]}, "unknown ['RR_ankle']"),
    ({"order": WIRE_ORDER}, "unknown keys ['order']"),
])
def test_a_bad_joint_map_is_refused_with_its_key_and_reason(tmp_path: Path, section: dict[str, object],
                                                           message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(with_joint_map(tmp_path, section))
    assert "joint_map" in str(err.value) and message in str(err.value)


def test_direction_by_type_and_name_and_the_name_wins(tmp_path: Path) -> None:
    jm = load_config(with_joint_map(tmp_path, {
        "wire_order": WIRE_ORDER, "direction": {"hip": -1, "knee": -1, "RR_knee": 1},
        "offset": {"knee": 0.5, "FL_knee": -0.25}})).joint_map
    direction = dict(zip(NAMES, jm.direction))
    offset = dict(zip(NAMES, jm.offset))
    assert direction["FR_hip"] == -1 and direction["FR_abad"] == 1 and direction["RR_knee"] == 1
    assert direction["RL_knee"] == -1
    assert offset["FR_knee"] == 0.5 and offset["FL_knee"] == -0.25 and offset["FR_hip"] == 0.0
    assert jm.wire_names == WIRE_ORDER
