"""Real-time setup of the tick thread (docs/GUIDE.md "Real-time priority").

`setup` asks for what config `realtime` names: SCHED_FIFO at its priority
(for every thread, the LCM library's receive threads too), 1 ns timer slack,
locked memory, and CPU idle states no slower to leave than
`cpu_dma_latency_us` (held for the process's life: a CPU woken from a deep
idle state starts the tick that much later). Whatever the system refuses is returned as a
reason naming the permission that would grant it; the daemon runs anyway and
logs those reasons once. `FrozenHeap` brackets the tick loop: the heap built
at start-up is frozen out of the collector and automatic collection is off,
because the tick makes no reference cycles (tests/test_realtime.py proves it);
`collect_if_due` is the safety net for code paths that might.
"""
from __future__ import annotations

import errno
import gc
import os
import threading
import time
from typing import Self

from controller._kernel import lib
from controller.robot.config import RealtimeConfig

# Objects tracked by the collector allocated since the last collection, net of
# those freed, above which the loop collects after a tick's outputs are out. A
# tick keeps this flat; only a path that leaks or makes cycles reaches it.
GC_BUDGET = 100_000

# The open PM QoS request (/dev/cpu_dma_latency): it lasts while this is open.
_idle_request: list[int] = []


def setup(cfg: RealtimeConfig) -> tuple[list[str], list[str]]:
    """Apply cfg to the calling thread and process: (applied, refused)."""
    applied: list[str] = []
    refused: list[str] = []
    if cfg.priority > 0:
        wanted = f"SCHED_FIFO priority {cfg.priority}"
        try:
            for tid in _threads():
                if (os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority) != \
                        (os.SCHED_FIFO, cfg.priority):     # not already set (the systemd unit)
                    os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(cfg.priority))
            applied.append(wanted)
        except OSError as exc:
            refused.append(f"{wanted}: {exc.strerror} (needs root, CAP_SYS_NICE "
                           f"or LimitRTPRIO >= {cfg.priority})")
    rc = lib.mk_set_timer_slack(cfg.timer_slack_ns)
    if rc == 0:
        applied.append(f"timer slack {cfg.timer_slack_ns} ns")
    else:
        refused.append(f"timer slack {cfg.timer_slack_ns} ns: {os.strerror(rc)}")
    if cfg.lock_memory:
        rc = lib.mk_lock_memory()
        if rc == 0:
            applied.append("memory locked")
        else:
            refused.append(f"mlockall: {os.strerror(rc)} (needs root, CAP_IPC_LOCK "
                           f"or LimitMEMLOCK=infinity)")
    if cfg.cpu_dma_latency_us is not None:
        _request_idle_latency(cfg.cpu_dma_latency_us, applied, refused)
    return applied, refused


def _request_idle_latency(max_us: int, applied: list[str], refused: list[str]) -> None:
    """Replace this process's idle-latency request with max_us."""
    release_idle_latency()
    wanted = f"cpu idle latency {max_us} us"
    fd = lib.mk_request_cpu_latency(max_us)
    if fd >= 0:
        _idle_request.append(fd)
        applied.append(wanted)
    elif -fd == errno.ENOENT:
        refused.append(f"{wanted}: no /dev/cpu_dma_latency (a kernel without PM QoS, or a "
                       f"private /dev such as the systemd unit's: docs/SERVICE.md)")
    else:
        refused.append(f"{wanted}: {os.strerror(-fd)} on /dev/cpu_dma_latency (needs root or "
                       f"write access to it: docs/GUIDE.md \"Real-time priority\")")


def release_idle_latency() -> None:
    """Drop the idle-latency request (the daemon keeps it until it exits)."""
    while _idle_request:
        os.close(_idle_request.pop())


def _threads() -> list[int]:
    """Every thread of this process, the caller first: the policy is per
    thread, and the LCM library's receive threads carry the tick's input."""
    own = threading.get_native_id()
    others = [int(t) for t in os.listdir("/proc/self/task") if int(t) != own]
    return [own, *others]


class FrozenHeap:
    """`with FrozenHeap(enabled):` around the tick loop. On entry: one full
    collection, gc.freeze() and automatic collection off; on exit the
    collector is as it was (the daemon exits, but tests run the loop in
    process)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.collections = 0            # collect_if_due runs, for tests and logs
        self._was_enabled = gc.isenabled()

    def __enter__(self) -> Self:
        if self.enabled:
            self._was_enabled = gc.isenabled()
            gc.collect()
            gc.freeze()
            gc.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            gc.unfreeze()
            if self._was_enabled:
                gc.enable()

    def collect_if_due(self) -> tuple[int, int] | None:
        """A full collection when GC_BUDGET new objects have piled up:
        (objects collected, ns taken), else None. One C call per tick."""
        if not self.enabled or gc.get_count()[0] <= GC_BUDGET:
            return None
        start = time.perf_counter_ns()
        found = gc.collect()
        self.collections += 1
        return found, time.perf_counter_ns() - start
