"""The scripted CyberDog 2 modes through the whole controller: 64 (two-leg
stand "greeting"), 16 (jumps: optimised trajectories, controller/behaviours/jump.py)
and 22 (force jump), SPEC §5.4, §5.6, §5.7,
§5.10, §5.11, §6.6-§6.8, §9 and §11.

Everything runs in-process on the fake clock of tests/harness.py (one tick =
2 ms) against the simulated robot. Times are measured in ticks on that clock:
each tick's (mode, gait, switch_status, bar) is `ctl.last_reported` right
after the tick, so a stage boundary is seen at its exact tick even where the
50 Hz responses would only bracket it.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import numpy as np
import pytest
from harness import Rig

from controller import msgs
from controller.behaviours.jump import TrajectoryMode
from controller.behaviours.scripted import ScriptedMode
from controller.behaviours.two_leg import LEAN_WAIT_S, TwoLegStand
from controller.sim.physics import PhysicsRobot

TICK_MS = 2
Report = tuple[int, int, int, int]   # mode, gait, switch_status, progress (Controller.last_reported)
SCRIPTED = (64, 16, 22)
TRANSITIONING, BAN_TRANS = 1, 5

# The greeting's stages and the progress each one ends with (SPEC §5.11: 25
# after kneeling, 50 after rearing up, 75 after the gesture, 100 at the end).
GREETING = (("kneel", 25), ("rear", 50), ("greet", 75), ("reach", 75), ("land", 75),
            ("lean", 75), ("stand", 100))
GREETING_MIN_MS = 8700              # SPEC §9, motion 123: the block a client gives it

# Jump gait -> its trajectory (config/trajectories/cyberdog2). They take longer
# than the SPEC §9 minimum durations; the block waits (TRANSITIONING, §5.6).
JUMPS = {0: "JumpYawLeft", 1: "JumpLong", 3: "JumpYawRight", 6: "JumpHigh"}
LANDING_TICKS = 50                  # config scripts.modes.16.settle_ms: 100 ms


# -- the rig and a per-tick recorder ----------------------------------------------------

@pytest.fixture
def rig() -> Rig:
    """A robot standing in mode 12 with progress 100 (about 2 s of robot time)."""
    r = Rig()
    r.stand()
    assert r.mode == 12 and r.ctl.last_reported == (12, 0, 0, 100)
    return r


class Recorder:
    """Steps the rig tick by tick (heart-beating every 100 ms as Rig.run does)
    and keeps, per tick, what the controller reported and the controller_status
    messages it published. While a scripted mode is in control, every tick's
    kernel output must be inside the joint limits and no kernel step may have
    been clamped (Kernel.flagged counts joints whose output the C kernel had
    to limit: non-finite, step, position or velocity limit; csrc/kernel.c)."""

    def __init__(self, rig: Rig) -> None:
        self.rig = rig
        self.rows: list[tuple[int, tuple[int, int, int, int]]] = []
        self.statuses: list[msgs.controller_status_t] = []
        self.script_done: int | None = None   # first tick a scripted mode's script had ended
        self.scripted_ticks = 0

    def send(self, mode: int, gait: int = 0, **fields: Any) -> int:
        """Queue a command; return the tick that will process it."""
        self.rig.send(mode, gait, **fields)
        return self.rig.ctl.tick

    def step(self, ticks: int = 1) -> None:
        rig, ctl = self.rig, self.rig.ctl
        cfg = rig.cfg
        for _ in range(ticks):
            tick = ctl.tick
            rig.tick(heartbeat=tick % 50 == 0)
            self.rows.append((tick, ctl.last_reported))
            assert rig.last_out is not None
            for _, channel, data in rig.last_out.messages:
                if channel == rig.ch["status"]:
                    self.statuses.append(msgs.controller_status_t.decode(data))
            state = ctl.fsm.state
            if state.mode in SCRIPTED:
                self.scripted_ticks += 1
                k = ctl.kernel
                assert k.flagged == 0, f"tick {tick}: the kernel clamped {k.flagged} joints"
                assert np.all(k.pos >= cfg.q_min) and np.all(k.pos <= cfg.q_max), \
                    f"tick {tick}: a joint command is outside the joint limits"
                if self.script_done is None and isinstance(state, ScriptedMode) \
                        and state.playback is not None and state.playback.done:
                    self.script_done = tick

    def until(self, predicate: Callable[[Report], bool], max_ticks: int) -> int:
        """Step until predicate(reported) holds; return that tick."""
        for _ in range(max_ticks):
            self.step()
            tick, rep = self.rows[-1]
            if predicate(rep):
                return tick
        raise AssertionError(f"not reached within {max_ticks} ticks; last {self.rows[-1]}")

    def first(self, predicate: Callable[[Report], bool], since: int = 0) -> int:
        """The first recorded tick >= since whose report satisfies predicate."""
        for tick, rep in self.rows:
            if tick >= since and predicate(rep):
                return tick
        raise AssertionError("never reported")

    def reports(self, start: int, end: int | None = None) -> list[tuple[int, int, int, int]]:
        """Reports of ticks start <= tick < end."""
        return [rep for tick, rep in self.rows if tick >= start and (end is None or tick < end)]


def scripted(rig: Rig, mode: int) -> ScriptedMode:
    behaviour = rig.ctl.fsm.behaviours[mode]
    assert isinstance(behaviour, ScriptedMode)
    return behaviour


def stage_ticks(rig: Rig, mode: int, gait: int) -> dict[str, int]:
    """Ticks of each script of the chain `mode`/`gait` plays, as loaded."""
    chain = scripted(rig, mode).chains[gait]
    durations = [f.duration_ticks for f in chain.frames]
    out, k = {}, 0
    for part in chain.parts:
        out[part.name] = sum(durations[k:k + part.frames])
        k += part.frames
    return out


def expected_position(rig: Rig, mode: int, gait: int, rel: int) -> tuple[str, int]:
    """("<script> frame <k>", progress) `rel` ticks after entry, from the chain."""
    chain = scripted(rig, mode).chains[gait]
    ends = list(np.cumsum([f.duration_ticks for f in chain.frames]))
    index = min(bisect_right(ends, rel), len(ends) - 1)
    for part in chain.parts:
        if index < part.frames:
            break
        index -= part.frames
    progress = 100 if rel >= ends[-1] else rel * 100 // ends[-1]
    return f"{part.name} frame {index + 1}", progress


def start_greeting(rig: Rig) -> tuple[Recorder, int]:
    rec = Recorder(rig)
    entry = rec.send(64, 0)
    rec.step()
    assert rec.rows[-1] == (entry, (64, 0, 0, 0)), "12 (standing, ready) -> 64 is at once"
    return rec, entry


def greeting_ticks(rig: Rig) -> dict[str, int]:
    """Ticks of each stage of the greeting, from the config's `two_leg`."""
    plan = rig.cfg.two_leg.plan
    return {stage: round(getattr(plan, f"{stage}_s") / rig.cfg.dt) for stage, _ in GREETING}


