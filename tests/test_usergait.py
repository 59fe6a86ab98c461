"""User gaits (SPEC §8): Gait Def, Gait Params, the usergait packing and decoding."""
import itertools
import math
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from controller.motion.gait_table import SEGMENT_MS, GaitDefinition
from controller.motion.steps import StepError, read_steps
from controller.motion.usergait import (
    GaitDef,
    GaitDefError,
    GaitSection,
    UserGaitLimits,
    decode_user_gait,
    pack_landing_gain,
    pack_step_heights,
    parse_gait_def,
    parse_gait_params,
    unpack_landing_gain,
    unpack_step_heights,
    usergait_step,
    usergait_step_to_fields,
)
from controller.protocol.block import Block

EXAMPLES = Path(__file__).resolve().parent.parent / "gaits" / "user"
T, F = True, False

SEGMENT_S = SEGMENT_MS / 1000.0


def definition(g):
    """The gait generator's view of a parsed Gait Def: contact table plus per-leg runs."""
    return GaitDefinition(id=110, name="t", contact=g.contact_table(),
                          window_min=np.zeros(3), window_max=np.zeros(3))


def gait_def(text):
    warnings: list[str] = []
    return parse_gait_def(text, warnings=warnings), warnings


def params(text, **kw):
    warnings: list[str] = []
    return parse_gait_params(text, warnings=warnings, **kw), warnings


def section_lines(*sections):
    out = ["# Gait Def"]
    for contact, n in sections:
        out += ["[[section]]", f"contact = {list(contact)}", f"duration = {n}"]
    return "\n".join(out) + "\n"


# -- Gait Def ---------------------------------------------------------------------

def test_def_reads_valid_sections():
    g, warnings = gait_def(section_lines(([0, 1, 1, 0], 5), ([1, 0, 0, 1], 5), ([1, 1, 1, 1], 2)))
    assert warnings == []
    assert g.sections == (GaitSection((F, T, T, F), 5), GaitSection((T, F, F, T), 5),
                          GaitSection((T, T, T, T), 2))
    assert g.period_segments == 12
    assert g.period_s == pytest.approx(0.36)


def test_def_tolerates_whitespace_and_trailing_comments():
    text = "# Gait Def\n  [[section]]  # swing FR\n contact=[0,1, 1 ,1]  # FR up\nduration =  7 # 210 ms\n"
    g, warnings = gait_def(text)
    assert g.sections == (GaitSection((T, T, T, T), 7),)    # last: forced to full contact
    assert [w for w in warnings if "skipped" in w] == []


def test_def_skips_malformed_sections_with_warnings_and_keeps_the_rest():
    text = "\n".join(MALFORMED_DEF)
    g, warnings = gait_def(text)
    assert g.sections == (GaitSection((F, T, T, T), 3), GaitSection((T, T, T, T), 2))
    for line in (3, 9, 13, 16, 18, 22, 27, 33):
        assert any(w.startswith(f"Gait Def: line {line}: section of line ") for w in warnings), line
    assert len(warnings) == 8     # one per skipped section; its own lines are not re-reported


MALFORMED_DEF = (
    "# Gait Def",                         # 1
    "[[section]]",                        # 2  contact has 3 values
    "contact = [1, 0, 1]",                # 3
    "duration = 4",                       # 4
    "[[section]]",                        # 5  good
    "contact = [0, 1, 1, 1]",             # 6
    "duration = 3",                       # 7
    "[[section]]",                        # 8  a value that is not 0/1
    "contact = [1, 2, 1, 1]",             # 9
    "duration = 3",                       # 10
    "[[section]]",                        # 11 duration 0
    "contact = [1, 0, 1, 1]",             # 12
    "duration = 0",                       # 13
    "[[section]]",                        # 14 duration not a number
    "contact = [1, 0, 1, 1]",             # 15
    "duration = ten",                     # 16
    "[[section]]",                        # 17 a comment between header and contact
    "# FL up",                            # 18
    "contact = [1, 0, 1, 1]",             # 19
    "duration = 3",                       # 20
    "[[section]]",                        # 21 keys in the wrong order
    "duration = 3",                       # 22
    "contact = [1, 0, 1, 1]",             # 23
    "speed = 3",                          # 24 stray line
    "[[section]]",                        # 25 duration over the bound
    "contact = [1, 1, 1, 1]",             # 26
    "duration = 1001",                    # 27
    "[[section]]",                        # 28 good
    "contact = [1, 1, 1, 1]",             # 29
    "duration = 2",                       # 30
    "[[section]]",                        # 31 file ends early
    "contact = [1, 1, 1, 1]",             # 32
)


