"""The shared step-record machinery (SPEC §4.6, §8.3): controller.motion.steps."""
import tomllib
from typing import Any

import pytest

from controller.motion.steps import (
    FROM_MOTION,
    StepContext,
    StepError,
    StepRecord,
    apply_command_fields,
    check_schedule,
    read_steps,
    record_from,
)
from controller.protocol.block import FROM_COMMAND, Block


def command_step(ctx: StepContext) -> list[Block]:
    """The simplest handler: command-field keys straight into the record."""
    apply_command_fields(ctx)
    ctx.take_duration()
    return [ctx.block()]


def read(text: str, tick_ms: float = 2.0, **kw: Any) -> tuple[list[Block], list[str]]:
    warnings: list[str] = []
    blocks = read_steps(tomllib.loads(text), "doc.toml", command_step, tick_ms=tick_ms,
                        warnings=warnings, **kw)
    return blocks, warnings


def test_a_step_inherits_every_field_it_does_not_set_and_the_first_starts_from_zeros():
    blocks, _ = read("""
        [[step]]
        gait_id = 3
        vel_des = [0.1, 0.2, 0.3]
        duration = 100
        [[step]]
        mode = 11
        contact = 7
        duration = 100
        [[step]]
        vel_des = [0.5, 0.0, 0.0]
        value = 9
        duration = 100
    """)
    first, second, third = blocks
    assert (first.mode, first.gait_id, first.contact) == (0, 3, 0)
    assert first.step_height == (0.0, 0.0)     # zeros, not the zeroed block's 0.03
    assert (second.mode, second.gait_id, second.contact, second.vel_des) == (11, 3, 7, (0.1, 0.2, 0.3))
    assert (third.mode, third.gait_id, third.contact, third.value) == (11, 3, 7, 9)
    assert third.vel_des == (0.5, 0.0, 0.0)


def test_duration_ms_is_halved_to_ticks_truncating():
    blocks, warnings = read("""
        [[step]]
        mode = 21
        duration = 1000
        [[step]]
        duration = 1001
        [[step]]
        duration = 3
    """)
    assert [b.duration for b in blocks] == [500, 500, 1]
    assert warnings == []


def test_a_missing_duration_halves_the_inherited_ticks_again():
    blocks, warnings = read("""
        [[step]]
        mode = 21
        duration = 1000
        [[step]]
        gait_id = 1
        [[step]]
        gait_id = 2
        [[step]]
        duration = 40
    """)
    assert [b.duration for b in blocks] == [500, 250, 125, 20]
    quirk = [w for w in warnings if "duration" in w]
    assert len(quirk) == 2
    assert quirk[0].startswith("doc.toml: step 2: duration:") and "500" in quirk[0] and "250" in quirk[0]
    assert quirk[1].startswith("doc.toml: step 3: duration:")


def test_tick_length_is_a_parameter_and_the_quirk_divides_by_it():
    blocks, _ = read("""
        [[step]]
        mode = 21
        duration = 1000
        [[step]]
        gait_id = 1
    """, tick_ms=1.0)
    assert [b.duration for b in blocks] == [1000, 1000]
    blocks, _ = read("[[step]]\nmode = 21\nduration = 1000\n[[step]]\ngait_id = 1\n", tick_ms=4.0)
    assert [b.duration for b in blocks] == [250, 62]


def test_a_wrong_length_array_is_ignored_with_a_warning_naming_the_step():
    blocks, warnings = read("""
        [[step]]
        mode = 21
        rpy_des = [0.1, 0.2, 0.3]
        duration = 100
        [[step]]
        rpy_des = [0.5, 0.5]
        foot_pose = [0.1, 0.2, 0.3]
        duration = 100
    """)
    assert blocks[1].rpy_des == (0.1, 0.2, 0.3)
    assert blocks[1].foot_pose == (0.0,) * 6
    assert any(w.startswith("doc.toml: step 2: rpy_des: ignored") and "expected 3" in w for w in warnings)
    assert any(w.startswith("doc.toml: step 2: foot_pose: ignored") for w in warnings)


@pytest.mark.parametrize("line, key, reason", [
    ("vel_des = [nan, 0.0, 0.0]", "vel_des", "finite"),
    ("rpy_des = [0.0, inf, 0.0]", "rpy_des", "finite"),
    ("pos_des = [0.0, 0.0, -inf, 1.0]", "pos_des", "finite"),   # bad number beats wrong length
    ("acc_des = [0, 0, 0, 0, 0, 1e39]", "acc_des", "32-bit"),
    ("vel_des = \"fast\"", "vel_des", "expected an array"),
    ("vel_des = [0.1, \"a\", 0.0]", "vel_des", "element 1"),
    ("vel_des = [true, 0.0, 0.0]", "vel_des", "element 0"),
    ("mode = 1.5", "mode", "expected an integer"),
    ("mode = true", "mode", "expected an integer"),
    ("gait_id = \"5\"", "gait_id", "expected an integer"),
    ("contact = 128", "contact", "int8"),
    ("mode = -129", "mode", "int8"),
    ("value = 2147483648", "value", "int32"),
    ("duration = 2147483648", "duration", "int32"),
    ("duration = -2", "duration", ">= 0"),
    ("duration = 100.0", "duration", "expected an integer"),
])
def test_bad_values_are_refused_naming_document_step_and_key(line, key, reason):
    text = f"[[step]]\nmode = 21\nduration = 100\n[[step]]\n{line}\n"
    if "duration" not in line:
        text += "duration = 100\n"
    with pytest.raises(StepError) as err:
        read(text)
    assert isinstance(err.value, ValueError)
    assert (err.value.document, err.value.step, err.value.key) == ("doc.toml", 2, key)
    assert str(err.value).startswith(f"doc.toml: step 2: {key}: ")
    assert reason in str(err.value)


