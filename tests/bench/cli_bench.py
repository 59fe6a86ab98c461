"""How long motionctl takes to start: the wall time of whole invocations, as
a person typing them waits for them, against the bare interpreter's start
measured in the same run (issue: `send` and `watch` within 150 ms).

- `send` start: `motionctl send --mode <unknown word>`: every import of
  send, the config's wire part read, the mode resolved, then it stops just
  before opening LCM (exit 1);
- `hold --status`: the same for hold, and a look for a running hold;
- `watch --help`, `send --help`: the parser alone;
- baseline: `python -c pass` and `python -c "import numpy"`.

Medians over RUNS invocations each, interleaved so load hits them alike."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from stats import Target, fmt, spread

RUNS = int(os.environ.get("CLI_BENCH_RUNS", "21"))
START_LIMIT_MS = 150.0
MOTIONCTL = str(Path(sys.executable).parent / "motionctl")

CASES: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
    "motionctl send --help": [MOTIONCTL, "send", "--help"],
    "motionctl watch --help": [MOTIONCTL, "watch", "--help"],
    "motionctl send (start, up to LCM)": [MOTIONCTL, "send", "--mode", "no-such-mode"],
    "motionctl hold --status": [MOTIONCTL, "hold", "--status"],
}


def measure() -> dict[str, Any]:
    times: dict[str, list[float]] = {name: [] for name in CASES}
    env = {**os.environ, "XDG_RUNTIME_DIR": tempfile.mkdtemp()}     # no hold of the user's is asked
    for _ in range(RUNS):
        for name, argv in CASES.items():
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
            times[name].append((time.perf_counter() - start) * 1e3)
    out: dict[str, Any] = {name: spread(t) for name, t in times.items()}
    base = out["python -c pass"]["median"]
    for name in CASES:
        out[name]["over_python_ms"] = out[name]["median"] - base
    return out


def report(r: dict[str, Any]) -> list[str]:
    lines = [f"motionctl start, wall ms, median [min-max] of {RUNS} (minus the bare interpreter's)"]
    for name, s in r.items():
        lines.append(f"  {name:36s} {fmt(s)}  (+{s['over_python_ms']:.0f})")
    return lines


def targets(r: dict[str, Any]) -> list[Target]:
    return [Target("motionctl send start, median", r["motionctl send (start, up to LCM)"]["median"],
                   START_LIMIT_MS, "ms"),
            Target("motionctl hold --status, median", r["motionctl hold --status"]["median"],
                   START_LIMIT_MS, "ms")]


if __name__ == "__main__":
    print("\n".join(report(measure())))
