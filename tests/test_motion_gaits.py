"""The motion gaits of mode 11 (gait ids >= 50, SPEC §12.A): their timetables
against the SPEC's figures, their counters and per-gait rules on the gait
generator, and the controller running them instead of refusing them."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import Rig

from controller.behaviours.locomotion import Locomotion, load_motion_gaits
from controller.motion.gait import GaitCommand, GaitGenerator
from controller.motion.gait_table import GaitError, load_gaits
from controller.motion.motion_gaits import RULES, MotionGaitShaper
from controller.robot.config import Geometry, LocomotionConfig, load_config
from controller.robot.kinematics import QuadrupedKinematics
from controller.sim.trial import Trial

CFG = load_config()
_loco = CFG.locomotion
assert _loco is not None and isinstance(CFG.geometry, Geometry)
LOCO: LocomotionConfig = _loco
KIN = QuadrupedKinematics(CFG.geometry)
BASE = load_gaits(LOCO.gaits_dir, 4)
MOTION = load_motion_gaits(LOCO.gaits_dir, 4, BASE)
GAITS = {**BASE, **MOTION}
FR, FL, RR, RL = range(4)
SEG = 15                 # ticks per 30 ms segment


def swings(gait_id: int) -> list[str]:
    """Per segment, the legs in the air, e.g. 'FR RL'."""
    names = ("FR", "FL", "RR", "RL")
    return [" ".join(n for n, c in zip(names, row) if not c) for row in GAITS[gait_id].contact]


def test_every_motion_gait_the_robot_files_use_has_a_timetable() -> None:
    # SPEC §12.A.4: the ids of the preinstalled locomotion steps (72, 73 unused but defined).
    used = {50, 51, 52, 53, 55, 56, 57, 58, 59, 60, 61, 62, 63, 65, 66, 67, 68, 69, 70, 71, 74, 75}
    assert used | {72, 73} == set(MOTION)


def test_timetables_match_the_spec() -> None:
    # 60 walk wave: one leg at a time, 9 segments each, RR, FR, RL, FL.
    wave = swings(60)
    assert len(wave) == 36
    assert wave[0:9] == ["RR"] * 9 and wave[9:18] == ["FR"] * 9
    assert wave[18:27] == ["RL"] * 9 and wave[27:36] == ["FL"] * 9
    # 58 moonwalk: FR, RL a 16-segment period with 6 down; FL, RR 8 with 6 down.
    table = GAITS[58].contact
    assert table.shape == (16, 4)
    assert list(table[:, FR]) == [True] * 6 + [False] * 10
    assert list(table[:, FL]) == ([True] * 6 + [False] * 2) * 2
    assert (table[:, FR] == table[:, RL]).all() and (table[:, FL] == table[:, RR]).all()
    # 63 front-lift switch: both fronts airborne in segments 12-13 and 26-27 only.
    both = [s for s, row in enumerate(GAITS[63].contact) if not row[FR] and not row[FL]]
    assert both == [12, 13, 26, 27] and GAITS[63].contact[:, [RR, RL]].all()
    # 50 special pronk: all four together, 6 of 10 down; window zero.
    assert (GAITS[50].contact == GAITS[50].contact[:, :1]).all() and GAITS[50].duty()[0] == 0.6
    assert not GAITS[50].window_max.any() and not GAITS[50].window_min.any()
    # The default window of the others: +-[1.5, 0.3, 1.0].
    np.testing.assert_allclose(GAITS[68].window_max, [1.5, 0.3, 1.0])


def test_a_motion_gait_id_already_taken_is_refused(tmp_path: Path) -> None:
    (tmp_path / "motion").mkdir()
    (tmp_path / "motion" / "x.yaml").write_text("id: 81\nperiod: 10\nstance: 5\n"
                                                "window: {min: [0, 0, 0], max: [0, 0, 0]}\n")
    with pytest.raises(GaitError, match="not a free motion-gait id"):
        load_motion_gaits(tmp_path, 4, {})


def run_gait(gait_id: int, ticks: int, v: tuple[float, float, float] = (0.0, 0.0, 0.0),
             ) -> tuple[GaitGenerator, MotionGaitShaper, list]:
    """The generator and the shaper as mode 11 runs them; per tick the swing
    apexes, the landing offsets and the body pitch."""
    gen = GaitGenerator(KIN, LOCO, CFG.dt, GAITS)
    q = KIN.inverse(KIN.stance_feet(CFG.stand_height, CFG.stand_com_x))[0]
    gen.start(q, GAITS[1])
    shaper = MotionGaitShaper(CFG.dt)
    shaper.reset(0.0, gen.height)
    base = GaitCommand(GAITS[gait_id], np.asarray(v, dtype=float), 0.06, 0.0)
    seen = []
    for _ in range(ticks):
        cmd = shaper.command(base) if gen.gait is not None and gen.gait.id >= 50 else base
        gen.step(cmd)
        if gen.gait is not None and gen.gait.id >= 50:
            shaper.after_step(gen)
        seen.append((gen.swinging.copy(), gen.swing_apex.copy(), shaper.shape.offsets.copy(),
                     gen.pitch, gen.height))
    return gen, shaper, seen


def apexes_at_lift(seen: list, leg: int) -> list[float]:
    out = []
    for (before, *_), (now, apex, *_) in zip(seen, seen[1:]):
        if now[leg] and not before[leg]:
            out.append(round(float(apex[leg]), 4))
    return out


def test_special_pronk_alternates_high_and_low_diagonals() -> None:
    gen, shaper, seen = run_gait(50, 6 * 10 * SEG)
    fr, fl = apexes_at_lift(seen, FR), apexes_at_lift(seen, FL)
    assert len(fr) >= 5
    # Each jump one diagonal lifts 3.5 cm and the other 1 cm, and they swap.
    assert all({a, b} == {0.035, 0.01} for a, b in zip(fr, fl))
    assert all(a != b for a, b in zip(fr, fr[1:]))
    assert apexes_at_lift(seen, RL) == fr and apexes_at_lift(seen, RR) == fl
    assert gen.height > LOCO.height_range[0]


def test_pitch_down_left_nods_with_the_left_front_foot() -> None:
    # 70: pitch +0.12 (nose down) while FL's swing count is odd, -0.12 while even.
    gen, shaper, seen = run_gait(70, 8 * 18 * SEG)
    pitches = np.array([s[3] for s in seen])
    assert pitches.max() > 0.08 and pitches.min() < -0.08
    offsets = np.array([s[2][FL, 0] for s in seen])
    assert set(np.round(offsets, 3)) == {0.0, 0.06}     # FL reaches 6 cm forward on odd steps
    assert shaper.counters.leg_steps[FL] >= 7 and shaper.counters.leg_steps[FR] == 0


def test_ballet_lands_the_feet_forward_and_in() -> None:
    _, _, seen = run_gait(68, 300)
    offsets = seen[-1][2]
    np.testing.assert_allclose(offsets[FR], [0.06, 0.10])    # right feet forward, toward the centre
    np.testing.assert_allclose(offsets[FL], [-0.06, -0.10])  # left feet back, toward the centre
    assert seen[-1][1][FR] == pytest.approx(0.01)


def test_every_rule_gives_finite_bounded_shapes() -> None:
    for gait_id in RULES:
        _, _, seen = run_gait(gait_id, 3 * GAITS[gait_id].segments * SEG)
        for _, apex, offsets, pitch, _height in seen:
            assert np.all(np.isfinite(offsets)) and np.abs(offsets).max() <= 0.1 + 1e-9
            assert np.all((apex >= 0) & (apex <= 0.06)) and abs(pitch) <= 0.2 + 1e-9


@pytest.mark.parametrize("gait_id, reported", [(68, 68), (60, 60), (54, 54), (101, 101)])
def test_the_controller_runs_motion_gaits_instead_of_refusing(gait_id: int, reported: int) -> None:
    rig = Rig(sim="joint")
    rig.stand()
    rig.send(11, gait_id, duration=0)
    rig.run(1500)
    assert rig.last.mode == 11 and rig.last.switch_status != 5
    assert rig.last.gait_id == reported
    loco = rig.ctl.fsm.behaviours[11]
    assert isinstance(loco, Locomotion)
    if gait_id in (54, 101):        # no case of its own: trot in-out's timing, no offsets
        assert loco.gen.gait is not None and (loco.gen.gait.contact == GAITS[56].contact).all()
        assert not loco.shaper.shape.offsets.any()


def test_trot_pitch_at_zero_command_stays_where_it_stood_on_ground_truth() -> None:
    """Gait 57 asks for no travel: its feet land 5 cm fore and aft and the
    body nods. With the motion gaits' position hold (balance.position_gain)
    the body ends within 6 cm of where it stood after 4 s, judged on the
    simulator's truth; without it it crept back 10 cm (docs/LOCOMOTION.md)."""
    trial = Trial(load_config())
    trial.send(12)
    trial.run(3.0)
    start = trial.robot.truth().position.copy()
    trial.send(11, 57)
    trial.run(4.0)
    assert trial.trace.mode[-1] == 11 and trial.trace.switch_status[-1] != 5
    drift = trial.robot.truth().position[:2] - start[:2]
    assert np.hypot(*drift) < 0.06, drift


def test_a_user_gait_height_is_clamped_to_its_own_range_not_the_walks() -> None:
    # The push-up's plank (user gait 100, SPEC §8.4): 0.105 m, below the walk's
    # height_range; config's user_gait_height_range lets it through.
    gen = GaitGenerator(KIN, LOCO, CFG.dt, GAITS)
    gen.start(KIN.inverse(KIN.stance_feet(CFG.stand_height, CFG.stand_com_x))[0], GAITS[1])
    plank = GaitCommand(GAITS[1], np.zeros(3), 0.0, 0.0, height=0.105)
    for _ in range(1000):
        gen.step(plank)
    assert gen.height == pytest.approx(LOCO.height_range[0])
    assert LOCO.user_height_range is not None and LOCO.user_height_range[0] <= 0.105
    user = GaitCommand(GAITS[1], np.zeros(3), 0.0, 0.0, height=0.105,
                       height_range=LOCO.user_height_range)
    for _ in range(1000):
        gen.step(user)
    assert gen.height == pytest.approx(0.105)
