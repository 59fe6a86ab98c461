"""`motiond --sim`'s physics step on its own thread
(controller/service/sim_thread.py): the loop publishes byte for byte what it
publishes with the step done in line, on a fake clock; an exception in the
step reaches the tick thread; the thread ends with the loop."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from controller import msgs
from controller.core.controller import Controller
from controller.robot.config import load_config
from controller.robot.native import Payload
from controller.service import runtime as runtime_module
from controller.service.runtime import Runtime
from controller.service.sim_thread import SimStepper
from controller.sim.physics import PhysicsRobot


class FakeClock:
    """Sleeps return at once, at their deadline."""

    def __init__(self) -> None:
        self.now = 5_000_000_000

    def mk_now_ns(self) -> int:
        return self.now

    def mk_sleep_until(self, deadline: int) -> None:
        self.now = max(self.now, deadline)


class CommandBus:
    """Gives the controller a stand command (12) every 50 drains (the
    heartbeat), and keeps everything published."""

    def __init__(self, channel: str) -> None:
        self.taken: dict[str, int] = {}
        self.crc: dict[str, int] = {}
        self.sent: list[tuple[str, bytes]] = []
        self.channel = channel
        self.drains = 0
        msg = msgs.robot_control_cmd_lcmt()
        msg.mode, msg.life_count = 12, 1
        self.command = msg.encode()

    def subscribe(self, port_name: str, channel: str) -> None:
        self.taken.setdefault(port_name, 0)
        self.crc.setdefault(port_name, 0)

    def drain(self, ports: Sequence[str] | None = None) -> list[tuple[str, bytes]]:
        if ports is not None and "command" not in ports:
            return []                   # the sensors' port: the sim is in process
        self.drains += 1
        return [(self.channel, self.command)] if self.drains % 50 == 1 else []

    def publish(self, port_name: str, channel: str, data: Payload) -> None:
        self.sent.append((channel, bytes(data)))


class InlineStepper:
    """The job done in line, as Runtime._tick does without a stepper."""

    def __init__(self, job: Any) -> None:
        self.job = job

    def start(self, *args: Any) -> None:
        self.job(*args)

    def wait(self) -> None:
        pass

    def close(self) -> None:
        pass


def run_daemon(monkeypatch: pytest.MonkeyPatch, threaded: bool, ticks: int) -> list[tuple[str, bytes]]:
    monkeypatch.setattr(runtime_module, "lib", FakeClock())
    if not threaded:
        monkeypatch.setattr(runtime_module, "SimStepper", InlineStepper)
    cfg = load_config()
    ctl = Controller(cfg)
    bus = CommandBus(cfg.lcm.channels["command"])
    rt = Runtime(ctl, bus, sim=PhysicsRobot(cfg), max_ticks=ticks)
    assert rt.run() == 0 and rt.stepper is None
    return bus.sent


def test_the_threaded_step_publishes_exactly_what_the_inline_step_does(monkeypatch):
    threaded = run_daemon(monkeypatch, True, 1600)
    inline = run_daemon(monkeypatch, False, 1600)
    assert len(threaded) == len(inline) > 1600 * 3
    assert threaded == inline
    # The robot did stand up meanwhile (the comparison is not of a limp heap).
    cfg = load_config()
    states = [msgs.sim_state_t.decode(d) for c, d in threaded if c == cfg.lcm.channels["sim_state"]]
    assert states[-1].position[2] > 0.2


class Steps:
    def __init__(self, fail_at: int | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail_at = fail_at

    def command(self, *args: Any) -> None:
        if len(self.calls) == self.fail_at:
            raise RuntimeError("the simulator broke")
        self.calls.append(args)


def test_steps_run_in_order_and_wait_returns_after_each():
    sim = Steps()
    stepper = SimStepper(sim.command)
    for i in range(50):
        stepper.start(i)
        stepper.wait()
        assert sim.calls[-1] == (i,)
    stepper.close()
    assert not stepper._thread.is_alive()


def test_an_exception_in_the_step_is_raised_by_the_next_wait_and_the_thread_goes_on():
    sim = Steps(fail_at=3)
    stepper = SimStepper(sim.command)
    for i in range(3):
        stepper.start(i)
        stepper.wait()
    stepper.start(3)
    with pytest.raises(RuntimeError, match="the simulator broke"):
        stepper.wait()
    sim.fail_at = None
    stepper.start(4)
    stepper.wait()
    assert [c[0] for c in sim.calls] == [0, 1, 2, 4]
    stepper.close()
    assert not stepper._thread.is_alive()
