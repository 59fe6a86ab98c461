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
  air now excluded) and the reference;
- the forces of the plan's current step become joint torques on the legs
  that are down, tau = -J^T R^T f (the foot pushes the ground with -f);
  without a plan (the first ticks, a plan past its horizon) the stance feet
  share the weight;
- the swing feet land further along the error between the estimated and the
  commanded velocity (placement_gain), on top of the generator's Raibert
  rule.
"""
from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from controller.motion.forces import leg_torques
from controller.motion.gait import GaitGenerator
from controller.motion.mpc import GRAVITY
from controller.motion.planner import Planner
from controller.robot.config.balance import BalanceConfig
from controller.robot.kinematics import QuadrupedKinematics

YAW_SLACK = 0.1          # rad the reference yaw may lead the measured one


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
    def __init__(self, c: BalanceConfig, kin: QuadrupedKinematics, legs: int, dt: float,
                 planner: Planner) -> None:
        self.c = c
        self.kin = kin
        self.legs = legs
        self.dt = dt
        self.planner = planner
        self.layout = planner.mpc.layout
        self.request = np.zeros(self.layout.size)
        self.step_ticks = max(1, round(c.step / dt))
        self.tau = np.zeros(3 * legs)
        self._feet = np.zeros((legs, 3))
        self.forces = np.zeros((legs, 3))     # the ground's force on each foot now, world frame
        self.yaw_des = 0.0
        self.p_des = np.zeros(3)
        self.started = False
        self.submitted = False
        self.placement = np.zeros(2)          # landing offset for the generator, level frame
        self.fallbacks = 0                    # ticks run without a plan

    def reset(self) -> None:
        self.started = False
        self.submitted = False
        self.planner.reset()

    def tick(self, tick: int, body: BodyEstimate, gen: GaitGenerator) -> np.ndarray:
        """Joint torques (wire order, legs x 3) for this tick; the legs'
        kinematics are the estimate's, of the same measured joints."""
        c = self.c
        rot = body.rot
        yaw = math.atan2(rot[1, 0], rot[0, 0])
        offset = rot @ c.com_offset
        com = body.position + offset
        v_cmd = gen.v
        vx, vy, wz = v_cmd.tolist()
        cy, sy = math.cos(yaw), math.sin(yaw)
        v_world = np.array([cy * vx - sy * vy, sy * vx + cy * vy, 0.0])
        if not self.started:
            self.yaw_des = yaw
            self.p_des[:] = com
            self.started = True
        # The reference moves on with the commanded velocity, within a slack of the estimate.
        self.yaw_des = yaw + max(-YAW_SLACK, min(YAW_SLACK, _wrap(self.yaw_des + wz * self.dt - yaw)))
        slack = c.position_slack
        p = self.p_des
        for k in range(2):
            near = float(com[k])
            want = float(p[k]) + float(v_world[k]) * self.dt
            p[k] = max(near - slack, min(near + slack, want))
        p[2] = gen.height + float(offset[2])
        feet = self._feet
        feet[:] = body.feet
        feet[:, 2] -= self.kin.foot_radius
        down = ~gen.airborne()
        if not self.submitted or gen.phase % self.step_ticks == 0:
            self._submit(tick, body, yaw, com, feet, down, gen, v_world)
        self._forces(tick, down)
        leg_torques(body.jacobian, rot, self.forces, slice(None), self.tau)
        # Foot placement feedback from the estimated velocity, in the level heading frame.
        ux, uy, _ = body.velocity.tolist()
        self.placement[0] = c.placement_gain * (cy * ux + sy * uy - vx)
        self.placement[1] = c.placement_gain * (-sy * ux + cy * uy - vy)
        return self.tau

    def _submit(self, tick: int, body: BodyEstimate, yaw: float, com: np.ndarray, feet: np.ndarray,
                down: np.ndarray, gen: GaitGenerator, v_world: np.ndarray) -> None:
        c, lay, req = self.c, self.layout, self.request
        rot = body.rot
        x0 = req[lay.x0]
        x0[0] = math.atan2(rot[2, 1], rot[2, 2])
        x0[1] = math.asin(max(-1.0, min(1.0, -rot[2, 0])))
        x0[2] = yaw
        x0[3:6] = com
        x0[6:9] = rot @ body.gyro
        x0[9:12] = body.velocity
        x0[12] = 1.0
        req[lay.feet] = ((feet - c.com_offset) @ rot.T).reshape(-1)
        contact = req[lay.contact].reshape(-1, self.legs)
        timing = gen.timing
        assert timing is not None
        for k in range(contact.shape[0]):
            if k == 0:
                contact[0] = down
                continue
            phase = gen.phase + k * self.step_ticks
            segment = (phase // gen.segment_ticks) % timing.segments
            contact[k] = timing.contact[segment]
        ref = req[lay.reference].reshape(-1, 12)
        yaw_ref = yaw + _wrap(self.yaw_des - yaw)
        wz = float(gen.v[2])
        for k in range(ref.shape[0]):
            t = (k + 1) * c.step
            ref[k, 0] = 0.0
            ref[k, 1] = gen.pitch
            ref[k, 2] = yaw_ref + wz * t
            ref[k, 3:5] = self.p_des[:2] + v_world[:2] * t
            ref[k, 5] = self.p_des[2]
            ref[k, 6:9] = (0.0, 0.0, wz)
            ref[k, 9:12] = v_world
        self.planner.submit(tick, req)
        self.submitted = True

    def _forces(self, tick: int, down: np.ndarray) -> None:
        got = self.planner.plan(tick)
        forces = self.forces
        if got is not None:
            plan, sampled = got
            k = (tick - sampled) // self.step_ticks
            if k < self.layout.horizon:
                forces[:] = plan[:-1].reshape(self.layout.horizon, self.legs, 3)[k]
                forces[~down] = 0.0
                return
        # No plan for this tick: the feet on the ground share the weight.
        self.fallbacks += 1
        forces[:] = 0.0
        n = int(down.sum())
        if n:
            forces[down, 2] = self.c.mass * GRAVITY / n

