"""Mode-62 motions: the step-list format (SPEC §4.6) and the shipped library
running on the simulated robot (SPEC §4.1-§4.5)."""
from __future__ import annotations

from itertools import groupby
from pathlib import Path

import numpy as np
import pytest
from harness import Rig

from controller.motion.motions import MotionLibrary, load_motion
from controller.motion.steps import StepError
from controller.robot.config import MotionsConfig, load_config

CFG = load_config()


def configured_motions() -> MotionsConfig:
    assert CFG.motions is not None, "config/cyberdog2.yaml configures mode-62 motions"
    return CFG.motions


LIBRARY = configured_motions()
POSE_ONLY = (1, 2, 4, 5, 6)          # relative poses that add up to zero


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- the format ----------------------------------------------------------------------
def test_typed_steps_become_the_spec_commands(tmp_path):
    path = write(tmp_path, "m.toml", """
        [[step]]
        type = "pose"
        foot_support = [1, 0, 1, 1]
        body_cmd = [0.1, 0.2, 0.3, 0.01, 0.02, 0.03]
        foot_pose = [0.04, 0.05, 0.06]
        ctrl_point = [0.1, 0.0, 0.0]
        mirror = 1
        duration = 1000
        [[step]]
        type = "swingleg"
        duration = 500
        [[step]]
        type = "transition"
        height = 0.2
        duration = 600
        [[step]]
        type = "locomotion"
        gait_id = 3
        vel_des = [0.2, 0.0, 0.1]
        duration = 800
        [[step]]
        type = "jumpacc"
        foot_support = [1, 1, 0, 0]
        x_acc_cmd = [1.0, 2.0, 3.0]
        w_acc_cmd = [4.0, 5.0, 6.0]
        duration = 200
        [[step]]
        type = "recoverystand"
        duration = 400
    """)
    pose, swing, transition, loco, jump, stand = load_motion(path)
    assert (pose.mode, pose.gait_id, pose.contact, pose.duration) == (21, 1, 0b1101, 500)
    assert pose.rpy_des == pytest.approx((0.1, 0.2, 0.3))
    assert pose.pos_des == pytest.approx((0.01, 0.02, 0.03))
    assert pose.foot_pose[:3] == pytest.approx((0.04, 0.05, 0.06))
    assert pose.ctrl_point == pytest.approx((0.1, 0, 0)) and pose.value == 1
    # Everything the swingleg step does not set is inherited (SPEC §4.6).
    assert (swing.mode, swing.gait_id, swing.contact, swing.duration) == (21, 2, 0b1101, 250)
    assert swing.rpy_des == pose.rpy_des and swing.foot_pose == pose.foot_pose
    assert (transition.mode, transition.gait_id) == (21, 5)
    assert transition.pos_des[2] == pytest.approx(0.2)
    assert (loco.mode, loco.gait_id, loco.rpy_des, loco.pos_des) == (11, 3, (0, 0, 0), (0, 0, 0))
    assert loco.vel_des == pytest.approx((0.2, 0, 0.1)) and loco.step_height == pytest.approx((0.06, 0.06))
    assert (jump.mode, jump.gait_id, jump.contact) == (22, 4, 0b0011)
    assert jump.acc_des == pytest.approx((4, 5, 6, 1, 2, 3))
    assert (stand.mode, stand.gait_id, stand.duration) == (12, 0, 200)


def test_an_included_file_starts_with_a_fresh_record(tmp_path):
    write(tmp_path, "inner.toml", """
        [[step]]
        type = "pose"
        duration = 100
    """)
    outer = write(tmp_path, "outer.toml", """
        [[step]]
        type = "pose"
        foot_support = [1, 1, 1, 0]
        duration = 1000
        [[step]]
        file = "inner.toml"
    """)
    first, inner = load_motion(outer)
    assert first.contact == 0b0111
    assert inner.contact == 0 and inner.duration == 50


def test_unknown_types_are_skipped_with_a_warning(tmp_path):
    path = write(tmp_path, "m.toml", """
        [[step]]
        type = "cartwheel"
        duration = 100
        [[step]]
        type = "pose"
        duration = 100
    """)
    warnings: list[str] = []
    assert len(load_motion(path, warnings=warnings)) == 1
    assert any("cartwheel" in w and "step 1" in w for w in warnings)


@pytest.mark.parametrize("text, where", [
    ('[[step]]\nduration = 100\n', "step 1: a step needs a `type` or a `file`"),
    ('[[step]]\ntype = "pose"\nduration = 0\n', "step 1: duration: 0 ticks"),
    ('[[step]]\ntype = "pose"\nbody_cmd = [0, 0, "x", 0, 0, 0]\nduration = 9\n', "step 1: body_cmd"),
    ('[[step]]\nfile = "../outside.toml"\n', "outside the motion directory"),
    ('[[step\n', "not valid TOML"),
])
def test_a_bad_motion_file_is_refused_naming_the_place(tmp_path, text, where):
    path = write(tmp_path, "bad.toml", text)
    with pytest.raises(StepError) as err:
        load_motion(path)
    assert str(path) in str(err.value) and where in str(err.value)


