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

* user gaits (SPEC §8; `.toml` files whose first line is `# Gait Def` or
  `# Gait Params`): Gait Params need a Gait Def. They pair with the one Def
  given in the same run; of several Defs given, with the one in their own
  directory; with none given, with the only Def in their directory; otherwise
  they are not run, with the reason. Both texts are published on the
  controller's user_gait_file channel, UPLOAD_WAIT_S apart (a refusal is the
  run's error), then mode 62/110 is sent and heart-beaten as for a step list:
  one row per Params step. A Def that Params of the run pair with is played
  under them (reported not run, naming them); a Def alone is uploaded and
  walked in place as mode 11/110 with DEF_STEP_HEIGHT steps, for DEF_CYCLES
  cycles or DEF_ALONE_S, whichever is longer: one row per cycle (cycles
  shorter than DEF_ROW_S are grouped).

After the motion, one more row ("after the end") covers SETTLE_S of what the
robot does next (the queue's hold after a step list, the stand after a
script).

Per row, from the simulator's ground truth (never the controller's belief):
whether and when the body tilted past FALL_TILT (FELL), the time any robot
geom other than a foot touched the ground (trunk contact, with the geoms),
the worst horizontal slide of a foot's contact point while it stayed on the
ground (a ball foot that rolls does not slide; flagged above SLIP_FLAG), and
the share of ticks with a joint torque at its limit.
A row fails on a fall or on trunk contact, except trunk contact in a step
that commands a LIE_DOWN_MODES mode, and a limb (a knee, never the torso) on
the floor in a POSE_MODES step of a step list or in the hold after one where
the commanded pose itself puts that limb within POSE_TOUCH of the floor (the
joint targets sent, on the body where it is: the robot's own sit-downs fold
the rear knees onto it), which are reported as allowed. A limb that touches
because the body sank or tipped still fails. The run
stops FALL_GRACE_S after a fall; the rows not reached are listed.

A file that cannot be run (its robot has no physics model, or no way to play
that format) is reported as not run, with the reason; that is no failure. A
motion the controller refuses or does not finish is one.

