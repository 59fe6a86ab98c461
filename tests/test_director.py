"""Script requests by name: overlays beside the mode, full-body scripts in the
script mode, priorities, limb ownership, safety cancels (controller/core/director.py).

In-process on the fake clock: every time is a whole number of 2 ms ticks.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import Rig

from controller import msgs
from controller.core.goals import EventKind, Reason
from controller.motion.scripts import load_script
from controller.robot.config import Config

ROOT = Path(__file__).resolve().parent.parent
HUMANOID = ROOT / "config" / "humanoid20.yaml"
SCRIPTS = ROOT / "config" / "scripts" / "humanoid20"
SCRIPT_MODE = 60


class Session:
    """A humanoid rig plus the motion events it published, tick by tick."""

    def __init__(self, sim: bool | str = True) -> None:
        self.rig = Rig(config_path=str(HUMANOID), sim=sim)
        self.events: list[tuple[int, msgs.motion_event_t]] = []
        self.statuses: list[msgs.controller_status_t] = []
        self.next_id = 100

    @property
    def cfg(self) -> Config:
        return self.rig.cfg

    def joint(self, name: str) -> int:
        return self.cfg.joint_names.index(name)

    def request(self, *names: str, priority: int = 0, mirror: bool = False, speed: float = 0.0,
                total_ms: int = 0, start_utime: int = 0, action: int = 0,
                request_id: int | None = None) -> int:
        msg = msgs.script_request_t()
        self.next_id += 1
        msg.request_id = self.next_id if request_id is None else request_id
        msg.action, msg.priority, msg.mirror = action, priority, mirror
        msg.speed, msg.total_ms, msg.start_utime = speed, total_ms, start_utime
        msg.names = list(names)
        msg.num_names = len(names)
        self.rig.raw(self.rig.ch["script_request"], msg.encode())
        return msg.request_id

    def tick(self, heartbeat: bool = True) -> None:
        rig = self.rig
        tick = rig.ctl.tick
        rig.tick(heartbeat=heartbeat and tick % 50 == 0)
        assert rig.last_out is not None
        for _, channel, data in rig.last_out.messages:
            if channel == rig.ch["motion_event"]:
                self.events.append((tick, msgs.motion_event_t.decode(data)))
            elif channel == rig.ch["status"]:
                self.statuses.append(msgs.controller_status_t.decode(data))

    def run(self, ms: float, heartbeat: bool = True) -> None:
        for _ in range(int(round(ms / 2))):
            self.tick(heartbeat)

    def run_until_event(self, request_id: int, kind: int, max_ms: float) -> tuple[int, msgs.motion_event_t]:
        for _ in range(int(max_ms / 2)):
            found = self.event(request_id, kind)
            if found is not None:
                return found
            self.tick()
        found = self.event(request_id, kind)
        assert found is not None, f"no {EventKind(kind).name} for {request_id}: {self.describe()}"
        return found

    def event(self, request_id: int, kind: int) -> tuple[int, msgs.motion_event_t] | None:
        return next(((t, e) for t, e in self.events if e.goal_id == request_id and e.kind == kind),
                    None)

    def describe(self) -> list[str]:
        return [f"{t}: {EventKind(e.kind).name} {e.goal_id} {e.reason} {e.text}" for t, e in self.events]

    def done(self, request_id: int, max_ms: float = 100) -> tuple[int, msgs.motion_event_t]:
        return self.run_until_event(request_id, EventKind.SCRIPT_DONE, max_ms)

    def stand(self) -> None:
        self.rig.stand()

    def pose(self) -> None:
        """Standing in 21 (legs driven by the pose mode, arms and head free)."""
        self.stand()
        self.rig.send(21, 0)
        self.run(100)
        assert self.rig.mode == 21


def ticks_of(name: str, cfg: Config) -> int:
    return load_script(SCRIPTS / f"{name}.yaml", cfg).total_ticks


@pytest.fixture
def posed() -> Session:
    s = Session()
    s.pose()
    return s


# -- overlays -------------------------------------------------------------------------------
def test_wave_plays_on_the_arm_beside_the_pose_mode_with_exact_frame_timing(posed: Session) -> None:
    s, k = posed, posed.rig.ctl.kernel
    script = load_script(SCRIPTS / "Wave.yaml", s.cfg)
    legs_before = k.pos[:12].copy()
    rid = s.request("Wave")
    s.tick()
    start_tick, started = s.run_until_event(rid, EventKind.SCRIPT_STARTED, 10)
    assert "overlay" in started.text
    assert started.value == pytest.approx(script.duration_ms / 1000)
    sp = s.joint("r_shoulder_pitch")
    # Frame 1 ends on its target exactly at its end tick, not before.
    end1 = start_tick + script.frames[0].duration_ticks
    while s.rig.ctl.tick < end1:
        s.tick()
        assert s.rig.mode == 21
        assert k.pos[sp] != pytest.approx(-2.7, abs=1e-9)
    s.tick()                                   # tick end1 itself
    assert k.pos[sp] == pytest.approx(-2.7, abs=1e-9)
    status = s.statuses[-1]
    assert status.script.startswith("Wave frame")
    done_tick, done = s.done(rid, script.duration_ms + 100)
    assert done.reason == Reason.FINISHED
    assert done_tick == start_tick + script.total_ticks
    # The legs stayed where the pose mode holds them.
    np.testing.assert_allclose(k.pos[:12], legs_before, atol=1e-9)
    assert s.rig.mode == 21


def test_mirrored_wave_moves_the_left_arm_only(posed: Session) -> None:
    s, k = posed, posed.rig.ctl.kernel
    right_before = k.pos[[s.joint("r_shoulder_pitch"), s.joint("r_elbow")]].copy()
    rid = s.request("Wave", mirror=True)
    s.tick()
    start_tick, _ = s.run_until_event(rid, EventKind.SCRIPT_STARTED, 10)
    while s.rig.ctl.tick <= start_tick + 450:  # through frame 1's end tick (900 ms)
        s.tick()
    assert k.pos[s.joint("l_shoulder_pitch")] == pytest.approx(-2.7, abs=1e-9)
    assert k.pos[s.joint("l_shoulder_roll")] == pytest.approx(0.3, abs=1e-9)   # negated roll
    np.testing.assert_allclose(k.pos[[s.joint("r_shoulder_pitch"), s.joint("r_elbow")]],
                               right_before, atol=1e-9)
    assert s.done(rid, 5000)[1].reason == Reason.FINISHED


def test_a_speed_factor_retimes_and_a_start_time_is_kept(posed: Session) -> None:
    s = posed
    total = ticks_of("Wave", s.cfg)
    status_utime = s.rig.now_ns // 1000
    start_utime = status_utime + 200_000      # 200 ms ahead on the daemon's clock
    rid = s.request("Wave", speed=0.5, start_utime=start_utime)
    sent_tick = s.rig.ctl.tick
    start_tick, started = s.run_until_event(rid, EventKind.SCRIPT_STARTED, 400)
    assert start_tick == sent_tick + 100     # 200 ms = 100 ticks after the request's tick
    done_tick, done = s.done(rid, 12000)
    assert done.reason == Reason.FINISHED
    assert done_tick - start_tick == 2 * total
    assert started.value == pytest.approx(2 * total * s.cfg.dt)


def test_a_speed_factor_too_fast_for_a_joint_is_refused_with_the_reason(posed: Session) -> None:
    # Wave's last frame lowers the arm 2.7 rad in 900 ms; twice as fast the
    # quintic peak would be 11.2 rad/s, above the shoulder's 7.5 rad/s.
    rid = posed.request("Wave", speed=2.0)
    _, done = posed.done(rid)
    assert done.reason == Reason.REFUSED
    assert "r_shoulder_pitch" in done.text and "above its limit 7.5 rad/s" in done.text


def test_total_ms_stretches_the_chain(posed: Session) -> None:
    s = posed
    rid = s.request("Wave", total_ms=6000)
    start_tick, _ = s.run_until_event(rid, EventKind.SCRIPT_STARTED, 10)
    done_tick, done = s.done(rid, 7000)
    assert done.reason == Reason.FINISHED and done_tick - start_tick == 3000


def test_equal_priority_is_refused_and_higher_priority_preempts(posed: Session) -> None:
    s = posed
    first = s.request("Wave", priority=15)
    s.run(100)
    second = s.request("Wave", priority=15)
    _, refused = s.done(second)
    assert refused.reason == Reason.REFUSED
    assert "right_arm is playing Wave" in refused.text and "15 >= 15" in refused.text
    assert s.event(first, EventKind.SCRIPT_DONE) is None     # the first goes on
    third = s.request("Wave", priority=40)
    _, preempted = s.done(first)
    assert preempted.reason == Reason.PREEMPTED and f"request {third}" in preempted.text
    s.run_until_event(third, EventKind.SCRIPT_STARTED, 10)


def test_names_with_paths_are_refused_before_any_file_is_touched(posed: Session) -> None:
    s = posed
    for name, why in (("../humanoid20/Wave", "path separator"), ("..Wave", "`..`"),
                      ("/etc/passwd", "path separator"), ("NoSuchScript", "no such script")):
        rid = s.request(name)
        _, done = s.done(rid)
        assert done.reason == Reason.REFUSED and why in done.text, done.text
    assert s.rig.ctl.counters.commands_rejected >= 4


def test_cancel_stops_an_overlay_where_it_is(posed: Session) -> None:
    s, k = posed, posed.rig.ctl.kernel
    rid = s.request("Wave")
    s.run(400)
    s.request(action=1, request_id=rid)
    s.tick()
    _, done = s.done(rid)
    assert done.reason == Reason.CANCELLED
    held = k.pos.copy()
    s.run(200)
    sp = s.joint("r_shoulder_pitch")
    assert k.pos[sp] == pytest.approx(held[sp], abs=1e-9)   # stays where it was cut


# -- safety ----------------------------------------------------------------------------------
def test_no_script_plays_on_a_robot_that_is_off():
    s = Session()
    s.run(20)
    rid = s.request("Wave")
    _, done = s.done(rid)
    assert done.reason == Reason.REFUSED and "OFF" in done.text


def test_the_command_timeout_cancels_the_overlays(posed: Session) -> None:
    s = posed
    rid = s.request("Wave", total_ms=20000)
    s.run(100)
    s.run(700, heartbeat=False)            # the client stops: timeout after 500 ms -> damper
    assert s.rig.mode == 7
    _, done = s.done(rid)
    assert done.reason == Reason.CANCELLED and "PURE_DAMPER" in done.text


# -- limbs the mode drives ---------------------------------------------------------------------
def test_a_leg_script_below_the_command_priority_is_refused(posed: Session) -> None:
    rid = posed.request("KickRight")
    _, done = posed.done(rid)
    assert done.reason == Reason.REFUSED
    assert "driven by POSE_CTRL" in done.text and "20 >= 15" in done.text


def test_a_full_body_script_plays_in_the_script_mode_and_ends_standing(posed: Session) -> None:
    s = posed
    total = ticks_of("KickRight", s.cfg)
    rid = s.request("KickRight", priority=30)
    start_tick, started = s.run_until_event(rid, EventKind.SCRIPT_STARTED, 20)
    assert s.rig.mode == SCRIPT_MODE and "script mode" in started.text
    # A robot_control_cmd (priority 20) cannot end it; it is refused and counted.
    rejected = s.rig.ctl.counters.commands_rejected
    s.rig.send(21, 0)
    s.run(100, heartbeat=False)
    assert s.rig.mode == SCRIPT_MODE
    assert s.rig.ctl.counters.commands_rejected == rejected + 1
    assert "plays at priority 30" in s.rig.ctl.counters.last_error
    # No heartbeat for far longer than the 500 ms timeout: the script keeps it commanded.
    done_tick, done = s.done(rid, total * 2 + 100)
    assert done.reason == Reason.FINISHED and done_tick == start_tick + total
    s.tick(heartbeat=False)
    assert s.rig.ctl.queue.blocks[0].mode == 12     # then it stands, and the timeout runs again
    s.run(600, heartbeat=False)
    assert s.rig.mode == 7


def test_the_damper_command_ends_a_full_body_script_at_once(posed: Session) -> None:
    s = posed
    rid = s.request("KickRight", priority=30)
    s.run_until_event(rid, EventKind.SCRIPT_STARTED, 20)
    s.run(100)
    s.rig.send(7, 0)
    s.run(10)
    assert s.rig.mode == 7
    _, done = s.done(rid)
    assert done.reason in (Reason.PREEMPTED, Reason.CANCELLED)


def test_an_overlay_that_outranks_the_mode_keeps_its_limb(posed: Session) -> None:
    s, k = posed, posed.rig.ctl.kernel
    rid = s.request("Wave", priority=30, total_ms=8000)
    s.run(1000)
    s.rig.send(12)                          # stand: drives every joint while standing up
    s.run(600)
    assert s.event(rid, EventKind.SCRIPT_DONE) is None
    assert k.pos[s.joint("r_shoulder_pitch")] < -1.0      # still up in the wave


def test_an_overlay_below_the_mode_gives_its_limb_back(posed: Session) -> None:
    s = posed
    rid = s.request("Wave", priority=10, total_ms=8000)
    s.run(1000)
    s.rig.send(12)
    s.run(20)
    _, done = s.done(rid)
    assert done.reason == Reason.PREEMPTED and "RECOVERY_STAND needs right_arm" in done.text


def test_a_script_request_on_the_quadruped_is_refused_with_its_reason():
    """The quadruped ships no keyframe scripts (its 64 balances, its jumps are
    trajectories) and has no script mode: a request is refused, not played."""
    rig = Rig()
    rig.stand()
    msg = msgs.script_request_t()
    msg.request_id, msg.names, msg.num_names, msg.priority = 5, ["TwoLegKneel"], 1, 50
    rig.raw(rig.ch["script_request"], msg.encode())
    events: list[msgs.motion_event_t] = []
    for _ in range(3):
        rig.tick()
        assert rig.last_out is not None
        events += [msgs.motion_event_t.decode(d) for _, c, d in rig.last_out.messages
                   if c == rig.ch["motion_event"]]
    assert [(e.kind, e.reason) for e in events] == [(EventKind.SCRIPT_DONE, Reason.REFUSED)]
    assert "TwoLegKneel" in events[0].text and "no such script" in events[0].text


def test_a_bad_request_is_refused_with_its_reason(posed: Session) -> None:
    s = posed
    for kwargs, why in (({"speed": float("nan")}, "speed"), ({"priority": 101}, "priority"),
                        ({"total_ms": -5}, "total_ms")):
        rid = s.request("Wave", **kwargs)
        _, done = s.done(rid)
        assert done.reason == Reason.REFUSED and why in done.text
    rid = s.request(*(["Wave"] * 17))
    assert "1 to 16" in s.done(rid)[1].text


def test_stand_up_from_a_commanded_damper_as_a_full_body_script():
    # The joint-space sim (no IMU): the script mode's entry, limits and
    # timing. In physics StandUpFront from the seat the damper sits on does
    # not bring the robot up; it is made for lying face down, and a getup
    # that ends down is retried (tests/test_humanoid_falls.py).
    s = Session(sim="joint")
    s.stand()
    s.rig.send(7, 1)                      # lie down on command
    s.run(2500)
    assert s.rig.mode == 7
    total = ticks_of("StandUpFront", s.cfg)
    below = s.request("StandUpFront", priority=20)       # not above robot_control_cmd
    assert s.done(below)[1].reason == Reason.REFUSED
    rid = s.request("StandUpFront", priority=30)
    start_tick, _ = s.run_until_event(rid, EventKind.SCRIPT_STARTED, 20)
    assert s.rig.mode == SCRIPT_MODE
    limits_ok = True
    for _ in range(total):
        s.tick()
        k = s.rig.ctl.kernel
        limits_ok &= bool(np.all(k.pos >= s.cfg.q_min - 1e-12) and np.all(k.pos <= s.cfg.q_max + 1e-12))
    assert limits_ok
    done_tick, done = s.done(rid, 100)
    assert done.reason == Reason.FINISHED and done_tick == start_tick + total
    s.run(100)
    assert s.rig.mode == 12
    np.testing.assert_allclose(s.rig.ctl.kernel.pos, s.cfg.poses["stand"], atol=1e-6)


def test_a_timeout_damper_lets_no_script_start():
    s = Session()
    s.stand()
    s.run(700, heartbeat=False)
    assert s.rig.mode == 7
    rid = s.request("StandUpFront", priority=90)
    _, done = s.done(rid)
    assert done.reason == Reason.REFUSED and "timeout" in done.text


# -- .mof motions by name (nao22) --------------------------------------------------------------
NAO = ROOT / "config" / "nao22.yaml"


def nao_session() -> Session:
    s = Session.__new__(Session)
    s.rig = Rig(config_path=str(NAO))
    s.events, s.statuses, s.next_id = [], [], 100
    s.stand()
    return s


def test_a_head_mof_motion_plays_beside_the_stand_and_a_full_body_one_in_the_script_mode():
    s = nao_session()
    k = s.rig.ctl.kernel
    legs_before = k.pos[s.rig.cfg.leg_indices].copy()
    nod = s.request("nod")
    _, started = s.run_until_event(nod, EventKind.SCRIPT_STARTED, 20)
    assert "overlay" in started.text and started.value > 0
    done_tick, done = s.done(nod, 5000)
    assert done.reason == Reason.FINISHED
    # nod ends holding -10 degrees of head pitch (HT column, sign +1).
    assert k.pos[s.joint("head_pitch")] == pytest.approx(np.radians(-10.0), abs=1e-9)
    np.testing.assert_allclose(k.pos[s.rig.cfg.leg_indices], legs_before, atol=1e-9)
    assert s.rig.mode == 12
    # stand.mof drives every joint: below robot_control_cmd it is refused ...
    low = s.request("stand")
    assert s.done(low)[1].reason == Reason.REFUSED
    # ... above it, it plays in 60 SCRIPT and ends in 12.
    high = s.request("stand", priority=30)
    s.run_until_event(high, EventKind.SCRIPT_STARTED, 20)
    assert s.rig.mode == 60
    assert s.done(high, 3000)[1].reason == Reason.FINISHED
    s.run(20)
    assert s.rig.mode == 12


def test_a_mof_motion_takes_no_retiming():
    s = nao_session()
    rid = s.request("nod", mirror=True)
    _, done = s.done(rid)
    assert done.reason == Reason.REFUSED and "plays as written" in done.text


def test_a_bad_script_is_refused_at_start_and_the_rest_still_play(tmp_path: Path) -> None:
    import shutil

    import yaml
    scripts = tmp_path / "scripts"
    shutil.copytree(SCRIPTS, scripts)
    (scripts / "Broken.yaml").write_text(
        "- duration: 500\n  targets:\n    - {id: r_elbow, position: 9.0, gain: 8}\n")
    data = yaml.safe_load(HUMANOID.read_text())
    data["scripts"]["directories"] = [str(scripts)]
    data["locomotion"]["walk"] = str(ROOT / "gaits" / "humanoid" / "quintic_walk.yaml")
    path = tmp_path / "humanoid.yaml"
    path.write_text(yaml.safe_dump(data))
    (tmp_path / data["fsm"]).write_text((HUMANOID.parent / data["fsm"]).read_text())
    s = Session.__new__(Session)
    s.rig = Rig(config_path=str(path))
    s.events, s.statuses, s.next_id = [], [], 100
    errors = [str(e) for e in s.rig.ctl.director.library.errors]
    assert len(errors) == 1
    assert "Broken.yaml: frame 1" in errors[0] and "line 3" in errors[0] \
        and "outside its limits" in errors[0]
    s.pose()
    bad = s.request("Broken")
    _, done = s.done(bad)
    assert done.reason == Reason.REFUSED and "refused at start" in done.text
    good = s.request("Wave")
    s.run_until_event(good, EventKind.SCRIPT_STARTED, 20)
