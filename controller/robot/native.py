"""The C kernel's Python face.

`Kernel` owns every per-joint buffer the kernel reads and writes. Behaviours
describe motion by writing segments (`move`, `hold`) and gains (`set_gains`);
`step(t)` makes the single C call of the tick. The cffi pointers are made once
here, so a tick allocates nothing.
"""
from __future__ import annotations

import ctypes

import numpy as np

try:
    from controller._kernel import ffi, lib
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError(
        "the C kernel is not built: run `make build` (or `pip install -e .`)"
    ) from exc


def double_ptr(a: np.ndarray) -> object:
    """A C `double *` to a C-ordered float64 array, for the C side to read or
    write in place (the caller keeps the array alive)."""
    return ffi.cast("double *", ffi.from_buffer(a))


# What lcm's publish() takes: bytes, or a reused publish_buffer.
Payload = bytes | ctypes.Array


def publish_buffer(size: int) -> ctypes.Array:
    """A reusable, writable buffer that lcm's publish() takes as it is.

    publish() accepts only objects whose buffer the interpreter never has to
    release: bytes (new for every message) and ctypes arrays, but neither
    bytearray nor memoryview. A ctypes array encoded in place each tick costs
    no allocation; publish() sends or copies it before it returns."""
    return (ctypes.c_char * size)()


LINEAR = lib.MK_LINEAR
CUBIC = lib.MK_CUBIC
QUINTIC = lib.MK_QUINTIC

_INPUTS = ("t0", "dur", "q0", "q1", "v0", "v1", "g_t0", "g_dur",
           "kp0", "kp1", "kd0", "kd1", "tau_ff", "q_min", "q_max", "v_max", "step_max")
_OUTPUTS = ("pos", "vel", "kp", "kd", "tau")


# What a joint index may be: one joint, a slice, or an index array.
Index = int | slice | np.ndarray | list[int]
Values = float | np.ndarray


