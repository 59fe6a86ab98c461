"""`motiond --sim`: the simulated robot's physics step on its own thread.

A real robot's body moves while the controller sleeps between ticks, and its
bridge reads the sensors and publishes them; the in-process simulator does
the same. After a tick's outputs are out, the runtime hands this thread a
job (controller/service/runtime.py: step the simulated robot under the
joint_cmd it published, MuJoCo and the sensor model, then make and publish
the next tick's readings), which runs while the tick loop sleeps; the next
tick waits for it to finish before it reads the sensors' port (only the
command port is drained before, at the wake-up), so every tick sees
exactly the state it would see with the job done in line (the same
readings, in the same order). The controller's loop body no longer carries
the simulator's cost; the process's CPU figure still does.

The thread inherits the tick thread's scheduling (SCHED_FIFO when the
daemon runs real-time). An exception in the job is raised again in the tick
thread by the next wait().
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class SimStepper:
    def __init__(self, job: Callable[..., None]) -> None:
        self.job = job
        self._go = threading.Event()
        self._done = threading.Event()
        self._done.set()
        self._args: tuple[Any, ...] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="motiond-sim", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            self._go.wait()
            self._go.clear()
            args = self._args
            if args is None:
                self._done.set()
                return
            try:
                self.job(*args)
            except BaseException as exc:      # handed to the tick thread by wait()
                self._error = exc
            self._done.set()

    def start(self, *args: Any) -> None:
        """Run the job with these arguments, which must stay unchanged until
        wait() returns."""
        self._done.clear()
        self._args = args
        self._go.set()

    def wait(self) -> None:
        """Until the job started last has finished; its exception, if any."""
        self._done.wait()
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def close(self) -> None:
        """Finish the running job and end the thread."""
        try:
            self.wait()
        finally:
            self._done.clear()
            self._args = None
            self._go.set()
            self._thread.join(timeout=5.0)
