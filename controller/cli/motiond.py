"""motiond: the motion-controller daemon."""
from __future__ import annotations

import argparse
import signal
import sys

from controller import __version__
from controller.logs import LEVELS, configure, get_logger
from controller.robot.config import DEFAULT_CONFIG, ConfigError, load_config, with_namespace


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="motiond",
        description="Motion-controller daemon for legged robots. Listens for CyberDog 2 "
                    "robot_control_cmd over LCM and publishes joint targets at the tick rate "
                    "(500 Hz by default).")
    p.add_argument("--config", default=str(DEFAULT_CONFIG),
                   help="robot config YAML (default: %(default)s)")
    p.add_argument("--sim", nargs="?", const="physics", choices=("physics", "joint"), default=None,
                   help="drive the built-in simulated robot instead of listening for a robot "
                        "bridge's joint_state: the MuJoCo physics body (the default; robots "
                        "without a physics model yet fall back to the joint-space sim), or "
                        "`joint`, the joint-space sim that moves joints only")
    p.add_argument("--world", metavar="NAME", default=None,
                   help="with --sim: the physics world around the robot, a name in "
                        "config/physics/worlds.yaml (stairs, slopes, rough ground, real actuators, ...)")
    p.add_argument("--bridge", metavar="NAME", default=None,
                   help="drive a real robot through its maker's low-level wire, with the "
                        "bridge in this process: `cyberdog2` (the motor SDK's LCM) or `unitree_go2` "
                        "(Unitree SDK2's DDS), as the config's `bridge` section says (e.g. "
                        "config/cyberdog2_robot.yaml, config/go2_robot.yaml). Or run it beside "
                        "motiond: `motionctl bridge NAME` (docs/REAL_ROBOT.md)")
    p.add_argument("--log-level", choices=LEVELS, default="info",
                   help="lowest log level written (default: %(default)s)")
    p.add_argument("--namespace", metavar="NAME", default=None,
                   help="prefix every LCM channel with NAME/ so several robots can share a "
                        "network (default: the config's lcm.namespace, normally none)")
    p.add_argument("--ticks", type=int, default=None, metavar="N",
                   help="stop after N ticks (for tests and benchmarks)")
    p.add_argument("--version", action="version", version=f"motiond {__version__}")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.sim is not None and args.bridge is not None:
        parser.error("--sim and --bridge exclude each other: the robot is simulated or real")
    configure(args.log_level)
    log = get_logger("motiond")
    try:
        cfg = with_namespace(load_config(args.config), args.namespace)
    except ConfigError as exc:
        log.error("config_invalid", error=str(exc))
        return 2

    # Imported late so that --help works without the compiled kernel.
    from controller.core.controller import Controller
    from controller.service import realtime
    from controller.service.planner_process import ProcessPlanner
    from controller.service.runtime import Runtime, epoch_offset_ns
    from controller.service.sdnotify import Notifier
    from controller.service.transport import Bus
    from controller.sim.robot import make_sim

    # Closed-loop mode 11 solves its MPC in a worker process (started before
    # the real-time setup, so it does not inherit the tick's core; it gets a
    # priority one below the tick's after it). It imports while the
    # controller and the simulator are built; its readiness is awaited below.
    planner = ProcessPlanner(cfg.balance, len(cfg.legs), wait=False) if cfg.balance is not None else None
    ctl = Controller(cfg, epoch_offset_ns=epoch_offset_ns(), planner=planner)
    if args.world is not None and args.sim is None:
        log.error("world_without_sim", error="--world is a world for the simulated robot: add --sim")
        return 2
    try:
        sim, sim_kind = make_sim(cfg, ctl.kin, args.sim, args.world) if args.sim else (None, None)
    except ConfigError as exc:
        log.error("world_invalid", error=str(exc))
        return 2
    if args.bridge is not None:
        from controller.bridges.run import InProcessBridge
        try:
            sim = InProcessBridge(cfg, args.bridge)
        except ConfigError as exc:
            log.error("bridge_invalid", error=str(exc))
            return 2
    if args.sim is not None and sim_kind != args.sim:
        log.warning("sim_fallback", asked=args.sim, running=sim_kind,
                    reason=f"no physics model for {cfg.robot} yet")
    bus = Bus(cfg.lcm)
    runtime = Runtime(ctl, bus, sim=sim, max_ticks=args.ticks, notifier=Notifier.from_env())
    signal.signal(signal.SIGINT, runtime.request_stop)
    signal.signal(signal.SIGTERM, runtime.request_stop)
    log.info("start", version=__version__, config=str(cfg.path), robot=cfg.robot,
             sim=sim_kind, bridge=args.bridge, tick_hz=cfg.tick_hz, namespace=cfg.lcm.namespace or None,
             urls={name: cfg.lcm.url(name) for name in cfg.lcm.ports})
    if planner is not None:
        planner.wait_ready()
    # After everything is built, so the locked memory holds the whole heap.
    applied, refused = realtime.setup(cfg.realtime)
    if refused:
        log.warning("realtime_degraded", refused=refused, applied=applied,
                    hint="docs/GUIDE.md: Real-time priority")
    else:
        log.info("realtime", applied=applied)
    if planner is not None and cfg.realtime.priority > 1:
        refused_why = planner.set_priority(cfg.realtime.priority - 1)
        if refused_why is not None:
            log.warning("planner_priority_refused", priority=cfg.realtime.priority - 1, reason=refused_why,
                        effect="the MPC worker runs at the normal priority; plans may come late")
    try:
        return runtime.run()
    finally:
        if planner is not None:
            planner.close()
            log.info("planner", **planner.stats.summary(cfg.dt))


if __name__ == "__main__":
    sys.exit(main())
