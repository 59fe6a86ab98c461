"""controller/sim/workers.py on local processes: results stream back as
tasks finish, a task whose worker dies is run once more, and one that
kills its worker twice is reported lost while the rest still finish. (The
same on a Ray cluster: tests/test_ray_cluster.py.)"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from controller.sim.workers import Lost, Workers

_seen: list[str] = []


def square(x: int) -> int:
    time.sleep(0.01 * (x % 3))
    return x * x


def die_once(arg: tuple[int, str]) -> int:
    """Kills its worker process the first time (a marker file says so)."""
    x, marker = arg
    if x == 3 and not Path(marker).exists():
        Path(marker).write_text("died once")
        os._exit(9)
    return x * x


def die_always(x: int) -> int:
    if x == 2:
        os._exit(9)
    time.sleep(0.2)           # the others outlive the first death: they are in flight when it breaks
    return x


def raises(x: int) -> int:
    if x == 1:
        raise ValueError("a task's own error")
    return x


def remember(tag: str) -> None:
    _seen.append(tag)


def initialised(_x: int) -> list[str]:
    return list(_seen)


def test_every_result_comes_back_once_with_its_index() -> None:
    with Workers(2) as w:
        got = list(w.run(square, range(9)))
    assert sorted(i for i, _ in got) == list(range(9))
    assert all(r == i * i for i, r in got)
    assert w.lost_workers == 0


def test_a_task_whose_worker_dies_is_run_again(tmp_path: Path) -> None:
    marker = str(tmp_path / "died")
    with Workers(2) as w:
        out = w.map(die_once, [(x, marker) for x in range(6)])
    assert Path(marker).exists(), "the task never killed its worker: nothing was tested"
    assert out == [x * x for x in range(6)]
    assert w.lost_workers >= 1


def test_a_task_that_kills_its_worker_twice_is_lost_and_the_rest_finish() -> None:
    with Workers(2) as w:
        out = w.map(die_always, range(5))
    assert isinstance(out[2], Lost) and "died 2 times" in out[2].why
    # The task in flight beside it when the pool broke was run again on its
    # own and finished: only the one that kills its worker is lost.
    assert [o for i, o in enumerate(out) if i != 2] == [0, 1, 3, 4]
    assert w.lost_workers == 2


def test_a_tasks_own_exception_is_raised_not_retried() -> None:
    with Workers(2) as w, pytest.raises(ValueError, match="a task's own error"):
        w.map(raises, range(3))
    assert w.lost_workers == 0


def test_the_initializer_runs_in_each_worker_before_its_tasks() -> None:
    with Workers(2, initializer=remember, initargs=("ready",)) as w:
        first = w.map(initialised, range(4))
        again = w.map(initialised, range(4))       # the same processes: not initialised twice
    assert all(r == ["ready"] for r in first + again)
