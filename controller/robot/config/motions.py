"""The `motions` section: mode 62's step-list files by motion id."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from controller.robot.config.reader import Reader, file_name, section_directory


@dataclass(frozen=True)
class MotionsConfig:
    """Mode 62 (SPEC §4.1): motion id -> step-list file in `directory`."""
    directory: Path
    files: dict[int, str]


def load_motions(r: Reader, path: Path) -> MotionsConfig:
    mr = r.sub("motions")
    directory = section_directory(mr, path)
    files: dict[int, str] = {}
    for motion_id, name in mr.get("ids", dict).items():
        if isinstance(motion_id, bool) or not isinstance(motion_id, int) \
                or not 0 <= motion_id <= 127 or not isinstance(name, str):
            raise mr.fail(f"ids.{motion_id}", "expected `<id 0..127>: <file name>`")
        files[motion_id] = file_name(mr, f"ids.{motion_id}", name)
    return MotionsConfig(directory, files)
