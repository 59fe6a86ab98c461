"""Where physics work runs: the scorecard's rows and the optimiser's
candidates are tasks, run on local processes (the default, nothing more to
install) or on a Ray cluster (`--ray auto|ADDRESS`; `pip install
'motiond[ray]'`, docs/PHYSICS.md). Either way results come back as the
tasks finish, and a task whose worker process dies (killed, out of memory,
a crash in native code) is run once more; lost a second time it is reported
as lost, never dropped in silence. An exception the task itself raises is
the task's result to report, not a lost worker: it is raised to the caller.

On a cluster every node must import the same motiond (the same checkout or
wheel, at the same path): the workers get this checkout's directory on
their PYTHONPATH, and config paths are passed as they are on the head."""
from __future__ import annotations

import argparse
import logging
import os
import pickle
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ATTEMPTS = 2          # a task's worker may die once; the second death loses the task


@dataclass
class Lost:
    """A task whose worker died on every attempt."""
    why: str


def add_arguments(p: argparse.ArgumentParser, jobs_help: str) -> None:
    """--jobs and --ray, shared by the scorecard and the optimiser."""
    p.add_argument("--jobs", type=int, default=None, help=jobs_help)
    p.add_argument("--ray", metavar="auto|ADDRESS", default=None,
                   help="run the work on a running Ray cluster: `auto` (the one this machine belongs to) "
                        "or the head's ADDRESS (host:port); needs `pip install 'motiond[ray]'` "
                        "(docs/PHYSICS.md). Default: local processes")


class WorkersError(Exception):
    """The workers cannot be started (Ray missing, no cluster at the address)."""


class Workers:
    """Tasks `fn(item)` on `jobs` local processes, or on a Ray cluster at
    `ray`. `initializer(*initargs)` runs once in each worker process before
    its first task (for Ray: once per process and arguments)."""

    def __init__(self, jobs: int = 2, ray: str | None = None,
                 initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()) -> None:
        self.jobs = max(1, jobs)
        self.ray_address = ray
        self.initializer = initializer
        self.initargs = initargs
        self.lost_workers = 0        # worker deaths seen (each retried or reported)
        self._pool: ProcessPoolExecutor | None = None
        if ray is not None:
            _connect(ray)

    def where(self) -> str:
        """Where the tasks run, for a progress line."""
        if self.ray_address is None:
            return f"{self.jobs} local processes"
        import ray
        cpus = int(ray.cluster_resources().get("CPU", 0))
        return f"the Ray cluster at {self.ray_address} ({cpus} CPUs)"

    def run(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        """(index, result) as each task finishes, in finishing order; the
        result is a `Lost` for a task whose worker died twice."""
        todo = list(items)
        if self.ray_address is not None:
            yield from self._run_ray(fn, todo)
        else:
            yield from self._run_local(fn, todo)

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        """The results in the items' order (a `Lost` where a task was lost)."""
        todo = list(items)
        out: list[Any] = [None] * len(todo)
        for i, result in self.run(fn, todo):
            out[i] = result
        return out

    # -- local processes -------------------------------------------------
    def close(self) -> None:
        """End the local worker processes (kept between runs, so an
        initializer's work is done once)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _local_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.jobs, initializer=self.initializer,
                                             initargs=self.initargs)
        return self._pool

    def _run_local(self, fn: Callable[[Any], Any], todo: list[Any]) -> Iterator[tuple[int, Any]]:
        # A worker's death breaks the whole pool: every task in flight fails
        # with it and nothing says which one killed it. So they are all run
        # again, each on its own, and only the one that kills its worker a
        # second time is lost.
        queue = deque(range(len(todo)))
        suspects: deque[int] = deque()
        attempts = [0] * len(todo)
        running: dict[Future[Any], int] = {}
        try:
            while queue or suspects or running:
                if not running and suspects:
                    i = suspects.popleft()
                    attempts[i] += 1
                    running[self._local_pool().submit(fn, todo[i])] = i
                while not suspects and queue and len(running) < self.jobs and \
                        not any(attempts[j] > 1 for j in running.values()):
                    i = queue.popleft()
                    attempts[i] += 1
                    running[self._local_pool().submit(fn, todo[i])] = i
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                broken = ""
                for future in done:
                    i = running.pop(future)
                    try:
                        result = future.result()
                    except BrokenProcessPool as exc:
                        broken = str(exc)
                        if attempts[i] >= ATTEMPTS:
                            yield i, Lost(f"its worker process died {attempts[i]} times ({exc})")
                        else:
                            suspects.append(i)
                        continue
                    yield i, result
                if broken:
                    self.lost_workers += 1
                    suspects.extend(running.values())     # failed with the pool: suspects too
                    running.clear()
                    assert self._pool is not None
                    self._pool.shutdown(wait=False, cancel_futures=True)
                    self._pool = None
        except BaseException:
            self.close()          # an error (or ^C) leaves no worker behind
            raise

    # -- Ray ---------------------------------------------------------------
    def _run_ray(self, fn: Callable[[Any], Any], todo: list[Any]) -> Iterator[tuple[int, Any]]:
        import ray
        from ray.exceptions import RayTaskError

        remote = ray.remote(max_retries=ATTEMPTS - 1, retry_exceptions=False)(_ray_task)
        refs = {remote.remote(fn, self.initializer, self.initargs, item): i for i, item in enumerate(todo)}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                i = refs[ref]
                try:
                    result = ray.get(ref)
                except RayTaskError as exc:      # the task's own exception: the caller's to see
                    raise exc.as_instanceof_cause() from None
                except ray.exceptions.RayError as exc:   # its worker (or node) died, retries spent
                    self.lost_workers += 1
                    yield i, Lost(f"its Ray worker died {ATTEMPTS} times ({type(exc).__name__}: "
                                  f"{str(exc).splitlines()[0] if str(exc) else ''})")
                    continue
                yield i, result


_initialised: set[tuple[Any, bytes]] = set()


def _ray_task(fn: Callable[[Any], Any], initializer: Callable[..., None] | None,
              initargs: tuple[Any, ...], item: Any) -> Any:
    """A task on a Ray worker: the initializer once per worker process."""
    key = (initializer, pickle.dumps(initargs))
    if initializer is not None and key not in _initialised:
        initializer(*initargs)
        _initialised.add(key)
    return fn(item)


def _connect(address: str) -> None:
    try:
        import ray
    except ImportError as exc:
        raise WorkersError("--ray needs Ray: pip install 'motiond[ray]' (or: pip install 'ray>=2.9')") from exc
    if ray.is_initialized():
        return
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR,
                 runtime_env={"env_vars": {"PYTHONPATH": path}})
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise WorkersError(f"no Ray cluster at {address!r} ({exc}); start one with `ray start --head` "
                           "(docs/PHYSICS.md)") from exc


def local_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0))
