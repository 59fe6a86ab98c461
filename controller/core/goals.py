"""Goal-directed moves and odometry triggers (motion_goal_t in, motion_event_t out).

The motion-module idea of a wheeled robot, in SI units, for a walking one:
move a distance along an arc and stop on the target, move continuously for a
while, a speed profile, odometry set, area and battery triggers. Goals arrive
on `motion_goal`; every goal is answered on `motion_event` with its goal_id.

`GoalExecutor` is a pure state machine on an injected clock: no sockets, no
clock reads. Per tick the controller should, in this order:

1. integrate the odometry (`controller.core.odometry.Odometry.integrate`) with the
   body velocity of the tick that just ended (measured or, without a state
   estimate, the commanded one);
2. for every decoded motion_goal_t: `events += executor.on_goal(msg, now_ns, odom)`;
   a new move pre-empts the running one, SET_ODOMETRY calls `odom.set`;
3. if a robot_control_cmd took over (an accepted, non-heartbeat command):
   `events += executor.preempt(now_ns, "robot_control_cmd mode 12")`;
4. `velocity, more = executor.step(now_ns, odom, battery_v)`. `velocity` is
   (vx, vy, wz) in the body frame (m/s, m/s, rad/s) on every tick a move runs,
   None otherwise; a move that ends on this tick already returns None, with its
   GOAL_DONE among the events. So: walk at `velocity` while it is not None; on
   the tick it becomes None after a move (a GOAL_DONE is in the events) command
   a locomotion stand (zero velocity) and let locomotion brake. MOVE_DISTANCE
   has already slowed down to a creep when it reports REACHED.
5. if the state machine refuses locomotion while a move runs:
   `events += executor.refuse(now_ns, "BAN_TRANS: ...")`;
6. publish every event with `to_msg(event, utime)` on `motion_event`.

Event semantics (see lcmtypes/motion_event_t.lcm): every goal gets ACCEPTED or
GOAL_DONE/REFUSED at once; a move then gets exactly one GOAL_DONE (REACHED,
TIMEOUT, PREEMPTED, REFUSED or CANCELLED). A MOVE_CONTINUOUS that runs for its
whole `timeout` ends with REACHED: that time is its target, not a failure.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from controller import msgs
from controller.core.odometry import Odometry
from controller.protocol.constants import (
    DEFAULT_MAX_ACC,
    DEFAULT_MAX_ROTATION,
    DEFAULT_MAX_SPEED,
    LIMIT_ACC,
    LIMIT_ROTATION,
    LIMIT_SPEED,
)
from controller.protocol.goal_codes import EventKind, GoalKind, Reason

MAX_TIMEOUT_S = 600.0
MAX_DISTANCE = 100.0         # m
MAX_ANGLE = 4.0 * math.pi    # rad: two turns
MAX_COORD = 10_000.0         # m: float32 still resolves ~1 mm here
MAX_VOLTAGE = 100.0          # V

# Completion and control.
DIST_TOLERANCE = 0.003       # m: REACHED within this of the target distance...
YAW_TOLERANCE = 0.005         # rad: ...and this of the target turn
MIN_SPEED = 0.02             # m/s: creep speed near the target, so a gait's dead band cannot stall it
MIN_ROTATION = 0.05          # rad/s: the same for turning
YAW_GAIN = 2.0               # 1/s: pulls the heading back onto the arc
MAX_STEP_S = 0.1             # a longer gap between steps does not ramp further than this
AREA_HYSTERESIS = 0.01       # m: leaving counts this far outside, so odometry noise cannot chatter
BATTERY_HYSTERESIS = 0.2     # V: re-armed above threshold + this

Velocity = tuple[float, float, float]


@dataclass(frozen=True)
class Event:
    """One motion_event_t, before its utime is known."""

    kind: int
    goal_id: int
    goal_kind: int
    reason: int = Reason.NONE
    x: float = 0.0
    y: float = 0.0
    yaw: float = 0.0
    value: float = 0.0
    text: str = ""


def to_msg(event: Event, utime: int) -> msgs.motion_event_t:
    """The event as a motion_event_t stamped `utime` (us)."""
    msg = msgs.motion_event_t()
    msg.utime = int(utime)
    msg.goal_id = int(event.goal_id)
    msg.goal_kind = int(event.goal_kind)
    msg.kind = int(event.kind)
    msg.reason = int(event.reason)
    msg.x, msg.y, msg.yaw = event.x, event.y, event.yaw
    msg.value = event.value
    msg.text = event.text
    return msg


@dataclass
class SpeedProfile:
    max_acc: float = DEFAULT_MAX_ACC            # m/s^2
    max_speed: float = DEFAULT_MAX_SPEED        # m/s
    max_rotation: float = DEFAULT_MAX_ROTATION  # rad/s

    @property
    def rot_acc(self) -> float:
        """Angular acceleration, rad/s^2: reaches max_rotation in the time max_acc takes to max_speed."""
        return self.max_acc * self.max_rotation / self.max_speed


@dataclass
class _Move:
    goal_id: int
    kind: GoalKind
    deadline_ns: int
    timeout: float
    distance: float = 0.0       # MOVE_DISTANCE
    angle: float = 0.0
    speed: float = 0.0          # MOVE_CONTINUOUS
    rotation: float = 0.0
    forward0: float = 0.0       # odometry counters at the start
    turned0: float = 0.0


@dataclass
class _Area:
    goal_id: int
    x1: float
    y1: float
    x2: float
    y2: float
    inside: bool = field(default=False)

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        return (self.x1 - margin <= x <= self.x2 + margin
                and self.y1 - margin <= y <= self.y2 + margin)


@dataclass
class _Battery:
    goal_id: int
    threshold: float
    armed: bool = True


_FLOAT_FIELDS = ("distance", "angle", "speed", "rotation", "timeout", "max_acc", "max_speed",
                 "max_rotation", "x", "y", "yaw", "x1", "y1", "x2", "y2", "voltage")


def _out_of(name: str, value: float, low: float, high: float, *, open_low: bool = False) -> str | None:
    """A refusal text when value is outside [low, high] (or (low, high]), else None."""
    if value > high or value < low or (open_low and value == low):
        bracket = "(" if open_low else "["
        return f"{name} {value:g} is outside {bracket}{low:g}, {high:g}]"
    return None


def validate(msg: msgs.motion_goal_t) -> str | None:
    """Why the goal must be refused, or None when it is valid. Never raises."""
    for name in _FLOAT_FIELDS:
        if not math.isfinite(getattr(msg, name)):
            return f"{name} is not finite"
    try:
        kind = GoalKind(msg.kind)
    except ValueError:
        return f"unknown kind {msg.kind}"
    checks: list[str | None] = []
    if kind is GoalKind.MOVE_DISTANCE:
        checks = [_out_of("distance", msg.distance, -MAX_DISTANCE, MAX_DISTANCE),
                  _out_of("angle", msg.angle, -MAX_ANGLE, MAX_ANGLE)]
    elif kind is GoalKind.MOVE_CONTINUOUS:
        checks = [_out_of("speed", msg.speed, -LIMIT_SPEED, LIMIT_SPEED),
                  _out_of("rotation", msg.rotation, -LIMIT_ROTATION, LIMIT_ROTATION)]
    elif kind is GoalKind.SET_SPEED_PROFILE:
        checks = [_out_of("max_acc", msg.max_acc, 0.0, LIMIT_ACC, open_low=True),
                  _out_of("max_speed", msg.max_speed, 0.0, LIMIT_SPEED, open_low=True),
                  _out_of("max_rotation", msg.max_rotation, 0.0, LIMIT_ROTATION, open_low=True)]
    elif kind is GoalKind.SET_ODOMETRY:
        checks = [_out_of("x", msg.x, -MAX_COORD, MAX_COORD), _out_of("y", msg.y, -MAX_COORD, MAX_COORD),
                  _out_of("yaw", msg.yaw, -MAX_ANGLE, MAX_ANGLE)]
    elif kind in (GoalKind.AREA, GoalKind.BATTERY_LOW):
        checks = [_trigger_problem(kind, msg)]
    if kind in (GoalKind.MOVE_DISTANCE, GoalKind.MOVE_CONTINUOUS):
        checks.append(_out_of("timeout", msg.timeout, 0.0, MAX_TIMEOUT_S, open_low=True))
    return next((c for c in checks if c is not None), None)


def _trigger_problem(kind: GoalKind, msg: msgs.motion_goal_t) -> str | None:
    if msg.enable not in (0, 1):
        return f"enable {msg.enable} is not 0 or 1"
    if not msg.enable:
        return None
    if kind is GoalKind.BATTERY_LOW:
        return _out_of("voltage", msg.voltage, 0.0, MAX_VOLTAGE, open_low=True)
    for name in ("x1", "y1", "x2", "y2"):
        if (problem := _out_of(name, getattr(msg, name), -MAX_COORD, MAX_COORD)) is not None:
            return problem
    if not (msg.x1 < msg.x2 and msg.y1 < msg.y2):
        return f"area needs x1 < x2 and y1 < y2, got ({msg.x1:g}, {msg.y1:g}) - ({msg.x2:g}, {msg.y2:g})"
    return None


def _slew(prev: float, want: float, step: float) -> float:
    """prev moved toward want by at most `step`; slowing down is immediate.

    Braking is left to the deceleration law of the move (and to the robot's
    own limits), so that a stop on target is never delayed by the ramp.
    """
    if prev * want < 0.0:
        prev = 0.0
    if abs(want) <= abs(prev):
        return want
    return prev + max(-step, min(step, want - prev))


def _brake_speed(remaining: float, acc: float, top: float, floor: float) -> float:
    """Signed speed that stops on `remaining` at deceleration `acc`: sqrt(2 a d), within [floor, top]."""
    speed = min(top, math.sqrt(2.0 * acc * abs(remaining)))
    return math.copysign(max(min(floor, top), speed), remaining)


class GoalExecutor:
    """Runs at most one move at a time plus the area and battery triggers. See the module doc."""

    def __init__(self, profile: SpeedProfile | None = None) -> None:
        self.profile = profile if profile is not None else SpeedProfile()
        self._move: _Move | None = None
        self._area: _Area | None = None
        self._battery: _Battery | None = None
        self._odom: Odometry | None = None     # the last one seen, for the pose in events
        self._last_ns: int | None = None
        self._v = 0.0                          # the last commanded vx, m/s
        self._w = 0.0                          # and wz, rad/s

    # ------------------------------------------------------------------ queries

    @property
    def active(self) -> bool:
        """True while a move runs (step returns a velocity)."""
        return self._move is not None

    @property
    def goal_id(self) -> int | None:
        """The running move's goal_id, or None."""
        return self._move.goal_id if self._move is not None else None

    # ------------------------------------------------------------------ inputs

    def on_goal(self, msg: msgs.motion_goal_t, now_ns: int, odom: Odometry) -> list[Event]:
        """Take one decoded motion_goal_t; returns its events (never raises on bad content)."""
        self._odom = odom
        problem = validate(msg)
        if problem is not None:
            return [self._event(EventKind.GOAL_DONE, msg.goal_id, msg.kind, Reason.REFUSED, text=problem)]
        kind = GoalKind(msg.kind)
        if kind in (GoalKind.MOVE_DISTANCE, GoalKind.MOVE_CONTINUOUS):
            return self._start_move(msg, kind, now_ns, odom)
        events: list[Event] = []
        text = ""
        if kind is GoalKind.STOP:
            events = self._finish(Reason.CANCELLED, f"stopped by goal {msg.goal_id}")
        elif kind is GoalKind.SET_SPEED_PROFILE:
            self.profile = SpeedProfile(float(msg.max_acc), float(msg.max_speed), float(msg.max_rotation))
            text = f"profile {msg.max_acc:g} m/s^2, {msg.max_speed:g} m/s, {msg.max_rotation:g} rad/s"
        elif kind is GoalKind.SET_ODOMETRY:
            odom.set(msg.x, msg.y, msg.yaw)
            text = f"odometry set to {odom.x:.3f} {odom.y:.3f} {odom.yaw:.3f}"
        elif kind is GoalKind.AREA:
            text = self._arm_area(msg, odom)
        elif kind is GoalKind.BATTERY_LOW:
            self._battery = _Battery(msg.goal_id, float(msg.voltage)) if msg.enable else None
            text = f"battery trigger below {msg.voltage:g} V" if msg.enable else "battery trigger off"
        events.append(self._event(EventKind.ACCEPTED, msg.goal_id, kind, text=text))
        return events

    def preempt(self, now_ns: int, reason_text: str, odom: Odometry | None = None) -> list[Event]:
        """A robot_control_cmd took over: the running move ends PREEMPTED (no-op without one)."""
        self._odom = odom if odom is not None else self._odom
        return self._finish(Reason.PREEMPTED, reason_text)

    def refuse(self, now_ns: int, reason_text: str, odom: Odometry | None = None) -> list[Event]:
        """The state machine refused locomotion: the running move ends REFUSED (no-op without one)."""
        self._odom = odom if odom is not None else self._odom
        return self._finish(Reason.REFUSED, reason_text)

    def step(self, now_ns: int, odom: Odometry, battery_v: float | None) -> tuple[Velocity | None, list[Event]]:
        """One tick: the body velocity to walk at (None: no move runs) and the events of this tick.

        `battery_v` None, 0 or not finite means "not reported": the battery
        trigger then neither fires nor re-arms.
        """
        self._odom = odom
        dt = 0.0 if self._last_ns is None else min(MAX_STEP_S, max(0.0, (now_ns - self._last_ns) * 1e-9))
        self._last_ns = now_ns
        events: list[Event] = []
        velocity: Velocity | None = None
        move = self._move
        if move is not None:
            if move.kind is GoalKind.MOVE_DISTANCE:
                velocity = self._step_distance(move, now_ns, odom, dt, events)
            else:
                velocity = self._step_continuous(move, now_ns, dt, events)
        if self._area is not None:
            self._check_area(self._area, odom, events)
        if self._battery is not None and battery_v is not None:
            self._check_battery(self._battery, battery_v, events)
        return velocity, events

    # ------------------------------------------------------------------ moves

    def _start_move(self, msg: msgs.motion_goal_t, kind: GoalKind, now_ns: int, odom: Odometry) -> list[Event]:
        events = self._finish(Reason.PREEMPTED, f"pre-empted by goal {msg.goal_id}")
        # Ramp from what the robot does now, so a move that follows manual
        # walking (or another move) does not ask for a jump in speed.
        self._v, self._w = odom.vx, odom.wz
        self._last_ns = now_ns
        timeout = float(msg.timeout)
        self._move = _Move(goal_id=msg.goal_id, kind=kind, deadline_ns=now_ns + round(timeout * 1e9),
                           timeout=timeout, distance=float(msg.distance), angle=float(msg.angle),
                           speed=float(msg.speed), rotation=float(msg.rotation),
                           forward0=odom.forward, turned0=odom.turned)
        if kind is GoalKind.MOVE_DISTANCE:
            text = f"move {msg.distance:g} m turning {msg.angle:g} rad, timeout {timeout:g} s"
        else:
            text = f"move at {msg.speed:g} m/s, {msg.rotation:g} rad/s for {timeout:g} s"
        events.append(self._event(EventKind.ACCEPTED, msg.goal_id, kind, text=text))
        return events

    def _step_distance(self, move: _Move, now_ns: int, odom: Odometry, dt: float,
                       events: list[Event]) -> Velocity | None:
        travelled = odom.forward - move.forward0
        turned = odom.turned - move.turned0
        rem_d = move.distance - travelled
        rem_a = move.angle - turned
        if abs(rem_d) <= DIST_TOLERANCE and abs(rem_a) <= YAW_TOLERANCE:
            events += self._finish(Reason.REACHED, f"reached: {travelled:.3f} m, turned {turned:.3f} rad")
            return None
        if now_ns >= move.deadline_ns:
            events += self._finish(Reason.TIMEOUT, (
                f"timeout after {move.timeout:g} s: {travelled:.3f} of {move.distance:g} m, "
                f"turned {turned:.3f} of {move.angle:g} rad"))
            return None
        p = self.profile
        if move.distance != 0.0 and abs(rem_d) > DIST_TOLERANCE:
            # Along the arc: speed from the braking law, yaw rate proportional
            # to it, plus a correction toward the heading the arc has here.
            curvature = move.angle / move.distance
            top = p.max_speed if curvature == 0.0 else min(p.max_speed, p.max_rotation / abs(curvature))
            self._v = _slew(self._v, _brake_speed(rem_d, p.max_acc, top, MIN_SPEED), p.max_acc * dt)
            w = curvature * self._v + YAW_GAIN * (curvature * travelled - turned)
            self._w = max(-p.max_rotation, min(p.max_rotation, w))
        else:
            # Turn in place: no distance asked, or the distance is done and
            # the heading still needs finishing.
            self._v = 0.0
            self._w = _slew(self._w, _brake_speed(rem_a, p.rot_acc, p.max_rotation, MIN_ROTATION),
                            p.rot_acc * dt)
        return (self._v, 0.0, self._w)

    def _step_continuous(self, move: _Move, now_ns: int, dt: float, events: list[Event]) -> Velocity | None:
        if now_ns >= move.deadline_ns:
            events += self._finish(Reason.REACHED, f"ran for {move.timeout:g} s")
            return None
        p = self.profile
        # Beyond the profile: scale both down together, keeping the circle's radius.
        scale = 1.0
        if abs(move.speed) > p.max_speed:
            scale = p.max_speed / abs(move.speed)
        if abs(move.rotation) * scale > p.max_rotation:
            scale = p.max_rotation / abs(move.rotation)
        want_v, want_w = move.speed * scale, move.rotation * scale
        # One common ramp fraction, so (v, w) moves along a straight line and
        # a start from rest keeps the requested curvature all the way.
        dv, dw = want_v - self._v, want_w - self._w
        frac = 1.0
        if abs(dv) > 0.0:
            frac = min(frac, p.max_acc * dt / abs(dv))
        if abs(dw) > 0.0:
            frac = min(frac, p.rot_acc * dt / abs(dw))
        self._v += frac * dv
        self._w += frac * dw
        return (self._v, 0.0, self._w)

    def _finish(self, reason: Reason, text: str) -> list[Event]:
        """End the running move with one GOAL_DONE; no move, no event."""
        move = self._move
        if move is None:
            return []
        self._move = None
        self._v = self._w = 0.0
        odom = self._odom
        travelled = odom.forward - move.forward0 if odom is not None else 0.0
        return [self._event(EventKind.GOAL_DONE, move.goal_id, move.kind, reason, value=travelled, text=text)]

    # ------------------------------------------------------------------ triggers

    def _arm_area(self, msg: msgs.motion_goal_t, odom: Odometry) -> str:
        if not msg.enable:
            self._area = None
            return "area trigger off"
        area = _Area(msg.goal_id, float(msg.x1), float(msg.y1), float(msg.x2), float(msg.y2))
        # Edge-triggered: where the robot is now is the starting state, not an event.
        area.inside = area.contains(odom.x, odom.y)
        self._area = area
        where = "inside" if area.inside else "outside"
        return f"area ({msg.x1:g}, {msg.y1:g}) - ({msg.x2:g}, {msg.y2:g}), robot {where}"

    def _check_area(self, area: _Area, odom: Odometry, events: list[Event]) -> None:
        if area.inside:
            if area.contains(odom.x, odom.y, AREA_HYSTERESIS):
                return
            area.inside = False
            kind, verb = EventKind.AREA_LEFT, "left"
        else:
            if not area.contains(odom.x, odom.y):
                return
            area.inside = True
            kind, verb = EventKind.AREA_ENTERED, "entered"
        events.append(self._event(kind, area.goal_id, GoalKind.AREA, text=(
            f"{verb} area ({area.x1:g}, {area.y1:g}) - ({area.x2:g}, {area.y2:g})")))

    def _check_battery(self, battery: _Battery, volts: float, events: list[Event]) -> None:
        if not math.isfinite(volts) or volts <= 0.0:
            return  # not reported
        if battery.armed and volts < battery.threshold:
            battery.armed = False
            events.append(self._event(EventKind.BATTERY_LOW, battery.goal_id, GoalKind.BATTERY_LOW,
                                      value=volts, text=f"battery {volts:.2f} V < {battery.threshold:g} V"))
        elif not battery.armed and volts > battery.threshold + BATTERY_HYSTERESIS:
            battery.armed = True

    # ------------------------------------------------------------------ events

    def _event(self, kind: EventKind, goal_id: int, goal_kind: int, reason: Reason = Reason.NONE,
               value: float = 0.0, text: str = "") -> Event:
        odom = self._odom
        x, y, yaw = (odom.x, odom.y, odom.yaw) if odom is not None else (0.0, 0.0, 0.0)
        return Event(kind=int(kind), goal_id=int(goal_id), goal_kind=int(goal_kind), reason=int(reason),
                     x=x, y=y, yaw=yaw, value=value, text=text)
