"""`motionctl bridge NAME`: a robot bridge beside motiond; `motionctl
board-emulator`: CyberDog 2's motion-control board emulated in physics, for
trying the bridge without the robot (docs/REAL_ROBOT.md)."""
from __future__ import annotations

import argparse
import signal
from typing import Any

from controller.cli.client import EXIT_CODES_HELP, Formatter
from controller.cli.commands import summary
from controller.robot.config import Config

BRIDGE_DESCRIPTION = """\
Run a robot bridge as its own process: joint_cmd from motiond in, the
robot's own low-level wire out (cyberdog2: the motor SDK's motor_ctrl over
the robot's LCM), and back joint_state, imu and bridge_status on motiond's
joint port. The config's `bridge` section says where the robot is; its
`lcm.ports.joint` must not be the robot's own port:

  motiond --config config/cyberdog2_robot.yaml &
  motionctl --config config/cyberdog2_robot.yaml bridge cyberdog2

`motiond --bridge cyberdog2` runs the same bridge inside motiond instead
(lower latency). SIGINT/SIGTERM stop it; the robot's firmware then decays
the last command after 10 ms and damps the robot down after 500 ms."""

BOARD_DESCRIPTION = """\
Emulate CyberDog 2's motion-control board on the robot's LCM (the config's
`bridge` URLs): the physics body under the board's mode-15 rules, taking
motor_ctrl and publishing spi_data, motor_ctrl_state and state_estimator
every tick, in real time. With it the CyberDog 2 bridge runs as on the
robot, on one machine:

  motionctl --config config/cyberdog2_robot.yaml board-emulator &
  motiond --config config/cyberdog2_robot.yaml --bridge cyberdog2"""


def add_parsers(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "bridge", help=summary("bridge"),
        description=BRIDGE_DESCRIPTION, epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    p.add_argument("name", choices=("cyberdog2", "unitree_go2"),
                   help="the robot's wire: cyberdog2 (the motor SDK's LCM), unitree_go2 (Unitree SDK2's DDS)")
    p.add_argument("--seconds", type=float, default=None, help="stop after this long (tests)")
    p.set_defaults(func=run_bridge)
    b: argparse.ArgumentParser = sub.add_parser(
        "board-emulator", help=summary("board-emulator"),
        description=BOARD_DESCRIPTION, epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    b.add_argument("--seconds", type=float, default=None, help="stop after this long (tests)")
    b.set_defaults(func=run_board)


def _stoppable(process: Any) -> None:
    def stop(_signum: int, _frame: object) -> None:
        process.stop = True
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)


def run_bridge(args: argparse.Namespace, cfg: Config) -> int:
    from controller.bridges.run import BridgeProcess
    from controller.logs import configure, get_logger
    from controller.service import realtime
    configure("info")
    process = BridgeProcess(cfg, args.name)
    # The bridge is on the tick's path: it runs as motiond's tick does (the
    # config's `realtime` section), or says why it cannot.
    applied, refused = realtime.setup(cfg.realtime)
    get_logger("bridge").info("realtime", applied=applied, refused=refused or None)
    _stoppable(process)
    return process.run(args.seconds)


def run_board(args: argparse.Namespace, cfg: Config) -> int:
    from controller.bridges.run import BoardProcess
    from controller.logs import configure
    configure("info")
    process = BoardProcess(cfg)
    _stoppable(process)
    return process.run(args.seconds)
