"""`make soak`: SOAK_SECONDS (default 600) of random commands with faults
injected, against the daemon with the sim as a separate bridge process.
Opens udpm sockets: run it only under tests/netns.sh.

Every second: the daemon's RSS (VmRSS). Throughout: every tick's lateness
from tick_trace. At the end: the daemon's log. Faults, at random moments:
the bridge frozen (SIGSTOP) for 60-300 ms (joint_state stops), the client
silent past the 500 ms timeout, bursts of a 5 kHz flood, random bytes and
truncated packets on every inbound channel, wild but well-formed commands
(any mode and gait id, huge, negative and NaN floats).

Pass: RSS grows less than 5 % from the end of the warm-up (the first tenth
of the run, counted from the daemon's first tick) to the end, no tick is
more than 2 ms late (the bench target), and the log holds no error (no
internal_error, no exception).
"""
from __future__ import annotations

import json
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE)]

import lcm
from rt_bench import MISSED_NS, daemon_with_bridge

from controller import msgs
from controller.robot.config import load_config

SECONDS = float(os.environ.get("SOAK_SECONDS", "600"))
RSS_GROWTH_LIMIT = 0.05
SEED = int(os.environ.get("SOAK_SEED", "7"))
MODES = (0, 1, 3, 7, 11, 12, 15, 16, 21, 22, 62, 64, 99, 255, -1)
FLOATS = (0.0, 0.1, -0.3, 1.0, 5.0, -50.0, 1e9, float("nan"), float("inf"))


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def wild_command(rng: random.Random, life_count: int) -> bytes:
    m = msgs.robot_control_cmd_lcmt()
    m.mode = rng.choice(MODES) & 0xFF if rng.random() < 0.3 else rng.choice((11, 12, 21, 62, 7))
    m.mode = m.mode - 256 if m.mode > 127 else m.mode       # int8 on the wire
    m.gait_id = rng.choice((0, 1, 3, 5, 9, 26, 27, 31, 110, 77))
    m.life_count = life_count
    m.duration = rng.choice((0, 0, 200, 1000, 3000))
    pick = (lambda: rng.choice(FLOATS)) if rng.random() < 0.1 else (lambda: rng.uniform(-0.5, 0.5))
    m.vel_des = [pick(), pick(), pick()]
    m.rpy_des = [pick(), pick(), pick()]
    m.pos_des = [pick(), pick(), pick()]
    m.step_height = [abs(pick()), abs(pick())]
    m.value = rng.randrange(0, 4)
    return m.encode()


def main(seconds: float = SECONDS, seed: int = SEED) -> dict:
    rng = random.Random(seed)
    cfg = load_config()
    ch = cfg.lcm.channels
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "motiond.log"
        with daemon_with_bridge(cfg, log) as run:
            daemon, bridge, client = run.proc, run.bridge, run.client
            assert bridge is not None            # the soak freezes the bridge process
            joint = lcm.LCM(cfg.lcm.url("joint"))      # garbage on the joint port's inputs
            rss: list[tuple[float, int]] = []
            faults = {"bridge_frozen": 0, "silences": 0, "floods": 0, "garbage": 0, "commands": 0}
            start = time.monotonic()
            next_sample = start
            data = wild_command(rng, 1)
            life = 1
            while time.monotonic() - start < seconds:
                now = time.monotonic()
                if now >= next_sample:
                    rss.append((now - start, rss_kb(daemon.pid)))
                    next_sample += 1.0
                r = rng.random()
                if r < 0.002:                                 # freeze the bridge
                    bridge.send_signal(signal.SIGSTOP)
                    time.sleep(rng.uniform(0.06, 0.3))
                    bridge.send_signal(signal.SIGCONT)
                    faults["bridge_frozen"] += 1
                elif r < 0.004:                               # the client goes quiet
                    time.sleep(rng.uniform(0.55, 1.2))
                    faults["silences"] += 1
                elif r < 0.005:                               # a 5 kHz burst of 1 s
                    end = time.monotonic() + 1.0
                    while time.monotonic() < end:
                        client.send(data)
                        time.sleep(0.0002)
                    faults["floods"] += 1
                elif r < 0.05:                                # garbage on a random channel
                    junk = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
                    port = "joint" if rng.random() < 0.3 else "command"
                    name = rng.choice(("motor_ctrl", "joint_state")) if port == "joint" else \
                        rng.choice(("command", "user_gait_file", "motion_goal", "script_request"))
                    (client.command_lcm if port == "command" else joint).publish(ch[name], junk)
                    faults["garbage"] += 1
                elif r < 0.15:                                # a new command
                    life = (life + 1) % 128
                    data = wild_command(rng, life)
                    client.send(data)
                    faults["commands"] += 1
                else:                                         # the heartbeat
                    client.send(data)
                time.sleep(0.01)
        events = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    traces = client.seen.traces
    late = [t[2] for t in traces]
    warm = max(1, len(rss) // 10)
    base = rss[warm - 1][1] if rss else 0
    errors = [e for e in events if e.get("level") in ("error", "critical")]
    result: dict[str, Any] = {
        "seconds": seconds, "seed": seed, "faults": faults, "exit_code": run.exit_code,
        "rss_kb": {"after_warmup": base, "end": rss[-1][1] if rss else 0,
                   "max": max(v for _, v in rss) if rss else 0, "samples": len(rss)},
        "rss_growth": (rss[-1][1] - base) / base if base else float("inf"),
        "ticks": len(traces), "missed_ticks": sum(1 for x in late if x > MISSED_NS),
        "max_lateness_us": max(late) / 1e3 if late else None,
        "errors": [e.get("event") for e in errors][:10],
        "events": {k: sum(1 for e in events if e.get("event") == k) for k in
                   ("mode_change", "mode_refused", "packet_rejected", "command_timeout",
                    "tick_overrun", "internal_error")},
    }
    result["passed"] = (result["rss_growth"] < RSS_GROWTH_LIMIT and result["missed_ticks"] == 0
                        and not errors and run.exit_code == 0)
    return result


if __name__ == "__main__":
    if os.environ.get("MOTIOND_NETNS") != "1":
        sys.exit("soak.py opens udpm sockets: run it as `make soak` (inside tests/netns.sh)")
    r = main()
    print(json.dumps(r, indent=1))
    out = ROOT / "bench" / "soak.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(r, indent=1) + "\n")
    print(("PASS" if r["passed"] else "FAIL") +
          f": RSS {r['rss_kb']['after_warmup']} -> {r['rss_kb']['end']} kB "
          f"({100 * r['rss_growth']:+.2f} %, limit +5 %), missed ticks {r['missed_ticks']}, "
          f"errors logged {len(r['errors'])}, exit {r['exit_code']}")
    sys.exit(0 if r["passed"] else 1)
