"""Mode 3's absolute posture clamps the commanded body height into the
config's `posture_height_range` (CyberDog 2's [0.15, 0.35] m by default,
SPEC §6): a fixed range held a tall robot far below its stand (Menagerie's
Spot, standing at 0.46 m, was held 0.12 m low). Judged on the body's true
height in physics."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from controller.robot.config import load_config
from controller.sim.trial import Trial

ROOT = Path(__file__).resolve().parent.parent


def height_after_posture(path: Path, z: float) -> float:
    trial = Trial(load_config(path))
    trial.send(12)
    trial.run(3.0)
    trial.send(3, 0, pos_des=[0.0, 0.0, z])
    trial.run(2.0)
    return float(trial.robot.truth().position[2])


def test_mode_3_height_is_clamped_into_the_configs_range(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "config", tmp_path / "config")
    shutil.copytree(ROOT / "gaits", tmp_path / "gaits")
    source = tmp_path / "config" / "cyberdog2.yaml"
    assert load_config(source).posture_height_range == (0.15, 0.35)
    data = yaml.safe_load(source.read_text())
    data["posture_height_range"] = [0.15, 0.22]
    narrow = tmp_path / "config" / "cyberdog2_narrow.yaml"
    narrow.write_text(yaml.safe_dump(data, sort_keys=False))
    assert height_after_posture(source, 0.27) == pytest.approx(0.27, abs=0.01)
    assert height_after_posture(narrow, 0.27) == pytest.approx(0.22, abs=0.01)
