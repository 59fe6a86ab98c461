"""Closed-loop mode 11: the trunk carried by stance foot forces from the MPC.

Each tick, given the state estimate (orientation and rates from the IMU,
position and velocity from the Kalman filter; never the simulator's truth):

- the reference moves on with the gait generator's limited velocity: a yaw
  and a world position integrated from it, kept within a slack of the
  estimate so that a push is not answered by running back to where the
  robot was;
- on every MPC step boundary a request goes to the planner: the state, the
  feet (from the leg kinematics, relative to the centre of mass), the
  contact schedule over the horizon (the gait's timetable, the legs in the
  air now excluded) and the reference; packed and sent once the tick's
  joint command is out (Robot.deferred), since its plan is used only
  latency_ticks later;
- the forces of the plan's current step become joint torques on the legs
  that are down, tau = -J^T R^T f (the foot pushes the ground with -f);
  without a plan (the first ticks, a plan past its horizon) the stance feet
  share the weight;
- the swing feet land further along the error between the estimated and the
  commanded velocity (placement_gain), on top of the generator's Raibert
  rule; while `hold` is set (the locomotion sets it for the gaits that
  should stay on their steps' path) also along the centre of mass's lead
  on the reference (position_gain, at most position_reach per axis);
- while `motion` is set (the locomotion sets it for the motion and user
  gaits) the MPC weighs the state with the motion gaits' own weights
  (motion_weights): a dance in place holds its position and heading harder
  than a walk must;
- while `level` is set (the locomotion sets it for a motion or user gait
  that lifts every foot at once: the pronks) a swing foot rises by as much
  as the body is below its height (at most LEVEL_REACH): its clearance is
  then over the ground, as the reference's world-frame swings are, where the
  1 cm swings of the special pronk otherwise dragged on the floor under a
  body that sank 2-4 cm in the flight and pushed it forward 3 cm/s. (Applied
  to every motion gait it moved the trotting ones instead: the ballet, the
  special trot.)
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import numpy as np

from controller.motion.gait import GaitGenerator
from controller.motion.mpc import GRAVITY
from controller.motion.planner import Planner
from controller.robot.config.balance import BalanceConfig
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.native import double_ptr, ffi, lib

YAW_SLACK = 0.1          # rad the reference yaw may lead the measured one
LEVEL_REACH = 0.04       # m: the largest body height error a swing foot answers (pronking motion gaits)


class BodyEstimate(Protocol):
    """What the state estimate tells the balance controller."""
    rot: np.ndarray          # (3, 3) body to world
    gyro: np.ndarray         # (3,) body rate, body frame
    accel: np.ndarray        # (3,) the IMU's specific force, body frame
    force: np.ndarray        # (legs, 3) the ground's force on each foot from the joint torques, world
    feet: np.ndarray         # (legs, 3) each foot's centre, body frame, from the measured joints

    @property
    def jacobian(self) -> np.ndarray: ...   # (legs, 3, 3) each leg's at the measured joints

    @property
    def position(self) -> np.ndarray: ...   # body origin, world frame

    @property
    def velocity(self) -> np.ndarray: ...   # world frame


def _wrap(a: float) -> float:
    return (a + math.pi) % (2.0 * math.pi) - math.pi


class BalanceController:
    """The per-tick arithmetic is csrc/balance.c's (the reference, the feet
    and the legs down, then the forces, torques and landing feedback); the
    MPC request on step boundaries and the plan in force are made here."""

    def __init__(self, c: BalanceConfig, kin: QuadrupedKinematics, legs: int, dt: float,
                 planner: Planner, torque_limit: np.ndarray, tau_ff: np.ndarray,
                 deferred: list[Callable[[], None]]) -> None:
        """tau_ff: where each tick's torques go, within torque_limit (the
        kernel's feed-forward); deferred: where the MPC request goes to be
        sent after the tick's joint command (Robot.deferred)."""
        self.deferred = deferred
        self._due: tuple[int, BodyEstimate, float, GaitGenerator] | None = None
        self.c = c
        self.legs = legs
        self.dt = dt
        self.planner = planner
        self.layout = planner.mpc.layout
        self.request = np.zeros(self.layout.size)
        self.step_ticks = max(1, round(c.step / dt))
        self.tau = np.zeros(3 * legs)
        self.tau_ff = tau_ff                  # tau within the motors' torque limit
        self.forces = np.zeros((legs, 3))     # the ground's force on each foot now, world frame
        self.p_des = np.zeros(3)
        self.submitted = False
        self.fallbacks = 0                    # ticks run without a plan
        self._feet = np.zeros((legs, 3))
        self._down = np.zeros(legs, dtype=bool)
        self._com = np.zeros(3)
        self._v_world = np.zeros(3)
        self._limit = np.ascontiguousarray(np.broadcast_to(torque_limit, (3 * legs,)), dtype=float)
        self._com_offset = np.ascontiguousarray(c.com_offset, dtype=float)
        arrays = {"com_offset": self._com_offset, "torque_limit": self._limit, "p_des": self.p_des,
                  "com": self._com, "v_world": self._v_world, "feet": self._feet,
                  "forces": self.forces, "tau": self.tau, "tau_ff": self.tau_ff}
        self._native = ffi.new("mk_balance *", {
            "legs": legs, "dt": dt, "yaw_slack": YAW_SLACK, "position_slack": c.position_slack,
            "foot_radius": kin.foot_radius, "placement_gain": c.placement_gain,
            "position_gain": 0.0, "position_reach": c.position_reach, "level_reach": 0.0,
            "weight": c.mass * GRAVITY, "down": ffi.cast("uint8_t *", ffi.from_buffer(self._down)),
            **{name: double_ptr(a) for name, a in arrays.items()}})
        self._bound: tuple[object, object] | None = None
        self.hold = False                     # landings also answer the position's lead (position_gain)
        self.motion = False                   # the MPC weighs with motion_weights
        self.level = False                    # swing feet answer the body's height error
        self.terrain_pitch = 0.0              # rad the ground asks the body to pitch (terrain.py)

    @property
    def yaw_des(self) -> float:
        return float(self._native.yaw_des)

    def reset(self) -> None:
        self._native.started = 0
        self.submitted = False
        self._due = None
        self.planner.reset()

    def _bind(self, body: BodyEstimate, gen: GaitGenerator) -> None:
        """Point C at the estimate's and the generator's arrays (both keep
        theirs for life and write them in place)."""
        x = body.position
        if body.velocity.ctypes.data != x.ctypes.data + 3 * x.itemsize:
            raise ValueError("the estimate's position and velocity must be one array (x[0:6])")
        b = self._native
        b.rot, b.x, b.est_feet, b.jacobian = (double_ptr(a) for a in (body.rot, x, body.feet, body.jacobian))
        b.v, b.placement = double_ptr(gen.v), double_ptr(gen.feedback)
        b.swinging = ffi.cast("uint8_t *", ffi.from_buffer(gen.swinging))
        b.swing_tick = ffi.cast("int64_t *", ffi.from_buffer(gen.swing_tick))
        b.swing_ticks = ffi.cast("int64_t *", ffi.from_buffer(gen.swing_ticks))
        self._bound = (body, gen)      # keeps the arrays alive while C holds them

    def tick(self, tick: int, body: BodyEstimate, gen: GaitGenerator) -> np.ndarray:
        """Joint torques (wire order, legs x 3; tau_ff gets them within the
        torque limit) for this tick, and the generator's landing feedback
        (used from the next tick); the legs' kinematics are the estimate's,
        of the same measured joints."""
        bound = self._bound
        if bound is None or bound[0] is not body or bound[1] is not gen:
            self._bind(body, gen)
        b = self._native
        b.height = gen.height
        b.position_gain = self.c.position_gain if self.hold else 0.0
        b.level_reach = LEVEL_REACH if self.level else 0.0
        lib.mk_balance_reference(b)
        if not self.submitted or gen.phase % self.step_ticks == 0:
            # The request is packed and sent once the joint command is out
            # (deferred): its plan is used latency_ticks on, never this tick.
            self._due = (tick, body, float(b.yaw), gen)
            self.submitted = True
            self.deferred.append(self.submit_due)
        b.plan_forces = ffi.NULL
        got = self.planner.plan(tick)
        if got is not None:
            plan, sampled = got
            k = (tick - sampled) // self.step_ticks
            if k < self.layout.horizon:
                b.plan_forces = ffi.cast("double *", ffi.from_buffer(plan)) + k * 3 * self.legs
        self.fallbacks += lib.mk_balance_torques(b)
        return self.tau

    def submit_due(self) -> None:
        """The MPC request tick() left for after the joint command: the state,
        feet, contacts and reference of that tick, none of which the rest of
        the tick changes."""
        due, self._due = self._due, None
        if due is not None:
            self._submit(*due)

    def _submit(self, tick: int, body: BodyEstimate, yaw: float, gen: GaitGenerator) -> None:
        c, lay, req = self.c, self.layout, self.request
        rot = body.rot
        x0 = req[lay.x0]
        x0[0] = math.atan2(rot[2, 1], rot[2, 2])
        x0[1] = math.asin(max(-1.0, min(1.0, -rot[2, 0])))
        x0[2] = yaw
        x0[3:6] = self._com
        x0[6:9] = rot @ body.gyro
        x0[9:12] = body.velocity
        x0[12] = 1.0
        req[lay.feet] = ((self._feet - c.com_offset) @ rot.T).reshape(-1)
        contact = req[lay.contact].reshape(-1, self.legs)
        timing = gen.timing
        assert timing is not None
        for k in range(contact.shape[0]):
            if k == 0:
                contact[0] = self._down
                continue
            phase = gen.phase + k * self.step_ticks
            segment = (phase // gen.segment_ticks) % timing.segments
            contact[k] = timing.contact[segment]
        ref = req[lay.reference].reshape(-1, 12)
        yaw_ref = yaw + _wrap(self.yaw_des - yaw)
        wz = float(gen.v[2])
        v_world = self._v_world
        for k in range(ref.shape[0]):
            t = (k + 1) * c.step
            ref[k, 0] = 0.0
            ref[k, 1] = gen.pitch + self.terrain_pitch
            ref[k, 2] = yaw_ref + wz * t
            ref[k, 3:5] = self.p_des[:2] + v_world[:2] * t
            ref[k, 5] = self.p_des[2]
            ref[k, 6:9] = (0.0, 0.0, wz)
            ref[k, 9:12] = v_world
        req[lay.weight_set] = 1.0 if self.motion else 0.0
        self.planner.submit(tick, req)
