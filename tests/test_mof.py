"""B-Human .mof motion nets (controller/motion/mof.py): the documented stand.mof
fixture, load-time errors that name file, line and reason, and the player
on the real C kernel at 500 Hz (line timing within one tick, hardness ramps,
an interrupted ramp, switched-off joints)."""
from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

from controller.motion.mof import (
    KEEP,
    MOF_HEADER,
    OFF,
    SET,
    HardnessLine,
    JointLine,
    MofError,
    MofPlayer,
    Transition,
    build_net,
    link_net,
    load_mof_columns,
    parse_mof,
)
from controller.robot.native import Kernel

ROOT = Path(__file__).resolve().parent.parent
NAO = ROOT / "config" / "nao22.yaml"
STAND = Path(__file__).resolve().parent / "fixtures" / "stand.mof"
COLS = load_mof_columns(NAO)
DT = 0.002   # one tick at 500 Hz
N = len(MOF_HEADER)

# The fixture's joint line, and what nao22's column signs make of it.
STAND_DEG = [0, -50, -2, -40, 0, -50, -2, -40, -6, -1, -43, 92, -48, 0,
             -6, -1, -43, 92, -48, -1]   # AL0 .. LR5 (HP and HT are `*`)
SIGNS = {"AL1": -1, "AR2": -1, "AR3": -1, "LR1": -1, "LR5": -1}


def stand_target() -> np.ndarray:
    """The fixture's angles in rad, nao22 joint convention (NaN: kept)."""
    deg = np.array([np.nan, np.nan, *STAND_DEG], dtype=float)
    sign = np.array([SIGNS.get(c, 1) for c in MOF_HEADER], dtype=float)
    return sign * np.radians(deg)


def kernel(step_limited: bool = True) -> Kernel:
    # As controller.py builds it: the step limit is the velocity limit x one tick.
    return Kernel(COLS.q_min, COLS.q_max, COLS.v_max,
                  step_max=COLS.v_max * DT if step_limited else 0.0)


def line(*angles: str, interpolate: int = 1, ms: float = 100) -> str:
    """A joint line: the given leading angles, `*` for the rest."""
    cells = list(angles) + ["*"] * (N - len(angles))
    return " ".join(cells + [str(interpolate), f"{ms:g}"])


def hardness(value: str, ms: float) -> str:
    return "hardness " + " ".join([value] * N) + f" {ms:g}"


def mof(name: str, *body: str, end: str = "transition allMotions extern start") -> str:
    return "\n".join([f"motion_id = {name}", "label start", *body, end]) + "\n"


def error_of(text: str, source: str = "x.mof") -> MofError:
    with pytest.raises(MofError) as info:
        parse_mof(text, source, COLS)
    return info.value


# -- the config ----------------------------------------------------------------------------
def test_nao22_has_the_22_mof_joints_in_header_order_and_poses_inside_limits():
    data = yaml.safe_load(NAO.read_text())
    joints = data["joints"]
    assert len(joints) == 22
    assert tuple(data["mof_columns"]) == MOF_HEADER
    mapped = [v if isinstance(v, str) else v["joint"] for v in data["mof_columns"].values()]
    assert mapped == [j["name"] for j in joints]       # joints are in .mof order
    assert [j["group"] for j in joints] == ["head"] * 2 + ["left_arm"] * 4 \
        + ["right_arm"] * 4 + ["left_leg"] * 6 + ["right_leg"] * 6
    limits = {j["name"]: (j["min"], j["max"]) for j in joints}
    for j in joints:
        assert j["min"] < j["max"] and j["vmax"] > 0
    assert {"fold", "crouch", "stand", "lie"} <= set(data["poses"])
    for name, pose in data["poses"].items():
        assert set(pose) == set(limits), name
        for joint, q in pose.items():
            lo, hi = limits[joint]
            assert lo <= q <= hi, (name, joint, q)
        # One motor drives both hip_yaw_pitch joints on a NAO.
        assert pose["l_hip_yaw_pitch"] == pose["r_hip_yaw_pitch"] == 0.0
    # Every gain set covers every group with one kp and kd per joint.
    groups = {g: sum(1 for j in joints if j["group"] == g) for g in dict.fromkeys(
        j["group"] for j in joints)}
    for gains in data["gains"].values():
        for group, size in groups.items():
            assert len(gains[group]["kp"]) == len(gains[group]["kd"]) == size


