"""motiond's own mode-62 motion library (config/cyberdog2.yaml `motions`,
gaits/motions/cyberdog2/): every motion id of SPEC §4.1 has a file of its own
that loads cleanly, none of them is a copy of the CyberDog 2's files, and each
lasts about as long as the robot's file for the same id.

The robot's files are the peer copy beside the repository
(../shared/peers/cyberdog2_motion_files, Apache-2.0): read here for their
comments and their length, never copied."""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from controller.motion.motions import MotionLibrary, load_motion
from controller.robot.config import load_config
from controller.robot.config.motions import ROBOT_FILES
from controller.robot.resources import DATA_ROOT

PEER = (DATA_ROOT / "../shared/peers/cyberdog2_motion_files").resolve()
CFG = load_config()

# SPEC §4.1: the robot's file for each motion id (ROBOT_FILES, what
# `motions.robot_files` maps; 110 runs the uploaded Gait Params, no file). 70
# (factory pitch-gain calibration) has no motiond file: full-speed trotting
# across several metres, meant for the factory's fixture.
NOT_MAPPED = (70,)
MAPPED = sorted(set(ROBOT_FILES) - set(NOT_MAPPED))
DURATION_FACTOR = 1.5
MIN_COMMENT_WORDS = 3           # shorter comment lines ("# Stand") are too common to count


def tick_ms() -> float:
    return 1000.0 / CFG.tick_hz


@cache
def library() -> MotionLibrary:
    assert CFG.motions is not None, "config/cyberdog2.yaml configures mode-62 motions"
    return MotionLibrary(CFG.motions.directory, CFG.motions.files, tick_ms())


def shipped(motion_id: int) -> Path:
    assert CFG.motions is not None
    return CFG.motions.directory / CFG.motions.files[motion_id]


def peer(motion_id: int) -> Path:
    if not PEER.is_dir():
        pytest.fail(f"the CyberDog 2's motion files are not at {PEER} (the peers "
                    "directory beside the repository, as CI lays it)")
    return PEER / ROBOT_FILES[motion_id]


def shipped_files() -> list[Path]:
    """Every motion file motiond ships, mapped or only included."""
    assert CFG.motions is not None
    return sorted(CFG.motions.directory.glob("*.toml"))


def comment_lines(text: str) -> list[str]:
    """The `#` comments of a TOML text (a `#` inside a quoted string is not one)."""
    out = []
    for line in text.splitlines():
        quote = None
        for i, ch in enumerate(line):
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                out.append(line[i:])
                break
    return out


def normalised(comment: str) -> str:
    """Lower case, words and numbers only, single spaces."""
    return re.sub(r"[^a-z0-9]+", " ", comment.lower()).strip()


def duration_s(blocks: list) -> float:
    return sum(b.duration for b in blocks) * tick_ms() / 1000.0


def test_every_motion_id_of_the_spec_is_mapped_and_loads_without_warnings() -> None:
    lib = library()
    wanted = MAPPED
    assert CFG.motions is not None
    assert sorted(CFG.motions.files) == wanted
    assert lib.errors == {}
    assert lib.warnings == []
    assert sorted(lib.motions) == wanted
    assert all(lib.motions[i] for i in wanted)


def test_the_ids_are_sorted_in_the_config() -> None:
    """One id per line, in order, so the table reads like SPEC §4.1's."""
    text = (DATA_ROOT / "config/cyberdog2.yaml").read_text()
    section = text[text.index("\nmotions:\n"):]
    section = section[:section.index("\n\n")]
    ids = [int(m) for m in re.findall(r"^    (\d+): \S+\.toml$", section, re.MULTILINE)]
    assert ids == sorted(ids) and ids == MAPPED


def test_no_shipped_file_is_a_copy_of_a_robot_file() -> None:
    peers = sorted(p for p in PEER.rglob("*.toml")) if PEER.is_dir() else []
    if not peers:
        peer(0)            # fails, naming where the files should be
    peer_bytes = {p.read_bytes(): p for p in peers}
    for path in shipped_files():
        assert path.read_bytes() not in peer_bytes, f"{path.name} is {peer_bytes[path.read_bytes()]}"


def test_no_shipped_file_shares_a_comment_line_with_a_robot_file() -> None:
    peers = sorted(PEER.rglob("*.toml")) if PEER.is_dir() else []
    if not peers:
        peer(0)
    theirs: dict[str, Path] = {}
    for p in peers:
        for c in comment_lines(p.read_text()):
            n = normalised(c)
            if len(n.split()) >= MIN_COMMENT_WORDS:
                theirs.setdefault(n, p)
    shared = [(path.name, c, theirs[normalised(c)].name)
              for path in shipped_files() for c in comment_lines(path.read_text())
              if normalised(c) in theirs]
    assert shared == []


def test_every_shipped_file_starts_with_a_comment_naming_its_motion() -> None:
    assert CFG.motions is not None
    for motion_id, name in CFG.motions.files.items():
        first = shipped(motion_id).read_text().splitlines()[0]
        assert first.startswith(f"# Motion {motion_id}:"), (name, first)
        assert "SPEC" in shipped(motion_id).read_text().split("\n\n")[0], name


@pytest.mark.parametrize("motion_id", MAPPED)
def test_a_motion_lasts_about_as_long_as_the_robots(motion_id: int) -> None:
    ours = duration_s(library().motions[motion_id])
    theirs = duration_s(load_motion(peer(motion_id), PEER, tick_ms()))
    assert theirs > 0
    assert theirs / DURATION_FACTOR <= ours <= theirs * DURATION_FACTOR, \
        f"motion {motion_id}: {ours:.2f} s, the robot's file {theirs:.2f} s"


def test_the_comment_reader_skips_hashes_in_strings() -> None:
    text = 'file = "a#b.toml"   # include it\n# Whole line\nx = 1\n'
    assert comment_lines(text) == ["# include it", "# Whole line"]
    assert normalised("# End of the  Ballet #") == "end of the ballet"
