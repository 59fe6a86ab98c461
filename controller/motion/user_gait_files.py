"""On-disk user gaits (SPEC §8.2, §12.A.4): the Gait Def files of ids 80-100
and the default of 110.

A directory (the robot config's `locomotion.user_gaits`) holds, for user gait
id 80 + NN (NN = 00..20), the Gait Def file `user_gait_NN.toml`, and
`user_gait.toml`, what gait 110 runs before any upload (and again after OFF
is left, SPEC §8.2). The files are read with the upload's parser
(controller.motion.usergait.parse_gait_def); they need no `# Gait Def` first
line (the robot's own have none), and may have one (motiond's own do, so that
`motionctl validate` and an upload take them as they are).

Stricter than an upload: whatever the lenient parser would skip or change (a
section that does not fit, a stray line, a last section not in full contact,
no section at all) refuses the file, and so does a file that cannot be read.
Its id then has no definition: mode 11 refuses it, naming the file, the line
and the reason. The other files load.

Reads the files once (at start); nothing here runs inside a tick.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from controller.motion.gait_table import GaitDefinition
from controller.motion.usergait import parse_gait_def
from controller.protocol.constants import USER_GAIT

FIRST_ID, LAST_ID = 80, 100        # the ids with a file of their own (SPEC §12.A.1)
DEFAULT_FILE = "user_gait.toml"    # gait 110 until an upload (SPEC §8.2)


def file_name(gait_id: int) -> str:
    """user_gait_NN.toml, NN = gait_id - 80 in two digits (81 -> user_gait_01.toml)."""
    if gait_id == USER_GAIT:
        return DEFAULT_FILE
    if not FIRST_ID <= gait_id <= LAST_ID:
        raise ValueError(f"gait {gait_id} is not an on-disk user gait ({FIRST_ID}-{LAST_ID}, {USER_GAIT})")
    return f"user_gait_{gait_id - FIRST_ID:02d}.toml"


@dataclass(frozen=True)
class UserGaitFiles:
    """What a directory of user-gait files gave: the gaits by id (110 is the
    default) and, by id, why a file present there was refused."""

    directory: Path
    gaits: dict[int, GaitDefinition] = field(default_factory=dict)
    errors: dict[int, str] = field(default_factory=dict)

    def refusal(self, gait_id: int) -> str | None:
        """Why mode 11 has no `gait_id` from this directory, if its file was refused."""
        error = self.errors.get(gait_id)
        return None if error is None else f"gait {gait_id}: its file was refused at start: {error}"


def load_user_gaits(directory: Path) -> UserGaitFiles:
    """Every user gait of `directory` whose file exists (see the module)."""
    found = UserGaitFiles(directory)
    for gait_id in (*range(FIRST_ID, LAST_ID + 1), USER_GAIT):
        path = directory / file_name(gait_id)
        if not path.exists():
            continue
        try:
            found.gaits[gait_id] = load_user_gait(path, gait_id)
        except ValueError as exc:
            found.errors[gait_id] = str(exc)
    return found


def load_user_gait(path: Path, gait_id: int) -> GaitDefinition:
    """One file as user gait `gait_id`; ValueError naming the file, the line
    and the reason when it cannot be read or the parser would skip or change
    anything in it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ValueError(f"{path}: cannot read: {reason}") from None
    notes: list[str] = []
    gait_def = parse_gait_def(text, name=str(path), warnings=notes, header=False)   # GaitDefError: too large
    if notes:
        more = f" (and {len(notes) - 1} more)" if len(notes) > 1 else ""
        raise ValueError(f"{notes[0]}{more}")
    what = "the default of user gait 110" if gait_id == USER_GAIT else f"user gait {gait_id}"
    return gait_def.definition(gait_id, f"{what} ({path.name})", str(path))
