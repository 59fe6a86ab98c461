"""Drive a robot from Python: `from controller.client import Robot`.

    from controller.client import Robot

    with Robot() as robot:              # the daemon of config/cyberdog2.yaml
        robot.stand()
        robot.walk(vx=0.3, seconds=3)   # trot forward 3 s, then stand
        robot.pose(pitch=0.2)           # head up 0.2 rad (mode 21, relative)
        robot.motion(1)                 # a motion (mode 62): the hi-five
        robot.goal_move(0.5)            # walk 0.5 m and stop on the target
        print(robot.odometry)
    # leaving the block lies the robot down and stops the heartbeat

It speaks the CyberDog 2 protocol (robot_control_cmd with its life_count
and heartbeat, SPEC §1-§3) and motiond's own goal interface, so `stand`,
`walk`, `pose`, `motion` and `send` also drive a real CyberDog 2. A thread
of its own keeps the heartbeat (the last command re-sent every 100 ms) and
takes in the feedback; each call that waits returns once the robot reports
the command finished, or raises `Refused` (with the controller's reason) or
`TimeoutError`. A running `motionctl hold` is paused while a Robot is open,
so the two never fight over the robot.
"""
from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from controller.cli.client import (
    DEFAULT_TIMEOUT_S,
    POLL_S,
    CompletionTracker,
    Feedback,
    Link,
    Outcome,
    SystemClock,
    daemon_refusal,
    next_life_count,
)
from controller.cli.hold import hold_path, request
from controller.cli.names import GAIT_WORDS
from controller.motion.sequence import build_command
from controller.msgs import (
    controller_status_t,
    localization_lcmt,
    motion_event_t,
    motion_goal_t,
    robot_control_response_lcmt,
)
from controller.protocol.goal_codes import EventKind, GoalKind, Reason
from controller.robot.config.wire import load_wire, with_namespace
from controller.service.transport import Bus

STAND, LIE, LOCOMOTION, POSE, MOTION = 12, 7, 11, 21, 62
GOAL_ANSWER_S = 1.0        # a goal is answered at once (ACCEPTED or REFUSED)
STATUS_WAIT_S = 0.3        # controller_status comes at 10 Hz


class Refused(RuntimeError):
    """The controller refused a command or a goal; the text says why."""


@dataclass(frozen=True)
class State:
    """The robot as its last response reports it."""

    mode: int
    gait_id: int
    switch_status: int       # 0 normal, 1 transitioning, 2 ESTOP, 3 EDAMP, 4 lifted, 5 refused
    progress: int            # order_process_bar, 0-100


@dataclass(frozen=True)
class Odometry:
    """Where the robot thinks it is (global_to_robot): m, rad, m/s, rad/s."""

    x: float
    y: float
    yaw: float
    vx: float
    wz: float


