"""The codes of motiond's goal interface (motion_goal_t / motion_event_t):
what a goal asks, what an event reports and why a goal ended. Apart from
the goal logic (controller/core/goals.py) so that a client (motionctl) can
name them without importing it."""
from __future__ import annotations

import enum


class GoalKind(enum.IntEnum):
    """motion_goal_t.kind."""

    STOP = 0
    MOVE_DISTANCE = 1
    MOVE_CONTINUOUS = 2
    SET_SPEED_PROFILE = 3
    SET_ODOMETRY = 4
    AREA = 5
    BATTERY_LOW = 6


class EventKind(enum.IntEnum):
    """motion_event_t.kind (0 is never sent, so an all-zero message is recognisably empty)."""

    GOAL_DONE = 1
    AREA_LEFT = 2
    AREA_ENTERED = 3
    BATTERY_LOW = 4
    ACCEPTED = 5
    SCRIPT_STARTED = 6     # script requests (controller/core/director.py)
    SCRIPT_DONE = 7
    FALL = 8               # a humanoid is falling (controller/core/fall.py)
    FAULT = 9              # a fault damped the robot (controller/core/controller.py _trip)


class Reason(enum.IntEnum):
    """motion_event_t.reason, set for GOAL_DONE and SCRIPT_DONE only."""

    NONE = 0
    REACHED = 1
    TIMEOUT = 2
    PREEMPTED = 3
    REFUSED = 4
    CANCELLED = 5
    FINISHED = 6           # SCRIPT_DONE: played to its last frame
    FAILED = 7             # SCRIPT_DONE: a getup ended with the robot still down, twice