class Kernel:
    """Segments, gains and limits for n joints, evaluated by the C kernel."""

    # Inputs (segments, gain ramps, limits) and outputs, one float64 per
    # joint each; made in __init__ from _INPUTS and _OUTPUTS.
    t0: np.ndarray
    dur: np.ndarray
    q0: np.ndarray
    q1: np.ndarray
    v0: np.ndarray
    v1: np.ndarray
    g_t0: np.ndarray
    g_dur: np.ndarray
    kp0: np.ndarray
    kp1: np.ndarray
    kd0: np.ndarray
    kd1: np.ndarray
    tau_ff: np.ndarray
    q_min: np.ndarray
    q_max: np.ndarray
    v_max: np.ndarray
    step_max: np.ndarray
    pos: np.ndarray
    vel: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    tau: np.ndarray

    def __init__(self, q_min: np.ndarray, q_max: np.ndarray, v_max: np.ndarray,
                 step_max: np.ndarray | float = 0.0) -> None:
        n = len(q_min)
        self.n = n
        for name in _INPUTS + _OUTPUTS:
            setattr(self, name, np.zeros(n, dtype=np.float64))
        self.profile = np.zeros(n, dtype=np.int32)
        self.q_min[:] = q_min
        self.q_max[:] = q_max
        self.v_max[:] = v_max
        self.step_max[:] = step_max
        self._plan = ffi.new("mk_plan *")
        self._plan.n = n
        for name in _INPUTS + _OUTPUTS:
            setattr(self._plan, name, double_ptr(getattr(self, name)))
        self._plan.profile = ffi.cast("int32_t *", ffi.from_buffer(self.profile))
        self._step = lib.mk_step
        self.flagged = 0
        # Nothing commanded yet: the outputs (zeros) stand for no measurement.
        self.tracking = True
        # The joint command's encoding (csrc/wire.c), rewritten in place every tick.
        self._wire = publish_buffer(lib.mk_joint_command_size(n))
        self._wire_ptr = ffi.from_buffer("uint8_t[]", self._wire)
        self._map = ffi.NULL            # the robot's joint map; NULL: the identity
        self._map_arrays: tuple[np.ndarray, ...] = ()

    @property
    def native(self) -> object:
        """The kernel's C plan (mk_plan *), for C code that writes its segments
        (csrc/legs.c, mk_leg_targets)."""
        return self._plan

    # -- writing segments -------------------------------------------------
    def move(self, start: Values, end: Values, t0: Values, duration: Values,
             profile: int = LINEAR, idx: Index = slice(None), v_start: Values = 0.0,
             v_end: Values = 0.0) -> None:
        """Joints `idx` follow `profile` from `start` at t0 to `end` at t0 + duration."""
        self.q0[idx] = start
        self.q1[idx] = end
        self.v0[idx] = v_start
        self.v1[idx] = v_end
        self.t0[idx] = t0
        self.dur[idx] = duration
        self.profile[idx] = profile
        self.tracking = False

    def stream(self, q: np.ndarray, q_prev: np.ndarray, dt: float) -> None:
        """A behaviour that computes a target every tick: reach q now, with
        the velocity that got there from q_prev one tick ago as the
        feed-forward. A set point (no duration) carrying it: a one-tick
        segment from t - dt would lose it whenever (t - (t - dt)) / dt rounds
        to 1.0, where a finished segment holds its end with no velocity.
        Every joint; q and q_prev float64 of n (csrc/kernel.c, mk_stream)."""
        if q.shape != (self.n,) or q_prev.shape != (self.n,) or q.dtype != np.float64 \
                or q_prev.dtype != np.float64:
            raise ValueError(f"stream: {self.n} float64 joint values expected, "
                             f"got {q.shape} {q.dtype} and {q_prev.shape} {q_prev.dtype}")
        lib.mk_stream(self._plan, ffi.from_buffer("double[]", np.ascontiguousarray(q)),
                      ffi.from_buffer("double[]", np.ascontiguousarray(q_prev)), dt)
        self.tracking = False

    def hold(self, q: Values, idx: Index = slice(None)) -> None:
        """Joints `idx` hold position q (zero velocity)."""
        self.move(q, q, 0.0, 0.0, LINEAR, idx)

    def track(self, q: Values) -> None:
        """Hold q and take it as the previous output, bypassing the step limit:
        for limp states, whose position target drives nothing."""
        self.hold(q)
        self.pos[:] = q
        self.tracking = True

    def seed(self, q: Values) -> bool:
        """Take measured positions q as the previous output while the kernel
        only tracks the measurement (nothing commanded yet, or a limp state's
        `track`) and the output is limp (every kp 0), so that the step limit
        and every interpolation seeded from `pos` start where the joints are
        now, not at zero or at a pose measured before. True if it did."""
        if not self.tracking or self.kp.any():
            return False
        self.pos[:] = q
        return True

    def set_gains(self, kp: Values, kd: Values, t0: Values = 0.0, ramp: Values = 0.0,
                  idx: Index = slice(None)) -> None:
        """Gains go to (kp, kd): at once, or linearly over `ramp` seconds from
        the gains in force at t0."""
        if ramp > 0.0:
            self.kp0[idx] = self.kp[idx]
            self.kd0[idx] = self.kd[idx]
        else:
            self.kp0[idx] = kp
            self.kd0[idx] = kd
        self.kp1[idx] = kp
        self.kd1[idx] = kd
        self.g_t0[idx] = t0
        self.g_dur[idx] = ramp

    def shift(self, dt: float, idx: Index = slice(None)) -> None:
        """Delay the running segments by dt (a frozen stage clock)."""
        self.t0[idx] += dt

    # -- the tick -----------------------------------------------------------
    def step(self, t: float) -> int:
        """Evaluate every joint at time t into pos/vel/kp/kd/tau."""
        self.flagged = self._step(self._plan, t)
        return self.flagged

    def add_damping(self, damping: np.ndarray, torque_limit: np.ndarray, scratch: np.ndarray) -> None:
        """After step(): a stiff joint's (kp > 0) feed-forward gains its own
        damping x its target speed, within its torque limit: what the joint
        loses to its damping (config joint_damping, a maker's model's) at the
        planned speed. Limp joints (the damper, OFF) get none. The controller
        and the motion optimiser's rollouts both add it, so a motion is
        searched on the torques it is played with."""
        np.multiply(damping, self.vel, out=scratch)
        scratch[self.kp <= 0.0] = 0.0
        self.tau += scratch
        np.clip(self.tau, -torque_limit, torque_limit, out=self.tau)

    def set_joint_map(self, order: np.ndarray, direction: np.ndarray, offset: np.ndarray) -> None:
        """Encode joint commands in the robot's own convention (per wire
        slot k: the joint order[k], times direction[k], plus offset[k] for a
        position; controller/robot/config/joint_map.py)."""
        arrays = (np.ascontiguousarray(order, dtype=np.int32),
                  np.ascontiguousarray(direction, dtype=np.float64),
                  np.ascontiguousarray(offset, dtype=np.float64))
        if any(a.shape != (self.n,) for a in arrays):
            raise ValueError(f"a joint map of {self.n} joints needs {self.n} entries per array")
        self._map_arrays = arrays       # kept alive: C holds their addresses
        self._map = ffi.new("mk_joint_map *", {
            "n": self.n, "order": ffi.cast("int32_t *", ffi.from_buffer(arrays[0])),
            "direction": double_ptr(arrays[1]), "offset": double_ptr(arrays[2])})

    def encode_joint_command(self, fingerprint: int, utime: int, tick: int) -> ctypes.Array:
        """The outputs as an encoded msgs.joint_command_t (its packed
        `fingerprint` given by the caller) through the joint map, in a buffer
        the next call overwrites: a caller that keeps it must copy it
        (bytes(...))."""
        lib.mk_encode_joint_command(self._plan, self._map, fingerprint, utime, tick,
                                    self._wire_ptr, len(self._wire))
        return self._wire