def test_def_reports_stray_lines_outside_sections():
    text = section_lines(([1, 1, 1, 1], 2)) + "period = 10\n"
    g, warnings = gait_def(text)
    assert len(g.sections) == 1
    assert warnings == ["Gait Def: line 5: skipped: not part of a section: 'period = 10'"]


def test_def_forces_the_last_section_to_full_contact_and_says_so():
    g, warnings = gait_def(section_lines(([1, 1, 1, 1], 2), ([0, 1, 1, 0], 4)))
    assert g.sections[-1] == GaitSection((T, T, T, T), 4)
    assert g.sections[0] == GaitSection((T, T, T, T), 2)
    assert warnings == [("Gait Def: line 6: the last section's contact is forced to full contact "
                         "[1, 1, 1, 1] (SPEC §8.2)")]


@pytest.mark.parametrize("text", ["", "# Gait Def\n", "# Gait Def\n[[section]]\ncontact = [1, 1]\nduration = 3\n",
                                  "garbage"])
def test_def_without_a_valid_section_is_one_all_contact_segment(text):
    g, warnings = gait_def(text)
    assert g.sections == (GaitSection((T, T, T, T), 1),)
    assert g.period_segments == 1
    assert any("no valid section" in w for w in warnings)
    d = definition(g)
    assert d.contact.shape == (1, 4) and d.contact.all()
    assert d.run_start.tolist() == [[0, 0, 0, 0]] and d.run_length.tolist() == [[1, 1, 1, 1]]


def test_def_without_its_header_is_read_with_a_warning():
    g, warnings = gait_def("[[section]]\ncontact = [1, 1, 1, 1]\nduration = 2\n")
    assert g.period_segments == 2
    assert any("does not start with '# Gait Def'" in w for w in warnings)


def test_def_bounds_are_refused_not_truncated():
    with pytest.raises(GaitDefError, match="more than 256 sections"):
        gait_def(section_lines(*([([1, 1, 1, 1], 1)] * 257)))
    with pytest.raises(GaitDefError, match="at most 1000"):
        gait_def(section_lines(([0, 1, 1, 1], 600), ([1, 1, 1, 1], 401)))
    with pytest.raises(GaitDefError, match="characters"):
        gait_def("# Gait Def\n" + "#" * 300_000)
    assert gait_def(section_lines(([0, 1, 1, 1], 600), ([1, 1, 1, 1], 400)))[0].period_segments == 1000


def test_gait_def_validates_directly_built_sections():
    with pytest.raises(GaitDefError):
        GaitSection((T, T, T), 1)   # type: ignore[arg-type]  # deliberately three legs: must be refused
    with pytest.raises(GaitDefError):
        GaitSection((T, T, T, 1), 1)   # type: ignore[arg-type]  # deliberately an int: must be refused
    with pytest.raises(GaitDefError):
        GaitSection((T, T, T, T), 0)
    with pytest.raises(GaitDefError):
        GaitDef(())


# -- phases -------------------------------------------------------------------------

def expected_contact(sections, segment):
    """The section's contact at a whole segment index, by walking the sections."""
    segment %= sum(n for _, n in sections)
    for contact, n in sections:
        if segment < n:
            return tuple(bool(c) for c in contact)
        segment -= n
    raise AssertionError


def four(contact: tuple[int, int, int, int]) -> tuple[bool, bool, bool, bool]:
    """A section's contact flags as the four bools GaitSection takes."""
    a, b, c, d = (bool(x) for x in contact)
    return a, b, c, d


WALK = [((1, 1, 0, 1), 3), ((0, 0, 1, 1), 2), ((0, 1, 1, 1), 2), ((1, 1, 1, 1), 1),
        ((1, 0, 1, 0), 4), ((1, 1, 1, 1), 2)]


def test_contact_table_is_one_bool_row_per_segment():
    g = GaitDef(tuple(GaitSection(four(contact), n) for contact, n in WALK))
    table = g.contact_table()
    assert table.dtype == np.bool_ and table.shape == (g.period_segments, 4) == (14, 4)


