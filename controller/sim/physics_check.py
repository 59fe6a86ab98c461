"""Motion files run in physics (`motionctl validate --physics PATH...`).

`motionctl validate` checks a file as the daemon would load it; this plays
it in the MuJoCo simulator (controller/sim/trial.py: the controller and the
physics body in one process, on a fake clock) and judges what the body did,
so a motion author sees a fall before a robot does. Each file gets a fresh
Trial: the robot stands up first (mode 12 for PRELUDE_S, as the physics
scorecard's rows do), then the file plays as the daemon plays it:

* `.toml` step list: its command blocks (loaded with the same loader, at the
  robot's tick) become a motion of the controller's motion library, under
  the file's configured id or else a free one, and mode 62 with that id is
  sent and heart-beaten as `motionctl play` does; the queue expands it into
  its steps. One row per block ("step N", numbered as the loader's schedule
  check numbers them), over the ticks that block was the queue's active one;
  a continuous last step is judged over CONTINUOUS_S.
* `.yaml` keyframe script: a copy is put in a script directory of its own
  ahead of the robot's, and a script_request names it at a priority above
  robot_control_cmd's, so it plays in the script mode (or beside the stand
  when it moves only free limbs). One row per frame, over the ticks the
  playback was in that frame.
* `.mof`: the .mof files validate passed, linked as one net, replace the
  robot's net, and a script_request names the file's motion (a name that is
  no script plays from the net). One row per joint line ("line N" of the
  file), over the ticks it played; a motion that loops while requested (stand)
  ends where its first pass does, as the daemon's playback does.

After the motion, one more row ("after the end") covers SETTLE_S of what the
robot does next (the queue's hold after a step list, the stand after a
script).

Per row, from the simulator's ground truth (never the controller's belief):
whether and when the body tilted past FALL_TILT (FELL), the time any robot
geom other than a foot touched the ground (trunk contact, with the geoms),
the worst horizontal slide of a foot while it stayed on the ground (flagged
above SLIP_FLAG), and the share of ticks with a joint torque at its limit.
A row fails on a fall or on trunk contact, except trunk contact in a step
that commands a LIE_DOWN_MODES mode, which is reported as allowed. The run
stops FALL_GRACE_S after a fall; the rows not reached are listed.

A file that cannot be run (its robot has no physics model, or no way to play
that format) is reported as not run, with the reason; that is no failure. A
motion the controller refuses or does not finish is one.

Imports mujoco (through controller.sim.trial). controller/motion/validate.py
is a layer below and never imports this module: the command line hands
`PhysicsCheck` to `validate.add_parser(sub, physics=...)` through a function
that imports it only when --physics is given.
"""
from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import structlog

from controller import msgs
from controller.core.goals import EventKind, Reason
from controller.motion.mof import EXTERN, JointLine, MofError, MotionNet, build_net
from controller.motion.motions import SIT_DOWN_IDS, load_motion
from controller.motion.scripts import SCRIPT_SUFFIX, load_script
from controller.motion.validate import MOF, SCRIPT, TOML, Finding, kind_of, motion_root, shipped_robots
from controller.protocol.constants import MOTION_MODE, USER_GAIT
from controller.robot.config import Config
from controller.sim.mjcf import has_model
from controller.sim.scorecard import FELL_TILT, PRELUDE_S, foot_slip
from controller.sim.trial import Trial

FALL_TILT = FELL_TILT      # rad: roll or pitch beyond this is a fall (the scorecard's `fell`)
SLIP_FLAG = 0.02           # m: a foot sliding further than this while on the ground is flagged
LIE_DOWN_MODES = (7,)      # a step in these modes may rest the trunk on the ground
SETTLE_S = 0.3             # s after the motion, judged as its own row (under the 0.5 s
                           # command timeout, which a step list no longer heart-beats)
FALL_GRACE_S = 0.5         # s the run goes on after a fall before it stops
START_S = 1.0              # s the controller has to start the motion
CONTINUOUS_S = 1.0         # s of a continuous last step judged (it holds until the next command)
OVERRUN = (2.0, 2.0)       # the run gives up after 2 x the motion's length + 2 s
STAND_MODE = 12
FREE_MOTION_IDS = range(127, 0, -1)   # gait_id is an int8; the highest free id is used
SCRIPT_REQUEST_ID = 17


