"""The two-leg stand for a new robot (issue 42 item 4): its mass model read
from the robot's own files (controller/robot/mjcf_mass_model.py), its
figures searched in physics (controller/sim/two_leg_optimiser.py) and
written by `motionctl optimise two-leg` and `optimise all`."""
from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from controller.behaviours.two_leg import TwoLegStand
from controller.cli import motionctl
from controller.motion.two_leg import centre_of_mass
from controller.robot.config import Geometry, load_config
from controller.robot.config.reader import ConfigError
from controller.robot.mass_properties import figures_mass_model, load_figures, stand_angles
from controller.robot.mjcf_figures import compile_mjcf, posed_body
from controller.robot.mjcf_mass_model import derived_mass_model
from controller.sim import two_leg_optimiser as search
from controller.sim.motion_optimiser import Result
from controller.sim.scorecard import card_row, judge, play
from controller.sim.trial import Trial

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "config"


class InlineWorkers:
    """motion_optimiser's Workers, running nothing: `map` books what it was
    asked in `asked` and says every candidate cost 0.4."""
    asked: list[Any] = []

    def __init__(self, *args: Any, **kw: Any) -> None:
        pass

    def __enter__(self) -> InlineWorkers:
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def map(self, fn: Any, xs: list[Any]) -> list[Any]:
        self.asked.append((fn, [np.asarray(x).copy() for x in xs]))
        return [(0.4, [{"world": "unchanged", "cost": 0.4}]) for _ in xs]


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    shutil.copytree(CONFIG, tmp_path / "config", ignore=shutil.ignore_patterns("trajectories"))
    shutil.copytree(ROOT / "gaits", tmp_path / "gaits")
    return tmp_path


def test_the_mass_model_read_from_go2s_own_model_is_the_one_written_by_hand(tree: Path) -> None:
    """config/physics/go2_own.xml holds Go2's published figures in Unitree's
    joint order and convention: split at the controller's legs, it gives
    the mass model config/go2.yaml writes by hand, figure for figure; so
    does Go2's physics file."""
    target = tree / "config" / "go2m.yaml"
    assert motionctl.main(["new-robot", "go2m", "--mjcf", str(tree / "config" / "physics" / "go2_own.xml"),
                           "-o", str(target)]) == 0
    ours, hand = load_config(target), load_config(CONFIG / "go2.yaml")
    assert hand.mass_model is not None and isinstance(hand.geometry, Geometry)
    from_model = derived_mass_model(ours.path, ours.robot, ours.sim, ours.geometry, ours.joint_map)
    from_file = figures_mass_model(load_figures(CONFIG / "physics" / "go2.yaml"), hand.geometry, CONFIG)
    for got in (from_model, from_file):
        for key in ("trunk", "abad", "thigh", "thigh_at", "shank", "shank_at"):
            assert getattr(got, key) == pytest.approx(getattr(hand.mass_model, key), abs=1e-6), key
        np.testing.assert_allclose(got.trunk_com, hand.mass_model.trunk_com, atol=1e-6)


def test_go1s_mass_model_puts_its_centre_of_mass_where_the_model_does(tree: Path) -> None:
    """A config that plays the two-leg stand without a `mass_model` gets its
    MJCF's (the loader): the whole robot's mass, and at the stand the
    centre of mass the model's every body gives (mjcf_figures.posed_body,
    an independent sum), within the few mm the model's links put off their
    lines."""
    config = tree / "config" / "go1_two_leg.yaml"
    config.write_text("extends: go1.yaml\nscripts:\n  modes:\n    64: {kind: two_leg, gaits: [0]}\n")
    cfg = load_config(config)
    assert cfg.mass_model is not None and isinstance(cfg.geometry, Geometry)
    assert cfg.mass_model.total == pytest.approx(cfg.geometry.mass, abs=1e-3)
    q = stand_angles(cfg.geometry, cfg.stand_height, cfg.stand_com_x)
    model = compile_mjcf(CONFIG / "physics" / "go1.xml", "go1")
    _, com, _ = posed_body(model, cfg.joint_map.positions_to_wire(q.reshape(-1)), cfg.sim["mjcf_joints"], "go1")
    geometry = cfg.geometry
    ours = centre_of_mass(cfg.mass_model, geometry.hip_offsets, geometry.side_sign, geometry.abad_link,
                          geometry.hip_link, q.reshape(-1))
    np.testing.assert_allclose(ours, com, atol=0.004)


def test_a_robot_with_nothing_to_read_its_mass_from_is_told_so(tmp_path: Path) -> None:
    assert motionctl.main(["new-robot", "mydog", "-o", str(tmp_path / "mydog.yaml")]) == 0
    (tmp_path / "mydog2.yaml").write_text(
        "extends: mydog.yaml\nsim: {physics: nothing.yaml}\nscripts:\n  modes:\n    64: {kind: two_leg, gaits: [0]}\n")
    with pytest.raises(ConfigError, match="mass_model: missing .* neither its own MJCF .* nor a physics file"):
        load_config(tmp_path / "mydog2.yaml")