def test_contact_pattern_matches_the_sections_over_several_cycles():
    g = GaitDef(tuple(GaitSection(four(contact), n) for contact, n in WALK))
    d = definition(g)
    assert d.segments == g.period_segments
    for segment in range(3 * g.period_segments):
        row = tuple(bool(c) for c in d.contact[segment % d.segments])
        assert row == expected_contact(WALK, segment), segment


def phase(d, segment, leg):
    """Fraction of the current stance/swing run elapsed at the start of `segment`."""
    segment %= d.segments
    return d.run_start[segment, leg] / d.run_length[segment, leg]


def test_phase_runs_through_a_swing_that_spans_sections():
    # FR swings in the first two sections (5 segments), then stands for 3.
    g = GaitDef((GaitSection((F, T, T, T), 2), GaitSection((F, F, T, T), 3), GaitSection((T, T, T, T), 3)))
    d = definition(g)
    assert d.contact[:, 0].tolist() == [F] * 5 + [T] * 3
    assert [phase(d, s, 0) for s in range(5)] == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8])
    assert d.run_length[0, 0] * SEGMENT_S == pytest.approx(0.15)
    assert [phase(d, s, 0) for s in range(5, 8)] == pytest.approx([0.0, 1 / 3, 2 / 3])
    assert d.run_length[6, 0] * SEGMENT_S == pytest.approx(0.09)
    # FL swings only in the middle section: segment 2 is the start of a 3-segment swing.
    assert not d.contact[2, 1] and d.run_start[2, 1] == 0 and d.run_length[2, 1] == 3
    assert phase(d, 3, 1) == pytest.approx(1 / 3)


def test_intervals_wrap_around_the_cycle():
    # FR swings in the last and the first section: one 4-segment swing across the wrap.
    g = GaitDef((GaitSection((F, T, T, T), 2), GaitSection((T, T, T, T), 4), GaitSection((F, T, T, T), 2)))
    d = definition(g)
    assert not d.contact[6, 0] and phase(d, 6, 0) == pytest.approx(0.0)
    assert phase(d, 7, 0) == pytest.approx(0.25)
    assert not d.contact[0, 0] and phase(d, 0, 0) == pytest.approx(0.5)
    assert phase(d, 9, 0) == pytest.approx(0.75)      # next cycle, segment 1
    assert d.run_length[0, 0] == 4 and d.run_length[7, 0] == 4
    assert d.contact[2, 0] and phase(d, 2, 0) == pytest.approx(0.0)
    assert d.run_length[2, 0] * SEGMENT_S == pytest.approx(0.12)
    assert phase(d, 14, 0) == pytest.approx(0.0) and not d.contact[14 % d.segments, 0]
    # A stance wrapping the cycle: RR stands in the last and first sections.
    g = GaitDef((GaitSection((T, T, T, T), 2), GaitSection((T, T, F, T), 4), GaitSection((T, T, T, T), 2)))
    d = definition(g)
    assert d.contact[:, 2].tolist() == [T, T, F, F, F, F, T, T]
    assert [phase(d, s, 2) for s in range(8)] == pytest.approx([0.5, 0.75, 0.0, 0.25, 0.5, 0.75, 0.0, 0.25])
    assert d.run_length[0, 2] * SEGMENT_S == pytest.approx(0.12)


def test_a_leg_always_in_stance_has_one_interval_of_the_whole_cycle():
    g = GaitDef((GaitSection((F, T, T, T), 2), GaitSection((T, T, T, T), 2)))
    d = definition(g)
    assert d.contact[:, 1].all() and d.run_length[:, 1].tolist() == [4, 4, 4, 4]
    assert phase(d, 3, 1) == pytest.approx(0.75) and d.run_length[3, 1] * SEGMENT_S == pytest.approx(0.12)


def test_phase_is_monotonic_within_an_interval_and_below_one():
    g = GaitDef(tuple(GaitSection(four(contact), n) for contact, n in WALK))
    d = definition(g)
    for leg in range(4):
        for segment in range(2 * d.segments):
            assert 0.0 <= phase(d, segment, leg) < 1.0
            if segment == 0:
                continue
            prev, now = (segment - 1) % d.segments, segment % d.segments
            if d.contact[prev, leg] == d.contact[now, leg] and d.run_start[now, leg] > 0:
                assert phase(d, segment, leg) > phase(d, segment - 1, leg)
                assert d.run_length[now, leg] == d.run_length[prev, leg]
            else:               # a new run starts exactly where the contact changes
                assert d.run_start[now, leg] == 0


