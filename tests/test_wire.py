"""Wire compatibility with CyberDog 2 (SPEC §1) and the layout of motiond's own types."""
import re
from pathlib import Path
from typing import Any

import pytest

from controller import msgs

LCMTYPES = Path(__file__).resolve().parent.parent / "lcmtypes"


def base_hash(kind: Any) -> int:   # an lcm-gen message class (untyped)
    # The generated _get_hash_recursive returns the wire fingerprint: the base
    # hash rotated left by one bit. Undo the rotation.
    wire = kind._get_hash_recursive([])
    return ((wire >> 1) | ((wire & 1) << 63)) & 0xFFFFFFFFFFFFFFFF


@pytest.mark.parametrize("kind, base, wire, size", [
    (msgs.robot_control_cmd_lcmt, 0x476B61E296AF96F5, 0x8ED6C3C52D5F2DEA, 124),
    (msgs.robot_control_response_lcmt, 0x485DA98216EDA8C7, 0x90BB53042DDB518E, 64),
    (msgs.file_send_lcmt, 0x90DF9B84CDCEAF0A, 0x21BF37099B9D5E15, None),
    (msgs.file_recv_lcmt, 0xF676533F1F6D36BE, 0xECECA67E3EDA6D7D, 9),
    (msgs.motor_ctrl_lcmt, 0x3DDBE622BC22D656, None, 248),
    (msgs.motor_ctrl_state_lcmt, 0x2AFDF7BDF6035AEA, None, None),
    (msgs.localization_lcmt, 0x7E246F0371A27D89, 0xFC48DE06E344FB12, 76),
])
def test_cyberdog_fingerprints_and_sizes(kind, base, wire, size):
    assert base_hash(kind) == base
    encoded = kind().encode()
    if wire is not None:
        assert encoded[:8] == wire.to_bytes(8, "big")
    if size is not None:
        assert len(encoded) == size


def test_command_field_offsets_match_spec():
    msg = msgs.robot_control_cmd_lcmt()
    msg.mode, msg.gait_id, msg.contact, msg.life_count = 12, 3, 0x0F, -5
    msg.step_height = [0.25, 0.5]
    msg.value, msg.duration = 7, 1234
    payload = msg.encode()[8:]
    assert payload[0:4] == bytes([12, 3, 0x0F, 0xFB])
    assert payload[100:108] == bytes.fromhex("3e8000003f000000")   # step_height floats
    assert int.from_bytes(payload[108:112], "big") == 7
    assert int.from_bytes(payload[112:116], "big") == 1234


def _fields(lcm_file: str) -> list[str]:
    text = (LCMTYPES / lcm_file).read_text()
    body = text[text.index("{") + 1:text.rindex("}")]
    body = re.sub(r"//[^\n]*", "", body)
    return [" ".join(f.split()) for f in body.split(";") if f.strip()]


def test_motiond_types_start_with_the_agreed_fields():
    assert _fields("joint_command_t.lcm")[:8] == [
        "int64_t utime", "int64_t tick", "int16_t num_joints", "float position[num_joints]",
        "float velocity[num_joints]", "float kp[num_joints]", "float kd[num_joints]",
        "float torque[num_joints]"]
    assert _fields("joint_state_t.lcm")[:5] == [
        "int64_t utime", "int16_t num_joints", "float position[num_joints]",
        "float velocity[num_joints]", "float torque[num_joints]"]
    assert _fields("controller_status_t.lcm")[:21] == [
        "int64_t utime", "int64_t tick", "int8_t mode", "int8_t gait_id", "string mode_name",
        "int8_t switch_status", "int8_t progress", "int16_t queue_depth",
        "int32_t block_remaining_ms", "int8_t last_life_count", "int32_t commands_accepted",
        "int32_t heartbeats", "int32_t packets_rejected", "int32_t commands_rejected",
        "int32_t timeouts", "int32_t tick_overruns", "float lateness_p50_us",
        "float lateness_p99_us", "float lateness_max_us", "float loop_p99_us",
        "string last_error"]


def test_generated_package_holds_exactly_the_lcm_files():
    generated = {p.stem for p in Path(msgs.__file__).parent.glob("*.py")} - {"__init__"}
    assert generated == {p.stem for p in LCMTYPES.glob("*.lcm")}


def test_localization_field_offsets_match_spec():
    # SPEC §1.6 field order: 15 floats, then the int64 timestamp.
    msg = msgs.localization_lcmt()
    msg.xyz = [1.0, 2.0, 0.25]
    msg.timestamp = 0x0102030405060708
    payload = msg.encode()[8:]
    assert payload[0:4] == bytes.fromhex("3f800000")              # xyz[0] = 1.0
    assert payload[60:68] == bytes.fromhex("0102030405060708")    # timestamp after 15 floats


def test_joint_state_ends_with_battery_voltage():
    assert _fields("joint_state_t.lcm")[5:] == ["float battery_voltage"]
    msg = msgs.joint_state_t()
    msg.num_joints, msg.position, msg.velocity, msg.torque = 1, [0.0], [0.0], [0.0]
    msg.battery_voltage = 24.5
    encoded = msg.encode()
    assert encoded[-4:] == bytes.fromhex("41c40000")              # 24.5 as a big-endian float
    assert msgs.joint_state_t.decode(encoded).battery_voltage == 24.5


def test_motion_goal_and_event_fields():
    assert _fields("motion_goal_t.lcm") == [
        "int64_t utime", "int32_t goal_id", "int8_t kind", "float distance", "float angle",
        "float speed", "float rotation", "float timeout", "float max_acc", "float max_speed",
        "float max_rotation", "float x", "float y", "float yaw", "float x1", "float y1", "float x2",
        "float y2", "float voltage", "int8_t enable"]
    assert _fields("motion_event_t.lcm") == [
        "int64_t utime", "int32_t goal_id", "int8_t goal_kind", "int8_t kind", "int8_t reason",
        "float x", "float y", "float yaw", "float value", "string text"]
    assert len(msgs.motion_goal_t().encode()) == 8 + 8 + 4 + 1 + 16 * 4 + 1
