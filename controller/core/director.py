"""Who owns which joints: keyframe scripts requested by name, beside or instead of the mode.

Joints are grouped into limbs (config: the humanoid's joint groups, the
quadruped's legs). The FSM state drives the limbs it declares
(`Behaviour.limbs_in_use`); a script request (script_request_t) names
scripts whose joints fall into some limbs, and:

* if the state leaves those limbs free (a Wave on the arm while the legs
  walk), the script runs beside it as an *overlay*: it plays into a shadow
  kernel, and each tick its segments and gains replace the state's for its
  joints only;
* if the state drives one of them, the script must outrank the command
  source that drives the state (robot_control_cmd 20, motion_goal 10, ...:
  config `priorities`); then it runs as the robot's script mode (config
  `scripts.mode`, e.g. 60 SCRIPT), entered through the FSM table like any
  mode, and a lower-priority robot_control_cmd cannot end it;
* a request never interrupts a running script of equal or higher priority
  and is refused instead, with the reason, on motion_event; a higher one
  preempts it.

Safety comes first: nothing starts while the robot is OFF, damping or in an
error state, and entering any of those cancels every script. Scripts are
loaded and validated from the configured directories at start (a bad file
is logged and refused, the rest load); a request only names them.

Pure: no sockets, no clock reads; the controller calls it once per tick.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from controller.core.goals import Event, EventKind, Reason
from controller.motion.mof import MofError, MotionNet, load_net
from controller.motion.playback import MofPlayback, Playback, ScriptPlayback
from controller.motion.script_library import ScriptLibrary
from controller.motion.scripts import ScriptError
from controller.robot.config import Config
from controller.robot.native import Kernel

SAFETY_MODES = (0, 7)            # OFF and the damper always win
MAX_NAMES = 16
MAX_NAME_CHARS = 64
MAX_START_AHEAD_NS = 60_000_000_000
# Slower is no motion (a 2 s script would take over 3 minutes), and a tiny
# factor makes a chain so long that its length in seconds no longer fits the
# float32 of motion_event.value: publishing SCRIPT_STARTED raised (fuzzing).
MIN_SPEED = 0.01
PLAY, CANCEL = 0, 1
# Kernel inputs an overlay owns for its joints (everything a segment or a
# gain ramp is made of).
SEGMENT_FIELDS = ("t0", "dur", "q0", "q1", "v0", "v1", "profile", "g_t0", "g_dur",
                  "kp0", "kp1", "kd0", "kd1", "tau_ff")


@dataclass(eq=False)
class ScriptRun:
    """One accepted request: what plays, for whom, at which priority."""
    request_id: int
    playback: Playback
    priority: int
    limbs: frozenset[str]
    start_ns: int
    overlay: bool = True
    started: bool = False        # the playback has begun (events sent)
    retried: bool = False        # a getup played again after it left the robot down
    ended: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.playback.name

    def describe(self) -> str:
        pos = self.playback.position
        return f"{pos.part} frame {pos.frame}"


def limbs_of(cfg: Config, indices: Iterable[int]) -> frozenset[str]:
    """The limbs holding any of the joints `indices`."""
    idx = {int(i) for i in indices}
    return frozenset(limb for limb, members in cfg.limbs.items() if idx & set(members))


class Director:
    def __init__(self, cfg: Config, kernel: Kernel) -> None:
        self.cfg = cfg
        self.kernel = kernel
        self.library = ScriptLibrary(cfg)
        # The robot's .mof net, parsed and linked once; bad files are left
        # out and kept in mof_errors (the controller logs them).
        self.mof_net: MotionNet | None = None
        self.mof_errors: tuple[MofError, ...] = ()
        if cfg.mof is not None:
            self.mof_net, self.mof_errors = load_net(cfg.mof)
        self.joint_index = {n: i for i, n in enumerate(cfg.joint_names)}
        self.all_limbs = frozenset(cfg.limbs)
        # Overlays play into this kernel; their joints are copied into the
        # real one each tick after the state has written its own.
        self.shadow = Kernel(cfg.q_min, cfg.q_max, cfg.v_max)
        # Joints of finished or cancelled overlays keep the script's last
        # targets until the state changes or needs them back (no snap back).
        self.holding = np.zeros(cfg.num_joints, dtype=bool)
        self.limb_mask = {limb: np.isin(np.arange(cfg.num_joints), idx)
                          for limb, idx in cfg.limbs.items()}
        self.pending: list[ScriptRun] = []
        self.overlays: list[ScriptRun] = []
        self.body: ScriptRun | None = None      # the run the script mode plays
        self.events: list[Event] = []
        self.last: ScriptRun | None = None      # for status: the run that started last

    # -- requests -------------------------------------------------------------------
    def end(self, run_or_id: ScriptRun | int, reason: Reason, text: str) -> None:
        if isinstance(run_or_id, ScriptRun):
            run_or_id.ended = True
            rid = run_or_id.request_id
            if run_or_id.overlay and run_or_id.started and reason != Reason.PREEMPTED:
                idx = run_or_id.playback.indices
                self.holding[idx] = True
                if reason == Reason.CANCELLED:     # stop where the joints are now
                    self.shadow.hold(self.kernel.pos[idx], idx=idx)
        else:
            rid = run_or_id
        self.events.append(Event(EventKind.SCRIPT_DONE, rid, 0, reason, text=text))

    def request(self, msg: Any, now_ns: int, epoch_offset_ns: int) -> str | None:
        """Check a decoded script_request_t and schedule it. Returns the
        refusal reason (also sent as SCRIPT_DONE / REFUSED), or None."""
        rid = int(msg.request_id)
        reason = self._refusal(msg)
        if reason is None and msg.action == CANCEL:
            self.cancel(rid, "cancelled by request")
            return None
        run = None
        if reason is None:
            try:
                playback = self._playback(msg)
                priority = int(msg.priority) or (self.cfg.scripts.default_priority
                                                 if self.cfg.scripts else 15)
                start_ns = max(now_ns, int(msg.start_utime) * 1000 - epoch_offset_ns) \
                    if msg.start_utime > 0 else now_ns
                if start_ns - now_ns > MAX_START_AHEAD_NS:
                    raise ValueError("start_utime is more than 60 s ahead")
                run = ScriptRun(rid, playback, priority,
                                limbs_of(self.cfg, playback.indices), start_ns)
            except (ScriptError, ValueError) as exc:
                reason = str(exc)
        if run is None:
            assert reason is not None
            self.end(rid, Reason.REFUSED, reason)
            return reason
        self.pending.append(run)
        self.pending.sort(key=lambda r: r.start_ns)
        return None

    def _playback(self, msg: Any) -> Playback:
        """A keyframe-script chain, or a motion of the robot's .mof net when
        one name is no script but a net motion (it plays alone, as written)."""
        names = list(msg.names)
        net = self.mof_net
        if net is not None and len(names) == 1 and names[0] in net.motions \
                and not self.library.has(names[0]):
            if msg.mirror or msg.total_ms or (msg.speed and msg.speed != 1.0):
                raise ValueError(f".mof motion {names[0]!r} plays as written: no mirror, "
                                 "total_ms or speed")
            return MofPlayback(net, names[0], self.cfg.dt)
        script = self.library.build(names, bool(msg.mirror), float(msg.total_ms),
                                    float(msg.speed))
        return ScriptPlayback(script, self.joint_index, self.cfg.dt)

    @staticmethod
    def _refusal(msg: Any) -> str | None:
        if msg.action not in (PLAY, CANCEL):
            return f"unknown action {msg.action}"
        # Oversized arrays and strings are refused whatever the action (a
        # CANCEL names no script, but carries no more than a PLAY may).
        fewest = 0 if msg.action == CANCEL else 1
        if not fewest <= msg.num_names <= MAX_NAMES:
            return f"give {fewest} to {MAX_NAMES} script names, got {msg.num_names}"
        if any(len(n) > MAX_NAME_CHARS for n in msg.names):
            return f"a script name is longer than {MAX_NAME_CHARS} characters"
        if msg.action == CANCEL:
            return None
        if not 0 <= msg.priority <= 100:
            return f"priority {msg.priority} is outside 0..100"
        if not (msg.speed == 0 or MIN_SPEED <= msg.speed < math.inf):
            return f"speed {msg.speed} must be 0 (as written) or a finite number >= {MIN_SPEED}"
        if msg.total_ms < 0:
            return f"total_ms {msg.total_ms} is negative"
        return None

    def cancel(self, request_id: int, text: str) -> None:
        """End script `request_id` (0: all, pending ones too): its joints stop
        where they are."""
        if not (self.pending or self.overlays or self.body):
            return
        for run in [*self.pending, *self.overlays, *([self.body] if self.body else [])]:
            if request_id in (0, run.request_id) and not run.ended:
                self.end(run, Reason.CANCELLED, text)
        self._forget_ended()

    def _forget_ended(self) -> None:
        self.pending = [r for r in self.pending if not r.ended]
        self.overlays = [r for r in self.overlays if not r.ended]

    # -- ownership ----------------------------------------------------------------------
    def holder(self, limbs: Iterable[str]) -> ScriptRun | None:
        """The highest-priority running script on any of `limbs`."""
        wanted = frozenset(limbs)
        runs = [r for r in [*self.overlays, self.body] if r and not r.ended and r.limbs & wanted]
        return max(runs, key=lambda r: r.priority, default=None)

    def due(self, now_ns: int) -> list[ScriptRun]:
        """Requests whose start time has come, removed from the pending list."""
        if not self.pending or self.pending[0].start_ns > now_ns:
            return []
        ready = [r for r in self.pending if r.start_ns <= now_ns]
        self.pending = [r for r in self.pending if r.start_ns > now_ns]
        return ready

    def blocking(self, run: ScriptRun) -> str | None:
        """Why a running script keeps `run` from its limbs (equal or higher
        priority), or None."""
        for other in [*self.overlays, self.body]:
            if other is None or other.ended or not (other.limbs & run.limbs):
                continue
            if other.priority >= run.priority:
                shared = ", ".join(sorted(other.limbs & run.limbs))
                return (f"{shared} is playing {other.name} (request {other.request_id}, "
                        f"priority {other.priority} >= {run.priority})")
        return None

    def preempt_for(self, run: ScriptRun, everything_of_body: bool = False) -> None:
        """End the (lower-priority) scripts on `run`'s limbs; with
        `everything_of_body`, also the script mode's run whatever its limbs
        (only one script plays in the script mode)."""
        for other in [*self.overlays, self.body]:
            if other is None or other.ended:
                continue
            if other.limbs & run.limbs or (everything_of_body and other is self.body):
                self.end(other, Reason.PREEMPTED,
                           f"preempted by {run.name} (request {run.request_id}, "
                           f"priority {run.priority})")
        self._forget_ended()

    def refuse(self, run: ScriptRun, text: str) -> None:
        self.end(run, Reason.REFUSED, text)

    # -- playing --------------------------------------------------------------------------
    def begin(self, run: ScriptRun, tick: int, q_cmd: np.ndarray, q_meas: np.ndarray,
              kernel: Kernel) -> None:
        """Start `run`'s playback into `kernel` and announce it."""
        run.playback.start(kernel, tick, q_cmd, q_meas)
        run.started = True
        self.last = run
        self.events.append(Event(EventKind.SCRIPT_STARTED, run.request_id, 0,
                                 value=run.playback.duration_s,
                                 text=f"{run.name} ({'overlay' if run.overlay else 'script mode'}, "
                                      f"priority {run.priority})"))

    def start_overlay(self, run: ScriptRun, tick: int, q_meas: np.ndarray) -> None:
        k, s = self.kernel, self.shadow
        for name in SEGMENT_FIELDS:
            getattr(s, name)[:] = getattr(k, name)
        self._sync_outputs()
        self.holding[run.playback.indices] = False
        self.begin(run, tick, k.pos.copy(), q_meas, s)
        self.overlays.append(run)

    def _sync_outputs(self) -> None:
        s, k = self.shadow, self.kernel
        s.pos[:], s.vel[:], s.kp[:], s.kd[:], s.tau[:] = k.pos, k.vel, k.kp, k.kd, k.tau

    def step_overlays(self, tick: int, q_meas: np.ndarray, state_limbs: frozenset[str],
                      state_priority: int | None, state_name: str) -> None:
        """After the state wrote the kernel: overlays the state now needs
        give way (unless they outrank it; `state_priority` None = a safety
        state, which always wins); the rest replace the state's segments on
        their joints."""
        if self.holding.any():
            for limb in state_limbs:
                self.holding[self.limb_mask[limb]] = False
            self._copy_in(np.flatnonzero(self.holding))
        if not self.overlays:
            return
        self._sync_outputs()
        for run in self.overlays:
            taken = run.limbs & state_limbs
            if taken and (state_priority is None or state_priority >= run.priority):
                self.end(run, Reason.PREEMPTED,
                           f"{state_name} needs {', '.join(sorted(taken))}")
                continue
            run.playback.step(tick, q_meas)
            self._copy_in(run.playback.indices)
            if run.playback.done:
                self.end(run, Reason.FINISHED, "played to its last frame")
        self._forget_ended()

    def _copy_in(self, idx: np.ndarray) -> None:
        """The shadow's segments and gain ramps of joints `idx` into the kernel."""
        for name in SEGMENT_FIELDS:
            getattr(self.kernel, name)[idx] = getattr(self.shadow, name)[idx]

    def release(self) -> None:
        """The state changed: it owns every joint no script plays."""
        self.holding[:] = False

    # -- status ----------------------------------------------------------------------------
    def status(self) -> tuple[str, int]:
        """(what plays: "Name frame k" per running script, progress of the
        last started one)."""
        running = [r for r in [self.body, *self.overlays] if r and r.started and not r.ended]
        text = "; ".join(r.describe() for r in running)
        progress = self.last.playback.position.progress if self.last else 0
        return text[:200], progress

    def take_events(self) -> list[Event]:
        if not self.events:
            return []
        events, self.events = self.events, []
        return events