def into_greet(rig: Rig) -> int:
    """Ticks from the greeting's entry to a little into its greet stage."""
    ticks = greeting_ticks(rig)
    return ticks["kneel"] + ticks["rear"] + 100


def two_leg(rig: Rig) -> TwoLegStand:
    behaviour = rig.ctl.fsm.behaviours[64]
    assert isinstance(behaviour, TwoLegStand)
    return behaviour


def nose_up(rig: Rig) -> float:
    """The body's nose-up pitch by the physics' ground truth (rad)."""
    return -body(rig).truth().rpy[1]


# -- 1. the greeting -------------------------------------------------------------------------

@pytest.mark.parametrize("start", [12, 21])
def test_the_greeting_rears_up_balances_and_lands_reporting_each_stage_on_time(rig, start):
    """In physics: the body gets its nose up past 1.2 rad on the rear feet,
    nothing but the feet touches the ground, it lands on four feet standing,
    and the progress shows each stage's end at its tick."""
    rec = Recorder(rig)
    if start == 21:
        rec.send(21, 0)
        rec.step(50)
        assert rec.rows[-1][1][0] == 21
    ticks = greeting_ticks(rig)
    total = sum(ticks.values())
    sent = rec.send(64, 0)
    highest, touched = 0.0, set()
    feet = {f"{leg}_foot" for leg in rig.cfg.legs}
    for _ in range(total + round(LEAN_WAIT_S / rig.cfg.dt) + 50):
        rec.step()
        highest = max(highest, nose_up(rig))
        touched |= set(body(rig).truth().contacts) - feet
    entry = rec.first(lambda rep: rep[0] == 64)
    assert entry == sent, "12 (ready) -> 64 and 21 -> 64 complete at once (SPEC §5.4)"
    assert highest >= 1.2, f"the nose only got {highest:.2f} rad up"
    assert not touched, f"{sorted(touched)} touched the ground"

    reps = rec.reports(entry)
    assert all(rep[:3] == (64, 0, 0) for rep in reps), "mode 64, gait 0, status 0 throughout"
    bars = [rep[3] for rep in reps]
    assert all(a <= b for a, b in pairwise(bars)), "progress never goes back"
    assert list(dict.fromkeys(bars)) == [0, 25, 50, 75, 100]      # SPEC §5.11
    # 25, 50 and 75 appear at the tick their stage ends (every tick is recorded);
    # 100 once the stand has played, after a lean that waits up to LEAN_WAIT_S for
    # the front feet to take the weight.
    boundary = entry
    for stage, bar in GREETING[:3]:
        boundary += ticks[stage]

        def reached(rep: Report, bar: int = bar) -> bool:
            return rep[3] >= bar
        seen = rec.first(reached, since=entry)
        assert seen == boundary, f"{bar} after {stage}: tick {seen}, expected {boundary}"
    done = rec.first(lambda rep: rep[3] == 100, since=entry)
    wait = round(LEAN_WAIT_S / rig.cfg.dt)
    assert entry + total <= done <= entry + total + wait
    # The stages fit the SPEC §9 block a client gives the greeting (> 8.7 s); a
    # lean that waits the longest ends the greeting at most LEAN_WAIT_S later.
    assert total * TICK_MS <= GREETING_MIN_MS

    # The 50 Hz responses agree: 64/0, never going back, 100 at the very tick.
    responses = [r for r in rig.responses if r.tick >= entry]
    assert responses and all((r.mode, r.gait_id, r.switch_status) == (64, 0, 0) for r in responses)
    rbars = [r.bar for r in responses]
    assert all(a <= b for a, b in pairwise(rbars))
    assert set(rbars) == {0, 25, 50, 75, 100}
    assert next(r.tick for r in responses if r.bar == 100) == done

    # Standing on four feet, level, at the stand height (ground truth).
    truth = body(rig).truth()
    assert feet <= set(truth.contacts)
    assert max(abs(truth.rpy[0]), abs(truth.rpy[1])) < 0.1
    assert abs(truth.position[2] - rig.cfg.stand_height) < 0.03
    assert rec.scripted_ticks >= total               # the limit checks covered every tick


