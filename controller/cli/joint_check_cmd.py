"""`motionctl joint-check JOINT`: before the first stiff command on a real
robot, move one joint a few degrees at a low gain through motiond's mode 15
(motor_ctrl) and read it back (docs/REAL_ROBOT.md "Before the first stand").

It asks motiond for mode 15 with all-zero frames (the entry wait, SPEC §6.9),
then, the other joints limp with a little damping, eases JOINT from where it
is by --degrees (in motiond's joint convention) and back, and reports what
joint_state said: the motion's sign and size against the command, what the
robot should have done (so you can see whether the joint turned the way
motiond's kinematics expect: the readback cannot tell, as command and reading
cross the same joint map), and the other joints' largest motion. Then it
stops sending: 500 ms later motiond's motor_ctrl rule damps the robot.
Hang the robot up first: its legs must be free."""
from __future__ import annotations

import argparse
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from controller.cli.client import EXIT_CODES_HELP, Formatter, finite_float
from controller.cli.commands import summary
from controller.robot.config import Config

DESCRIPTION = __doc__.split("\n\n", 1)[1] if __doc__ else ""
ENTRY_S = 3.0               # all-zero frames at least: the entry wait is 1250 ticks (2.5 s at 500 Hz) ...
ENTRY_PATIENCE_S = 10.0     # ... and on until motiond says it is over, for at most this long
RATE_HZ = 500.0
OTHER_KD = 0.3              # N m s/rad on the joints not being checked
MOVED_SHARE = 0.3           # a joint that moved less than this share of the command did not move
ERR_LOST = 1 << 1           # motor_ctrl_state bit1: the entry wait or a lost stream

# What a positive motion of each joint type does in motiond's convention
# (controller/robot/kinematics.py): abad about +x, hip about -y, knee about -y.
EXPECTED = {"abad": ("the foot swings to the robot's left", "the foot swings to the robot's right"),
            "hip": ("the foot swings forward", "the foot swings back"),
            "knee": ("the knee bends more: the foot comes back and up",
                     "the knee straightens: the foot goes forward and down")}


@dataclass
class Verdict:
    ok: bool
    lines: list[str]


def judge(name: str, commanded: float, before: float, peak: float, others: float) -> Verdict:
    """What the readings say about one joint's check (radians, motiond's convention)."""
    moved = peak - before
    kind = name.split("_", 1)[-1]
    sign = 1 if commanded > 0 else -1
    expect = EXPECTED.get(kind)
    lines = [f"{name}: at rest {before:+.3f} rad; commanded {math.degrees(commanded):+.1f} deg, "
             f"measured {math.degrees(moved):+.1f} deg",
             f"others: at most {math.degrees(others):.1f} deg of motion"]
    if expect is not None:
        lines.append(f"you should have seen: {expect[0] if sign > 0 else expect[1]}; if it went "
                     "the other way, this joint's joint_map direction is wrong "
                     "(docs/NEW_ROBOT.md \"The joint map\")")
    if abs(moved) < MOVED_SHARE * abs(commanded):
        lines.append("FAIL: it barely moved: check the motor and its driver, that the legs hang "
                     "free, or raise --kp")
        return Verdict(False, lines)
    if moved * commanded < 0:
        lines.append("FAIL: the reading moved against the command: the motor and its encoder "
                     "disagree, or the bridge turns one of them")
        return Verdict(False, lines)
    lines.append("OK: the reading follows the command")
    return Verdict(True, lines)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "joint-check", help=summary("joint-check"),
        description=DESCRIPTION, epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    p.add_argument("joint", help="a joint name of the config, e.g. FR_knee")
    p.add_argument("--degrees", type=finite_float, default=5.0,
                   help="how far to move it, in motiond's convention (default: %(default)s; at most 8)")
    p.add_argument("--kp", type=finite_float, default=5.0, help="N m/rad on the joint (default: %(default)s)")
    p.add_argument("--kd", type=finite_float, default=0.3, help="N m s/rad on the joint (default: %(default)s)")
    p.add_argument("--seconds", type=finite_float, default=1.0,
                   help="the move out, and again back (default: %(default)s)")
    p.set_defaults(func=run)
    return p


class Listener:
    def __init__(self, cfg: Config) -> None:
        import lcm

        from controller import msgs
        self.msgs = msgs
        self.lc = lcm.LCM(cfg.lcm.url("joint"))
        ch = cfg.lcm.channels
        self.lc.subscribe(ch["joint_state"], self._on_state)
        self.lc.subscribe(ch["motor_ctrl_state"], self._on_motor)
        self.q: np.ndarray | None = None
        self.err_flag: int | None = None
        self.lock = threading.Lock()
        self.running = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        while self.running:
            self.lc.handle_timeout(20)

    def _on_state(self, _ch: str, data: bytes) -> None:
        m = self.msgs.joint_state_t.decode(data)
        with self.lock:
            self.q = np.array(m.position, dtype=float)

    def _on_motor(self, _ch: str, data: bytes) -> None:
        self.err_flag = int(self.msgs.motor_ctrl_state_lcmt.decode(data).err_flag)

    def position(self) -> np.ndarray | None:
        with self.lock:
            return None if self.q is None else self.q.copy()


