"""The NAO-style humanoid (config/nao22.yaml): the config loader reads its
legs by group, its optional walk and its .mof keys (one strict reader,
errors naming file and key); its .mof net plays through MofPlayback on the
real C kernel at 500 Hz; the controller and the sim run it in-process on
the fake clock (tests/harness.py). No sockets."""
from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from harness import Rig
from structlog.testing import capture_logs

from controller.core.controller import Controller
from controller.motion.mof import (
    MOF_HEADER,
    JointLine,
    MofError,
    link_net,
    load_mof_columns,
    load_net,
    parse_mof,
)
from controller.motion.playback import MofPlayback, Position
from controller.protocol.constants import BAN_TRANS
from controller.robot.config import Config, ConfigError, MofConfig, load_config
from controller.robot.humanoid_kinematics import HumanoidLegKinematics
from controller.robot.native import Kernel
from controller.sim.joint_sim import SimRobot

ROOT = Path(__file__).resolve().parent.parent
NAO = ROOT / "config" / "nao22.yaml"


@pytest.fixture(scope="module")
def cfg():
    return load_config(NAO)


Edit = Callable[[Any], None]   # changes a loaded YAML tree in place


def write_variant(tmp_path: Path, edit: Edit) -> Path:
    """nao22.yaml edited by `edit`, in tmp_path with its FSM table."""
    data = yaml.safe_load(NAO.read_text())
    if "mof" in data:   # the .mof directory is named relative to the config
        data["mof"]["directory"] = str((NAO.parent / data["mof"]["directory"]).resolve())
    if "locomotion" in data:   # so is the walk file
        data["locomotion"]["walk"] = str((NAO.parent / data["locomotion"]["walk"]).resolve())
    edit(data)
    path = tmp_path / "nao.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    (tmp_path / data["fsm"]).write_text((NAO.parent / data["fsm"]).read_text())
    return path


# -- the config ---------------------------------------------------------------------------
def test_nao22_loads_with_its_legs_found_by_group(cfg):
    assert cfg.kind == "humanoid" and cfg.num_joints == 22
    legs = [cfg.joint_names[i] for i in cfg.leg_indices]
    assert legs[:6] == ["r_hip_yaw_pitch", "r_hip_roll", "r_hip_pitch", "r_knee",
                        "r_ankle_pitch", "r_ankle_roll"]
    assert legs[6:] == [n.replace("r_", "l_", 1) for n in legs[:6]]
    assert cfg.leg_indices.tolist() == list(range(16, 22)) + list(range(10, 16))
    # The walk (mode 11) with its own walk file at NAO's stand height and hip spacing.
    assert cfg.walk is not None and cfg.walk.path.name == "nao22_walk.yaml" and "walk" in cfg.gains
    assert cfg.walk.params.trunk_height == cfg.stand_height
    assert set(cfg.fsm.names) == {0, 7, 11, 12, 21, 60}   # 60 SCRIPT: .mof motions by name
    # Arms of four joints: a gain set has one kp per arm joint.
    np.testing.assert_allclose(cfg.gains["pose"].kp[2:6], [8, 8, 6, 6])


def test_nao22_reads_the_mof_binding_once(cfg):
    mof = cfg.mof
    assert mof is not None and mof.default_hardness == 70.0
    cols = mof.columns
    assert cols.names == MOF_HEADER and cols.joints.tolist() == list(range(22))
    assert [c for c, s in zip(cols.names, cols.sign) if s < 0] == ["AL1", "AR2", "AR3",
                                                                  "LR1", "LR5"]
    np.testing.assert_array_equal(cols.kp_full, cfg.gains["mof"].kp)
    np.testing.assert_array_equal(mof.full_gains.kd, cfg.gains["mof"].kd)
    np.testing.assert_array_equal(cols.default_hardness, np.full(22, 70.0))
    np.testing.assert_array_equal(cols.q_min, cfg.q_min)
    # The thin wrapper the other tools call reads the same binding.
    again = load_mof_columns(NAO)
    assert again.names == cols.names
    np.testing.assert_array_equal(again.sign, cols.sign)
    np.testing.assert_array_equal(again.kp_full, cols.kp_full)


def test_the_other_configs_have_no_mof_binding():
    for name in ("humanoid20.yaml", "cyberdog2.yaml"):
        assert load_config(ROOT / "config" / name).mof is None
    with pytest.raises(MofError, match=r"humanoid20.yaml: mof_columns: missing"):
        load_mof_columns(ROOT / "config" / "humanoid20.yaml")


