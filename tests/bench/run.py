"""`make bench`: every benchmark in one run, a table on stdout and
bench/results.json. Runs under tests/netns.sh (the real-time part opens udpm
sockets); BENCH_SECONDS sets the length of each real-time run (default 60).
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE)]

import bridge_bench
import cli_bench
import gait_bench
import kernel_bench
import rt_bench
from stats import Target


def main() -> int:
    if os.environ.get("MOTIOND_NETNS") != "1":
        sys.exit("run.py opens udpm sockets: run it as `make bench` (inside tests/netns.sh)")
    started = time.time()
    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                           "python": platform.python_version(),
                                           "load_before": os.getloadavg()}}
    results["kernel"] = kernel_bench.measure()
    print("\n".join(kernel_bench.report(results["kernel"])), "\n", flush=True)
    results["gait"] = gait_bench.measure()
    print("\n".join(gait_bench.report(results["gait"])), "\n", flush=True)
    results["realtime"] = rt_bench.measure()
    print("\n".join(rt_bench.report(results["realtime"])), "\n")
    results["bridges"] = bridge_bench.measure()
    print("\n".join(bridge_bench.report(results["bridges"])), "\n")
    results["cli"] = cli_bench.measure()
    print("\n".join(cli_bench.report(results["cli"])), "\n")
    results["seconds"] = round(time.time() - started, 1)
    targets = [Target(**{k: v for k, v in t.items() if k != "passed"})
               for t in results["kernel"]["targets"] + results["realtime"]["targets"]]
    targets += bridge_bench.targets(results["bridges"])
    targets += cli_bench.targets(results["cli"])
    print("targets")
    for t in targets:
        print(t.row())
    out = ROOT / "bench" / "results.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nwrote {out.relative_to(ROOT)} ({results['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