def test_the_binding_reads_signs_and_full_hardness_gains():
    assert COLS.names == MOF_HEADER
    assert list(COLS.joints) == list(range(22))
    assert COLS.joint_names[0] == "head_yaw" and COLS.joint_names[1] == "head_pitch"
    assert [c for c, s in zip(COLS.names, COLS.sign) if s < 0] == list(SIGNS)
    assert COLS.default_hardness.tolist() == [70.0] * 22
    assert COLS.kp_full[13] == 50.0   # l_knee in gains.mof


# -- parsing the fixture -------------------------------------------------------------------
def test_the_stand_fixture_parses():
    motion = parse_mof(STAND.read_text(), "stand.mof", COLS)
    assert motion.name == "stand" and motion.id_line == 1
    assert motion.labels == {"start": 0} and motion.label_lines == {"start": 3}
    hard, joints, again, leave = motion.instructions
    assert isinstance(hard, HardnessLine) and hard.line == 6
    assert hard.duration == pytest.approx(0.050)
    assert hard.hardness.tolist() == [70.0] * 21 + [100.0]   # `*` is the default
    assert isinstance(joints, JointLine) and joints.line == 7
    assert joints.interpolate and joints.duration == pytest.approx(0.100)
    assert joints.action.tolist() == [KEEP, KEEP] + [SET] * 20
    np.testing.assert_allclose(joints.angles[2:], stand_target()[2:])
    assert np.isnan(joints.angles[:2]).all()
    assert again == Transition(9, "stand", "stand", "start")
    assert leave == Transition(10, "allMotions", "extern", "start")


def test_off_keep_and_non_interpolated_lines():
    motion = parse_mof(mof("m", line("-", "*", "10"), line("5", interpolate=0, ms=40)),
                       "m.mof", COLS)
    first, second = motion.instructions[:2]
    assert isinstance(first, JointLine) and isinstance(second, JointLine)
    assert first.action[:3].tolist() == [OFF, KEEP, SET]
    assert first.angles[2] == pytest.approx(math.radians(10))
    assert not second.interpolate and second.duration == pytest.approx(0.040)


def test_comments_and_blank_lines_are_ignored_and_line_numbers_kept():
    text = ('"a header comment\nmotion_id = m\n\n  " indented comment\nlabel start '
            '" trailing comment\n' + line("3") + '  " why\ntransition allMotions extern start\n')
    motion = parse_mof(text, "m.mof", COLS)
    assert motion.name == "m" and motion.id_line == 2 and motion.label_lines["start"] == 5
    assert motion.instructions[0].line == 6


# -- errors name file, line and reason -------------------------------------------------------
@pytest.mark.parametrize("body, lineno, reason", [
    ([line("1")[:-6]], 3, "a joint line has 24 entries"),
    (["hardness * * 50"], 3, "a hardness line has 23 entries"),
    ([line("1x")], 3, "angle of HP: '1x' is not a number"),
    ([line("nan")], 3, "is not a number"),
    ([line("1", ms=0)], 3, "duration must be positive"),
    ([line("1", ms=-20)], 3, "duration must be positive"),
    ([line("1", interpolate=2)], 3, "interpolate must be 0 or 1"),
    ([hardness("120", 10)], 3, "outside [0, 100] %"),
    ([hardness("*", -5)], 3, "must not be negative"),
    (["transition allMotions m nowhere"], 3, "motion 'm' has no label 'nowhere'"),
    (["transition allMotions extern loop"], 3, "extern has only the label 'start'"),
    (["transition m m"], 3, "expected `transition <request> <motion> <label>`"),
    (["label start"], 3, "label 'start' is already defined at line 2"),
    (["walk fast"], 3, "unknown statement 'walk'"),
    ([line("*", "*", "*", "95")], 3,
     "AL1 = 95 deg puts l_shoulder_roll at -1.6581 rad, outside its limits"),
    ([line("*", "*", "*", "*", "*", "*", "*", "*", "*", "*", "*", "*", "*", "130")], 3,
     "LL3 = 130 deg puts l_knee"),
    ([line("*", "*", "0"), line("*", "*", "90")], 4,
     "AL0 moves 90.0 deg in 100 ms: 15.71 rad/s, above l_shoulder_pitch's velocity limit"),
])
def test_bad_lines_are_refused_with_file_line_and_reason(body, lineno, reason):
    err = error_of(mof("m", *body))
    assert err.source == "x.mof" and err.line == lineno, str(err)
    assert reason in err.reason, str(err)
    assert str(err).startswith(f"x.mof:{lineno}: ")


