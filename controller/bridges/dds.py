"""The Go2's side of its bridge: Unitree SDK2's topics over DDS (cyclonedds,
docs/DEPENDENCIES.md). LowState_ in, LowCmd_ out (bytes the bridge packed,
written as they are), and once at start the motion switcher asked who owns
the robot (its CheckMode call), on a thread, so the bridge starts at once."""
from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

from controller.bridges.unitree_go2 import UnitreeGo2Bridge
from controller.logs import get_logger
from controller.robot.config import Config

CHECK_MODE = 1001          # the motion switcher's CheckMode api id
TAKE_MAX = 64              # LowState_ samples taken per call


def use_interface(interface: str) -> None:
    """Point cyclonedds at one network interface (before the first
    participant is made): the robot's Ethernet, or `lo` for a simulator."""
    if interface:
        os.environ["CYCLONEDDS_URI"] = (
            "<CycloneDDS><Domain><General><Interfaces>"
            f'<NetworkInterface name="{interface}" priority="default" multicast="default"/>'
            "</Interfaces></General></Domain></CycloneDDS>")


class DdsLink:
    def __init__(self, cfg: Config, bridge: UnitreeGo2Bridge) -> None:
        use_interface(cfg.bridge.interface)
        from cyclonedds.domain import DomainParticipant
        from cyclonedds.pub import DataWriter
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic

        from controller.bridges.unitree_idl import LowCmd_, LowState_
        self.cfg = cfg
        self.bridge = bridge
        self.log = get_logger("bridge.unitree_go2")
        self.dp = DomainParticipant(cfg.bridge.domain)
        self.reader = DataReader(self.dp, Topic(self.dp, "rt/lowstate", LowState_))
        self.writer = DataWriter(self.dp, Topic(self.dp, "rt/lowcmd", LowCmd_))
        # LowCmd_ goes out as the bytes the bridge packed (with their CRC): the
        # C layer's raw write, a tenth of serialising the dataclass each tick.
        from cyclonedds._clayer import ddspy_write
        self._write = ddspy_write
        self._switcher = threading.Thread(target=self._ask_switcher, name="go2-switcher", daemon=True)
        self._switcher.start()

    def take(self, now_ns: int) -> None:
        for sample in self.reader.take(N=TAKE_MAX):
            self.bridge.lowstate(now_ns, sample)

    def send(self, frames: list[bytes]) -> None:
        for frame in frames:
            self._write(self.writer._ref, frame)

    def filenos(self) -> list[int]:
        return []

    def _ask_switcher(self) -> None:
        answer = ask_motion_switcher(self.dp, self.cfg.bridge.switcher_timeout_s)
        released, text = judge_switcher(answer, self.cfg.bridge)
        (self.log.info if released else self.log.warning)("motion_switcher", released=released, said=text)
        self.bridge.motion_switcher(released, text)


def ask_motion_switcher(dp: Any, timeout_s: float) -> tuple[int, str] | None:
    """(status code, data) of the motion switcher's CheckMode, or None when
    nothing answered within timeout_s."""
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic

    from controller.bridges.unitree_idl import (
        Request_,
        RequestHeader_,
        RequestIdentity_,
        RequestLease_,
        RequestPolicy_,
        Response_,
    )
    writer = DataWriter(dp, Topic(dp, "rt/api/motion_switcher/request", Request_))
    reader = DataReader(dp, Topic(dp, "rt/api/motion_switcher/response", Response_))
    ident = time.time_ns() // 1000
    request = Request_(RequestHeader_(RequestIdentity_(ident, CHECK_MODE), RequestLease_(0),
                                      RequestPolicy_(0, False)), "{}", [])
    end = time.monotonic() + timeout_s
    time.sleep(min(0.2, timeout_s / 2))       # let discovery find a service first
    writer.write(request)
    while time.monotonic() < end:
        for r in reader.take(N=16):
            if r.header.identity.id == ident:
                return int(r.header.status.code), r.data
        time.sleep(0.01)
    return None


def judge_switcher(answer: tuple[int, str] | None, bcfg: Any) -> tuple[bool, str]:
    """May the bridge send low-level commands, and why (in words)."""
    if answer is None:
        if bcfg.simulator:
            return True, (f"no motion switcher answered in {bcfg.switcher_timeout_s:g} s: going on, "
                          "as bridge.simulator says this is a simulator (Unitree's has none)")
        return False, (f"no motion switcher answered in {bcfg.switcher_timeout_s:g} s: a Go2 has one, "
                       "so nothing is sent; if this is Unitree's simulator, set bridge.simulator: true")
    code, data = answer
    if code != 0:
        return False, f"the motion switcher answered CheckMode with error {code}: nothing is sent"
    try:
        name = str(json.loads(data or "{}").get("name", ""))
    except (ValueError, AttributeError):
        return False, f"the motion switcher's answer is not understood ({data!r}): nothing is sent"
    if name:
        return False, (f"sport mode {name!r} owns the Go2: release it (the app, or the motion "
                       "switcher's ReleaseMode) and start the bridge again; nothing is sent")
    return True, "the motion switcher says no sport mode owns the Go2"
