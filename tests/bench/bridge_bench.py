"""The robot bridges in `make bench` (issue 39 item 4): for each, motiond
with the bridge in its process against the robot's stand-in, for SECONDS:

* cyberdog2: `motionctl board-emulator` (CyberDog 2's board emulated in
  physics) on the robot's LCM; the robot stood up, then trotting at 0.3 m/s;
* unitree_go2: Unitree's own simulator (../shared/peers/unitree_mujoco,
  under Xvfb, from `make peers`' venv), it and motiond on a core each; the
  robot stood up, then trotting backward at 0.3 m/s.

Figures: the bridge's own time from a joint_cmd in to the robot's message
out (its bridge_status: p50/p99/max over the last 1000), for CyberDog 2 also
as a listener on both wires saw it (joint_cmd on motiond's joint port to the
same targets' motor_ctrl on the robot's); the rates both ways and the
joint_cmds the bridge did not forward while ACTIVE (its own count: a
listener here may miss packets on a loaded machine). Run under
tests/netns.sh only.
"""
from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent), str(ROOT / "tests")]

import lcm
from harness import stop_group
from stats import Target, quantiles_us

from controller import msgs
from controller.robot.config import load_config
from controller.robot.resources import CONFIG_DIR, DATA_ROOT

SECONDS = float(os.environ.get("BENCH_SECONDS", "60"))
FORWARD_P99_US = 300.0          # issue 39: the bridge adds at most 0.3 ms p99
PEER = (DATA_ROOT / "../shared/peers/unitree_mujoco/simulate_python").resolve()
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"
ACTIVE = msgs.bridge_status_t.ACTIVE


