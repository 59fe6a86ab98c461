"""controller.core.goals: moves, pre-emption, refusals and triggers on a fake clock.

The "robot" is a first-order velocity follower: each axis moves toward the
executor's command with at most 1 m/s^2 (2 rad/s^2) when speeding up and
2 m/s^2 (4 rad/s^2) when slowing down, optionally through a time constant; its
velocity is integrated into the odometry every 2 ms tick.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import pytest

from controller import msgs
from controller.core import goals
from controller.core.goals import EventKind, GoalExecutor, GoalKind, Reason
from controller.core.odometry import Odometry

DT = 0.002
DT_NS = 2_000_000
ZERO = (0.0, 0.0, 0.0)


def goal(kind: GoalKind | int, goal_id: int = 1, **fields: float) -> msgs.motion_goal_t:
    msg = msgs.motion_goal_t()
    msg.kind, msg.goal_id = int(kind), goal_id
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg


def move(distance: float, angle: float = 0.0, timeout: float = 20.0, goal_id: int = 1) -> msgs.motion_goal_t:
    return goal(GoalKind.MOVE_DISTANCE, goal_id, distance=distance, angle=angle, timeout=timeout)


@dataclass
class FakeRobot:
    tau: float = 0.0                                   # s; 0 = only the rate limits
    speed_up: tuple[float, float, float] = (1.0, 1.0, 2.0)
    slow_down: tuple[float, float, float] = (2.0, 2.0, 4.0)
    yaw_per_metre: float = 0.0                         # a leg asymmetry: veers while walking
    v: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])

    def follow(self, cmd: tuple[float, float, float], dt: float) -> None:
        cmd = (cmd[0], cmd[1], cmd[2] + self.yaw_per_metre * self.v[0])
        for i in range(3):
            v, c = self.v[i], cmd[i]
            faster = abs(c) > abs(v) and c * v >= 0.0
            limit = self.speed_up[i] if faster else self.slow_down[i]
            rate = max(-limit, min(limit, (c - v) / max(self.tau, dt)))
            new = v + rate * dt
            self.v[i] = c if (c - v) * (c - new) < 0.0 else new


@dataclass
class Run:
    """The executor, odometry and robot on one fake clock."""

    ex: GoalExecutor = field(default_factory=GoalExecutor)
    odom: Odometry = field(default_factory=Odometry)
    robot: FakeRobot = field(default_factory=FakeRobot)
    now: int = 0
    events: list[goals.Event] = field(default_factory=list)
    commands: list[tuple[float, float, float] | None] = field(default_factory=list)
    battery: float | None = None

    def send(self, msg: msgs.motion_goal_t) -> list[goals.Event]:
        out = self.ex.on_goal(msg, self.now, self.odom)
        self.events += out
        return out

    def tick(self) -> tuple[float, float, float] | None:
        vel, events = self.ex.step(self.now, self.odom, self.battery)
        self.events += events
        self.commands.append(vel)
        self.robot.follow(vel if vel is not None else ZERO, DT)
        self.odom.integrate(self.robot.v, DT)
        self.now += DT_NS
        return vel

    def run(self, seconds: float) -> None:
        for _ in range(round(seconds / DT)):
            self.tick()

    def until_done(self, limit_s: float = 30.0) -> goals.Event:
        """Tick until a GOAL_DONE newer than the call; return it."""
        seen = len(self.events)
        for _ in range(round(limit_s / DT)):
            self.tick()
            done = [e for e in self.events[seen:] if e.kind == EventKind.GOAL_DONE]
            if done:
                return done[-1]
        raise AssertionError("no GOAL_DONE")

    def settle(self) -> None:
        """Run until the robot stands still (the controller commands a stand after the goal)."""
        for _ in range(5000):
            self.tick()
            if max(abs(v) for v in self.robot.v) < 1e-6:
                return
        raise AssertionError("robot never stopped")

    def kinds(self) -> list[tuple[int, int, int]]:
        return [(e.kind, e.goal_id, e.reason) for e in self.events]


# --------------------------------------------------------------------------- MOVE_DISTANCE

@pytest.mark.parametrize("tau", [0.0, 0.05])
def test_straight_one_metre_stops_on_target(tau: float) -> None:
    r = Run(robot=FakeRobot(tau=tau))
    accepted = r.send(move(1.0, timeout=10.0))
    assert [(e.kind, e.goal_id, e.goal_kind) for e in accepted] == [(EventKind.ACCEPTED, 1, GoalKind.MOVE_DISTANCE)]
    done = r.until_done()
    assert (done.reason, done.goal_id, done.goal_kind) == (Reason.REACHED, 1, GoalKind.MOVE_DISTANCE)
    assert done.value == pytest.approx(1.0, abs=goals.DIST_TOLERANCE)
    assert done.x == pytest.approx(done.value, abs=1e-9) and "reached" in done.text   # pose at the event
    # Ideal profile: 0.6 s up, 0.6 s down, 0.82 m at 0.3 m/s in between = 3.93 s.
    assert 3.7 < r.now / 1e9 < 4.3
    assert r.tick() is None                      # the move is over
    r.settle()
    assert r.odom.x == pytest.approx(1.0, abs=0.02)
    assert abs(r.odom.x - 1.0) < 0.005           # well under 2 cm in practice
    assert abs(r.odom.y) < 1e-6 and abs(r.odom.yaw) < 1e-6
    assert r.kinds() == [(EventKind.ACCEPTED, 1, 0), (EventKind.GOAL_DONE, 1, Reason.REACHED)]


def test_distance_command_respects_the_speed_profile() -> None:
    r = Run()
    r.send(move(2.0))
    r.until_done()
    speeds = [c[0] for c in r.commands if c is not None]
    assert max(speeds) == pytest.approx(goals.DEFAULT_MAX_SPEED)
    assert all(c[1] == 0.0 and c[2] == 0.0 for c in r.commands if c is not None)
    increases = [b - a for a, b in itertools.pairwise(speeds) if b > a]
    assert max(increases) <= goals.DEFAULT_MAX_ACC * DT + 1e-12
    # Braking at max_acc: at no point faster than sqrt(2 a d) to the target (+ the creep floor).
    travelled = 0.0
    for v in speeds:
        assert v <= max(goals.MIN_SPEED, math.sqrt(2 * goals.DEFAULT_MAX_ACC * max(0.0, 2.0 - travelled))) + 1e-9
        travelled += v * DT


def test_backwards() -> None:
    r = Run()
    r.send(move(-0.5))
    assert r.until_done().reason == Reason.REACHED
    r.settle()
    assert r.odom.x == pytest.approx(-0.5, abs=0.005)
    assert min(c[0] for c in r.commands if c is not None) == pytest.approx(-goals.DEFAULT_MAX_SPEED)


def test_arc_quarter_circle() -> None:
    # 1 m turning 90 degrees: radius 2/pi, ending at (2/pi, 2/pi) facing +y.
    r = Run()
    r.send(move(1.0, math.pi / 2))
    done = r.until_done()
    assert done.reason == Reason.REACHED
    r.settle()
    radius = 2.0 / math.pi
    assert (r.odom.x, r.odom.y) == pytest.approx((radius, radius), abs=0.01)
    assert r.odom.yaw == pytest.approx(math.pi / 2, abs=0.01)
    # On the way the yaw rate is the speed times the curvature.
    mid = r.commands[len(r.commands) // 2]
    assert mid is not None and mid[2] == pytest.approx(mid[0] * (math.pi / 2), rel=0.05)


def test_heading_is_held_on_a_robot_that_veers() -> None:
    # Left alone, 0.2 rad per metre would end 1 m about 0.1 m off to the side.
    r = Run(robot=FakeRobot(yaw_per_metre=0.2))
    r.send(move(1.0))
    assert r.until_done().reason == Reason.REACHED
    r.settle()
    assert abs(r.odom.y) < 0.04
    assert r.odom.x == pytest.approx(1.0, abs=0.02)
    assert abs(r.odom.yaw) < 0.01


def test_tight_arc_is_slowed_by_max_rotation() -> None:
    # 0.5 m turning 2 rad: at max_speed the yaw rate would be 1.2 rad/s > 0.5.
    r = Run()
    r.send(move(0.5, 2.0))
    assert r.until_done().reason == Reason.REACHED
    cmds = [c for c in r.commands if c is not None]
    assert max(abs(c[2]) for c in cmds) <= goals.DEFAULT_MAX_ROTATION + 1e-9
    assert max(c[0] for c in cmds) == pytest.approx(goals.DEFAULT_MAX_ROTATION * 0.5 / 2.0, rel=1e-6)


def test_turn_in_place() -> None:
    r = Run()
    r.send(move(0.0, -math.pi / 2))
    done = r.until_done()
    assert done.reason == Reason.REACHED and done.value == 0.0
    r.settle()
    assert r.odom.yaw == pytest.approx(-math.pi / 2, abs=0.01)
    assert (r.odom.x, r.odom.y) == (0.0, 0.0)
    cmds = [c for c in r.commands if c is not None]
    assert all(c[0] == 0.0 for c in cmds)
    assert min(c[2] for c in cmds) == pytest.approx(-goals.DEFAULT_MAX_ROTATION)


def test_zero_move_is_reached_at_once() -> None:
    r = Run()
    r.send(move(0.0, 0.0))
    assert r.tick() is None
    assert r.kinds()[-1] == (EventKind.GOAL_DONE, 1, Reason.REACHED)


def test_timeout() -> None:
    r = Run()
    r.send(move(10.0, timeout=2.0))
    done = r.until_done()
    assert done.reason == Reason.TIMEOUT
    assert r.now == 2_000_000_000 + DT_NS         # reported on the tick at 2.000 s
    assert 0.3 < done.value < 0.6                 # 0.09 m ramp + 1.4 s at 0.3 m/s
    assert "timeout after 2 s" in done.text
    assert r.tick() is None
    assert [e.kind for e in r.events].count(EventKind.GOAL_DONE) == 1


def test_a_move_that_stalls_times_out() -> None:
    r = Run(robot=FakeRobot(speed_up=(0.0, 0.0, 0.0)))   # the robot never moves
    r.send(move(0.2, timeout=1.0))
    assert r.until_done().reason == Reason.TIMEOUT


# --------------------------------------------------------------------------- MOVE_CONTINUOUS

def test_continuous_ramps_keeps_the_circle_and_ends_reached_at_its_time() -> None:
    r = Run()
    r.send(goal(GoalKind.MOVE_CONTINUOUS, 7, speed=0.2, rotation=0.1, timeout=2.0))
    done = r.until_done()
    assert (done.reason, done.goal_id, done.goal_kind) == (Reason.REACHED, 7, GoalKind.MOVE_CONTINUOUS)
    assert r.now == 2_000_000_000 + DT_NS
    cmds = [c for c in r.commands if c is not None]
    assert cmds[-1] == pytest.approx((0.2, 0.0, 0.1))
    assert all(c[2] == pytest.approx(c[0] * 0.5) for c in cmds)     # curvature 0.5 / m throughout
    assert max(b[0] - a[0] for a, b in itertools.pairwise(cmds)) <= goals.DEFAULT_MAX_ACC * DT + 1e-12
    assert "ran for 2 s" in done.text


def test_continuous_beyond_the_profile_is_scaled_down_keeping_the_radius() -> None:
    r = Run()
    r.send(goal(GoalKind.MOVE_CONTINUOUS, speed=1.0, rotation=-1.0, timeout=3.0))
    r.run(2.0)
    assert r.commands[-1] == pytest.approx((0.3, 0.0, -0.3))


def test_speed_profile_applies_to_later_and_running_moves() -> None:
    r = Run()
    assert r.send(goal(GoalKind.SET_SPEED_PROFILE, 3, max_acc=1.0, max_speed=0.5, max_rotation=1.0))[0].kind \
        == EventKind.ACCEPTED
    r.send(goal(GoalKind.MOVE_CONTINUOUS, 4, speed=2.0, rotation=0.0, timeout=5.0))
    r.run(1.0)
    assert r.commands[-1] == pytest.approx((0.5, 0.0, 0.0))
    full = r.commands[250]
    assert full is not None and full[0] == pytest.approx(0.5)   # 1 m/s^2: full speed after 0.5 s
    r.send(goal(GoalKind.SET_SPEED_PROFILE, 5, max_acc=1.0, max_speed=0.2, max_rotation=1.0))
    r.run(0.5)
    assert r.commands[-1] == pytest.approx((0.2, 0.0, 0.0))


# --------------------------------------------------------------------------- pre-emption, stop

def test_a_new_move_preempts_the_running_one() -> None:
    r = Run()
    r.send(move(1.0, goal_id=1))
    r.run(1.0)
    events = r.send(move(0.2, goal_id=2))
    assert [(e.kind, e.goal_id, e.reason) for e in events] == [
        (EventKind.GOAL_DONE, 1, Reason.PREEMPTED), (EventKind.ACCEPTED, 2, 0)]
    assert events[0].value == pytest.approx(r.odom.forward) and "goal 2" in events[0].text
    start = r.odom.x
    # No jump in speed at the hand-over: the new move starts from the robot's speed.
    before = r.commands[-2]
    assert before is not None
    assert r.tick() == pytest.approx((before[0], 0.0, 0.0), abs=goals.DEFAULT_MAX_ACC * DT * 2)
    done = r.until_done()
    assert (done.goal_id, done.reason) == (2, Reason.REACHED)
    r.settle()
    assert r.odom.x - start == pytest.approx(0.2, abs=0.01)
    assert [e.kind for e in r.events].count(EventKind.GOAL_DONE) == 2


def test_robot_control_cmd_preempts_and_fsm_refusal_refuses() -> None:
    r = Run()
    r.send(move(1.0, goal_id=1))
    r.run(0.5)
    events = r.ex.preempt(r.now, "robot_control_cmd mode 12")
    assert [(e.kind, e.goal_id, e.reason, e.text) for e in events] == [
        (EventKind.GOAL_DONE, 1, Reason.PREEMPTED, "robot_control_cmd mode 12")]
    assert not r.ex.active and r.tick() is None
    assert r.ex.preempt(r.now, "again") == [] and r.ex.refuse(r.now, "again") == []
    r.send(move(1.0, goal_id=2))
    events = r.ex.refuse(r.now, "BAN_TRANS: 7 -> 11")
    assert [(e.kind, e.goal_id, e.reason) for e in events] == [(EventKind.GOAL_DONE, 2, Reason.REFUSED)]
    assert r.tick() is None


def test_stop_cancels_the_running_move() -> None:
    r = Run()
    r.send(goal(GoalKind.MOVE_CONTINUOUS, 1, speed=0.3, timeout=10.0))
    r.run(0.5)
    assert r.ex.active and r.ex.goal_id == 1
    events = r.send(goal(GoalKind.STOP, 9))
    assert [(e.kind, e.goal_id, e.reason) for e in events] == [
        (EventKind.GOAL_DONE, 1, Reason.CANCELLED), (EventKind.ACCEPTED, 9, 0)]
    assert r.tick() is None
    assert [(e.kind, e.goal_id) for e in r.send(goal(GoalKind.STOP, 10))] == [(EventKind.ACCEPTED, 10)]


def test_set_odometry_moves_the_pose_without_disturbing_the_move() -> None:
    r = Run()
    r.send(move(0.5))
    r.run(1.0)
    events = r.send(goal(GoalKind.SET_ODOMETRY, 2, x=5.0, y=-1.0, yaw=math.pi / 2))
    assert events[0].kind == EventKind.ACCEPTED
    assert (events[0].x, events[0].y) == (5.0, -1.0)
    x_at_set = 5.0
    assert r.until_done().reason == Reason.REACHED
    r.settle()
    assert r.odom.forward == pytest.approx(0.5, abs=0.005)
    assert r.odom.x == pytest.approx(x_at_set, abs=1e-6)       # now heading +y
    assert r.odom.y > -1.0 + 0.1


# --------------------------------------------------------------------------- refusals

@pytest.mark.parametrize("msg, words", [
    (move(math.nan), "distance is not finite"),
    (move(1.0, timeout=-1.0), "timeout -1 is outside (0, 600]"),
    (move(1.0, timeout=0.0), "timeout 0 is outside (0, 600]"),
    (move(1.0, timeout=601.0), "timeout 601 is outside"),
    (move(1.0, timeout=math.inf), "timeout is not finite"),
    (move(1000.0), "distance 1000 is outside [-100, 100]"),
    (move(1.0, angle=900.0), "angle 900 is outside"),               # tenths of degrees by mistake
    (goal(GoalKind.STOP, voltage=math.nan), "voltage is not finite"),   # unused fields count too
    (goal(GoalKind.MOVE_CONTINUOUS, speed=3.0, timeout=1.0), "speed 3 is outside"),
    (goal(GoalKind.MOVE_CONTINUOUS, speed=0.1), "timeout 0 is outside"),
    (goal(GoalKind.SET_SPEED_PROFILE, max_acc=0.5, max_speed=0.0, max_rotation=0.5), "max_speed 0 is outside"),
    (goal(GoalKind.SET_SPEED_PROFILE, max_acc=-1.0, max_speed=0.3, max_rotation=0.5), "max_acc -1 is outside"),
    (goal(GoalKind.SET_ODOMETRY, x=1e6), "x 1e+06 is outside"),
    (goal(GoalKind.AREA, x1=1.0, y1=0.0, x2=0.0, y2=1.0, enable=1), "x1 < x2 and y1 < y2"),
    (goal(GoalKind.AREA, enable=2), "enable 2 is not 0 or 1"),
    (goal(GoalKind.BATTERY_LOW, voltage=0.0, enable=1), "voltage 0 is outside"),
    (goal(9), "unknown kind 9"),
    (goal(-1), "unknown kind -1"),
])
def test_bad_goals_are_refused_with_a_reason(msg: msgs.motion_goal_t, words: str) -> None:
    r = Run()
    r.send(move(1.0, goal_id=1))
    r.run(0.2)
    msg.goal_id = 42
    events = r.send(msg)
    assert len(events) == 1
    e = events[0]
    assert (e.kind, e.goal_id, e.reason, e.goal_kind) == (EventKind.GOAL_DONE, 42, Reason.REFUSED, msg.kind)
    assert words in e.text
    # A refused goal does not disturb the running move.
    assert r.ex.active and r.ex.goal_id == 1
    assert r.until_done().reason == Reason.REACHED


def test_every_float_field_is_checked_for_finiteness() -> None:
    for name in goals._FLOAT_FIELDS:
        msg = move(1.0)
        setattr(msg, name, math.inf)
        assert goals.validate(msg) == f"{name} is not finite"


# --------------------------------------------------------------------------- area trigger

def area(x1: float, y1: float, x2: float, y2: float, enable: int = 1, goal_id: int = 5) -> msgs.motion_goal_t:
    return goal(GoalKind.AREA, goal_id, x1=x1, y1=y1, x2=x2, y2=y2, enable=enable)


def area_events(r: Run) -> list[tuple[int, float]]:
    return [(e.kind, round(e.x, 2)) for e in r.events if e.kind in (EventKind.AREA_LEFT, EventKind.AREA_ENTERED)]


def test_area_enter_and_leave_are_edge_events() -> None:
    r = Run()
    accepted = r.send(area(0.5, -0.5, 1.0, 0.5))
    assert accepted[0].kind == EventKind.ACCEPTED and "robot outside" in accepted[0].text
    r.send(goal(GoalKind.MOVE_CONTINUOUS, 1, speed=0.3, timeout=6.0))
    r.run(7.0)
    found = area_events(r)
    assert [k for k, _ in found] == [EventKind.AREA_ENTERED, EventKind.AREA_LEFT]
    assert found[0][1] == pytest.approx(0.5, abs=0.01)
    assert found[1][1] == pytest.approx(1.0 + goals.AREA_HYSTERESIS, abs=0.01)
    entered = next(e for e in r.events if e.kind == EventKind.AREA_ENTERED)
    assert (entered.goal_id, entered.goal_kind) == (5, GoalKind.AREA)


def test_arming_inside_reports_nothing_until_the_robot_leaves() -> None:
    r = Run()
    r.send(area(-1.0, -1.0, 1.0, 1.0))
    r.run(1.0)
    assert area_events(r) == []
    r.send(goal(GoalKind.SET_ODOMETRY, x=3.0, y=0.0, yaw=0.0))   # a jump counts as a crossing
    r.tick()
    r.tick()
    assert area_events(r) == [(EventKind.AREA_LEFT, 3.0)]


def test_area_jitter_at_the_edge_does_not_chatter() -> None:
    r = Run()
    r.send(area(0.0, 0.0, 1.0, 1.0))
    for i in range(200):
        r.odom.set(1.0 + (0.004 if i % 2 else -0.004), 0.5, 0.0)
        r.tick()
    assert area_events(r) == []    # inside at arming, never 1 cm out


def test_area_off() -> None:
    r = Run()
    r.send(area(0.5, -0.5, 1.0, 0.5))
    assert "area trigger off" in r.send(area(0, 0, 0, 0, enable=0))[0].text
    r.send(goal(GoalKind.MOVE_CONTINUOUS, 1, speed=0.3, timeout=6.0))
    r.run(7.0)
    assert area_events(r) == []


# --------------------------------------------------------------------------- battery trigger

def battery_events(r: Run) -> list[float]:
    return [round(e.value, 2) for e in r.events if e.kind == EventKind.BATTERY_LOW]


def test_battery_low_once_with_hysteresis() -> None:
    r = Run()
    r.send(goal(GoalKind.BATTERY_LOW, 8, voltage=22.0, enable=1))
    for volts in (24.0, 23.0, None, 0.0, 22.5, 21.9, 21.8, 22.1, 21.5, 22.15, 21.0, 22.3, 21.9):
        r.battery = volts
        r.tick()
    # Once at 21.9; 22.1 and 22.15 are inside the 0.2 V band, so no re-arm before 22.3.
    assert battery_events(r) == [21.9, 21.9]
    low = next(e for e in r.events if e.kind == EventKind.BATTERY_LOW)
    assert (low.goal_id, low.goal_kind, low.reason) == (8, GoalKind.BATTERY_LOW, Reason.NONE)
    assert "21.90 V < 22 V" in low.text


def test_battery_not_reported_never_fires() -> None:
    r = Run()
    r.send(goal(GoalKind.BATTERY_LOW, voltage=22.0, enable=1))
    for volts in (None, 0.0, math.nan, -1.0):
        r.battery = volts
        r.tick()
    assert battery_events(r) == []


def test_battery_already_low_when_armed_fires_once_and_off_stops_it() -> None:
    r = Run(battery=20.0)
    r.send(goal(GoalKind.BATTERY_LOW, voltage=22.0, enable=1))
    r.run(0.1)
    assert battery_events(r) == [20.0]
    r.send(goal(GoalKind.BATTERY_LOW, voltage=22.0, enable=0))
    r.battery = 23.0
    r.run(0.1)
    r.battery = 20.0
    r.run(0.1)
    assert battery_events(r) == [20.0]


# --------------------------------------------------------------------------- wire

def test_to_msg_round_trips() -> None:
    event = goals.Event(kind=EventKind.GOAL_DONE, goal_id=-7, goal_kind=GoalKind.MOVE_DISTANCE,
                        reason=Reason.TIMEOUT, x=1.5, y=-2.25, yaw=0.5, value=0.75, text="timeout after 2 s")
    msg = goals.to_msg(event, 123456)
    back = msgs.motion_event_t.decode(msg.encode())
    assert (back.utime, back.goal_id, back.goal_kind, back.kind, back.reason) == (123456, -7, 1, 1, 2)
    assert (back.x, back.y, back.yaw, back.value) == (1.5, -2.25, 0.5, 0.75)
    assert back.text == "timeout after 2 s"
