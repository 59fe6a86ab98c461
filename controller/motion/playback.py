"""One face for everything that plays a motion file into the kernel.

Keyframe scripts (controller/motion/scripts.py) and .mof motion nets
(controller/motion/mof.py) each have their own player with its own time rule:
scripts count whole ticks (frame durations are rounded to ticks at load),
a .mof net keeps its millisecond durations on the float clock. Both are
driven from the same controller clock, `tick * dt` seconds, so they meet
the same kernel times; a Playback hides the difference from the director
and the scripted modes.

    pb.start(kernel, tick, q_cmd, q_meas)   raises ValueError if it cannot
                                            start from here (too fast, ...)
    pb.step(tick, q_meas) -> Position       every tick, before kernel.step
    pb.done                                 True once it has finished

Pure: writes kernel segments and gains, reads nothing else.
"""
from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np

from controller.motion.mof import KEEP, JointLine, MofPlayer, MotionNet
from controller.motion.scripts import Script, ScriptPlayer
from controller.robot.native import Kernel


class Position(NamedTuple):
    part: str        # the script (of a chain) or .mof motion playing now
    frame: int       # 1-based frame of that part, or the .mof source line
    progress: int    # 0..100 of the whole playback


class Playback(Protocol):
    name: str                 # what was requested, e.g. "Stand+KickRight"
    indices: np.ndarray       # kernel joint indices it drives
    position: Position

    @property
    def done(self) -> bool: ...

    @property
    def duration_s(self) -> float: ...

    def start(self, kernel: Kernel, tick: int, q_cmd: np.ndarray, q_meas: np.ndarray) -> None: ...

    def step(self, tick: int, q_meas: np.ndarray) -> Position: ...


class ScriptPlayback:
    """A (possibly chained, retimed, mirrored) keyframe script."""

    def __init__(self, script: Script, joint_index: dict[str, int], dt: float) -> None:
        self.script = script
        self.name = script.name
        self.indices = np.array(sorted(joint_index[n] for n in script.joints), dtype=np.intp)
        self._joint_index = joint_index
        self._dt = dt
        # Ticks from the start at which each script of the chain ends.
        frame_ends = np.cumsum([f.duration_ticks for f in script.frames])
        self._part_ends = frame_ends[np.cumsum([p.frames for p in script.parts]) - 1]
        self._player: ScriptPlayer | None = None
        self._t0 = 0
        self.position = Position(script.parts[0].name, 1, 0)

    @property
    def done(self) -> bool:
        return self._player is None or self._player.done

    @property
    def duration_s(self) -> float:
        return self.script.duration_ms / 1000.0

    def start(self, kernel: Kernel, tick: int, q_cmd: np.ndarray, q_meas: np.ndarray) -> None:
        # The script was validated against the robot when it was built; the
        # first frame from wherever the joints are is held to the velocity
        # limits by the kernel.
        player = ScriptPlayer(kernel, self._joint_index, self._dt)
        player.start(self.script, tick, q_cmd)
        self._player = player
        self._t0 = tick
        self._update()

    def step(self, tick: int, q_meas: np.ndarray) -> Position:
        assert self._player is not None, "start() first"
        self._player.step(tick, q_meas)
        return self._update()

    def _update(self) -> Position:
        assert self._player is not None
        state = self._player.state
        part, frame = self.script.locate(state.frame)
        self.position = Position(part, frame + 1, state.progress)
        return self.position

    def parts_done(self, tick: int) -> int:
        """How many scripts of the chain have played to their end by `tick`."""
        return int(np.searchsorted(self._part_ends, tick - self._t0, side="right"))


_EPS = 1e-9   # s: "at the same time", as MofPlayer's line schedule counts it
_PERCENT_EPS = 1e-9


class MofPlayback:
    """One requested motion of a .mof motion net (controller/motion/mof.py).

    Time: the controller clock is tick * dt s. The MofPlayer keeps the .mof
    millisecond durations as float seconds on that clock (nothing is rounded
    to ticks), so a line ends on the first tick at or after its exact end.

    Leaving: the net is entered at extern with the motion's name as the
    request, which never changes. The playback is done when that request's
    first pass is over: the path the net takes from its entry reaches extern
    (a motion that leaves by itself) or comes back to a line it has passed
    (a motion that loops while requested, as stand does, and never leaves by
    itself); that is where the player's progress reaches 100. From that tick
    on the player is no longer stepped and is left as it is: the joints hold
    the last line's targets and gains (a loop does not start its next pass)
    until whoever drives them next takes over.
    """

    def __init__(self, net: MotionNet, motion: str, dt: float) -> None:
        if motion not in net.motions:
            raise ValueError(f"unknown motion {motion!r}; the net has {sorted(net.motions)}")
        self.net = net
        self.name = motion
        # The joints its lines move or switch off (`*` everywhere else): the
        # limbs it needs. The player writes every column, but an overlay
        # copies only these, so a head nod can play beside a stand.
        lines = [i for i in net.motions[motion].instructions if isinstance(i, JointLine)]
        moved = np.zeros(len(net.columns.joints), dtype=bool)
        for line in lines:
            moved |= line.action != KEEP
        joints = net.columns.joints[moved] if moved.any() else net.columns.joints
        self.indices = np.sort(joints)
        self._dt = dt
        self._player: MofPlayer | None = None
        self._end = 0.0        # s: when the first pass is over
        self._start = 0.0
        self._finished = False
        self.position = Position(motion, 0, 0)

    @property
    def done(self) -> bool:
        return self._player is None or self._finished

    def start(self, kernel: Kernel, tick: int, q_cmd: np.ndarray, q_meas: np.ndarray) -> None:
        """Enter the net at tick; the column joints hold q_cmd until a line
        moves them. q_meas is first used by step (switched-off joints)."""
        t = tick * self._dt
        player = MofPlayer(kernel)
        player.start(self.net, self.name, t, q_cmd)   # ValueError if it cannot
        entry = self.net.entry(self.name)
        # The player follows this same plan with the request fixed.
        self._end = t + (self.net.plan(entry, self.name).duration if entry else 0.0)
        self._player = player
        self._start = t
        self._finished = False
        self._update(t)

    @property
    def duration_s(self) -> float:
        """The first pass's length (known once started)."""
        return self._end - self._start

    def step(self, tick: int, q_meas: np.ndarray) -> Position:
        assert self._player is not None, "start() first"
        t = tick * self._dt
        if not self._finished and t + _EPS < self._end:
            self._player.step(t, q_meas)
        return self._update(t)

    def _update(self, t: float) -> Position:
        player = self._player
        assert player is not None
        self._finished = self._finished or player.done or t + _EPS >= self._end
        part = player.motion or self.position.part
        line = player.line if player.line is not None else self.position.frame
        # Float noise in tick * dt must not cost a percent (49.999... -> 50).
        progress = 100 if self._finished else int(player.progress + _PERCENT_EPS)
        self.position = Position(part, line, progress)
        return self.position