def test_the_cost_is_under_one_exactly_when_the_card_passes_the_row() -> None:
    """Go2's own figures, played as the card's row: the card's checks pass
    and the cost is under 1; the same metrics with one check failed (the
    card's judge) cost 1 or more, each check on its own."""
    cfg = load_config(CONFIG / "go2.yaml")
    spec = card_row(search.ROW)
    plan, gains = search.figures_of(cfg, search.start_values(cfg, "own"))
    metrics, verdicts = play(search.with_two_leg(cfg, plan, gains), {**spec, "margins": False}, search.ROW)
    assert verdicts and all(ok for ok, _ in verdicts.values()), verdicts
    assert search.cost(metrics, verdicts, 0.0) < 1.0
    failing: list[dict[str, Any]] = [{"bar": 75.0}, {"trunk_contact_s": 0.05}, {"end_on_feet": 0.0},
                                     {"rear": 1.1}, {"end_tilt": 0.35}, {"bar": None}]
    for change in failing:
        changed = {**metrics, **change}
        assert search.cost(changed, judge(changed, spec["checks"], np.zeros(3)), 0.0) >= 1.0, change
    # Reared up and fell over is nearer than never reared up.
    fell = {**metrics, "bar": 50.0, "trunk_contact_s": 6.0, "end_on_feet": 0.0, "end_tilt": 3.1, "rear": 1.57}
    stayed = {**metrics, "bar": 25.0, "rear": 0.3}
    assert (search.cost(fell, judge(fell, spec["checks"], np.zeros(3)), 0.0)
            < search.cost(stayed, judge(stayed, spec["checks"], np.zeros(3)), 0.0))


def test_the_stages_keep_the_greetings_block() -> None:
    """The greeting gets what the searched stages leave of SPEC §9's 8.7 s;
    a candidate whose stages leave less than GREET_MIN_S is over the block
    and pays for it."""
    cfg = load_config(CONFIG / "go1.yaml")
    low, high = search.bounds(cfg)
    for x in (search.start_values(cfg, "cyberdog2"), search.start_values(cfg, "go2"), low):
        plan, _ = search.figures_of(cfg, x)
        assert search.block_s(plan) == pytest.approx(search.BLOCK_S, abs=1e-3)
        assert plan.greet_s >= search.GREET_MIN_S
    plan, _ = search.figures_of(cfg, high)
    assert plan.greet_s == search.GREET_MIN_S and search.block_s(plan) > search.BLOCK_S
    assert np.all(low < high)
    assert np.all((search.start_values(cfg, "go2") >= low) & (search.start_values(cfg, "go2") <= high))


def test_the_search_passes_the_unchanged_world_first_then_every_world(monkeypatch: pytest.MonkeyPatch) -> None:
    """With margin worlds, a first stage in the unchanged world alone (at
    most half the generations, until a pass), then every world from its
    best, until a pass with margin; --nominal is one stage."""
    calls: list[dict[str, Any]] = []

    def stage(config_path: str, worlds: Any, starts: Any, low: Any, high: Any, generations: int, *rest: Any
              ) -> Result:
        target, before = rest[-2], rest[-1]
        calls.append({"worlds": worlds, "starts": starts, "generations": generations, "target": target,
                      "before": before})
        done = (before.generations if before else 0) + 3
        return Result(np.full(len(search.FIGURES), float(len(calls))), 0.9, [], 10 * len(calls), done)

    monkeypatch.setattr(search, "_stage", stage)
    path = str(CONFIG / "go1.yaml")
    got = search.optimise(path, search.worlds(False), generations=20)
    assert [c["worlds"] for c in calls] == [[{}], search.worlds(False)]
    assert [c["target"] for c in calls] == [search.PASS_COST, search.TARGET_COST]
    assert [c["generations"] for c in calls] == [10, 17]
    # each reference's figures, and each laid over with KNEELING_ON_CALVES
    assert len(calls[0]["starts"]) == 2 * len(search.REFERENCES) and calls[0]["before"] is None
    np.testing.assert_array_equal(calls[1]["starts"][0], np.full(len(search.FIGURES), 1.0))
    assert calls[1]["before"].generations == 3 and got.generations == 6
    calls.clear()
    search.optimise(path, search.worlds(True), generations=20)
    assert [(c["worlds"], c["generations"], c["target"]) for c in calls] == [([{}], 20, search.TARGET_COST)]


