"""The daemon's LCM bus (controller/service/transport.py) on in-process
memq:// (no socket): a select() a signal interrupts does not kill the tick."""
from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from controller.robot.config import LcmConfig, load_config
from controller.service import transport
from controller.service.transport import Bus


class MemqLcm(LcmConfig):
    def url(self, port_name: str) -> str:
        return "memq://"


class Interrupted:
    """An lcm.LCM whose handle_timeout fails `failures` times (-1: a signal
    interrupted its select), then is the real one."""

    def __init__(self, real: Any, failures: int) -> None:
        self.real, self.failures = real, failures

    def handle_timeout(self, ms: int) -> int:
        if self.failures:
            self.failures -= 1
            raise OSError("lcm_handle_timeout() returned -1")
        return int(self.real.handle_timeout(ms))


def memq_bus() -> Bus:
    cfg = load_config().lcm
    return Bus(MemqLcm(**{f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg) if f.init}))


def test_an_interrupted_handle_leaves_the_packets_for_the_next_drain() -> None:
    bus = memq_bus()
    bus.subscribe("command", "robot_control_cmd")
    real = bus._lcm["command"]
    bus._lcm["command"] = Interrupted(real, 1)        # type: ignore[assignment]
    real.publish("robot_control_cmd", b"one")
    assert bus.drain() == [] and bus.handle_failures == 1
    assert bus.drain() == [("robot_control_cmd", b"one")]


def test_a_handle_that_keeps_failing_is_raised() -> None:
    bus = memq_bus()
    bus.subscribe("command", "robot_control_cmd")
    bus._lcm["command"] = Interrupted(bus._lcm["command"], 10**6)   # type: ignore[assignment]
    for _ in range(transport.HANDLE_FAILURES_MAX):
        bus.drain()
    with pytest.raises(OSError):
        bus.drain()
