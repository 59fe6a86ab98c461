"""Keyframe scripts (controller/motion/scripts.py): loading and validation, the
operations on scripts, name resolution, and the player on the C kernel."""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from controller.motion.scripts import (
    GAIN_RAMP_S,
    GAIN_TO_KP,
    KD_PER_KP,
    Frame,
    Part,
    Script,
    ScriptError,
    ScriptPlayer,
    Target,
    chain,
    load_directory,
    load_script,
    mirror,
    ms_to_ticks,
    resolve_script,
    speed,
    stretch,
    validate,
)
from controller.robot.config import load_config
from controller.robot.native import CUBIC, LINEAR, QUINTIC, Kernel

ROOT = Path(__file__).resolve().parent.parent
SCRIPT_DIR = ROOT / "config" / "scripts" / "humanoid20"
CFG = load_config(ROOT / "config" / "humanoid20.yaml")
SHIPPED = sorted(SCRIPT_DIR.glob("*.yaml"))
INDEX = {n: i for i, n in enumerate(CFG.joint_names)}

# The humanoid's left/right pairs and sign rule, from its config.
assert CFG.scripts is not None
PAIRS = list(CFG.scripts.mirror_pairs)
NEGATE = set(CFG.scripts.mirror_negate)


def test_the_config_pairs_every_side_joint_and_negates_roll_and_yaw():
    """Roll and yaw axes flip under the left-right reflection, pitch axes do not."""
    sides = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll",
             "shoulder_pitch", "shoulder_roll", "elbow")
    assert sorted(PAIRS) == sorted((f"l_{j}", f"r_{j}") for j in sides)
    assert {n for pair in PAIRS for n in pair
                      if n.endswith(("_roll", "_yaw"))} | {"head_yaw"} == NEGATE


def shipped(name: str) -> Script:
    return load_script(SCRIPT_DIR / f"{name}.yaml", CFG)


