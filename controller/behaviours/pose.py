"""Mode 21 POSE_CTRL: position-controlled body pose (SPEC §6.1).

Gait 5: absolute body height, joint-space linear to the IK pose for that
height. Any other gait: a relative Cartesian move over the block's duration,
stance feet fixed while the body turns by -rpy_des about the point -ctrl_point
and shifts by +pos_des (the reference's signs, SPEC §6.1: pitch > 0 lifts the
head), each tick's share of the shift made in the frame the body has turned
to so far (the reference's per-tick recurrence, §12.F.1), swing feet (contact
bit 0) moved by foot_pose. Successive blocks accumulate, from where the feet
were put: like the reference, only the joint targets are clamped to the
limits, never the feet the next block starts from. A ball
foot's contact point is what stays fixed: its centre moves as the ball rolls
with the tilting lower leg (QuadrupedKinematics.rolled), and the targets
allow for it. The stance legs carry the weight by feed-forward
(Robot.weight_support), so the pose does not sag by weight / kp.

A block that lifts a foot first moves the body over the feet that stay down
(its centre of mass SUPPORT_MARGIN inside their triangle once the block's own
move is made, as gravity sees it, the least horizontal move that does), with
every foot still on the ground, over the block's first
SHIFT_SHARE (at most SHIFT_S); the commanded move runs over the rest. The
next block with every foot down moves it back the same way. Lifting a leg
with the body where it stood tips the robot over that corner (in physics:
CyberDog 2 falls).
"""
from __future__ import annotations

import numpy as np

from controller.behaviours.base import Behaviour, BlockClock, TickContext, percent
from controller.protocol.block import ALL_LEGS, FROM_FILLER
from controller.robot.kinematics import rotation_rpy
from controller.robot.native import LINEAR

ABSOLUTE_HEIGHT_GAIT = 5
COMPLIANT_SWING_GAIT = 2
CONTINUOUS_TICKS = 1_800_000  # D = 0 counts as this long
LIMIT_MARGIN = 0.06           # rad inside the joint limits
ENTRY_TOLERANCE = np.radians(8.0)
SHIFT_SHARE = 0.4             # of a foot-lifting block: the body moves over the support first...
SHIFT_S = 0.6                 # ...for at most this long
FEET_LEVEL = 0.01             # m: feet this level are all down
ROLL_PASSES = 10              # at most this many IK passes for the ball feet's roll ...
ROLL_TOLERANCE = 1e-9         # ... m: until a pass moves the feet less than this
SUPPORT_MARGIN = 0.06         # m: the centre of mass this far inside the other feet (the
                              # soft pose gains let the body sag toward the lifted corner; at
                              # 3 cm CyberDog 2 still tipped onto it lifting a rear foot)


def stance_mask(contact: int, legs: int) -> np.ndarray:
    """Per leg: True in support. A contact of 0 means all legs down."""
    contact &= ALL_LEGS
    if contact == 0:
        contact = ALL_LEGS
    return np.array([(contact >> i) & 1 == 1 for i in range(legs)])


def inside_support(feet: np.ndarray, point: np.ndarray, margin: float) -> np.ndarray:
    """`point` moved the least way (edge by edge) to lie at least `margin`
    inside the convex polygon of `feet` (x, y; three or more), e.g. where the
    centre of mass must go before a foot lifts."""
    centre = feet.mean(axis=0)
    order = np.argsort(np.arctan2(feet[:, 1] - centre[1], feet[:, 0] - centre[0]))
    ring = feet[order]
    p = np.array(point, dtype=float)
    for _ in range(3):
        for a, b in zip(ring, np.roll(ring, -1, axis=0)):
            edge = b - a
            inward = np.array([-edge[1], edge[0]]) / np.linalg.norm(edge)   # counter-clockwise ring
            depth = float((p - a) @ inward)
            if depth < margin:
                p += (margin - depth) * inward
    return p