# -- Gait Params -------------------------------------------------------------------

def test_params_inherit_fields_and_halve_durations():
    blocks, warnings = params("""# Gait Params
[[step]]
mode = 11
gait_id = 110
contact = 15
vel_des = [0.1, 0.0, 0.0]
step_height = [40040.0, 50050.0]
duration = 1000
[[step]]
vel_des = [0.2, 0.0, 0.0]
duration = 601
[[step]]
rpy_des = [0.0, 0.1, 0.0]
[[step]]
mode = 11
gait_id = 31
step_height = [0.05, 0.05]
duration = 1000
""")
    assert [(b.mode, b.gait_id, b.duration) for b in blocks] == [(11, 110, 500), (11, 110, 300),
                                                                 (11, 110, 150), (11, 31, 500)]
    assert blocks[1].step_height == (40040.0, 50050.0) and blocks[1].contact == 15
    assert blocks[2].vel_des == (0.2, 0.0, 0.0) and blocks[2].rpy_des == (0.0, 0.1, 0.0)
    assert blocks[3].rpy_des == (0.0, 0.1, 0.0)       # inherited, even into the stand
    assert next(w for w in warnings if "duration" in w).startswith("Gait Params: step 3: duration:")


def test_params_first_step_inherits_zeros_so_a_missing_mode_is_off():
    blocks, warnings = params("# Gait Params\n[[step]]\ngait_id = 1\nduration = 100\n")
    assert blocks[0].mode == 0
    assert any(w.startswith("Gait Params: step 1: mode: missing") for w in warnings)


def test_params_accept_life_count_and_warn_about_unknown_keys_and_short_arrays():
    blocks, warnings = params("# Gait Params\n[[step]]\nmode = 21\nlife_count = 200\nspeed = 1\n"
                              "foot_pose = [0.1, 0.2, 0.3]\nduration = 100\n[extra]\na = 1\n")
    assert len(blocks) == 1 and blocks[0].foot_pose == (0.0,) * 6
    assert "Gait Params: step 1: speed: unknown key, ignored" in warnings
    assert "Gait Params: extra: unknown top-level key, ignored" in warnings
    assert any(w.startswith("Gait Params: step 1: foot_pose: ignored") for w in warnings)
    assert not any("life_count" in w for w in warnings)


def test_params_toml_error_names_the_line():
    with pytest.raises(StepError) as err:
        params("# Gait Params\n[[step]]\nmode = 11\nduration = = 5\n")
    assert err.value.line == 4
    assert str(err.value).startswith("Gait Params: line 4: not valid TOML")


@pytest.mark.parametrize("text", ["", "# Gait Params\n", "# Gait Params\n# nothing here\n",
                                  "# Gait Params\ntitle = 'walk'\n"])
def test_params_without_steps_are_refused_not_a_filler(text):
    with pytest.raises(StepError, match=r"Gait Params: step: no \[\[step\]\] tables"):
        params(text)


@pytest.mark.parametrize("body, step, key, reason", [
    ("[[step]]\nmode = 11\nduration = 0\n[[step]]\nduration = 100\n", 1, "duration", "never ends"),
    ("[[step]]\nmode = 11\n[[step]]\nduration = 100\n", 1, "duration", "never ends"),
    ("[[step]]\nmode = 11\nduration = 100\n[[step]]\nduration = 0\n[[step]]\nduration = 9\n", 2,
     "duration", "never run"),
    ("[[step]]\nmode = 11\nduration = -4\n", 1, "duration", ">= 0"),
    ("[[step]]\nmode = 200\nduration = 100\n", 1, "mode", "int8"),
    ("[[step]]\nmode = 11\ngait_id = 128\nduration = 100\n", 1, "gait_id", "int8"),
    ("[[step]]\nmode = 11\ncontact = -129\nduration = 100\n", 1, "contact", "int8"),
    ("[[step]]\nmode = 11\nvalue = 4294967296\nduration = 100\n", 1, "value", "int32"),
    ("[[step]]\nmode = 11\nduration = 3000000000\n", 1, "duration", "int32"),
    ("[[step]]\nmode = 11\nduration = 100\n[[step]]\nvel_des = [0.1, nan, 0]\n", 2, "vel_des", "finite"),
    ("[[step]]\nmode = 11\nduration = 100\n[[step]]\nstep_height = [inf, 1.0]\n", 2, "step_height",
     "finite"),
    ("[[step]]\nmode = '11'\nduration = 100\n", 1, "mode", "integer"),
    ("[[step]]\nmode = 11\nduration = 100\n[[step]]\nmode = 62\ngait_id = 110\n", 2, "mode",
     "cannot start another motion"),
])
def test_params_fail_safe_errors(body, step, key, reason):
    with pytest.raises(StepError) as err:
        params("# Gait Params\n" + body)
    assert (err.value.step, err.value.key) == (step, key)
    assert reason in err.value.reason
    assert str(err.value).startswith(f"Gait Params: step {step}: {key}: ")


