"""The recovery stand (12) from a fall, in physics: the robot lying on its
back, on either side or on its belly rolls over with the config's optimised
roll-over (config/trajectories/cyberdog2/RollBack, and its mirror image) as
its IMU says, then stands. Judged on the simulator's ground truth; the controller sees only
joint_state and imu."""
from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from controller.behaviours.recovery import RecoveryStand
from controller.motion.trajectory import load
from controller.robot.config import Config, load_config
from controller.sim.trial import Trial
from controller.sim.world import World

ROOT = Path(__file__).resolve().parent.parent
CFG = load_config(ROOT / "config" / "cyberdog2.yaml")
FEET = {f"{leg}_foot" for leg in ("FR", "FL", "RR", "RL")}


def stand_from(rpy: tuple[float, float, float], seconds: float = 8.0,
               cfg: Config = CFG, world: World | None = None) -> tuple[Trial, float | None]:
    """Lying folded at `rpy`, send 12; the time the bar first read 100 (None: never)."""
    trial = Trial(cfg, world=world)
    trial.robot.place(cfg.fold_pose, rpy)
    trial.send(12)
    for tick in range(int(seconds * cfg.tick_hz)):
        trial.tick()
        if trial.trace.bar[-1] == 100 and trial.trace.mode[-1] == 12:
            return trial, (tick + 1) * cfg.dt
    return trial, None


@pytest.mark.parametrize("rpy", [(math.pi, 0.0, 0.0), (math.pi / 2, 0.0, 0.0), (-math.pi / 2, 0.0, 0.0),
                                 (0.0, 0.0, 0.0)], ids=["back", "right side", "left side", "belly"])
def test_a_fallen_robot_rolls_over_and_stands_within_6_s(rpy):
    trial, done = stand_from(rpy)
    assert done is not None and done <= 6.0, f"stood at {done} s"
    truth = trial.robot.truth()
    roll, pitch, _ = truth.rpy
    assert max(abs(roll), abs(pitch)) < 0.1
    assert truth.contacts == FEET
    assert abs(truth.position[2] - CFG.stand_height) < 0.02
    bars = np.array(trial.trace.bar)
    assert np.all(np.diff(bars[bars >= 0]) >= 0), "progress never goes back"


def test_upright_the_recovery_does_not_roll():
    trial, done = stand_from((0.0, 0.0, 0.0))
    rec = trial.ctl.fsm.behaviours[12]
    assert isinstance(rec, RecoveryStand)
    assert done is not None and rec.rolled == 0


def test_a_roll_over_that_does_nothing_is_reported_failed_not_standing(tmp_path):
    """Roll-overs that only fold the legs cannot turn the robot: after the
    allowed rolls the recovery gives up at 0 % and says why."""
    root = tmp_path / "cfg"
    shutil.copytree(ROOT / "config", root)
    shutil.copytree(ROOT / "gaits", tmp_path / "gaits")      # config paths are relative
    folder = root / "trajectories" / "cyberdog2"
    for name in ("RollBack",):
        traj = load(folder / f"{name}.yaml", CFG.joint_names, CFG.tick_hz)
        doc = yaml.safe_load((folder / f"{name}.yaml").read_text())
        for phase in doc["phases"]:
            phase["q"] = [float(v) for v in CFG.fold_pose]
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(doc))
        assert len(traj.phases) == len(doc["phases"])
    cfg = load_config(root / "cyberdog2.yaml")
    trial, done = stand_from((math.pi, 0.0, 0.0), seconds=12.0, cfg=cfg)
    assert done is None
    rec = trial.ctl.fsm.behaviours[12]
    failure = rec.failure()
    assert failure is not None and "after 4 roll-overs" in failure
    assert "RECOVERY_STAND failed" in trial.ctl.counters.last_error
    assert max(trial.trace.bar) == 0


@pytest.mark.parametrize("robot, rpy, mirrored", [
    ("go2", (-math.pi / 2, 0.0, 0.0), True),         # on its left side: the short way is the mirror image
    ("go2", (math.pi / 2, 0.0, 0.0), False),         # on its right side: the roll-over's own way
    ("go2", (math.pi, 0.0, 0.0), False),             # on its back
    ("cyberdog2", (-math.pi / 2, 0.0, 0.0), False),  # roll_through 0: it falls onto its back first
])
def test_the_first_roll_takes_the_short_way_to_the_belly(robot: str, rpy: tuple[float, float, float],
                                                         mirrored: bool) -> None:
    """scripts.recovery.roll_through (Go2: 1, the roll-over turns the body
    left side up): lying on the other side, the first roll is the mirror image."""
    cfg = load_config(ROOT / "config" / f"{robot}.yaml")
    assert cfg.scripts is not None and cfg.scripts.roll_through == (1 if robot == "go2" else 0)
    trial = Trial(cfg)
    trial.robot.place(cfg.fold_pose, rpy)
    trial.send(12)
    for _ in range(20):
        trial.tick()
    rec = trial.ctl.fsm.behaviours[12]
    assert isinstance(rec, RecoveryStand) and rec.rolled == 1 and rec.mirror_first == mirrored
    assert rec.roll is not None and rec.roll.trajectory.name.endswith(" mirrored") == mirrored