class Robot:
    """One robot's controller, by config and namespace (as `motionctl
    --config --namespace`). Open on creation; `close()` (or leaving a `with`
    block) lies it down if it stands and stops the heartbeat."""

    def __init__(self, namespace: str | None = None, config: str | Path | None = None, *,
                 lie_down_on_exit: bool = True) -> None:
        self.cfg = with_namespace(load_wire(config), namespace)
        self.lie_down_on_exit = lie_down_on_exit
        self._link = Link(Bus(self.cfg.lcm), self.cfg.lcm, SystemClock(),
                          ("response", "status", "event", "odometry"))
        self._rng = random.Random()
        self._cond = threading.Condition()
        self._response: robot_control_response_lcmt | None = None
        self._odometry: localization_lcmt | None = None
        self._trackers: list[list[Any]] = []        # [tracker, outcome]
        self._events: list[motion_event_t] = []
        self._life: int | None = None
        self._running = True
        self._hold = hold_path(self.cfg.lcm)
        self._held = request(self._hold, {"op": "pause"}) is not None
        self._thread = threading.Thread(target=self._loop, name="robot-heartbeat", daemon=True)
        self._thread.start()
        self._life = self._wait_status_life()

    # -- the thread ------------------------------------------------------------
    def _loop(self) -> None:
        while self._running:
            with self._cond:
                now = self._link.now()
                for msg in self._link.poll():
                    if isinstance(msg, robot_control_response_lcmt):
                        self._response = msg
                        for entry in self._trackers:
                            if entry[1] is None:
                                entry[1] = entry[0].feed(msg, now)
                    elif isinstance(msg, localization_lcmt):
                        self._odometry = msg
                    elif isinstance(msg, motion_event_t):
                        self._events.append(msg)
                        del self._events[:-100]
                for entry in self._trackers:
                    if entry[1] is None:
                        entry[1] = entry[0].check(now)
                self._cond.notify_all()
            time.sleep(POLL_S)

    def _wait_status_life(self) -> int | None:
        end = time.monotonic() + STATUS_WAIT_S
        with self._cond:
            while self._link.status is None and time.monotonic() < end:
                self._cond.wait(POLL_S)
            return int(self._link.status.last_life_count) if self._link.status is not None else None

    # -- state -----------------------------------------------------------------
    @property
    def state(self) -> State | None:
        """The last response (None before the first)."""
        r = self._response
        return None if r is None else State(r.mode, r.gait_id, r.switch_status, r.order_process_bar)

    @property
    def status(self) -> controller_status_t | None:
        """motiond's last controller_status (counters, last_error...), None from other controllers."""
        return self._link.status

    @property
    def odometry(self) -> Odometry | None:
        o = self._odometry
        return None if o is None else Odometry(o.xyz[0], o.xyz[1], o.rpy[2], o.vBody[0], o.omegaBody[2])

    # -- commands --------------------------------------------------------------
    def send(self, mode: int, gait_id: int = 0, *, wait: bool = True, timeout: float = DEFAULT_TIMEOUT_S,
             **fields: Any) -> None:
        """Send one robot_control_cmd (fields as named in the message:
        vel_des, rpy_des, pos_des, step_height, contact, duration...) with a
        fresh life_count; it becomes the heartbeat. With `wait`, return once
        the response shows it finished (Refused, TimeoutError otherwise)."""
        if not self._running:
            raise RuntimeError("the Robot is closed")
        with self._cond:
            life = self._life = next_life_count(self._link.status, self._life, self._rng)
            self._link.send(build_command({"mode": mode, "gait_id": gait_id, **fields}, life))
            sent_at = self._link.now()
            if not wait:
                return
            entry: list[Any] = [CompletionTracker(mode, gait_id, sent_at, timeout), None]
            self._trackers.append(entry)
            try:
                while entry[1] is None:
                    self._cond.wait(1.0)
            finally:
                self._trackers.remove(entry)
            outcome = entry[1]
        if outcome is Outcome.REFUSED:
            reason = daemon_refusal(_Peek(self), mode, sent_at)
            raise Refused(f"mode {mode} gait {gait_id} refused" + (f": {reason}" if reason else ""))
        if outcome is not Outcome.DONE:
            raise TimeoutError(f"mode {mode} gait {gait_id} not finished within {timeout:g} s "
                               f"(last: {self.state})")

    def stand(self, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Stand up (mode 12, the recovery stand: from lying, or from a fall)."""
        self.send(STAND, 0, timeout=timeout)

    def lie_down(self, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Lie down (mode 7 gait 1) and wait until lying."""
        self.send(LIE, 1, timeout=timeout)

    def walk(self, vx: float = 0.0, vy: float = 0.0, wz: float = 0.0, seconds: float | None = None, *,
             gait: str | int = "trot", step_height: float = 0.05) -> None:
        """Walk at (vx m/s, vy m/s, wz rad/s) with `gait` (a gait id or word:
        trot, walk, trot-slow...). With `seconds`, walk that long, then stand
        still (mode 12); without, return once walking (it goes on)."""
        gait_id = GAIT_WORDS[gait] if isinstance(gait, str) else gait
        self.send(LOCOMOTION, gait_id, vel_des=[vx, vy, wz], step_height=[step_height, step_height])
        if seconds is not None:
            time.sleep(seconds)
            self.stand()

    def pose(self, roll: float = 0.0, pitch: float = 0.0, yaw: float = 0.0, height: float | None = None,
             seconds: float = 1.0) -> None:
        """Turn the body by (roll, pitch, yaw) rad relative to now over
        `seconds` (mode 21 gait 0: pitch > 0 lifts the head), or with
        `height` move it to that absolute height in m (mode 21 gait 5)."""
        ms = max(2, round(seconds * 1000))
        if height is not None:
            self.send(POSE, 5, pos_des=[0.0, 0.0, height], duration=ms, wait=False)
        else:
            self.send(POSE, 0, rpy_des=[roll, pitch, yaw], contact=0x0F, duration=ms, wait=False)
        time.sleep(seconds)

    def motion(self, motion_id: int, timeout: float = 60.0) -> None:
        """Play motion `motion_id` (mode 62) and wait until it has finished."""
        self.send(MOTION, motion_id, timeout=timeout)

    def goal_move(self, distance: float, angle: float = 0.0, timeout: float = 30.0) -> Odometry | None:
        """Walk `distance` m along an arc turning `angle` rad and stop on the
        target (motiond's motion_goal); the odometry at the end. Refused or
        TimeoutError when it does not get there."""
        goal = motion_goal_t()
        goal.kind = int(GoalKind.MOVE_DISTANCE)
        goal.goal_id = self._rng.randint(1, 2**31 - 1)
        goal.utime = int(time.time() * 1e6)
        goal.distance, goal.angle, goal.timeout = distance, angle, timeout
        with self._cond:
            seen = len(self._events)
            self._link.send_goal(goal)
            end = time.monotonic() + GOAL_ANSWER_S
            accepted = False
            while True:
                for event in self._events[seen:]:
                    if event.goal_id != goal.goal_id:
                        continue
                    if event.kind == EventKind.ACCEPTED:
                        accepted = True
                        end = time.monotonic() + timeout + 1.0
                    elif event.kind == EventKind.GOAL_DONE:
                        if event.reason == Reason.REACHED:
                            return self.odometry
                        raise Refused(f"goal {goal.goal_id} ended {Reason(event.reason).name}: {event.text}")
                seen = len(self._events)
                if time.monotonic() >= end:
                    raise TimeoutError(f"goal {goal.goal_id}: " + ("not done" if accepted else "no answer "
                                       "(is motiond running, with motion goals?)"))
                self._cond.wait(POLL_S)

    # -- closing ---------------------------------------------------------------
    def close(self) -> None:
        """Lie down if standing (lie_down_on_exit), then stop the heartbeat."""
        if not self._running:
            return
        try:
            state = self.state
            if self.lie_down_on_exit and state is not None and state.mode not in (0, LIE):
                self.lie_down()
        finally:
            self._running = False
            self._thread.join(2.0)
            self._link.stop_heartbeat()

    def __enter__(self) -> Robot:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class _Peek:
    """A Link view for daemon_refusal while the Robot's thread polls: it
    reads the status the thread keeps and waits instead of polling."""

    def __init__(self, robot: Robot) -> None:
        self.robot = robot

    @property
    def status(self) -> controller_status_t | None:
        return self.robot._link.status

    @property
    def status_at(self) -> float:
        return self.robot._link.status_at

    def now(self) -> float:
        return self.robot._link.now()

    def poll(self) -> list[Feedback]:
        return []

    def sleep(self, seconds: float = POLL_S) -> None:
        time.sleep(seconds)
