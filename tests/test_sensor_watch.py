"""Broken parts only the readings show (controller/core/sensor_watch.py),
each check at its bound on made-up readings, and each broken part injected
into the physics body (controller/sim/faults.py) found by the controller
from joint_state and imu alone."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from controller import msgs
from controller.core.fault_checks import FOUND_BITS, FOUND_ENCODER, FOUND_MOTOR, MOTOR_OFFLINE
from controller.core.fsm import EDAMP
from controller.core.sensor_watch import DEAD_SHARE, Finding, SensorWatch
from controller.protocol.goal_codes import EventKind
from controller.robot.config import ConfigError, SafetyConfig, load_config
from controller.robot.config.safety import SensorLimits
from controller.robot.resources import CONFIG_DIR
from controller.sim.faults import Fault
from controller.sim.trial import Trial

N = 3
NAMES = ["a", "b", "c"]
HZ = 500.0
Z = np.zeros(N)


def watch(**limits: Any) -> SensorWatch:
    return SensorWatch(SensorLimits(**limits), NAMES, np.full(N, 12.0), 1.0, HZ, v_max=30.0)


def held(w: SensorWatch, q: np.ndarray, pos: np.ndarray, tau: np.ndarray, ticks: int,
         kp: float = 20.0, qd: np.ndarray = Z, drift: float = 0.0) -> Finding | None:
    """`ticks` ticks of these readings (the angles moving by `drift` a tick)."""
    found = None
    for k in range(ticks):
        found = w.joints(q + drift * k, qd, tau, pos, Z, np.full(N, kp), Z, Z) or found
        if found:
            return found
    return found


def test_a_reading_that_moves_further_in_a_tick_than_the_bound_is_an_encoder_jump() -> None:
    w = watch(encoder_jump_rad=0.25)
    q = np.array([0.1, 0.2, 0.3])
    assert w.joints(q, Z, Z, q, Z, Z, Z, Z) is None
    assert w.joints(q + [0.0, 0.249, 0.0], Z, Z, q, Z, Z, Z, Z) is None
    found = w.joints(q + [0.0, 0.249 + 0.251, 0.0], Z, Z, q, Z, Z, Z, Z)
    assert found is not None and found.event == "encoder_jump" and found.joint == 1


def test_readings_some_ticks_apart_may_have_moved_at_the_speed_limit_between_them() -> None:
    """A bridge forwards each robot state once, and a late robot or simulator
    sends them unevenly: a reading 10 ticks after the last may show 9 ticks
    of motion at the joint's speed limit more than one tick's bound."""
    w = watch(encoder_jump_rad=0.25)              # v_max 30 rad/s: 0.06 rad a tick
    q = np.array([0.1, 0.2, 0.3])
    assert w.joints(q, Z, Z, q, Z, Z, Z, Z) is None
    allowed = 0.25 + 9 * 30.0 / HZ                 # 0.79 rad
    moved = q + [0.0, allowed - 0.01, 0.0]
    assert w.joints(moved, Z, Z, q, Z, Z, Z, Z, ticks=10) is None
    # One tick of the same motion is a jump, as is 10 ticks' past the allowance.
    w = watch(encoder_jump_rad=0.25)
    assert w.joints(q, Z, Z, q, Z, Z, Z, Z) is None
    found = w.joints(moved, Z, Z, q, Z, Z, Z, Z, ticks=1)
    assert found is not None and found.event == "encoder_jump" and "in one tick" in found.text
    w = watch(encoder_jump_rad=0.25)
    assert w.joints(q, Z, Z, q, Z, Z, Z, Z) is None
    found = w.joints(q + [0.0, allowed + 0.01, 0.0], Z, Z, q, Z, Z, Z, Z, ticks=10)
    assert found is not None and found.event == "encoder_jump" and found.joint == 1 and "in 10 ticks" in found.text


def test_a_frozen_encoder_is_judged_on_time_when_readings_come_some_ticks_apart() -> None:
    """Readings every 3 ticks (a 167 Hz state): 100 ms of repeats are 50
    ticks, so the 17th repeat (51 ticks) finds it, the 16th (48) not yet."""
    q = np.array([0.5, 0.5, 0.5])
    pos = q + [0.0, 0.0, 0.15]
    tau = np.array([0.0, 0.0, 3.0])
    w = watch()
    kp = np.full(N, 20.0)
    assert w.joints(q, Z, tau, pos, Z, kp, Z, Z) is None
    for _ in range(16):
        assert w.joints(q, Z, tau, pos, Z, kp, Z, Z, ticks=3) is None
    found = w.joints(q, Z, tau, pos, Z, kp, Z, Z, ticks=3)
    assert found is not None and found.event == "encoder_frozen" and found.joint == 2


def test_a_frozen_imu_is_judged_on_time_when_samples_come_some_ticks_apart() -> None:
    w = watch(imu_freeze_ms=50.0)                  # 25 ticks
    quat, gyro, accel = np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(3), np.array([0.0, 0.0, 9.81])
    q = np.zeros(N)
    assert w.imu(quat, gyro, accel, q) is None
    for k in range(1, 5):                          # 4 repeats 5 ticks apart: 20 ticks
        assert w.imu(quat, gyro, accel, q + 0.01 * k, ticks=5) is None
    found = w.imu(quat, gyro, accel, q + 0.05, ticks=5)
    assert found is not None and found.event == "imu_frozen"


def test_a_stiff_reading_repeating_to_the_bit_away_from_its_target_is_a_frozen_encoder() -> None:
    ticks = int(100.0 / 1000 * HZ)
    q = np.array([0.5, 0.5, 0.5])
    pos = q + [0.0, 0.0, 0.15]
    tau = np.array([0.0, 0.0, 3.0])            # the law's 20 x 0.15: a healthy motor
    assert held(watch(), q, pos, tau, ticks) is None          # ticks - 1 repeats: not yet
    found = held(watch(), q, pos, tau, ticks + 1)
    assert found is not None and found.event == "encoder_frozen" and found.joint == 2
    assert held(watch(), q, q + 0.05, tau * 0.05 / 0.15, 3 * ticks) is None   # near its target: a still joint
    assert held(watch(), q, pos, tau, 3 * ticks, kp=0.5) is None                 # limp: not checked


def test_a_motor_giving_under_the_share_of_what_its_law_asks_over_the_window_is_weak() -> None:
    ticks = int(60.0 / 1000 * HZ)
    q = np.zeros(N)
    pos = np.array([0.0, 0.25, 0.0])           # the law asks 20 x 0.25 = 5 N m of b
    for share, weak in [(0.61, False), (0.59, True)]:
        tau = np.array([0.0, 5.0 * share, 0.0])
        w = watch()
        found = None
        for k in range(ticks + 5):
            found = w.joints(q + 1e-6 * k, Z, tau, pos, Z, np.full(N, 20.0), Z, Z)
            if found:
                break
        assert (found is not None and found.event == "motor_weak" and found.joint == 1) == weak, share
    # Fast, a real motor may give less: not counted, unless it gives nothing.
    fast = np.array([0.0, 20.0, 0.0])
    assert held(watch(), q, pos, np.array([0.0, 2.0, 0.0]), 3 * ticks, qd=fast, drift=1e-6) is None
    found = held(watch(), q, pos, np.array([0.0, 5.0 * DEAD_SHARE * 0.9, 0.0]), ticks + 1, qd=fast, drift=1e-6)
    assert found is not None and found.event == "motor_weak"


def test_an_imu_repeating_itself_while_the_joints_move_is_frozen_and_standing_still_is_not() -> None:
    ticks = int(50.0 / 1000 * HZ)
    quat, gyro, accel = np.array([1.0, 0, 0, 0]), np.zeros(3), np.array([0, 0, 9.81])
    w = watch()
    for _ in range(3 * ticks):
        assert w.imu(quat, gyro, accel, np.zeros(N)) is None    # a robot lying perfectly still
    w = watch()
    found = None
    for k in range(ticks + 2):
        found = w.imu(quat, gyro, accel, np.full(N, 0.001 * k)) or found
    assert found is not None and found.event == "imu_frozen"


def test_the_battery_under_its_critical_voltage_for_its_time_is_found() -> None:
    ticks = int(500.0 / 1000 * HZ)
    w = watch(battery_critical_v=19.8)
    assert all(w.battery(19.7) is None for _ in range(ticks - 1))
    assert w.battery(19.7) is not None
    assert all(watch().battery(5.0) is None for _ in range(2 * ticks))    # 0 V: not checked


def test_the_default_checks_do_not_fire_on_the_sims_own_trot_and_stand() -> None:
    """The bounds against the body's normal life (the full scorecard runs
    them on every shipped row): a stand, a trot, a fast trot, a turn."""
    cfg = load_config(CONFIG_DIR / "cyberdog2.yaml")
    t = Trial(cfg)
    t.send(12)
    t.run(3)
    for vx, wz in [(0.5, 0.0), (1.2, 0.0), (0.3, 1.5)]:
        t.send(11, gait_id=3, vel_des=[vx, 0, wz], step_height=[0.06, 0.06])
        t.run(3)
    assert t.ctl.last_reported[2] != EDAMP, t.ctl.counters.last_error


@pytest.mark.parametrize("spec, event, trotting", [
    ({"kind": "motor_dead", "joint": "FR_knee"}, "motor_weak", True),
    ({"kind": "encoder_jump", "joint": "FR_hip", "rad": 0.3}, "encoder", True),
    ({"kind": "encoder_freeze", "joint": "FR_knee"}, "encoder", True),
    ({"kind": "imu_freeze"}, "imu", True),
    # The gyro check sees a roll bias on three loaded feet (a stand), the yaw
    # on a trot's diagonals too.
    ({"kind": "gyro_bias", "axis": 0, "rad_s": 0.2}, "gyro", False),
    ({"kind": "gyro_bias", "axis": 2, "rad_s": 0.2}, "gyro", True),
])
def test_a_broken_part_in_physics_is_found_from_the_readings_and_damped(spec: dict[str, Any], event: str,
                                                                     trotting: bool) -> None:
    """Found, damped and reported: last_error, a FAULT motion_event naming
    the part, and for one joint motiond's bit in its motor_error (response
    and status), which a new command clears."""
    cfg = load_config(CONFIG_DIR / "cyberdog2.yaml")
    seen: list[tuple[str, bytes]] = []
    t = Trial(cfg, recorder=lambda port, utime, channel, data: seen.append((channel, data)))
    t.send(12)
    t.run(3)
    if trotting:
        t.send(11, gait_id=3, vel_des=[0.5, 0, 0], step_height=[0.06, 0.06])
        t.run(2.3)
    t.robot.inject(Fault.from_spec(spec, list(cfg.joint_names), list(cfg.legs), "test"))
    ticks = 0
    while ticks < 1000 and t.ctl.last_reported[2] != EDAMP:
        t.tick()
        ticks += 1
    print(f"{spec['kind']}: found after {ticks} ticks: {t.ctl.counters.last_error}")
    assert t.ctl.last_reported[2] == EDAMP
    assert event in t.ctl.counters.last_error or event.replace("_", " ") in t.ctl.counters.last_error \
        or spec.get("joint", "imu") in t.ctl.counters.last_error
    for _ in range(60):          # the status goes out at 10 Hz
        t.tick()
    events = [msgs.motion_event_t.decode(d) for c, d in seen if c == t.ch["motion_event"]]
    faults = [e for e in events if e.kind == EventKind.FAULT]
    assert len(faults) == 1, [(e.kind, e.text) for e in events]
    assert event in faults[0].text and "damping (EDAMP)" in faults[0].text
    status = [msgs.controller_status_t.decode(d) for c, d in seen if c == t.ch["status"]][-1]
    response = [msgs.robot_control_response_lcmt.decode(d) for c, d in seen if c == t.ch["response"]][-1]
    wire = np.asarray(cfg.joint_names)[t.ctl.joint_map.order]
    marked = {str(wire[i]) for i, flags in enumerate(status.motor_error) if flags & ~MOTOR_OFFLINE}
    if "joint" in spec:
        bit = FOUND_ENCODER if event == "encoder" else FOUND_MOTOR
        assert faults[0].value == cfg.joint_names.index(spec["joint"])
        assert marked == {spec["joint"]}
        assert status.motor_error[list(wire).index(spec["joint"])] & bit
        assert response.motor_error[list(wire[cfg.leg_indices]).index(spec["joint"])] & bit
        t.send(12)
        t.tick()
        assert not (np.asarray(t.ctl.response.motor_error) & FOUND_BITS).any()
    else:
        assert faults[0].value == -1 and not marked


def test_safety_config_carries_the_limits() -> None:
    assert SafetyConfig().sensors == SensorLimits()
    assert load_config(CONFIG_DIR / "cyberdog2.yaml").safety.sensors.battery_critical_v == 19.8


def test_a_motor_giving_what_its_envelope_allows_at_speed_is_not_weak() -> None:
    """Go2's knee gives its full torque only at rest, none at 15.7 rad/s:
    at 8 rad/s it can drive with 22.3 of its 45.4 N m. A law asking for all
    45 N m then gets 49 %: weak by the bare check, not once the watch knows
    the envelope (motor_knee_speed 0, motor_no_load_speed 15.7). A knee
    that gives half of what the envelope allows is weak either way; braking
    (the torque against the motion) has the full torque."""
    ticks = int(60.0 / 1000 * HZ)
    limit = np.full(N, 45.43)
    q, pos = np.zeros(N), np.array([0.0, 0.0, 2.25])        # kp 20 x 2.25: 45 N m asked of c
    qd = np.array([0.0, 0.0, 8.0])
    at_speed = 45.43 * (15.7 - 8.0) / 15.7

    def run(envelope: bool, tau_c: float, speed: np.ndarray = qd) -> Finding | None:
        limits = SensorLimits(motor_knee_speed=(0.0,), motor_no_load_speed=(15.7,)) if envelope else SensorLimits()
        w = SensorWatch(limits, NAMES, limit, 1.0, HZ, v_max=30.0)
        found = None
        for k in range(ticks + 5):
            found = w.joints(q + 1e-6 * k, speed, np.array([0.0, 0.0, tau_c]), pos, Z, np.full(N, 20.0), Z, Z)
            if found:
                return found
        return found

    bare = run(False, at_speed)
    assert bare is not None and bare.event == "motor_weak" and bare.joint == 2
    assert run(True, at_speed) is None
    half = run(True, 0.5 * at_speed)
    assert half is not None and half.event == "motor_weak" and half.joint == 2
    braking = run(True, at_speed, speed=-qd)      # the law pushes +, the knee turns -: full torque
    assert braking is not None and braking.event == "motor_weak"


@pytest.mark.parametrize(("safety", "message"), [
    ({"motor_knee_speed": 0.0}, "safety.motor_knee_speed: give both motor_knee_speed and motor_no_load_speed"),
    ({"motor_knee_speed": 20.0, "motor_no_load_speed": 15.0},
     "safety.motor_knee_speed: each must be 0 or more and under its motor_no_load_speed"),
    ({"motor_knee_speed": [0.0, 0.0], "motor_no_load_speed": [30.0, 30.0]},
     "safety.motor_knee_speed: expected one number or 3 (one per leg joint), not 2"),
    ({"motor_knee_speed": [0.0, 0.0, 0.0], "motor_no_load_speed": [30.0, 30.0]},
     "safety.motor_no_load_speed: 2 speeds against 3 knee speeds"),
    ({"motor_knee_speed": [0.0, 0.0, 16.0], "motor_no_load_speed": [30.0, 30.0, 15.7]},
     "safety.motor_knee_speed: each must be 0 or more and under its motor_no_load_speed"),
    ({"motor_knee_speed": 0.0, "motor_no_load_speed": "fast"},
     "safety.motor_no_load_speed: expected a number or a list of numbers (rad/s), got 'fast'"),
])
def test_a_motor_envelope_that_cannot_be_is_refused(monkeypatch: pytest.MonkeyPatch, safety: dict[str, Any],
                                                    message: str) -> None:
    """go2.yaml's data with these safety keys, read as if it were the file
    (its relative paths resolve beside the shipped configs; nothing is written)."""
    import yaml

    from controller.robot.config import loader
    data = yaml.safe_load((CONFIG_DIR / "go2.yaml").read_text())
    data["safety"] = {k: v for k, v in data["safety"].items() if not k.startswith("motor_")}
    data["safety"].update(safety)
    path = CONFIG_DIR / "go2.yaml"
    original = loader.load_config_data
    monkeypatch.setattr(loader, "load_config_data", lambda p: data if p == path else original(p))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert message in str(err.value), str(err.value)


def test_the_shipped_envelopes_are_the_physics_bodys() -> None:
    """What the configs tell the watch is what the physics body's real
    motors do (physics/*.yaml `motor`, controller/sim/actuators.py)."""
    from controller.robot.mass_properties import load_figures
    from controller.sim.actuators import MotorFigures
    from controller.sim.model import physics_path
    for name in ("go2.yaml", "cyberdog2.yaml"):
        cfg = load_config(CONFIG_DIR / name)
        path = physics_path(cfg)
        f = MotorFigures.load(cfg, load_figures(path)["motor"], {}, path)
        w = SensorWatch(cfg.safety.sensors, cfg.joint_names, cfg.torque_limit, 1.0, cfg.tick_hz, len(cfg.legs),
                        v_max=cfg.v_max)
        assert w.knee is not None and w.no_load is not None
        np.testing.assert_allclose(w.knee, f.knee_speed, atol=0.05)
        np.testing.assert_allclose(w.no_load, f.no_load_speed, atol=0.05)


def test_a_motor_acting_on_the_command_before_the_last_is_not_weak() -> None:
    """A driver runs its law on a command a bus delay after it was sent. The
    target climbs 0.05 rad a tick with the joint 0.1 rad behind it: this
    command's law asks 100 x 0.1 = 10 N m, the one before's 100 x 0.05 = 5 N m.
    A motor giving the late law in full (half of this command's) is healthy;
    one giving half of it is weak."""
    ticks = int(60.0 / 1000 * HZ)
    kp = np.full(N, 100.0)

    def run(share: float) -> Finding | None:
        w = watch()
        found = None
        for k in range(ticks + 5):
            target = np.array([0.0, 0.0, 0.05 * k])
            q = target - [0.0, 0.0, 0.1]
            late = target - [0.0, 0.0, 0.05]
            found = w.joints(q, Z, share * kp * (late - q), target, Z, kp, Z, Z)
            if found:
                return found
        return found

    assert run(1.0) is None
    weak = run(0.5)
    assert weak is not None and weak.event == "motor_weak" and weak.joint == 2
