"""Mode 80 RL_RESET (SPEC §12.C.1): the weight-file reader, the progress
formula, the state's contract (entry, echoed gait, immediate exits), and in
physics motiond's own recovery and the CyberDog 2's own policy file (the
peer copy beside the repository; never shipped) bringing a robot lying on
its back to the crouch. Judged on the simulator's ground truth."""
from __future__ import annotations

import math
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from controller.behaviours.rl_reset import LAYERS, projected_gravity, reset_progress
from controller.motion.mlp import Mlp, PolicyError, weight_count
from controller.robot.config import Config, ConfigError, load_config
from controller.robot.resources import DATA_ROOT
from controller.sim.scorecard import crouch_height
from controller.sim.trial import Trial

CFG = load_config()
PEER_POLICY = (DATA_ROOT / "../shared/peers/cyberdog2_rl_models/reset/model.txt").resolve()
CROUCH = np.tile(CFG.rl_reset.crouch, 4)
FEET = {f"{leg}_foot" for leg in CFG.legs}


def test_weights_are_read_column_by_column_and_biased_per_layer(tmp_path: Path) -> None:
    # 2 -> 3 (tanh) -> 1: W1[r, c] is number c * 3 + r, then b1, W2, b2.
    w1 = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    b1 = np.array([0.01, 0.02, 0.03])
    w2 = np.array([[1.0, -2.0, 3.0]])
    b2 = np.array([0.5])
    numbers = [*w1.T.reshape(-1), *b1, *w2.T.reshape(-1), *b2]
    f = tmp_path / "model.txt"
    f.write_text(", ".join(repr(float(v)) for v in numbers) + ", \n")   # the trailing comma as shipped
    net = Mlp.load(f, (2, 3, 1), "tanh")
    x = np.array([0.7, -1.3])
    assert net.forward(x) == pytest.approx(w2 @ np.tanh(w1 @ x + b1) + b2)
    elu = Mlp.load(f, (2, 3, 1), "elu").forward(x)
    h = w1 @ x + b1
    assert elu == pytest.approx(w2 @ np.where(h > 0, h, np.expm1(h)) + b2)


def test_a_file_of_the_wrong_size_or_with_a_nan_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "model.txt"
    f.write_text(", ".join(["0.1"] * (weight_count((2, 3, 1)) - 1)))
    with pytest.raises(PolicyError, match="12 numbers, but layers \\[2, 3, 1\\] need 13"):
        Mlp.load(f, (2, 3, 1), "tanh")
    f.write_text(", ".join(["0.1"] * 12 + ["nan"]))
    with pytest.raises(PolicyError, match="NaN"):
        Mlp.load(f, (2, 3, 1), "tanh")
    f.write_text("0.1, zero")
    with pytest.raises(PolicyError, match="not a comma-separated list"):
        Mlp.load(f, (2, 3, 1), "tanh")


def test_the_reset_network_has_the_spec_size() -> None:
    assert weight_count(LAYERS) == 72140           # SPEC §12.C: the file's count


def test_the_progress_formula() -> None:
    up, back, side = projected_gravity(0, 0), projected_gravity(math.pi, 0), projected_gravity(math.pi / 2, 0)
    assert up == pytest.approx([0, 0, -1]) and back == pytest.approx([0, 0, 1], abs=1e-12)
    assert projected_gravity(0, 0.3)[0] == pytest.approx(math.sin(0.3))   # nose down: gravity ahead
    still = np.zeros(12)
    assert reset_progress(up, CROUCH, still, CROUCH) == 100
    assert reset_progress(back, CROUCH, still, CROUCH) == 5
    assert reset_progress(side, CROUCH, still, CROUCH) == int(100 * 0.5 * 0.25) + 5
    # Upright but the legs 0.5 rad off in one joint and moving: the second half is partial.
    q = CROUCH.copy()
    q[1] += 0.5
    r = 0.5 + 0.5 * (0.2 + 0.6 * math.exp(-0.25) + 0.2 * math.exp(-0.02 * 12))
    assert reset_progress(up, q, np.ones(12), CROUCH) == int(100 * r) + 5
    # 40 degrees of tilt: only the uprightness counts.
    tilted = projected_gravity(math.radians(40), 0)
    upright_share = 0.5 * (0.5 + 0.5 * math.cos(math.radians(40))) ** 2
    assert reset_progress(tilted, CROUCH, still, CROUCH) == int(100 * upright_share) + 5


def test_a_missing_policy_file_is_a_config_error(tmp_path: Path) -> None:
    shutil.copytree(DATA_ROOT / "config", tmp_path / "config")
    shutil.copytree(DATA_ROOT / "gaits", tmp_path / "gaits")      # config paths are relative
    path = tmp_path / "config" / "cyberdog2.yaml"
    path.write_text(path.read_text() + "\nrl_reset: {policy: nowhere.txt}\n")
    with pytest.raises(ConfigError, match="rl_reset.policy: .*nowhere.txt is not a file"):
        load_config(path)


def test_a_refused_policy_refuses_mode_80_with_the_reason(tmp_path: Path) -> None:
    bad = tmp_path / "model.txt"
    bad.write_text("0.5, 0.25")
    trial = Trial(replace(CFG, rl_reset=replace(CFG.rl_reset, policy=bad)), sensors={"enabled": False})
    trial.send(80)
    trial.run(0.1)
    assert trial.trace.mode[-1] == 0 and trial.trace.switch_status[-1] == 5
    assert "policy file was refused at start" in (trial.ctl.fsm.refusal or "")


def run_reset(cfg: Config, rpy: tuple[float, float, float], seconds: float) -> Trial:
    trial = Trial(cfg)
    trial.robot.place(cfg.fold_pose, rpy)
    trial.send(80, gait_id=7)         # any gait id: it has no effect and is echoed
    trial.run(seconds)
    return trial


def check_crouched(trial: Trial, within_s: float) -> None:
    tr = trial.trace
    truth = trial.robot.truth()
    roll, pitch, _ = truth.rpy
    assert max(abs(roll), abs(pitch)) < 0.1
    assert truth.contacts == FEET
    assert abs(truth.position[2] - crouch_height(trial.cfg)) < 0.015
    modes, bars = np.array(tr.mode), np.array(tr.bar)
    assert set(modes[modes != 0]) == {80} and set(np.array(tr.gait)[modes == 80]) == {7}
    first = np.flatnonzero(modes == 80)[0]
    assert bars[first] == 0
    done = np.flatnonzero(bars == 100)
    assert len(done) and (done[0] - first) * trial.cfg.dt <= within_s
    # 100 only upright: the truth at that tick is within 30 degrees of upright.
    r, p, _ = tr.rpy[done[0]]
    assert math.cos(r) * math.cos(p) > math.cos(math.radians(30))


def test_own_recovery_from_the_back_ends_crouched_within_6_s_and_leaves_at_once() -> None:
    trial = run_reset(CFG, (math.pi, 0.0, 0.0), 6.0)
    check_crouched(trial, 6.0)
    assert trial.trace.switch_status[-1] == 0
    trial.send(12)                     # every allowed exit completes immediately
    trial.run(0.004)
    assert trial.trace.mode[-1] == 12


def test_the_robots_own_policy_file_brings_it_off_its_back() -> None:
    if not PEER_POLICY.is_file():
        pytest.fail(f"the CyberDog 2's reset policy is not at {PEER_POLICY} (the peers beside the repository)")
    cfg = replace(CFG, rl_reset=replace(CFG.rl_reset, policy=PEER_POLICY))
    trial = run_reset(cfg, (math.pi, 0.0, 0.0), 3.0)
    check_crouched(trial, 3.0)