@pytest.mark.parametrize("text, why", [
    ("", "no [[step]]"),
    ("title = 'x'", "no [[step]]"),
    ("step = []", "no [[step]]"),
    ("step = 5", "no [[step]]"),
])
def test_a_document_without_steps_is_refused(text, why):
    with pytest.raises(StepError, match=r"doc\.toml: step: " + why.replace("[", r"\[").replace("]", r"\]")):
        read(text)


def test_a_step_that_is_not_a_table_is_refused():
    with pytest.raises(StepError, match=r"doc\.toml: step 1: expected a table"):
        read("step = [1, 2]")


def test_a_continuous_first_step_never_ends_and_is_refused():
    with pytest.raises(StepError, match=r"step 1: duration: 0 ticks: .*never ends") as err:
        read("[[step]]\nmode = 21\nduration = 0\n[[step]]\nduration = 100\n")
    assert err.value.step == 1
    # 1 ms truncates to 0 ticks; a first step without duration inherits 0.
    with pytest.raises(StepError, match="never ends"):
        read("[[step]]\nmode = 21\nduration = 1\n")
    with pytest.raises(StepError, match="never ends"):
        read("[[step]]\nmode = 21\n")


def test_a_continuous_step_with_steps_behind_it_is_refused():
    text = "[[step]]\nmode = 21\nduration = 100\n[[step]]\nduration = 0\n[[step]]\nduration = 100\n"
    with pytest.raises(StepError, match=r"step 2: duration: .*never run"):
        read(text)
    # The quirk can decay a duration to 0 in the middle of a list too.
    text = "[[step]]\nmode = 21\nduration = 4\n[[step]]\ngait_id = 1\n[[step]]\ngait_id = 2\n[[step]]\nduration = 10\n"
    with pytest.raises(StepError, match=r"step 3: duration: "):
        read(text)


def test_a_continuous_last_step_is_allowed_with_a_warning():
    blocks, warnings = read("[[step]]\nmode = 21\nduration = 100\n[[step]]\nduration = 0\n")
    assert [b.duration for b in blocks] == [50, 0]
    assert any(w.startswith("doc.toml: step 2: duration: 0 ticks") for w in warnings)


def test_unknown_keys_are_warned_not_refused():
    blocks, warnings = read("note = 'hi'\n[[step]]\nmode = 21\nduraton = 5\nduration = 100\n")
    assert len(blocks) == 1
    assert "doc.toml: note: unknown top-level key, ignored" in warnings
    assert "doc.toml: step 1: duraton: unknown key, ignored" in warnings


def test_blocks_are_snapshots_with_the_given_source():
    blocks, _ = read("[[step]]\nmode = 21\nvel_des = [1.0, 2.0, 3.0]\nduration = 10\n"
                     "[[step]]\nvel_des = [4.0, 5.0, 6.0]\nduration = 10\n")
    assert blocks[0].vel_des == (1.0, 2.0, 3.0)
    assert all(b.source == FROM_MOTION for b in blocks)
    assert blocks[0].uid != blocks[1].uid
    blocks, _ = read("[[step]]\nmode = 21\nduration = 10\n", source=FROM_COMMAND)
    assert blocks[0].source == FROM_COMMAND


def test_each_document_gets_a_fresh_record():
    first, _ = read("[[step]]\nmode = 21\ngait_id = 5\nduration = 10\n")
    second, _ = read("[[step]]\nduration = 10\n")
    assert first[0].gait_id == 5 and (second[0].mode, second[0].gait_id) == (0, 0)


def test_step_count_is_bounded():
    text = "[[step]]\nmode = 21\nduration = 10\n" * 4
    with pytest.raises(StepError, match="at most 3"):
        read(text, max_steps=3)
    assert len(read(text, max_steps=4)[0]) == 4


def test_check_false_leaves_schedule_validation_to_the_caller():
    # An included file (SPEC §4.6) is checked as part of its includer.
    blocks, _ = read("[[step]]\nmode = 21\nduration = 0\n", check=False)
    assert blocks[0].duration == 0
    numbered = [(1, blocks[0])]
    with pytest.raises(StepError, match="never ends"):
        check_schedule(numbered, "outer.toml", [])
    with pytest.raises(StepError, match="no step yields a command"):
        check_schedule([], "outer.toml", [])


def test_a_handler_may_skip_a_step_or_yield_several_blocks():
    def handler(ctx):
        kind = ctx.get_text("type")
        if kind == "skip":
            return []
        apply_command_fields(ctx)
        ctx.take_duration()
        return [ctx.block()] * (2 if kind == "twice" else 1)

    doc = tomllib.loads("[[step]]\ntype='twice'\nmode=21\nduration=10\n[[step]]\ntype='skip'\n"
                        "[[step]]\ntype='once'\nduration=20\n")
    blocks = read_steps(doc, "d", handler)
    assert [b.duration for b in blocks] == [5, 5, 10]


def test_record_from_copies_the_fields_it_starts_from():
    previous: dict[str, Any] = {"vel_des": [1.0, 2.0, 3.0], "mode": 11}
    record = record_from(previous)
    record.fields["vel_des"][0] = 9.0
    assert previous["vel_des"][0] == 1.0
    assert record.fields["mode"] == 11 and record.fields["gait_id"] == 0
    assert isinstance(record, StepRecord) and record.ticks == 0


def test_tick_ms_must_be_positive():
    with pytest.raises(ValueError, match="tick_ms"):
        read("[[step]]\nmode = 21\nduration = 10\n", tick_ms=0.0)