class PoseCtrl(Behaviour):
    mode = 21
    # 5 absolute height; 0, 1, 3 relative pose; 2 with compliant swing legs (SPEC §5.3).
    gaits = frozenset({0, 1, 2, 3, ABSOLUTE_HEIGHT_GAIT})

    def enter(self, ctx: TickContext) -> None:
        self.clock = BlockClock()
        self.shifted = np.zeros(3)      # the body's shifts over the support so far
        self.turned = np.eye(3)         # the body's turn since entry (entry frame)
        self.turn_now = np.eye(3)       # this block's turn so far (block-start frame)
        self.rot_target = self.rot_next = np.eye(3)
        # The feet where the pose puts them, before the joint limits: the
        # reference keeps its feet as state from tick to tick and only its
        # joint targets are clamped, so a step that reaches a limit (the
        # hi-five's sit folds a rear knee to its limit) does not change
        # where the next step starts from. None: from the joints.
        self.turn_step = np.eye(3)      # this block's per-tick turn of the feet, its powers so far
        self.turn_k, self.turn_pow, self.turn_sum = 0, np.eye(3), np.zeros((3, 3))
        self.feet_target: np.ndarray | None = None
        self.feet_next: np.ndarray | None = None
        self.feet_now: np.ndarray | None = None
        self.entry: np.ndarray | None = self.entry_pose(ctx, ENTRY_TOLERANCE)
        self.q_ref: np.ndarray | None = None       # the legs at the first block's start
        self.rolls: tuple[np.ndarray, np.ndarray]  # the ball feet's roll, last two ticks
        self.kernel.hold(self.entry)
        self.kernel.tau_ff[:] = 0.0
        self.height: float | None = None
        self.run(ctx)  # the entry tick is the block's first tick

    def _gains(self, ctx: TickContext) -> None:
        kp, kd = self.robot.gains("pose")
        if ctx.block.gait_id == COMPLIANT_SWING_GAIT:
            ckp, ckd = self.robot.gains("pose_swing_compliant")
            swing = np.repeat(~stance_mask(ctx.block.contact, len(self.cfg.legs)), 3)
            kp, kd = np.where(swing, ckp, kp), np.where(swing, ckd, kd)
        self.kernel.set_gains(kp, kd)

    def run(self, ctx: TickContext) -> None:
        block = ctx.block
        if block.mode != self.mode or ctx.refused:
            # A refused request: the robot does not move (SPEC §4.4). Stop any
            # running segment where it is; the next mode-21 block starts there.
            if self.clock.interrupt():
                self.kernel.hold(self.kernel.pos.copy())
            return
        if self.clock.advance(block):
            # A new block starts from the current command (at entry: the entry pose).
            self.q_block = self.entry if self.entry is not None else self.kernel.pos.copy()
            self.entry = None
            self.height = None
            self._gains(ctx)
        ticks = block.duration if block.duration > 0 else CONTINUOUS_TICKS
        if block.gait_id == ABSOLUTE_HEIGHT_GAIT:
            self._absolute_height(ctx, ticks)
        else:
            self._relative(ctx, ticks)
        # The stance legs carry the weight by feed-forward: no sag of weight / kp.
        self.robot.weight_support(ctx.body, stance_mask(block.contact if block.gait_id
                                                        != ABSOLUTE_HEIGHT_GAIT else 0,
                                                        len(self.cfg.legs)),
                                  self.kernel.tau_ff)

    def _absolute_height(self, ctx: TickContext, ticks: int) -> None:
        # Clamped into the config's range, not frozen (SPEC §6.1, §11).
        height = float(np.clip(ctx.block.pos_des[2], *self.cfg.pose_height_range))
        if height == self.height:
            return
        # New block or new height: restart from the current command.
        start = self.q_block if self.height is None else self.kernel.pos.copy()
        self.height = height
        self.feet_next = self.feet_now = None        # the next relative block starts from the joints
        target = self.robot.inside_limits(self.robot.height_pose(height), LIMIT_MARGIN, ctx.q)
        # Anchored one tick back, at the current command, so that on the
        # block's last tick the legs are exactly at the target.
        remaining = max(1, ticks - self.clock.count + 1)
        dt = self.robot.dt
        self.kernel.move(start, target, ctx.t - dt, remaining * dt, LINEAR)

    def _relative_target(self, ctx: TickContext, count: int) -> np.ndarray:
        """The joint target `count` ticks into the block: first the shift over
        the support (if a foot lifts), then the commanded move."""
        block = ctx.block
        over = min(1.0, count / self.shift_ticks) if self.shift_ticks else 1.0
        k = min(self.move_ticks, max(0, count - self.shift_ticks))
        s = k / max(1, self.move_ticks)
        centre = np.asarray(block.ctrl_point)
        # The reference, every tick, turns the stance feet by R = Rz Ry Rx of
        # rpy_des / D about -ctrl_point and then moves them by -pos_des / D
        # (SPEC §6.1, §12.F.1): the body turns by -rpy_des (pitch > 0 lifts
        # the head) about the point -ctrl_point and moves by +pos_des, each
        # tick's move in the frame the body has turned to so far. After k
        # ticks: feet + c = R^k (feet0 + c) - (R^0 + ... + R^(k-1)) pos_des / D.
        # `rot` is the body's turn in the block-start frame.
        turn, moved = self._ticks_of_turn(k)
        rot = turn.T
        shift = moved @ (np.asarray(block.pos_des) / max(1, self.move_ticks)) + over * self.support_shift
        # Swing feet move by foot_pose with the body; the support shift they
        # make up for (on the ground while the body moves over the others).
        swing = self.feet0 - over * self.support_shift + s * np.asarray(block.foot_pose[:3])
        # Stance feet fixed in the world, seen from the body after it turned and
        # moved. A ball foot rolls as its leg tilts: its contact point stays,
        # its centre moves by `d`, and the targets aim the centres there
        # (pinning the centres twists the body past the command: 0.35 rad for
        # 0.3 of yaw on CyberDog 2). The roll is taken as a function of the
        # pose since entry (`_roll`), the same for every leg, so blocks that
        # sum to nothing (a hi-five) end exactly where they began. It depends
        # on the legs it ends in: a fixed point (each pass shrinks the error
        # about sevenfold on CyberDog 2), started from the last two ticks'
        # rolls extrapolated, so a tick takes one or two passes.
        kin = self.robot.kin
        turn = self.turned @ rot
        before, last = self.rolls
        d = 2.0 * last - before
        for _ in range(ROLL_PASSES):
            stance = (self.feet0 + d + centre) @ rot - centre - shift
            q, _ = kin.inverse(np.where(self.stance[:, None], stance, swing + d @ rot))
            if kin.foot_radius == 0.0:
                break
            d, guess = (self._roll(q, turn) - self.roll0) @ self.turned, d  # block-start frame
            if np.max(np.abs(d - guess)) < ROLL_TOLERANCE:
                break
        self.rolls = (last, d)
        self.rot_target = rot
        self.feet_target = np.where(self.stance[:, None], stance, swing + d @ rot)
        return self.robot.inside_limits(q.reshape(-1), LIMIT_MARGIN, ctx.q)

    def _ticks_of_turn(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(R^k, R^0 + ... + R^(k-1)) of this block's per-tick turn R, kept
        from tick to tick (k only grows within a block)."""
        if k < self.turn_k:
            self.turn_k, self.turn_pow, self.turn_sum = 0, np.eye(3), np.zeros((3, 3))
        while self.turn_k < k:
            self.turn_sum = self.turn_sum + self.turn_pow
            self.turn_pow = self.turn_pow @ self.turn_step
            self.turn_k += 1
        return self.turn_pow, self.turn_sum

    def _start_relative(self, ctx: TickContext, ticks: int) -> None:
        """Where the feet are at the block's start, which of them stand, and
        (a foot lifting) how far the body must move over the others first."""
        legs = len(self.cfg.legs)
        self.turned = self.turned @ self.turn_now      # the last block's turn, as far as it got
        self.turn_now = np.eye(3)
        self.feet0 = self.feet_now if self.feet_now is not None else \
            self.robot.kin.forward(self.q_block.reshape(legs, 3))
        self.stance = stance_mask(ctx.block.contact, legs)
        self.support_shift = np.zeros(3)
        self.shift_ticks = 0
        if not self.stance.all() and self.stance.sum() >= 3:
            self.support_shift = self._over_support(ctx)
        elif self.stance.all() and self.shifted.any() and ctx.block.source != FROM_FILLER \
                and np.ptp(self.feet0[:, 2]) < FEET_LEVEL:
            # Every foot down again (a command says so, and the lifted one is
            # back level with the others): the body goes back by the shifts it
            # made, so relative steps that sum to zero end where they began (a
            # hi-five). The hold after a lift (the filler) keeps the foot up.
            self.support_shift = -self.shifted
        if self.support_shift.any():
            self.shift_ticks = min(int(SHIFT_S / self.robot.dt), int(SHIFT_SHARE * ticks))
        self.shifted = self.shifted + self.support_shift
        self.move_ticks = ticks - self.shift_ticks
        self.turn_step = rotation_rpy(*(np.asarray(ctx.block.rpy_des) / max(1, self.move_ticks)))
        self.turn_k, self.turn_pow, self.turn_sum = 0, np.eye(3), np.zeros((3, 3))
        if self.q_ref is None:
            self.q_ref = self.q_block.reshape(legs, 3).copy()
        self.roll0 = self._roll(self.q_block.reshape(legs, 3), self.turned)
        self.rolls = (np.zeros((legs, 3)), np.zeros((legs, 3)))    # the last two ticks' rolls

    def _over_support(self, ctx: TickContext) -> np.ndarray:
        """The body's move (body frame) that puts the centre of mass over the
        feet that stay down, SUPPORT_MARGIN inside them, as gravity sees it
        (feet and centre of mass levelled by the IMU's roll and pitch, the
        move horizontal), where the block's own move takes it: the robot's
        files shift the body themselves as they lift a foot (the hi-five:
        x -0.055, y -0.04), and a second shift on top sat CyberDog 2's rear
        knee on the floor. Levelled, a body pitched nose up 0.45 rad sees
        its feet 9 cm further forward."""
        com = self.cfg.balance.com_offset if self.cfg.balance is not None else np.zeros(3)
        level = rotation_rpy(ctx.imu.roll, ctx.imu.pitch, 0.0) if ctx.imu is not None else np.eye(3)
        feet = self.feet0[self.stance] @ level.T
        centre = level @ (np.asarray(com, dtype=float) + np.asarray(ctx.block.pos_des, dtype=float))
        move = np.zeros(3)
        move[:2] = inside_support(feet[:, :2], centre[:2], SUPPORT_MARGIN) - centre[:2]
        return level.T @ move

    def _roll(self, q: np.ndarray, turn: np.ndarray) -> np.ndarray:
        """Where the ball feet's centres have rolled (entry frame), legs at q
        and the body turned by `turn` since the mode's entry pose."""
        assert self.q_ref is not None
        return self.robot.kin.rolled(self.q_ref, q, turn)

    def _relative(self, ctx: TickContext, ticks: int) -> None:
        count = self.clock.count
        if count == 1:
            self._start_relative(ctx, ticks)
            self.q_next = self._relative_target(ctx, 1)
            self.rot_next, self.feet_next = self.rot_target, self.feet_target
        now, self.turn_now, self.feet_now = self.q_next, self.rot_next, self.feet_next
        self.q_next = self._relative_target(ctx, min(count + 1, ticks))
        self.rot_next, self.feet_next = self.rot_target, self.feet_target
        # Stream one tick: position now, velocity toward the next tick's target.
        self.kernel.move(now, self.q_next, ctx.t, self.robot.dt, LINEAR)

    def progress(self, ctx: TickContext) -> int:
        ticks = ctx.block.duration if ctx.block.duration > 0 else CONTINUOUS_TICKS
        return percent(self.clock.count, ticks)

    def reported_gait(self, ctx: TickContext) -> int:
        return ctx.block.gait_id