def test_the_search_begins_at_the_best_start_and_stops_at_the_target() -> None:
    """motion_optimiser.best_start: of several starts (the two-leg stand's
    references, `optimise all`'s roll-overs) the one that costs least;
    _generations stops once the best candidate costs under `target`, and
    runs on while none does."""
    from controller.sim.motion_optimiser import _generations

    class Es:
        def __init__(self) -> None:
            self.told = 0

        def stop(self) -> bool:
            return self.told >= 8

        def ask(self) -> list[np.ndarray]:
            return [np.full(2, 0.5)] * 2

        def tell(self, unit: Any, costs: Any) -> None:
            self.told += 1

    class Pool:
        def __init__(self, costs: list[float]) -> None:
            self.costs = costs

        def map(self, fn: Any, xs: Any) -> list[tuple[float, list[Any]]]:
            return [(self.costs.pop(0), []) for _ in xs]

    from controller.sim.motion_optimiser import best_start

    starts = [np.zeros(2), np.ones(2), np.full(2, 2.0)]
    got = best_start(Pool([5.0, 1.5, 3.0]), starts)      # type: ignore[arg-type]
    assert got.first == 1 and got.cost == 1.5 and got.evaluations == 3
    np.testing.assert_array_equal(got.x, np.ones(2))
    for target, told in ((0.5, 3), (None, 8), (0.1, 8)):
        es, best = Es(), Result(np.zeros(2), 9.0, [], 0, 0)
        pool: Any = Pool([3.0, 2.0, 1.0, 1.0, 0.4, 0.6] + [0.3] * 10)
        _generations(es, pool, np.zeros(2), np.ones(2), best, None, lambda x: (0.0, []), target)
        assert es.told == told and best.generations == told


def test_a_search_from_each_start_keeps_the_best(monkeypatch: pytest.MonkeyPatch) -> None:
    """motion_optimiser.optimise with several starts (`optimise all`'s
    roll-overs): a CMA-ES search from each, the best result kept with the
    start it came from, the rollouts and generations of all counted; the
    progress of the later search reports the best so far."""
    from controller.sim import motion_optimiser as mo

    ends = iter([2.0, 0.5, 1.0])      # what each start's search reaches

    def search(es: Any, pool: Any, low: Any, span: Any, best: Result, progress: Any) -> None:
        best.cost, best.x = next(ends), best.x + 1.0
        best.evaluations += 10
        best.generations += 4
        if progress is not None:
            progress(best.generations, best.cost, [])

    seen: list[tuple[int, float]] = []
    monkeypatch.setattr(mo, "Workers", InlineWorkers)
    monkeypatch.setattr(mo, "_generations", search)
    goal = mo.GOALS["forward"]
    cfg = load_config(CONFIG / "go1.yaml")
    n = len(goal.params(cfg))
    starts = [[0.0] * n, [0.1] * n, [0.2] * n]
    got = mo.optimise(str(CONFIG / "go1.yaml"), goal, start=starts, generations=4,
                      progress=lambda g, c, o: seen.append((g, c)))
    assert got.first == 1 and got.cost == 0.5 and (got.evaluations, got.generations) == (30, 12)
    np.testing.assert_allclose(got.x, np.full(n, 1.1))
    assert seen == [(4, 2.0), (8, 0.5), (12, 0.5)]


def test_a_roll_over_is_searched_from_the_back_first_then_from_every_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """motion_optimiser.optimise for the roll-over: first from the back alone
    until it gets up there (BACK_UP_COST) within half the generations, then
    the best of that judged from every start and searched on from there
    (roll_cost) for the generations left. From the sides too at once, the
    search on Barkour vB kept one side's getting up and never left the back
    (cost 1.3 after 20 generations, from either start); from the back alone
    it got up there at its fourth."""
    from controller.sim import motion_optimiser as mo

    judged = InlineWorkers.asked = []
    stages: list[tuple[Any, Any, int, float]] = []

    def search(es: Any, pool: Any, low: Any, span: Any, best: Result, progress: Any,
               evaluate: Any = mo._evaluate, target: float | None = None) -> None:
        stages.append((evaluate, target, es.opts["maxiter"], best.cost))
        best.x = best.x + 1.0
        best.cost = -0.2 if evaluate is mo._evaluate_back else -0.5
        best.evaluations += 5
        best.generations += 3

    monkeypatch.setattr(mo, "Workers", InlineWorkers)
    monkeypatch.setattr(mo, "_generations", search)
    goal = mo.GOALS["roll-back"]
    cfg = load_config(CONFIG / "go1.yaml")
    n = len(goal.params(cfg))
    got = mo.optimise(str(CONFIG / "go1.yaml"), goal, start=[0.0] * n, generations=10)
    assert [(e, t, g) for e, t, g, _ in stages] == [(mo._evaluate_back, mo.BACK_UP_COST, 5),
                                                    (mo._evaluate, None, 7)]
    # The second stage begins from the first's best, judged from every start.
    assert judged[0][0] is mo._evaluate
    np.testing.assert_allclose(judged[0][1][0], np.full(n, 1.0))
    assert stages[1][3] == 0.4
    assert got.cost == -0.5 and (got.evaluations, got.generations) == (11, 6)
    np.testing.assert_allclose(got.x, np.full(n, 2.0))
    # A jump has one stage.
    stages.clear()
    mo.optimise(str(CONFIG / "go1.yaml"), mo.GOALS["up"], generations=10)
    assert [(e, t, g) for e, t, g, _ in stages] == [(mo._evaluate, None, 10)]


