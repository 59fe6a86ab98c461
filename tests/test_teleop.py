"""`motionctl teleop` (controller/cli/teleop.py) on the fake controller of
test_motionctl, driven by a key script: no LCM, no terminal."""
from __future__ import annotations

import io

import pytest
from test_motionctl import NAMES, FakeClock, FakeController, make_link

from controller.cli.teleop import STEP_V, Limits, Teleop


def drive(script: list[tuple[float, str]], limits: Limits | None = None) -> tuple[FakeController, Teleop, str]:
    """Press each key at its time (s), polling every 10 ms between."""
    clock = FakeClock()
    ctl = FakeController(clock, last_life_count=20)
    out = io.StringIO()
    teleop = Teleop(make_link(ctl), NAMES, out, limits or Limits())
    for at, key in script:
        while clock.now < at:
            teleop.poll()
            clock.sleep(0.01)
        if not teleop.key(key):
            break
    for _ in range(50):
        teleop.poll()
        clock.sleep(0.01)
    return ctl, teleop, out.getvalue()


def test_keys_stand_trot_steer_stop_and_lie_down_each_a_new_command() -> None:
    ctl, _, out = drive([(0.5, "1"), (2.0, "w"), (2.2, "w"), (2.4, "q"), (3.0, " "), (3.5, "l")])
    sent = [(c.mode, c.gait_id, round(c.vel_des[0], 3), round(c.vel_des[2], 3), c.life_count)
            for _, c in ctl.accepted]
    assert sent == [(12, 0, 0.0, 0.0, 21), (11, 3, 0.1, 0.0, 22), (11, 3, 0.2, 0.0, 23),
                    (11, 3, 0.2, 0.2, 24), (11, 3, 0.0, 0.0, 25), (7, 1, 0.0, 0.0, 26)]
    assert all(c.step_height[0] == pytest.approx(0.05) for _, c in ctl.accepted if c.mode == 11)
    # The heartbeat between keys: the stand repeated every 100 ms for 1.5 s.
    stand = [t for t, c in ctl.published if c.life_count == 21]
    assert len(stand) == 15 and max(b - a for a, b in zip(stand, stand[1:])) <= 0.11
    assert "asked: LOCOMOTION gait 3 vx +0.20 vy +0.00 wz +0.20" in out
    assert "robot: RECOVERY_STAND (12) gait 0" in out


def test_speeds_stay_within_the_limits_and_quitting_lies_down() -> None:
    ctl, teleop, _ = drive([(0.1, "w")] * 12 + [(0.2, "d")] * 5 + [(0.3, "e")] * 9 + [(0.4, "x"), (0.5, "w")],
                           Limits(vx=0.5, vy=0.2, wz=0.8))
    moving = [c for _, c in ctl.accepted if c.mode == 11]
    assert max(c.vel_des[0] for c in moving) == 0.5 and 12 * STEP_V > 0.5
    assert min(c.vel_des[1] for c in moving) == pytest.approx(-0.2)
    assert min(c.vel_des[2] for c in moving) == pytest.approx(-0.8)
    last = ctl.accepted[-1][1]
    assert (last.mode, last.gait_id) == (7, 1)          # x: lie down, and nothing after it
    assert teleop.mode == 7


def test_a_speed_key_on_a_standing_robot_starts_the_trot_and_3_the_walk() -> None:
    ctl, _, _ = drive([(0.2, "1"), (1.0, "a"), (1.5, "3"), (2.0, "e")])
    assert [(c.mode, c.gait_id) for _, c in ctl.accepted] == [(12, 0), (11, 3), (11, 6), (11, 6)]
    assert round(ctl.accepted[-1][1].vel_des[1], 3) == 0.1 and round(ctl.accepted[-1][1].vel_des[2], 3) == -0.2


def test_a_scripted_gamepad_drives_with_its_sticks_and_buttons() -> None:
    """Events as the kernel's evdev interface gives them (type, code, value),
    through the pad's mapping into teleop: A stands, the left stick up walks
    forward at its share of the limit, the right stick to the right turns
    right, sticks at rest stop, B lies down; a stick inside the dead zone
    sends nothing."""
    from controller.cli.gamepad import ABS_RX, ABS_Y, BTN_EAST, BTN_SOUTH, EV_ABS, EV_KEY, Pad

    clock = FakeClock()
    ctl = FakeController(clock, last_life_count=20)
    teleop = Teleop(make_link(ctl), NAMES, io.StringIO(), Limits(vx=0.5, vy=0.3, wz=1.0))
    pad = Pad()
    script = [(0.2, (EV_KEY, BTN_SOUTH, 1)), (0.3, (EV_KEY, BTN_SOUTH, 0)),
              (1.0, (EV_ABS, ABS_Y, -32768)),            # left stick fully up: forward
              (1.5, (EV_ABS, ABS_RX, 16384)),            # right stick half right: turn right
              (2.0, (EV_ABS, ABS_RX, 2000)),             # back into the dead zone
              (2.5, (EV_ABS, ABS_Y, 1000)),              # both at rest (within the dead zone)
              (3.0, (EV_KEY, BTN_EAST, 1))]
    for at, event in script:
        while clock.now < at:
            teleop.poll()
            clock.sleep(0.01)
        key, moved = pad.event(*event)
        if key is not None:
            teleop.key(key)
        if moved:
            teleop.sticks(*pad.speeds())
    for _ in range(20):
        teleop.poll()
        clock.sleep(0.01)
    sent = [(c.mode, c.gait_id, round(c.vel_des[0], 3), round(c.vel_des[2], 3)) for _, c in ctl.accepted]
    # Half right: 0.5 of the travel, 0.43 of it past the 0.12 dead zone, in 0.05 steps: 0.45 of 1 rad/s.
    assert sent[:3] == [(12, 0, 0.0, 0.0), (11, 3, 0.5, 0.0), (11, 3, 0.5, -0.45)]
    assert sent[3:] == [(11, 3, 0.5, 0.0), (11, 3, 0.0, 0.0), (7, 1, 0.0, 0.0)]


def test_teleop_gamepad_without_a_gamepad_says_so() -> None:
    import subprocess
    import sys
    from pathlib import Path
    done = subprocess.run([sys.executable, "-m", "controller.cli.motionctl", "teleop", "--gamepad"],
                          cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True,
                          timeout=60, input="")
    assert done.returncode == 1
    assert "evdev" in done.stderr or "no gamepad found" in done.stderr, done.stderr
