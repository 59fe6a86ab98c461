"""In-process test rig: the controller and the simulated robot on a fake clock.

No sockets and no sleeping: each `run` steps the controller tick by tick,
feeding it the sim's joint_state and the packets a test queued, exactly as the
runtime does, and records every response and joint command. The robot is the
MuJoCo physics body, as with `motiond --sim`; `Rig(sim="joint")` asks for
the joint-space sim, and a test that does says why.
"""
from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from controller import msgs
from controller.core.controller import Controller, Outbox
from controller.robot.config import load_config
from controller.service.runtime import SENSORS
from controller.sim.joint_sim import SimRobot
from controller.sim.physics import PhysicsRobot
from controller.sim.robot import PHYSICS, make_sim

TICK_NS = 2_000_000


@dataclass
class Response:
    tick: int
    t_ns: int
    mode: int
    gait_id: int
    switch_status: int
    bar: int
    contact: int


def command(mode: int, gait_id: int = 0, life_count: int = 0, duration: int = 0,
            **fields: Any) -> msgs.robot_control_cmd_lcmt:
    msg = msgs.robot_control_cmd_lcmt()
    msg.mode, msg.gait_id, msg.life_count, msg.duration = mode, gait_id, life_count, duration
    for name, value in fields.items():
        current = getattr(msg, name)
        if isinstance(current, list):
            value = list(value) + [0.0] * (len(current) - len(value))
        setattr(msg, name, value)
    return msg


