"""The `scripts` section: keyframe-script directories, mirroring, the script
priority and the scripted FSM modes (CyberDog 64, 16, 22)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.robot.config.fsm import FsmTable
from controller.robot.config.priorities import PRIORITY_RANGE
from controller.robot.config.reader import Reader

SCRIPT_PROGRESS = ("parts", "end")
SCRIPTED_KINDS = ("scripts", "trajectory", "two_leg")


@dataclass(frozen=True)
class ScriptedModeConfig:
    """A mode that plays keyframe scripts (CyberDog 64, 16, 22): gait id ->
    the scripts played back to back. `progress` is "parts" (each finished
    script adds its share: 25/50/75/100 for four) or "end" (0 until the last
    frame, then 100 after `settle_ms`, e.g. a jump's landing delay).
    `kind: trajectory` plays one optimised trajectory per gait instead
    (controller/behaviours/jump.py), found in `trajectories`; its `settle_ms`
    is how long the landed body must be still."""
    gaits: dict[int, tuple[str, ...]]
    progress: str
    settle_ms: float
    keeps_target: bool = False    # re-requesting the mode keeps a pending hand-over (SPEC §5.6)
    kind: str = "scripts"
    # `rear_check: {after: SCRIPT, min_pitch: RAD}`: once SCRIPT of the chain
    # has played, the IMU must show the nose up by at least RAD, else the
    # motion failed (logged, never 100): 64's rear-up.
    rear_check: tuple[str, float] | None = None


@dataclass(frozen=True)
class ScriptsConfig:
    """Keyframe scripts: where they live, how they mirror, who may run them."""
    directories: tuple[Path, ...]
    default_priority: int
    mode: int | None                       # the FSM mode full-body scripts run in
    mirror_pairs: tuple[tuple[str, str], ...]
    mirror_negate: frozenset[str]
    modes: dict[int, ScriptedModeConfig]   # scripted FSM modes (64, 16, 22)
    trajectories: tuple[Path, ...] = ()    # directories of optimised trajectories
    # The recovery stand's roll-over (controller/behaviours/recovery.py):
    # "back", the trajectory from lying on the back (and its mirror image).
    rolls: dict[str, str] | None = None
    # The sign of the body's roll angle the roll-over turns it through (+1:
    # left side up on the way). A body lying on the other side starts with
    # the mirror image, the short way to its belly. 0: always the roll-over
    # first (a robot that falls from a side onto its back, as CyberDog 2).
    roll_through: int = 0


def load_scripts(r: Reader, path: Path, names: list[str], fsm: FsmTable) -> ScriptsConfig:
    sr = r.sub("scripts")
    directories = _directories(sr, path, "directories", [])
    trajectories = _directories(sr, path, "trajectories", [])
    mode = sr.get("mode", int, None)
    if mode is not None and mode not in fsm.names:
        raise sr.fail("mode", f"{mode} is not a mode of {path.parent / r.get('fsm', str)}")
    pairs: list[tuple[str, str]] = []
    negate: frozenset[str] = frozenset()
    if "mirror" in sr.data:
        mr = sr.sub("mirror")
        left, right = mr.get("prefixes", list, ["l_", "r_"])
        pairs = [(n, right + n[len(left):]) for n in names
                 if n.startswith(left) and right + n[len(left):] in names]
        for extra in mr.get("pairs", list, []):
            if not (isinstance(extra, list) and len(extra) == 2):
                raise mr.fail("pairs", f"expected [joint, joint] pairs, got {extra!r}")
            pairs.append((str(extra[0]), str(extra[1])))
        negate = frozenset(str(n) for n in mr.get("negate", list, []))
        unknown = sorted({n for p in pairs for n in p} - set(names) | negate - set(names))
        if unknown:
            raise mr.fail("negate" if set(unknown) & negate else "pairs",
                          f"unknown joints {unknown}")
    modes: dict[int, ScriptedModeConfig] = {}
    if "modes" in sr.data:
        mr = sr.sub("modes")
        for m in mr.data:
            if m not in fsm.names:
                raise mr.fail(str(m), "not a mode of the FSM table")
            er = mr.sub(m)
            gaits = {}
            kind = er.get("kind", str, "scripts")
            if kind == "two_leg":
                ids = er.get("gaits", list)
                if not ids or not all(isinstance(g, int) and not isinstance(g, bool) for g in ids):
                    raise er.fail("gaits", "kind two_leg takes a list of gait ids, e.g. [0, 10]")
                modes[int(m)] = ScriptedModeConfig({g: () for g in ids}, "parts", 0.0,
                                                   er.get("keeps_target", bool, False), kind)
                continue
            for gait, chain in er.get("gaits", dict).items():
                chain = [chain] if isinstance(chain, str) else chain
                if isinstance(gait, bool) or not isinstance(gait, int) or not isinstance(chain, list) \
                        or not chain or not all(isinstance(c, str) for c in chain):
                    raise er.fail(f"gaits.{gait}", "expected `<gait id>: <script>` or a list of scripts")
                gaits[gait] = tuple(chain)
            progress = er.get("progress", str, "end")
            if progress not in SCRIPT_PROGRESS:
                raise er.fail("progress", f"{progress!r} is not one of {SCRIPT_PROGRESS}")
            if kind not in SCRIPTED_KINDS:
                raise er.fail("kind", f"{kind!r} is not one of {SCRIPTED_KINDS}")
            if kind == "trajectory" and not trajectories:
                raise er.fail("kind", "a trajectory mode needs `scripts.trajectories` directories")
            rear = None
            if "rear_check" in er.data:
                rc = er.sub("rear_check")
                after = rc.get("after", str)
                if not any(after in chain for chain in gaits.values()):
                    raise rc.fail("after", f"{after!r} is in none of the mode's gaits")
                rear = (after, rc.number("min_pitch", 0.0, 1.6))
            modes[int(m)] = ScriptedModeConfig(gaits, progress, er.number("settle_ms", 0.0, 5000.0, 0.0),
                                               er.get("keeps_target", bool, False), kind, rear)
    rolls, roll_through = None, 0
    if "recovery" in sr.data:
        rr = sr.sub("recovery")
        unknown = sorted(set(rr.data) - {"roll_back", "roll_through"})
        if unknown:
            raise rr.fail(unknown[0], "unknown key (known: roll_back, roll_through)")
        through = rr.number("roll_through", -1, 1, 0)
        if through not in (-1, 0, 1):
            raise rr.fail("roll_through", f"expected -1, 0 or 1, got {through}")
        roll_through = int(through)
        if not trajectories:
            raise rr.fail("roll_back", "the roll-over needs `scripts.trajectories` directories")
        rolls = {"back": rr.get("roll_back", str)}
    return ScriptsConfig(
        directories=tuple(directories),
        default_priority=int(sr.number("default_priority", *PRIORITY_RANGE, 15)),
        mode=mode, mirror_pairs=tuple(pairs), mirror_negate=negate, modes=modes,
        trajectories=tuple(trajectories), rolls=rolls, roll_through=roll_through)


def _directories(sr: Reader, path: Path, key: str, default: Any = ...) -> list[Path]:
    """A list of directories relative to the config file, each checked to exist."""
    out = []
    for i, d in enumerate(sr.get(key, list, default)):
        directory = (path.parent / str(d)).resolve()
        if not isinstance(d, str) or not directory.is_dir():
            raise sr.fail(f"{key}[{i}]", f"{directory} is not a directory")
        out.append(directory)
    return out