# -- 2. handing over after the greeting ----------------------------------------------------

@pytest.mark.parametrize("target", [(21, 0), (3, 0), (16, 6)], ids=["to21", "to3", "to16"])
def test_a_when_ready_mode_waits_for_the_greeting_to_reach_100(rig, target):
    rec, entry = start_greeting(rig)
    total = sum(greeting_ticks(rig).values())
    rec.step(into_greet(rig))
    asked = rec.send(*target)
    switched = rec.until(lambda rep: rep[0] != 64, total + round(LEAN_WAIT_S / rig.cfg.dt))
    rec.step(5)

    pending = rec.reports(asked, switched)
    assert pending, "the request was handed over at once"
    # SPEC §5.6/§5.7/§5.10: the old state, its gait and TRANSITIONING while pending,
    # and the greeting keeps going (its progress still rises to 75).
    assert all(rep[:3] == (64, 0, TRANSITIONING) for rep in pending)
    bars = [rep[3] for rep in pending]
    assert bars[0] == 50 and bars[-1] == 75 and all(a <= b for a, b in pairwise(bars))
    # ... until the tick the greeting reaches 100 (SPEC §5.4), then the target:
    # the stand's end, after a lean that waits up to LEAN_WAIT_S for the front feet.
    assert entry + total <= switched <= entry + total + round(LEAN_WAIT_S / rig.cfg.dt)
    assert rec.reports(switched - 1, switched)[0][3] == 75 and not two_leg(rig).inside
    assert rec.rows[-1][1][:3] == (target[0], target[1], 0)
    assert rig.mode == target[0]


