"""Mode 22 FORCE_JUMP (SPEC §6.8): the legs in the contact mask push the
body with the acceleration `acc_des` asks for, then the joints go back to the
start pose linearly, and the robot lands.

Push: every tick, the least-squares foot forces that give the body (the MPC's
rigid-body model, config `balance`) the commanded linear acceleration
acc_des[3..5] (body frame, gravity compensated) and angular acceleration
acc_des[0..2], over the feet of the contact mask (0 or an empty mask: all
four), each kept inside its friction pyramid and pushing down, turned into
joint torques tau = -J^T R^T f as feed-forward on soft joints (plus, on a
robot with joint damping, that damping times the measured joint speed: what
the joints lose to it under pure torque control). The push ends
when the legs reach PUSH_REACH of their length, when the feet lose their load
after the first PUSH_MIN_S (the body has left the ground), or after PUSH_MAX_S.
Then a linear interpolation back to the start pose over RETURN_S (SPEC:
0.1-0.2 s) with the pose gains; progress is 100 once every foot carries load
again and the body is still (as the jumps, controller/behaviours/jump.py).
"""
from __future__ import annotations

import math

import numpy as np

from controller.behaviours.base import Behaviour, QuadrupedRobot, TickContext, landed
from controller.behaviours.jump import STILL_RATE
from controller.behaviours.pose import stance_mask
from controller.motion.forces import GRAVITY, leg_torques, wrench_forces
from controller.robot.config.damping import given_back
from controller.robot.native import LINEAR

GAITS = frozenset({1, 4})
PUSH_MIN_S = 0.03
PUSH_MAX_S = 0.25
PUSH_REACH = 0.96
RETURN_S = 0.15
SETTLE_S = 0.1
PUSH_KD = 0.0              # N m s/rad on the pushing joints: pure torque control
# acc_des is clamped to these (docs/VALIDATION.md): about 2 g up is more than
# the legs' torque limits can give anyway.
LINEAR_ACC_LIMIT = 20.0    # m/s^2, each of acc_des[3..5]
ANGULAR_ACC_LIMIT = 30.0   # rad/s^2, each of acc_des[0..2]


class ForceJump(Behaviour):
    mode = 22
    gaits = GAITS

    def __init__(self, robot: QuadrupedRobot) -> None:
        super().__init__(robot)
        self.kin = robot.kin
        self.legs = len(self.kin.hip)
        bal = robot.cfg.balance
        assert bal is not None, "mode 22 needs the config's balance section"
        self.bal = bal
        self.reach = PUSH_REACH * math.hypot(self.kin.l1, self.kin.reach)
        self.start = np.zeros(robot.cfg.num_joints)
        self.gait = 0
        self.t0 = 0
        self.stage = "done"
        self.return_tick = 0
        self.still = 0
        self.mask = np.ones(self.legs, dtype=bool)
        self.acc = np.zeros(6)
        self.tau = np.zeros(robot.cfg.num_joints)
        # The joints' own viscous damping (config joint_damping), None without.
        self.damping = given_back(robot.cfg.joint_damping)
        self.push_damping = np.zeros(robot.cfg.num_joints)   # the damping of the pushing legs' joints

    def enter(self, ctx: TickContext) -> None:
        b = ctx.block
        self.gait = b.gait_id
        self.start = self.entry_pose(ctx, math.radians(8.0)).copy()
        self.mask = stance_mask(b.contact, self.legs)
        if self.damping is not None:
            self.push_damping[:] = self.damping * np.repeat(self.mask, 3)
        self.acc = np.array(b.acc_des[:6], dtype=float)
        np.clip(self.acc[:3], -ANGULAR_ACC_LIMIT, ANGULAR_ACC_LIMIT, out=self.acc[:3])
        np.clip(self.acc[3:], -LINEAR_ACC_LIMIT, LINEAR_ACC_LIMIT, out=self.acc[3:])
        self.t0 = ctx.tick
        self.stage = "push"
        self.still = 0
        k = self.kernel
        k.track(ctx.q)
        kp, kd = self.robot.gains("pose")
        legs_kp = np.where(np.repeat(self.mask, 3), 0.0, kp)
        legs_kd = np.where(np.repeat(self.mask, 3), PUSH_KD, kd)
        k.hold(self.start)
        k.set_gains(legs_kp, legs_kd)

    def run(self, ctx: TickContext) -> None:
        elapsed = (ctx.tick - self.t0) * self.robot.dt
        if self.stage == "push":
            if self._push_over(ctx, elapsed):
                self._return(ctx)
            else:
                self._push(ctx)
        elif self.stage == "return":
            if ctx.tick >= self.return_tick:
                self.stage = "landing"
        elif self.stage == "landing":
            body = ctx.body
            down = body is None or landed(body, self.cfg.estimator.contact_force, STILL_RATE)
            self.still = self.still + 1 if down else 0
            if self.still * self.robot.dt >= SETTLE_S:
                self.stage = "done"

    def _push_over(self, ctx: TickContext, elapsed: float) -> bool:
        if elapsed >= PUSH_MAX_S:
            return True
        feet = self._feet(ctx)
        extension = np.linalg.norm(feet - self.kin.hip, axis=1)
        if np.any(extension[self.mask] >= self.reach):
            return True
        body = ctx.body
        return body is not None and elapsed >= PUSH_MIN_S and \
            bool(np.all(body.force[self.mask, 2] < self.cfg.estimator.contact_force))

    def _feet(self, ctx: TickContext) -> np.ndarray:
        if ctx.body is not None:
            return ctx.body.feet
        return self.kin.forward(ctx.q.reshape(self.legs, 3))

    def _push(self, ctx: TickContext) -> None:
        body = ctx.body
        rot = body.rot if body is not None else np.eye(3)
        J = body.jacobian if body is not None else self.kin.jacobian(ctx.q.reshape(self.legs, 3))
        feet = self._feet(ctx)
        bal = self.bal
        # World-frame wrench about the centre of mass.
        force = bal.mass * (rot @ self.acc[3:] - GRAVITY)
        torque = rot @ (bal.inertia * self.acc[:3])
        legs = np.flatnonzero(self.mask)
        r = (feet[legs] - bal.com_offset) @ rot.T
        f = wrench_forces(r, force, torque, bal.friction)
        leg_torques(J, rot, f, legs, self.tau)
        if self.damping is not None:
            # Pure torque control: what the joints' own damping takes at the
            # speed they turn is given back (on Go1's 1-2 N m s/rad, half the
            # knee's push went to it and the body rose at a quarter of acc_des).
            self.tau += self.push_damping * ctx.qd
        np.clip(self.tau, -self.cfg.torque_limit, self.cfg.torque_limit, out=self.tau)
        self.kernel.tau_ff[:] = self.tau
        self.kernel.hold(ctx.q)                # soft joints: no pull back to the start

    def _return(self, ctx: TickContext) -> None:
        k = self.kernel
        k.tau_ff[:] = 0.0
        kp, kd = self.robot.gains("pose")
        k.set_gains(kp, kd)
        k.move(ctx.q, self.start, ctx.t, RETURN_S, LINEAR)
        self.return_tick = ctx.tick + int(round(RETURN_S / self.robot.dt))
        self.stage = "return"

    def ready(self) -> bool:
        return self.stage == "done"

    def progress(self, ctx: TickContext) -> int:
        return 100 if self.stage == "done" else 0

    def reported_gait(self, ctx: TickContext) -> int:
        return self.gait

    @property
    def checks_tracking(self) -> bool:   # type: ignore[override]
        return self.stage in ("landing", "done")