def test_the_speed_check_trusts_only_a_certain_previous_angle():
    # Across a label (enterable from anywhere) or after `-` the start is unknown.
    parse_mof(mof("m", line("*", "*", "0"), "label again", line("*", "*", "90")), "m", COLS)
    parse_mof(mof("m", line("*", "*", "0"), line("*", "*", "-"), line("*", "*", "90")),
              "m", COLS)
    # `*` keeps the previous angle, so the check still applies.
    err = error_of(mof("m", line("*", "*", "0"), line("1"), line("*", "*", "90")))
    assert err.line == 5 and "AL0 moves 90.0 deg" in err.reason
    # Slow enough: 90 deg in 200 ms is 7.85 rad/s, under 8.27.
    parse_mof(mof("m", line("*", "*", "0"), line("*", "*", "90", ms=200)), "m", COLS)


@pytest.mark.parametrize("text, lineno, reason", [
    ("", None, "no `motion_id = <name>`"),
    ("label start\n", 1, "a motion file starts with `motion_id = <name>`"),
    ("motion_id = m\n" + line("1") + "\n", 2, "`label start` must come before"),
    ("motion_id = m\nlabel other\n" + line("1") + "\ntransition allMotions extern start\n",
     3, "`label start` must come before"),
    ("motion_id = m\nlabel other\n", 1, "motion 'm' has no `label start`"),
    ("motion_id = m\nlabel start\n" + line("1") + "\n", 3, "the motion can run off its end"),
    ("motion_id = m\nlabel start\n" + line("1") + "\ntransition m extern start\n", 4,
     "the motion can run off its end"),
    ("motion_id = m\nlabel start\n" + line("1") + "\ntransition allMotions extern start\n"
     "label tail\n", 5, "label 'tail' has nothing after it"),
    ("motion_id = m\nmotion_id = n\n", 2, "a second `motion_id`"),
])
def test_bad_files_are_refused(text, lineno, reason):
    err = error_of(text)
    assert err.line == lineno and reason in err.reason, str(err)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.mof"
    path.write_text(text)
    return path


def test_the_net_checks_transitions_across_files(tmp_path):
    stand = STAND
    sit = write(tmp_path, "sit", mof("sit", line("1"), "transition sit sit start"))
    build_net([stand, sit], COLS)
    bad = write(tmp_path, "kick", mof("kick", line("1"), "transition allMotions wave start"))
    with pytest.raises(MofError) as info:
        build_net([stand, bad], COLS)
    assert str(info.value) == f"{bad}:4: transition to unknown motion 'wave'"
    bad = write(tmp_path, "kick", mof("kick", line("1"), "transition kick stand middle"))
    with pytest.raises(MofError, match=r"kick.mof:4: motion 'stand' has no label 'middle'"):
        build_net([stand, bad], COLS)
    bad = write(tmp_path, "kick", mof("kick", line("1"), "transition wave stand start"))
    with pytest.raises(MofError, match=r"kick.mof:4: unknown request 'wave'"):
        build_net([stand, bad], COLS)
    with pytest.raises(MofError, match=r"stand.mof:1: motion 'stand' is also defined in"):
        build_net([stand, write(tmp_path, "stand", STAND.read_text())], COLS)
    with pytest.raises(MofError, match=r"missing.mof: cannot read"):
        build_net([tmp_path / "missing.mof"], COLS)


