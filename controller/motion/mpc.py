"""Convex model-predictive control of the trunk through stance foot forces.

The formulation of the MIT Cheetah 3 / Mini Cheetah family (Di Carlo et al.,
2018), which CyberDog 2's controller also runs:

- the robot is one rigid body; its state x = (roll, pitch, yaw, position,
  world angular velocity, world velocity, 1) with the constant 1 carrying
  gravity;
- with roll and pitch small, the rates of the Euler angles are Rz(yaw)^T w
  and the world inertia is Rz I Rz^T, so the dynamics are linear in x and
  in the foot forces f (world frame) for a given yaw and foot positions:
  w' = I_w^-1 sum r_i x f_i, v' = sum f_i / m + g;
- discretised exactly over one step (A^3 = 0 for this A), the horizon's
  states are X = Aqp x0 + Bqp U; the QP minimises
  (X - Xref)^T L (X - Xref) + alpha |U|^2 over the forces of the feet the
  schedule has on the ground, each inside a friction pyramid
  (|fx|, |fy| <= mu fz) and 0 <= fz <= force_max. L is one of two weight
  sets the request names: the weights, or the motion gaits' own.

Condensed to the stance forces only, the QP is small and dense (60 numbers
for a trot over ten steps); it is solved with quadprog (Goldfarb-Idnani, a
dense active-set method: exact, no tuning, tens of microseconds here).

A request and its plan are flat float64 arrays so that the solve can run in
another process (controller/service/planner.py) as well as inline.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import quadprog

from controller.robot.config.balance import BalanceConfig

GRAVITY = 9.81
STATE = 13


@dataclass(frozen=True)
class RequestLayout:
    """Where each part of a request lives in its flat array."""
    legs: int
    horizon: int

    @property
    def x0(self) -> slice:
        return slice(0, STATE)

    @property
    def feet(self) -> slice:          # foot positions from the centre of mass, world frame
        return slice(STATE, STATE + 3 * self.legs)

    @property
    def contact(self) -> slice:       # (horizon, legs) 1 = on the ground
        start = STATE + 3 * self.legs
        return slice(start, start + self.horizon * self.legs)

    @property
    def reference(self) -> slice:     # (horizon, 12) the wanted state of each step
        start = STATE + 3 * self.legs + self.horizon * self.legs
        return slice(start, start + 12 * self.horizon)

    @property
    def weight_set(self) -> int:      # 0: the weights; 1: the motion gaits' weights
        return STATE + 3 * self.legs + self.horizon * self.legs + 12 * self.horizon

    @property
    def size(self) -> int:
        return self.weight_set + 1

    @property
    def plan_size(self) -> int:       # forces (horizon, legs, 3), then the solve status
        return 3 * self.legs * self.horizon + 1


class ConvexMpc:
    def __init__(self, c: BalanceConfig, legs: int) -> None:
        self.c = c
        self.legs = legs
        h = c.horizon
        self.h = h
        self.layout = RequestLayout(legs, h)
        nu = 3 * legs
        self.nu = nu
        self.Aqp = np.zeros((STATE * h, STATE))
        self.Bqp = np.zeros((STATE * h, nu * h))
        # The cost's diagonal per weight set (a request names its set).
        self.L_sets = tuple(np.tile(np.concatenate([w, [0.0]]), h)
                            for w in (c.weights, c.weights if c.motion_weights is None else c.motion_weights))
        self.I_body = np.diag(c.inertia)
        self.Ac = np.zeros((STATE, STATE))
        self.Bc = np.zeros((STATE, nu))
        self.xref = np.zeros(STATE * h)
        # One foot's rows of the friction pyramid and the force bounds, C^T f >= b.
        mu = c.friction
        self.C3 = np.array([[-1.0, 0.0, mu], [1.0, 0.0, mu], [0.0, -1.0, mu], [0.0, 1.0, mu],
                            [0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]).T
        self.b3 = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -c.force_max])
        self._constraints: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.plan = np.zeros(self.layout.plan_size)

    def _constraints_for(self, feet: int) -> tuple[np.ndarray, np.ndarray]:
        got = self._constraints.get(feet)
        if got is None:
            got = (np.kron(np.eye(feet), self.C3), np.tile(self.b3, feet))
            self._constraints[feet] = got
        return got

    def _model(self, yaw: float, feet: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The discrete (A, B) over one step for this yaw and these feet."""
        c = self.c
        cy, sy = np.cos(yaw), np.sin(yaw)
        Rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
        Ac = self.Ac
        Ac[0:3, 6:9] = Rz.T
        Ac[3:6, 9:12] = np.eye(3)
        Ac[11, 12] = -GRAVITY
        inv_I = Rz @ np.diag(1.0 / c.inertia) @ Rz.T
        Bc = self.Bc
        for i in range(self.legs):
            rx, ry, rz = feet[i]
            cross = np.array([[0.0, -rz, ry], [rz, 0.0, -rx], [-ry, rx, 0.0]])
            Bc[6:9, 3 * i:3 * i + 3] = inv_I @ cross
            Bc[9:12, 3 * i:3 * i + 3] = np.eye(3) / c.mass
        dt = c.step
        A2 = Ac @ Ac
        Ad = np.eye(STATE) + Ac * dt + A2 * (0.5 * dt * dt)
        Bd = (np.eye(STATE) * dt + Ac * (0.5 * dt * dt) + A2 * (dt ** 3 / 6.0)) @ Bc
        return Ad, Bd

    def solve(self, request: np.ndarray) -> np.ndarray:
        """The plan for a flat request: forces (horizon, legs, 3) on the feet
        from the ground, world frame, then a status (1 solved, 0 failed: the
        forces are then the weight shared by the stance feet)."""
        lay, h, nu = self.layout, self.h, self.nu
        plan = self.plan
        plan[:] = 0.0
        if request.shape != (lay.size,):
            raise ValueError(f"an MPC request has {lay.size} numbers, not {request.shape}")
        x0 = request[lay.x0]
        feet = request[lay.feet].reshape(self.legs, 3)
        contact = request[lay.contact].reshape(h, self.legs) > 0.5
        if not np.isfinite(request).all():       # a bad estimate: no solve on it
            self._fallback(contact, plan)
            return plan
        Ad, Bd = self._model(float(x0[2]), feet)
        # Horizon matrices: Aqp block k = Ad^(k+1); Bqp block (k, j) = Ad^(k-j) Bd.
        powers = [Bd]
        Ak = Ad
        for k in range(h):
            self.Aqp[STATE * k:STATE * (k + 1)] = Ak
            Ak = Ak @ Ad
            if k + 1 < h:
                powers.append(Ad @ powers[-1])
        for k in range(h):
            rows = slice(STATE * k, STATE * (k + 1))
            for j in range(k + 1):
                self.Bqp[rows, nu * j:nu * (j + 1)] = powers[k - j]
        xref = self.xref.reshape(h, STATE)
        xref[:, :12] = request[lay.reference].reshape(h, 12)
        xref[:, 12] = 1.0
        down = np.repeat(contact.reshape(-1), 3)
        columns = np.flatnonzero(down)
        if columns.size == 0:
            plan[-1] = 1.0
            return plan
        B = self.Bqp[:, columns]
        LB = self.L_sets[1 if request[lay.weight_set] > 0.5 else 0][:, None] * B
        H = B.T @ LB
        H[np.diag_indices_from(H)] += self.c.regularisation
        err = self.Aqp @ x0 - self.xref
        g = LB.T @ err
        C, b = self._constraints_for(columns.size // 3)
        try:
            u = quadprog.solve_qp(H, -g, C, b, 0)[0]
        except ValueError:
            self._fallback(contact, plan)
            return plan
        forces = plan[:-1]
        forces[columns] = u
        plan[-1] = 1.0
        return plan

    def _fallback(self, contact: np.ndarray, plan: np.ndarray) -> None:
        """The weight shared by the feet planned down, step by step."""
        forces = plan[:-1].reshape(self.h, self.legs, 3)
        for k in range(self.h):
            n = int(contact[k].sum())
            if n:
                forces[k, contact[k], 2] = self.c.mass * GRAVITY / n
        plan[-1] = 0.0