def run(args: argparse.Namespace, cfg: Config) -> int:
    from controller import msgs
    if args.joint not in cfg.joint_names:
        print(f"motionctl: joint-check: {args.joint!r} is not a joint of {cfg.robot} "
              f"({', '.join(cfg.joint_names)})")
        return 2
    if not 0 < abs(args.degrees) <= 8.0:
        print("motionctl: joint-check: --degrees must be within 8 degrees either way, not 0 "
              "(mode 15 clamps a target 8-12 degrees from the measured angle)")
        return 2
    if cfg.motor_ctrl_mutation_limit is None:
        print(f"motionctl: joint-check: {cfg.robot} has no mode 15 (no motor_ctrl section)")
        return 2
    jm = cfg.joint_map
    slot = jm.wire_names.index(args.joint)         # where it is on the wire
    direction = float(jm.direction_wire[slot])
    listen = Listener(cfg)
    try:
        return _check(args, cfg, listen, slot, direction, msgs)
    finally:
        listen.running = False
        listen.thread.join(timeout=1)


def _check(args: argparse.Namespace, cfg: Config, listen: Listener, slot: int, direction: float,
           msgs: Any) -> int:
    end = time.monotonic() + 5.0
    while listen.position() is None:
        if time.monotonic() > end:
            print("motionctl: joint-check: no joint_state from motiond in 5 s: is it running, "
                  "with its bridge ACTIVE (motionctl watch)?")
            return 1
        time.sleep(0.02)
    n = cfg.num_joints
    frame = msgs.motor_ctrl_lcmt()
    channel = cfg.lcm.channels["motor_ctrl"]
    period = 1.0 / RATE_HZ

    def send_for(seconds: float, make: Any, until: Any = None) -> None:
        """Frames at RATE_HZ for `seconds`, or with `until`, on after them
        until it is true (at most ENTRY_PATIENCE_S in all)."""
        start = time.monotonic()
        tick = start
        while (now := time.monotonic()) - start < seconds or (
                until is not None and not until() and now - start < ENTRY_PATIENCE_S):
            make(now - start)
            listen.lc.publish(channel, frame.encode())
            tick += period
            time.sleep(max(0.0, tick - time.monotonic()))

    zeros = [0.0] * 12

    def zero(_t: float) -> None:
        frame.q_des = frame.qd_des = frame.kp_des = frame.kd_des = frame.tau_des = zeros

    first = listen.position()
    assert first is not None
    joint = cfg.joint_names.index(args.joint)
    at = float(cfg.joint_map.positions_from_wire(first)[joint])     # motiond's convention
    lo = float(cfg.q_min[joint]) + cfg.motor_ctrl_limit_margin
    hi = float(cfg.q_max[joint]) - cfg.motor_ctrl_limit_margin
    goal = at + math.radians(args.degrees)
    if not lo <= goal <= hi:
        print(f"motionctl: joint-check: {args.joint} is at {at:+.3f} rad; {args.degrees:+g} deg "
              f"would take it past its limit ({lo:+.3f} .. {hi:+.3f} rad, mode 15's margin in): "
              f"move it the other way (--degrees {-args.degrees:g})")
        return 2
    print(f"asking motiond for mode 15 (all-zero frames for {ENTRY_S:g} s, or until its entry wait is over) ...")
    # The entry wait is counted in motiond's ticks: a computer that runs them
    # late takes longer than 2.5 s of the clock, so the frames go on until
    # motor_ctrl_state clears the bit.
    send_for(ENTRY_S, zero, until=lambda: listen.err_flag is not None and not listen.err_flag & ERR_LOST)
    if listen.err_flag is None or listen.err_flag & ERR_LOST:
        print(f"motionctl: joint-check: motiond did not take motor_ctrl in {ENTRY_PATIENCE_S:g} s "
              f"(motor_ctrl_state {'never came' if listen.err_flag is None else f'err_flag 0x{listen.err_flag:x}'}): "
              "is another source commanding it?")
        return 1
    rest = listen.position()
    assert rest is not None
    wire_delta = direction * math.radians(args.degrees)   # motiond's convention to the wire's
    kp = [0.0] * 12
    kd = [OTHER_KD] * 12
    kp[slot], kd[slot] = args.kp, args.kd
    peak = rest.copy()
    others = 0.0
    leg_slots = [k for k in range(min(n, 12))]

    def ease(t: float, out: bool) -> None:
        nonlocal peak, others
        s = min(1.0, t / args.seconds)
        share = 0.5 - 0.5 * math.cos(math.pi * s)
        q = rest[:12].copy()
        q[slot] += wire_delta * (share if out else 1.0 - share)
        frame.q_des = q.tolist()
        frame.qd_des = frame.tau_des = zeros
        frame.kp_des, frame.kd_des = kp, kd
        now_q = listen.position()
        if now_q is not None and out:
            if abs(now_q[slot] - rest[slot]) > abs(peak[slot] - rest[slot]):
                peak = now_q
            moved = [abs(now_q[k] - rest[k]) for k in leg_slots if k != slot]
            others = max([others] + moved)

    print(f"moving {args.joint} by {args.degrees:+g} deg at kp {args.kp:g} and back ...")
    send_for(args.seconds + 0.5, lambda t: ease(t, True))
    send_for(args.seconds, lambda t: ease(t, False))
    send_for(0.2, zero)
    # Readings back in motiond's convention (through the joint map).
    jm = cfg.joint_map
    verdict = judge(args.joint, math.radians(args.degrees), float(jm.positions_from_wire(rest)[joint]),
                    float(jm.positions_from_wire(peak)[joint]), others)
    for line in verdict.lines:
        print(line)
    return 0 if verdict.ok else 1
