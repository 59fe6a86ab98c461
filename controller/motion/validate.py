"""Check motion files before a robot runs them (`motionctl validate PATH...`).

The daemon refuses a bad motion file when it loads it, which is late: on the
robot, with the error in a log. This module runs the same loaders offline
and reports one verdict per file, so a file can be checked while it is
written and in CI. It adds no rules of its own to the formats; each format's
loader owns its checks, and a verdict is exactly what the daemon would say:

* `.toml`: CyberDog step-list motion (SPEC §4.6), `controller.motion.motions.load_motion`:
  field types and ranges, negative durations, a continuous (0-tick) step that
  would stall the motion, includes (resolved from the including file's
  directory and kept inside the motion directory, as the library does).
* `.toml` starting `# Gait Def` / `# Gait Params`: an uploaded user gait
  (SPEC §8), checked with the parsers the daemon runs on an upload
  (`controller.motion.usergait.parse_gait_def` / `parse_gait_params`): the
  first line decides, as on the `user_gait_file` channel. A Gait Def is
  lenient (a section that does not fit is skipped with a warning naming its
  line) and refused only when too large; Gait Params are refused for what
  the upload refuses (invalid TOML with its line, a bad step, mode 62, ...).
  Against --config, or else the first shipped robot with a quadruped gait
  generator (config `locomotion`); a Gait Def on a robot without one fails,
  as the upload is refused there.
* `.yaml` / `.yml`: NUbots keyframe script, `controller.motion.scripts.load_script`:
  unknown joint ids, positions outside the joint limits, a frame too fast for
  a joint's velocity limit, durations that are not positive whole ms. A script
  names no robot, so without an explicit config the shipped robot configs
  are tried (see `_RobotChoice`).
* `.mof`: B-Human motion net file, `controller.motion.mof.parse_mof` per file and
  `link_net` over all of them together, so transitions between files resolve:
  angles outside limits, speeds, durations, missing labels, transitions to
  unknown motions or labels, zero-time loops.

Loader warnings (a key the loader ignores, a step type it skips) do not fail
a file, as they do not stop the daemon, but they are counted in the verdict
and kept on the Finding, since they are usually typos.

Pure: reads files, opens no sockets, starts nothing. `--physics` goes
further: each file that passes is also played in the simulator from a stand
and judged per step on what the body did. That run is
controller/sim/physics_check.py, which the command line hands to
`add_parser` (this layer does not import the simulator; without --physics
nothing of it, mujoco included, is imported).
"""
from __future__ import annotations

import argparse
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TextIO

import yaml

from controller.motion.mof import (
    EXTERN,
    JointLine,
    MofColumns,
    MofError,
    Motion,
    Transition,
    link_net,
    load_mof_columns,
    parse_mof,
)
from controller.motion.motions import load_motion
from controller.motion.scripts import Script, ScriptError, load_script
from controller.motion.steps import TICK_MS
from controller.motion.usergait import DEF_HEADER, PARAMS_HEADER, parse_gait_def, parse_gait_params
from controller.robot.config import Config, load_config
from controller.robot.resources import CONFIG_DIR

# The config whose `mof_columns` bind .mof files when the given one has none.
DEFAULT_MOF_CONFIG = CONFIG_DIR / "nao22.yaml"

TOML, SCRIPT, MOF = "toml", "script", "mof"
GAIT_DEF, GAIT_PARAMS = "gait_def", "gait_params"     # .toml files with a user-gait header
KINDS = {".toml": TOML, ".yaml": SCRIPT, ".yml": SCRIPT, ".mof": MOF}
USER_GAIT_KINDS = {DEF_HEADER: GAIT_DEF, PARAMS_HEADER: GAIT_PARAMS}
_KNOWN = ", ".join(KINDS)


@dataclass(frozen=True)
class Finding:
    """The verdict on one file: `message` is "ok (...)" or the reason it fails,
    naming the file, the place in it and the reason."""
    path: Path
    message: str
    ok: bool
    warnings: tuple[str, ...] = field(default=(), compare=False)
    # The robot the file passed against (a script's chosen robot, the config
    # given, the .mof binding's): where `--physics` runs it. None: not chosen.
    robot: Config | None = field(default=None, compare=False, repr=False)