def test_re_requesting_64_does_not_cancel_a_pending_handover(rig):
    """SPEC §5.6 and §11 ("kept as in the reference"): a pending 64 -> 21
    completes anyway when 64 is requested again; only another allowed target
    retargets it."""
    rec, entry = start_greeting(rig)
    total = sum(greeting_ticks(rig).values())
    rec.step(into_greet(rig))
    asked = rec.send(21, 0)
    rec.step(100)
    assert rec.rows[-1][1][:3] == (64, 0, TRANSITIONING)
    again = rec.send(64, 0)
    rec.step(1)
    assert rec.rows[-1][0] == again
    assert rec.rows[-1][1][:3] == (64, 0, TRANSITIONING), \
        f"re-requesting 64 cancelled the pending 64 -> 21: reported {rec.rows[-1][1]}"
    switched = rec.until(lambda rep: rep[0] != 64, total + round(LEAN_WAIT_S / rig.cfg.dt))
    assert entry + total <= switched <= entry + total + round(LEAN_WAIT_S / rig.cfg.dt)
    assert rec.rows[-1][1][0] == 21
    assert asked < switched


# -- 3. a new greeting gait mid-greeting --------------------------------------------------------

def test_a_new_64_gait_while_greeting_is_refused_and_the_greeting_goes_on(rig):
    rec, entry = start_greeting(rig)
    stages = greeting_ticks(rig)
    total = sum(stages.values())
    rec.step(into_greet(rig))
    refused = rec.send(64, 10)
    done = rec.until(lambda rep: rep[3] == 100, total + round(LEAN_WAIT_S / rig.cfg.dt))
    rec.step(10)

    after = rec.reports(refused)
    assert all(rep[:3] == (64, 0, BAN_TRANS) for rep in after), "SPEC §11: status 5, still 64/0"
    # The responses show the refusal at once (a change of switch_status).
    assert any(r.tick == refused and r.switch_status == BAN_TRANS for r in rig.responses)
    # The greeting went on undisturbed: 75 and 100 at their own ticks.
    seen75 = rec.first(lambda rep: rep[3] >= 75, since=entry)
    assert seen75 == entry + stages["kneel"] + stages["rear"] + stages["greet"]
    assert entry + total <= done
    assert rig.mode == 64