def test_a_loop_without_a_joint_line_is_refused(tmp_path):
    spin = write(tmp_path, "spin", mof("spin", line("1"), "label again", hardness("*", 0),
                                       "transition spin spin again"))
    with pytest.raises(MofError, match=r"spin.mof:6: zero-time loop"):
        build_net([spin], COLS)


def test_with_an_error_list_bad_files_are_dropped_and_the_rest_kept(tmp_path):
    good = write(tmp_path, "sit", mof("sit", line("1")))
    broken = write(tmp_path, "wave", mof("wave", line("1", ms=0)))
    leads_to_broken = write(tmp_path, "kick", mof("kick", line("1"),
                                                  end="transition allMotions wave start"))
    errors: list[MofError] = []
    net = build_net([STAND, good, broken, leads_to_broken], COLS, errors)
    assert sorted(net.motions) == ["sit", "stand"]
    assert [(Path(e.source).name, e.line) for e in errors] == [("wave.mof", 3), ("kick.mof", 4)]


def test_an_extern_file_routes_requests(tmp_path):
    ext = write(tmp_path, "extern", "motion_id = extern\nlabel start\n"
                "transition sit stand start\ntransition allMotions extern start\n")
    sit = write(tmp_path, "sit", mof("sit", line("1")))
    net = build_net([ext, STAND, sit], COLS)
    assert net.entry("sit") == ("stand", 0)      # the file's routing, not the default
    assert net.entry("stand") is None            # extern.mof has no way in for stand
    stray = write(tmp_path, "extern", "motion_id = extern\nlabel start\n" + line("1")
                  + "\ntransition allMotions extern start\n")
    with pytest.raises(MofError, match=r"extern.mof:3: extern holds only transitions"):
        build_net([stray, STAND], COLS)


# -- playing on the kernel ----------------------------------------------------------------
def ticks_until(cond: Callable[[], object], k: Kernel, player: MofPlayer, first: int, last: int,
                q_meas: np.ndarray | None = None) -> int | None:
    """Step player and kernel tick by tick; the first tick at which cond() holds."""
    for tick in range(first, last + 1):
        t = tick * DT
        player.step(t, q_meas)
        k.step(t)
        if cond():
            return tick
    return None


def start_near_stand(request: str = "stand") -> tuple[Kernel, MofPlayer, np.ndarray]:
    k = kernel()
    rng = np.random.default_rng(4)
    target = stand_target()
    # 0.1 rad away from the fixture's angles: 1 rad/s over the 100 ms line,
    # well inside every velocity limit, so the kernel follows exactly.
    q_now = np.where(np.isnan(target), [0.2, -0.1] + [0.0] * 20,
                     target + rng.choice([-0.1, 0.1], N))
    q_now = np.clip(q_now, COLS.q_min, COLS.q_max)
    k.track(q_now)
    k.set_gains(0.5 * COLS.kp_full, 0.5 * COLS.kd_full)   # gains in force: 50 %
    k.step(0.0)
    net = build_net([STAND], COLS)
    player = MofPlayer(k)
    player.start(net, request, 0.0, q_now)
    return k, player, q_now


def test_the_stand_fixture_reaches_its_angles_on_the_right_tick():
    k, player, q_now = start_near_stand()
    target = stand_target()
    moved = ~np.isnan(target)
    assert player.motion == "stand" and player.line == 7 and player.progress == 0.0
    seen = []

    def reached() -> bool:
        seen.append(k.pos.copy())
        return bool(np.allclose(k.pos[moved], target[moved], atol=1e-9))

    tick = ticks_until(reached, k, player, 0, 200)
    assert tick is not None and abs(tick - 50) <= 1          # 100 ms = 50 ticks
    # Linear in between: halfway at 50 ms; `*` joints (head) never move.
    np.testing.assert_allclose(seen[25][moved], 0.5 * (q_now + target)[moved], atol=1e-9)
    np.testing.assert_allclose(np.array(seen)[:, :2], np.tile(q_now[:2], (len(seen), 1)))
    assert player.progress == 100.0 and not player.done      # stand loops while requested


