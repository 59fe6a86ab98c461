"""Robot bridges: motiond's joint wire (joint_cmd, joint_state, imu) on one
side, a robot maker's own low-level wire on the other (docs/REAL_ROBOT.md)."""