def kind_of(path: Path) -> str | None:
    """TOML, SCRIPT or MOF by the file's suffix, and GAIT_DEF or GAIT_PARAMS
    for a .toml whose text starts with `# Gait Def` or `# Gait Params` (the
    daemon's upload tells the kinds apart the same way); None for any other file."""
    kind = KINDS.get(path.suffix.lower())
    return (user_gait_kind(path) or kind) if kind == TOML else kind


def user_gait_kind(path: Path) -> str | None:
    """GAIT_DEF or GAIT_PARAMS by the file's first characters, else None
    (also when it cannot be read: the check then reports that)."""
    longest = max(len(h) for h in USER_GAIT_KINDS)
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            head = f.read(longest)
    except OSError:
        return None
    return next((k for h, k in USER_GAIT_KINDS.items() if head.startswith(h)), None)


# -- entry points -----------------------------------------------------------------
def validate_paths(paths: Sequence[str | Path], cfg: Config | None = None, *,
                   config: str | Path | None = None) -> list[Finding]:
    """One Finding per file, in the order given (directories walked, sorted).

    `cfg` is the robot scripts are checked against and whose `mof_columns`
    (if any) bind .mof files; without it, `config` names such a robot config
    by path (loaded here, so that a config the daemon cannot load yet, like
    nao22, still lends its .mof columns); with neither, the robot is chosen
    per script from the shipped configs.
    """
    checker = _Checker(cfg, Path(config) if config is not None else None)
    entries = _expand(paths)
    results: list[Finding | None] = [e if isinstance(e, Finding) else None for e in entries]
    nets: list[tuple[int, Path]] = []
    for i, entry in enumerate(entries):
        if isinstance(entry, Finding):
            continue
        kind = kind_of(entry)
        if kind is None:
            results[i] = Finding(entry, f"unknown file type (expected {_KNOWN})", False)
        elif kind == MOF:
            nets.append((i, entry))     # checked together below
        else:
            results[i] = _guarded(entry, lambda p=entry, k=kind: checker.check(p, k))
    if nets:
        verdicts = checker.check_net([p for _, p in nets])
        for i, path in nets:
            results[i] = verdicts[path]
    return [r for r in results if r is not None]


# -- the physics run (--physics) ---------------------------------------------------------
# It lives in controller/sim/physics_check.py, a layer above this module (and it
# imports mujoco), so this module never imports it: the command line hands it
# in, as a factory given every Finding of the run (add_parser's `physics`).
class PhysicsReport(Protocol):
    """The physics verdict on one file."""
    @property
    def ran(self) -> bool: ...       # False: not run, with the reason in lines()

    @property
    def failed(self) -> bool: ...    # it fell, touched the ground with more than its feet, ...

    def lines(self) -> list[str]: ...   # indented, printed under the file's verdict


class PhysicsRunner(Protocol):
    def report(self, finding: Finding) -> PhysicsReport: ...


PhysicsFactory = Callable[[Sequence[Finding]], PhysicsRunner]


