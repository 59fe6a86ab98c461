"""The `realtime` section: how the tick thread asks for real time."""
from __future__ import annotations

from dataclasses import dataclass

from controller.robot.config.reader import Reader

MAX_IDLE_LATENCY_US = 1_000_000


@dataclass(frozen=True)
class RealtimeConfig:
    """How the tick thread asks for real time (controller/service/realtime.py). What
    the system does not permit is skipped with one warning."""
    priority: int = 49           # SCHED_FIFO priority 1-99; 0: the normal scheduler
    lock_memory: bool = True     # mlockall: no page faults on the tick
    timer_slack_ns: int = 1      # prctl timer slack (the kernel's default is 50 us)
    gc_freeze: bool = True       # freeze the start-up heap; no automatic collection
    # PM QoS: no CPU idle state slower than this to wake from while the daemon
    # runs (/dev/cpu_dma_latency); None leaves it to the system. 10 us keeps
    # the shallow states (a halt) and forbids the deep ones (docs/CONFIG.md).
    cpu_dma_latency_us: int | None = 10


def load_realtime(r: Reader) -> RealtimeConfig:
    if "realtime" not in r.data:
        return RealtimeConfig()
    rr = r.sub("realtime")
    default = RealtimeConfig()
    return RealtimeConfig(
        priority=int(rr.number("priority", 0, 99, default.priority)),
        lock_memory=rr.get("lock_memory", bool, default.lock_memory),
        timer_slack_ns=int(rr.number("timer_slack_ns", 1, 1_000_000, default.timer_slack_ns)),
        gc_freeze=rr.get("gc_freeze", bool, default.gc_freeze),
        cpu_dma_latency_us=_latency(rr, default.cpu_dma_latency_us),
    )


def _latency(rr: Reader, default: int | None) -> int | None:
    value = rr.get("cpu_dma_latency_us", (int, type(None)), default)
    if value is not None and not 0 <= value <= MAX_IDLE_LATENCY_US:
        raise rr.fail("cpu_dma_latency_us", f"{value} is outside [0, {MAX_IDLE_LATENCY_US}]")
    return value
