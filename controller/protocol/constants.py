"""CyberDog 2 protocol constants shared by the daemon and its tools (SPEC §1.3, §5)."""

# Mode 62 is not a state: the response's alias while a motion runs (SPEC §4.2);
# 110 is the uploaded user gait, as a mode-11 gait and a mode-62 motion (SPEC §8).
MOTION_MODE = 62
USER_GAIT = 110

# switch_status codes as the controller emits them.
DONE, TRANSITIONING, ESTOP, EDAMP, LIFTED, BAN_TRANS, OVER_HEAT, LOW_BAT = range(8)
SWITCH_STATUS_NAMES = {DONE: "DONE", TRANSITIONING: "TRANSITIONING", ESTOP: "ESTOP",
                       EDAMP: "EDAMP", LIFTED: "LIFTED", BAN_TRANS: "BAN_TRANS",
                       OVER_HEAT: "OVER_HEAT", LOW_BAT: "LOW_BAT"}

# motion_goal_t (motiond's own type): speed-profile defaults (the robot
# config's `goal_profile` overrides them until a SET_SPEED_PROFILE goal),
# gentle enough for any locomotion to follow.
DEFAULT_MAX_ACC = 0.5        # m/s^2
DEFAULT_MAX_SPEED = 0.3      # m/s
DEFAULT_MAX_ROTATION = 0.5   # rad/s

# Hard bounds: a goal beyond them is refused. They catch unit mistakes (mm or
# degrees sent as m or rad) as much as unreasonable requests.
LIMIT_ACC = 5.0              # m/s^2
LIMIT_SPEED = 2.0            # m/s
LIMIT_ROTATION = 4.0         # rad/s