def add_parser(sub: Any, summary: str, physics: PhysicsFactory | None = None) -> argparse.ArgumentParser:
    """Add `validate` to an argparse subparsers object; its func is `run`.
    `summary`: its line in motionctl's --help (controller/cli/commands.py).
    `physics` runs files in the simulator for --physics (e.g. a function that
    imports controller.sim.physics_check and returns its PhysicsCheck)."""
    parser = sub.add_parser(
        "validate", help=summary,
        description="Check motion files as the daemon would load them, and print one "
                    "line per file: OK or FAIL with the file, the place (step, frame or "
                    "line) and the reason. .toml: CyberDog step-list motions, or user gaits "
                    "(SPEC §8) when the first line is '# Gait Def' or '# Gait Params', checked "
                    "as the daemon checks an upload on user_gait_file; .yaml/.yml: "
                    "keyframe scripts, against --config or else each shipped robot config "
                    "that knows their joints; .mof: B-Human motion files, all linked as one "
                    "net. Directories are searched recursively. With --physics each file that "
                    "passes is also played in the simulator from a stand, with indented lines "
                    "per step under its verdict. Gait Params are uploaded with a Gait Def and "
                    "run as mode 62/110: the one Def given with them (of several, the one in "
                    "their directory), or else the only Def in their directory; without one "
                    "they are not run. A Def no Params pair with walks in place as mode "
                    "11/110 for a few cycles. Exit code 0 if every file is ok (and, with "
                    "--physics, none fell or touched the ground with more than its feet), "
                    "1 otherwise.")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="motion file or directory")
    # Its own dest: motionctl's top-level --config (the LCM setup) must not be
    # overwritten by this one's default.
    parser.add_argument("--config", dest="robot_config", metavar="PATH",
                        help="robot config for .yaml scripts, .mof columns and user gaits "
                             "(default: scripts pick a shipped robot that knows their "
                             "joints; .mof uses config/nao22.yaml; user gaits the first "
                             "shipped robot with a quadruped gait generator)")
    parser.add_argument("--warnings", action="store_true",
                        help="also print the loaders' warnings under each file")
    parser.add_argument("--physics", action="store_true",
                        help="also run each file that passes in the MuJoCo simulator, from a "
                             "stand, and print per step (block, frame, .mof line, Gait Params "
                             "step or Gait Def cycle) whether the "
                             "robot fell, trunk contact, foot slip and torque saturation; a fall "
                             "or trunk contact fails the file (see controller/sim/physics_check.py)")
    parser.set_defaults(func=run, physics_factory=physics)
    return parser


def run(args: argparse.Namespace, _daemon_cfg: object = None, *,
        out: TextIO | None = None) -> int:
    """Print the verdicts and a summary; 0 if every file is ok, else 1.

    The second argument lets motionctl call it as it calls every command,
    with the config from its own --config; that one is for the LCM link and
    is not a robot choice, so it is ignored.
    """
    out = out or sys.stdout
    factory: PhysicsFactory | None = getattr(args, "physics_factory", None)
    wants_physics = getattr(args, "physics", False)
    if wants_physics and factory is None:
        print("motionctl: validate: --physics is not available here: no physics run was "
              "given to add_parser (controller/sim/physics_check.py)", file=sys.stderr)
        return 1
    findings = validate_paths(args.paths, config=getattr(args, "robot_config", None))
    physics = factory(findings) if wants_physics and factory is not None else None
    failed = ran = not_run = 0
    for f in findings:
        print(f"{'OK  ' if f.ok else 'FAIL'} {f.path}: {f.message}", file=out)
        if getattr(args, "warnings", False):
            for warning in f.warnings:
                print(f"     warning: {warning}", file=out)
        bad = not f.ok
        if physics is not None and f.ok:
            out.flush()      # a physics run takes a while: show the verdict first
            report = physics.report(f)
            for line in report.lines():
                print(line, file=out)
            ran += report.ran
            not_run += not report.ran
            bad = report.failed
        failed += bad
    summary = f"{len(findings)} files, {failed} failed"
    if physics is not None:
        summary += f"; physics: {ran} run, {not_run} not run"
    print(summary, file=out)
    return 0 if failed == 0 else 1


# -- which files ---------------------------------------------------------------------
def _expand(paths: Iterable[str | Path]) -> list[Path | Finding]:
    """Files to check, or a Finding where an argument names none. A file
    reached twice (named and inside a named directory) is checked once: a
    .mof motion seen twice would otherwise clash with itself in the net."""
    entries: list[Path | Finding] = []
    seen: set[Path] = set()

    def add(path: Path) -> None:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            entries.append(path)

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = _walk(path)
            if not found:
                entries.append(Finding(path, f"no motion files ({_KNOWN}) in this directory",
                                       False))
            for f in found:
                add(f)
        elif path.is_file():
            add(path)
        elif path.exists():
            entries.append(Finding(path, "not a regular file", False))
        else:
            entries.append(Finding(path, "no such file", False))
    return entries


