"""The 500 Hz loop: one thread owns the tick.

Each tick: drain the command port (never blocking), then the sensors' port,
Controller.sense, the command port again, Controller.act, publish (the joint
command first), advance the simulated robot when there is one and read its
sensors for the next tick (in the loop: on its own thread while this one sleeps,
controller/service/sim_thread.py), then sleep to the next absolute deadline.
Lateness (wake-up time past the deadline), loop-body time and overruns are
measured here and reported in controller_status.
"""
from __future__ import annotations

import os
import signal
import time

import numpy as np

from controller import msgs
from controller._kernel import lib
from controller.core.controller import Controller, Outbox, Timing
from controller.logs import RateLimit, get_logger
from controller.service.realtime import FrozenHeap
from controller.service.sdnotify import NEVER, Notifier
from controller.service.sim_thread import SimStepper
from controller.service.transport import FixedEncoder, Packets
from controller.sim.robot import SENSORS, SimulatedRobot

# What the daemon takes in, per port, drained in this order every tick
# (controller/service/transport.py); the sensors (controller/sim/robot.py SENSORS) come
# from a robot bridge, or with --sim straight from the simulated robot.
INPUTS = (("command", ("command", "user_gait_file", "motion_goal", "script_request")),
          ("joint", ("motor_ctrl", "bridge_status") + SENSORS))
# What the controller takes of the readings of a robot in its process (the
# simulated one, or a bridge's: controller/bridges/run.py); the rest (sim_state)
# is only published.
READINGS = SENSORS + ("bridge_status",)
SENSE_PORTS = ("joint",)      # drained before Controller.sense (the sensors' port) ...
ACT_PORTS = ("command",)      # ... these at the wake-up and again after it, before Controller.act

WINDOW_TICKS = 1000           # telemetry window: the last 2 s at 500 Hz
SHUTDOWN_TICKS = 50           # damper ticks published before exit (100 ms)
I32_MAX = (1 << 31) - 1