@dataclass
class Rig:
    config_path: str | None = None
    # The simulated robot: True or "physics" the MuJoCo body (the joint-space
    # sim for a robot without a physics model), "joint" the joint-space sim,
    # False none.
    sim: bool | str = True
    now_ns: int = 1_000_000_000
    responses: list[Response] = field(default_factory=list)
    joint_cmds: list[msgs.joint_command_t] = field(default_factory=list)
    record_joints: bool = False
    life_count: int = 0
    # Config fields replaced after loading, e.g. {"command_queue_capacity": 8}.
    overrides: dict[str, Any] = field(default_factory=dict)
    # False: the sim keeps moving but its joint_state no longer reaches the
    # controller (a robot bridge that stopped publishing).
    feed_joint_state: bool = True
    # False: the sim's imu no longer reaches the controller (an IMU that died).
    feed_imu: bool = True

    def __post_init__(self) -> None:
        self.cfg = replace(load_config(self.config_path), **self.overrides)
        self.ctl = Controller(self.cfg)
        self.robot: SimRobot | PhysicsRobot | None = None
        if self.sim:
            kind = PHYSICS if self.sim is True else str(self.sim)
            robot, _ = make_sim(self.cfg, self.ctl.kin, kind)
            assert isinstance(robot, (SimRobot, PhysicsRobot))
            self.robot = robot
        self.pending: list[tuple[str, bytes]] = []
        self.heartbeat_msg: msgs.robot_control_cmd_lcmt | None = None
        self.last_out: Outbox | None = None
        self.last_good_cmd: bytes | None = None   # the last joint_cmd the sim's bridge took
        self.refused_cmds = 0                     # joint_cmds it refused

    @property
    def ch(self) -> dict[str, str]:
        return self.cfg.lcm.channels

    # -- input --------------------------------------------------------------------
    def send(self, mode: int, gait_id: int = 0, duration: int = 0, **fields: Any) -> msgs.robot_control_cmd_lcmt:
        """Queue a command with a fresh life_count for the next tick; it also
        becomes the message heart-beaten by run(heartbeat=True)."""
        self.life_count = (self.life_count + 1) % 128
        msg = command(mode, gait_id, self.life_count, duration, **fields)
        self.pending.append((self.ch["command"], msg.encode()))
        self.heartbeat_msg = msg
        return msg

    def raw(self, channel: str, data: bytes) -> None:
        self.pending.append((channel, data))

    # -- time -------------------------------------------------------------------------
    def tick(self, heartbeat: bool = False) -> None:
        inbox = self.pending
        self.pending = []
        if heartbeat and self.heartbeat_msg is not None and not any(
                ch == self.ch["command"] for ch, _ in inbox):
            inbox.append((self.ch["command"], self.heartbeat_msg.encode()))
        if self.robot is not None and self.feed_joint_state:
            # The sim's sensors (joint_state, and the physics body's imu), as
            # the runtime feeds them; sim_state is ground truth, never fed.
            sensors = [(self.ch[key], data) for key, data in self.robot.messages(self.now_ns // 1000, truth=False)
                       if key in SENSORS and (self.feed_imu or key != "imu")]
            inbox[:0] = sensors
        tick = self.ctl.tick
        out = self.ctl.step(self.now_ns, inbox)
        for _, channel, data in out.messages:
            if channel == self.ch["response"]:
                r = msgs.robot_control_response_lcmt.decode(data)
                self.responses.append(Response(tick, self.now_ns, r.mode, r.gait_id,
                                               r.switch_status, r.order_process_bar, r.contact))
            elif channel == self.ch["joint_cmd"] and self.record_joints:
                self.joint_cmds.append(msgs.joint_command_t.decode(data))
        self.last_out = out
        if self.robot is not None:
            # The joint_cmd as the robot's bridge gets it (its joint convention).
            # A joint_cmd the bridge refuses (a test that breaks the tick on
            # purpose) leaves the robot under the last good one, as
            # controller/service/sim_process.py does; it is counted.
            joint_cmd = out.get(self.ch["joint_cmd"])
            assert joint_cmd is not None, "the controller publishes a joint_cmd every tick"
            try:
                self.robot.command(bytes(joint_cmd))
                self.last_good_cmd = bytes(joint_cmd)
            except ValueError:
                self.refused_cmds += 1
                if self.last_good_cmd is not None:
                    self.robot.command(self.last_good_cmd)
        self.now_ns += TICK_NS

    def run(self, ms: float, heartbeat: bool = True) -> None:
        """Advance `ms` of robot time, heart-beating every 100 ms when asked."""
        ticks = int(round(ms / 2))
        for _ in range(ticks):
            self.tick(heartbeat=heartbeat and self.ctl.tick % 50 == 0)

    def run_until(self, predicate: Callable[[Rig], bool], max_ms: float, heartbeat: bool = True) -> float:
        """Run until predicate(rig) holds; return the robot time it took (ms)."""
        start = self.now_ns
        for _ in range(int(max_ms / 2)):
            self.tick(heartbeat=heartbeat and self.ctl.tick % 50 == 0)
            if predicate(self):
                return (self.now_ns - start) / 1e6
        raise AssertionError(f"condition not met within {max_ms} ms; last response "
                             f"{self.responses[-1] if self.responses else None}")

    # -- observation ---------------------------------------------------------------
    @property
    def last(self) -> Response:
        return self.responses[-1]

    @property
    def mode(self) -> int:
        return self.ctl.fsm.mode

    def body_height(self) -> float:
        q = self.robot.q if self.robot is not None else self.ctl.q
        return self.ctl.robot.body_height(np.asarray(q))

    def stand(self) -> None:
        """Stand up from the start pose and wait for progress 100."""
        self.run(20)
        self.send(12)
        self.run_until(lambda r: r.last.mode == 12 and r.last.bar == 100, 5000)


def pin(core: int) -> list[str]:
    """taskset onto one core, on a machine with two or more (else nothing):
    for a test that stands in for a robot's own computer with a process of
    its own (a board, a maker's simulator), which on the robot never shares
    motiond's core."""
    taskset = shutil.which("taskset")
    return [taskset, "-c", str(core)] if taskset and (os.cpu_count() or 1) >= 2 else []


def idle_software_renderer(session: int, wait_s: float = 15.0) -> int:
    """Put the software renderer's threads (Mesa llvmpipe's, named
    llvmpipe-N) of the processes in `session` on SCHED_IDLE, once they exist
    (waited for at most wait_s), and return how many. For a maker's simulator
    that draws its viewer on a virtual screen: its render loop draws as fast
    as it can and, on a small host, took 45-65 % of the simulator's core from
    its physics and its state publisher (Unitree's: LowState_ at 160 Hz for
    its 200, gaps of 100 ms). Idle, it draws with what is left. The
    simulator's code is not touched; only the scheduler is told."""
    end = time.monotonic() + wait_s
    done: set[int] = set()
    while True:
        for task in glob.glob("/proc/[0-9]*/task/[0-9]*"):
            tid = int(task.rsplit("/", 1)[1])
            if tid in done:
                continue
            try:
                with open(f"{task}/comm") as f:
                    if not f.read().startswith("llvmpipe"):
                        continue
                with open(f"{task}/stat") as f:
                    sid = int(f.read().rsplit(")", 1)[1].split()[3])
                if sid == session:
                    os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
                    done.add(tid)
            except (OSError, ValueError, IndexError):
                continue             # the thread ended, or is not ours
        if done or time.monotonic() >= end:
            return len(done)
        time.sleep(0.1)


def stolen_s() -> float:
    """CPU time the host has taken from this virtual machine so far (the
    `steal` column of /proc/stat, all CPUs, in seconds; 0 on bare metal).

    A real-clock test on a shared host subtracts what the host stole in its
    window before it applies a rate bound, counting all of it against the
    daemon's CPU (the most it can have cost the daemon): a daemon that is
    slow on its own still fails, a host that stole a tenth of the time does
    not fail the daemon."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    ticks_per_s = os.sysconf("SC_CLK_TCK")
    return int(fields[8]) / ticks_per_s if len(fields) > 8 else 0.0


def stop_group(proc: subprocess.Popen[Any]) -> None:
    """End a process started with start_new_session=True and everything it
    started (xvfb-run's Xvfb, say): SIGTERM to its group, SIGKILL after 10 s."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