def _walk(directory: Path) -> list[Path]:
    """Motion files under `directory`, sorted; hidden files and directories
    (.git, .venv) are skipped, as nobody keeps motions there."""
    found = []
    for path in directory.rglob("*"):
        hidden = any(part.startswith(".") for part in path.relative_to(directory).parts)
        if not hidden and path.suffix.lower() in KINDS and path.is_file():
            found.append(path)
    return sorted(found)


# -- checking --------------------------------------------------------------------------
def _guarded(path: Path, check: Any) -> Finding:
    """Run one check; a crash in a loader becomes this file's FAIL, so one
    odd file neither hides the others' verdicts nor prints a traceback."""
    try:
        return check()
    except Exception as exc:    # noqa: BLE001 - reported, not swallowed
        return _crashed(path, exc)


def _crashed(path: Path, exc: BaseException) -> Finding:
    return Finding(path, f"{path}: unexpected {type(exc).__name__}: {exc}", False)


def _seconds(s: float) -> str:
    return f"{round(s, 3):g} s"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _ok(path: Path, summary: str, warnings: Sequence[str] = (),
        robot: Config | None = None) -> Finding:
    if warnings:
        summary += f", {_plural(len(warnings), 'warning')}"
    return Finding(path, f"ok ({summary})", True, tuple(warnings), robot)