def write(tmp_path: Path, text: str, name: str = "Bad.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def make_kernel() -> Kernel:
    # As Controller builds it: the step limit is the velocity limit over a tick.
    return Kernel(CFG.q_min, CFG.q_max, CFG.v_max, step_max=CFG.v_max * CFG.dt)


def at_pose(kernel: Kernel, q: np.ndarray) -> None:
    kernel.track(q)


# -- shipped scripts ----------------------------------------------------------------

def test_the_issue_scripts_are_shipped():
    assert {p.stem for p in SHIPPED} >= {"Stand", "Wave", "KickRight", "StandUpFront"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_script_loads_and_validates(path):
    script = load_script(path, CFG)
    assert script.name == path.stem and script.source == path
    assert script.tick_hz == CFG.tick_hz
    assert script.joints <= set(CFG.joint_names)
    # ... and its mirror image too (the config's limits are mirrored).
    validate(mirror(script, PAIRS, NEGATE), CFG)


def test_load_directory_has_no_errors():
    scripts, errors = load_directory(SCRIPT_DIR, CFG)
    assert errors == []
    assert set(scripts) == {p.stem for p in SHIPPED}


@pytest.mark.parametrize("names,start", [
    (["Stand"], "fold"), (["Stand"], "lie"), (["Stand"], "crouch"),
    (["Wave"], "stand"), (["KickRight"], "stand"),
    (["Stand", "KickRight", "Stand"], "fold"), (["StandUpFront"], "prone"),
])
def test_shipped_scripts_play_on_the_c_kernel_without_a_clamp(names, start):
    """Validation's speed rule is the kernel's: a valid script is never cut
    by the position, velocity or step limits, so it arrives on time."""
    q0 = np.zeros(CFG.num_joints) if start == "prone" else CFG.poses[start]
    script = chain([shipped(n) for n in names])
    validate(script, CFG, start=q0)
    kernel = make_kernel()
    at_pose(kernel, q0)
    player = ScriptPlayer.for_config(kernel, CFG)
    player.start(script, 0, kernel.pos.copy())
    for tick in range(script.total_ticks + 1):
        player.step(tick)
        assert kernel.step(tick * CFG.dt) == 0, f"tick {tick}"
    assert player.done


# -- validation errors --------------------------------------------------------------

GOOD = "- duration: 500\n  targets:\n    - {id: r_knee, position: 1.0, gain: 30, torque: 100}\n"


@pytest.mark.parametrize("second_frame,reason,line", [
    ("- duration: 500\n  targets:\n    - {id: r_kneee, position: 1.0, gain: 30}\n",
     "unknown joint id 'r_kneee'", 6),
    ("- duration: 500\n  targets:\n    - {id: r_knee, position: 2.7, gain: 30}\n",
     "r_knee: position 2.7 rad is outside its limits [0, 2.6]", 6),
    ("- duration: 0\n  targets: []\n", "duration must be positive", 4),
    ("- duration: -20\n  targets: []\n", "duration must be positive", 4),
    ("- duration: 12.5\n  targets: []\n", "duration must be a whole number of milliseconds", 4),
    ("- duration: fast\n  targets: []\n", "duration must be a whole number of milliseconds", 4),
    ("- duration: .inf\n  targets: []\n", "duration must be a whole number of milliseconds", 4),
    ("- targets: []\n", "missing `duration`", 4),
    ("- duration: 500\n  targets:\n    - {id: r_knee, position: 1.0, gain: 130}\n",
     "r_knee: gain 130 is outside [0.0, 100.0]", 6),
    ("- duration: 500\n  targets:\n    - {id: r_knee, position: 1.0, gain: -1}\n",
     "r_knee: gain -1 is outside", 6),
    ("- duration: 500\n  targets:\n    - {id: r_knee, position: 1.0, gain: 30, torque: 101}\n",
     "r_knee: torque 101 is outside [0.0, 100.0]", 6),
    ("- duration: 100\n  targets:\n    - {id: r_knee, position: 2.5, gain: 30}\n",
     ("r_knee: moves 1.5 rad (from 1 to 2.5) in 100 ms, a peak speed of 28.1 rad/s with the "
      "quintic profile, above its limit 7 rad/s"), 6),
    (("- duration: 100\n  profile: linear\n  targets:\n"
      "    - {id: r_knee, position: 2.5, gain: 30}\n"),
     "peak speed of 15 rad/s with the linear profile", 7),
    ("- duration: 500\n  targets:\n    - {id: r_knee, position: .nan, gain: 30}\n",
     "r_knee: position must be finite", 6),
    ("- duration: 500\n  targets:\n    - {id: r_knee, position: 1.0, gain: .inf}\n",
     "r_knee: gain must be finite", 6),
    ("- duration: 500\n  targets:\n    - {id: r_knee, position: 1.0, gain: 30, speed: 2}\n",
     "target 1: unknown key 'speed'", 6),
    ("- duration: 500\n  hold: true\n  targets: []\n", "unknown key 'hold'", 5),
    ("- duration: 500\n  profile: bezier\n  targets: []\n", "profile 'bezier' is not one of", 4),
    ("- duration: 500\n  targets:\n    - {id: r_knee, gain: 30}\n", "target 1: missing `position`",
     6),
    ("- duration: 500\n  targets:\n    - {id: r_knee, position: '1', gain: 30}\n",
     "r_knee: position must be a number", 6),
    ("- duration: 500\n  targets:\n    - {id: r_knee, position: true, gain: 30}\n",
     "r_knee: position must be a number", 6),
    (("- duration: 500\n  targets:\n    - {id: r_knee, position: 1.0, gain: 30}\n"
      "    - {id: R_KNEE, position: 1.0, gain: 30}\n"), "joint 'r_knee' is named twice", 7),
    ("- duration: 500\n", "missing `targets`", 4),
    ("- [1, 2]\n", "expected a mapping with `duration` and `targets`", 4),
])
def test_each_error_names_file_frame_line_and_reason(tmp_path, second_frame, reason, line):
    path = write(tmp_path, GOOD + second_frame)
    with pytest.raises(ScriptError) as info:
        load_script(path, CFG)
    err = info.value
    assert str(err).startswith(f"{path}: frame 2, line {line}: "), str(err)
    assert reason in str(err)
    assert (err.where, err.frame, err.line) == (str(path), 2, line)
    assert reason in err.reason


def test_bad_yaml_names_the_line(tmp_path):
    path = write(tmp_path, GOOD + "- duration: 500\n  targets: [\n    - {id: r_knee}\n")
    with pytest.raises(ScriptError) as info:
        load_script(path, CFG)
    assert str(info.value).startswith(f"{path}: line 6: not valid YAML")
    assert info.value.line == 6 and info.value.frame is None


@pytest.mark.parametrize("text,reason", [
    ("", "expected a list of frames, got NoneType"),
    ("[]\n", "no frames"),
    ("duration: 500\n", "unknown key 'duration'"),
    ("{profile: cubic}\n", "missing `frames`"),
    ("{profile: spline, frames: []}\n", "profile 'spline' is not one of"),
    ("42\n", "expected a list of frames, got int"),
])
def test_whole_file_errors(tmp_path, text, reason):
    path = write(tmp_path, text)
    with pytest.raises(ScriptError, match=str(path)) as info:
        load_script(path, CFG)
    assert reason in str(info.value)


def test_an_unreadable_file_is_a_script_error(tmp_path):
    with pytest.raises(ScriptError, match="cannot read"):
        load_script(tmp_path / "Missing.yaml", CFG)


def test_first_frame_speed_is_checked_only_against_a_given_start_pose(tmp_path):
    path = write(tmp_path, "- duration: 100\n  targets:\n"
                           "    - {id: r_knee, position: 2.0, gain: 30}\n")
    load_script(path, CFG)   # nothing to compare the first frame with
    with pytest.raises(ScriptError) as info:
        load_script(path, CFG, start={"r_knee": 0.5})
    assert info.value.frame == 1 and "r_knee: moves 1.5 rad" in str(info.value)
    with pytest.raises(ScriptError, match="frame 1, line 3: r_knee: moves"):
        load_script(path, CFG, start=CFG.poses["stand"])


def test_a_joint_is_compared_with_its_last_target_not_the_previous_frame(tmp_path):
    # r_knee is set in frame 1, absent from frame 2 (it holds), and frame 3
    # moves it 2 rad in 100 ms: too fast, though frame 2 never named it.
    path = write(tmp_path, GOOD + "- duration: 2000\n  targets:\n"
                 "    - {id: r_hip_pitch, position: -0.5, gain: 30}\n"
                 "- duration: 100\n  targets:\n    - {id: r_knee, position: 2.5, gain: 30}\n")
    with pytest.raises(ScriptError, match="frame 3, line 9: r_knee: moves 1.5 rad"):
        load_script(path, CFG)


def test_nubots_ids_and_defaults(tmp_path):
    path = write(tmp_path, "- duration: 1000\n  targets:\n"
                           "    - id: HEAD_PITCH\n      position: 0.5\n      gain: 30\n"
                           "    - {id: R_HIP_YAW, position: -0.03, gain: 20}\n")
    script = load_script(path, CFG)
    frame = script.frames[0]
    assert frame.duration_ticks == 500
    assert frame.targets == {"head_pitch": Target(0.5, 30.0, 100.0),
                             "r_hip_yaw": Target(-0.03, 20.0, 100.0)}
    assert script.profile == "quintic" and script.frame_profile(0) == "quintic"


def test_script_profile_from_the_file_or_the_caller(tmp_path):
    text = ("profile: linear\nframes:\n" + GOOD.replace("- ", "  - ", 1).replace("\n  ", "\n    ")
            + "  - duration: 500\n    profile: cubic\n    targets: []\n")
    script = load_script(write(tmp_path, text), CFG)
    assert script.profile == "linear"
    assert [script.frame_profile(k) for k in range(2)] == ["linear", "cubic"]
    assert load_script(write(tmp_path, GOOD, "G.yaml"), CFG, profile="cubic").profile == "cubic"


def test_durations_round_half_up_to_whole_ticks():
    assert [ms_to_ticks(ms, 500.0) for ms in (1, 2, 3, 4, 5, 1000)] == [1, 1, 2, 2, 3, 500]
    assert ms_to_ticks(1, 250.0) == 1     # 0.25 ticks: never a zero-tick frame


def test_scripts_and_frames_are_frozen():
    s = shipped("Wave")
    with pytest.raises(AttributeError):
        s.name = "x"  # type: ignore[misc]  # deliberately assigns to a frozen field: must raise
    with pytest.raises(TypeError):
        s.frames[0].targets["r_elbow"] = Target(0.0, 1.0)  # type: ignore[index]  # deliberately writes a read-only mapping: must raise
    assert hash(s.frames[0]) == hash(shipped("Wave").frames[0])


def test_a_script_timed_for_another_rate_is_refused():
    other = Script("S", (Frame(10, {}),), tick_hz=1000.0)
    with pytest.raises(ScriptError, match="timed for 1000.0 Hz"):
        validate(other, CFG)


# -- operations ------------------------------------------------------------------------

def test_chain():
    stand, kick = shipped("Stand"), shipped("KickRight")
    s = chain([stand, kick, stand])
    assert s.name == "Stand+KickRight+Stand" and s.source is None
    def baked(x: Script) -> tuple[Frame, ...]:
        return tuple(Frame(f.duration_ticks, f.targets, x.frame_profile(k))
                     for k, f in enumerate(x.frames))

    assert s.frames == baked(stand) + baked(kick) + baked(stand)
    assert [s.frame_profile(k) for k in range(11)] == \
        ["quintic"] * 5 + ["cubic"] + ["quintic"] * 5
    assert s.total_ticks == 2 * stand.total_ticks + kick.total_ticks
    assert s.parts == (Part("Stand", 1), Part("KickRight", 9), Part("Stand", 1))
    assert s.locate(0) == ("Stand", 0) and s.locate(4) == ("KickRight", 3)
    assert s.locate(10) == ("Stand", 0)
    # Each frame keeps its profile, including its script's default.
    linear = Script("L", (Frame(5, {}),), CFG.tick_hz, profile="linear")
    assert [f.profile for f in chain([linear, stand]).frames] == ["linear", "quintic"]
    with pytest.raises(ValueError):
        chain([])
    with pytest.raises(ValueError, match="tick rates"):
        chain([stand, Script("F", (Frame(5, {}),), 1000.0)])


def test_a_junction_that_is_too_fast_is_caught():
    up = Script("Up", (Frame(500, {"r_knee": Target(2.0, 30)}),), CFG.tick_hz)
    down = Script("Down", (Frame(25, {"r_knee": Target(0.5, 30)}),), CFG.tick_hz)
    with pytest.raises(ScriptError, match=r"script 'Up\+Down': frame 2 \(Down frame 1\): r_knee"):
        validate(chain([up, down]), CFG)


def test_speed_two_halves_the_ticks():
    for name in ("Wave", "KickRight", "StandUpFront", "Stand"):
        s = shipped(name)
        fast = speed(s, 2)
        # Frame boundaries halve, rounded half up (an odd frame shares its half tick).
        ends = np.cumsum([f.duration_ticks for f in s.frames])
        assert np.cumsum([f.duration_ticks for f in fast.frames]).tolist() == \
            [(int(e) + 1) // 2 for e in ends]
        assert fast.total_ticks == (s.total_ticks + 1) // 2
        assert [f.targets for f in fast.frames] == [f.targets for f in s.frames]
        slow = speed(s, 0.5)
        assert [f.duration_ticks for f in slow.frames] == [2 * f.duration_ticks for f in s.frames]


def test_speed_rounds_boundaries_half_up_and_never_makes_a_zero_tick_frame():
    s = Script("S", tuple(Frame(3, {}) for _ in range(4)), CFG.tick_hz)
    # Boundaries 3, 6, 9, 12 halved: 1.5, 3, 4.5, 6 -> 2, 3, 5, 6.
    assert [f.duration_ticks for f in speed(s, 2).frames] == [2, 1, 2, 1]
    assert speed(s, 2).total_ticks == 6
    assert [f.duration_ticks for f in speed(s, 1000).frames] == [1, 1, 1, 1]
    for bad in (0, -1, math.inf, math.nan, True):
        with pytest.raises(ValueError):
            speed(s, bad)


def test_stretch():
    s = shipped("KickRight")
    long = stretch(s, 2 * s.duration_ms)
    assert [f.duration_ticks for f in long.frames] == [2 * f.duration_ticks for f in s.frames]
    odd = stretch(s, 1001)   # 500.5 ticks -> 501, shared in proportion
    assert odd.total_ticks == 501 and all(f.duration_ticks >= 1 for f in odd.frames)
    assert stretch(s, s.duration_ms) == s
    with pytest.raises(ValueError, match="fewer than the 9 frames"):
        stretch(s, 10)
    with pytest.raises(ValueError):
        stretch(s, 0)


def test_mirror_twice_is_the_identity():
    for path in SHIPPED:
        s = load_script(path, CFG)
        once = mirror(s, PAIRS, NEGATE)
        assert once != s and once.mirrored and once.parts[0].mirrored
        assert mirror(once, PAIRS, NEGATE) == s


def test_mirror_swaps_pairs_and_negates_roll_and_yaw():
    kick = shipped("KickRight")
    left = mirror(kick, PAIRS, NEGATE)
    assert left.name == "KickRight"
    for f, g in zip(kick.frames, left.frames):
        assert f.duration_ticks == g.duration_ticks and f.profile == g.profile
        assert len(f.targets) == len(g.targets)
        for name, t in f.targets.items():
            other = "l_" + name[2:] if name.startswith("r_") else (
                "r_" + name[2:] if name.startswith("l_") else name)
            sign = -1.0 if name in NEGATE else 1.0
            assert g.targets[other] == Target(sign * t.position, t.gain, t.torque)
    lift = left.frames[2].targets
    assert lift["l_knee"].position == kick.frames[2].targets["r_knee"].position
    assert lift["l_hip_roll"].position == 0.226    # r_hip_roll was -0.226
    head = Script("H", (Frame(5, {"head_yaw": Target(0.3, 4), "head_pitch": Target(0.2, 4)}),),
                  CFG.tick_hz)
    assert mirror(head, PAIRS, NEGATE).frames[0].targets == {
        "head_yaw": Target(-0.3, 4), "head_pitch": Target(0.2, 4)}


def test_mirror_refuses_a_one_sided_sign_rule():
    with pytest.raises(ValueError, match="negate lists only one"):
        mirror(shipped("Wave"), PAIRS, {"r_hip_roll"})
    with pytest.raises(ValueError, match="repeats"):
        mirror(shipped("Wave"), [("l_knee", "r_knee"), ("r_knee", "l_elbow")], ())


# -- names -------------------------------------------------------------------------------

def test_resolve_finds_names_in_order(tmp_path):
    assert resolve_script("Stand", [tmp_path, SCRIPT_DIR]) == SCRIPT_DIR / "Stand.yaml"
    assert resolve_script("Stand.yaml", [SCRIPT_DIR]) == SCRIPT_DIR / "Stand.yaml"
    (tmp_path / "Stand.yaml").write_text(GOOD)
    assert resolve_script("Stand", [tmp_path, SCRIPT_DIR]) == tmp_path.resolve() / "Stand.yaml"
    with pytest.raises(ScriptError, match="no such script"):
        resolve_script("Moonwalk", [SCRIPT_DIR])


@pytest.mark.parametrize("name,why", [
    ("../x", "path separator"), ("a/b", "path separator"), ("/etc/passwd", "path separator"),
    (str(SCRIPT_DIR / "Stand"), "path separator"), ("a\\b", "path separator"),
    ("..", "`..`"), ("Stand..yaml", "`..`"), ("x\0", "NUL"), (".hidden", "letters, digits"),
    ("", "not a script name"), ("Kick Right", "letters, digits"), ("~root", "letters, digits"),
])
def test_traversal_names_are_refused(name, why):
    with pytest.raises(ScriptError) as info:
        resolve_script(name, [SCRIPT_DIR])
    assert why in info.value.reason
    assert info.value.where == f"script name {name!r}"
    if name:
        assert info.value.reason.startswith("refused: ")


def test_a_symlink_out_of_the_directory_is_refused(tmp_path):
    inside, outside = tmp_path / "scripts", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    (outside / "Evil.yaml").write_text(GOOD)
    os.symlink(outside / "Evil.yaml", inside / "Evil.yaml")
    with pytest.raises(ScriptError, match="refused: resolves to .* outside"):
        resolve_script("Evil", [inside])


# -- the player ----------------------------------------------------------------------------

class FakeKernel:
    """Records the player's calls; evaluates nothing."""

    def __init__(self) -> None:
        self.moves: list[tuple] = []
        self.gains: list[tuple] = []

    def move(self, start, end, t0, duration, profile=LINEAR, idx=slice(None)):
        self.moves.append((np.array(start, float), np.array(end, float), t0, duration, profile,
                           np.array(idx)))

    def set_gains(self, kp, kd, t0=0.0, ramp=0.0, idx=slice(None)):
        self.gains.append((np.array(kp, float), np.array(kd, float), t0, ramp, np.array(idx)))


def test_the_player_hits_every_frame_target_at_its_end_tick_on_the_c_kernel():
    script = chain([shipped("Stand"), shipped("KickRight"), shipped("Wave"), shipped("Stand")])
    kernel = make_kernel()
    at_pose(kernel, CFG.poses["fold"])
    player = ScriptPlayer.for_config(kernel, CFG)
    t_start = 1234   # any tick: the timing is relative to the start
    player.start(script, t_start, kernel.pos.copy())
    ends = np.cumsum([f.duration_ticks for f in script.frames]) + t_start
    target = CFG.poses["fold"].copy()
    frame_of = {}
    for k, end in enumerate(ends):
        frame_of[int(end)] = k
    for tick in range(t_start, int(ends[-1]) + 1):
        state = player.step(tick)
        kernel.step(tick * CFG.dt)
        if tick in frame_of:
            frame = script.frames[frame_of[tick]]
            for name, t in frame.targets.items():
                target[INDEX[name]] = t.position
            assert np.array_equal(kernel.pos, target), f"frame {frame_of[tick] + 1}"
        if tick + 1 in frame_of:
            # One tick before the end, every joint the frame moves is not there yet.
            frame = script.frames[frame_of[tick + 1]]
            moving = [INDEX[n] for n, t in frame.targets.items() if t.position != target[INDEX[n]]]
            assert all(kernel.pos[i] != frame.targets[CFG.joint_names[i]].position
                       for i in moving)
        assert 0 <= state.progress <= 100
        assert state.progress == 100 if tick == ends[-1] else state.progress < 100
    assert player.done and player.state.frame == len(script.frames) - 1


def test_progress_and_frame_index():
    s = Script("S", (Frame(100, {"r_knee": Target(1.0, 30)}), Frame(300, {})), CFG.tick_hz)
    player = ScriptPlayer.for_config(FakeKernel(), CFG)
    player.start(s, 50, CFG.poses["stand"])
    assert player.step(50) == (0, 0)
    assert player.step(149) == (0, 24)
    assert player.step(150) == (1, 25)   # frame 2 begins on frame 1's end tick
    assert player.step(449) == (1, 99) and not player.done
    assert player.step(450) == (1, 100) and player.done
    assert player.step(10_000) == (1, 100)


def test_one_kernel_move_per_frame_with_exact_times():
    kernel = FakeKernel()
    wave = shipped("Wave")
    player = ScriptPlayer.for_config(kernel, CFG)
    q = CFG.poses["stand"].copy()
    player.start(wave, 100, q)
    for tick in range(100, 100 + wave.total_ticks + 50):
        player.step(tick)
    assert len(kernel.moves) == len(wave.frames) == len(kernel.gains)
    arm = [INDEX[n] for n in ("r_shoulder_pitch", "r_shoulder_roll", "r_elbow")]
    start_tick = 100
    previous = q.copy()
    for (q0, q1, t0, dur, profile, idx), frame in zip(kernel.moves, wave.frames):
        assert set(idx.tolist()) <= set(arm)     # unnamed joints are never written
        assert t0 == start_tick * CFG.dt
        assert dur == (start_tick + frame.duration_ticks) * CFG.dt - t0
        assert profile == QUINTIC
        assert np.array_equal(q0, previous[idx])          # from the previous target
        assert np.array_equal(q1, [frame.targets[CFG.joint_names[i]].position for i in idx])
        previous[idx] = q1
        start_tick += frame.duration_ticks


def test_late_steps_issue_the_due_frames_with_their_own_times():
    kernel = FakeKernel()
    s = Script("S", (Frame(20, {"r_knee": Target(1.0, 30)}), Frame(20, {"r_knee": Target(1.1, 30)},
                     "linear"), Frame(20, {"r_knee": Target(1.2, 30)}, "cubic")), CFG.tick_hz)
    player = ScriptPlayer.for_config(kernel, CFG)
    player.start(s, 0, CFG.poses["stand"])
    assert player.step(50) == (2, 83)
    assert [m[2] for m in kernel.moves] == [0.0, 20 * CFG.dt, 40 * CFG.dt]
    assert [m[4] for m in kernel.moves] == [QUINTIC, LINEAR, CUBIC]
    assert [float(m[0][0]) for m in kernel.moves] == [CFG.poses["stand"][INDEX["r_knee"]], 1.0, 1.1]


def test_gains_follow_the_documented_scale_and_torque_zero_relaxes():
    s = Script("S", (
        Frame(50, {"r_knee": Target(1.0, 30), "r_elbow": Target(-0.6, 8, 50),
                   "head_yaw": Target(0.0, 4, 0)}),
        Frame(50, {"head_yaw": Target(0.0, 4, 100)}),
    ), CFG.tick_hz)
    kernel = make_kernel()
    at_pose(kernel, CFG.poses["stand"])
    kernel.set_gains(np.full(CFG.num_joints, 20.0), np.full(CFG.num_joints, 0.5))
    player = ScriptPlayer.for_config(kernel, CFG)
    player.start(s, 0, kernel.pos.copy())
    ramp_ticks = round(GAIN_RAMP_S / CFG.dt)
    for tick in range(ramp_ticks + 1):
        player.step(tick)
        kernel.step(tick * CFG.dt)
    knee, elbow, yaw = INDEX["r_knee"], INDEX["r_elbow"], INDEX["head_yaw"]
    assert kernel.kp[knee] == 30 * GAIN_TO_KP and kernel.kd[knee] == 30 * GAIN_TO_KP * KD_PER_KP
    assert kernel.kp[elbow] == pytest.approx(8 * GAIN_TO_KP / 2)     # torque 50: half as stiff
    assert kernel.kp[yaw] == 0.0 and kernel.kd[yaw] == 0.0           # torque 0: limp
    # A joint no frame names keeps the gains it had.
    assert kernel.kp[INDEX["l_knee"]] == 20.0 and kernel.kd[INDEX["l_knee"]] == 0.5
    for tick in range(ramp_ticks + 1, 50 + ramp_ticks + 1):
        player.step(tick)
        kernel.step(tick * CFG.dt)
    assert kernel.kp[yaw] == 4 * GAIN_TO_KP                          # stiff again


def test_unnamed_joints_keep_their_target_on_the_c_kernel():
    s = Script("S", (
        Frame(200, {"r_knee": Target(1.3, 30), "head_yaw": Target(0.4, 4)}),
        Frame(200, {"head_yaw": Target(-0.4, 4)}),     # r_knee not named: it holds 1.3
    ), CFG.tick_hz)
    kernel = make_kernel()
    stand = CFG.poses["stand"]
    at_pose(kernel, stand)
    player = ScriptPlayer.for_config(kernel, CFG)
    player.start(s, 0, kernel.pos.copy())
    others = [i for i, n in enumerate(CFG.joint_names) if n not in ("r_knee", "head_yaw")]
    for tick in range(401):
        player.step(tick)
        kernel.step(tick * CFG.dt)
        assert np.array_equal(kernel.pos[others], stand[others])
        if tick >= 200:
            assert kernel.pos[INDEX["r_knee"]] == 1.3
    assert kernel.pos[INDEX["head_yaw"]] == -0.4


def test_a_waking_joint_starts_from_the_measured_position():
    s = Script("S", (
        Frame(20, {"r_elbow": Target(-0.6, 8, 0)}),
        Frame(20, {"r_elbow": Target(-0.5, 8)}),
    ), CFG.tick_hz)
    kernel = FakeKernel()
    player = ScriptPlayer.for_config(kernel, CFG)
    player.start(s, 0, CFG.poses["stand"])
    measured = CFG.poses["stand"].copy()
    measured[INDEX["r_elbow"]] = -0.2          # it sagged while limp
    player.step(20, q_measured=measured)
    assert kernel.moves[1][0].tolist() == [-0.2]


def test_the_player_refuses_a_first_frame_too_fast_from_where_the_joints_are():
    kernel = FakeKernel()
    player = ScriptPlayer.for_config(kernel, CFG)
    fast = Script("Snap", (Frame(50, {"r_knee": Target(2.4, 30)}),), CFG.tick_hz)
    with pytest.raises(ScriptError, match="script 'Snap': frame 1: r_knee: moves"):
        player.start(fast, 0, CFG.poses["stand"])
    assert kernel.moves == [] and player.script is None
    with pytest.raises(ScriptError, match="not driven by this player"):
        ScriptPlayer(kernel, {"r_knee": 0}, CFG.dt).start(shipped("Wave"), 0, np.zeros(1))
    with pytest.raises(ScriptError, match="timed for"):
        ScriptPlayer(kernel, INDEX, 0.001).start(shipped("Wave"), 0, np.zeros(20))
