"""The MPC in a worker process, so that a solve never delays a tick.

The tick sends each request down a pipe (once its joint command is out) and
goes on; the worker solves it and sends the plan back; the tick takes in
whatever has arrived without waiting, before its last command drain
(receive, from Controller.sense). A plan is used latency_ticks after its
state was sampled, never earlier (controller/motion/planner.py), so the
daemon behaves as the inline planner of the tests does whenever the worker
keeps up. A plan due on a tick and not back is waited for up to DUE_WAIT_S
(a tick behaves then exactly as inline, so a recorded run replays
identically), then counted late and the previous plan runs on; a worker
that dies is logged once and mode 11 falls back to sharing the weight among
the stance feet (controller/motion/balance.py) until the daemon restarts.
"""
from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import select
import signal
import time
from multiprocessing.connection import Connection

import numpy as np

from controller.logs import get_logger
from controller.motion.mpc import ConvexMpc
from controller.motion.planner import PlanQueue
from controller.robot.config.balance import BalanceConfig

DUE_WAIT_S = 0.0005     # a plan due on this tick and not back is waited for this long
READY_WAIT_S = 30.0     # how long start-up waits for the worker's imports
READY = b"ready"


def _serve(config: BalanceConfig, legs: int, conn: Connection) -> None:
    """The worker: solve each request as it comes until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the daemon decides when to stop
    mpc = ConvexMpc(config, legs)
    try:
        conn.send_bytes(READY)                        # imports done: nothing heavy from here on
    except (BrokenPipeError, OSError):
        return
    while True:
        try:
            message = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if not message:
            return
        tick = int.from_bytes(message[:8], "little", signed=True)
        request = np.frombuffer(message, dtype=np.float64, offset=8)
        start = time.perf_counter_ns()
        plan = mpc.solve(request)
        took = time.perf_counter_ns() - start
        try:
            conn.send_bytes(tick.to_bytes(8, "little", signed=True) + took.to_bytes(8, "little")
                            + plan.tobytes())
        except (BrokenPipeError, OSError):
            return


class ProcessPlanner:
    def __init__(self, config: BalanceConfig, legs: int, wait: bool = True) -> None:
        """Start the worker; `wait` False: return at once, and the caller
        calls wait_ready() before it raises priorities (the daemon builds the
        controller and the simulator while the worker imports)."""
        self.mpc = ConvexMpc(config, legs)      # the layout; the worker solves with its own
        self.queue = PlanQueue(self.mpc.layout.plan_size, config.latency_ticks)
        self.stats = self.queue.stats
        self.latency = config.latency_ticks
        self.log = get_logger("motiond.planner")
        context = mp.get_context("spawn")       # a clean interpreter: no inherited threads or sockets
        self._conn, child = context.Pipe()
        self._worker = context.Process(target=_serve, args=(config, legs, child),
                                       name="motiond-mpc", daemon=True)
        self._worker.start()
        child.close()
        self._waiting: list[int] = []           # ticks of requests not back yet
        self._poller = select.poll()            # kept: a poll a tick, without building one each time
        self._poller.register(self._conn.fileno(), select.POLLIN)
        self.alive = True
        self._ready = False
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Until the worker's imports are done: they run at the normal
        priority, not after set_priority has raised it above other real-time
        work (`motionctl record`)."""
        if self._ready:
            return
        self._ready = True
        try:
            ready = self._conn.poll(READY_WAIT_S) and self._conn.recv_bytes() == READY
        except (EOFError, OSError):
            ready = False
        if not ready:
            self._lost(f"the worker did not start within {READY_WAIT_S:g} s")

    def submit(self, tick: int, request: np.ndarray) -> None:
        if not self.alive:
            return
        try:
            self._conn.send_bytes(tick.to_bytes(8, "little", signed=True) + request.tobytes())
        except (BrokenPipeError, OSError) as exc:
            self._lost(str(exc))
            return
        self._waiting.append(tick)

    def receive(self) -> None:
        """Take in the plans that are back (Controller.sense calls it before
        the tick's last commands; plan() takes in one due now itself)."""
        if self.alive and self._waiting:
            self._receive()

    def _receive(self) -> None:
        conn = self._conn
        try:
            while self._poller.poll(0):
                message = conn.recv_bytes()
                tick = int.from_bytes(message[:8], "little", signed=True)
                took = int.from_bytes(message[8:16], "little")
                if tick in self._waiting:
                    self._waiting.remove(tick)
                self.queue.arrived(tick, np.frombuffer(message, dtype=np.float64, offset=16), took)
        except (EOFError, OSError) as exc:
            self._lost(str(exc))

    def set_priority(self, priority: int) -> str | None:
        """Run the worker at SCHED_FIFO `priority` (one below the tick's, so a
        solve is not queued behind ordinary processes); why not, or None."""
        pid = self._worker.pid
        if pid is None or priority < 1:
            return "no worker" if pid is None else "priority below 1"
        try:
            os.sched_setscheduler(pid, os.SCHED_FIFO, os.sched_param(priority))
        except (OSError, AttributeError) as exc:
            return str(exc)
        return None

    def plan(self, tick: int) -> tuple[np.ndarray, int] | None:
        if self.alive and self._waiting and tick >= self._waiting[0] + self.latency:
            self._receive()                     # due now: arrived since receive()?
            if self._waiting and tick >= self._waiting[0] + self.latency:
                with contextlib.suppress(EOFError, OSError):
                    if self._conn.poll(DUE_WAIT_S):
                        self._receive()
        while self._waiting and tick >= self._waiting[0] + self.latency:
            self._waiting.pop(0)                # due and not back: it will not be used
            self.stats.late += 1
        return self.queue.plan(tick)

    def reset(self) -> None:
        self.queue.reset()

    def _lost(self, reason: str) -> None:
        if self.alive:
            self.alive = False
            self.log.error("planner_lost", reason=reason,
                           effect="mode 11 shares the weight among the stance feet without the MPC")

    def close(self) -> None:
        if self._worker.is_alive():
            with contextlib.suppress(BrokenPipeError, OSError):
                self._conn.send_bytes(b"")
            self._worker.join(timeout=1.0)
            if self._worker.is_alive():
                self._worker.terminate()
        self._conn.close()
