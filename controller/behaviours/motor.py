"""Mode 15 MOTOR_CTRL: motor_ctrl arrays pass through with the safety rules of
SPEC §6.9.

err_flag bits: 0 the command is older than 10 ms (qd and tau scaled down);
1 the command is older than 500 ms, or the entry wait is not over; 2 / 3 / 4 an
abad / hip / knee target was more than the mutation limit from the measured
angle and was pulled in.
"""
from __future__ import annotations

import numpy as np

from controller.behaviours.base import Behaviour, TickContext

STALE_MS = 10.0
LOST_MS = 500.0
ENTRY_WAIT = 5000          # counter units: it advances once per leg per tick
ERR_STALE, ERR_LOST = 1 << 0, 1 << 1
ERR_MUTATION = (1 << 2, 1 << 3, 1 << 4)


class MotorCtrl(Behaviour):
    mode = 15
    # The client owns gains and targets; SPEC §6.9 already keeps q_des within
    # 8-12 degrees of the measurement.
    checks_tracking = False
    gaits = frozenset({0})

    def enter(self, ctx: TickContext) -> None:
        self.err_flag = ERR_LOST     # set on entry until the wait and a zero frame
        self.wait = 0
        self.age_ms = float("inf")
        self.run(ctx)

    def run(self, ctx: TickContext) -> None:
        legs = len(self.cfg.legs)
        self.wait += legs
        motor = ctx.motor
        k = self.kernel
        zero = np.zeros(k.n)
        self.age_ms = motor.age_ms if motor is not None else float("inf")
        if self.err_flag & ERR_LOST:
            fresh_zero = (motor is not None and motor.age_ms < LOST_MS
                          and not motor.kp.any() and not motor.kd.any() and not motor.tau.any())
            if self.wait > ENTRY_WAIT and fresh_zero:
                self.err_flag &= ~ERR_LOST
        lost = motor is None or motor.age_ms >= LOST_MS
        if lost:
            self.err_flag |= ERR_LOST
        if lost or (self.err_flag & ERR_LOST and self.wait <= ENTRY_WAIT):
            # Lost, or the entry wait: high damping only (SPEC §6.9, §7).
            _, kd = self.robot.gains("motor_ctrl_lost")
            k.track(ctx.q)   # kp is 0: the position target drives nothing
            k.set_gains(zero, kd)
            k.tau_ff[:] = 0.0
            return
        if self.err_flag & ERR_LOST:
            # After the wait, until a frame with zero gains and torque: limp.
            self.go_limp(ctx)
            return
        assert motor is not None   # not lost: a fresh frame is there
        flags = 0
        qd, tau = motor.qd_des.copy(), motor.tau.copy()
        if motor.age_ms > STALE_MS:
            scale = motor.age_ms / STALE_MS
            qd /= scale
            tau /= scale
            flags |= ERR_STALE
        q = self.robot.inside_limits(motor.q_des, self.cfg.motor_ctrl_limit_margin, ctx.q)
        limit = self.cfg.motor_ctrl_mutation_limit
        assert limit is not None   # mode 15 runs only on robots with a motor_ctrl section
        q_limited = np.clip(q, ctx.q - limit, ctx.q + limit)
        # The reference evaluates leg by leg and a later leg clears the bits an
        # earlier one set, so the last leg's result stands (SPEC §6.9).
        last_leg = (q_limited != q)[-3:]
        for j in range(3):
            if last_leg[j]:
                flags |= ERR_MUTATION[j]
        self.err_flag = flags
        k.move(q_limited, q_limited, ctx.t, 0.0, v_start=qd, v_end=qd)
        k.set_gains(np.clip(motor.kp, 0.0, None), np.clip(motor.kd, 0.0, None))
        k.tau_ff[:] = np.clip(tau, -self.cfg.torque_limit, self.cfg.torque_limit)