class Runtime:
    def __init__(self, controller: Controller, bus: Packets, sim: SimulatedRobot | None = None,
                 max_ticks: int | None = None, notifier: Notifier | None = None) -> None:
        self.ctl = controller
        self.cfg = controller.cfg
        self.bus = bus
        self.sim = sim
        self.stepper: SimStepper | None = None   # the sim's thread, while the loop runs
        self.sim_readings: list[tuple[str, bytes]] | None = None   # for the next tick, made by the sim
        self.sent = 0          # this tick's outbox messages already published (_send)
        self.max_ticks = max_ticks
        self.period_ns = int(round(1e9 / self.cfg.tick_hz))
        # Ring buffers (ns) over the telemetry window; filled counts the valid part.
        self.lateness = np.zeros(WINDOW_TICKS)
        self.loop = np.zeros(WINDOW_TICKS)
        self.filled = 0
        self.timing = Timing()
        self.inbox: list[tuple[str, bytes]] = []   # this tick's packets, reused
        self.early: list[tuple[str, bytes]] = []   # its command-port packets from the wake-up
        self.taken_late = 0     # command-port packets this tick took in after the estimate
        self.stop_requested = False
        self.overrun_log = RateLimit()
        self.error_log = RateLimit()
        self.internal_errors = 0
        self.trace = FixedEncoder(msgs.tick_trace_t)
        self.trace_channel = self.cfg.lcm.channels["tick_trace"]
        # A real robot's bridge in this process (controller/bridges/run.py) is
        # read at each tick and handed each joint_cmd at once, on this thread.
        self.live = bool(getattr(sim, "live", False))
        self.trace_flags = msgs.tick_trace_t.FLAG_SIM if sim is not None and not self.live else 0
        self.late_ns = 0            # this tick's lateness and the previous tick's
        self.prev_loop_ns = 0       # loop body, for the tick trace
        self.log = get_logger("motiond.runtime")
        # systemd (controller/service/sdnotify.py): READY after the first good step,
        # WATCHDOG from this loop only, so a stalled loop stops pinging.
        self.notifier = notifier if notifier is not None else Notifier()
        self.ready_sent = False
        self.stepped = False        # a step succeeded since the last READY/WATCHDOG
        self.notify_due_ns = 0      # _notify runs on ticks at or after this time
        for port, names in INPUTS:
            for name in names:
                if not (name in READINGS and sim is not None):
                    bus.subscribe(port, self.cfg.lcm.channels[name])

    def request_stop(self, signum: int | None = None, _frame: object = None) -> None:
        if not self.stop_requested:
            self.log.info("stop_requested", signal=signal.Signals(signum).name if signum else None)
            self.notifier.stopping()
        self.stop_requested = True

    def _update_timing(self) -> None:
        n = min(self.filled, WINDOW_TICKS)
        if n == 0:
            return
        t = self.timing
        late = np.sort(self.lateness[:n])
        t.lateness_p50_us = _quantile(late, 0.50) / 1e3
        t.lateness_p99_us = _quantile(late, 0.99) / 1e3
        t.lateness_max_us = late[-1] / 1e3
        t.loop_p99_us = _quantile(np.sort(self.loop[:n]), 0.99) / 1e3

    def _tick(self, now_ns: int) -> None:
        # The command port at the wake-up, before anything can wait: what
        # arrived before the tick woke is seen by it (the receive timer
        # starts now). Then the sensors, and the command port once more after
        # the state estimate (Controller.sense): a command that arrived
        # meanwhile makes this tick's joint command, but it came after the
        # tick's start, so its timer starts at the next tick (late_from).
        early = self.early
        early.clear()
        early += self.bus.drain(ACT_PORTS)
        if self.stepper is not None:
            self.stepper.wait()     # the simulated robot's step and readings since the last tick
        inbox = self.inbox
        inbox.clear()
        inbox += self.bus.drain(SENSE_PORTS)
        ch = self.cfg.lcm.channels
        utime = (now_ns + self.ctl.epoch_offset_ns) // 1000
        if self.sim is not None:
            readings = self.sim_readings
            self.sim_readings = None
            if readings is None:            # nothing stepped since the last tick (the first),
                readings = self._read_sim(utime)    # or a live robot: read at the tick
            for name, reading in readings:
                if name in READINGS:
                    inbox.append((ch[name], reading))
        inbox += early
        late_from = len(inbox)
        taken_early = self.bus.taken["command"]
        self.taken_late = 0
        tick = self.ctl.tick
        self.sent = 0
        try:
            self.ctl.sense(now_ns, inbox)
            inbox += self.bus.drain(ACT_PORTS)
            self.taken_late = self.bus.taken["command"] - taken_early
            out = self.ctl.act(now_ns, inbox, self.timing, self._send, late_from)
        except Exception:
            # A bug must not kill the loop: log it (rate-limited) and keep ticking;
            # the last joint command stays on the bus (this tick's, if the
            # failure came after it was sent), and the next tick retries. The
            # packets this tick took in go with it (a replay drops them alike).
            self.internal_errors += 1
            if self.error_log.allow("internal_error", now_ns) is not None:
                self.log.exception("internal_error", count=self.internal_errors)
            self._publish_trace(tick, now_ns, utime)
            return
        self.stepped = True
        self._send(out)                     # the tick's reports, after its joint command
        self._publish_trace(tick, now_ns, utime)
        if self.sim is not None:
            # The joint_cmd as the robot's bridge gets it (its joint convention).
            payload = out.get(ch["joint_cmd"])      # published every tick
            next_utime = utime + self.period_ns // 1000
            if payload is not None and self.stepper is not None:
                self.stepper.start(bytes(payload), next_utime)
            elif payload is not None:
                self._advance_sim(bytes(payload), next_utime)

    def _send(self, out: Outbox) -> None:
        """Publish what `out` holds that this tick has not sent yet, in order:
        the controller calls it as soon as the joint command is in (act's
        send_first), the tick once more for the rest."""
        messages = out.messages
        for i in range(self.sent, len(messages)):
            port, channel, data = messages[i]
            self.bus.publish(port, channel, data)
        self.sent = len(messages)

    def _advance_sim(self, joint_cmd: bytes, next_utime: int) -> None:
        """The simulated robot between two ticks, as a robot and its bridge:
        the body moves under the joint command, then its sensors are read and
        published (stamped with the next tick's nominal time) for the next
        tick to take in. On the sim's thread while the loop sleeps."""
        assert self.sim is not None
        self.sim.command(joint_cmd)
        if not self.live:
            self.sim_readings = self._read_sim(next_utime)

    def _read_sim(self, utime: int) -> list[tuple[str, bytes]]:
        """The simulated robot's readings (joint_state, imu, sim_state), published."""
        assert self.sim is not None
        ch = self.cfg.lcm.channels
        readings = self.sim.messages(utime)
        for name, reading in readings:
            self.bus.publish("joint", ch[name], reading)
        return readings

    def _publish_trace(self, tick: int, now_ns: int, utime: int) -> None:
        """What this tick took in and how it was timed (tick_trace_t), for
        motionctl replay and make bench; fields in the .lcm file's order."""
        bus = self.bus
        flags = self.trace_flags | (msgs.tick_trace_t.FLAG_SHUTDOWN if self.ctl.shutting_down else 0)
        data = self.trace.encode(
            tick, now_ns, utime, bus.taken["command"], bus.taken["joint"],
            _i32(bus.crc["command"]), _i32(bus.crc["joint"]), _i32(self.internal_errors), flags,
            min(self.late_ns, I32_MAX), min(self.prev_loop_ns, I32_MAX),
            _i32(self.ctl.counters.commands_accepted & 0xFFFFFFFF), self.ctl.plan_tick,
            self.taken_late)
        bus.publish("joint", self.trace_channel, data)

    def run(self) -> int:
        """Run until stopped (or max_ticks); returns the process exit code."""
        if self.sim is not None and not self.live:
            self.stepper = SimStepper(self._advance_sim)
        try:
            with FrozenHeap(self.cfg.realtime.gc_freeze) as heap:
                ticks = self._loop(heap)
        finally:
            if self.stepper is not None:
                self.stepper.close()
                self.stepper = None
        self.log.info("shutdown", ticks=ticks, mode=self.cfg.fsm.name(self.ctl.fsm.mode),
                      gc_collections=heap.collections)
        return 0

    def _loop(self, heap: FrozenHeap) -> int:
        deadline = lib.mk_now_ns()
        ticks = 0
        shutdown_left = SHUTDOWN_TICKS
        while True:
            wake = lib.mk_now_ns()
            late = wake - deadline
            self.late_ns = max(0, late)
            slot = self.filled % WINDOW_TICKS
            self.lateness[slot] = self.late_ns
            if late >= self.period_ns:
                # A whole period or more behind: count the missed ticks and
                # restart the schedule from now instead of bursting to catch up.
                missed = late // self.period_ns
                self.timing.tick_overruns += int(missed)
                if self.overrun_log.allow("tick_overrun", wake) is not None:
                    self.log.warning("tick_overrun", missed_ticks=int(missed),
                                     late_ms=round(late / 1e6, 3))
                deadline = wake
            if self.stop_requested and not self.ctl.shutting_down:
                self.ctl.shutdown()             # this tick is the first of the damper's
            if wake >= self.notify_due_ns:      # one integer compare per tick
                self._notify(wake)              # first in the tick: pings keep their spacing
            self._tick(wake)
            collected = heap.collect_if_due()   # after the tick's outputs are out
            if collected is not None:
                self.log.info("gc_collect", objects=collected[0], ms=round(collected[1] / 1e6, 3))
            ticks += 1
            if ticks == 1:
                deadline = lib.mk_now_ns()  # the first tick warms caches; start the schedule after it
            self.prev_loop_ns = lib.mk_now_ns() - wake
            self.loop[slot] = self.prev_loop_ns
            self.filled += 1
            if self.ctl.tick % self.ctl.publisher.status_every == 0:
                self._update_timing()           # for the next tick's status, off its path
            if self.ctl.shutting_down:          # a damped tick: a signal that lands
                shutdown_left -= 1              # mid-tick starts the count at the next
                if shutdown_left <= 0:
                    break
            if self.max_ticks is not None and ticks >= self.max_ticks:
                break
            deadline += self.period_ns
            lib.mk_sleep_until(deadline)
        return ticks

    def _notify(self, now_ns: int) -> None:
        """READY=1 once, then WATCHDOG=1 every half watchdog period, each only
        if a step succeeded since the last one: a loop that stalls, or whose
        controller fails on every tick, stops pinging and systemd restarts it."""
        if not self.stepped:
            return                      # nothing succeeded yet: check again next tick
        self.stepped = False
        n = self.notifier
        if not self.ready_sent:
            self.ready_sent = True
            n.ready(status=self._status_text())
            policy = os.sched_getscheduler(0)
            self.log.info("ready", notify=n.enabled, watchdog_ms=n.watchdog_ns // 1_000_000,
                          sched_policy=_SCHED_NAMES.get(policy, str(policy)),
                          sched_priority=os.sched_getparam(0).sched_priority)
        if n.watchdog_ns:
            n.ping(now_ns, status=self._status_text())
            self.notify_due_ns = n.next_ping_ns
        else:
            self.notify_due_ns = NEVER

    def _status_text(self) -> str:
        """The line `systemctl status` shows: refreshed with every watchdog ping."""
        return (f"{self.cfg.robot}: mode {self.cfg.fsm.name(self.ctl.fsm.mode)}, "
                f"tick {self.ctl.tick}, overruns {self.timing.tick_overruns}, "
                f"internal errors {self.internal_errors}")


_SCHED_NAMES = {os.SCHED_OTHER: "other", os.SCHED_FIFO: "fifo", os.SCHED_RR: "rr",
                os.SCHED_BATCH: "batch", os.SCHED_IDLE: "idle"}


def _i32(x: int) -> int:
    """An unsigned 32-bit value as the int32 the wire type holds."""
    return x - (1 << 32) if x >= 1 << 31 else x


def _quantile(sorted_values: np.ndarray, q: float) -> float:
    """The q-quantile of sorted values (nearest rank): cheap enough for the tick."""
    return float(sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))])


def epoch_offset_ns() -> int:
    """Offset from CLOCK_MONOTONIC to the Unix epoch, taken once at start, in
    whole microseconds so that a message's utime and its tick's monotonic time
    give the offset back exactly (replay)."""
    return (time.time_ns() - lib.mk_now_ns()) // 1000 * 1000