class _Checker:
    """The robot context shared by the files of one run (configs and .mof
    columns are loaded once, on first need)."""

    def __init__(self, cfg: Config | None, config: Path | None) -> None:
        self.cfg = cfg
        self.config = config            # an explicit config path, used when cfg is None
        self.config_error: str | None = None
        if cfg is None and config is not None:
            try:
                self.cfg = load_config(config)
            except Exception as exc:     # noqa: BLE001 - reported on each script
                self.config_error = str(exc)
        self._robots: _RobotChoice | None = None

    def check(self, path: Path, kind: str) -> Finding:
        if kind in (GAIT_DEF, GAIT_PARAMS):
            return self.check_user_gait(path, kind)
        return self.check_toml(path) if kind == TOML else self.check_script(path)

    # user gaits ---------------------------------------------------------------------
    def check_user_gait(self, path: Path, kind: str) -> Finding:
        """A Gait Def or Gait Params file, as the daemon parses the upload."""
        if self.cfg is None and self.config_error is not None:
            return Finding(path, f"{path}: cannot check against {self.config}: "
                                 f"{self.config_error}", False)
        cfg = self.cfg if self.cfg is not None else self._gait_robot()
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return Finding(path, f"{path}: cannot read: {reason}", False)
        warnings: list[str] = []
        on = f", robot {cfg.robot}" if cfg is not None else ""
        if kind == GAIT_DEF:
            if cfg is not None and cfg.locomotion is None:
                return Finding(path, f"{path}: robot {cfg.robot} has no quadruped gait generator "
                                     "(config `locomotion`): the daemon refuses a Gait Def", False)
            try:
                gait = parse_gait_def(text, name=str(path), warnings=warnings)
            except ValueError as exc:      # GaitDefError: too large
                return Finding(path, str(exc), False, tuple(warnings))
            summary = (f"Gait Def: {_plural(len(gait.sections), 'section')}, a "
                       f"{_seconds(gait.period_s)} cycle{on}")
            return _ok(path, summary, warnings, cfg)
        tick_ms = 1000.0 / cfg.tick_hz if cfg is not None else TICK_MS
        try:
            blocks = parse_gait_params(text, tick_ms, name=str(path), warnings=warnings)
        except ValueError as exc:          # StepError: document, line or step, key, reason
            return Finding(path, str(exc), False, tuple(warnings))
        seconds = sum(b.duration for b in blocks) * tick_ms / 1000.0
        then = ", then continuous" if blocks[-1].duration == 0 else ""
        summary = f"Gait Params: {_plural(len(blocks), 'step')}, {_seconds(seconds)}{then}{on}"
        return _ok(path, summary, warnings, cfg)

    def _gait_robot(self) -> Config | None:
        """The shipped robot whose config names user gaits (CyberDog 2: the
        user gait files are its), else the first with a quadruped gait
        generator (the only kind that takes user gaits), or None."""
        if self._robots is None:
            self._robots = _RobotChoice(shipped_robots())
        robots = [c for c in self._robots.robots if c.locomotion is not None]
        # The robot whose config takes user gaits from disk (CyberDog 2's), else any walker.
        return next((c for c in robots if c.locomotion is not None and c.locomotion.user_gaits is not None),
                    next(iter(robots), None))

    # .toml ------------------------------------------------------------------------
    def check_toml(self, path: Path) -> Finding:
        tick_ms = 1000.0 / self.cfg.tick_hz if self.cfg is not None else TICK_MS
        warnings: list[str] = []
        try:
            blocks = load_motion(path, self._motion_root(path), tick_ms, warnings)
        except ValueError as exc:      # StepError, GaitDefError: file, step, key, reason
            return Finding(path, _toml_error(path, exc), False, tuple(warnings))
        seconds = sum(b.duration for b in blocks) * tick_ms / 1000.0
        return _ok(path, f"{_plural(len(blocks), 'step')}, {_seconds(seconds)}", warnings,
                   self.cfg)

    def _motion_root(self, path: Path) -> Path:
        return motion_root(path, self.cfg)

    # .yaml ------------------------------------------------------------------------
    def check_script(self, path: Path) -> Finding:
        if self.cfg is not None:
            return _script_finding(path, self.cfg)
        if self.config_error is not None:
            return Finding(path, f"{path}: cannot check against {self.config}: "
                                 f"{self.config_error}", False)
        if self._robots is None:
            self._robots = _RobotChoice(shipped_robots())
        return self._robots.check(path)

    # .mof ---------------------------------------------------------------------------
    def check_net(self, paths: Sequence[Path]) -> dict[Path, Finding]:
        """Verdicts for .mof files linked as one net."""
        try:
            columns, origin = self._mof_columns()
        except Exception as exc:         # noqa: BLE001 - a bad binding fails every file
            return {p: Finding(p, f"{p}: cannot bind .mof columns: {exc}", False)
                    for p in paths}
        try:
            verdicts = _MofNet(paths, columns, origin).verdicts()
        except Exception as exc:         # noqa: BLE001 - a crash while linking
            return {p: _crashed(p, exc) for p in paths}
        robot = self._mof_robot(origin)
        return {p: replace(f, robot=robot) if f.ok else f for p, f in verdicts.items()}

    def _mof_robot(self, origin: Path) -> Config | None:
        """The robot whose binding the net used, if its config loads."""
        if self.cfg is not None and Path(self.cfg.path).resolve() == Path(origin).resolve():
            return self.cfg
        try:
            return load_config(origin)
        except Exception:                # noqa: BLE001 - then --physics says it has no robot
            return None

    def _mof_columns(self) -> tuple[MofColumns, Path]:
        """The binding from the given robot config if it has `mof_columns`,
        else from nao22 (the robot the .mof format was brought in for)."""
        given = self.cfg.path if self.cfg is not None else self.config
        source = given if given is not None and "mof_columns" in _top_keys(given) \
            else DEFAULT_MOF_CONFIG
        return load_mof_columns(source), source


def motion_root(path: Path, cfg: Config | None) -> Path:
    """Where a step list's includes must stay: the robot's motion directory
    when the file lives in it (as the library loads it), else the file's own."""
    motions = getattr(cfg, "motions", None)
    if motions is not None and path.resolve().is_relative_to(motions.directory):
        return Path(motions.directory)
    return path.parent


def _toml_error(path: Path, exc: ValueError) -> str:
    """The loader's message; an error inside an included file names only that
    file, so say which file was being checked when it came from elsewhere."""
    document = getattr(exc, "document", None)
    if document is not None and Path(document).resolve() != path.resolve():
        return f"{path}: in an included file: {exc}"
    return f"{exc}{_sequence_hint(path)}"