# -- results -------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """What the body did over one step (block, frame, joint line) of a motion."""
    label: str                 # e.g. "step 3 (21/1, 1 s)"
    start_s: float             # from the start of the motion
    seconds: float             # the window measured
    fell_at: float | None      # s from the start of the motion when the tilt passed FALL_TILT
    tilt: float                # rad, the largest roll or pitch in the window
    trunk_s: float             # s with a geom other than a foot on the ground
    trunk_geoms: tuple[str, ...]
    slip: float                # m
    saturation: float          # share of ticks with a torque at its limit
    lying: bool = False        # a lie-down step: trunk contact is allowed
    down: bool = False         # it began with the body down from a fall in an earlier row

    @property
    def trunk_fails(self) -> bool:
        return self.trunk_s > 0 and not self.lying

    @property
    def failed(self) -> bool:
        return self.fell_at is not None or self.trunk_fails

    def line(self) -> str:
        trunk = f"{_s(self.trunk_s, 3)} ({', '.join(self.trunk_geoms)})"
        if self.down and self.fell_at == self.start_s:
            parts = [f"DOWN since the fall (tilt up to {self.tilt:.2f} rad)"]
        elif self.fell_at is not None:
            parts = [f"FELL at {_s(self.fell_at)} (tilt {self.tilt:.2f} rad)"]
        elif self.trunk_fails:
            parts = [f"TRUNK CONTACT {trunk}"]
            trunk = ""
        else:
            parts = ["ok"]
        if self.trunk_s > 0 and trunk:
            allowed = " (a lie-down step: allowed)" if self.lying else ""
            parts.append(f"trunk contact {trunk}{allowed}")
        parts.append(_slip_text(self.slip))
        parts.append(f"saturation {round(100 * self.saturation)} %")
        return f"{self.label}: {'  '.join(parts)}"


@dataclass
class Report:
    """The physics verdict on one file."""
    path: Path
    robot: str = ""
    how: str = ""              # how it was played
    rows: list[Row] = field(default_factory=list)
    unreached: list[str] = field(default_factory=list)   # labels of steps never played
    not_run: str = ""          # why it was not run (no failure)
    error: str = ""            # why the run failed besides the rows (refused, unfinished, crash)
    seconds: float = 0.0       # the motion's simulated time, settle row included
    slip: float = 0.0          # worst slip over the whole motion

    @property
    def ran(self) -> bool:
        return not self.not_run

    @property
    def failed(self) -> bool:
        return bool(self.error) or any(r.failed for r in self.rows)

    def lines(self, indent: str = "  ") -> list[str]:
        if self.not_run:
            return [f"{indent}physics: not run ({self.not_run})"]
        falls = [r for r in self.rows if r.fell_at is not None]
        trunk = [r for r in self.rows if r.trunk_fails]
        verdict = ("FELL" if falls else "TRUNK CONTACT" if trunk else "FAIL" if self.error
                   else "ok")
        saturation = max((r.saturation for r in self.rows), default=0.0)
        about = ", ".join(x for x in (f"robot {self.robot}" if self.robot else "", self.how) if x)
        if self.rows:
            about += (f"; {_s(self.seconds)} after a {_s(PRELUDE_S)} stand; worst "
                      f"{_slip_text(self.slip)}; worst saturation {round(100 * saturation)} %")
        head = f"{indent}physics: {verdict}" + (f" ({about})" if about else "")
        lines = [head]
        if self.error:
            lines.append(f"{indent}  {self.error}")
        lines += [f"{indent}  {r.line()}" for r in self.rows]
        if self.unreached:
            lines.append(f"{indent}  not reached: {', '.join(self.unreached)}")
        return lines


def _s(seconds: float, digits: int = 2) -> str:
    return f"{round(seconds, digits):g} s"


def _slip_text(slip: float) -> str:
    flag = f" (over {SLIP_FLAG:g} m)" if slip > SLIP_FLAG else ""
    return f"slip {slip:.3f} m{flag}"