def _set(path: str, value: Any) -> Edit:
    """An edit that sets data[a][b]... = value for path 'a.b...'."""
    def edit(data: Any) -> None:
        *parents, last = path.split(".")
        for key in parents:
            data = data[int(key) if key.isdigit() else key]
        data[int(last) if last.isdigit() else last] = value
    return edit


def _pop(path: str) -> Edit:
    def edit(data: Any) -> None:
        *parents, last = path.split(".")
        for key in parents:
            data = data[key]
        data.pop(last)
    return edit


def _reorder_columns(data):
    cols = list(data["mof_columns"].items())
    cols[2], cols[3] = cols[3], cols[2]
    data["mof_columns"] = dict(cols)


@pytest.mark.parametrize("edit, where", [
    (_set("mof_columns.AL1", {"joint": "l_shoulder_roll", "sign": 2}),
     "mof_columns.AL1.sign: expected 1 or -1"),
    (_set("mof_columns.HP", {"joint": "head_yaw", "offset": "x"}), "mof_columns.HP.offset"),
    (_set("mof_columns.HP", "neck"), "mof_columns.HP: 'neck' is not a joint"),
    (_set("mof_columns.HT", "head_yaw"), "mof_columns.HT: joint 'head_yaw' is already driven"),
    (_pop("mof_columns.LR5"), "mof_columns: expected the 22 .mof columns; missing ['LR5']"),
    (_set("mof_columns.XX", "head_yaw"), "unknown ['XX']"),
    (_reorder_columns, "mof_columns: columns out of file order"),
    (_set("mof_columns", ["HP"]), "mof_columns: expected dict"),
    (_set("mof_hardness.default", 120), "mof_hardness.default: 120.0 is outside [0.0, 100.0]"),
    (_set("mof_hardness.default", math.nan), "mof_hardness.default: must be finite"),
    (_set("mof_hardness.full_gains", "stiff"),
     "mof_hardness.full_gains: 'stiff' is not a gain set"),
    (_pop("mof_hardness"), "mof_hardness: missing"),
    (_pop("mof_columns"), "mof_hardness: set, but there is no `mof_columns`"),
    (_set("gains.mof.head.kp", [6]), "gains.mof.head.kp: expected a list of 2 numbers"),
    (_set("gains.mof.left_leg.kd", [0.7, 0.7, 0.7, math.nan, 0.7, 0.6]),
     "gains.mof.left_leg.kd: expected finite numbers"),
    (_set("joints.0.min", math.nan), "joints[0].min: must be finite"),
    (_set("joints.16.group", "left_leg"), "joints: group right_leg has 5 joints"),
    (_pop("locomotion"), "gains.walk: set, but there is no `locomotion`"),
    (_pop("gains.walk"), "gains.walk: missing (the `locomotion` walk needs it)"),
    (_set("geometry.hip_yaw_axis.left", [0.5, 0.7, -0.7]),
     "geometry.hip_yaw_axis.left: the axis must lie in the y-z plane"),
])
def test_bad_keys_are_refused_naming_file_and_key(tmp_path: Path, edit: Edit, where: str) -> None:
    path = write_variant(tmp_path, edit)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}: "), str(err.value)
    assert where in str(err.value), str(err.value)
    # load_mof_columns reports the same, as a MofError naming the file.
    with pytest.raises(MofError) as info:
        load_mof_columns(path)
    assert info.value.source == str(path) and where in info.value.reason


@pytest.mark.parametrize("edit, where", [
    (_set("mof.files", ["stand.mof", "../stand.mof"]),
     "mof.files[1]: '../stand.mof': expected a bare .mof name"),
    (_set("mof.files", ["stand.mof", "stand.txt"]), "mof.files[1]"),
    (_set("mof.files", ["stand.mof", "stand.mof"]), "mof.files[1]: 'stand.mof' is listed twice"),
    (_set("mof.files", []), "mof.files: expected a list of .mof file names"),
    (_set("mof.directory", "nowhere"), "mof.directory"),
])
def test_bad_net_keys_are_refused(tmp_path: Path, edit: Edit, where: str) -> None:
    path = write_variant(tmp_path, edit)
    with pytest.raises(ConfigError, match=r"^" + str(path).replace(".", r"\.")) as err:
        load_config(path)
    assert where in str(err.value), str(err.value)


