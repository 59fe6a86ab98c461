"""The C kernel against the numpy reference and a pure-Python version, per
tick, at 12, 20, 32 and 64 joints (make bench, item 5).

All three compute the same outputs (tests/test_kernel.py checks it) from
segments of every profile, mid-way, with gain ramps and step limits active.
Each figure is the median over REPEATS runs of the mean time per tick, with
the spread; ratios are against the C kernel measured in the same run. The C
figure is what the daemon pays: one cffi call on buffers made once.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(Path(__file__).resolve().parent)]

from kernel_reference import evaluate, evaluate_python
from stats import Target, fmt, spread
from test_kernel import FIELDS, random_kernel

JOINTS = (12, 20, 32, 64)
REPEATS = 7
TICKS = {"c": 20_000, "numpy": 2_000, "python": 500}


def _timed(ticks: int, step: Callable[[float], object]) -> float:
    """Mean seconds per call of step(t) over `ticks` ticks of 2 ms."""
    t = 0.3
    start = time.perf_counter()
    for _ in range(ticks):
        step(t)
        t += 0.002
    return (time.perf_counter() - start) / ticks


def per_tick_us(n: int, scale: float = 1.0) -> dict[str, dict]:
    rng = np.random.default_rng(n)
    k = random_kernel(rng, n)
    k.dur[:] = rng.uniform(2.0, 4.0, n)          # every segment running, none finished
    arrays = [getattr(k, f) for f in FIELDS]
    lists = [a.tolist() for a in arrays]
    prev_np, prev_list = k.pos.copy(), k.pos.tolist()
    # every field, then the previous output: evaluate's positional arguments after t
    args_np, args_list = (*arrays, prev_np), (*lists, prev_list)
    runs: dict[str, list[float]] = {"c": [], "numpy": [], "python": []}
    for _ in range(REPEATS):
        runs["c"].append(_timed(max(1, int(TICKS["c"] * scale)), k.step))
        runs["numpy"].append(_timed(max(1, int(TICKS["numpy"] * scale)),
                                    lambda t: evaluate(t, *args_np)))
        runs["python"].append(_timed(max(1, int(TICKS["python"] * scale)),
                                     lambda t: evaluate_python(t, *args_list)))
    return {name: spread(np.array(v) * 1e6) for name, v in runs.items()}


def measure(scale: float = 1.0) -> dict:
    rows = {}
    for n in JOINTS:
        r = per_tick_us(n, scale)
        rows[str(n)] = {"us_per_tick": r,
                        "numpy_over_c": r["numpy"]["median"] / r["c"]["median"],
                        "python_over_c": r["python"]["median"] / r["c"]["median"]}
    return {"joints": rows,
            "targets": [Target("kernel vs numpy at 12 joints (x faster)",
                               rows["12"]["numpy_over_c"], 10.0, "x", at_least=True).as_dict()]}


def report(result: dict) -> list[str]:
    runs = next(iter(result["joints"].values()))["us_per_tick"]["c"]["runs"]   # as measured
    lines = [f"C kernel vs numpy vs pure Python, us per tick: median [min-max] of {runs} runs",
             (f"{'joints':>6}  {'C kernel':>20}  {'numpy':>22}  {'pure Python':>24}"
              f"  {'numpy/C':>8}  {'Python/C':>8}")]
    for n, row in result["joints"].items():
        r = row["us_per_tick"]
        lines.append(f"{n:>6}  {fmt(r['c'], 2):>20}  {fmt(r['numpy'], 1):>22}  "
                     f"{fmt(r['python'], 1):>24}  {row['numpy_over_c']:8.1f}  {row['python_over_c']:8.1f}")
    return lines


if __name__ == "__main__":
    print("\n".join(report(measure())))
