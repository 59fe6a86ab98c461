"""`make bench` is not part of `make test`, so keep its scripts runnable here:
each benchmark runs with a handful of ticks and must print its table."""
from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parent / "bench"


def test_gait_bench_runs_and_reports_both_generators(capsys):
    spec = importlib.util.spec_from_file_location("gait_bench", BENCH / "gait_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.TICKS, bench.REPEATS = 20, 1
    bench.main()
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    assert [r[0] for r in rows] == ["quadruped", "humanoid"]
    assert [int(r[-4]) for r in rows] == [12, 20]
    assert all(float(r[-3]) > 0 and float(r[-1]) > 0 for r in rows)
