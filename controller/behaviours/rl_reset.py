"""Mode 80 RL_RESET: recover from any posture to a crouched four-leg stand
(SPEC §12.C.1).

Two ways, one contract. With `rl_reset.policy` naming the robot's own weight
file (the reference's learned policy, never shipped with motiond), that
network runs every 30 ms with the SPEC's observation, action limits, joint
re-mapping and gains. Without one, motiond's own model-based recovery runs:
mode 12's plan (roll over when fallen, fold, rise) ending in the crouch
instead of the stand.

Either way the progress bar is the SPEC's formula, from the IMU's gravity
and the measured joints, evaluated every policy period: 0 on entry, 100 only
once the body is upright and the legs are still at the crouch. The gait id of
the command is echoed; the state never leaves by itself and every exit is
immediate (the transition table). The policy is evaluated after the tick's
joint command is on the bus (Robot.deferred, as the MPC request is) and its
target enters the next tick: deterministic, so a replay is exact.
"""
from __future__ import annotations

import math

import numpy as np

from controller.behaviours.base import Robot, TickContext
from controller.behaviours.recovery import RecoveryStand
from controller.motion.mlp import Mlp, PolicyError
from controller.protocol.block import Block
from controller.robot.config.rl import POLICY_LEG_ORDER

PERIOD_S = 0.030                 # the policy's (and the bar's) period
HISTORY = 3                      # observations stacked, oldest first
OBS = 39                         # gravity 3, q 12, qd 12, previous action 12
LAYERS = (HISTORY * OBS, 256, 128, 64, 12)
ACTIVATION = "tanh"
QD_SCALE = 0.05
ACTION_STEP = 0.1                # per period, on top of the [-1, 1] clip
KP, KP_RECOVERED, KD = 15.0, 50.0, 1.1
KP_RAMP_FROM = 70                # progress where kp starts rising to KP_RECOVERED
UPRIGHT_COS = math.cos(math.radians(30.0))


def projected_gravity(roll: float, pitch: float) -> np.ndarray:
    """The unit gravity vector in the body frame, the body's rotation being
    Ry(pitch) Rx(roll) (yaw does not matter)."""
    cr, sr, cp, sp = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch)
    return np.array([sp, -sr * cp, -cr * cp])


def reset_progress(gravity: np.ndarray, q: np.ndarray, qd: np.ndarray, crouch: np.ndarray) -> int:
    """SPEC §12.C.1's order_process_bar: half for being upright, half (once
    within 30 degrees of upright) for the legs at the crouch and still."""
    cosd = float(-gravity[2])
    r = 0.5 * (0.5 + 0.5 * cosd) ** 2
    if cosd > UPRIGHT_COS:
        r += 0.5 * (0.2 + 0.6 * math.exp(-float(np.sum((q - crouch) ** 2)))
                    + 0.2 * math.exp(-0.02 * float(np.sum(qd ** 2))))
    return min(int(100.0 * r) + 5, 100)


