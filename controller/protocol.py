"""CyberDog 2 protocol constants shared by the daemon and its tools (SPEC §1.3, §5)."""

# switch_status codes as the controller emits them.
DONE, TRANSITIONING, ESTOP, EDAMP, LIFTED, BAN_TRANS, OVER_HEAT, LOW_BAT = range(8)
SWITCH_STATUS_NAMES = {DONE: "DONE", TRANSITIONING: "TRANSITIONING", ESTOP: "ESTOP",
                       EDAMP: "EDAMP", LIFTED: "LIFTED", BAN_TRANS: "BAN_TRANS",
                       OVER_HEAT: "OVER_HEAT", LOW_BAT: "LOW_BAT"}
