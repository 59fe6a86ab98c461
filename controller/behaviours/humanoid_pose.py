"""Mode 21 POSE_CTRL on a humanoid (SPEC §6.1 adapted to a biped).

Gait 5: absolute torso height, pos_des z clamped into the config's
pose_height_range; the legs move linearly in joint space to the 6-DoF IK of
flat feet under the hips with the torso upright (the robot seam's
height_pose), arms and head to their stand pose, over the block's duration.

Any other gait: a relative body pose. Over the block's duration the torso
turns by rpy_des about ctrl_point (torso frame; the origin is the hip axis
midpoint) and shifts by pos_des, while both soles stay where they were in the
world: each sole's position and orientation are re-expressed in the moved
torso frame and both legs solved with the 6-DoF IK. Successive blocks
accumulate, as on the quadruped. A biped cannot lift a foot in a pose, so
contact and foot_pose are ignored; arms and head hold where they were.

Block clock, progress, entry pose and the freeze on a refused request are the
quadruped's (pose.py).
"""
from __future__ import annotations

import numpy as np

from controller.behaviours.base import HumanoidRobot, TickContext
from controller.behaviours.pose import LIMIT_MARGIN, PoseCtrl
from controller.robot.humanoid_kinematics import FootPose
from controller.robot.kinematics import rotation_rpy


class HumanoidPose(PoseCtrl):
    robot: HumanoidRobot

    def _gains(self, ctx: TickContext) -> None:
        kp, kd = self.robot.gains("pose")
        self.kernel.set_gains(kp, kd)

    def _start_relative(self, ctx: TickContext, ticks: int) -> None:
        self.soles0 = self.robot.feet(self.q_block)
        self.ticks = ticks

    def _relative_target(self, ctx: TickContext, count: int) -> np.ndarray:
        block = ctx.block
        s = min(1.0, count / self.ticks)
        centre = np.asarray(block.ctrl_point, dtype=float)
        rot = rotation_rpy(*(s * np.asarray(block.rpy_des, dtype=float)))
        shift = s * np.asarray(block.pos_des, dtype=float)
        # A sole fixed in the world, seen from the torso after it turned
        # about the centre and moved: p' = R^T (p - c - shift) + c, R' = R^T R.
        right, left = (FootPose(rot.T @ (f.position - centre - shift) + centre, rot.T @ f.rotation)
                       for f in self.soles0)
        q = self.q_block.copy()
        q[self.cfg.leg_indices], _ = self.robot.legs_for((right, left))
        return self.robot.inside_limits(q, LIMIT_MARGIN, ctx.q)

    def limbs_in_use(self) -> frozenset[str]:
        return self.robot.LEG_LIMBS   # arms and head hold their stand pose
