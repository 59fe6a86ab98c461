"""What the controller does with inputs it must not carry out (docs/VALIDATION.md).

The rules are tested here on the simulated clock; the fields, counters and
log events they use are kept in step with docs/VALIDATION.md by the tests at
the end of this file.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import re
from pathlib import Path

import numpy as np
import pytest
from harness import Rig

from controller import msgs
from controller.core.fsm import BAN_TRANS
from controller.core.packets import FIXED_SIZES
from controller.core.reports import Counters
from controller.robot.config import load_config
from controller.service import runtime

HUMANOID = "config/humanoid20.yaml"


@pytest.fixture
def standing() -> Rig:
    r = Rig()
    r.stand()
    return r


def off_measured(config: str | None = None) -> Rig:
    r = Rig(config)
    r.run(20)        # joint_state has arrived: leaving OFF is possible
    return r


# -- unknown gaits of known modes: BAN_TRANS -----------------------------------------

@pytest.mark.parametrize("mode, gait", [(7, 5), (7, -1), (12, 3), (12, 127), (21, 4), (21, -5),
                                        (3, 2), (3, 4)])
def test_an_unknown_gait_of_a_known_mode_is_refused(standing: Rig, mode: int, gait: int) -> None:
    q_before = standing.ctl.kernel.pos.copy()
    standing.send(mode, gait)
    standing.run(200)
    assert standing.mode == 12
    assert standing.last.switch_status == BAN_TRANS
    assert standing.last.mode == 12
    assert f"gait {gait} is not a mode-{mode} gait" in standing.ctl.counters.last_error
    np.testing.assert_allclose(standing.ctl.kernel.pos, q_before, atol=1e-9)


@pytest.mark.parametrize("mode, gait", [(7, 0), (7, 1), (21, 5), (21, 2), (3, 0), (3, 1), (3, 3)])
def test_the_known_gaits_of_those_modes_still_run(standing: Rig, mode: int, gait: int) -> None:
    standing.send(mode, gait)
    standing.run(200)
    assert standing.mode == mode
    assert standing.last.switch_status != BAN_TRANS


def test_mode_15_from_a_command_takes_gait_0_only() -> None:
    rig = off_measured()
    rig.send(15, 1)
    rig.run(100)
    assert rig.mode == 0 and rig.last.switch_status == BAN_TRANS
    rig.send(15, 0)
    rig.run(100)
    assert rig.mode == 15       # no motor_ctrl data: the high-damping rule (SPEC §6.9)


def test_off_is_never_refused_whatever_the_gait(standing: Rig) -> None:
    standing.send(0, 9)
    standing.run(20)
    assert standing.mode == 0
    assert (standing.ctl.kernel.kp == 0).all() and (standing.ctl.kernel.kd == 0).all()


def test_a_refused_gait_queued_behind_a_pose_does_not_move_the_body(standing: Rig) -> None:
    """A mode-21 block of an unknown gait becomes active in mode 21 (behind
    the pose-hold filler): the FSM refuses it and the state must not run it,
    though it is of its own mode."""
    standing.send(21, 5, duration=400, pos_des=[0, 0, 0.22])
    standing.run(500)                  # the height block ends; the 21/3 filler holds
    assert standing.mode == 21 and standing.last.switch_status == 0
    height = standing.body_height()
    q = standing.ctl.kernel.pos.copy()
    standing.send(21, 4, duration=600, pos_des=[0, 0, -0.06], rpy_des=[0, 0.3, 0])
    standing.run(1200)                 # filler (<= 400 ms), then the refused block
    assert any(r.switch_status == BAN_TRANS for r in standing.responses[-300:])
    np.testing.assert_allclose(standing.ctl.kernel.pos, q, atol=1e-9)
    assert standing.body_height() == pytest.approx(height, abs=1e-3)


@pytest.mark.parametrize("mode, gait, reason", [(12, 3, "is not a mode-12 gait"),
                                                (12, 17, "needs a roll a biped cannot make"),
                                                (21, 4, "is not a mode-21 gait")])
def test_humanoid_unknown_gaits_are_refused(mode: int, gait: int, reason: str) -> None:
    rig = off_measured(HUMANOID)
    rig.send(12)
    rig.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 8000)
    rig.send(mode, gait)
    rig.run(100)
    assert rig.mode == 12 and rig.last.switch_status == BAN_TRANS
    assert reason in rig.ctl.counters.last_error


# -- motion goals: only a refusal counts as a rejected command ---------------------------

def goal(kind: int, goal_id: int, **fields: float) -> bytes:
    msg = msgs.motion_goal_t()
    msg.kind, msg.goal_id = kind, goal_id
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg.encode()


def events(rig: Rig) -> list[msgs.motion_event_t]:
    assert rig.last_out is not None
    return [msgs.motion_event_t.decode(data) for _, ch, data in rig.last_out.messages
            if ch == rig.ch["motion_event"]]


def test_a_refused_goal_is_counted_and_a_cancelled_move_is_not_an_error(standing: Rig) -> None:
    c = standing.ctl.counters
    standing.raw(standing.ch["motion_goal"], goal(1, 7, distance=1.0, timeout=float("nan")))
    standing.tick()
    assert [(e.goal_id, e.kind, e.reason) for e in events(standing)] == [(7, 1, 4)]  # GOAL_DONE REFUSED
    assert c.commands_rejected == 1 and c.last_error == "motion goal 7: timeout is not finite"

    standing.raw(standing.ch["motion_goal"], goal(1, 8, distance=1.0, timeout=20.0))
    standing.run(200, heartbeat=False)
    standing.raw(standing.ch["motion_goal"], goal(2, 9, speed=0.1, timeout=5.0))   # pre-empts 8
    standing.tick()
    standing.raw(standing.ch["motion_goal"], goal(0, 10))                            # STOP: cancels 9
    standing.tick()
    assert c.commands_rejected == 1, c.last_error
    assert c.last_error == "motion goal 7: timeout is not finite"


# -- script requests: oversized arrays and strings, whatever the action -----------------

def script_request(action: int, names: list[str], request_id: int = 3) -> bytes:
    msg = msgs.script_request_t()
    msg.action, msg.request_id = action, request_id
    msg.names, msg.num_names = names, len(names)
    return msg.encode()


@pytest.mark.parametrize("names, reason", [
    (["Stand"] * 17, "give 0 to 16 script names, got 17"),
    (["x" * 65], "a script name is longer than 64 characters")])
def test_an_oversized_cancel_is_refused(names: list[str], reason: str) -> None:
    rig = Rig(HUMANOID)
    rig.run(20)
    rig.raw(rig.ch["script_request"], script_request(1, names))
    rig.tick()
    assert rig.ctl.counters.commands_rejected == 1
    assert rig.ctl.counters.last_error == f"script request 3 refused: {reason}"
    (done,) = events(rig)
    assert (done.goal_id, done.kind, done.reason) == (3, 7, 4)      # SCRIPT_DONE REFUSED
    rig.raw(rig.ch["script_request"], script_request(1, ["x" * 64] * 16, request_id=4))
    rig.tick()                                                   # the largest allowed: a plain cancel
    assert rig.ctl.counters.commands_rejected == 1


def test_a_tiny_script_speed_is_refused_not_raised() -> None:
    """Found by tests/test_fuzz.py (test_every_accepted_script_request_can_be_announced):
    speed 1.12e-44 stretched KickRight to ~1e44 s, beyond the float32 of
    SCRIPT_STARTED's value, and publishing the event raised out of the step."""
    rig = Rig(HUMANOID)
    rig.stand()
    for request_id, speed in ((11, 1.1210387714598537e-44), (12, 0.0099)):
        msg = msgs.script_request_t()
        msg.request_id, msg.priority, msg.speed = request_id, 100, speed
        msg.names, msg.num_names = ["KickRight"], 1
        rig.raw(rig.ch["script_request"], msg.encode())
        rig.tick()
        (done,) = events(rig)
        assert (done.goal_id, done.kind, done.reason) == (request_id, 7, 4)   # SCRIPT_DONE REFUSED
        assert "must be 0 (as written) or a finite number >= 0.01" in done.text
    msg.request_id, msg.speed = 13, 0.5                      # slow, but a motion: plays
    rig.raw(rig.ch["script_request"], msg.encode())
    rig.run(10)
    assert rig.ctl.director.last is not None and rig.ctl.director.last.request_id == 13


