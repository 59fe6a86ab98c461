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
        1/lines of the run, for runs of many short items); None: one per item;
        0: none (for a command that prints its own line per item)."""
        self.lines = lines
        self.total = total
        self.what = what
        self.out = out or sys.stderr
        self.tty = self.out.isatty() if tty is None else tty
        self.done = 0
        self.failed = 0
        self.start = time.monotonic()

    def clear(self) -> None:
        """On a terminal, wipe the bar's line, so a line printed now takes its
        place (the next step draws the bar again below it)."""
        if self.tty and self.done:
            print("\r\x1b[2K", end="", file=self.out, flush=True)

    def _times(self) -> str:
        elapsed = time.monotonic() - self.start
        if not self.done:
            return f"{clock(elapsed)} elapsed"
        left = elapsed / self.done * (self.total - self.done)
        return f"{clock(elapsed)} elapsed, ~{clock(left)} left"

    def _draw(self, label: str) -> None:
        filled = BAR * self.done // max(1, self.total)
        bar = "#" * filled + "." * (BAR - filled)
        counts = f"{self.done}/{self.total} {self.what}" + (f", {self.failed} failed" if self.failed else "")
        print(f"\r\x1b[2K[{bar}] {counts}, {self._times()}: {label}", end="", file=self.out, flush=True)

    def show(self, label: str) -> None:
        """On a terminal, draw the bar now with `label` (an item under way)."""
        if self.tty:
            self._draw(label)

    def count(self, ok: bool = True) -> None:
        """One item finished, drawn at the next `show` (its caller prints its own lines)."""
        self.done += 1
        self.failed += not ok

    def close(self) -> None:
        """On a terminal, end the bar's line if the run stopped short of its total."""
        if self.tty and 0 < self.done < self.total:
            print(file=self.out, flush=True)

    def step(self, label: str, ok: bool = True, status: str | None = None) -> None:
        """One item finished; `status` (four characters) instead of ok/FAIL
        for an item that neither passed nor failed."""
        self.count(ok or status is not None)
        times = self._times()
        if self.tty:
            self._draw(label)
            if self.done == self.total:
                print(file=self.out, flush=True)
        elif self.lines == 0:
            return
        elif self.lines is None or self.done == self.total or \
                self.done * self.lines // self.total != (self.done - 1) * self.lines // self.total:
            print(f"[{self.done}/{self.total}] {status or ('ok  ' if ok else 'FAIL')} {label} ({times})",
                  file=self.out, flush=True)
