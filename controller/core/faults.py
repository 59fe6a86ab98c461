"""Faults of the robot side that damp the robot on their own (docs/RELIABILITY.md).

Two watches, each a small state machine on the controller's clock; the
controller acts on what they find (the damper, EDAMP, status and a log line):

* JointStateWatch: the robot bridge (or sim) stopped publishing joint_state.
  It starts watching at the first joint_state: before that the controller
  refuses to leave OFF anyway.
* TrackingWatch: a joint stays farther than a bound from the position it was
  commanded, for a number of ticks in a row, while it is stiff enough for
  that to mean something (not limp, not a compliant swing leg).
* RobotFaultWatch: what a robot bridge reports (bridge_status): a motor's
  flag word with an error or warning bit for 25 ticks (SPEC §5.8), or the
  bridge itself in FAULT (the robot's firmware took over, its link broke).
"""
from __future__ import annotations

import numpy as np

from controller.motion.scripts import ms_to_ticks
from controller.robot.config import SafetyConfig
from controller.robot.native import double_ptr, ffi, lib


class JointStateWatch:
    def __init__(self, timeout_ms: float, tick_hz: float) -> None:
        tick_ns = 1e9 / tick_hz
        self.timeout_ticks = ms_to_ticks(timeout_ms, tick_hz)
        # Tick times carry wake-up jitter: half a tick of slack makes the
        # loss fire on the exact tick (as the command timeout does, intake.py).
        self.limit_ns = int((self.timeout_ticks - 0.5) * tick_ns)
        self.last_ns: int | None = None   # tick time that took in the last good joint_state
        self.lost = False

    def received(self, now_ns: int) -> int | None:
        """A good joint_state was taken in. Returns the outage it ends (ns), if any."""
        gap = now_ns - self.last_ns if self.lost and self.last_ns is not None else None
        self.last_ns = now_ns
        self.lost = False
        return gap

    def fresh(self, now_ns: int) -> bool:
        """A good message has arrived and the stream is not older than the
        timeout (what `check` would call lost)."""
        return self.last_ns is not None and now_ns - self.last_ns < self.limit_ns

    def gap_ns(self, now_ns: int) -> int:
        return 0 if self.last_ns is None else now_ns - self.last_ns

    def check(self, now_ns: int) -> bool:
        """True on the one tick the stream is found lost (then `lost` stays set
        until the next good joint_state)."""
        if self.lost or self.last_ns is None or now_ns - self.last_ns < self.limit_ns:
            return False
        self.lost = True
        return True


class TrackingWatch:
    def __init__(self, safety: SafetyConfig, num_joints: int, tick_hz: float) -> None:
        self.bound = safety.tracking_error_rad
        self.min_kp = safety.tracking_min_kp
        self.ticks = ms_to_ticks(safety.tracking_error_ms, tick_hz)
        self.n = num_joints
        self.over = np.zeros(num_joints, dtype=np.int64)   # ticks in a row beyond the bound
        self._err = np.zeros(num_joints)
        self._c_over = ffi.cast("int64_t *", ffi.from_buffer(self.over))
        self._c_err = double_ptr(self._err)
        # The arrays check() is given (the controller's and kernel's, kept
        # for life) and their C pointers, made again only if they change.
        self._bound_to: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._c_in: tuple[object, object, object] = (ffi.NULL, ffi.NULL, ffi.NULL)

    def reset(self) -> None:
        self.over[:] = 0

    def check(self, q: np.ndarray, target: np.ndarray, kp: np.ndarray) -> tuple[int, float] | None:
        """(joint, error in rad) once a joint has been beyond the bound for
        `ticks` ticks in a row, else None. `target` and `kp` are what the
        previous tick commanded, `q` what has been measured since (float64
        arrays of num_joints; csrc/watch.c counts)."""
        bound = self._bound_to
        if bound is None or bound[0] is not q or bound[1] is not target or bound[2] is not kp:
            for a in (q, target, kp):
                if a.dtype != np.float64 or a.shape != (self.n,) or not a.flags.c_contiguous:
                    raise ValueError(f"tracking check: {self.n} contiguous float64 values expected")
            self._bound_to = (q, target, kp)
            self._c_in = (double_ptr(q), double_ptr(target), double_ptr(kp))
        joint = lib.mk_tracking_check(self.n, *self._c_in, self.bound, self.min_kp, self.ticks,
                                      self._c_over, self._c_err)
        return None if joint < 0 else (joint, float(self._err[joint]))


MOTOR_FAULT_BITS = 0x3FFFFFFF     # bits 0-29 of a motor flag word: errors and warnings;
                                  # 30-31 are the motor's mode (SPEC §5.9)
MOTOR_FAULT_TICKS = 25            # a flag must stand this long (SPEC §5.8)
MOTOR_BITS = {0: "offline", 1: "coil over-temperature", 2: "driver chip fault",
              3: "under-voltage", 4: "over-voltage", 5: "phase B over-current",
              6: "phase C over-current", 8: "encoder not calibrated", 17: "phase A over-current",
              24: "coil temperature warning"}


def describe_motor_flags(word: int) -> str:
    """The error and warning bits of one motor flag word, in words."""
    names = [MOTOR_BITS.get(b, "overload" if 9 <= b <= 16 else f"bit {b}")
             for b in range(30) if word >> b & 1]
    return ", ".join(dict.fromkeys(names))


class RobotFaultWatch:
    """The robot side's own faults, from a bridge's bridge_status. `faulted`
    holds while one stands; `check` names it on the tick it is found."""

    def __init__(self, joint_names: list[str], tick_hz: float) -> None:
        self.names = joint_names
        self.limit_ns = int((MOTOR_FAULT_TICKS - 0.5) * 1e9 / tick_hz)
        self.flags = np.zeros(len(joint_names), dtype=np.int32)   # controller order
        self.flags_since_ns: int | None = None
        self.bridge_fault = ""          # the bridge's reason while it is in FAULT
        self.reason: str | None = None  # the fault that stands, once found
        self._reported = False

    def received(self, now_ns: int, flags: np.ndarray, bridge_fault: str) -> None:
        """A bridge_status: its motor flags (controller order) and, when it is
        in FAULT, its reason ("" otherwise)."""
        self.flags[:] = flags
        if (flags & MOTOR_FAULT_BITS).any():
            if self.flags_since_ns is None:
                self.flags_since_ns = now_ns
        else:
            self.flags_since_ns = None
        self.bridge_fault = bridge_fault

    def _standing(self, now_ns: int) -> str | None:
        if self.bridge_fault:
            return f"robot bridge fault: {self.bridge_fault}"
        if self.flags_since_ns is not None and now_ns - self.flags_since_ns >= self.limit_ns:
            bad = [f"{self.names[j]} 0x{int(w) & MOTOR_FAULT_BITS:x} ({describe_motor_flags(int(w))})"
                   for j, w in enumerate(self.flags) if w & MOTOR_FAULT_BITS]
            return "motor fault: " + "; ".join(bad)
        return None

    def check(self, now_ns: int) -> str | None:
        """The fault's reason on the one tick it is found; then None until it
        has cleared and comes again. `faulted` says whether one stands."""
        self.reason = self._standing(now_ns)
        if self.reason is None:
            self._reported = False
            return None
        if self._reported:
            return None
        self._reported = True
        return self.reason

    @property
    def faulted(self) -> bool:
        return self.reason is not None
