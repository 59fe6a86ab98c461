"""The robot model: config, kinematics, the C kernel's Python face, shipped resources."""
