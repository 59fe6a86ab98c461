"""Leg kinematics for the 3-DoF quadruped leg (abad, hip, knee).

Conventions (MIT Cheetah / CyberDog): x forward, y left, z up. In the abad
frame of a leg, with side sign s (+1 left, -1 right), the foot is at

    x = l2 sin(q1) + l3 sin(q1 + q2)
    y = s l1 cos(q0) + h sin(q0)
    z = s l1 sin(q0) - h cos(q0),   h = l2 cos(q1) + l3 cos(q1 + q2)

so a positive knee angle bends the knee backward. All functions work on every
leg at once: joint arrays are (legs, 3), positions (legs, 3) in the body frame.
"""
from __future__ import annotations

import numpy as np

from controller.robot.config.quadruped import Geometry
from controller.robot.native import double_ptr, ffi, lib


def leg_mask_table(legs: int) -> np.ndarray:
    """Every leg mask of `legs` legs (SPEC §1: bit i = leg i) as its row of
    0/1 per leg: table[mask] @ per_leg sums over the legs in the mask."""
    return np.array([[float(mask >> i & 1) for i in range(legs)] for mask in range(1 << legs)])


class QuadrupedKinematics:
    def __init__(self, geometry: Geometry) -> None:
        self.hip = geometry.hip_offsets
        self.side = geometry.side_sign
        self.l1 = geometry.abad_link
        self.l2 = geometry.hip_link
        self.l3 = geometry.knee_link
        # The contact's height under the foot's centre: its radius, less what
        # a loaded foot sinks into the floor (geometry.foot_sink).
        self.foot_radius = geometry.foot_radius - geometry.foot_sink
        # A swing rises out of that sink before its stride is under way
        # (csrc/gait.c): its apex is over the floor's surface.
        self.sink = geometry.foot_sink
        # What the foot rolls on as the leg turns over it (leg odometry): its
        # own radius, however far the load squashes it.
        self.roll_radius = geometry.foot_radius
        self.reach = self.l2 + self.l3
        # The geometry as csrc/legs.c reads it (its arrays kept alive here).
        self._arrays = (np.ascontiguousarray(self.side, dtype=np.float64),
                        np.ascontiguousarray(self.hip, dtype=np.float64))
        self.native = ffi.new("mk_legs *", {
            "legs": len(self.hip), "l1": self.l1, "l2": self.l2, "l3": self.l3,
            "foot_radius": self.foot_radius, "roll_radius": self.roll_radius,
            "side": double_ptr(self._arrays[0]), "hip": double_ptr(self._arrays[1])})

    def forward(self, q: np.ndarray) -> np.ndarray:
        """Foot positions in the body frame for joint angles q (legs, 3)."""
        return self.forward_jacobian(q, jacobian=False)[0]

    def forward_jacobian(self, q: np.ndarray, jacobian: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Foot positions (legs, 3) in the body frame and, with `jacobian`,
        d(foot position)/d(q) per leg (legs, 3, 3), from one evaluation of
        the joints' sines and cosines (csrc/legs.c)."""
        q = np.ascontiguousarray(q, dtype=np.float64)
        p = np.empty((len(q), 3))
        J = np.empty((len(q), 3, 3)) if jacobian else None
        lib.mk_leg_forward(self._legs(len(q)), double_ptr(q), double_ptr(p),
                           double_ptr(J) if J is not None else ffi.NULL)
        return p, J

    def inverse(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Joint angles (legs, 3) putting each foot at body-frame p (legs, 3)
        (csrc/legs.c).

        Unreachable targets are pulled onto the reachable shell along the same
        direction; the second result flags, per leg, whether that happened.
        """
        p = np.ascontiguousarray(p, dtype=np.float64)
        q = np.empty((len(p), 3))
        clipped = np.empty(len(p), dtype=np.bool_)
        lib.mk_leg_inverse(self._legs(len(p)), double_ptr(p), double_ptr(q),
                           ffi.cast("uint8_t *", ffi.from_buffer(clipped)))
        return q, clipped

    def _legs(self, n: int) -> object:
        if n != len(self.hip):
            raise ValueError(f"{n} legs given, the geometry has {len(self.hip)}")
        return self.native

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """d(foot position)/d(q) per leg, shape (legs, 3, 3)."""
        J = self.forward_jacobian(q)[1]
        assert J is not None
        return J

    def shank_rotation(self, q: np.ndarray) -> np.ndarray:
        """Orientation of each lower leg (and its ball foot) in the body frame,
        (legs, 3, 3): the abad turns about x, hip and knee together about y
        (a positive hip+knee swings the foot forward)."""
        c0, s0 = np.cos(q[:, 0]), np.sin(q[:, 0])
        a = -(q[:, 1] + q[:, 2])
        ca, sa = np.cos(a), np.sin(a)
        r = np.empty((len(q), 3, 3))      # Rx(q0) @ Ry(a), written out
        r[:, 0, 0], r[:, 0, 1], r[:, 0, 2] = ca, 0.0, sa
        r[:, 1, 0], r[:, 1, 1], r[:, 1, 2] = s0 * sa, c0, -s0 * ca
        r[:, 2, 0], r[:, 2, 1], r[:, 2, 2] = -c0 * sa, s0, c0 * ca
        return r

    def rolled(self, q_from: np.ndarray, q_to: np.ndarray, turn: np.ndarray) -> np.ndarray:
        """How far each ball foot's centre moves (legs, 3, in the frame of the
        `q_from` body, taken as level) when its ball rolls on the ground
        without slipping while the legs go from q_from to q_to and the body
        turns by `turn` (3x3, from the q_from body to the q_to body). A stance
        foot's contact point stays put; its centre moves by radius x the
        ball's tilt, which a pose that pins the centres instead makes up by
        twisting the body. Exact for a tilt about one axis; for a general
        path (rolling is not path-independent) a second-order estimate."""
        spin = turn @ self.shank_rotation(q_to) @ self.shank_rotation(q_from).transpose(0, 2, 1)
        # The rotation vector of each spin (axis x angle); the roll needs its
        # horizontal part only.
        ax = spin[:, 2, 1] - spin[:, 1, 2]
        ay = spin[:, 0, 2] - spin[:, 2, 0]
        az = spin[:, 1, 0] - spin[:, 0, 1]
        sin = 0.5 * np.sqrt(ax * ax + ay * ay + az * az)
        cos = 0.5 * (spin[:, 0, 0] + spin[:, 1, 1] + spin[:, 2, 2] - 1.0)
        scale = np.where(sin > 1e-12, np.arctan2(sin, cos) / np.maximum(2.0 * sin, 1e-12), 0.5)
        out = np.zeros((len(spin), 3))
        out[:, 0] = self.roll_radius * scale * ay
        out[:, 1] = -self.roll_radius * scale * ax
        return out

    def body_height(self, q: np.ndarray) -> float:
        """Height of the body origin above flat ground, standing on the lowest feet."""
        return self.height_over(self.forward(q)[:, 2])

    def height_over(self, foot_z: np.ndarray) -> float:
        """Body height over flat ground from the feet's body-frame z (the
        three lowest carry the body)."""
        return float(-np.mean(np.sort(foot_z)[:3]) + self.foot_radius)

    def stance_feet(self, height: float, x_offset: float = 0.0) -> np.ndarray:
        """Foot positions for a level body at `height` with feet under the hips,
        shifted back by x_offset (the body ahead of the feet)."""
        p = self.hip.copy()
        p[:, 0] -= x_offset
        p[:, 1] += self.side * self.l1
        p[:, 2] = -(height - self.foot_radius)
        return p


def rotation_rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Rotation matrix Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = np.cos(roll), np.sin(roll)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(yaw), np.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])