def test_params_refuse_oversized_text_and_warn_without_header():
    with pytest.raises(StepError, match="characters"):
        params("# Gait Params\n" + "#" * 300_000)
    blocks, warnings = params("[[step]]\nmode = 21\nduration = 10\n")
    assert len(blocks) == 1 and any("does not start with '# Gait Params'" in w for w in warnings)


def test_params_tick_length_and_source_are_parameters():
    blocks, _ = params("# Gait Params\n[[step]]\nmode = 21\nduration = 100\n", tick_ms=1.0, source="command")
    assert blocks[0].duration == 100 and blocks[0].source == "command"


# -- usergait packing (SPEC §8.4) ----------------------------------------------------

FULL_STEP: dict[str, Any] = {
    "type": "usergait", "gait_id": 110,
    "body_vel_des": [0.1, 0.02, 0.3],
    "body_pos_des": [0.01, 0.05, 0.02, 0.003, 0.004, -0.01],
    "landing_pos_des": [0.01, -0.02, 0.0, 0.03, 0.04, 0.0, -0.05, -0.06, 0.0, 0.07, 0.08, 0.0],
    "step_height": [0.04, 0.05, 0.061, 0.0305],
    "weight": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    "use_mpc_traj": 1, "landing_gain": 1.5, "mu": 0.5, "duration": 1200,
}


def test_usergait_step_maps_onto_command_fields():
    warnings: list[str] = []
    f = usergait_step_to_fields(FULL_STEP, warnings=warnings)
    assert warnings == []
    assert (f["mode"], f["gait_id"], f["contact"], f["value"], f["duration"]) == (11, 110, 15, 1, 1200)
    assert f["vel_des"] == [0.1, 0.02, 0.3]
    assert f["rpy_des"] == [0.01, 0.05, 0.02] and f["pos_des"] == [0.003, 0.004, -0.01]
    assert f["foot_pose"] == [0.01, -0.02, 0.03, 0.04, -0.05, -0.06]
    assert f["ctrl_point"] == [0.07, 0.08, 0.5]
    assert f["acc_des"] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    # ceil(h*1000): 40 + 1000*50; 61 + 1000*ceil(30.5) = 61 + 31000
    assert f["step_height"] == [50040.0, 31061.0]


def test_the_full_form_of_a_usergait_step_is_valid_gait_params():
    f = usergait_step_to_fields(FULL_STEP)
    lines = ["# Gait Params", "[[step]]"] + [f"{k} = {v!r}" for k, v in f.items()]
    blocks, warnings = params("\n".join(lines) + "\n")
    assert warnings == []
    assert blocks[0].step_height == (50040.0, 31061.0) and blocks[0].duration == 600


def test_usergait_fields_inherit_from_the_previous_step_element_wise():
    first = usergait_step_to_fields(FULL_STEP)
    second = usergait_step_to_fields({"type": "usergait", "landing_pos_des": [0.0] * 12,
                                      "body_vel_des": [0.2, 0.0, 0.0]}, first)
    assert second["ctrl_point"] == [0.0, 0.0, 0.5]          # mu kept, RL landing replaced
    assert second["contact"] == 15 and second["step_height"] == first["step_height"]
    assert second["duration"] == 1200 and second["vel_des"] == [0.2, 0.0, 0.0]
    assert first["ctrl_point"] == [0.07, 0.08, 0.5]          # previous left untouched
    third = usergait_step_to_fields({"mu": 0.3}, second)
    assert third["ctrl_point"] == [0.0, 0.0, 0.3]