@pytest.mark.parametrize("stage, frozen", [("rear", 0), ("greet", 50)])
def test_a_greeting_that_loses_its_balance_is_a_reported_failure_never_100(rig, stage, frozen):
    """A shove on two legs (1.5 m/s forward to the body, mid-stage) is more
    than the balance can take back: the motion fails, the controller logs
    it and puts it in last_error, and the bar stays where the SPEC says (0
    if it never finished rearing up, else the last stage's end)."""
    rec, entry = start_greeting(rig)
    ticks = greeting_ticks(rig)
    before = ticks["kneel"] + (ticks["rear"] // 2 if stage == "rear" else ticks["rear"] + ticks["greet"] // 2)
    rec.step(before)
    assert two_leg(rig).stage == stage
    body(rig).data.qvel[0] += 1.5
    rec.step(sum(ticks.values()) + 50 - before)
    failure = two_leg(rig).failure()
    assert failure is not None and "lost the balance" in failure
    assert "TWO_LEG_STAND failed: lost the balance" in rig.ctl.counters.last_error
    bars = [rep[3] for tick, rep in rec.rows if tick >= entry + before and rep[0] == 64]
    assert bars and bars[-1] == frozen and max(bars) < 100
    assert all(r.bar < 100 for r in rig.responses if r.tick >= entry and r.mode == 64)


def test_without_a_state_estimate_the_greeting_is_refused_as_failed_and_nothing_moves(joint_rig):
    """No IMU, no balance: the greeting fails on entry with the reason, holds
    the joints where they are and never reports 100."""
    rig = joint_rig
    rec, entry = start_greeting(rig)
    held = rig.ctl.kernel.pos.copy()
    rec.step(200)
    assert "no state estimate" in (two_leg(rig).failure() or "")
    assert "no state estimate" in rig.ctl.counters.last_error
    assert np.abs(rig.ctl.kernel.pos - held).max() < 1e-9
    assert all(rep[3] == 0 for rep in rec.reports(entry) if rep[0] == 64)


# -- 4. the jumps ---------------------------------------------------------------------------------

@pytest.fixture
def joint_rig() -> Rig:
    """As `rig`, on the joint-space sim: no body and no IMU, so no state
    estimate; a jump then counts as landed settle_ms after its last phase,
    and the greeting, which balances from the IMU, refuses to start."""
    r = Rig(sim="joint")
    r.stand()
    assert r.mode == 12 and r.ctl.last_reported == (12, 0, 0, 100)
    return r


def body(rig: Rig) -> PhysicsRobot:
    """The physics body (ground truth for judging, never the controller's)."""
    assert isinstance(rig.robot, PhysicsRobot)
    return rig.robot


def jump(rig: Rig) -> TrajectoryMode:
    behaviour = rig.ctl.fsm.behaviours[16]
    assert isinstance(behaviour, TrajectoryMode)
    return behaviour


@pytest.mark.parametrize("gait", sorted(JUMPS))
def test_each_jump_reports_100_only_once_the_body_has_landed_and_settled(rig, gait):
    """In physics: the bar stays 0 through the trajectory and its landing,
    and turns 100 only when the body stands on its four feet, still and
    upright (judged here on the simulator's ground truth)."""
    name = JUMPS[gait]
    traj = jump(rig).trajectories[gait]
    assert traj.name == name
    rec = Recorder(rig)
    entry = rec.send(16, gait)
    done = rec.until(lambda rep: rep[3] == 100, traj.total_ticks + 1000)
    rec.step(20)
    assert rec.first(lambda rep: rep[0] == 16) == entry, "12 (ready) -> 16 is at once"
    assert all(rep[:3] == (16, gait, 0) for rep in rec.reports(entry)), "SPEC §5.10: the command gait"
    assert all(rep[3] == 0 for rep in rec.reports(entry, done))
    assert all(rep[3] == 100 for rep in rec.reports(done))
    assert done >= entry + traj.total_ticks + LANDING_TICKS
    truth = body(rig).truth()
    feet = {f"{leg}_foot" for leg in ("FR", "FL", "RR", "RL")}
    assert truth.contacts == feet, "on its four feet and nothing else"
    roll, pitch, _ = truth.rpy
    assert max(abs(roll), abs(pitch)) < 0.1
    responses = [r for r in rig.responses if r.tick >= entry]
    assert next(r.tick for r in responses if r.bar == 100) == done


def test_without_a_state_estimate_a_jump_lands_settle_ms_after_its_last_phase(joint_rig):
    rig = joint_rig
    traj = jump(rig).trajectories[6]
    rec = Recorder(rig)
    entry = rec.send(16, 6)
    done = rec.until(lambda rep: rep[3] == 100, traj.total_ticks + LANDING_TICKS + 10)
    assert done - entry == traj.total_ticks + LANDING_TICKS
    stand = rig.ctl.robot.stand_pose()
    assert np.abs(rig.ctl.kernel.pos - stand).max() < 0.011, "a jump ends at the stand pose"


@pytest.mark.parametrize("target", [(12, 0), (21, 0), (7, 0)], ids=["to12", "to21", "to7"])
def test_a_jump_is_left_only_after_it_has_landed(rig, target):
    gait = 6
    traj = jump(rig).trajectories[gait]
    rec = Recorder(rig)
    entry = rec.send(16, gait)
    rec.step(220)                                    # mid-push
    asked = rec.send(*target)
    switched = rec.until(lambda rep: rep[0] != 16, traj.total_ticks + 1000)
    rec.step(5)
    pending = rec.reports(asked, switched)
    assert pending and all(rep == (16, gait, TRANSITIONING, 0) for rep in pending)
    assert switched >= entry + traj.total_ticks + LANDING_TICKS, "the jump ran to its landing"
    assert rec.rows[-1][1][0] == target[0]


def test_three_jumps_in_a_row_with_a_stand_between_each_land_on_their_feet(rig):
    rec = Recorder(rig)
    start = body(rig).truth().position.copy()
    def landed(gait: int) -> Callable[[Report], bool]:
        return lambda rep: rep[:2] == (16, gait) and rep[3] == 100

    for gait in (6, 1, 0):
        rec.send(16, gait)
        rec.until(landed(gait), 2000)
        rec.send(12)
        rec.until(lambda rep: rep[0] == 12 and rep[3] == 100, 1500)
        roll, pitch, _ = body(rig).truth().rpy
        assert max(abs(roll), abs(pitch)) < 0.1, f"upright after jump 16/{gait}"
    moved = body(rig).truth().position - start
    assert 0.4 < moved[0] < 0.8, "the long jump carried the body forward"


def test_controller_status_names_the_jump_and_its_phase(rig):
    rec = Recorder(rig)
    entry = rec.send(16, 1)
    rec.until(lambda rep: rep[3] == 100, 2000)
    rec.step(60)
    names = [s.script for s in rec.statuses if s.tick >= entry and s.mode == 16]
    phases = [n.split()[1] for n in names]
    assert all(n.startswith("JumpLong ") for n in names)
    assert {"crouch", "push", "flight", "land", "settle"} <= set(phases)
    assert phases[-1] == "landed"


def test_off_leaves_a_jump_at_once(rig):
    rec = Recorder(rig)
    rec.send(16, 6)
    rec.step(100)
    off = rec.send(0)
    rec.step(1)
    assert rec.rows[-1] == (off, (0, 0, 0, 100))
    assert rig.mode == 0


# -- 5. unknown jump and force-jump ids ------------------------------------------------------------

@pytest.mark.parametrize("mode, gait", [(16, 8), (22, 2), (16, 7), (22, 0)])
def test_an_unknown_jump_id_is_refused_and_nothing_moves(rig, mode, gait):
    rec = Recorder(rig)
    rec.step(5)
    before = rig.ctl.kernel.pos.copy()
    asked = rec.send(mode, gait)
    rec.step(50)                                     # 100 ms
    assert all(rep[:3] == (12, 0, BAN_TRANS) for rep in rec.reports(asked)), "SPEC §11"
    assert any(r.tick == asked and r.switch_status == BAN_TRANS for r in rig.responses)
    assert rig.mode == 12
    assert np.abs(rig.ctl.kernel.pos - before).max() <= 1e-9


# -- 6. the force jump -------------------------------------------------------------------------------

@pytest.mark.parametrize("gait", [1, 4])
def test_the_force_jump_leaves_the_ground_as_acc_des_asks_and_reports_100_once_landed(rig, gait):
    """In physics: acc_des 10 m/s^2 up throws the body clear of the ground;
    the bar is 0 until it has landed on four feet and settled."""
    rec = Recorder(rig)
    entry = rec.send(22, gait, acc_des=[0, 0, 0, 0, 0, 10])
    airborne = 0
    for _ in range(400):
        rec.step()
        airborne += not body(rig).truth().contacts
        if rec.rows[-1][1][3] == 100:
            break
    done = rec.rows[-1][0]
    assert rec.first(lambda rep: rep[0] == 22) == entry
    assert all(rep[:3] == (22, gait, 0) for rep in rec.reports(entry))
    assert all(rep[3] == 0 for rep in rec.reports(entry, done)) and rec.rows[-1][1][3] == 100
    assert airborne * TICK_MS >= 50, "off the ground for at least 50 ms"
    truth = body(rig).truth()
    assert truth.contacts == {f"{leg}_foot" for leg in ("FR", "FL", "RR", "RL")}
    assert max(abs(a) for a in truth.rpy[:2]) < 0.1


def test_a_weaker_force_jump_stays_lower():
    """acc_des is what the push gives the body: over the same stroke d, the
    body rises d (1 + a/g), so 4 m/s^2 rises about 1.4 / 2.0 of 10 m/s^2."""
    rises = []
    for acc in (4.0, 10.0):
        r = Rig()
        r.stand()
        z0 = body(r).truth().position[2]
        r.send(22, 1, acc_des=[0, 0, 0, 0, 0, acc])
        top = z0
        for _ in range(200):
            r.tick()
            top = max(top, body(r).truth().position[2])
        rises.append(top - z0)
    assert rises[0] > 0.02 and 1.25 < rises[1] / rises[0] < 1.7


# -- 7. controller_status -------------------------------------------------------------------------------

FRAME = re.compile(r"^(\w+) frame (\d+)$")


def test_controller_status_names_the_greeting_stage_and_its_progress(rig):
    rec, entry = start_greeting(rig)
    ticks = greeting_ticks(rig)
    rec.until(lambda rep: rep[3] == 100, sum(ticks.values()) + round(LEAN_WAIT_S / rig.cfg.dt))
    rec.step(60)
    leave = rec.send(7)
    rec.step(3)

    playing = [s for s in rec.statuses if entry <= s.tick < leave]
    assert playing
    status_ticks = [s.tick for s in playing]
    assert status_ticks[0] == entry, "a status goes out on the change of mode"
    assert max(b - a for a, b in pairwise(status_ticks)) <= 50, "10 Hz"
    stages: list[str] = []
    for s in playing:
        assert s.mode == 64 and s.gait_id == 0
        name = s.script.removeprefix("two-leg ")
        assert s.script == f"two-leg {name}" and s.script_progress == TwoLegStand.PROGRESS[name]
        if not stages or stages[-1] != name:
            stages.append(name)
    # Every stage long enough to be seen at 10 Hz shows, in order.
    order = [stage for stage, _ in GREETING] + ["done"]
    assert stages == [stage for stage in order if stage in stages]
    assert {"kneel", "rear", "greet", "land", "done"} <= set(stages)
    assert playing[-1].script_progress == 100
    gone = [s for s in rec.statuses if s.tick >= leave]
    assert gone and gone[0].tick == leave and gone[0].mode == 7
    assert all(s.script == "" for s in gone)


# -- 8. an immediate mode cancels the greeting ---------------------------------------------------------

@pytest.mark.parametrize("target", [7, 12, 0])
def test_an_immediate_mode_cancels_a_running_greeting_at_once(rig, target):
    rec, _ = start_greeting(rig)
    rec.step(1200)                                   # mid rear-up
    assert rec.rows[-1][1][:3] == (64, 0, 0)
    asked = rec.send(target)
    rec.step(1)
    tick, rep = rec.rows[-1]
    assert tick == asked and rep[0] == target and rep[2] == 0, rep
    assert rig.mode == target
    assert any(r.tick == asked and r.mode == target for r in rig.responses)
    rec.step(20)
    assert all(rep[0] == target for rep in rec.reports(asked))
