"""Unitree SDK2's DDS message types, as the Go2 and Unitree's simulator
speak them (`unitree_go::msg::dds_`, `unitree_api::msg::dds_`), written from
their published field lists for cyclonedds (docs/DEPENDENCIES.md): the type
names, fields, types and order must be the robot's for DDS to match them.

LowCmd_ is not built through these classes on the tick: unitree_go2.py packs
its bytes directly (LOWCMD_CDR) with the CRC over its C memory layout
(LOWCMD_C); the class is here for readers and tests.
"""

import struct
from dataclasses import dataclass, field

import cyclonedds.idl.annotations as annotate
import cyclonedds.idl.types as types
from cyclonedds.idl import IdlStruct

GO = "unitree_go.msg.dds_."
API = "unitree_api.msg.dds_."
NUM_MOTORS = 20          # slots in LowCmd_/LowState_; a Go2 uses the first 12

# LowCmd_ as the SDK lays it out in memory for its CRC (812 bytes: the
# header, 20 MotorCmd_ of 36 bytes, BmsCmd_, the tail; natural alignment),
# and as CDR carries it on the wire (the same fields, aligned from the
# message body's start: one pad byte before the first motor's floats).
LOWCMD_C = struct.Struct("<4B4IH2x" + "B3x5f3I" * NUM_MOTORS + "4B" + "55Bx2I")
LOWCMD_CDR = struct.Struct("<4B4IH" + "Bx5f3I" + "B3x5f3I" * (NUM_MOTORS - 1) + "4B" + "55Bx2I")
CDR_HEADER = b"\x00\x01\x00\x00"         # XCDR1, little-endian
CRC_WORDS = (LOWCMD_C.size - 4) // 4     # 202: every word but the crc itself


@dataclass
@annotate.final
@annotate.autoid("sequential")
class MotorCmd_(IdlStruct, typename=GO + "MotorCmd_"):
    mode: types.uint8 = 0
    q: types.float32 = 0.0
    dq: types.float32 = 0.0
    tau: types.float32 = 0.0
    kp: types.float32 = 0.0
    kd: types.float32 = 0.0
    reserve: types.array[types.uint32, 3] = field(default_factory=lambda: [0, 0, 0])


@dataclass
@annotate.final
@annotate.autoid("sequential")
class BmsCmd_(IdlStruct, typename=GO + "BmsCmd_"):
    off: types.uint8 = 0
    reserve: types.array[types.uint8, 3] = field(default_factory=lambda: [0, 0, 0])


@dataclass
@annotate.final
@annotate.autoid("sequential")
class LowCmd_(IdlStruct, typename=GO + "LowCmd_"):
    head: types.array[types.uint8, 2] = field(default_factory=lambda: [0, 0])
    level_flag: types.uint8 = 0
    frame_reserve: types.uint8 = 0
    sn: types.array[types.uint32, 2] = field(default_factory=lambda: [0, 0])
    version: types.array[types.uint32, 2] = field(default_factory=lambda: [0, 0])
    bandwidth: types.uint16 = 0
    motor_cmd: types.array[MotorCmd_, NUM_MOTORS] = field(
        default_factory=lambda: [MotorCmd_() for _ in range(NUM_MOTORS)])
    bms_cmd: BmsCmd_ = field(default_factory=BmsCmd_)
    wireless_remote: types.array[types.uint8, 40] = field(default_factory=lambda: [0] * 40)
    led: types.array[types.uint8, 12] = field(default_factory=lambda: [0] * 12)
    fan: types.array[types.uint8, 2] = field(default_factory=lambda: [0, 0])
    gpio: types.uint8 = 0
    reserve: types.uint32 = 0
    crc: types.uint32 = 0


@dataclass
@annotate.final
@annotate.autoid("sequential")
class IMUState_(IdlStruct, typename=GO + "IMUState_"):
    quaternion: types.array[types.float32, 4]        # w x y z
    gyroscope: types.array[types.float32, 3]         # rad/s, body frame
    accelerometer: types.array[types.float32, 3]     # m/s^2, body frame (specific force)
    rpy: types.array[types.float32, 3]
    temperature: types.uint8


@dataclass
@annotate.final
@annotate.autoid("sequential")
class MotorState_(IdlStruct, typename=GO + "MotorState_"):
    mode: types.uint8
    q: types.float32
    dq: types.float32
    ddq: types.float32
    tau_est: types.float32
    q_raw: types.float32
    dq_raw: types.float32
    ddq_raw: types.float32
    temperature: types.uint8
    lost: types.uint32
    reserve: types.array[types.uint32, 2]


