"""Scale-free defaults (issue 42 item 3; controller/robot/config/scale.py):
a quadruped's config may leave out its gains, the MPC's force figures and
the estimator's contact loads; they are then CyberDog 2's, scaled by the
robot's mass and leg length. A 5 kg and a 50 kg robot (Go1's own model grown
or shrunk) trot at their command from them, judged on ground truth."""
from __future__ import annotations

import argparse
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from scaled_robot import scaled_go1

from controller.cli import check_config
from controller.robot.config import Geometry, load_config
from controller.robot.config.scale import DAMPING, FORCES, GAINS, STIFFNESS, scaled_keys
from controller.sim.trial import Trial

ROOT = Path(__file__).resolve().parent.parent
CYBERDOG2 = ROOT / "config" / "cyberdog2.yaml"


def _drop(data: dict[str, Any], key: str) -> None:
    *parents, last = key.split(".")
    node = data
    for part in parents:
        node = node[part]
    node.pop(last, None)


def _beside(tmp_path: Path, name: str, data: dict[str, Any]) -> Path:
    """`data` written as a config among a copy of config/ and gaits/ (its
    relative paths hold)."""
    shutil.copytree(ROOT / "config", tmp_path / "config")
    shutil.copytree(ROOT / "gaits", tmp_path / "gaits")
    path = tmp_path / "config" / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_cyberdog2s_written_figures_are_what_its_size_derives(tmp_path: Path) -> None:
    """The reference table is config/cyberdog2.yaml's figures: the robot
    with every scaled key left out loads to the same controller."""
    data = yaml.safe_load(CYBERDOG2.read_text())
    for key in [*(f"gains.{name}" for name in GAINS), *FORCES, *STIFFNESS, *DAMPING, "balance.regularisation"]:
        _drop(data, key)
    path = _beside(tmp_path, "cyberdog2_scaled.yaml", data)
    derived = load_config(path)
    written = load_config(CYBERDOG2)
    assert len(derived.scaled) == len(GAINS) + len(FORCES) + len(STIFFNESS) + len(DAMPING) + 1
    assert written.scaled == ("balance.terrain.load",)       # CyberDog 2 never wrote it
    for name in GAINS:
        np.testing.assert_allclose(derived.gains[name].kp, written.gains[name].kp, err_msg=name)
        np.testing.assert_allclose(derived.gains[name].kd, written.gains[name].kd, err_msg=name)
    assert derived.balance is not None and written.balance is not None
    for field in ("force_max", "regularisation"):
        assert getattr(derived.balance, field) == pytest.approx(getattr(written.balance, field))
    np.testing.assert_allclose(derived.balance.stance_kp, written.balance.stance_kp)
    np.testing.assert_allclose(derived.balance.stance_kd, written.balance.stance_kd)
    assert derived.estimator.contact_force == written.estimator.contact_force
    assert derived.estimator.contact_band == written.estimator.contact_band


def test_go1s_left_out_figures_grow_with_its_mass_and_legs(tmp_path: Path) -> None:
    """config/go1.yaml leaves them out: 12.743 kg on 0.426 m legs against
    CyberDog 2's 8 kg on 0.294 m."""
    cfg = load_config(ROOT / "config" / "go1.yaml")
    assert isinstance(cfg.geometry, Geometry) and cfg.balance is not None
    mass = cfg.geometry.mass / 8.0
    leg = (cfg.geometry.hip_link + cfg.geometry.knee_link) / 0.29391
    assert mass == pytest.approx(1.5929, abs=1e-4) and leg == pytest.approx(1.4494, abs=1e-4)
    np.testing.assert_allclose(cfg.gains["swing"].kp[:3], np.array([30.0, 30.0, 30.0]) * mass * leg)
    np.testing.assert_allclose(cfg.gains["recovery"].kd[:3], np.array([2.5, 2.0, 1.5]) * mass * leg ** 1.5)
    assert cfg.balance.regularisation == pytest.approx(4.0e-5 / mass ** 2)
    assert cfg.balance.force_max == pytest.approx(150.0 * mass)
    assert cfg.estimator.contact_force == pytest.approx(12.0 * mass)
    assert cfg.balance.terrain.load == pytest.approx(12.0 * mass)
    # A written figure wins over its scaled default.
    data = yaml.safe_load(cfg.path.read_text())
    data["gains"] = {"swing": {"kp": [1, 2, 3], "kd": [0.1, 0.2, 0.3]}}
    data["balance"]["regularisation"] = 1e-4
    written = load_config(_beside(tmp_path, "go1_written.yaml", data))
    keys = scaled_keys(data)
    np.testing.assert_array_equal(written.gains["swing"].kp[:3], [1, 2, 3])
    np.testing.assert_allclose(written.gains["stance"].kp, cfg.gains["stance"].kp)
    assert written.balance is not None and written.balance.regularisation == 1e-4
    assert "gains.swing" not in keys and "balance.regularisation" not in keys and "gains.stance" in keys


