"""When an MPC plan is solved and when the tick may use it.

The tick submits a request (the state it measured and the reference) on tick
s; the plan for it is used from tick s + latency_ticks on, never earlier,
whether it was solved inline (tests, in-process trials: deterministic) or in
a worker process (the daemon, controller/service/planner_process.py: the
tick never waits for a solve). A plan that is not back by then is late: the
tick goes on with the previous plan, a step further along its horizon, and
counts it; past the horizon's end there is no plan and the caller falls back.
"""
from __future__ import annotations

import time
from typing import Protocol

import numpy as np

from controller.motion.mpc import ConvexMpc


class PlanStats:
    """What the planner did, for controller_status and `make bench`."""

    def __init__(self) -> None:
        self.solved = 0
        self.failed = 0          # the QP found no solution: the weight-sharing plan ran
        self.late = 0            # not back by its tick: the previous plan ran on
        self.ticks = 0           # ticks that asked for a plan: the time closed loop
        self.asked = -1          # the last tick that asked for a plan ...
        self.used = -1           # ... and the sampled tick of the plan it got (-1: none)
        self.solve_ns: list[int] = []

    def record(self, status: float, solve_ns: int) -> None:
        self.solved += 1
        if status < 0.5:
            self.failed += 1
        if len(self.solve_ns) < 100_000:
            self.solve_ns.append(solve_ns)

    def summary(self, dt: float) -> dict[str, float | int]:
        """Counts, the solve rate while closed loop (ticks of `dt` s that
        asked for a plan) and the solve time's median and p99 (µs)."""
        times = np.array(self.solve_ns or [0]) / 1000.0
        closed_s = self.ticks * dt
        return {"solved": self.solved, "failed": self.failed, "late": self.late,
                "closed_loop_s": round(closed_s, 2),
                "rate_hz": round(self.solved / closed_s, 1) if closed_s > 0 else 0.0,
                "solve_p50_us": round(float(np.percentile(times, 50)), 1),
                "solve_p99_us": round(float(np.percentile(times, 99)), 1)}


class Planner(Protocol):
    mpc: ConvexMpc
    stats: PlanStats

    def submit(self, tick: int, request: np.ndarray) -> None:
        """Ask for the plan of this request, sampled on `tick`."""

    def receive(self) -> None:
        """Take in the plans solved since the last call (a worker's), before
        the tick's last commands; plan() takes in a plan due now itself."""

    def plan(self, tick: int) -> tuple[np.ndarray, int] | None:
        """The newest plan usable on `tick` and the tick it was sampled on."""

    def reset(self) -> None:
        """Forget every plan (a new entry into the mode)."""

    def close(self) -> None:
        """Stop a worker."""


class PlanQueue:
    """The plan in use and the one waiting for its tick."""

    def __init__(self, size: int, latency_ticks: int) -> None:
        self.latency = latency_ticks
        self.stats = PlanStats()
        self._pending = np.zeros(size)
        self._pending_tick = -1
        self._current = np.zeros(size)
        self._current_tick = -1

    def arrived(self, tick: int, plan: np.ndarray, solve_ns: int) -> None:
        """The plan for the request sampled on `tick` is back."""
        if tick < self._pending_tick or tick <= self._current_tick:
            return                                # older than what we hold
        if self._pending_tick >= 0:               # the one waiting never ran
            self.stats.late += 1
        self._pending[:] = plan
        self._pending_tick = tick
        self.stats.record(float(plan[-1]), solve_ns)

    def plan(self, tick: int) -> tuple[np.ndarray, int] | None:
        stats = self.stats
        stats.ticks += 1
        stats.asked = tick
        if self._pending_tick >= 0 and tick >= self._pending_tick + self.latency:
            self._current, self._pending = self._pending, self._current
            self._current_tick = self._pending_tick
            self._pending_tick = -1
        stats.used = self._current_tick
        if self._current_tick < 0:
            return None
        return self._current, self._current_tick

    def reset(self) -> None:
        self._pending_tick = self._current_tick = -1


class ReplayPlanner:
    """For `motionctl replay`: solves inline as InlinePlanner does, but each
    tick uses the plan the recording says the daemon used (tick_trace_t's
    plan_tick, set in `use` before the tick), so a plan the daemon's worker
    delivered late replays as it ran."""

    KEEP = 64                    # plans kept by their sampled tick (a late one is a few old)

    def __init__(self, mpc: ConvexMpc) -> None:
        self.mpc = mpc
        self.stats = PlanStats()
        self.use = -1
        self._plans: dict[int, np.ndarray] = {}

    def submit(self, tick: int, request: np.ndarray) -> None:
        start = time.perf_counter_ns()
        plan = self.mpc.solve(request)
        self.stats.record(float(plan[-1]), time.perf_counter_ns() - start)
        self._plans[tick] = plan.copy()         # solve() reuses its output array
        if len(self._plans) > self.KEEP:
            del self._plans[min(self._plans)]

    def receive(self) -> None:
        pass                                    # solved at submit

    def plan(self, tick: int) -> tuple[np.ndarray, int] | None:
        self.stats.ticks += 1
        self.stats.asked, self.stats.used = tick, self.use
        plan = self._plans.get(self.use)
        return None if plan is None else (plan, self.use)

    def reset(self) -> None:
        self._plans.clear()

    def close(self) -> None:
        pass


class InlinePlanner:
    """Solves at submit time; the plan is used latency_ticks later."""

    def __init__(self, mpc: ConvexMpc, latency_ticks: int) -> None:
        self.mpc = mpc
        self.queue = PlanQueue(mpc.layout.plan_size, latency_ticks)
        self.stats = self.queue.stats

    def submit(self, tick: int, request: np.ndarray) -> None:
        start = time.perf_counter_ns()
        plan = self.mpc.solve(request)
        self.queue.arrived(tick, plan, time.perf_counter_ns() - start)

    def receive(self) -> None:
        pass                                    # solved at submit

    def plan(self, tick: int) -> tuple[np.ndarray, int] | None:
        return self.queue.plan(tick)

    def reset(self) -> None:
        self.queue.reset()

    def close(self) -> None:
        pass
