"""The `motions` section: mode 62's step-list files by motion id.

Either motiond's own library (`directory` and `ids`: id -> file name), or
the robot's own files (`robot_files`: the CyberDog 2's motion_list folder,
with `preinstalled/` and `user/parameter/`), whose ids are those of SPEC §4.1
and need no table. `unmapped` names the id whose motion an unmapped
id plays, as the reference plays its all-in-one (SPEC §4.1: id 0 and any
unmapped id); without it an unmapped id is refused. `refused` names ids
that are refused whatever `unmapped` says, each with its reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from controller.robot.config.reader import Reader, config_directory, file_name, section_directory

# SPEC §4.1: where the robot keeps each motion id's file, under its motion_list folder.
_PRE, _USER = "preinstalled/cyberdog2_", "user/parameter/cyberdog2_"
ROBOT_FILES: dict[int, str] = {
    0: _PRE + "motion.toml",
    1: _PRE + "hiFive_LFleg_posCtrl.toml", 2: _PRE + "hiFive_RFleg_posCtrl.toml",
    3: _PRE + "sitDown_posCtrl.toml", 4: _PRE + "swing_hip_posCtrl.toml",
    5: _PRE + "swing_head_posCtrl.toml", 6: _PRE + "bodystretch.toml",
    8: _PRE + "sitDown_posCtrl_left.toml", 9: _PRE + "sitDown_posCtrl_right.toml",
    10: _PRE + "sitDown_posCtrl_shake.toml",
    11: _PRE + "ballet.toml", 12: _PRE + "moonwalk.toml",
    13: _PRE + "front_lift_out_in.toml", 14: _PRE + "rear_lift_out_in.toml",
    15: _PRE + "pitch_down_left.toml", 16: _PRE + "pitch_down_right.toml",
    17: _PRE + "diagonal_right.toml", 18: _PRE + "diagonal_left.toml",
    19: _PRE + "walk_wave.toml", 20: _PRE + "trot_in_out.toml", 21: _PRE + "trot_pitch.toml",
    22: _PRE + "front_lift_left_right.toml", 23: _PRE + "rear_lift_left_right.toml",
    24: _PRE + "front_lift_switch.toml", 25: _PRE + "rear_lift_switch.toml",
    26: _PRE + "jump3D.toml", 27: _PRE + "trot_swing.toml",
    28: _PRE + "special_pronk.toml", 29: _PRE + "special_trot.toml",
    30: _PRE + "moonwalk_switch_left.toml", 31: _PRE + "moonwalk_switch_right.toml",
    32: _PRE + "moonwalk_backward.toml", 33: _PRE + "up_down.toml", 34: _PRE + "push_up.toml",
    70: _PRE + "pitch_gain_factory_calibrate.toml",
    80: _USER + "user80_ballet.toml", 81: _USER + "user81_front_lift.toml",
    82: _USER + "user82_rear_lift.toml", 83: _USER + "user83_walk_wave.toml",
    84: _USER + "user84_trot_in_out.toml", 85: _USER + "user85_diagonal_FR.toml",
    86: _USER + "user86_diagonal_FL.toml", 87: _USER + "user87_pronk_front_back.toml",
    88: _USER + "user88_FR_lift.toml", 89: _USER + "user89_FL_lift.toml",
    90: _USER + "user90_moonwalk.toml", 91: _USER + "user91_amble.toml",
    96: _USER + "user96_moonwalk_backward.toml",
    111: _PRE + "short_dance_1.toml", 112: _PRE + "short_dance_2.toml",
}


@dataclass(frozen=True)
class MotionsConfig:
    """Mode 62 (SPEC §4.1): motion id -> step-list file (a path relative to
    `directory`); an id not in `files` plays `unmapped`'s motion if set."""
    directory: Path
    files: dict[int, str]
    unmapped: int | None = None
    refused: dict[int, str] = field(default_factory=dict)   # id -> why it is refused


def load_motions(r: Reader, path: Path) -> MotionsConfig:
    mr = r.sub("motions")
    robot = "robot_files" in mr.data
    if robot and "directory" in mr.data:
        raise mr.fail("robot_files", "give either `directory` (motiond's own files, with `ids`) "
                                     "or `robot_files` (the robot's motion_list folder), not both")
    directory = config_directory(mr, path, "robot_files") if robot else section_directory(mr, path)
    files: dict[int, str] = {}
    if robot:
        files = {i: name for i, name in ROBOT_FILES.items() if (directory / name).is_file()}
        if not files:
            raise mr.fail("robot_files", f"{directory} holds none of the robot's motion files "
                                         f"(expected e.g. {ROBOT_FILES[1]})")
    if robot and "ids" in mr.data:
        raise mr.fail("ids", "`robot_files` maps every id itself (SPEC §4.1); `ids` goes with "
                             "`directory`")
    for motion_id, name in mr.get("ids", dict, {} if robot else ...).items():
        if isinstance(motion_id, bool) or not isinstance(motion_id, int) \
                or not 0 <= motion_id <= 127 or not isinstance(name, str):
            raise mr.fail(f"ids.{motion_id}", "expected `<id 0..127>: <file name>`")
        files[motion_id] = file_name(mr, f"ids.{motion_id}", name)
    unmapped = mr.get("unmapped", int, None)
    if unmapped is not None and unmapped not in files:
        raise mr.fail("unmapped", f"motion {unmapped} is not mapped (mapped: {sorted(files)})")
    refused: dict[int, str] = {}
    for motion_id, reason in mr.get("refused", dict, {}).items():
        if isinstance(motion_id, bool) or not isinstance(motion_id, int) \
                or not 0 <= motion_id <= 127 or not isinstance(reason, str) or not reason.strip():
            raise mr.fail(f"refused.{motion_id}", "expected `<id 0..127>: <the reason>`")
        if motion_id in files:
            raise mr.fail(f"refused.{motion_id}", "the id is also mapped to a file")
        refused[motion_id] = reason.strip()
    return MotionsConfig(directory, files, unmapped, refused)
