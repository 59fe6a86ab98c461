"""Every keyframe script of a robot's configured directories, loaded and
validated once at start, and the chains (mirrored, retimed) built from them
by name. The director plays what it hands out; the scripted modes build
their gaits' chains from it.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from controller.motion.scripts import (
    Script,
    ScriptError,
    chain,
    load_directory,
    mirror,
    resolve_script,
    speed,
    stretch,
    validate,
)
from controller.robot.config import Config, ScriptsConfig


class ScriptLibrary:
    """Every script of the configured directories, loaded and validated at
    start. A request resolves a name to a file of these directories and
    plays the copy loaded at start: nothing named on the network is opened."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.sc: ScriptsConfig | None = cfg.scripts
        self.scripts: dict[Path, Script] = {}
        self.errors: list[ScriptError] = []
        for directory in self.sc.directories if self.sc else ():
            scripts, errors = load_directory(directory, cfg)
            self.errors += errors
            for script in scripts.values():
                assert script.source is not None
                self.scripts[script.source.resolve()] = script
        self.refused = {Path(e.where).resolve(): str(e) for e in self.errors}

    def has(self, name: str) -> bool:
        """Is `name` a loaded (or refused) script of the directories?"""
        if self.sc is None:
            return False
        try:
            self.get(name)
        except ScriptError as exc:
            return "no such script" not in exc.reason
        return True

    def get(self, name: str) -> Script:
        """The loaded script `name`; ScriptError (with the reason) otherwise."""
        if self.sc is None:
            raise ScriptError(f"script name {name!r}", "this robot has no script directories")
        path = resolve_script(name, self.sc.directories)
        if path in self.refused:
            raise ScriptError(f"script name {name!r}", f"refused at start: {self.refused[path]}")
        if path not in self.scripts:
            raise ScriptError(f"script name {name!r}", f"{path} was not there at start; "
                                                       "restart the daemon to load new scripts")
        return self.scripts[path]

    def build(self, names: Iterable[str], mirrored: bool = False, total_ms: float = 0.0,
              factor: float = 0.0) -> Script:
        """The chain of `names`, mirrored and retimed as asked, validated
        against the robot (a junction or a faster replay can break a joint's
        speed limit). Raises ValueError with the reason."""
        script = chain([self.get(n) for n in names])
        if mirrored:
            if self.sc is None or not self.sc.mirror_pairs:
                raise ValueError("this robot has no mirror pairs (config scripts.mirror)")
            script = mirror(script, self.sc.mirror_pairs, self.sc.mirror_negate)
        if total_ms > 0:
            script = stretch(script, total_ms)
        elif factor > 0 and factor != 1.0:
            script = speed(script, factor)
        validate(script, self.cfg)
        return script