@dataclass
@annotate.final
@annotate.autoid("sequential")
class BmsState_(IdlStruct, typename=GO + "BmsState_"):
    version_high: types.uint8
    version_low: types.uint8
    status: types.uint8
    soc: types.uint8
    current: types.int32
    cycle: types.uint16
    bq_ntc: types.array[types.uint8, 2]
    mcu_ntc: types.array[types.uint8, 2]
    cell_vol: types.array[types.uint16, 15]


@dataclass
@annotate.final
@annotate.autoid("sequential")
class LowState_(IdlStruct, typename=GO + "LowState_"):
    head: types.array[types.uint8, 2]
    level_flag: types.uint8
    frame_reserve: types.uint8
    sn: types.array[types.uint32, 2]
    version: types.array[types.uint32, 2]
    bandwidth: types.uint16
    imu_state: IMUState_
    motor_state: types.array[MotorState_, NUM_MOTORS]
    bms_state: BmsState_
    foot_force: types.array[types.int16, 4]
    foot_force_est: types.array[types.int16, 4]
    tick: types.uint32
    wireless_remote: types.array[types.uint8, 40]
    bit_flag: types.uint8
    adc_reel: types.float32
    temperature_ntc1: types.uint8
    temperature_ntc2: types.uint8
    power_v: types.float32
    power_a: types.float32
    fan_frequency: types.array[types.uint16, 4]
    reserve: types.uint32
    crc: types.uint32


@dataclass
@annotate.final
@annotate.autoid("sequential")
class TimeSpec_(IdlStruct, typename=GO + "TimeSpec_"):
    sec: types.int32
    nanosec: types.uint32


@dataclass
@annotate.final
@annotate.autoid("sequential")
class PathPoint_(IdlStruct, typename=GO + "PathPoint_"):
    t_from_start: types.float32
    x: types.float32
    y: types.float32
    yaw: types.float32
    vx: types.float32
    vy: types.float32
    vyaw: types.float32


@dataclass
@annotate.final
@annotate.autoid("sequential")
class SportModeState_(IdlStruct, typename=GO + "SportModeState_"):
    stamp: TimeSpec_
    error_code: types.uint32
    imu_state: IMUState_
    mode: types.uint8
    progress: types.float32
    gait_type: types.uint8
    foot_raise_height: types.float32
    position: types.array[types.float32, 3]
    body_height: types.float32
    velocity: types.array[types.float32, 3]
    yaw_speed: types.float32
    range_obstacle: types.array[types.float32, 4]
    foot_force: types.array[types.int16, 4]
    foot_position_body: types.array[types.float32, 12]
    foot_speed_body: types.array[types.float32, 12]
    path_point: types.array[PathPoint_, 10]


# The request/response pair of Unitree's services (here the motion switcher's,
# topics rt/api/motion_switcher/request and .../response).
@dataclass
@annotate.final
@annotate.autoid("sequential")
class RequestIdentity_(IdlStruct, typename=API + "RequestIdentity_"):
    id: types.int64
    api_id: types.int64


@dataclass
@annotate.final
@annotate.autoid("sequential")
class RequestLease_(IdlStruct, typename=API + "RequestLease_"):
    id: types.int64


@dataclass
@annotate.final
@annotate.autoid("sequential")
class RequestPolicy_(IdlStruct, typename=API + "RequestPolicy_"):
    priority: types.int32
    noreply: bool


@dataclass
@annotate.final
@annotate.autoid("sequential")
class RequestHeader_(IdlStruct, typename=API + "RequestHeader_"):
    identity: RequestIdentity_
    lease: RequestLease_
    policy: RequestPolicy_


@dataclass
@annotate.final
@annotate.autoid("sequential")
class Request_(IdlStruct, typename=API + "Request_"):
    header: RequestHeader_
    parameter: str
    binary: types.sequence[types.uint8]


@dataclass
@annotate.final
@annotate.autoid("sequential")
class ResponseStatus_(IdlStruct, typename=API + "ResponseStatus_"):
    code: types.int32


@dataclass
@annotate.final
@annotate.autoid("sequential")
class ResponseHeader_(IdlStruct, typename=API + "ResponseHeader_"):
    identity: RequestIdentity_
    status: ResponseStatus_


@dataclass
@annotate.final
@annotate.autoid("sequential")
class Response_(IdlStruct, typename=API + "Response_"):
    header: ResponseHeader_
    data: str
    binary: types.sequence[types.uint8]
