"""The CyberDog 2 keyframe scripts (config/scripts/cyberdog2): the scripted
mode 64 (two-leg stand) of SPEC §6.6 (the jumps of mode 16 are optimised
trajectories, tests/test_trajectory.py; the force jump 22 is force control,
tests/test_scripted_modes.py).

Every file loads and validates from the stand pose, the modes end exactly at
the stand pose, the totals fit the SPEC §9 minimum durations, and every script
plays on the C kernel without a clamp, hitting each frame's targets at its
end tick."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from controller.behaviours.base import make_robot
from controller.motion.scripts import (
    PEAK_OVER_MEAN,
    Script,
    ScriptPlayer,
    chain,
    load_script,
    validate,
)
from controller.robot.config import load_config
from controller.robot.native import Kernel

ROOT = Path(__file__).resolve().parent.parent
SCRIPT_DIR = ROOT / "config" / "scripts" / "cyberdog2"
CFG = load_config(ROOT / "config" / "cyberdog2.yaml")
STAND = make_robot(CFG, Kernel(CFG.q_min, CFG.q_max, CFG.v_max)).stand_pose()
NAMES = CFG.joint_names
INDEX = {n: i for i, n in enumerate(NAMES)}

TWO_LEG = ("TwoLegKneel", "TwoLegRear", "TwoLegGreet", "TwoLegLand")
EXPECTED = set(TWO_LEG)
# Scripts after which the robot must be standing (the next mode starts there);
# the first three two-leg stages hand over to the next stage instead.
ENDS_AT_STAND = ("TwoLegLand",)

LEGS = ("FR", "FL", "RR", "RL")
PAIRS = [(f"{right}_{j}", f"{left}_{j}") for right, left in (("FR", "FL"), ("RR", "RL"))
         for j in ("abad", "hip", "knee")]
NEGATE = {f"{leg}_abad" for leg in LEGS}
SPEED_MARGIN = 20.0      # rad/s, well under the 30 rad/s joint limit


def load(name: str) -> Script:
    return load_script(SCRIPT_DIR / f"{name}.yaml", CFG, start=STAND)


def two_leg_chain() -> Script:
    return chain([load(n) for n in TWO_LEG])


def final_targets(script: Script) -> dict[str, float]:
    """Each joint's last target, for the joints the script names."""
    last: dict[str, float] = {}
    for frame in script.frames:
        last.update({n: t.position for n, t in frame.targets.items()})
    return last


def peak_speeds(script: Script, start: np.ndarray) -> list[float]:
    """Per frame, the fastest joint's peak speed (rad/s), as validation computes it."""
    last = dict(zip(NAMES, start.tolist()))
    peaks = []
    for k, frame in enumerate(script.frames):
        seconds = frame.duration_ticks / script.tick_hz
        factor = PEAK_OVER_MEAN[script.frame_profile(k)]
        peaks.append(max((factor * abs(t.position - last[n]) / seconds
                          for n, t in frame.targets.items()), default=0.0))
        last.update({n: t.position for n, t in frame.targets.items()})
    return peaks


# -- the files --------------------------------------------------------------------------

def test_the_directory_holds_exactly_the_scripted_modes():
    assert {p.stem for p in SCRIPT_DIR.glob("*.yaml")} == EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_script_loads_and_validates_from_the_stand_pose(name):
    script = load(name)
    assert script.tick_hz == CFG.tick_hz
    validate(script, CFG, start=STAND)
    for frame in script.frames:
        for t in frame.targets.values():
            assert t.torque == 100
            assert 10 <= t.gain <= 40     # kp 20-80: CyberDog pose gains, stiffer for pushes
    assert max(peak_speeds(script, STAND)) <= SPEED_MARGIN


@pytest.mark.parametrize("name", ENDS_AT_STAND)
def test_each_mode_ends_exactly_at_the_stand_pose(name):
    last = final_targets(load(name))
    assert set(last) == set(NAMES)
    for n in NAMES:
        assert last[n] == pytest.approx(STAND[INDEX[n]], abs=1e-3), n


def test_every_script_ends_on_the_same_stand_numbers():
    finals = {name: final_targets(load(name)) for name in ENDS_AT_STAND}
    first = next(iter(finals.values()))
    assert all(f == first for f in finals.values())


def test_the_two_leg_stand_chains_from_stand_to_stand():
    script = two_leg_chain()
    validate(script, CFG, start=STAND)
    assert 8000 <= script.duration_ms <= 8700
    last = final_targets(script)
    assert set(last) == set(NAMES)
    assert np.allclose([last[n] for n in NAMES], STAND, atol=1e-3)
    # Every junction between stages is checked against the previous stage's end.
    assert max(peak_speeds(script, STAND)) <= SPEED_MARGIN


def test_the_two_leg_stages_have_their_timings():
    ms = {n: load(n).duration_ms for n in TWO_LEG}
    assert ms["TwoLegKneel"] == 1000      # SPEC §6.6: kneel 1 s
    assert ms["TwoLegRear"] == 600        # rear up 0.6 s
    assert 4500 <= ms["TwoLegGreet"] <= 5500
    assert 1500 <= ms["TwoLegLand"] <= 2500


def test_the_rear_up_lifts_the_front_legs_forward():
    last = final_targets(load("TwoLegRear"))
    for leg in ("FR", "FL"):
        # Swung forward past vertical and extended, inside the limits.
        assert last[f"{leg}_hip"] > 1.0
        assert last[f"{leg}_knee"] < 1.0
    for leg in ("RR", "RL"):
        assert last[f"{leg}_knee"] > STAND[INDEX[f"{leg}_knee"]] + 0.3   # crouched


# -- playing on the C kernel ------------------------------------------------------------------

def play(script: Script) -> None:
    kernel = Kernel(CFG.q_min, CFG.q_max, CFG.v_max, step_max=CFG.v_max * CFG.dt)
    kernel.hold(STAND)
    kernel.pos[:] = STAND
    player = ScriptPlayer.for_config(kernel, CFG)
    player.start(script, 0, kernel.pos.copy())
    ends = {int(e): k for k, e in enumerate(np.cumsum([f.duration_ticks
                                                       for f in script.frames]))}
    target = STAND.copy()
    tick, progress = 0, 0
    while progress < 100:
        assert tick <= script.total_ticks, "the player never reached progress 100"
        progress = player.step(tick).progress
        assert kernel.step(tick * CFG.dt) == 0, f"tick {tick}: a limit clamped the output"
        assert np.all(kernel.pos >= CFG.q_min) and np.all(kernel.pos <= CFG.q_max), f"tick {tick}"
        assert np.all(np.abs(kernel.vel) <= SPEED_MARGIN + 1e-9), f"tick {tick}"
        if tick in ends:
            frame = script.frames[ends[tick]]
            for n, t in frame.targets.items():
                target[INDEX[n]] = t.position
            assert np.allclose(kernel.pos, target, rtol=0.0, atol=1e-9), \
                f"frame {ends[tick] + 1} of {script.name} ended off target"
        tick += 1
    assert tick - 1 == script.total_ticks
    assert player.done


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_script_plays_on_the_kernel_without_a_clamp(name):
    play(load(name))


def test_the_chained_two_leg_stand_plays_on_the_kernel_without_a_clamp():
    play(two_leg_chain())