def test_stand_loops_while_requested_and_leaves_when_the_request_goes():
    k, player, _ = start_near_stand()
    target = stand_target()
    moved = ~np.isnan(target)
    for tick in range(410):     # 0.82 s: eight passes through the loop and a bit
        player.step(tick * DT)
        k.step(tick * DT)
    assert not player.done and player.motion == "stand"
    np.testing.assert_allclose(k.pos[moved], target[moved], atol=1e-9)
    # Leave: the running 100 ms line (started at 0.8 s) finishes, then the
    # net falls through to `transition allMotions extern start`.
    player.set_request(None, 410 * DT)
    assert player.progress == pytest.approx(20.0)   # re-planned: 20 ms of the last line done
    done_at = ticks_until(lambda: player.done, k, player, 410, 500)
    assert done_at is not None and abs(done_at - 450) <= 1
    assert player.progress == 100.0 and player.motion is None


def test_the_fixture_hardness_ramp():
    k, player, _ = start_near_stand()
    kp50, kd50 = 0.5 * COLS.kp_full, 0.5 * COLS.kd_full
    # 50 ms ramp: LR5 from 50 % to 100 %, every other joint from 50 % to the 70 % default.
    end = COLS.kp_full * np.array([0.7] * 21 + [1.0])
    end_kd = COLS.kd_full * np.array([0.7] * 21 + [1.0])
    for tick in range(60):
        t = tick * DT
        player.step(t)
        k.step(t)
        frac = min(t / 0.050, 1.0)
        np.testing.assert_allclose(k.kp, kp50 + (end - kp50) * frac, atol=1e-9,
                                   err_msg=f"tick {tick}")
        np.testing.assert_allclose(k.kd, kd50 + (end_kd - kd50) * frac, atol=1e-9)
    # The loop's next hardness line (t = 100 ms) asks for the same: no change.
    for tick in range(60, 120):
        player.step(tick * DT)
        k.step(tick * DT)
        np.testing.assert_allclose(k.kp, end, atol=1e-9)


def play(text: str, q_now: np.ndarray, ticks: int, q_meas: np.ndarray | None = None,
         step_limited: bool = True) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, bool, float]]:
    """Run a one-motion net; per tick (after the kernel) a copy of pos, kp and kd."""
    k = kernel(step_limited)
    k.track(q_now)
    net = link_net([parse_mof(text, "t.mof", COLS)], COLS)
    player = MofPlayer(k)
    name = net.names[0]
    player.start(net, name, 0.0, q_now)
    out = []
    for tick in range(ticks):
        player.step(tick * DT, q_meas)
        k.step(tick * DT)
        out.append((k.pos.copy(), k.kp.copy(), k.kd.copy(), player.done, player.progress))
    return out


def stand_pose() -> np.ndarray:
    pose = yaml.safe_load(NAO.read_text())["poses"]["stand"]
    return np.array([pose[j] for j in COLS.joint_names])


