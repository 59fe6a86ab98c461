"""Progress of a long run of items (scorecard rows, optimiser rollouts):
on a terminal one line rewritten in place, with a bar, the count, the
elapsed time and an estimate of what is left; elsewhere (a log, CI) one
line per finished item. Written to stderr, so stdout keeps the results."""
from __future__ import annotations

import sys
import time
from typing import TextIO

BAR = 24


def clock(seconds: float) -> str:
    s = max(0, round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    def __init__(self, total: int, what: str, out: TextIO | None = None, tty: bool | None = None,
                 lines: int | None = None) -> None:
        """`lines`: off a terminal, at most this many lines in all (one per
        1/lines of the run, for runs of many short items); None: one per item."""
        self.lines = lines
        self.total = total
        self.what = what
        self.out = out or sys.stderr
        self.tty = self.out.isatty() if tty is None else tty
        self.done = 0
        self.failed = 0
        self.start = time.monotonic()

    def step(self, label: str, ok: bool = True) -> None:
        """One item finished."""
        self.done += 1
        self.failed += not ok
        elapsed = time.monotonic() - self.start
        left = elapsed / self.done * (self.total - self.done)
        counts = f"{self.done}/{self.total} {self.what}" + (f", {self.failed} failed" if self.failed else "")
        times = f"{clock(elapsed)} elapsed, ~{clock(left)} left"
        if self.tty:
            filled = BAR * self.done // max(1, self.total)
            bar = "#" * filled + "." * (BAR - filled)
            print(f"\r\x1b[2K[{bar}] {counts}, {times}: {label}", end="", file=self.out, flush=True)
            if self.done == self.total:
                print(file=self.out, flush=True)
        elif self.lines is None or self.done == self.total or \
                self.done * self.lines // self.total != (self.done - 1) * self.lines // self.total:
            print(f"[{self.done}/{self.total}] {'ok  ' if ok else 'FAIL'} {label} ({times})",
                  file=self.out, flush=True)