def _sequence_hint(path: Path) -> str:
    """A note for a file of raw command steps (a `motionctl play` sequence or
    uploaded Gait Params: `[[step]]` tables of robot_control_cmd fields)
    checked as a motion: same suffix and table name, so the loader's "needs
    a `type`" alone would puzzle."""
    try:
        steps = tomllib.loads(path.read_text(encoding="utf-8")).get("step")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ""
    if not (isinstance(steps, list) and steps and all(isinstance(t, dict) for t in steps)):
        return ""
    if "mode" in steps[0] and not any("type" in t or "file" in t for t in steps):
        return (" (its steps set `mode` and no `type`: a command sequence or Gait Params "
                f"file, not a motion file; Gait Params start with the line {PARAMS_HEADER!r})")
    return ""


def _script_finding(path: Path, cfg: Config, note: str = "") -> Finding:
    """The verdict on a script against one robot; `note` says why that robot."""
    try:
        script = load_script(path, cfg)
    except ScriptError as exc:
        return Finding(path, f"{exc}{note}", False)
    return _ok(path, _script_summary(script, cfg), robot=cfg)


def _script_summary(script: Script, cfg: Config) -> str:
    return (f"{_plural(len(script.frames), 'frame')}, {_seconds(script.duration_ms / 1000)}, "
            f"robot {cfg.robot}")


def _top_keys(path: Path) -> set[str]:
    """The top-level keys of a YAML mapping, or none if it is not one."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return set()
    return {str(k) for k in data} if isinstance(data, dict) else set()


# -- which robot a script is for -----------------------------------------------------------
def shipped_robots() -> list[Config]:
    """The robot configs in config/ that load; one that does not load yet
    (another change may be bringing it up) is skipped rather than failing
    every script."""
    robots = []
    for path in sorted(CONFIG_DIR.glob("*.yaml")):
        if not {"robot", "kind"} <= _top_keys(path):
            continue                     # an FSM table or other side file
        try:
            robots.append(load_config(path))
        except Exception:                # noqa: S112, BLE001 - see docstring
            continue
    return robots


def _script_ids(path: Path) -> set[str]:
    """The joint ids a script names, lower-cased (ids match without regard to
    case). Only to choose a robot: anything malformed is left for the loader
    to report, so this reads what it can and never raises."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return set()
    frames = data.get("frames") if isinstance(data, dict) else data
    ids = set()
    for frame in frames if isinstance(frames, list) else []:
        targets = frame.get("targets") if isinstance(frame, dict) else None
        for target in targets if isinstance(targets, list) else []:
            if isinstance(target, dict) and isinstance(target.get("id"), str):
                ids.add(target["id"].lower())
    return ids


class _RobotChoice:
    """Picks the robot for a script that names none.

    A script fits a robot whose joints include every id it uses, and passes if
    it validates against one that fits. Robots are tried in this order: those
    whose `scripts.directories` hold the file, then those that play scripts
    at all, then the rest (by config file name), so the robot reported is
    the one the file was most likely written for. If none fits, the error is
    the one against the robot that knows most of its ids.
    """

    def __init__(self, robots: list[Config]) -> None:
        self.robots = robots

    def check(self, path: Path) -> Finding:
        if not self.robots:
            return Finding(path, f"{path}: no robot config in {CONFIG_DIR} loads, so there "
                                 "are no joints to check it against (use --config)", False)
        ids = _script_ids(path)
        ranked = sorted(self.robots, key=lambda cfg: self._preference(cfg, path))
        fitting = [cfg for cfg in ranked if self._known(cfg, ids) == len(ids)]
        if not fitting:
            closest = max(ranked, key=lambda cfg: self._known(cfg, ids))   # first of the best
            note = (f" (checked against robot {closest.robot}, which knows "
                    f"{self._known(closest, ids)} of its {len(ids)} joint ids; no shipped "
                    "robot knows them all)")
            return _script_finding(path, closest, note)
        refusals = []
        for cfg in fitting:
            try:
                script = load_script(path, cfg)
            except ScriptError as exc:
                refusals.append((cfg, exc))
                continue
            return _ok(path, _script_summary(script, cfg), robot=cfg)
        cfg, first = refusals[0]
        others = [c.robot for c, _ in refusals[1:]]
        also = f"; refused by {', '.join(others)} too" if others else ""
        return Finding(path, f"{first} (checked against robot {cfg.robot}{also})", False)

    @staticmethod
    def _known(cfg: Config, ids: set[str]) -> int:
        return len(ids & {n.lower() for n in cfg.joint_names})

    @staticmethod
    def _preference(cfg: Config, path: Path) -> tuple[int, int, str]:
        scripts = getattr(cfg, "scripts", None)
        directories = getattr(scripts, "directories", ()) or ()
        home = any(path.resolve().is_relative_to(Path(d).resolve()) for d in directories)
        return (not home, scripts is None, str(cfg.path))