def test_a_later_hardness_line_continues_an_unfinished_ramp_from_where_it_is():
    text = mof("soft",
               hardness("0", 0),          # at once
               hardness("100", 200),      # up over 200 ms ...
               line(ms=50),               # ... but only 50 ms pass: 25 % reached
               hardness("0", 100),        # down over 100 ms, from 25 %
               line(ms=150))
    out = play(text, stand_pose(), 160)
    expected = []
    for tick in range(160):
        t = tick * DT
        h = t / 0.2 if t <= 0.05 else 0.25 * max(0.0, 1.0 - (t - 0.05) / 0.1)
        expected.append(h)
    for tick, (_, kp, kd, _, _) in enumerate(out):
        np.testing.assert_allclose(kp, expected[tick] * COLS.kp_full, atol=1e-9,
                                   err_msg=f"tick {tick}")
        np.testing.assert_allclose(kd, expected[tick] * COLS.kd_full, atol=1e-9)
    # No jump at the interruption (tick 25): neighbours differ by one tick's slope.
    kp_knee = [o[1][13] for o in out]
    assert abs(kp_knee[25] - kp_knee[24]) <= COLS.kp_full[13] * DT / 0.2 + 1e-9
    assert abs(kp_knee[26] - kp_knee[25]) <= COLS.kp_full[13] * DT / 0.1 + 1e-9
    assert out[-1][3]                # 200 ms of lines, then extern: done
    assert out[98][4] == pytest.approx(100 * 98 * DT / 0.2)


def test_a_switched_off_joint_goes_limp_and_comes_back_from_where_it_is():
    q = stand_pose()
    text = mof("limp", hardness("100", 0),
               line("-", ms=20),                  # head yaw off for 20 ms
               line("10", ms=100))                # then on again, to 10 deg over 100 ms
    q_meas = q.copy()
    q_meas[0] = 0.3                               # it drifted while limp
    out = play(text, q, 70, q_meas=q_meas)
    for tick in range(1, 10):
        pos, kp, kd, _, _ = out[tick]
        assert kp[0] == 0.0 and kd[0] == 0.0, tick
        assert pos[0] == pytest.approx(0.3)      # the target follows the joint
        assert kp[1] == COLS.kp_full[1]          # the others stay stiff
    pos, kp, kd, _, _ = out[10]                  # t = 20 ms: on again, from 0.3 rad
    assert kp[0] == COLS.kp_full[0] and kd[0] == COLS.kd_full[0]
    assert pos[0] == pytest.approx(0.3)
    pos = out[35][0]                             # halfway through the 100 ms line
    assert pos[0] == pytest.approx(0.5 * (0.3 + math.radians(10)), abs=1e-9)


def test_a_non_interpolated_line_sets_at_once_and_holds():
    q = stand_pose()
    out = play(mof("jump", line("20", "10", interpolate=0, ms=40)), q, 25, step_limited=False)
    for tick in range(20):
        pos = out[tick][0]
        assert pos[0] == pytest.approx(math.radians(20)) and pos[1] == pytest.approx(
            math.radians(10)), tick
    assert out[20][3] and not out[19][3]         # 40 ms = 20 ticks, then done


def test_start_at_a_label_and_refuse_unknown_requests():
    k = kernel()
    net = build_net([STAND], COLS)
    player = MofPlayer(k)
    with pytest.raises(ValueError, match="unknown motion 'wave'"):
        player.start(net, "wave", 0.0, stand_pose())
    player.start(net, None, 0.0, stand_pose(), at=("stand", "start"))
    assert player.motion == "stand" and not player.done
    assert ticks_until(lambda: player.done, k, player, 0, 100) == 50   # not requested: leaves
    player.start(net, None, 0.0, stand_pose())
    assert player.done and player.progress == 100.0                     # nothing requested


def test_switching_motions_passes_through_extern(tmp_path):
    sit = write(tmp_path, "sit", mof("sit", line("*", "*", "10", ms=60)))
    net = build_net([STAND, sit], COLS)
    k = kernel(step_limited=False)
    player = MofPlayer(k)
    player.start(net, "stand", 0.0, stand_pose())
    for tick in range(30):
        player.step(tick * DT)
        k.step(tick * DT)
    player.set_request("sit", 30 * DT)
    # stand's line ends at 100 ms; sit's 60 ms line runs from there, then done.
    assert ticks_until(lambda: player.motion == "sit", k, player, 30, 100) == 50
    assert player.progress == 0.0
    assert ticks_until(lambda: player.done, k, player, 51, 200) == 80
    assert k.pos[2] == pytest.approx(math.radians(10))