def test_a_bad_file_refuses_only_its_own_id(tmp_path):
    write(tmp_path, "good.toml", '[[step]]\ntype = "pose"\nduration = 100\n')
    write(tmp_path, "bad.toml", '[[step]]\nduration = 100\n')
    lib = MotionLibrary(tmp_path, {1: "good.toml", 2: "bad.toml", 3: "missing.toml"}, 2.0)
    assert sorted(lib.motions) == [1]
    assert "bad.toml: step 1" in lib.why_missing(2)
    assert "cannot read" in lib.why_missing(3)
    assert "not in the motion library" in lib.why_missing(9)


# -- the library on the simulated robot ------------------------------------------------
@pytest.fixture
def standing() -> Rig:
    rig = Rig(record_joints=True)
    rig.stand()
    return rig


def test_every_configured_motion_loads():
    lib = MotionLibrary(LIBRARY.directory, LIBRARY.files, 2.0)
    assert lib.errors == {}
    assert sorted(lib.motions) == sorted(LIBRARY.files)
    assert {1, 2, 3, 4, 5, 6, 11, 12, 34} <= set(lib.motions)


@pytest.mark.parametrize("motion_id", [1, 2, 3, 4, 5, 6, 11, 12, 34])
def test_each_motion_runs_to_100_and_ends_in_the_filler(standing, motion_id):
    rig = standing
    steps = rig.ctl.motions.motions[motion_id]
    start = rig.ctl.kernel.pos.copy()
    rig.send(62, motion_id)
    bars = []
    ticks = sum(b.duration for b in steps)
    for _ in range(ticks + 800):           # + transitions (mode 11 slowing down)
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        if rig.last.mode == 62:
            assert rig.last.gait_id == motion_id
            bars.append(rig.last.bar)
    assert bars == sorted(bars) and bars[0] >= 1 and bars[-1] == 100
    filler = (11, 1) if steps[-1].mode == 11 else (21, 3)
    assert (rig.last.mode, rig.last.gait_id, rig.last.switch_status) == (*filler, 0)
    q = np.array([j.position for j in rig.joint_cmds])
    assert np.all(q >= CFG.q_min) and np.all(q <= CFG.q_max)
    if motion_id in POSE_ONLY:             # relative steps that sum to zero
        np.testing.assert_allclose(rig.ctl.kernel.pos, start, atol=1e-6)


def test_step_timing_is_exact(standing):
    """Each step's block is active for exactly its duration in ticks."""
    rig = standing
    steps = rig.ctl.motions.motions[4]
    rig.send(62, 4)
    seen: list[int] = []
    for _ in range(sum(b.duration for b in steps) + 50):
        rig.tick(heartbeat=rig.ctl.tick % 50 == 0)
        seen.append(rig.ctl.last_active.uid)
    runs = [sum(1 for _ in group) for _, group in groupby(seen)]
    assert runs[:len(steps)] == [b.duration for b in steps]


def test_the_next_motion_after_sitting_stands_up_first(standing):
    rig = standing
    rig.send(62, 3)
    rig.run(1300 + 500)
    rig.send(62, 4)          # queued behind the 400 ms filler (SPEC §3.2)
    rig.run_until(lambda r: r.ctl.queue.motion_trigger == 4, 500)
    active = rig.ctl.last_active
    assert (active.mode, active.gait_id, active.duration) == (21, 5, 400)
    assert active.pos_des[2] == pytest.approx(0.225)
    assert rig.ctl.queue.total == len(rig.ctl.motions.motions[4]) + 1


def test_a_continuous_command_cancels_a_running_motion(standing):
    rig = standing
    rig.send(62, 1)
    rig.run(1000)
    assert rig.last.mode == 62
    rig.send(21, 3)
    rig.run(10)
    assert rig.ctl.queue.motion_trigger == 0 and rig.last.mode == 21
    assert len(rig.ctl.queue) == 1


def test_negative_motion_ids_are_refused_and_unmapped_ones_play_the_all_in_one(standing):
    rig = standing
    rig.send(62, -3)
    rig.run(50)
    assert rig.last.switch_status == 5
    assert "not in the motion library" in rig.ctl.counters.last_error
    # SPEC §4.1: an id without a file (60, 92-95, 97-100, ...) plays motion 0's steps.
    assert CFG.motions is not None and CFG.motions.unmapped == 0 and 99 not in CFG.motions.files
    rig.send(62, 99)
    rig.run(50)
    assert rig.last.mode == 62 and rig.last.gait_id == 99 and rig.last.switch_status != 5
    assert rig.ctl.queue.total == len(rig.ctl.motions.motions[0])


def test_a_refused_id_names_its_reason_and_does_not_play_the_all_in_one(standing):
    rig = standing
    assert CFG.motions is not None and 70 in CFG.motions.refused
    rig.send(62, 70)
    rig.run(50)
    assert rig.last.switch_status == 5
    assert "motion 70 is refused: the factory pitch-gain calibration" in rig.ctl.counters.last_error