class KalmanArithmetic:
    """The covariance arithmetic of a linear Kalman filter in C
    (csrc/kalman.c) on the caller's arrays, which it keeps: x (n), P (n, n),
    A (n, n), q (n), H (m, n), r (m), y (m), all float64 and C-ordered, and
    written in place by their owner between calls. Nothing is allocated
    per call."""

    def __init__(self, x: np.ndarray, P: np.ndarray, A: np.ndarray, q: np.ndarray,
                 H: np.ndarray, r: np.ndarray, y: np.ndarray) -> None:
        n, m = x.shape[0], y.shape[0]
        shapes = {"x": (x, (n,)), "P": (P, (n, n)), "A": (A, (n, n)), "q": (q, (n,)),
                  "H": (H, (m, n)), "r": (r, (m,)), "y": (y, (m,))}
        for name, (array, shape) in shapes.items():
            if array.shape != shape or array.dtype != np.float64 or not array.flags.c_contiguous:
                raise ValueError(f"{name}: want a C-ordered float64 array of shape {shape}")
        self.n, self.m = n, m
        self._arrays = (x, P, A, q, H, r, y)      # kept alive: C holds their addresses
        self._tmp = np.zeros(n * n)
        self._work = np.zeros(2 * m * n + m * m + m)
        ptr = [double_ptr(a) for a in (*self._arrays, self._tmp, self._work)]
        self._x, self._P, self._A, self._q, self._H, self._r, self._y, self._tmp_p, self._work_p = ptr

    def predict(self) -> None:
        """P = A P A^T + diag(q)."""
        lib.mk_kalman_predict(self.n, self._A, self._P, self._q, self._tmp_p)

    def update(self) -> bool:
        """x and P take in y; False (nothing changed) if the innovation
        covariance is not positive definite."""
        return lib.mk_kalman_update(self.n, self.m, self._x, self._P, self._H, self._r, self._y,
                                    self._work_p) == 0
