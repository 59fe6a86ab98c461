"""`motionctl sim`: the simulated robot in its own process, as a robot bridge
(controller/service/sim_process.py); motiond then runs without --sim."""
from __future__ import annotations

import argparse
import signal
from typing import Any

from controller.cli.client import EXIT_CODES_HELP, Formatter
from controller.cli.commands import summary
from controller.robot.config import Config, ConfigError

DESCRIPTION = """\
Run the simulated robot as its own process, speaking the robot's LCM like a
robot bridge: joint_cmd in; joint_state, imu and sim_state (ground truth)
out every tick, in real time on the config's joint port. Start motiond
without --sim beside it and it runs exactly as on the robot:

  motionctl sim &          # the MuJoCo body
  motiond                  # the controller, listening for joint_state
  motionctl send 12        # stands it up

Without a joint_cmd for 100 ms the motors go limp. SIGINT/SIGTERM stop it."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add `sim` to an argparse subparsers object; its func is `run`."""
    p: argparse.ArgumentParser = sub.add_parser(
        "sim", help=summary("sim"),
        description=DESCRIPTION, epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    p.add_argument("--sim", choices=("physics", "joint"), default="physics",
                   help="the MuJoCo physics body (default; the joint-space sim for a robot "
                        "without a physics model), or the joint-space sim")
    p.add_argument("--world", metavar="NAME", default=None,
                   help="the physics world around the robot: a name in config/physics/worlds.yaml "
                        "(stairs_10cm_up, slope_20_up, rough_2cm, real_actuators_3ms, ...)")
    p.add_argument("--ticks", type=int, default=None, metavar="N",
                   help="stop after N ticks (default: run until stopped)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace, cfg: Config) -> int:
    from controller.behaviours.base import make_robot
    from controller.logs import configure, get_logger
    from controller.robot.native import Kernel
    from controller.service.sim_process import SimProcess
    from controller.service.transport import Bus
    from controller.sim.robot import make_sim

    configure("info")
    log = get_logger("motion-sim")
    kin = make_robot(cfg, Kernel(cfg.q_min, cfg.q_max, cfg.v_max)).kin
    try:
        sim, kind = make_sim(cfg, kin, args.sim, args.world)
    except ConfigError as exc:
        log.error("world_invalid", error=str(exc))
        return 2
    if kind != args.sim:
        log.warning("sim_fallback", asked=args.sim, running=kind,
                    reason=f"no physics model for {cfg.robot}")
    process = SimProcess(cfg, sim, Bus(cfg.lcm))
    signal.signal(signal.SIGINT, process.request_stop)
    signal.signal(signal.SIGTERM, process.request_stop)
    log.info("sim_start", robot=cfg.robot, sim=kind, url=cfg.lcm.url("joint"),
             namespace=cfg.lcm.namespace or None)
    return process.run(args.ticks)