Imports mujoco (through controller.sim.trial). controller/motion/validate.py
is a layer below and never imports this module: the command line hands
`PhysicsCheck` to `validate.add_parser(sub, summary, physics=...)` through a function
that imports it only when --physics is given.
"""
from __future__ import annotations

import contextlib
import logging
import math
import shutil
import tempfile
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import mujoco
import numpy as np
import structlog

from controller import msgs
from controller.core.goals import EventKind, Reason
from controller.motion.mof import EXTERN, JointLine, MofError, MotionNet, build_net
from controller.motion.motions import SIT_DOWN_IDS, load_motion
from controller.motion.scripts import SCRIPT_SUFFIX, load_script
from controller.motion.usergait import (
    DEFAULT_LIMITS,
    LOCOMOTION,
    pack_landing_gain,
    pack_step_heights,
    parse_gait_def,
    parse_gait_params,
)
from controller.motion.validate import (
    GAIT_DEF,
    GAIT_PARAMS,
    MOF,
    SCRIPT,
    TOML,
    Finding,
    kind_of,
    motion_root,
    shipped_robots,
)
from controller.protocol.block import Block
from controller.protocol.constants import MOTION_MODE, USER_GAIT
from controller.robot.config import Config
from controller.sim.mjcf import has_model
from controller.sim.progress import Progress
from controller.sim.scorecard import FELL_TILT, PRELUDE_S, foot_slip, trunk_geoms
from controller.sim.trial import Trial

FALL_TILT = FELL_TILT      # rad: roll or pitch beyond this is a fall (the scorecard's `fell`)
SLIP_FLAG = 0.02           # m: a foot sliding further than this while on the ground is flagged
LIE_DOWN_MODES = (7,)      # a step in these modes may rest the trunk on the ground
POSE_MODES = (21, 3)       # ... and in these a limb (a knee) the pose puts there, never the torso
POSE_TOUCH = 0.01          # m: a limb the commanded pose puts this close to the floor may touch it
SETTLE_S = 0.3             # s after the motion, judged as its own row (under the 0.5 s
                           # command timeout, which a step list no longer heart-beats)
FALL_GRACE_S = 0.5         # s the run goes on after a fall before it stops
START_S = 1.0              # s the controller has to start the motion
CONTINUOUS_S = 1.0         # s of a continuous last step judged (it holds until the next command)
OVERRUN = (2.0, 2.0)       # the run gives up after 2 x the motion's length + 2 s
STAND_MODE = 12
UPLOAD_WAIT_S = 0.5        # s after each user-gait upload (the official example waits 0.5 s)
DEF_CYCLES = 2             # a Gait Def alone walks in place at least this many cycles...
DEF_ALONE_S = 3.0          # ...and at least this long
DEF_STEP_HEIGHT = 0.04     # m, every foot (the example's front feet)
DEF_ROW_S = 0.5            # s: shorter cycles are judged a few at a time
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
    kneeling: bool = False     # a pose step whose contact was a limb's, never the torso's

    @property
    def trunk_fails(self) -> bool:
        return self.trunk_s > 0 and not self.lying and not self.kneeling

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
            allowed = " (allowed: a lie-down or getup step)" if self.lying else \
                " (allowed: a knee in a pose)" if self.kneeling else ""
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
    posing: set[Hashable] = field(default_factory=set)  # pose steps (a knee may touch)
    # A getup (config fall.except_scripts): it goes down to the floor and
    # comes up on purpose, so its steps may tilt and touch; only the end counts.
    getup: bool = False

    def label(self, key: Hashable) -> str:
        return self.labels.get(key, str(key))


class PhysicsCheck:
    """Runs the files validate passed, each in a fresh Trial; `.mof` files are
    linked as one net first (those that passed, with the robot's binding)."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        self._mof = [f.path for f in findings if f.ok and kind_of(f.path) == MOF]
        # User gaits: Params pair with a Def (see `_pair`); every Def given counts
        # for the pairing, and one that failed validate is named as the reason.
        self._defs = {f.path.resolve(): f for f in findings if kind_of(f.path) == GAIT_DEF}
        self._params = [f.path for f in findings if f.ok and kind_of(f.path) == GAIT_PARAMS]
        self._net: MotionNet | None = None
        self._net_error = ""
        self._robots: list[Config] | None = None
        # On a terminal, a bar with the time left while a file runs (validate
        # prints each file's verdict itself, so nothing more off a terminal).
        self._bar = Progress(sum(f.ok for f in findings), "files run in physics", lines=0)

    def report(self, finding: Finding) -> Report:
        """Run one file that passed validate; a crash becomes its error."""
        self._bar.show(f"running {finding.path.name}")
        report = self._report(finding)
        self._bar.clear()
        self._bar.count(not report.failed)
        return report

    def _report(self, finding: Finding) -> Report:
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
                if kind == GAIT_PARAMS:
                    return self._gait_params(finding)
                if kind == GAIT_DEF:
                    return self._gait_def(finding)
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
        blocks = load_motion(path, motion_root(path, cfg), 1000.0 / cfg.tick_hz)
        trial = _standing(cfg)
        library = trial.ctl.motions
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
        return _play_steps(trial, Report(path, cfg.robot, how), blocks, motion_id)

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

    # user gaits (SPEC §8) --------------------------------------------------------------
    def _pair(self, params: Path) -> tuple[Path | None, str]:
        """The Gait Def the Params file runs with, or None and why not: the one
        Def given in this run; of several given, the one in its directory;
        with none given, the only Def in its directory."""
        here = params.resolve().parent
        given = list(self._defs)
        if len(given) > 1:
            given = [d for d in given if d.parent == here]
            if len(given) != 1:
                return None, (f"{len(self._defs)} Gait Defs were given and {len(given)} of them "
                              "are in its directory: give the one it goes with")
        if not given:
            given = sorted(d.resolve() for d in here.glob("*.toml")
                           if d.is_file() and kind_of(d) == GAIT_DEF)
            if len(given) != 1:
                found = f"{len(given)} ({', '.join(d.name for d in given)})" if given else "none"
                return None, (f"Gait Params run with a Gait Def: none was given and its "
                              f"directory has {found}; give the Def with it "
                              "(motionctl validate --physics DEF PARAMS)")
        definition = given[0]
        finding = self._defs.get(definition)
        if finding is not None and not finding.ok:
            return None, f"its Gait Def {definition.name} fails validate"
        return definition, ""

    def _gait_robot(self, finding: Finding) -> Config | Report:
        """The robot a user gait runs on (validate's choice), or a not-run Report."""
        path, cfg = finding.path, finding.robot
        if cfg is None:
            return Report(path, not_run="no robot config has a quadruped gait generator "
                                        "(config `locomotion`) to take user gaits")
        if cfg.locomotion is None:
            return Report(path, cfg.robot, not_run=f"robot {cfg.robot} has no quadruped gait "
                                                   "generator (config `locomotion`)")
        if not has_model(cfg):
            return _no_model(path, cfg)
        return cfg

    def _gait_params(self, finding: Finding) -> Report:
        """Upload the Def it pairs with and the Params, as a client does, then
        run mode 62/110: one row per Params step."""
        path = finding.path
        definition, why = self._pair(path)
        if definition is None:
            return Report(path, not_run=why)
        cfg = self._gait_robot(finding)
        if isinstance(cfg, Report):
            return cfg
        text = path.read_text(encoding="utf-8")
        blocks = parse_gait_params(text, 1000.0 / cfg.tick_hz)
        given = definition in self._defs
        how = (f"uploaded with the Gait Def {definition.name}"
               f"{'' if given else ' from its directory'}, played as mode {MOTION_MODE}/{USER_GAIT}")
        answers: list[int] = []
        trial = _standing(cfg, answers=answers)
        refused = _upload(trial, answers, [(definition, definition.read_text(encoding="utf-8")),
                                           (path, text)])
        if refused:
            return Report(path, cfg.robot, how, error=refused)
        return _play_steps(trial, Report(path, cfg.robot, how), blocks, USER_GAIT)

    def _gait_def(self, finding: Finding) -> Report:
        """A Def with Params in this run is played under them; one without
        walks in place (mode 11/110, DEF_STEP_HEIGHT steps) for DEF_CYCLES
        cycles or DEF_ALONE_S, whichever is longer: one row per cycle (per
        whole cycles of at least DEF_ROW_S when a cycle is shorter)."""
        path = finding.path
        partners = [p.name for p in self._params if self._pair(p)[0] == path.resolve()]
        if partners:
            return Report(path, not_run=f"played under its Gait Params: {', '.join(partners)}")
        cfg = self._gait_robot(finding)
        if isinstance(cfg, Report):
            return cfg
        text = path.read_text(encoding="utf-8")
        gait = parse_gait_def(text)
        hz = cfg.tick_hz
        period = max(1, round(gait.period_s * hz))       # ticks
        cycles = max(DEF_CYCLES, math.ceil(DEF_ALONE_S * hz / period))
        duration_ms = math.ceil(cycles * period * 1000 / hz)
        how = (f"walked in place as mode {LOCOMOTION}/{USER_GAIT} for {cycles} cycles with "
               f"{DEF_STEP_HEIGHT * 100:g} cm steps, no Gait Params given with it")
        answers: list[int] = []
        trial = _standing(cfg, answers=answers)
        refused = _upload(trial, answers, [(path, text)])
        if refused:
            return Report(path, cfg.robot, how, error=refused)
        ticks = int(duration_ms * hz // 1000)     # as the controller turns ms into ticks
        per = max(1, math.ceil(DEF_ROW_S * hz / period))     # cycles per row
        rows = math.ceil(cycles / per)
        labels: dict[Hashable, str] = {}
        for k in range(rows):
            first, last = k * per + 1, min(cycles, (k + 1) * per)
            which = f"cycle {first}" if first == last else f"cycles {first}-{last}"
            labels[k] = f"{which} ({_s((last - first + 1) * period / hz)})"
        steps = _Steps(labels, duration_ms / 1000.0)
        queue = trial.ctl.queue
        walked: list[bool] = []

        def locate() -> Hashable | None:
            active = queue.active
            if active is None or not (active.mode == LOCOMOTION and active.gait_id == USER_GAIT
                                      and active.duration == ticks):
                return _WAITING      # before it; after it, _follow ends the run
            walked.append(trial.trace.mode[-1] == LOCOMOTION and trial.trace.gait[-1] == USER_GAIT)
            return min(queue.timer // (period * per), rows - 1)

        origin = len(trial.trace.t)
        trial.send(LOCOMOTION, gait_id=USER_GAIT, duration=duration_ms,
                   step_height=pack_step_heights([DEF_STEP_HEIGHT] * 4),
                   contact=pack_landing_gain(1.0), ctrl_point=[0.0, 0.0, DEFAULT_LIMITS.default_mu])
        run = _follow(trial, locate, steps.nominal_s)
        report = Report(path, cfg.robot, how)
        if run.waiting:
            report.error = f"the controller did not start it within {_s(START_S)}"
            return report
        if not any(walked):
            report.error = (f"the controller did not walk it: "
                            f"{trial.ctl.counters.last_error or 'no mode 11/110 reported'}")
        # After the walk, the queue's filler (the locomotion stand), the client
        # still heart-beating.
        return _judge(trial, report, origin, run, steps, heartbeat=True)

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
            how = "played by a script request"
            if cfg.fall is not None and part in cfg.fall.except_scripts:
                steps.getup = True
                steps.lying = set(steps.labels)
                how = ("a getup (config fall.except_scripts: down on the floor and up again on "
                       "purpose; only its end must be upright), " + how)
            return self._request(path, cfg, name, steps, how)

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

        def locate() -> Hashable | None:
            run = director.last
            if run is None or run.request_id != SCRIPT_REQUEST_ID or not run.started:
                return None if _done(events) is not None else _WAITING
            if run.playback.done or run.ended:
                return None
            return run.playback.position.part, run.playback.position.frame

        origin = len(trial.trace.t)
        trial.send_script(name, SCRIPT_REQUEST_ID)
        run = _follow(trial, locate, steps.nominal_s, steps.getup)
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
        if any(trial.trace.fall_seen[origin:]):
            report.error = ("it did not finish: the controller saw the robot falling and "
                            f"stopped it ({trial.ctl.counters.last_error})")
        elif done is not None and done.reason not in (Reason.FINISHED, Reason.NONE):
            report.error = f"it did not finish: {done.text}"
        return _judge(trial, report, origin, run, steps, heartbeat=True)


def _play_steps(trial: Trial, report: Report, blocks: Sequence[Block], motion_id: int) -> Report:
    """Send mode 62 with `motion_id`, heart-beaten as `motionctl play` does,
    and judge one row per block of `blocks` (the steps the queue expands it
    into), then the queue's hold after them."""
    hz = trial.cfg.tick_hz
    queue = trial.ctl.queue
    hold = int(CONTINUOUS_S * hz)
    steps = _Steps({i: f"step {i + 1} ({b.mode}/{b.gait_id}, "
                       f"{_s(b.duration / hz) if b.duration else f'continuous, {_s(CONTINUOUS_S)} of it'})"
                    for i, b in enumerate(blocks)},
                   sum(b.duration or hold for b in blocks) / hz,
                   {i for i, b in enumerate(blocks) if b.mode in LIE_DOWN_MODES},
                   {i for i, b in enumerate(blocks) if b.mode in POSE_MODES})
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
        reason = trial.ctl.gaits.motion_refusal or f"it stayed in mode {trial.trace.mode[-1]}"
        report.error = f"the controller did not start the motion within {_s(START_S)}: {reason}"
        return report
    # After the motion, what the queue does next (its hold), without the
    # heartbeat that would start the motion again.
    return _judge(trial, report, origin, run, steps, heartbeat=False)


# -- the trial ----------------------------------------------------------------------------
_WAITING = "waiting"     # locate(): the controller has not started the motion yet


@dataclass
class _Run:
    segments: list[tuple[Hashable, int, int]] = field(default_factory=list)  # key, rows [a, b)
    waiting: bool = False      # never started
    stopped: str = ""          # why it stopped before the motion's end
    fell_row: int | None = None


def _standing(cfg: Config, events: list[msgs.motion_event_t] | None = None,
              answers: list[int] | None = None) -> Trial:
    """A Trial whose robot has stood up (mode 12 for PRELUDE_S); `events`
    collects the motion_event answers, `answers` the user_gait_result ones."""
    wanted = cfg.lcm.channels["motion_event"]
    result = cfg.lcm.channels["user_gait_result"]

    def record(port: str, utime: int, channel: str, data: bytes) -> None:
        if channel == wanted and events is not None:
            events.append(msgs.motion_event_t.decode(data))
        elif channel == result and answers is not None:
            answers.append(msgs.file_recv_lcmt.decode(data).result)

    listening = events is not None or answers is not None
    trial = Trial(cfg, recorder=record if listening else None)
    trial.keep_targets = True     # a limb's contact is judged against the pose commanded
    trial.send(STAND_MODE)
    trial.run(PRELUDE_S)
    return trial


def _upload(trial: Trial, answers: list[int], files: Sequence[tuple[Path, str]]) -> str:
    """Publish each text on user_gait_file, UPLOAD_WAIT_S apart (as the official
    example waits after the Def), the stand heart-beaten; why the controller
    refused one, or "" when it answered 0 to all."""
    for path, text in files:
        before = len(answers)
        trial.send_file(text)
        trial.run(UPLOAD_WAIT_S)
        if answers[before:] != [0]:
            said = "no answer" if len(answers) == before else trial.ctl.counters.last_error
            return f"the controller refused the upload of {path.name}: {said}"
    return ""


def _follow(trial: Trial, locate: Callable[[], Hashable | None], nominal_s: float,
            getup: bool = False) -> _Run:
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
        if run.fell_row is None and not getup and _tilt(trial, row) > FALL_TILT:
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
        report.rows.append(_row(trial, steps.label(key), origin, a, b, key in steps.lying, down,
                                tipping=steps.getup, posing=key in steps.posing))
    if run.stopped:
        played = {key for key, _, _ in run.segments}
        report.unreached = [label for key, label in steps.labels.items() if key not in played]
        if run.fell_row is None:
            report.error = report.error or f"the motion {run.stopped}"
    else:
        a = len(trial.trace.t)
        trial.run(SETTLE_S, heartbeat=heartbeat)
        last = run.segments[-1][0] if run.segments else None
        report.rows.append(_row(trial, f"after the end ({_s(SETTLE_S)})", origin, a,
                                len(trial.trace.t), False, run.fell_row is not None,
                                posing=last in steps.posing))
    end = len(trial.trace.t)
    report.seconds = (end - origin) / trial.cfg.tick_hz
    report.slip = _slip(trial, origin, end)
    return report


def _row(trial: Trial, label: str, origin: int, a: int, b: int, lying: bool,
         down: bool = False, tipping: bool = False, posing: bool = False) -> Row:
    """The metrics of trace rows [a, b), times from row `origin`; a
    `tipping` row (a getup's) may pass the fall tilt; in a `posing` row a
    limb may touch the floor, the torso (trunk_geoms) not."""
    tr, hz = trial.trace, trial.cfg.tick_hz
    rpy = np.array(tr.rpy[a:b])
    tilt = np.max(np.abs(rpy[:, :2]), axis=1)
    over = np.flatnonzero(tilt > FALL_TILT) if not tipping else np.zeros(0, dtype=int)
    feet = set(trial.feet)
    others = [c - feet for c in tr.contacts[a:b]]
    return Row(label=label, start_s=(a - origin) / hz, seconds=(b - a) / hz,
               fell_at=(a + int(over[0]) - origin) / hz if len(over) else None,
               tilt=float(tilt.max()), trunk_s=sum(1 for o in others if o) / hz,
               trunk_geoms=tuple(sorted(set().union(*others))), slip=_slip(trial, a, b),
               saturation=float(np.mean(tr.saturated[a:b])), lying=lying, down=down,
               kneeling=posing and _posed_touch(trial, a, others))


def _posed_touch(trial: Trial, a: int, others: list[frozenset[str]]) -> bool:
    """Every contact of these rows (from trace row `a`) is a limb's, never
    the torso's, that the commanded pose puts within POSE_TOUCH of the
    ground: the joint targets sent that tick, on the body where it was."""
    touched = set().union(*others)
    if not touched:
        return True
    if touched & trunk_geoms(trial):
        return False
    robot, tr = trial.robot, trial.trace
    if len(tr.q_des) != len(tr.t):
        return False                  # the targets were not kept: nothing allows the contact
    model = robot.model
    data = mujoco.MjData(model)
    ground = np.flatnonzero(robot.is_ground)
    ids = {label: g for g, label in enumerate(robot.geom_names) if label in touched}
    for k, names in enumerate(others):
        if not names:
            continue
        i = a + k
        data.qpos[:] = robot.data.qpos
        data.qpos[0:3] = tr.position[i]
        data.qpos[3:7] = tr.orientation[i]
        mm = robot.model_map
        data.qpos[robot.qadr] = tr.q_des[i] if mm.identity else mm.positions_to_wire(tr.q_des[i])
        mujoco.mj_kinematics(model, data)
        for name in names:
            gap = min(mujoco.mj_geomDistance(model, data, ids[name], int(g), 1.0, None) for g in ground)
            if gap > POSE_TOUCH:
                return False
    return True


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