def _start(args: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


class Wires:
    """This process's ears on motiond's joint port and (CyberDog 2) the
    robot's: receipt times, the bridge's last status, a client's commands."""

    def __init__(self, cfg: Any, robot_url: str | None) -> None:
        self.cfg = cfg
        ch = cfg.lcm.channels
        self.ch = ch
        self.cmd = lcm.LCM(cfg.lcm.url("command"))
        self.joint = lcm.LCM(cfg.lcm.url("joint") + "&recv_buf_size=4194304")
        self.joint.subscribe(ch["joint_cmd"], self._on_joint_cmd)
        self.joint.subscribe(ch["bridge_status"], self._on_status)
        self.robot = None
        if robot_url is not None:
            self.robot = lcm.LCM(robot_url + "&recv_buf_size=4194304")
            self.robot.subscribe("motor_ctrl", self._on_motor_ctrl)
            self.robot.subscribe("spi_data", self._on_spi)
        self.status: msgs.bridge_status_t | None = None
        self.counting = False
        self.joint_cmds = 0
        self.states = 0
        self.pending: dict[bytes, deque[int]] = defaultdict(deque)
        self.latency_ns: list[int] = []
        self.life_count = 0
        self.last: bytes | None = None

    def _on_joint_cmd(self, _c: str, data: bytes) -> None:
        if self.counting and self.status is not None and self.status.state == ACTIVE:
            self.joint_cmds += 1
            if self.robot is not None:     # the targets: position, velocity, kp, kd, torque
                self.pending[data[26:26 + 240]].append(time.monotonic_ns())

    def _on_motor_ctrl(self, _c: str, data: bytes) -> None:
        sent = self.pending.get(data[8:8 + 240])
        if sent:
            self.latency_ns.append(time.monotonic_ns() - sent.popleft())

    def _on_spi(self, _c: str, _d: bytes) -> None:
        if self.counting:
            self.states += 1

    def _on_status(self, _c: str, data: bytes) -> None:
        self.status = msgs.bridge_status_t.decode(data)

    def spin(self, seconds: float, heartbeat: bool = True) -> None:
        insts = [i for i in (self.joint, self.robot) if i is not None]
        fds = {i.fileno(): i for i in insts}
        end = time.monotonic() + seconds
        beat = 0.0
        while (now := time.monotonic()) < end:
            if heartbeat and self.last is not None and now >= beat:
                self.cmd.publish(self.ch["command"], self.last)
                beat = now + 0.1
            ready, _, _ = select.select(list(fds), [], [], 0.01)
            for fd in ready:
                fds[fd].handle()

    def send(self, mode: int, gait: int = 0, vel: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
        self.life_count += 1
        m = msgs.robot_control_cmd_lcmt()
        m.mode, m.gait_id, m.life_count = mode, gait, self.life_count % 128
        m.vel_des, m.step_height = list(vel), [0.06, 0.06]
        self.last = m.encode()
        self.cmd.publish(self.ch["command"], self.last)

    def wait_active(self, seconds: float) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.spin(0.1, heartbeat=False)
            if self.status is not None and self.status.state == ACTIVE:
                return True
        return False


def _pin(core: int) -> list[str]:
    taskset = shutil.which("taskset")
    return [taskset, "-c", str(core)] if taskset and (os.cpu_count() or 1) >= 2 else []


def _run(name: str, config: Path, robot_url: str | None, trot_vx: float, extra: list[subprocess.Popen[bytes]],
         pin: list[str] | None = None) -> dict[str, Any]:
    cfg = load_config(config)
    daemon = _start([*(pin or []), sys.executable, "-m", "controller.cli.motiond", "--config", str(config),
                     "--bridge", name])
    wires = Wires(cfg, robot_url)
    try:
        if not wires.wait_active(90.0):        # a first start of Unitree's simulator in a new venv is slow
            return {"error": f"the bridge did not become ACTIVE ({wires.status and wires.status.reason})"}
        wires.send(12)
        wires.spin(4.0)
        wires.send(11, 3, (trot_vx, 0.0, 0.0))
        wires.spin(1.0)
        first = wires.status
        assert first is not None
        wires.counting = True
        started = time.monotonic()
        wires.spin(SECONDS)
        elapsed = time.monotonic() - started
        wires.counting = False
        wires.spin(0.3, heartbeat=False)     # the last status, with the counters
        last = wires.status
        assert last is not None
        sent = last.commands_sent - first.commands_sent
        # The robot's state messages: spi_data as heard here (CyberDog 2 sends
        # three kinds a tick), or the Go2's LowState_ as the bridge took them.
        states = wires.states if robot_url is not None else last.states_received - first.states_received
        result: dict[str, Any] = {
            "seconds": round(elapsed, 1),
            "state": int(last.state), "reason": last.reason,
            "joint_cmd_hz": (sent + last.commands_dropped - first.commands_dropped) / elapsed,
            "robot_command_hz": sent / elapsed,
            "robot_state_hz": states / elapsed,
            "heard_joint_cmd": wires.joint_cmds,
            "not_forwarded": last.commands_dropped - first.commands_dropped,
            "stale_events": last.stale_events - first.stale_events,
            "forward_us": {"p50": last.forward_p50_us, "p99": last.forward_p99_us, "max": last.forward_max_us},
        }
        if robot_url is not None:
            result["wire_latency_us"] = quantiles_us(wires.latency_ns)
        return result
    finally:
        stop_group(daemon)
        for proc in extra:
            stop_group(proc)


def measure() -> dict[str, Any]:
    results: dict[str, Any] = {}
    cd2 = CONFIG_DIR / "cyberdog2_robot.yaml"
    board = _start([sys.executable, "-m", "controller.cli.motionctl", "--config", str(cd2), "board-emulator"])
    results["cyberdog2"] = _run("cyberdog2", cd2, load_config(cd2).bridge.url("robot"), 0.3, [board])
    xvfb = shutil.which("xvfb-run")
    if not (PEER.is_dir() and PEERS_PYTHON.is_file() and xvfb):
        results["unitree_go2"] = {"error": "Unitree's simulator, `make peers` or xvfb-run is missing"}
        return results
    # A core each for the simulator and motiond (config/go2_unitree_sim.yaml);
    # trotting backward, away from the obstacles its scene has ahead.
    sim = _start([*_pin(1), xvfb, "-a", "-s", "-screen 0 400x300x24", str(PEERS_PYTHON), "unitree_mujoco.py"],
                 cwd=PEER, env={**os.environ, "LP_NUM_THREADS": "1"})
    results["unitree_go2"] = _run("unitree_go2", CONFIG_DIR / "go2_unitree_sim.yaml", None, -0.3, [sim], _pin(0))
    return results


def report(r: dict[str, Any]) -> list[str]:
    lines = [f"robot bridges, {SECONDS:g} s each (in motiond's process)"]
    for name, m in r.items():
        if "error" in m:
            lines.append(f"  {name:12s} not measured: {m['error']}")
            continue
        f = m["forward_us"]
        line = (f"  {name:12s} joint_cmd {m['joint_cmd_hz']:.0f} Hz -> robot {m['robot_command_hz']:.0f} Hz, "
                f"robot state {m['robot_state_hz']:.0f} Hz; not forwarded {m['not_forwarded']}, "
                f"stale {m['stale_events']}; bridge time p50 {f['p50']:.0f} p99 {f['p99']:.0f} "
                f"max {f['max']:.0f} us")
        if "wire_latency_us" in m:
            w = m["wire_latency_us"]
            line += f"; on the wire p50 {w['p50']:.0f} p99 {w['p99']:.0f} max {w['max']:.0f} us"
        lines.append(line)
    return lines


def targets(r: dict[str, Any]) -> list[Target]:
    out = []
    for name, m in r.items():
        if "error" in m:
            continue
        out.append(Target(f"{name} bridge time p99 (joint_cmd to robot)", m["forward_us"]["p99"],
                          FORWARD_P99_US, "us"))
        out.append(Target(f"{name} joint_cmd not forwarded while ACTIVE", float(m["not_forwarded"]), 0.0, ""))
    return out


if __name__ == "__main__":
    if os.environ.get("MOTIOND_NETNS") != "1":
        sys.exit("bridge_bench.py opens sockets: run it under tests/netns.sh")
    result = measure()
    print("\n".join(report(result)))
    for t in targets(result):
        print(t.row())
