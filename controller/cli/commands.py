"""motionctl's subcommands: each one's module and one-line summary, in the
order `motionctl --help` lists them. motionctl imports only the module of the
command given (the others appear in --help by their summary), so `send` and
`watch` start without the simulator, the optimiser or numpy."""
from __future__ import annotations

# name -> (module under controller/, summary)
COMMANDS: dict[str, tuple[str, str]] = {
    "send": ("cli.send_cmd", "send one robot_control_cmd and keep it alive"),
    "hold": ("cli.hold_cmd", "keep the heartbeat between motionctl commands"),
    "teleop": ("cli.teleop_cmd", "drive the robot from the keyboard (speed, turn, stand, lie down)"),
    "watch": ("cli.watch_cmd", "show the controller's status"),
    "play": ("cli.play_cmd", "play a TOML command sequence"),
    "goal": ("cli.goal_cmd", "goal-directed moves, odometry and triggers (motiond's motion_goal)"),
    "script": ("cli.script_cmd", "play keyframe scripts by name (motiond's script_request)"),
    "validate": ("motion.validate",
                 "check motion files (.toml, .yaml/.yml, .mof) and user gaits without a robot"),
    "spy": ("cli.spy_cmd", "lcm-spy on the daemon's LCM ports, with motiond's types"),
    "sim": ("cli.sim_cmd", "run the simulated robot as its own process (a robot bridge over LCM)"),
    "render": ("cli.render_cmd", "draw a recording of the simulated robot into a GIF or MP4"),
    "physics": ("cli.physics_cmd", "run the physics scorecard: every robot's modes and gaits judged in MuJoCo"),
    "optimise": ("cli.optimise_cmd", "optimise a jump or roll-over trajectory for the robot in physics"),
    "view": ("cli.view_cmd", "MuJoCo's interactive viewer on a running simulator"),
    "foxglove": ("cli.foxglove_cmd", "serve the robot live to the Foxglove app (3D, plots, status)"),
    "check-config": ("cli.check_config", "check robot config files as motiond loads them"),
    "new-robot": ("cli.new_robot", "write a commented config skeleton for a new quadruped"),
    "record": ("cli.log_cmd", "record every motiond channel as LCM event logs"),
    "replay": ("cli.log_cmd", "re-run the controller on a recording and compare"),
    "plot": ("cli.log_cmd", "plot a recording's joint targets to a PNG"),
    "export": ("cli.foxglove_cmd", "convert a recording to an MCAP file for Foxglove"),
    "bridge": ("cli.bridge_cmd", "run a robot bridge beside motiond (the robot maker's low-level wire)"),
    "board-emulator": ("cli.bridge_cmd", "emulate CyberDog 2's motion-control board in physics (for the bridge)"),
    "joint-check": ("cli.joint_check_cmd",
                    "move one joint a few degrees at a low gain and read it back (robot hung up)"),
}

# The commands that only talk to the daemon: they read the config's wire
# part alone (controller/robot/config/wire.py), not the whole robot.
WIRE_COMMANDS = frozenset({"send", "hold", "teleop", "watch", "play"})

# The commands that need no config of motionctl's (files, or their own).
FILE_COMMANDS = frozenset({"validate", "check-config", "new-robot", "physics"})


def summary(name: str) -> str:
    return COMMANDS[name][1]