# -- docs/VALIDATION.md stays true to the code ----------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "VALIDATION.md"
# The controller and its parts (controller/core/controller.py builds them).
CONTROLLER_FILES = [ROOT / "controller" / "core" / f"{name}.py" for name in (
    "controller", "packets", "reports", "sources", "script_source", "fault_checks", "publisher",
    "gait_uploads")]
CELL_NAME = re.compile(r"^`([^`]+)`")


def doc_sections() -> dict[str, str]:
    """`## heading` -> its text (up to the next `## `)."""
    parts = re.split(r"^## (.+)$", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def table_rows(text: str) -> list[list[str]]:
    """The cells of every table row in `text`, header and separator rows left out."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append(cells)
    return rows


def names_in_first_column(text: str) -> set[str]:
    return {m[1] for cells in table_rows(text) if (m := CELL_NAME.match(cells[0]))}


def lcm_fields(type_name: str) -> list[str]:
    text = (ROOT / "lcmtypes" / f"{type_name}.lcm").read_text()
    body = re.sub(r"//[^\n]*", "", text[text.index("{") + 1:text.rindex("}")])
    fields = []
    for decl in body.split(";"):
        words = decl.split()
        if words and words[0] != "const":
            fields.append(re.sub(r"\[.*", "", words[-1]))
    return fields


def controller_ast() -> ast.Module:
    return ast.Module(body=[node for path in CONTROLLER_FILES
                            for node in ast.parse(path.read_text(encoding="utf-8")).body], type_ignores=[])


def decoded_types() -> dict[str, str]:
    """Channel key -> the type the controller decodes it as, from its intake's
    `self.decode(now_ns, ctl.ch["KEY"], msgs.TYPE, data)` calls (and
    `self.unpack(now_ns, ctl.ch["KEY"], msgs.TYPE, LAYOUT, data)`, the same
    for a fixed-layout type read with one unpack)."""
    found = {}
    for node in ast.walk(controller_ast()):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("decode", "unpack") and getattr(node.func.value, "id", None) == "self":
            channel, kind = node.args[1], node.args[2]
            assert isinstance(channel, ast.Subscript) and isinstance(kind, ast.Attribute)
            found[ast.literal_eval(channel.slice)] = kind.attr
    return found


def test_every_inbound_type_has_a_section_with_a_row_for_each_field() -> None:
    types = decoded_types()
    subscribed = {name for _, names in runtime.INPUTS for name in names}
    assert set(types) == subscribed, "the controller decodes what the runtime subscribes to"
    channels = load_config().lcm.names
    sections = doc_sections()
    for key, type_name in types.items():
        heading = f"`{channels[key]}` — `{type_name}`"
        assert heading in sections, f"docs/VALIDATION.md has no section '## {heading}'"
        fields = lcm_fields(type_name)
        assert fields, type_name
        missing = [f for f in fields if f not in names_in_first_column(sections[heading])]
        assert not missing, f"{type_name}: fields without a row in docs/VALIDATION.md: {missing}"
        assert f"`{channels[key]}` (`{key}`) | `{type_name}`" in sections["Channels"]


def log_calls() -> dict[str, set[str]]:
    """Event name -> the field names written with it, for the controller's
    `....log.LEVEL("event", ...)` calls and its `ctl.reports.error(...,
    "event")` calls (whose fields are those of the log call inside
    Reports.error)."""
    events: dict[str, set[str]] = {}
    error_fields: set[str] = set()
    for node in ast.walk(controller_ast()):
        if isinstance(node, ast.ClassDef) and node.name == "Reports":
            node = next(f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "error")
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "warning":
                    error_fields = {k.arg for k in call.keywords if k.arg}
    assert error_fields == {"reason", "suppressed"}
    for node in ast.walk(controller_ast()):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "error" and len(node.args) == 3 \
                and isinstance(node.args[2], ast.Constant):
            name = node.args[2].value
            assert isinstance(name, str), ast.dump(node)        # an event name
            events.setdefault(name, set()).update(error_fields)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) \
                and func.value.attr == "log" and node.args and isinstance(node.args[0], ast.Constant):
            name = node.args[0].value
            assert isinstance(name, str), ast.dump(node)        # an event name
            events.setdefault(name, set()).update(
                k.arg for k in node.keywords if k.arg)
    return events


def test_documented_log_events_exist_with_their_fields() -> None:
    code = log_calls()
    rows = [cells for cells in table_rows(doc_sections()["Counters and log events"])
            if len(cells) == 4 and CELL_NAME.match(cells[0])]
    documented = {m[1]: set(re.findall(r"`([^`]+)`", cells[2]))
                  for cells in rows if (m := CELL_NAME.match(cells[0]))}     # every row matches
    assert len(documented) >= 10
    for event, fields in documented.items():
        assert event in code, f"docs/VALIDATION.md names a log event the controller never writes: {event}"
        assert fields == code[event], f"{event}: documented fields {fields}, code {code[event]}"
    # Every event the input paths write (through _error) is documented.
    error_events = {e for e, f in code.items() if f == {"reason", "suppressed"}}
    assert error_events <= set(documented), error_events - set(documented)


def test_documented_counters_are_the_status_counters() -> None:
    text = doc_sections()["Counters and log events"]
    counters = {cells[0].strip("`") for cells in table_rows(text)
                if len(cells) == 2 and CELL_NAME.match(cells[0])}
    kept = {f.name for f in dataclasses.fields(Counters) if f.name != "last_error"}
    assert counters == kept
    assert counters | {"last_error"} <= set(lcm_fields("controller_status_t"))


def test_documented_gaits_are_the_behaviours_gaits() -> None:
    text = doc_sections()["`robot_control_cmd` — `robot_control_cmd_lcmt`"]
    table = text[text.index("### Modes and gaits"):]
    rows = [cells for cells in table_rows(table) if len(cells) == 2 and cells[0][:1].isdigit()]
    assert len(rows) >= 6
    behaviours = Rig().ctl.fsm.behaviours
    for mode_cell, gaits_cell in rows:
        mode = int(mode_cell.split()[0])
        gaits = behaviours[mode].gaits
        if gaits_cell.startswith("any"):
            assert gaits is None, mode
        else:
            assert gaits is not None, mode
            assert gaits == {int(g) for g in re.findall(r"-?\d+", gaits_cell)}, mode


def test_documented_fixed_sizes_are_the_decoders() -> None:
    text = doc_sections()["Decoding: every packet, before its type's rules"]
    documented = {m[1]: int(m[2]) for m in re.finditer(r"`(\w+)` (\d+)", text)}
    assert documented == {kind.__name__: size for kind, size in FIXED_SIZES.items()}


UNITS = {"ns": 1e-9, "ms": 1e-3, "s": 1.0}


def resolve(expression: str) -> float:
    """`package.module.NAME`, `...Class().attr` or `...function().attr`."""
    parts = expression.split(".")
    for i in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            call = part.endswith("()")
            value = getattr(value, part.removesuffix("()"))
            if call:
                value = value()     # type: ignore[operator]  # the doc's `name()` names a callable
        return float(value)         # type: ignore[arg-type]  # the doc's constants are numbers
    raise AssertionError(expression)


def test_documented_limits_are_the_constants() -> None:
    rows = [cells for cells in table_rows(doc_sections()["Limits"]) if len(cells) == 3
            and "`" in cells[2]]
    assert len(rows) >= 15
    for name, value_cell, constant_cell in rows:
        number = re.match(r"[\d.]+", value_cell)
        assert number is not None, value_cell
        value = float(number[0])
        unit = value_cell.split()[1] if len(value_cell.split()) > 1 else ""
        quoted = re.search(r"`([^`]+)`", constant_cell)
        assert quoted is not None, constant_cell
        expression = quoted[1]
        constant_unit = m[1] if (m := re.search(r"\((\w+)\)", constant_cell)) else ""
        actual = resolve(expression)
        if constant_unit:
            value, actual = value * UNITS[unit], actual * UNITS[constant_unit]
        assert actual == pytest.approx(value), f"{name}: documented {value_cell}, {expression} = {actual}"