def test_ceil_packing_rounds_up_to_the_next_mm_and_keeps_whole_mm():
    assert pack_step_heights([0.0401, 0.0409, 0.001, 0.999]) == [41041.0, 999001.0]
    for mm in range(1000):      # a height written in whole mm packs to exactly that mm
        h = float(f"0.{mm:03d}")
        assert pack_step_heights([h, 0.0, 0.0, h]) == [float(mm), 1000.0 * mm]


@pytest.mark.parametrize("heights", [[0.04] * 3, [1.0, 0.04, 0.04, 0.04], [-0.01, 0.04, 0.04, 0.04],
                                     [math.nan, 0.04, 0.04, 0.04]])
def test_heights_that_do_not_fit_the_packing_are_refused(heights):
    with pytest.raises(ValueError):
        pack_step_heights(heights)


def test_packing_then_decoding_recovers_heights_to_a_millimetre():
    grid = [0.0, 0.001, 0.0123, 0.03, 0.0305, 0.04, 0.05, 0.061, 0.07, 0.0799, 0.5, 0.999]
    for heights in itertools.product(grid, repeat=2):
        four = [heights[0], heights[1], heights[1], heights[0]]
        back = unpack_step_heights(pack_step_heights(four))
        for h, b in zip(four, back):
            assert h - 1e-12 <= b <= h + 0.001 + 1e-12, (four, back)
    # The packed value travels as a float32: the largest still survives exactly.
    import struct
    packed = pack_step_heights([0.999, 0.999, 0.123, 0.456])
    wire = [struct.unpack("<f", struct.pack("<f", v))[0] for v in packed]
    assert unpack_step_heights(wire) == pytest.approx((0.999, 0.999, 0.123, 0.456))


