"""How the scorecard's wall time scales with its workers (issue 43): the
same rows on 1..N local processes and on a one-node Ray cluster of 1..N
CPUs (N: this machine's cores), each run timed whole (start-up included).
A table on stdout and bench/physics_scaling.json.

    OPENBLAS_NUM_THREADS=1 tests/netns.sh .venv/bin/python tests/bench/physics_scaling.py [--rows PATTERN ...]

Ray's head runs on the namespace's loopback (tests/netns.sh: no packet
leaves the machine)."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_ray_cluster import free_port, kill_session  # noqa: E402

# A cross-section of CyberDog 2's card (no [variant] rows): a stand, the
# trots, pushes, motions, payloads: some 22 rows of 3-15 s each.
DEFAULT_ROWS = ["stand up (12)", "trot (11/3) *", "push*", "motion (62/1?)", "*payload*"]


def scorecard(args: list[str], out: Path) -> tuple[float, dict]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "controller.sim.scorecard", *args, "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"scorecard {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return wall, json.loads(out.read_text())


def ray_head(cpus: int, tmp: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    log = Path(tmp) / f"head{cpus}.log"
    head = subprocess.Popen([str(Path(sys.executable).with_name("ray")), "start", "--head", "--block",
                             "--num-cpus", str(cpus), "--node-ip-address", "127.0.0.1", "--port", str(port),
                             "--temp-dir", tmp, "--include-dashboard", "false", "--disable-usage-stats"],
                            stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while "Ray runtime started" not in log.read_text():
        if head.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the Ray head did not start: {log.read_text()}")
        time.sleep(0.5)
    return head, f"127.0.0.1:{port}"


def main() -> int:
    if os.environ.get("MOTIOND_NETNS") != "1":
        sys.exit("physics_scaling.py starts a Ray head: run it inside tests/netns.sh")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", action="append", help="a row pattern (default: a cross-section of the card)")
    p.add_argument("--robot", default="cyberdog2")
    p.add_argument("-o", "--output", default=str(ROOT / "bench" / "physics_scaling.json"))
    args = p.parse_args()
    rows = args.rows or DEFAULT_ROWS
    select = ["--robot", args.robot, *[a for r in rows for a in ("--only", r)]]
    cores = len(os.sched_getaffinity(0))
    runs = []
    with tempfile.TemporaryDirectory(prefix="ray", dir="/tmp") as tmp:
        for n in range(1, cores + 1):
            wall, res = scorecard([*select, "--jobs", str(n)], Path(tmp) / f"local{n}.json")
            runs.append({"where": "local", "workers": n, "wall_s": round(wall, 1), "rows": res["total"],
                         "passed": res["passed"], "row_s": sum(r["wall_s"] for r in res["rows"])})
            print(f"local {n}: {wall:.1f} s, {res['total']} rows", flush=True)
            head, address = ray_head(n, tmp)
            try:
                wall, res = scorecard([*select, "--ray", address], Path(tmp) / f"ray{n}.json")
            finally:
                kill_session(head.pid)
                head.wait(10)
            runs.append({"where": "ray", "workers": n, "wall_s": round(wall, 1), "rows": res["total"],
                         "passed": res["passed"], "row_s": sum(r["wall_s"] for r in res["rows"])})
            print(f"ray   {n}: {wall:.1f} s, {res['total']} rows", flush=True)
    base = {r["where"]: r["wall_s"] for r in runs if r["workers"] == 1}
    print(f"\n{'where':<6} {'workers':>7} {'rows':>5} {'wall s':>8} {'speed-up':>9} {'efficiency':>10}")
    for r in runs:
        r["speedup"] = round(base[r["where"]] / r["wall_s"], 2)
        print(f"{r['where']:<6} {r['workers']:>7} {r['rows']:>5} {r['wall_s']:>8.1f} {r['speedup']:>8.2f}x "
              f"{r['speedup'] / r['workers']:>9.0%}")
    out = Path(args.output)
    out.write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "cores": cores, "robot": args.robot,
                               "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
                               "rows": rows, "runs": runs}, indent=1) + "\n")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