# -- the motion net -----------------------------------------------------------------------
def test_the_net_of_stand_and_nod_is_built_from_the_config(cfg):
    net, errors = load_net(cfg.mof)
    assert errors == ()
    assert [p.name for p in cfg.mof.files] == ["stand.mof", "nod.mof"]
    assert set(net.motions) == {"stand", "nod"}
    # The shipped stand.mof is the B-Human documentation's example.
    assert cfg.mof.files[0].read_text() == (ROOT / "tests" / "fixtures" / "stand.mof").read_text()
    nod = net.motions["nod"]
    assert set(nod.labels) == {"start", "again"}
    # While requested, nod loops (two 250 ms lines); a stand request leaves
    # through the head's return (200 ms) straight into stand.
    entry = net.entry("nod")
    assert entry is not None
    plan = net.plan(entry, "nod")
    assert not plan.leaves and plan.duration == pytest.approx(0.5)
    plan = net.plan(net.label("nod", "again"), "stand")
    assert not plan.leaves and [pos[0] for pos in plan.lines] == ["nod"] * 3 + ["stand"]


def test_a_bad_mof_file_is_reported_and_left_out(tmp_path: Path) -> None:
    directory = tmp_path / "net"
    directory.mkdir()
    for name in ("stand.mof", "nod.mof"):
        (directory / name).write_text((NAO.parent / "../gaits/mof/nao22" / name).read_text())
    # 95 deg of .mof shoulder roll is outside l_shoulder_roll's limits.
    bad = (directory / "stand.mof").read_text().replace("0   -50 -2 -40", "0   95  -2 -40", 1)
    (directory / "wave.mof").write_text(bad.replace("stand", "wave"))

    def net_of_three(data):
        data["mof"] = {"directory": str(directory),
                       "files": ["stand.mof", "wave.mof", "nod.mof", "missing.mof"]}
    cfg = load_config(write_variant(tmp_path, net_of_three))
    net, errors = load_net(mof_of(cfg))
    assert set(net.motions) == {"stand", "nod"}
    (wave, missing) = errors
    assert (wave.source, wave.line) == (str(directory / "wave.mof"), 7)
    assert "AL1 = 95 deg puts l_shoulder_roll" in wave.reason
    assert missing.source == str(directory / "missing.mof") and "cannot read" in missing.reason
    # The daemon logs each (and runs with the rest of the net).
    with capture_logs() as logs:
        Controller(cfg)
    refused = [e for e in logs if e["event"] == "mof_refused"]
    assert [(e["file"], e["line"]) for e in refused] == [(wave.source, 7),
                                                        (missing.source, None)]


# -- MofPlayback on the real kernel --------------------------------------------------------
DEG = math.pi / 180.0
T0 = 1000   # start tick: 2 s into the controller clock


def mof_of(cfg: Config) -> MofConfig:
    assert cfg.mof is not None, f"{cfg.path} binds no .mof columns"
    return cfg.mof


def kernel_for(cfg: Config) -> Kernel:
    # As controller.py builds it: no target moves faster than its velocity limit.
    return Kernel(cfg.q_min, cfg.q_max, cfg.v_max, step_max=cfg.v_max * cfg.dt)


def joint_line(cfg: Config, motion: str, index: int) -> JointLine:
    lines = [i for i in load_net(mof_of(cfg))[0].motions[motion].instructions if isinstance(i, JointLine)]
    return lines[index]


def mof_target(cfg: Config, degrees: dict[str, float]) -> np.ndarray:
    """.mof degrees per column -> joint angles (rad, wire order) by the
    columns' sign and offset; NaN for the columns not given."""
    cols = mof_of(cfg).columns
    q = np.full(cfg.num_joints, np.nan)
    for c, name in enumerate(cols.names):
        if name in degrees:
            q[cols.joints[c]] = cols.sign[c] * degrees[name] * DEG + cols.offset[c]
    return q


# stand.mof's joint line (the B-Human documentation's example), in .mof degrees.
STAND_MOF: dict[str, float] = dict(zip(MOF_HEADER[2:], [0, -50, -2, -40, 0, -50, -2, -40, -6, -1, -43, 92,
                                      -48, 0, -6, -1, -43, 92, -48, -1]))