def test_optimise_two_leg_writes_a_config_that_plays_mode_64(tree: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """`optimise two-leg -o FILE`: FILE extends the config with the searched
    `two_leg` section and mode 64; it must sit beside the config. The
    search itself is tested above: here it returns Go2's start."""
    seen: dict[str, Any] = {}

    def fake(config_path: str, worlds: Any, **kw: Any) -> Result:
        seen.update(worlds=worlds, **kw)
        cfg = load_config(config_path)
        return Result(search.start_values(cfg, "go2"), 0.2, [{"world": "unchanged", "cost": 0.2}], 3, 1)

    monkeypatch.setattr(search, "optimise", fake)
    base, out = tree / "config" / "go1.yaml", tree / "config" / "go1_two_leg.yaml"
    code = motionctl.main(["--config", str(base), "optimise", "two-leg", "-o", str(out), "--generations", "1"])
    assert code == 0, capsys.readouterr().err
    assert seen["worlds"] == search.worlds(False) and len(seen["worlds"]) == 5 and not seen["own_start"]
    cfg = load_config(out)
    text = out.read_text()
    assert cfg.scripts is not None and cfg.scripts.modes[64].kind == "two_leg"
    assert sorted(cfg.scripts.modes[64].gaits) == [0, 10]
    assert cfg.two_leg.plan.kneel_height == pytest.approx(0.964 * 0.27, abs=1e-4)
    assert cfg.two_leg.gains.r_force == pytest.approx(0.737 * 20.0 * 12.743 / 8.0, abs=1e-3)
    assert cfg.mass_model is not None and cfg.mass_model.trunk == pytest.approx(5.204)
    assert "kneel_height: 0.2603   # searched" in text and "cost 0.200" in text
    assert yaml.safe_load(text)["extends"] == "go1.yaml"
    code = motionctl.main(["--config", str(base), "optimise", "two-leg", "-o", str(tree / "elsewhere.yaml")])
    assert code == 1 and "a .yaml beside" in capsys.readouterr().err


def test_the_rear_joints_deliver_the_torque_the_balance_asks_for_through_their_damping() -> None:
    """Go1's joints have the maker's viscous damping (2 N m s/rad on hip and
    knee). On two legs the rear joints are torque controlled, and a joint
    turning at speed loses damping x speed of what the balance asked for:
    the two-leg stand gives it back (config joint_damping). Measured in the
    simulated body while it rears up: the torque that reaches each rear
    joint (the motor's, less the damping, at the joint's true speed) against
    the balance's, with the give-back and without it."""
    cfg = load_config(CONFIG / "go1.yaml")
    plan, gains = search.figures_of(cfg, search.start_values(cfg, "go2"))
    two_leg = search.with_two_leg(cfg, plan, gains)
    # The rear-up as Go2's figures play it, its toes' rolling friction left
    # out of the balance (the give-back alone is measured here)
    assert two_leg.two_leg.gains.foot_rolling == pytest.approx(0.01)
    two_leg = replace(two_leg, two_leg=replace(two_leg.two_leg, gains=replace(two_leg.two_leg.gains, foot_rolling=0.0)))
    damping = np.asarray(two_leg.joint_damping)[6:]
    assert damping.max() == pytest.approx(2.0)
    errors = {}
    for give_back in (True, False):
        trial = Trial(two_leg)
        trial.send(12)
        trial.run(3.0)
        trial.send(64, gait_id=0)
        off: list[float] = []
        behaviour: TwoLegStand | None = None
        for _ in range(int(4.0 / two_leg.dt)):
            trial.tick()
            found = behaviour or trial.ctl.fsm.behaviours.get(64)
            behaviour = found if isinstance(found, TwoLegStand) else None
            if behaviour is None or behaviour.stage != "rear":
                continue
            if not give_back:
                behaviour.damping = None
            qd = np.asarray(trial.robot.qd)[6:]
            if np.abs(qd).max() > 0.3:
                reached = trial.robot.tau[6:] - damping * qd
                off.append(float(np.abs(reached - behaviour.balance.tau[6:]).max()))
        assert len(off) > 100
        errors[give_back] = float(np.median(off))
    assert errors[True] < 0.3 < 1.0 < errors[False], errors
