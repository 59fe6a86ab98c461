"""Overload the daemon must survive (docs/RELIABILITY.md), in process on the
simulated clock: a command flood and a full command queue. The daemon-level
flood is test_faults_daemon.py::test_a_10_khz_command_flood_keeps_the_tick_at_500_hz."""
from __future__ import annotations

import tracemalloc
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from harness import Rig, command
from structlog.testing import capture_logs

DONE = 0


@pytest.fixture
def standing() -> Rig:
    r = Rig()
    r.stand()
    return r


def events(logs: Sequence[Mapping[str, Any]], name: str) -> list[Mapping[str, Any]]:
    return [e for e in logs if e["event"] == name]


# -- a command flood --------------------------------------------------------------------
def test_a_flood_of_20_commands_per_tick_last_wins_and_nothing_grows(standing: Rig) -> None:
    r = standing
    r.record_joints = False
    rng = np.random.default_rng(7)
    life = r.life_count
    sent = 0
    accepted0 = r.ctl.counters.commands_accepted

    def flood_tick() -> float:
        nonlocal life, sent
        z = 0.0
        for i in range(20):
            if i == 19 and rng.random() < 0.3:          # a heartbeat last: the command before wins
                r.raw(r.ch["command"], command(21, 5, life, pos_des=[0, 0, z]).encode())
                continue
            life = (life + 1) % 128                      # a new life_count each
            z = float(np.float32(rng.uniform(0.15, 0.28)))  # as the wire carries it
            r.raw(r.ch["command"], command(21, 5, life, pos_des=[0, 0, z]).encode())
            sent += 1
        r.tick()
        return z

    def flood(ticks: int) -> None:
        for _ in range(ticks):
            z = flood_tick()
            active = r.ctl.last_active
            assert (active.life_count, active.pos_des[2]) == (life, z)
            assert len(r.ctl.queue) == 1

    for _ in range(500):                                 # warm up every path
        flood_tick()
    # 10 s at 10 000 packets/s; the allocations traced over the last 2 s
    # (20 000 packets: tracing makes every tick some five times slower). A
    # leak of one Python object per packet (16 bytes and more) is 320 KB.
    flood(4000)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    flood(1000)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    ours = [tracemalloc.Filter(True, str(Path(__file__).parent.parent / "controller" / "*"))]
    growth = sum(s.size_diff for s in after.filter_traces(ours).compare_to(
        before.filter_traces(ours), "filename"))
    print(f"controller/ allocations grew by {growth} bytes over 20 000 packets")
    assert growth < 64 * 1024
    assert r.ctl.counters.commands_accepted - accepted0 == sent
    assert r.mode == 21 and r.last.switch_status == DONE
    assert not r.ctl.counters.packets_rejected and r.ctl.events == []


# -- the command queue is bounded ----------------------------------------------------------
def test_a_full_queue_refuses_the_newest_block_counted_and_logged() -> None:
    r = Rig(overrides={"command_queue_capacity": 8})
    r.stand()
    rejected = r.ctl.counters.commands_rejected
    with capture_logs() as logs:
        sent = [r.send(21, 0, duration=400, rpy_des=[0, 0.01 * i, 0]) for i in range(11)]
        r.tick()
    queue = r.ctl.queue
    assert len(queue) == 8
    assert [b.life_count for b in queue.blocks] == [m.life_count for m in sent[:8]]
    assert r.ctl.counters.commands_rejected - rejected == 3 and queue.overflowed == 3
    assert r.ctl.counters.last_error == \
        "command mode 21 dropped: the command queue is full (8 blocks)"
    dropped = events(logs, "command_dropped")
    assert len(dropped) == 1 and dropped[0]["log_level"] == "warning"   # once a second
    # The queued blocks run in order; the refused ones never do.
    r.run(8 * 400 + 100)
    assert r.last.mode == 21 and r.ctl.last_active.gait_id == 3          # the filler after the 8th


def test_the_default_queue_holds_1024_blocks() -> None:
    r = Rig()
    r.stand()
    for i in range(1100):
        r.send(21, 0, duration=1000, rpy_des=[0, 0, 1e-4 * i])
    r.tick()
    assert r.ctl.queue.capacity == 1024 and len(r.ctl.queue) == 1024
    assert r.ctl.queue.overflowed == 1100 - 1024