def test_roll_through_is_a_sign(tmp_path: Path) -> None:
    from controller.robot.config import ConfigError
    root = tmp_path / "cfg"
    shutil.copytree(ROOT / "config", root)
    shutil.copytree(ROOT / "gaits", tmp_path / "gaits")      # config paths are relative
    text = (root / "go2.yaml").read_text()
    (root / "go2.yaml").write_text(text.replace("roll_through: 1", "roll_through: 0.5"))
    with pytest.raises(ConfigError, match="roll_through: expected -1, 0 or 1, got 0.5"):
        load_config(root / "go2.yaml")


@pytest.mark.parametrize("roll", [math.pi / 2, -math.pi / 2 + 0.02], ids=["right side", "left side, 1 degree off"])
def test_from_a_side_one_roll_stands_cyberdog2_up_even_with_a_10_percent_heavier_trunk(roll: float) -> None:
    """The roll-over is also optimised from lying on either side and 0.05 rad
    either way, rolled at once as the recovery does (side_starts). The one
    made from the back alone pushed while the body was still falling onto
    its back: 10 % heavier, it rocked back from 55 degrees and took 2 or 4
    rolls, depending on the start angle by a degree."""
    trial, done = stand_from((roll, 0.0, 0.0), world=World(trunk_mass_scale=1.1))
    rec = trial.ctl.fsm.behaviours[12]
    assert isinstance(rec, RecoveryStand) and rec.rolled == 1
    assert done is not None and done <= 4.5, f"stood at {done} s"
    truth = trial.robot.truth()
    assert max(abs(truth.rpy[0]), abs(truth.rpy[1])) < 0.1 and truth.contacts == FEET


def test_a_roll_over_is_also_scored_from_the_sides_it_is_played_on() -> None:
    from controller.sim.motion_optimiser import GOALS, side_starts
    go2 = load_config(ROOT / "config" / "go2.yaml")
    half = math.pi / 2
    assert side_starts(CFG, GOALS["roll-back"]) == pytest.approx(
        (half, half - 0.05, half + 0.05, -half, -half - 0.05, -half + 0.05))
    # Go2 (roll_through 1) plays the mirror image on its left side.
    assert side_starts(go2, GOALS["roll-back"]) == pytest.approx((half, half - 0.05, half + 0.05))
    assert side_starts(CFG, GOALS["forward"]) == ()


def test_a_roll_over_costs_half_its_back_and_half_its_better_side() -> None:
    """roll_cost: the start from the back (the recovery's first roll) weighs
    as much as the side it gets up better from (the recovery plays its
    mirror image on the other side, roll_through), whatever the number of
    starts on each."""
    from controller.sim.motion_optimiser import roll_cost

    def approx(x: float) -> Any:
        return pytest.approx(x)
    half = math.pi / 2
    starts = [math.pi, half, half - 0.05, half + 0.05, -half, -half - 0.05, -half + 0.05]
    # Up from the negative side only, on its back still: half of each.
    assert roll_cost([1.0, 0.9, 0.9, 0.9, -0.6, -0.6, -0.6], starts) == (approx(0.5 * (1.0 - 0.6)), -1)
    # The same roll-over up from the back too: better by the back's change alone.
    assert roll_cost([-0.6, 0.9, 0.9, 0.9, -0.6, -0.6, -0.6], starts) == (approx(-0.6), -1)
    assert roll_cost([-0.6, -0.5, -0.5, -0.5, 0.9, 0.9, 0.9], starts)[1] == 1
    # Only one side scored (the config's roll_through), or none.
    assert roll_cost([0.2, -0.4, -0.2], [math.pi, half, half + 0.05]) == (approx(0.5 * (0.2 - 0.3)), 1)
    assert roll_cost([0.2, 0.4], [math.pi, math.pi]) == (approx(0.3), 0)
    assert roll_cost([], []) == (math.inf, 0)
