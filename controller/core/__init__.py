"""The tick: Controller.step, the mode state machine, limb ownership, faults, goals, odometry."""
