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
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "tests")]

import bridge_bench
import cli_bench
import gait_bench
import kernel_bench
import report
import rt_bench
from harness import stolen_s


def main() -> int:
    if os.environ.get("MOTIOND_NETNS") != "1":
        sys.exit("run.py opens udpm sockets: run it as `make bench` (inside tests/netns.sh)")
    started = time.time()
    stolen_before = stolen_s()
    machine = {"cpus": os.cpu_count(), "platform": platform.platform(),
               "python": platform.python_version(), "load_before": os.getloadavg()}
    results: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "machine": machine}
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
    # What the host of a virtual machine took from its CPUs meanwhile: no
    # daemon holds its deadlines through that (0 on bare metal).
    results["machine"]["stolen_s"] = round(stolen_s() - stolen_before, 1)
    print("targets")
    for t in report.targets(results):
        print(t.row())
    report.RESULTS.parent.mkdir(exist_ok=True)
    report.RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nwrote {report.RESULTS.relative_to(ROOT)} ({results['seconds']:.0f} s)")
    return report.main([])          # docs/PERFORMANCE.md's figures from it


if __name__ == "__main__":
    sys.exit(main())
