"""Leg kinematics for the 6-DoF humanoid leg (NUbots-style 20-servo robot).

Conventions as in controller/robot/kinematics.py: x forward, y left, z up, angles
by the right-hand rule about the torso axes. With every joint at zero the leg
hangs straight down. Per leg, from the torso:

    hip yaw (a) -> hip roll (x) -> hip pitch (y) -> thigh -> knee (y)
    -> shank -> ankle pitch (y) -> ankle roll (x) -> ankle_height -> sole

The hip yaw axis `a` is z unless the geometry's `hip_yaw_axis` says
otherwise: it may lean in the y-z plane, as NAO's hip yaw-pitch does (45
degrees, a different axis per leg). Written a = s Rx(phi) z with s = +-1,
the hip rotation is Rot(a, q0) Rx(q1) = Rx(phi) Rz(s q0) Rx(q1 - phi), so the
vertical-axis solution with roll q1 - phi and yaw s q0, seen from a torso
turned by Rx(-phi), is the exact solution for the tilted axis.

The three hip axes meet in one point (the hip centre, `hip_offset` from the
torso origin) and the two ankle axes meet in one point, which is what makes
the classic closed form possible. Both legs use the same signs (no
mirroring): a positive knee bends the knee (shank goes back), a positive hip
pitch swings the thigh back, a positive hip roll moves the foot to +y.

The foot frame sits at the sole centre, `ankle_height` below the ankle axes
along the foot's own z, so a flat foot on the ground has sole z = 0.

The solver runs at 500 Hz for two legs, so the hot path (`inverse`) is plain
`math` on floats; `forward` uses numpy since only tests and tools call it.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

LEG_SIDES = ("right", "left")  # wire order of the legs (config/humanoid20.yaml)
LEG_JOINTS = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")


class HumanoidConfigError(ValueError):
    """A humanoid geometry or walk mapping is invalid; the message names the key."""


@dataclass(frozen=True)
class HumanoidGeometry:
    hip_offset: Mapping[str, tuple[float, float, float]]  # side -> hip centre in the torso frame
    thigh: float          # hip centre to knee axis (m)
    shank: float          # knee axis to ankle axes (m)
    ankle_height: float   # ankle axes to sole (m)
    foot_length: float
    foot_width: float
    mass: float           # kg, whole robot
    # side -> unit hip yaw axis in the torso frame (at hip yaw 0); z unless tilted
    hip_yaw_axis: Mapping[str, tuple[float, float, float]] = field(
        default_factory=lambda: {side: (0.0, 0.0, 1.0) for side in LEG_SIDES})

    @classmethod
    def from_mapping(cls, data: Any, where: str = "geometry") -> HumanoidGeometry:
        """Build from the `geometry` mapping of a humanoid config; a
        HumanoidConfigError names the key and the reason."""
        if not isinstance(data, Mapping):
            raise HumanoidConfigError(f"{where}: expected a mapping")

        def number(key: str, lo: float, hi: float) -> float:
            value = data.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or not lo <= value <= hi:
                raise HumanoidConfigError(
                    f"{where}.{key}: expected a number in [{lo}, {hi}], got {value!r}")
            return float(value)

        hips = data.get("hip_offset")
        if not isinstance(hips, Mapping):
            raise HumanoidConfigError(
                f"{where}.hip_offset: expected {{right: [x, y, z], left: [x, y, z]}}")
        offsets: dict[str, tuple[float, float, float]] = {}
        for side in LEG_SIDES:
            v = hips.get(side)
            if not isinstance(v, list) or len(v) != 3 or not all(
                    isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                    for x in v):
                raise HumanoidConfigError(
                    f"{where}.hip_offset.{side}: expected [x, y, z] in m, got {v!r}")
            offsets[side] = (float(v[0]), float(v[1]), float(v[2]))
        if not offsets["left"][1] > offsets["right"][1]:
            raise HumanoidConfigError(
                f"{where}.hip_offset: the left hip must be at larger y than the right")
        axes = {side: (0.0, 0.0, 1.0) for side in LEG_SIDES}
        tilted = data.get("hip_yaw_axis")
        if tilted is not None:
            if not isinstance(tilted, Mapping):
                raise HumanoidConfigError(
                    f"{where}.hip_yaw_axis: expected {{right: [x, y, z], left: [x, y, z]}}")
            for side in LEG_SIDES:
                axes[side] = _yaw_axis(tilted.get(side), f"{where}.hip_yaw_axis.{side}")
        return cls(
            hip_offset=offsets,
            hip_yaw_axis=axes,
            thigh=number("thigh", 0.01, 2.0),
            shank=number("shank", 0.01, 2.0),
            ankle_height=number("ankle_height", 0.0, 0.5),
            foot_length=number("foot_length", 0.01, 1.0),
            foot_width=number("foot_width", 0.01, 1.0),
            mass=number("mass", 0.1, 500.0),
        )


MAX_YAW_TILT = math.pi / 3   # rad: how far the hip yaw axis may lean from the vertical


def _yaw_axis(value: Any, where: str) -> tuple[float, float, float]:
    """A hip yaw axis from the config: [x, y, z], nonzero, in the y-z plane
    (x = 0: the closed-form inverse needs it), within MAX_YAW_TILT of +z or
    -z; returned as a unit vector."""
    if not isinstance(value, list) or len(value) != 3 or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
            for x in value):
        raise HumanoidConfigError(f"{where}: expected [x, y, z], got {value!r}")
    x, y, z = (float(v) for v in value)
    n = math.sqrt(x * x + y * y + z * z)
    if n < 1e-9:
        raise HumanoidConfigError(f"{where}: a joint axis must not be zero")
    if abs(x) > 1e-9 * n:
        raise HumanoidConfigError(f"{where}: the axis must lie in the y-z plane (x = 0), got {value!r}")
    if math.atan2(abs(y), abs(z)) > MAX_YAW_TILT + 1e-12:
        raise HumanoidConfigError(
            f"{where}: the axis leans more than {math.degrees(MAX_YAW_TILT):.0f} degrees "
            f"from the vertical, got {value!r}")
    return 0.0, y / n, z / n


def _axis_rotation(axis: Sequence[float], angle: float) -> np.ndarray:
    """Rotation by `angle` about the unit `axis` (Rodrigues)."""
    x, y, z = (float(v) for v in axis)
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)


@dataclass(frozen=True, slots=True)
class FootPose:
    """A sole pose: position (3,) and rotation matrix (3, 3) in the torso frame."""
    position: np.ndarray
    rotation: np.ndarray

    @classmethod
    def from_rpy(cls, position: Sequence[float], rpy: Sequence[float]) -> FootPose:
        return cls(np.array(position, dtype=float), np.array(_rot_rpy(*rpy)).reshape(3, 3))

    @property
    def rpy(self) -> np.ndarray:
        return np.array(rpy_of(self.rotation))


def _rot_rpy(roll: float, pitch: float, yaw: float) -> tuple[float, ...]:
    """Rz(yaw) Ry(pitch) Rx(roll), row-major, the convention of kinematics.rotation_rpy."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return (cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
            sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
            -sp, cp * sr, cp * cr)