# -- running -------------------------------------------------------------------------
@dataclass
class _Steps:
    """The steps of a motion, as `locate` names them, in the order they play."""
    labels: dict[Hashable, str]               # key -> row label, in order
    nominal_s: float                          # the motion's length as written
    lying: set[Hashable] = field(default_factory=set)   # lie-down steps

    def label(self, key: Hashable) -> str:
        return self.labels.get(key, str(key))


class PhysicsCheck:
    """Runs the files validate passed, each in a fresh Trial; `.mof` files are
    linked as one net first (those that passed, with the robot's binding)."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        self._mof = [f.path for f in findings if f.ok and kind_of(f.path) == MOF]
        self._net: MotionNet | None = None
        self._net_error = ""
        self._robots: list[Config] | None = None

    def report(self, finding: Finding) -> Report:
        """Run one file that passed validate; a crash becomes its error."""
        path = finding.path
        kind = kind_of(path)
        try:
            with _quiet_controller():
                if kind == TOML:
                    return self._toml(finding)
                if kind == SCRIPT:
                    return self._script(finding)
                if kind == MOF:
                    return self._mof_motion(finding)
        except Exception as exc:       # noqa: BLE001 - this file's failure; the rest still run
            return Report(path, error=f"the physics run crashed: {type(exc).__name__}: {exc}")
        return Report(path, not_run=f"no physics run for {path.suffix} files")

    # .toml ---------------------------------------------------------------------------
    def _toml(self, finding: Finding) -> Report:
        path = finding.path
        cfg = finding.robot if finding.robot is not None else self._motion_robot(path)
        if cfg is None:
            return Report(path, not_run="no shipped robot config has a motion library "
                                        "(config `motions`); give one with --config")
        if cfg.motions is None:
            return Report(path, cfg.robot, not_run=f"robot {cfg.robot} has no motion library "
                                                   f"(config `motions`), so no mode {MOTION_MODE}")
        if not has_model(cfg):
            return _no_model(path, cfg)
        hz = cfg.tick_hz
        blocks = load_motion(path, motion_root(path, cfg), 1000.0 / hz)
        trial = _standing(cfg)
        library, queue = trial.ctl.motions, trial.ctl.queue
        assert library is not None          # cfg.motions is set
        motion_id = _configured_id(path, cfg)
        if motion_id is None:
            motion_id = next(i for i in FREE_MOTION_IDS if i not in library.motions
                             and i not in library.errors and i not in SIT_DOWN_IDS
                             and i != USER_GAIT)
            how = f"played as mode {MOTION_MODE}/{motion_id}, a free motion id"
        else:
            how = f"played as mode {MOTION_MODE}/{motion_id}, its configured motion id"
        library.motions[motion_id] = blocks
        hold = int(CONTINUOUS_S * hz)
        steps = _Steps({i: f"step {i + 1} ({b.mode}/{b.gait_id}, "
                           f"{_s(b.duration / hz) if b.duration else f'continuous, {_s(CONTINUOUS_S)} of it'})"
                        for i, b in enumerate(blocks)},
                       sum(b.duration or hold for b in blocks) / hz,
                       {i for i, b in enumerate(blocks) if b.mode in LIE_DOWN_MODES})
        keys: dict[int, Hashable] = {}      # uid of a block the queue plays -> its key

        def locate() -> Hashable | None:
            if not keys:
                if queue.motion_id != motion_id or queue.motion_trigger == 0:
                    return _WAITING
                expanded = list(queue.blocks)
                extra = len(expanded) - len(blocks)      # a sit-down exit, never after a stand
                for i, block in enumerate(expanded):
                    keys[block.uid] = i - extra if i >= extra else ("exit", i)
                    if i < extra:
                        steps.labels = {("exit", i): "sit-down exit", **steps.labels}
            active = queue.active
            if active is None or (active.duration == 0 and queue.timer >= hold):
                return None      # a continuous last step holds until the next command
            return keys.get(active.uid)

        origin = len(trial.trace.t)
        trial.send(MOTION_MODE, gait_id=motion_id)
        run = _follow(trial, locate, steps.nominal_s)
        if run.waiting:
            reason = trial.ctl.motion_refusal or f"it stayed in mode {trial.trace.mode[-1]}"
            return Report(path, cfg.robot, how, error=f"the controller did not start the motion "
                                                      f"within {_s(START_S)}: {reason}")
        # After the motion, what the queue does next (its hold), without the
        # heartbeat that would start the motion again.
        return _judge(trial, Report(path, cfg.robot, how), origin, run, steps, heartbeat=False)

    def _motion_robot(self, path: Path) -> Config | None:
        """The shipped robot with a motion library whose motion directory
        holds the file, else the first with a motion library."""
        robots = [c for c in self._shipped() if c.motions is not None]
        home = [c for c in robots if c.motions is not None
                and path.resolve().is_relative_to(c.motions.directory.resolve())]
        return home[0] if home else robots[0] if robots else None

    def _shipped(self) -> list[Config]:
        if self._robots is None:
            self._robots = shipped_robots()
        return self._robots

    # .yaml ---------------------------------------------------------------------------
    def _script(self, finding: Finding) -> Report:
        path, cfg = finding.path, finding.robot
        if cfg is None:
            return Report(path, not_run="validate chose no robot for it")
        if not has_model(cfg):
            return _no_model(path, cfg)
        sc = cfg.scripts
        if sc is None or sc.mode is None:
            return Report(path, cfg.robot, not_run=f"robot {cfg.robot} has no script mode "
                                                   "(config scripts.mode): its scripts play only "
                                                   "inside its scripted modes")
        with tempfile.TemporaryDirectory(prefix="motionctl-validate-") as tmp:
            # A directory of its own, searched first: the request names this file
            # and nothing else where it lives is loaded.
            name = path.stem if _plain_name(path.stem) else "validated"
            copy = Path(tmp) / f"{name}{SCRIPT_SUFFIX}"
            shutil.copyfile(path, copy)
            script = load_script(copy, cfg)
            part = script.parts[0].name
            steps = _Steps({(part, k + 1): f"frame {k + 1} ({_s(f.duration_ticks / cfg.tick_hz)})"
                            for k, f in enumerate(script.frames)}, script.duration_ms / 1000.0)
            cfg = replace(cfg, scripts=replace(sc, directories=(Path(tmp), *sc.directories)))
            return self._request(path, cfg, name, steps, "played by a script request")

    # .mof ----------------------------------------------------------------------------
    def _mof_motion(self, finding: Finding) -> Report:
        path, cfg = finding.path, finding.robot
        if cfg is None or cfg.mof is None:
            return Report(path, not_run="no robot config with this .mof binding loads")
        if not has_model(cfg):
            return _no_model(path, cfg)
        net = self._mof_net(cfg)
        if net is None:
            return Report(path, cfg.robot, error=f"the .mof net does not link: {self._net_error}")
        names = [n for n, m in net.motions.items() if Path(m.source).resolve() == path.resolve()]
        if not names:
            if Path(net.extern.source).resolve() == path.resolve():
                return Report(path, cfg.robot, not_run=f"{EXTERN} is the net's entry and exit; "
                                                       "each motion runs from its own file")
            return Report(path, cfg.robot, error="its motion is not in the linked net")
        name = names[0]
        entry = net.entry(name)
        plan = net.plan(entry, name) if entry is not None else None
        labels: dict[Hashable, str] = {}
        for motion, index in plan.lines if plan is not None else ():
            line = net.motions[motion].instructions[index]
            assert isinstance(line, JointLine)
            where = "" if motion == name else f" of {motion}"
            labels[(motion, line.line)] = f"line {line.line}{where} ({_s(line.duration)})"
        steps = _Steps(labels, plan.duration if plan is not None else 0.0)
        return self._request(path, cfg, name, steps,
                             f"net motion {name!r} played by a script request", net)

    def _mof_net(self, cfg: Config) -> MotionNet | None:
        if self._net is None and not self._net_error:
            assert cfg.mof is not None
            errors: list[MofError] = []
            self._net = build_net(self._mof, cfg.mof.columns, errors)
            if errors:      # validate passed these files linked together
                self._net, self._net_error = None, "; ".join(str(e) for e in errors)
        return self._net

    # script requests (.yaml, .mof) --------------------------------------------------------
    def _request(self, path: Path, cfg: Config, name: str, steps: _Steps, how: str,
                 net: MotionNet | None = None) -> Report:
        events: list[msgs.motion_event_t] = []
        trial = _standing(cfg, events)
        director = trial.ctl.director
        if net is not None:
            director.mof_net = net
        msg = msgs.script_request_t()
        msg.utime = trial.now_ns // 1000
        msg.request_id = SCRIPT_REQUEST_ID
        # Above the stand's robot_control_cmd, or a full-body script is refused.
        msg.priority = min(100, cfg.priorities["robot_control_cmd"] + 1)
        msg.names = [name]
        msg.num_names = 1

        def locate() -> Hashable | None:
            run = director.last
            if run is None or run.request_id != SCRIPT_REQUEST_ID or not run.started:
                return None if _done(events) is not None else _WAITING
            if run.playback.done or run.ended:
                return None
            return run.playback.position.part, run.playback.position.frame

        origin = len(trial.trace.t)
        trial.pending.append((trial.ch["script_request"], msg.encode()))
        run = _follow(trial, locate, steps.nominal_s)
        done = _done(events)
        if not run.segments:
            reason = done.text if done is not None else "no answer"
            return Report(path, cfg.robot, how, error=f"the controller did not start it: {reason}")
        last = director.last
        if last is not None:
            how += (f" beside the stand (mode {STAND_MODE}; it moves free limbs only)"
                    if last.overlay
                    else f" in the script mode {cfg.scripts.mode if cfg.scripts else '?'}")
        report = Report(path, cfg.robot, how)
        if done is not None and done.reason not in (Reason.FINISHED, Reason.NONE):
            report.error = f"it did not finish: {done.text}"
        return _judge(trial, report, origin, run, steps, heartbeat=True)


# -- the trial ----------------------------------------------------------------------------
_WAITING = "waiting"     # locate(): the controller has not started the motion yet


@dataclass
class _Run:
    segments: list[tuple[Hashable, int, int]] = field(default_factory=list)  # key, rows [a, b)
    waiting: bool = False      # never started
    stopped: str = ""          # why it stopped before the motion's end
    fell_row: int | None = None


def _standing(cfg: Config, events: list[msgs.motion_event_t] | None = None) -> Trial:
    """A Trial whose robot has stood up (mode 12 for PRELUDE_S); `events`
    collects the motion_event answers."""
    wanted = cfg.lcm.channels["motion_event"]

    def record(port: str, utime: int, channel: str, data: bytes) -> None:
        if channel == wanted and events is not None:
            events.append(msgs.motion_event_t.decode(data))

    trial = Trial(cfg, recorder=record if events is not None else None)
    trial.send(STAND_MODE)
    trial.run(PRELUDE_S)
    return trial


def _follow(trial: Trial, locate: Callable[[], Hashable | None], nominal_s: float) -> _Run:
    """Tick until `locate` says the motion is over (None), grouping the trace
    rows by the step it says played on each tick; the rows before the start
    (`_WAITING`) count into the first step. Stops FALL_GRACE_S after a fall,
    or when the motion overruns its length (OVERRUN)."""
    run = _Run()
    hz = trial.cfg.tick_hz
    limit = int((OVERRUN[0] * nominal_s + OVERRUN[1] + START_S) * hz)
    grace = int(FALL_GRACE_S * hz)
    first = len(trial.trace.t)
    for tick in range(limit):
        trial.tick()
        row = len(trial.trace.t) - 1
        key = locate()
        if key is None:
            return run
        if key == _WAITING:
            if run.segments:         # cannot happen: once started, a motion plays on
                return run
            if tick + 1 >= START_S * hz:
                run.waiting = True
                return run
            continue
        if run.segments and run.segments[-1][0] == key:
            k, a, _ = run.segments[-1]
            run.segments[-1] = (k, a, row + 1)
        else:
            run.segments.append((key, row if run.segments else first, row + 1))
        if run.fell_row is None and _tilt(trial, row) > FALL_TILT:
            run.fell_row = row
        if run.fell_row is not None and row - run.fell_row >= grace:
            run.stopped = f"stopped {_s(FALL_GRACE_S)} after the fall"
            return run
    run.stopped = f"did not finish within {_s(limit / hz)}"
    return run


def _judge(trial: Trial, report: Report, origin: int, run: _Run, steps: _Steps,
           heartbeat: bool) -> Report:
    """The rows of a run that started; then, unless it was stopped, SETTLE_S
    more (with or without the client's heartbeat) as the last row."""
    for key, a, b in run.segments:
        down = run.fell_row is not None and run.fell_row < a
        report.rows.append(_row(trial, steps.label(key), origin, a, b, key in steps.lying, down))
    if run.stopped:
        played = {key for key, _, _ in run.segments}
        report.unreached = [label for key, label in steps.labels.items() if key not in played]
        if run.fell_row is None:
            report.error = report.error or f"the motion {run.stopped}"
    else:
        a = len(trial.trace.t)
        trial.run(SETTLE_S, heartbeat=heartbeat)
        report.rows.append(_row(trial, f"after the end ({_s(SETTLE_S)})", origin, a,
                                len(trial.trace.t), False, run.fell_row is not None))
    end = len(trial.trace.t)
    report.seconds = (end - origin) / trial.cfg.tick_hz
    report.slip = _slip(trial, origin, end)
    return report


def _row(trial: Trial, label: str, origin: int, a: int, b: int, lying: bool,
         down: bool = False) -> Row:
    """The metrics of trace rows [a, b), times from row `origin`."""
    tr, hz = trial.trace, trial.cfg.tick_hz
    rpy = np.array(tr.rpy[a:b])
    tilt = np.max(np.abs(rpy[:, :2]), axis=1)
    over = np.flatnonzero(tilt > FALL_TILT)
    feet = set(trial.feet)
    others = [c - feet for c in tr.contacts[a:b]]
    return Row(label=label, start_s=(a - origin) / hz, seconds=(b - a) / hz,
               fell_at=(a + int(over[0]) - origin) / hz if len(over) else None,
               tilt=float(tilt.max()), trunk_s=sum(1 for o in others if o) / hz,
               trunk_geoms=tuple(sorted(set().union(*others))), slip=_slip(trial, a, b),
               saturation=float(np.mean(tr.saturated[a:b])), lying=lying, down=down)


def _slip(trial: Trial, a: int, b: int) -> float:
    """Worst foot slide over trace rows [a, b) (the scorecard's measure)."""
    tr = trial.trace
    return (foot_slip(np.array(tr.foot_slide[a:b]), tr.contacts[a:b], trial.feet, trial.cfg.dt)
            if b > a else 0.0)


def _tilt(trial: Trial, row: int) -> float:
    roll, pitch, _ = trial.trace.rpy[row]
    return max(abs(roll), abs(pitch))


# -- helpers ---------------------------------------------------------------------------------
def _no_model(path: Path, cfg: Config) -> Report:
    return Report(path, cfg.robot, not_run=f"robot {cfg.robot} has no physics model "
                                           "(config/physics/<robot>.yaml)")


def _configured_id(path: Path, cfg: Config) -> int | None:
    """The motion id the robot's config gives this file, if any."""
    assert cfg.motions is not None
    target = path.resolve()
    for motion_id, name in sorted(cfg.motions.files.items()):
        if (cfg.motions.directory / name).resolve() == target:
            return motion_id
    return None


def _plain_name(stem: str) -> bool:
    """A name a script request may carry (controller/motion/scripts.py's rule)."""
    return bool(stem) and not stem.startswith(".") and ".." not in stem \
        and all(c.isascii() and (c.isalnum() or c in "_.-") for c in stem)


def _done(events: list[msgs.motion_event_t]) -> msgs.motion_event_t | None:
    """The SCRIPT_DONE answer to the request, if it came."""
    for event in events:
        if event.goal_id == SCRIPT_REQUEST_ID and event.kind == EventKind.SCRIPT_DONE:
            return event
    return None


@contextlib.contextmanager
def _quiet_controller() -> Iterator[None]:
    """The controllers' logs off while they run (what matters of them, a
    refusal, is in the report); the logging setup is restored after."""
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
    try:
        yield
    finally:
        structlog.configure(**saved)
