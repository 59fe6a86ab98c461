"""What every robot bridge reports to motiond and to people: its state, why,
the robot's motor flags and its counters (bridge_status_t), at 10 Hz and on
every change; and the bounded-rate log of what it drops."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from controller import msgs
from controller.logs import RateLimit, get_logger

STARTING, ENTERING, ACTIVE, FAULT = (msgs.bridge_status_t.STARTING, msgs.bridge_status_t.ENTERING,
                                     msgs.bridge_status_t.ACTIVE, msgs.bridge_status_t.FAULT)
STATE_NAMES = {STARTING: "STARTING", ENTERING: "ENTERING", ACTIVE: "ACTIVE", FAULT: "FAULT"}
STATUS_PERIOD_NS = 100_000_000     # 10 Hz, and on every change


FORWARD_WINDOW = 1000   # forwarded commands the latency figures cover


@dataclass
class Counters:
    states_received: int = 0
    commands_sent: int = 0
    commands_dropped: int = 0
    states_rejected: int = 0
    stale_events: int = 0


@dataclass
class BridgeStatus:
    """The bridge's state machine's visible part and its bridge_status."""
    bridge: str
    num_joints: int
    state: int = STARTING
    reason: str = "no robot state yet"
    flags: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    counters: Counters = field(default_factory=Counters)

    def __post_init__(self) -> None:
        self.flags = np.zeros(self.num_joints, dtype=np.int32)
        self.log = get_logger(f"bridge.{self.bridge}")
        self.limit = RateLimit()
        self._msg = msgs.bridge_status_t()
        self._msg.bridge = self.bridge
        self._msg.num_joints = self.num_joints
        self._sent: tuple[int, str, bytes] | None = None
        self._sent_ns = 0
        self.since_ns = 0          # when the state began (enter)
        self.forward_ns = np.zeros(FORWARD_WINDOW)     # ring: the bridge's time per forwarded command
        self.forwards = 0

    def enter(self, now_ns: int, state: int, reason: str = "", stale: bool = False) -> None:
        """Change state (logged once per change); `since_ns` is when the state
        began. `stale`: the robot's state went too old (counted when it ends
        ACTIVE)."""
        if state == self.state and reason == self.reason:
            return
        if state != self.state:
            self.since_ns = now_ns
            if stale and state == FAULT and self.state == ACTIVE:
                self.counters.stale_events += 1
        level = self.log.warning if state == FAULT else self.log.info
        level("bridge_state", state=STATE_NAMES[state], was=STATE_NAMES[self.state], reason=reason or None)
        self.state, self.reason = state, reason

    def text(self) -> str:
        """The state in words, with its reason: "ENTERING (asking the board ...)"."""
        return STATE_NAMES[self.state] + (f" ({self.reason})" if self.reason else "")

    def dropped(self, now_ns: int, event: str, reason: str, state: bool = False) -> None:
        """Count and log (at a bounded rate) a robot message (`state`) or a
        joint_cmd the bridge did not use."""
        if state:
            self.counters.states_rejected += 1
        else:
            self.counters.commands_dropped += 1
        suppressed = self.limit.allow(event, now_ns)
        if suppressed is not None:
            self.log.warning(event, reason=reason, suppressed=suppressed)

    def forwarded(self, ns: int) -> None:
        """A joint_cmd went out to the robot `ns` after it came in."""
        self.forward_ns[self.forwards % FORWARD_WINDOW] = ns
        self.forwards += 1

    def forward_us(self) -> tuple[float, float, float]:
        """p50, p99 and max of the last FORWARD_WINDOW forwards, in us (0s: none yet)."""
        n = min(self.forwards, FORWARD_WINDOW)
        if n == 0:
            return 0.0, 0.0, 0.0
        a = np.sort(self.forward_ns[:n])
        return (float(a[n // 2]) / 1e3, float(a[min(n - 1, int(0.99 * n))]) / 1e3, float(a[-1]) / 1e3)

    def message(self, now_ns: int, utime: int, state_age_ms: float) -> bytes | None:
        """The bridge_status to publish now (10 Hz and on every change), or None."""
        key = (self.state, self.reason, self.flags.tobytes())
        if self._sent == key and now_ns - self._sent_ns < STATUS_PERIOD_NS:
            return None
        self._sent, self._sent_ns = key, now_ns
        m, c = self._msg, self.counters
        m.utime = utime
        m.state = self.state
        m.reason = self.reason if self.state != ACTIVE else ""
        m.motor_flags = [int(x) for x in self.flags]
        m.state_age_ms = float(min(state_age_ms, 1e9))
        m.states_received = c.states_received
        m.commands_sent, m.commands_dropped = c.commands_sent, c.commands_dropped
        m.states_rejected, m.stale_events = c.states_rejected, c.stale_events
        m.forward_p50_us, m.forward_p99_us, m.forward_max_us = self.forward_us()
        return m.encode()


@dataclass
class TickOut:
    """What one bridge tick sends: frames to the robot (motor_ctrl, LowCmd_), and
    (channel key, bytes) to motiond's joint port."""
    to_robot: list[bytes] = field(default_factory=list)
    to_motiond: list[tuple[str, bytes]] = field(default_factory=list)