def test_check_config_says_which_figures_it_scaled_and_by_what(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_config.run(argparse.Namespace(paths=[str(ROOT / "config" / "go1.yaml")])) == 0
    lines = capsys.readouterr().out.splitlines()
    scaled = [line for line in lines if line.startswith("     scaled: ")]
    assert len(scaled) == 1
    assert "gains.swing" in scaled[0] and "balance.regularisation" in scaled[0]
    assert "mass 1.59, leg length 1.45 (kp x 2.31, kd x 2.78, forces x 1.59)" in scaled[0]


def _trot(path: Path, vx: float) -> tuple[float, float, float, float]:
    """Stand up, trot at vx: the stand's height, then the trot's speed,
    height and largest tilt over 2 s after 2 s, on the simulator's truth."""
    cfg = load_config(path)
    t = Trial(cfg)
    t.send(12)
    t.run(2.5)
    stand = float(t.robot.truth().position[2])
    t.send(11, 3, vel_des=[vx, 0.0, 0.0], step_height=[0.06, 0.06])
    t.run(2.0)
    x0, s0 = t.robot.truth().position[0], t.robot.data.time
    heights, tilt = [], 0.0
    for _ in range(10):
        t.run(0.2)
        truth = t.robot.truth()
        heights.append(truth.position[2])
        tilt = max(tilt, *(abs(a) for a in truth.rpy[:2]))
    speed = (t.robot.truth().position[0] - x0) / (t.robot.data.time - s0)
    return stand, float(speed), float(np.mean(heights)), tilt


@pytest.mark.parametrize("s", [0.73, 1.58], ids=["5kg", "50kg"])
def test_a_5kg_and_a_50kg_robot_trot_at_their_command_from_the_defaults(s: float, tmp_path: Path) -> None:
    """Go1's model shrunk to 5 kg and grown to 50 kg, its config what
    `new-robot --mjcf` writes from it: it stands at its height and trots at
    its command (the same Froude number as Go1 at 0.5 m/s)."""
    path = scaled_go1(s, tmp_path)
    cfg = load_config(path)
    assert isinstance(cfg.geometry, Geometry) and cfg.locomotion is not None
    assert cfg.geometry.mass == pytest.approx(12.743 * s ** 3, rel=1e-3)
    vx = round(0.5 * math.sqrt(s), 2)
    stand, speed, height, tilt = _trot(path, vx)
    assert stand == pytest.approx(cfg.stand_height, abs=0.01 * s)
    assert speed == pytest.approx(vx, rel=0.1)
    assert height == pytest.approx(cfg.locomotion.body_height, abs=0.015 * s)
    assert tilt < 0.05


def test_the_50kg_robot_on_cyberdog2s_unscaled_figures_does_not_stand(tmp_path: Path) -> None:
    """What the scaling is for: CyberDog 2's gains written into the 50 kg
    robot's config leave it sagging on its folded legs."""
    path = scaled_go1(1.58, tmp_path)
    data = yaml.safe_load(path.read_text())
    data["gains"] = {name: {"kp": list(kp), "kd": list(kd)} for name, (kp, kd) in GAINS.items()}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    cfg = load_config(path)
    t = Trial(cfg)
    t.send(12)
    t.run(2.5)
    assert t.robot.truth().position[2] < cfg.stand_height - 0.15