# -- .mof nets ---------------------------------------------------------------------------------
_MOTION_NAME = re.compile(r"^\s*motion_id\s*=\s*([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)


class _MofNet:
    """Parses each file on its own (so one bad file fails alone), links the
    good ones as one net, and hands every file its verdict: link errors go to
    the file whose line they name."""

    def __init__(self, paths: Sequence[Path], columns: MofColumns, origin: Path) -> None:
        self.paths = {str(p): p for p in paths}     # parse_mof's `source` -> path
        self.columns = columns
        self.origin = origin
        self.failed: dict[Path, list[str]] = {}
        self.refused_names: dict[str, Path] = {}   # motion name -> file that was refused

    def verdicts(self) -> dict[Path, Finding]:
        motions = [m for m in (self._parse(p) for p in self.paths.values()) if m is not None]
        errors: list[MofError] = []
        net = link_net(motions, self.columns, errors)
        kept = {id(m) for m in (*net.motions.values(), net.extern)}
        for motion in motions:
            if id(motion) not in kept:
                self.refused_names.setdefault(motion.name, Path(motion.source))
        for err in errors:
            path = self.paths.get(err.source)
            if path is not None:
                self.failed.setdefault(path, []).append(self._explain(err))
        verdicts = {}
        by_path = {Path(m.source): m for m in motions}
        for path in self.paths.values():
            if path in self.failed:
                verdicts[path] = Finding(path, "; ".join(self.failed[path]), False)
            elif path in by_path and id(by_path[path]) in kept:
                verdicts[path] = _ok(path, self._summary(by_path[path]))
            else:   # cannot happen: link_net reports every motion it drops
                verdicts[path] = Finding(path, f"{path}: left out of the net", False)
        return verdicts

    def _parse(self, path: Path) -> Motion | None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.failed[path] = [f"{path}: cannot read: {reason}"]
            return None
        try:
            return parse_mof(text, str(path), self.columns)
        except MofError as exc:
            self.failed[path] = [str(exc)]
        except Exception as exc:       # noqa: BLE001 - this file's FAIL, see _guarded
            self.failed[path] = [_crashed(path, exc).message]
        # Remember which motion the broken file meant to define, so a
        # transition to it elsewhere can say why it is unknown.
        name = _MOTION_NAME.search(text)
        if name is not None:
            self.refused_names.setdefault(name[1], path)
        return None

    def _explain(self, err: MofError) -> str:
        """A link error; for a transition to a motion that exists but was
        refused, say where, or the file would seem to point at nothing."""
        for name, path in self.refused_names.items():
            if f"unknown motion {name!r}" in err.reason and path != Path(err.source):
                return f"{err} ({path} defines it but is refused)"
        return str(err)

    def _summary(self, motion: Motion) -> str:
        where = f"columns from {self.origin.name}"
        if motion.name == EXTERN:
            n = sum(isinstance(i, Transition) for i in motion.instructions)
            return f"{EXTERN}: {_plural(n, 'transition')}; {where}"
        lines = [i for i in motion.instructions if isinstance(i, JointLine)]
        seconds = sum(line.duration for line in lines)
        return (f"motion {motion.name}: {_plural(len(lines), 'joint line')}, "
                f"{_seconds(seconds)}; {where}")