def play(cfg: Config, motion: str, q0: np.ndarray, ticks: int,
         gains: float = 0.5) -> tuple[MofPlayback, list[tuple[Any, ...]]]:
    """Start a MofPlayback at T0 from q0 with `gains` x the full-hardness
    gains in force, then step it and the kernel tick by tick. Returns the
    playback and per tick (tick, position, pos, kp, kd, done)."""
    k = kernel_for(cfg)
    full = mof_of(cfg).full_gains
    k.track(q0)
    k.set_gains(gains * full.kp, gains * full.kd)
    k.step((T0 - 1) * cfg.dt)
    pb = MofPlayback(load_net(mof_of(cfg))[0], motion, cfg.dt)
    pb.start(k, T0, q0, q0)
    out = []
    for tick in range(T0, T0 + ticks):
        position = pb.step(tick, k.pos.copy())
        k.step(tick * cfg.dt)
        out.append((tick, position, k.pos.copy(), k.kp.copy(), k.kd.copy(), pb.done))
    return pb, out


def test_stand_mof_reaches_its_angles_on_the_lines_last_tick(cfg):
    target = mof_target(cfg, STAND_MOF)
    moved = ~np.isnan(target)
    np.testing.assert_allclose(target[moved], joint_line(cfg, "stand", 0).angles[2:])
    # From halfway between the crouch pose and stand.mof's pose: a non-stand
    # pose from which no joint needs more than its velocity limit over the
    # line's 100 ms, so the kernel's step limit does not slow it.
    q0 = cfg.poses["crouch"].copy()
    q0[moved] = 0.5 * (q0[moved] + target[moved])
    assert (np.abs(target - q0)[moved] / 0.100 < cfg.v_max[moved]).all()
    pb, out = play(cfg, "stand", q0, 120)
    # stand.mof keeps the head (`*`): its joints are every column but HP, HT.
    assert pb.name == "stand" and pb.indices.tolist() == list(range(2, 22))
    reached = next(tick for tick, _, pos, *_ in out
                   if np.allclose(pos[moved], target[moved], atol=1e-9))
    assert abs(reached - (T0 + 100 // 2)) <= 1          # 100 ms = 50 ticks at 500 Hz
    halfway = out[25][2]                                 # linear in between
    np.testing.assert_allclose(halfway[moved], 0.5 * (q0 + target)[moved], atol=1e-9)
    for _, _, pos, *_ in out:                            # `*` columns (the head) keep q0
        np.testing.assert_allclose(pos[~moved], q0[~moved])


def test_stand_mof_hardness_ramps_to_its_percent_of_the_mof_gains(cfg):
    full = cfg.mof.full_gains
    hardness = np.full(22, 70.0)                         # `*`: mof_hardness.default
    hardness[cfg.joint_names.index("r_ankle_roll")] = 100.0   # LR5
    end_kp, end_kd = hardness / 100 * full.kp, hardness / 100 * full.kd
    start_kp, start_kd = 0.5 * full.kp, 0.5 * full.kd
    _, out = play(cfg, "stand", cfg.poses["stand"], 40)
    ramp_ticks = 50 // 2                                 # the line's 50 ms ramp
    for tick, _, _, kp, kd, _ in out:
        s = min((tick - T0) / ramp_ticks, 1.0)
        np.testing.assert_allclose(kp, start_kp + s * (end_kp - start_kp), atol=1e-9)
        np.testing.assert_allclose(kd, start_kd + s * (end_kd - start_kd), atol=1e-9)
    np.testing.assert_allclose(out[ramp_ticks][3], end_kp, atol=1e-9)    # at the ramp's end
    mid = out[ramp_ticks // 2][3]                        # about half way (12 of 25 ticks)
    np.testing.assert_allclose(mid, 0.5 * (start_kp + end_kp),
                               atol=0.05 * np.max(np.abs(end_kp - start_kp)))


def test_a_looping_motion_is_done_after_its_first_pass_and_then_holds(cfg):
    # stand loops while requested: done once its 100 ms line has played.
    _, out = play(cfg, "stand", cfg.poses["stand"], 80)
    done_at = next(tick for tick, *_, done in out if done)
    assert done_at == T0 + 50
    positions = [p for _, p, *_ in out]
    assert positions[0] == Position("stand", 7, 0)      # stand.mof line 7 is the joint line
    assert positions[25] == Position("stand", 7, 50)
    assert positions[-1] == Position("stand", 7, 100)
    assert [p.progress for p in positions] == sorted(p.progress for p in positions)

    # nod loops too (down 250 ms, up 250 ms while requested): done at 500 ms,
    # the head holding the last target (-10 deg), not starting the next nod.
    down, up = joint_line(cfg, "nod", 0), joint_line(cfg, "nod", 1)
    head_pitch = cfg.joint_names.index("head_pitch")
    _, out = play(cfg, "nod", cfg.poses["stand"], 400)
    done_at = next(tick for tick, *_, done in out if done)
    assert done_at == T0 + 250
    frames = [p.frame for _, p, *_ in out]
    assert frames[0] == down.line and frames[125] == up.line and frames[-1] == up.line
    pitch = np.array([pos[head_pitch] for _, _, pos, *_ in out])
    assert abs(int(np.argmax(pitch)) - 125) <= 1 and pitch.max() == pytest.approx(20 * DEG)
    np.testing.assert_allclose(pitch[250:], -10 * DEG, atol=1e-9)
    assert all(p == Position("nod", up.line, 100) for _, p, *_ in out[250:])


def test_a_motion_that_leaves_by_itself_is_done_when_it_leaves(cfg):
    text = "\n".join(["motion_id = wave", "label start",
                      " ".join(["*", "*", "70"] + ["*"] * 19 + ["1", "30"]),
                      "transition allMotions extern start"])
    net = link_net([parse_mof(text, "wave.mof", cfg.mof.columns)], cfg.mof.columns)
    k = kernel_for(cfg)
    q0 = cfg.poses["stand"]
    k.track(q0)
    pb = MofPlayback(net, "wave", cfg.dt)
    assert pb.done                                       # not started
    pb.start(k, T0, q0, q0)
    ticks = []
    for tick in range(T0, T0 + 30):
        pb.step(tick, q0)
        k.step(tick * cfg.dt)
        ticks.append(pb.done)
    assert ticks.index(True) == 15                       # 30 ms
    assert k.pos[2] == pytest.approx(70 * DEG)
    with pytest.raises(ValueError, match="unknown motion 'sit'"):
        MofPlayback(net, "sit", cfg.dt)


# -- the controller and the sim --------------------------------------------------------------
def test_the_sim_loads_the_leg_joints_wherever_they_are(cfg):
    kin = HumanoidLegKinematics(cfg.geometry)
    robot = SimRobot(cfg, kin)
    robot.q = cfg.poses["stand"].copy()
    load = robot._load_torque()
    legs = np.zeros(cfg.num_joints, dtype=bool)
    legs[cfg.leg_indices] = True
    assert np.abs(load[legs]).max() > 0.1 and (load[~legs] == 0.0).all()
    # Knees carry the weight (the knee is joint 3 of a leg in IK order).
    knees = cfg.leg_indices[[3, 9]]
    assert [cfg.joint_names[i] for i in knees] == ["r_knee", "l_knee"]
    assert np.abs(load[knees]).min() > 0.1


def test_the_controller_stands_nao22_up_from_off() -> None:
    rig = Rig(config_path=str(NAO))
    assert set(rig.ctl.fsm.behaviours) == {0, 7, 11, 12, 21, 60}
    rig.run(20)
    assert rig.mode == 0 and rig.last.bar == 100
    assert rig.body_height() < rig.cfg.sim["rest_height"]     # sitting in the fold
    rig.send(12)
    rig.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 6000)
    bars = [r.bar for r in rig.responses if r.mode == 12]
    assert sorted(set(bars)) == [0, 80, 99, 100] and bars == sorted(bars)
    np.testing.assert_allclose(rig.ctl.kernel.pos, rig.cfg.poses["stand"], atol=1e-9)
    rig.run(500)
    assert rig.body_height() == pytest.approx(rig.cfg.stand_height, abs=0.01)
    assert rig.ctl.counters.last_error == "" and rig.ctl.counters.commands_rejected == 0
    assert rig.ctl.response.motor_error == [0] * 12             # the leg joints'
    # The damper lies it down into the lie pose; from there the walk is
    # refused (only a finished stand walks), and so is the pose (21).
    rig.send(7, 1)
    rig.run_until(lambda r: r.last.mode == 7 and r.last.bar == 100, 3000)
    rig.run(200)
    np.testing.assert_allclose(rig.ctl.kernel.pos, rig.cfg.lie_pose, atol=1e-9)
    rig.send(11, 3)
    rig.run(10)
    assert rig.last.switch_status == BAN_TRANS and rig.mode == 7
    assert "PURE_DAMPER cannot switch to LOCOMOTION" in rig.ctl.counters.last_error
    rig.send(21, 5)
    rig.run(10)
    assert rig.last.switch_status == BAN_TRANS and rig.mode == 7
    assert "PURE_DAMPER cannot switch to POSE_CTRL" in rig.ctl.counters.last_error
