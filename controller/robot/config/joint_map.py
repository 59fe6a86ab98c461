"""`joint_map`: the robot's own joint convention on the wire against the
controller's (docs/NEW_ROBOT.md "The joint map").

The controller thinks in one convention (controller/robot/kinematics.py):
its kinematics, limits, poses and motion files. A robot's bridge may number
its joints in another order, turn a joint the other way, or read another
angle at the same posture. Only the bridge-facing messages (joint_cmd,
joint_state, motor_ctrl) cross the map, per joint:

    q_wire   = direction * q + offset
    qd_wire  = direction * qd,   tau_wire = direction * tau
    kp, kd   unchanged (a gain does not change sign with the joint)

and wire slot k carries the controller's joint `order[k]`. Offsets are kept
at float32 precision, the wire's: a position read from joint_state and sent
back unchanged in joint_cmd then arrives bit for bit as it left.

An absent section is the identity map (CyberDog 2's wire is the controller's
convention).
"""
from __future__ import annotations

import numpy as np

from controller.robot.config.reader import Reader


class JointMap:
    """The map between the controller's joint arrays (its order, its
    convention) and the wire's. Every method writes into `out` when given
    one (no allocation: the tick calls them) and returns it. The *_from_wire
    methods share one scratch buffer: one thread per JointMap (`copy()`)."""

    def __init__(self, names: list[str], wire_order: list[str] | None = None,
                 direction: np.ndarray | None = None, offset: np.ndarray | None = None) -> None:
        n = len(names)
        self.names = list(names)
        order = [names.index(name) for name in wire_order] if wire_order is not None else list(range(n))
        self.order = np.array(order, dtype=np.int32)
        per_joint_dir = np.ones(n) if direction is None else np.asarray(direction, dtype=float)
        per_joint_off = np.zeros(n) if offset is None else np.asarray(offset, dtype=float)
        # The wire's precision: the offset a float32 can carry.
        per_joint_off = per_joint_off.astype(np.float32).astype(np.float64)
        self.direction = per_joint_dir.copy()     # per controller joint
        self.offset = per_joint_off.copy()
        # The same per wire slot, as the tick uses them (and csrc/wire.c).
        self.direction_wire = np.ascontiguousarray(per_joint_dir[self.order])
        self.offset_wire = np.ascontiguousarray(per_joint_off[self.order])
        self.wire_names = [names[j] for j in self.order]
        self.identity = (bool((self.order == np.arange(n)).all()) and bool((per_joint_dir == 1.0).all())
                         and not per_joint_off.any())
        self._tmp = np.zeros(n)
        for array in (self.order, self.direction, self.offset, self.direction_wire, self.offset_wire):
            array.flags.writeable = False

    def copy(self) -> JointMap:
        """The same map with its own scratch buffer, for another thread (the
        simulator's) to use beside the controller's."""
        return JointMap(self.names, self.wire_names, self.direction, self.offset)

    def __repr__(self) -> str:
        if self.identity:
            return "JointMap(identity)"
        return (f"JointMap(wire_order={self.wire_names}, direction={self.direction.tolist()}, "
                f"offset={self.offset.tolist()})")

    # -- controller -> wire -------------------------------------------------------------
    def positions_to_wire(self, q: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        return self._to_wire(q, out, signed=True, shifted=True)

    def signed_to_wire(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Velocities and torques."""
        return self._to_wire(x, out, signed=True, shifted=False)

    def plain_to_wire(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Gains: reordered only."""
        return self._to_wire(x, out, signed=False, shifted=False)

    def _to_wire(self, x: np.ndarray, out: np.ndarray | None, signed: bool, shifted: bool) -> np.ndarray:
        out = np.empty(len(self.order)) if out is None else out
        np.take(x, self.order, out=out)
        if signed:
            out *= self.direction_wire
        if shifted:
            out += self.offset_wire
        return out

    # -- wire -> controller -------------------------------------------------------------
    def positions_from_wire(self, w: np.ndarray | list[float],
                            out: np.ndarray | None = None) -> np.ndarray:
        return self._from_wire(w, out, signed=True, shifted=True)

    def signed_from_wire(self, w: np.ndarray | list[float],
                         out: np.ndarray | None = None) -> np.ndarray:
        return self._from_wire(w, out, signed=True, shifted=False)

    def plain_from_wire(self, w: np.ndarray | list[float],
                        out: np.ndarray | None = None) -> np.ndarray:
        return self._from_wire(w, out, signed=False, shifted=False)

    def _from_wire(self, w: np.ndarray | list[float], out: np.ndarray | None, signed: bool,
                   shifted: bool) -> np.ndarray:
        out = np.empty(len(self.order)) if out is None else out
        if self.identity:
            out[:] = w
            return out
        tmp = self._tmp
        tmp[:] = w
        if shifted:
            tmp -= self.offset_wire
        if signed:
            tmp *= self.direction_wire
        out[self.order] = tmp
        return out


def load_joint_map(r: Reader, names: list[str], joint_type: dict[str, str]) -> JointMap:
    """The `joint_map` section (absent: the identity). `joint_type` names
    each joint's type (a quadruped's abad/hip/knee), so that `direction` and
    `offset` may be given per type; a joint's own name overrides its type."""
    if "joint_map" not in r.data:
        return JointMap(names)
    mr = r.sub("joint_map")
    known = {"wire_order", "direction", "offset"}
    unknown = sorted(set(mr.data) - known)
    if unknown:
        raise r.fail("joint_map", f"unknown keys {unknown} (known: {sorted(known)})")
    wire_order = mr.get("wire_order", list, None)
    if wire_order is not None and sorted(map(str, wire_order)) != sorted(names):
        missing = sorted(set(names) - set(map(str, wire_order)))
        unknown_names = [w for w in wire_order if w not in names]
        repeated = sorted({w for w in wire_order if wire_order.count(w) > 1})
        raise mr.fail("wire_order", f"must name each of the {len(names)} joints once: missing "
                                    f"{missing}, unknown {unknown_names}, repeated {repeated}")
    direction = _per_joint(mr, "direction", names, joint_type, 1.0)
    if not np.isin(direction, (-1.0, 1.0)).all():
        raise mr.fail("direction", "each direction is 1 or -1")
    offset = _per_joint(mr, "offset", names, joint_type, 0.0)
    if (np.abs(offset) > 2 * np.pi).any():
        raise mr.fail("offset", "an offset beyond one turn (2 pi rad) is not a zero offset")
    return JointMap(names, wire_order, direction, offset)


def _per_joint(mr: Reader, key: str, names: list[str], joint_type: dict[str, str],
               default: float) -> np.ndarray:
    """A per-joint array from a mapping of joint types and names."""
    spec = mr.get(key, dict, {})
    types = set(joint_type.values())
    values = np.full(len(names), default)
    entries = mr.sub(key) if key in mr.data else None
    for name in spec:
        if name not in types and name not in names:
            raise mr.fail(key, f"{name!r} is neither a joint type {sorted(types)} nor a joint name")
    for i, joint in enumerate(names):
        for name in (joint_type.get(joint), joint):      # the type first, the name overrides
            if name is not None and name in spec:
                assert entries is not None
                values[i] = entries.number(name, -1e3, 1e3)
    return values