def rpy_of(rotation: Any) -> tuple[float, float, float]:
    """(roll, pitch, yaw) of a rotation matrix Rz(yaw) Ry(pitch) Rx(roll)."""
    r = np.asarray(rotation, dtype=float)
    pitch = math.asin(max(-1.0, min(1.0, -float(r[2, 0]))))
    return math.atan2(r[2, 1], r[2, 2]), pitch, math.atan2(r[1, 0], r[0, 0])


class HumanoidLegKinematics:
    def __init__(self, geometry: HumanoidGeometry) -> None:
        self.geometry = geometry
        self.hip = {side: tuple(geometry.hip_offset[side]) for side in LEG_SIDES}
        self.yaw_axis = {side: tuple(geometry.hip_yaw_axis[side]) for side in LEG_SIDES}
        # Per side: the yaw axis as s Rx(phi) z with |phi| <= 90 degrees,
        # kept as (s, cos phi, sin phi, phi) for the inverse's hot path.
        self._tilt: dict[str, tuple[float, float, float, float]] = {}
        for side in LEG_SIDES:
            _, ay, az = self.yaw_axis[side]
            s = -1.0 if az < 0.0 else 1.0
            phi = math.atan2(-s * ay, s * az)
            self._tilt[side] = (s, math.cos(phi), math.sin(phi), phi)
        self.l1 = geometry.thigh
        self.l2 = geometry.shank
        self.h = geometry.ankle_height
        # Ankle-to-hip distances the knee can make; beyond them the target is
        # pulled onto the shell and flagged.
        self.r_max = self.l1 + self.l2
        self.r_min = abs(self.l1 - self.l2) + 1e-6

    def _hip(self, side: str) -> tuple[float, ...]:
        try:
            return self.hip[side]
        except KeyError:
            raise ValueError(f"side must be one of {LEG_SIDES}, got {side!r}") from None

    def _yaw(self, side: str, q0: float) -> np.ndarray:
        """The hip yaw joint's rotation, about the side's hip yaw axis."""
        return _axis_rotation(self.yaw_axis[side], q0)

    def forward(self, q: Sequence[float], side: str) -> FootPose:
        """Sole pose in the torso frame for the 6 joint angles of one leg."""
        q0, q1, q2, q3, q4, q5 = (float(x) for x in q)
        hip = np.array(self._hip(side))
        rz = self._yaw(side, q0)
        rx = np.array(_rot_rpy(q1, 0.0, 0.0)).reshape(3, 3)
        r_hip = rz @ rx
        # Thigh and shank lie in the hip-pitch plane (x-z of the hip-roll frame).
        leg = np.array([-self.l1 * math.sin(q2) - self.l2 * math.sin(q2 + q3), 0.0,
                        -self.l1 * math.cos(q2) - self.l2 * math.cos(q2 + q3)])
        ankle = hip + r_hip @ leg
        rot = r_hip @ np.array(_rot_rpy(q5, q2 + q3 + q4, 0.0)).reshape(3, 3)
        return FootPose(ankle - self.h * rot[:, 2], rot)

    def sole_jacobian(self, q: Sequence[float], side: str) -> tuple[np.ndarray, np.ndarray]:
        """The sole position (3,) and d(sole position)/d(q) (3, 6), torso
        frame: column i is joint i's axis crossed with the lever from that
        joint to the sole (the simulator maps a ground force to joint
        torques through it)."""
        q0, q1, q2, q3, q4, q5 = (float(x) for x in q)
        hip = np.array(self._hip(side))
        rz = self._yaw(side, q0)
        r_hip = rz @ np.array(_rot_rpy(q1, 0.0, 0.0)).reshape(3, 3)
        knee = hip + r_hip @ np.array([-self.l1 * math.sin(q2), 0.0, -self.l1 * math.cos(q2)])
        ankle = knee + r_hip @ np.array([-self.l2 * math.sin(q2 + q3), 0.0,
                                         -self.l2 * math.cos(q2 + q3)])
        rot = r_hip @ np.array(_rot_rpy(q5, q2 + q3 + q4, 0.0)).reshape(3, 3)
        sole = ankle - self.h * rot[:, 2]
        pitch = r_hip[:, 1]   # hip pitch, knee and ankle pitch share this axis
        axes = np.array((np.array(self.yaw_axis[side]), rz[:, 0], pitch, pitch, pitch, rot[:, 0]))
        points = np.array((hip, hip, hip, knee, ankle, ankle))
        return sole, np.cross(axes, sole - points).T

    def inverse(self, position: Sequence[float], rpy: Sequence[float],
                side: str) -> tuple[np.ndarray, bool]:
        """Joint angles (hip yaw, hip roll, hip pitch, knee, ankle pitch, ankle
        roll) putting the sole at `position` with orientation `rpy` (torso frame).

        An unreachable target keeps its orientation and has its ankle pulled
        onto the reachable shell along the hip-ankle line; the flag says so.
        """
        return self._solve(position, _rot_rpy(*rpy), side)

    def inverse_pose(self, pose: FootPose, side: str) -> tuple[np.ndarray, bool]:
        """`inverse` for a FootPose (rotation matrix instead of rpy)."""
        return self._solve(pose.position.tolist(), tuple(pose.rotation.ravel().tolist()), side)

    def inverse_legs(self, right: FootPose, left: FootPose) -> tuple[np.ndarray, bool]:
        """The 12 leg joints (right leg, then left) putting the soles at
        `right` and `left`; True if the IK pulled a foot back into reach."""
        qr, cr = self.inverse_pose(right, LEG_SIDES[0])
        ql, cl = self.inverse_pose(left, LEG_SIDES[1])
        return np.concatenate((qr, ql)), cr or cl

    def _solve(self, p: Sequence[float], r: Sequence[float], side: str) -> tuple[np.ndarray, bool]:
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = r
        hx, hy, hz = self._hip(side)
        l1, l2, h = self.l1, self.l2, self.h
        # Ankle point, then the hip seen from the ankle in the foot frame:
        # that vector depends only on knee, ankle pitch and ankle roll.
        dx = hx - (p[0] + h * r02)
        dy = hy - (p[1] + h * r12)
        dz = hz - (p[2] + h * r22)
        vx = r00 * dx + r10 * dy + r20 * dz
        vy = r01 * dx + r11 * dy + r21 * dz
        vz = r02 * dx + r12 * dy + r22 * dz
        n = math.sqrt(vx * vx + vy * vy + vz * vz)
        clipped = False
        if n > self.r_max:
            scale, clipped = self.r_max / n, True
        elif n < self.r_min:
            clipped = True
            if n < 1e-12:  # no direction left: put the hip straight above the ankle
                vx, vy, vz, n = 0.0, 0.0, 1.0, 1.0
            scale = self.r_min / n
        else:
            scale = 1.0
        if clipped:
            vx, vy, vz, n = vx * scale, vy * scale, vz * scale, n * scale
        # Ankle roll turns the leg plane about the foot's x axis.
        q5 = math.atan2(vy, vz)
        uz = math.hypot(vy, vz)
        cos_k = (n * n - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)
        q3 = math.acos(max(-1.0, min(1.0, cos_k)))
        q4 = math.atan2(-l1 * math.sin(q3), l1 * math.cos(q3) + l2) - math.atan2(vx, uz)
        # Hip rotation M = Rot(a, q0) Rx(q1) Ry(q2) = R_foot Rx(-q5) Ry(-(q3 + q4)).
        # With a = s Rx(phi) z: Rx(-phi) M = Rz(s q0) Rx(q1 - phi) Ry(q2).
        ce, se = math.cos(q5), -math.sin(q5)
        cc, sc = math.cos(q3 + q4), -math.sin(q3 + q4)
        # Columns of Rx(-q5) Ry(-(q3+q4)) that the extraction needs.
        a00, a10, a20 = cc, se * sc, -ce * sc
        a01, a11, a21 = 0.0, ce, se
        a02, a12, a22 = sc, -se * cc, ce * cc
        m01 = r00 * a01 + r01 * a11 + r02 * a21
        m11 = r10 * a01 + r11 * a11 + r12 * a21
        m20 = r20 * a00 + r21 * a10 + r22 * a20
        m21 = r20 * a01 + r21 * a11 + r22 * a21
        m22 = r20 * a02 + r21 * a12 + r22 * a22
        s, cphi, sphi, phi = self._tilt[side]
        if sphi != 0.0:
            m10 = r10 * a00 + r11 * a10 + r12 * a20
            m12 = r10 * a02 + r11 * a12 + r12 * a22
            m11, m21 = cphi * m11 + sphi * m21, cphi * m21 - sphi * m11
            m20, m22 = cphi * m20 - sphi * m10, cphi * m22 - sphi * m12
        q0 = s * math.atan2(-m01, m11)
        q1 = math.asin(max(-1.0, min(1.0, m21))) + phi
        q2 = math.atan2(-m20, m22)
        return np.array((q0, q1, q2, q3, q4, q5)), clipped

    def stance_legs(self, height: float,
                    separation: float | None = None) -> tuple[np.ndarray, bool]:
        """Both legs' joints (wire order: right 6 then left 6) for flat feet on
        the ground `height` below the torso origin, under the hips or
        `separation` apart (centred on the torso), torso upright."""
        q = []
        clipped = False
        for side in LEG_SIDES:
            x, y, _ = self.hip[side]
            if separation is not None:
                y = math.copysign(separation / 2.0, y)
            qs, c = self._solve((x, y, -height), (1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0), side)
            q.append(qs)
            clipped |= c
        return np.concatenate(q), clipped

    def body_height(self, q: Sequence[float]) -> float:
        """Torso origin above flat ground for both legs' joints (wire order),
        torso upright, standing on the lower sole (as the quadruped's
        body_height does for the simulator's load model)."""
        z = [float(self.forward(q[6 * i:6 * i + 6], side).position[2])
             for i, side in enumerate(LEG_SIDES)]
        return -min(z)