class RlReset(RecoveryStand):
    mode = 80
    gaits = None  # type: ignore[assignment]  # any gait id: it has no effect and is echoed

    def __init__(self, robot: Robot) -> None:
        super().__init__(robot)
        rc = robot.cfg.rl_reset
        legs = robot.cfg.legs
        self.crouch = np.tile(rc.crouch, len(legs))
        self.period = max(1, round(PERIOD_S / robot.dt))
        self.policy: Mlp | None = None
        self.policy_error: str | None = None
        if rc.policy is not None:
            try:
                self.policy = Mlp.load(rc.policy, LAYERS, ACTIVATION)
            except PolicyError as exc:
                self.policy_error = str(exc)
                self.errors.append(f"mode 80 policy refused: {exc}")
            # Training index i is wire joint perm[i] (legs re-ordered by name).
            self.perm = np.array([3 * legs.index(leg) + j for leg in POLICY_LEG_ORDER for j in range(3)])
            self.mid = np.concatenate([rc.mid_front if leg.startswith("F") else rc.mid_rear for leg in legs])
            self.range = np.tile(rc.range, len(legs))
        self.progress_bar = 0
        self.gait = 0
        self.entry_tick = 0
        self.history = np.zeros((HISTORY, OBS))
        self.action = np.zeros(12)             # training order
        self.pending: np.ndarray | None = None  # the policy's next target (wire order)
        self.no_imu = False

    @property
    def checks_tracking(self) -> bool:   # type: ignore[override]
        return self.policy is None and self.roll is None

    def refuses(self, block: Block) -> str | None:
        if self.policy_error is not None and block.mode == self.mode:
            return f"mode 80's policy file was refused at start: {self.policy_error}"
        return None

    def enter(self, ctx: TickContext) -> None:
        self.progress_bar = 0
        self.entry_tick = ctx.tick
        self.gait = ctx.block.gait_id if ctx.block.mode == self.mode else 0
        self.no_imu = False
        if self.policy is None:
            super().enter(ctx)
            return
        self.kernel.tau_ff[:] = 0.0
        self.action[:] = 0.0
        self.pending = None
        self.history[:] = 0.0
        self.first = True
        # Entry target: the normalisation's middle (action 0).
        self.kernel.move(self.kernel.pos.copy(), self.mid.copy(), ctx.t, self.period * self.robot.dt)
        self._set_gains()

    def _wants_side(self, ctx: TickContext) -> bool:
        return False                      # 80's gait id has no effect

    def _goal_pose(self) -> np.ndarray:
        return self.crouch.copy()

    def _set_gains(self) -> None:
        share = min(1.0, max(0.0, (self.progress_bar - KP_RAMP_FROM) / (100 - KP_RAMP_FROM)))
        n = self.kernel.n
        self.kernel.set_gains(np.full(n, KP + share * (KP_RECOVERED - KP)), np.full(n, KD))

    def run(self, ctx: TickContext) -> None:
        if ctx.block.mode == self.mode and not ctx.refused:
            self.gait = ctx.block.gait_id
        if self.policy is None:
            super().run(ctx)
        elif self.pending is not None:
            self.kernel.hold(self.pending)
            self.pending = None
        if (ctx.tick - self.entry_tick) % self.period:
            return
        self.no_imu = ctx.imu is None
        if self.no_imu:
            return                        # no gravity: no bar and no policy step (the PD holds)
        assert ctx.imu is not None
        gravity = projected_gravity(ctx.imu.roll, ctx.imu.pitch)
        self.progress_bar = reset_progress(gravity, ctx.q, ctx.qd, self.crouch)
        if self.policy is not None:
            self._set_gains()
            obs = np.concatenate([gravity, ((ctx.q - self.mid) / self.range)[self.perm],
                                  (ctx.qd * QD_SCALE)[self.perm], self.action])
            self.robot.deferred.append(lambda: self._policy_step(obs))

    def _policy_step(self, obs: np.ndarray) -> None:
        """One step of the network, after the tick's command is out; the
        target enters the next tick."""
        assert self.policy is not None
        if self.first:
            self.history[:] = obs          # the stack starts full of the entry observation
            self.first = False
        else:
            self.history[:-1] = self.history[1:]
            self.history[-1] = obs
        raw = self.policy.forward(self.history.reshape(-1))
        prev = self.action
        self.action = np.clip(np.clip(raw, -1.0, 1.0), prev - ACTION_STEP, prev + ACTION_STEP)
        target = np.empty(12)
        target[self.perm] = self.action
        target = target * self.range + self.mid
        self.pending = self.robot.inside_limits(target, 0.0, self.kernel.pos.copy())

    def ready(self) -> bool:
        return True

    def failure(self) -> str | None:
        if self.no_imu:
            return "mode 80 needs the IMU's gravity; none is fresh"
        return self.failed if self.policy is None else None

    def progress(self, ctx: TickContext) -> int:
        return self.progress_bar

    def reported_gait(self, ctx: TickContext) -> int:
        return self.gait
