"""What every benchmark here reports: a median over repeated runs with its
spread, and targets printed as pass/fail beside the figure."""
from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


def spread(values: Iterable[float]) -> dict:
    """Median, min and max of repeated measurements of one figure."""
    values = [float(v) for v in values]
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "runs": len(values)}


def quantiles_us(samples_ns: ArrayLike) -> dict:
    """p50/p99/p99.9/max of nanosecond samples, in microseconds (nearest rank,
    as the daemon's telemetry computes them)."""
    a = np.sort(np.asarray(samples_ns, dtype=np.float64))
    if len(a) == 0:
        return {"p50": float("nan"), "p99": float("nan"), "p99.9": float("nan"),
                "max": float("nan"), "n": 0}

    def q(x: float) -> float:
        return float(a[min(len(a) - 1, int(x * len(a)))]) / 1e3
    return {"p50": q(0.50), "p99": q(0.99), "p99.9": q(0.999), "max": float(a[-1]) / 1e3,
            "n": len(a)}


@dataclass
class Target:
    name: str
    value: float
    limit: float
    unit: str
    at_least: bool = False     # the value must be >= limit (else <=)

    @property
    def passed(self) -> bool:
        return self.value >= self.limit if self.at_least else self.value <= self.limit

    def row(self) -> str:
        sign = ">=" if self.at_least else "<="
        verdict = "PASS" if self.passed else "FAIL"
        return f"{verdict}  {self.name:52} {self.value:10.2f} {sign} {self.limit:g} {self.unit}"

    def as_dict(self) -> dict:
        return {"name": self.name, "value": self.value, "limit": self.limit, "unit": self.unit,
                "at_least": self.at_least, "passed": self.passed}


def fmt(s: dict, digits: int = 1) -> str:
    """'median [min-max]' of a spread()."""
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}-{s['max']:.{digits}f}]"
