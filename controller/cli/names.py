"""Words for modes and gaits on motionctl's command line (`send --mode stand`,
`--mode trot`, `--gait walk`), beside the numbers of the protocol.

A mode word stands for a mode and the gait it is normally sent with: `lie` is
mode 7 gait 1 (the damper's lie-down), `trot` mode 11 gait 3. The names of
the robot's own state machine (`RECOVERY_STAND`, `pose_ctrl`...) are words
too, with gait 0. `--gait` given as well overrides the word's gait.
"""
from __future__ import annotations

import argparse
from collections.abc import Mapping

# word -> (mode, gait): the CyberDog 2's modes (SPEC §5.1) and gait ids (§6.4).
MODE_WORDS: dict[str, tuple[int, int]] = {
    "off": (0, 0),
    "damper": (7, 0),
    "lie": (7, 1),
    "lie-down": (7, 1),
    "stand": (12, 0),
    "qp-stand": (3, 0),
    "lifted": (9, 0),
    "locomotion": (11, 3),
    "trot": (11, 3),
    "walk": (11, 6),
    "motor": (15, 0),
    "pose": (21, 0),
    "pose-absolute": (21, 5),
    "motion": (62, 0),
    "two-leg": (64, 0),
    "rl-reset": (80, 0),
    "rl": (81, 0),
}

# Mode 11's gait ids by name (gaits/quadruped/).
GAIT_WORDS: dict[str, int] = {
    "stand": 1, "pronk": 2, "trot": 3, "passive-trot": 4, "walk": 6, "bound": 7,
    "pace": 8, "trot-fast": 10, "trot-slow": 27,
}


def parse_int(text: str) -> int | None:
    """`text` as an integer (decimal, or 0x.. hex, handy for leg masks), else None."""
    try:
        return int(text, 0)
    except ValueError:
        try:
            return int(text, 10)      # "08": base 0 rejects leading zeros
        except ValueError:
            return None


def number_or_word(text: str) -> int | str:
    """An argparse type: an int8 (hex allowed) or a lower-case word."""
    value = parse_int(text)
    if value is None:
        return text.strip().lower().replace("_", "-")
    if not -128 <= value <= 127:
        raise argparse.ArgumentTypeError(f"{value} is outside the int8 range [-128, 127]")
    return value


def resolve_mode(value: int | str, fsm_names: Mapping[int, str]) -> tuple[int, int | None]:
    """(mode, its word's gait or None) for --mode's value; ValueError naming
    the words when it is none of them."""
    if isinstance(value, int):
        return value, None
    if value in MODE_WORDS:
        return MODE_WORDS[value]
    for mode, name in fsm_names.items():
        if name.lower().replace("_", "-") == value:
            return mode, 0
    known = ", ".join(sorted(MODE_WORDS))
    raise ValueError(f"--mode {value!r}: not a mode number or word ({known}, or a state's name: "
                     f"{', '.join(n for _, n in sorted(fsm_names.items()))})")


def resolve_gait(value: int | str) -> int:
    """--gait's value as a gait id; ValueError naming the words."""
    if isinstance(value, int):
        return value
    if value in GAIT_WORDS:
        return GAIT_WORDS[value]
    raise ValueError(f"--gait {value!r}: not a gait number or word ({', '.join(sorted(GAIT_WORDS))})")