def test_usergait_step_decodes_back_to_what_was_asked():
    f = usergait_step_to_fields(FULL_STEP)
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in f.items() if k != "duration"}
    block = Block(**fields)
    p = decode_user_gait(block)
    assert p.step_heights == pytest.approx((0.04, 0.05, 0.061, 0.031), abs=1e-9)
    assert all(0 <= b - h <= 0.001 for b, h in zip(p.step_heights, FULL_STEP["step_height"]))
    assert p.landing_offsets == ((0.01, -0.02), (0.03, 0.04), (-0.05, -0.06), (0.07, 0.08))
    assert p.pitch == 0.05 and p.body_height == pytest.approx(0.215)
    assert p.wbc_weights == (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    assert (p.mu, p.landing_gain, p.use_mpc_traj, p.gait_id) == (0.5, 1.5, True, 110)
    assert p.body_velocity == (0.1, 0.02, 0.3)
    assert p.sanitised == ()


def test_landing_gain_packs_by_floor_and_warns_when_it_will_not_decode():
    assert pack_landing_gain(1.55) == 15 and pack_landing_gain(0.3) == 3 and pack_landing_gain(1.3) == 13
    with pytest.raises(ValueError):
        pack_landing_gain(12.8)
    warnings: list[str] = []
    f = usergait_step_to_fields({"landing_gain": 10.0}, warnings=warnings)
    assert f["contact"] == 100
    assert any("landing_gain" in w and "default 1.0" in w for w in warnings)
    with pytest.raises(StepError, match="landing_gain"):
        usergait_step_to_fields({"landing_gain": 13.0})


def test_usergait_step_refusals_and_warnings():
    with pytest.raises(StepError, match="type: expected 'usergait'"):
        usergait_step_to_fields({"type": "pose"})
    with pytest.raises(StepError, match="step_height: FR height 1.2"):
        usergait_step_to_fields({"step_height": [1.2, 0.04, 0.04, 0.04]})
    with pytest.raises(StepError, match="use_mpc_traj: expected 0 or 1"):
        usergait_step_to_fields({"use_mpc_traj": 2})
    with pytest.raises(StepError, match="mu: must be finite"):
        usergait_step_to_fields({"mu": math.nan})
    warnings: list[str] = []
    usergait_step_to_fields({"mu": 0.4}, warnings=warnings)
    assert warnings == [("usergait step: gait_id: missing, so it inherits 0, which is not a user gait "
                         "(80-100, 110; SPEC §5.2)")]
    warnings = []
    f = usergait_step_to_fields({"gait_id": 5, "mu": 3.0, "step_height": [0.1, 0.04, 0.04],
                                 "landing_pos_des": [0.0] * 11 + [0.02], "weight": [1.0] * 6,
                                 "use_mpc_traj": True, "colour": "red"}, warnings=warnings)
    assert f["value"] == 1 and f["step_height"] == [0.0, 0.0]
    text = "\n".join(warnings)
    for part in ("gait_id: 5, which is not a user gait", "mu: 3.0 is outside", "step_height: ignored",
                 "landing_pos_des: the z values", "colour: unknown key"):
        assert part in text, part


def test_usergait_step_handler_reuses_the_record_machinery():
    doc = tomllib.loads("""
[[step]]
type = "usergait"
gait_id = 110
step_height = [0.04, 0.04, 0.05, 0.05]
landing_gain = 1.0
mu = 0.4
duration = 1200
[[step]]
type = "usergait"
body_vel_des = [0.1, 0.0, 0.0]
""")
    warnings: list[str] = []
    blocks = read_steps(doc, "walk.toml", usergait_step, warnings=warnings)
    assert [(b.mode, b.gait_id, b.duration) for b in blocks] == [(11, 110, 600), (11, 110, 300)]
    assert blocks[1].step_height == (40040.0, 50050.0) and blocks[1].contact == 10
    assert any(w.startswith("walk.toml: step 2: duration: missing") for w in warnings)


# -- decoding and sanitising (SPEC §8.4) ---------------------------------------------

def user_block(**fields):
    base: dict[str, Any] = {"mode": 11, "gait_id": 110, "contact": 10, "step_height": (40040.0, 40040.0),
            "acc_des": (1.0,) * 6, "ctrl_point": (0.0, 0.0, 0.4)}
    base.update(fields)
    return Block(**base)


@pytest.mark.parametrize("mu, expected", [(0.04, 0.04), (2.0, 2.0), (0.039, 0.4), (2.01, 0.4),
                                          (-1.0, 0.4), (0.0, 0.4), (1.0, 1.0)])
def test_mu_outside_its_range_falls_back_to_0_4(mu, expected):
    p = decode_user_gait(user_block(ctrl_point=(0.0, 0.0, mu)))
    assert p.mu == expected
    assert bool(p.sanitised) == (expected != mu)


@pytest.mark.parametrize("contact, gain", [(15, 1.5), (1, 0.1), (99, 9.9), (0, 1.0), (100, 1.0),
                                           (115, 1.5), (-5, 1.0), (-115, 1.0), (127, 2.7)])
def test_landing_gain_is_contact_mod_100_over_10_with_fallback(contact, gain):
    assert decode_user_gait(user_block(contact=contact)).landing_gain == pytest.approx(gain)
    assert (unpack_landing_gain(contact) is None) == (contact in (0, 100, -5, -115))


def test_mu_bounds_survive_the_float32_wire():
    import struct
    for mu in (0.04, 2.0):
        wire = struct.unpack("<f", struct.pack("<f", mu))[0]    # 0.04 -> 0.0399999991
        assert decode_user_gait(user_block(ctrl_point=(0.0, 0.0, wire))).mu == wire


def test_wbc_weights_are_floored():
    p = decode_user_gait(user_block(acc_des=(0.0, -3.0, 1e-6, 1e-5, 2.0, math.nan)))
    assert p.wbc_weights == (1e-5, 1e-5, 1e-5, 1e-5, 2.0, 1e-5)
    assert len(p.sanitised) == 4


def test_use_mpc_traj_is_value_bit0():
    assert decode_user_gait(user_block(value=3)).use_mpc_traj
    assert not decode_user_gait(user_block(value=2)).use_mpc_traj


def test_heights_are_clamped_to_the_safe_range_and_reported():
    p = decode_user_gait(user_block(step_height=(120090.0, -40040.0)))
    assert p.step_heights == pytest.approx((0.08, 0.08, 0.0, 0.0))
    assert any("step height FR 0.09 clamped to 0.08" in s for s in p.sanitised)
    p = decode_user_gait(user_block(step_height=(80001.0, 0.0)))
    assert p.step_heights == pytest.approx((0.001, 0.08, 0.0, 0.0)) and p.sanitised == ()


def test_truncation_of_packed_heights():
    # Each packed float is truncated: 40040.9 is 40040.
    assert unpack_step_heights((40040.9, 50050.5)) == pytest.approx((0.04, 0.04, 0.05, 0.05))
    assert unpack_step_heights((math.nan, math.inf)) == (0.0, 0.0, 0.0, 0.0)


def test_body_height_pitch_and_landing_offsets_are_clamped():
    p = decode_user_gait(user_block(pos_des=(0.0, 0.0, 0.3), rpy_des=(0.0, -1.0, 0.0),
                                    foot_pose=(0.5, -0.5, 0.0, 0.0, 0.0, 0.0),
                                    ctrl_point=(0.02, -0.03, 0.4)))
    assert p.body_height == 0.30 and p.pitch == -0.25
    assert p.landing_offsets == ((0.30, -0.10), (0.0, 0.0), (0.0, 0.0), (0.02, -0.03))
    assert len(p.sanitised) == 4
    p = decode_user_gait(user_block(pos_des=(0.0, 0.0, 0.02), rpy_des=(0.0, 0.2, 0.0)))
    assert p.body_height == pytest.approx(0.245) and p.pitch == 0.2 and p.sanitised == ()
    p = decode_user_gait(user_block(pos_des=(0.0, 0.0, -0.2)))
    assert p.body_height == 0.10 and len(p.sanitised) == 1


def test_the_push_ups_plank_passes_unclamped():
    # The robot's own push-up (user gait 100): body 0.225 - 0.12 m high, rear
    # feet landing 0.26 m behind their hips (SPEC §8.4's packing: RR in
    # foot_pose[4..5], RL in ctrl_point[0..1]).
    p = decode_user_gait(user_block(pos_des=(-0.2, 0.0, -0.12),
                                    foot_pose=(0.0, 0.0, 0.0, 0.0, -0.26, 0.0),
                                    ctrl_point=(-0.26, 0.0, 0.3)))
    assert p.body_height == pytest.approx(0.105) and p.sanitised == ()
    assert p.landing_offsets[2] == (-0.26, 0.0) and p.landing_offsets[3] == (-0.26, 0.0)


def test_limits_are_a_parameter():
    limits = UserGaitLimits(step_height=(0.02, 0.05), nominal_body_height=0.25)
    p = decode_user_gait(user_block(step_height=(60010.0, 30030.0)), limits)
    assert p.step_heights == pytest.approx((0.02, 0.05, 0.03, 0.03))
    assert p.body_height == pytest.approx(0.25)


def test_decoding_needs_a_locomotion_block():
    with pytest.raises(ValueError, match="mode-11"):
        decode_user_gait(Block(21, 5))


# -- the example files ------------------------------------------------------------------

def test_the_example_gait_def_parses_cleanly_one_leg_at_a_time():
    text = (EXAMPLES / "Gait_Def_example.toml").read_text()
    assert text.startswith("# Gait Def")
    g, warnings = gait_def(text)
    assert warnings == []
    assert g.period_segments == 40 and len(g.sections) == 8
    d = definition(g)
    assert d.segments == 40
    swinging = set()
    for segment in range(g.period_segments):
        contact = d.contact[segment]
        assert sum(contact) >= 3      # a walk: never more than one foot up
        swinging |= {leg for leg in range(4) if not contact[leg]}
    assert swinging == {0, 1, 2, 3}


def test_the_example_gait_params_parse_cleanly_and_end_in_a_stand():
    text = (EXAMPLES / "Gait_Params_example_full.toml").read_text()
    assert text.startswith("# Gait Params")
    blocks, warnings = params(text)
    assert warnings == []
    assert all((b.mode, b.gait_id) == (11, 110) for b in blocks[:-1]) and len(blocks) >= 4
    assert (blocks[-1].mode, blocks[-1].gait_id) == (11, 31) and blocks[-1].duration > 0
    assert sum(b.duration for b in blocks) * 2 == 13000     # the README's 62/110 duration
    for b in blocks[:-1]:
        p = decode_user_gait(b)
        assert p.sanitised == ()
        assert all(0.02 <= h <= 0.06 for h in p.step_heights)
        assert p.landing_gain == 1.5 and p.mu == 0.4
