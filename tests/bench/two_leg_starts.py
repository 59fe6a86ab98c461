"""A robot's two-leg stand (mode 64/0) commanded at many start times, in
several worlds: how many of the runs stand (CyberDog 2 unless `--robot`).

The greeting once worked only when commanded soon after start-up (docs/
SCRIPTS.md "Two-leg stand"), so one scorecard row says little about the
start times between. This runs the scorecard's own row `two-leg stand
(64/0)` (its steps and checks, judged on the simulator's ground truth by
controller/sim/scorecard.py) with the prelude standing in 12 for each of
`--starts` seconds, in each of `--worlds` (the scorecard's margins:
nominal, trunk mass x0.9 / x1.1, floor friction 0.5 / 1.0), one run after
another in this process (physics is costly: one core).

    .venv/bin/python tests/bench/two_leg_starts.py --starts 1.5,6.5,12.5 -o /tmp/two_leg.json
    .venv/bin/python tests/bench/two_leg_starts.py --robot go2 --worlds nominal

Prints one line per run and the count that passed; `-o` writes every run's
metrics as JSON. Exit status 1 if any run failed.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from controller.logs import configure
from controller.sim.scorecard import CARD_DATA, Row, run_row

ROW = "two-leg stand (64/0)"
WORLDS: dict[str, dict[str, float]] = {
    "nominal": {}, "mass0.9": {"trunk_mass_scale": 0.9}, "mass1.1": {"trunk_mass_scale": 1.1},
    "friction0.5": {"friction": 0.5}, "friction1.0": {"friction": 1.0},
}
DEFAULT_STARTS = "1.5,3.5,6.5,7.25,9.5,10.25,12.5,13.75,17.5,19,21.5,24.75"


def card_row(robot: str = "cyberdog2") -> dict[str, Any]:
    """The scorecard's entry for ROW (steps, window and checks)."""
    for entry in CARD_DATA["robots"][robot]["rows"]:
        if entry.get("name") == ROW:
            return dict(entry)
    raise SystemExit(f"no row {ROW!r} for {robot} in the scorecard")


def run(start: float, world: str, entry: dict[str, Any], robot: str = "cyberdog2") -> Row:
    spec = {**entry, "prelude_s": start, "world": WORLDS[world], "margins": False}
    return run_row(Row(robot, f"{ROW} after {start:g} s [{world}]", entry["issue"], spec))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--starts", default=DEFAULT_STARTS,
                    help="seconds standing in 12 before 64 is sent, comma separated")
    ap.add_argument("--worlds", default=",".join(WORLDS), help=f"any of {', '.join(WORLDS)}")
    ap.add_argument("--robot", default="cyberdog2", help="the scorecard robot whose row is run")
    ap.add_argument("-o", "--output", type=Path, help="write every run's metrics here (JSON)")
    args = ap.parse_args(argv)
    configure(level="warning")
    entry = card_row(args.robot)
    starts = [float(s) for s in args.starts.split(",")]
    worlds = args.worlds.split(",")
    unknown = sorted(set(worlds) - set(WORLDS))
    if unknown:
        ap.error(f"unknown world {unknown[0]!r}")
    out, passed = [], 0
    for start in starts:
        for world in worlds:
            row = run(start, world, entry, args.robot)
            passed += row.passed
            m = row.metrics
            print(f"{start:6.2f} s  {world:12s} {'pass' if row.passed else 'FAIL'}  "
                  f"rear {m.get('rear', float('nan')):.2f}  contact {m.get('trunk_contact_s', float('nan')):.2f} s  "
                  f"on feet {m.get('end_on_feet', 0):.0f}  tilt {m.get('end_tilt', float('nan')):.3f}  "
                  f"bar {m.get('bar', 0):.0f}  {row.error}", flush=True)
            out.append({"start": start, "world": world, "passed": row.passed, "error": row.error,
                        "metrics": m})
    total = len(starts) * len(worlds)
    print(f"{passed} of {total} stand")
    if args.output:
        args.output.write_text(json.dumps(out, indent=1))
    return 0 if passed == total else 1


if __name__ == "__main__":
    sys.exit(main())
