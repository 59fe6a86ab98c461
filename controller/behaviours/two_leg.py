"""Mode 64 TWO-LEG on a quadruped: rear up onto the hind feet, greet, land.

The reference stages the motion as kneel, rear up, gesture and land, with
progress 25 / 50 / 75 / 100 at the stage ends (SPEC §5.11, §6.6). Here:

kneel    four feet fixed on the ground, the body moves back until its centre
         of mass is over the rear feet, low and a little nose up (per-tick
         IK, pose gains, the weight carried by feed-forward): the front feet
         end unloaded.
rear     the rear legs balance the body on their feet (controller/motion/
         two_leg.py: forces from the IMU and the legs' kinematics, J^T f as
         torque) while the references raise the trunk to `pitch` and the
         centre of mass to `height`; the front legs fold. The stage fails
         unless the IMU shows the nose up by `min_pitch` at its end.
greet    balancing, the front right leg waves (sideways, at its abad).
land     the trunk is lowered back to the kneel's pitch and height with the
         front feet reaching for where they stood; the centre of mass is led
         forward over them until they carry load, then the body moves back
         over the four feet to the stand.

A balance that loses the body (centre of mass off the feet, or the trunk
far from its reference) ends the motion as failed: logged, never 100, and
it lands at once.
"""
from __future__ import annotations

import math

import numpy as np

from controller.behaviours.base import Behaviour, QuadrupedRobot, TickContext, replay_refusal
from controller.motion import gestures
from controller.motion.two_leg import Ref, TwoLegBalance, min_jerk
from controller.protocol.block import Block
from controller.robot.config.damping import given_back
from controller.robot.config.quadruped import Geometry
from controller.robot.config.reader import ConfigError
from controller.robot.config.two_leg import TwoLegPlan

ENTRY_TOLERANCE = np.radians(8.0)
LIMIT_MARGIN = 0.02                 # rad: joint targets stay this far inside the limits
FRONT = np.array([0, 1])
FRONT_SHARE = 0.25                  # of the weight on the front feet: they are down
LEAN_WAIT_S = 0.5                   # s the lean may wait for them after `lean_s`
GRAVITY_G = 9.81
WAVE_GAITS = (0, 10)                # the greeting is motiond's wave; 1-9, 11-14 the SPEC's gestures
SWING_GAITS = (6, 7)                # the front right foot feels for an obstacle
STOP_BACKOFF = 0.05                 # of a swing period: where a stopped swing rests
# A hand that stays in the swing is touched again and again, and each touch
# pitches the trunk on two legs (±0.3 rad): after this many the greeting ends
# early, with the foot resting clear of it, and the robot comes down.
GIVE_UP_TOUCHES = 3
# s past rear_s a governed rear-up (`rear_lead`) may wait for the trunk
REAR_WAIT_S = 3.0
GESTURE_SETTLE_S = 0.0              # s: before the lead-in (a longer stay folded drifts the pitch)
GESTURE_LEAD_S = 0.5                # s: the folded front feet move to the gestures' start
PAST_VERTICAL = math.pi / 2         # rad nose up: the trunk has gone over, whatever its reference
REAR = np.array([2, 3])


def smooth(s: float) -> float:
    """Minimum-jerk 0 -> 1 over s in [0, 1] (min_jerk's value)."""
    return min_jerk(s, 1.0, 0.0, 1.0).value


def nose_up(theta: float) -> np.ndarray:
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])


def level(rot: np.ndarray) -> np.ndarray:
    """The body's rotation with its yaw taken off."""
    yaw = math.atan2(rot[1, 0], rot[0, 0])
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]]) @ rot


class TwoLegStand(Behaviour):
    mode = 64
    # Each stage's progress (SPEC §5.11: 25 after kneeling, 50 after rearing
    # up, 75 after the gesture, 100 at the end) and its share of the motion's
    # time for controller_status.
    PROGRESS = {"kneel": 0, "rear": 25, "greet": 50, "reach": 75, "land": 75, "lean": 75,
                "stand": 75, "done": 100}
    keeps_target = True

    def __init__(self, robot: QuadrupedRobot, gaits: frozenset[int]) -> None:
        super().__init__(robot)
        cfg = robot.cfg
        self.kin = robot.kin
        self.plan: TwoLegPlan = cfg.two_leg.plan
        self.gaits = gaits
        if cfg.balance is None or cfg.mass_model is None:
            raise ConfigError(f"{cfg.path}: scripts.modes.64: kind two_leg balances with the "
                              "config's `balance` (inertia) and `mass_model`; one is missing")
        self.balance = TwoLegBalance(self.kin, cfg.mass_model, cfg.balance.inertia, robot.dt,
                                     cfg.two_leg.gains)
        self.pose_kp, self.pose_kd = robot.gains("pose")
        self.damping = given_back(cfg.joint_damping)      # None: the joints have none
        self.stage = "done"
        self.stage_tick = 0
        self.gait = 0
        self.inside = False
        self.failed: str | None = None
        self.failed_bar = 0
        self.feet = np.zeros((4, 3))       # the feet, level entry frame, from the body origin
        self.feet_from = np.zeros((4, 3))  # where a body-pose stage's feet start (they end at `feet`)
        self.pose0 = np.zeros(3)           # (dx, dz, nose up) where the stage's body pose starts
        self.pose1 = np.zeros(3)
        self.q_prev = np.zeros(12)
        self.q_back = (np.zeros(3), np.zeros(3))   # FR's targets two and one ticks ago
        self.ff = np.zeros(12)
        self.ref0 = np.zeros(2)            # (pitch, height) the balance starts from
        self.front0 = np.zeros(6)
        self.front1 = np.zeros(6)
        self.x_trim = 0.0
        self.yaw_ref = 0.0
        self.gesture_from = gestures.HOME.copy()
        assert isinstance(cfg.geometry, Geometry)
        self.watch = gestures.ContactWatch(cfg.geometry, cfg.mass_model, robot.dt, 0, self.plan.joint_friction)
        self.swing_phase = 0.0               # gestures 6 and 7: swings done (the clock stops on contact)
        self.swing_stopped: int | None = None   # the tick a contact stopped the swing
        self.swing_contacts = 0
        self.deaf_until = 0
        self.rear_clock = 0.0                # s: the rear-up reference's clock (_rear_reference)
        # (pitch, rate) the height follows instead of the trunk's (rear_lead)
        self.height_pitch: tuple[float, float] | None = None

    # -- the mode's interface ----------------------------------------------
    def refuses(self, block: Block) -> str | None:
        """Another 64 gait while in 64 (playing or done) is refused (SPEC §11)."""
        return replay_refusal(self.cfg.fsm.name(self.mode), self.gait if self.inside else None,
                              block.gait_id, {}, self.gaits or ())

    def enter(self, ctx: TickContext) -> None:
        self.inside = True
        self.gait = ctx.block.gait_id
        self.failed = None
        self.x_trim = 0.0
        self.q_prev = self.entry_pose(ctx, ENTRY_TOLERANCE)
        if ctx.body is None:
            self.failed = "no state estimate (IMU): cannot balance on two legs"
            self.kernel.hold(self.q_prev)
            self.stage = "done"
            return
        self._capture_feet(ctx)
        p = self.plan
        theta = p.kneel_pitch
        rot = nose_up(theta)
        rear_x = float(self.feet[REAR, 0].mean())
        dx = rear_x + p.kneel_margin - float((rot @ self.balance.centre_of_mass(ctx.q))[0])
        dz = float(self.feet[:, 2].mean()) + p.kneel_height
        self.pose0 = np.zeros(3)
        self.pose1 = np.array([dx, dz, theta])
        self.kernel.set_gains(self.pose_kp, self.pose_kd)
        self._begin(ctx, "kneel")

    def _capture_feet(self, ctx: TickContext) -> None:
        """The feet where they are now, in the level frame of the body origin;
        the body pose (dx, dz, nose up) is then measured from this origin."""
        assert ctx.body is not None
        self.feet = ctx.body.feet @ level(ctx.body.rot).T
        self.feet_from = self.feet.copy()
        self.yaw_ref = math.atan2(ctx.body.rot[1, 0], ctx.body.rot[0, 0])

    def _begin(self, ctx: TickContext, stage: str) -> None:
        self.stage = stage
        self.stage_tick = ctx.tick

    def _elapsed(self, ctx: TickContext) -> float:
        """Seconds into the stage, from whole ticks."""
        return (ctx.tick - self.stage_tick) * self.robot.dt

    def _over(self, ctx: TickContext, seconds: float) -> bool:
        """The stage has lasted `seconds` (to the tick: round(seconds / dt) ticks)."""
        return ctx.tick - self.stage_tick >= round(seconds / self.robot.dt)

    def run(self, ctx: TickContext) -> None:
        if self.stage == "done" or ctx.body is None:
            self._stream(ctx, self.q_prev)
            if self.failed is None and ctx.body is not None:    # standing: carry the weight
                self.robot.weight_support(ctx.body, np.ones(4, dtype=bool), self.ff)
                np.clip(self.ff, -self.cfg.torque_limit, self.cfg.torque_limit, out=self.kernel.tau_ff)
            return
        getattr(self, "_" + self.stage)(ctx)

    # -- four feet on the ground: the body moves over them --------------------
    def _body_pose(self, ctx: TickContext, duration: float) -> None:
        """The body pose from pose0 to pose1 over `duration` (minimum jerk)
        with the feet held where _capture_feet found them; then the stage's
        _after_ step."""
        s = smooth(self._elapsed(ctx) / duration)
        dx, dz, theta = self.pose0 + (self.pose1 - self.pose0) * s
        rot = nose_up(theta)
        feet = self.feet_from + (self.feet - self.feet_from) * s
        feet = (feet - np.array([dx, 0.0, dz])) @ rot              # rows: rot.T @ (f - o)
        q, _ = self.kin.inverse(feet)
        q = self.robot.inside_limits(q.reshape(-1), LIMIT_MARGIN, ctx.q)
        self._stream(ctx, q)
        self.robot.weight_support(ctx.body, np.ones(4, dtype=bool), self.ff)
        np.clip(self.ff, -self.cfg.torque_limit, self.cfg.torque_limit, out=self.kernel.tau_ff)
        # On four feet too, a trunk far off its pose (rearing up again on the
        # rear feet, or past the vertical) is a lost motion, never a 100.
        nose = self._nose_up(ctx)
        if abs(nose - theta) > self.plan.lose_pitch or nose > PAST_VERTICAL:
            self._fail(ctx, f"lost the body in {self.stage}: the nose {nose:+.2f} rad up "
                            f"(reference {theta:+.2f})")
            return
        if self._over(ctx, duration):
            getattr(self, "_after_" + self.stage)(ctx)

    def _nose_up(self, ctx: TickContext) -> float:
        """The trunk's measured nose-up angle in the heading captured with the
        feet, over the whole circle: past the vertical it is above pi / 2
        (from the body's z axis, which stays well defined there)."""
        assert ctx.body is not None
        z = ctx.body.rot[:, 2]
        along = math.cos(self.yaw_ref) * float(z[0]) + math.sin(self.yaw_ref) * float(z[1])
        return math.atan2(-along, float(z[2]))

    def _kneel(self, ctx: TickContext) -> None:
        self._body_pose(ctx, self.plan.kneel_s)

    def _after_kneel(self, ctx: TickContext) -> None:
        self._start_balance(ctx)
        self.rear_clock = 0.0
        self.height_pitch = None
        self.front0 = ctx.q[:6].copy()
        self.front1 = np.tile(np.array(self.plan.tuck), 2)
        self._begin(ctx, "rear")

    def _stand(self, ctx: TickContext) -> None:
        self._body_pose(ctx, self.plan.stand_s)

    def _after_stand(self, ctx: TickContext) -> None:
        self._begin(ctx, "done")

    # -- on two legs ------------------------------------------------------------
    def _start_balance(self, ctx: TickContext) -> None:
        assert ctx.body is not None
        b = ctx.body
        self.balance.reset()
        self.balance.measure(b.rot, b.gyro, b.feet, b.jacobian, ctx.q, ctx.qd)
        self.ref0 = np.array([self.balance.pitch, self.balance.h])
        gains_kp = self.pose_kp.copy()
        gains_kd = self.pose_kd.copy()
        gains_kp[6:] = 0.0
        gains_kd[6:] = self.plan.rear_kd
        self.kernel.set_gains(gains_kp, gains_kd)

    def _balance_tick(self, ctx: TickContext, pitch_ref: Ref, x_ref: float,
                      front: np.ndarray) -> bool:
        """One tick on the rear feet; False when the balance lost the body."""
        assert ctx.body is not None
        b = ctx.body
        bal = self.balance
        bal.measure(b.rot, b.gyro, b.feet, b.jacobian, ctx.q, ctx.qd)
        height_ref = self._height_for_pitch()
        p = self.plan
        self.x_trim -= p.pitch_integral * (bal.pitch - pitch_ref.value) * self.robot.dt
        bal.step(b.rot, b.feet, b.jacobian, ctx.q, pitch_ref, height_ref, x_ref + self.x_trim,
                 self.yaw_ref, self.cfg.torque_limit)
        self.kernel.tau_ff[:] = bal.tau
        if self.damping is not None:
            # A torque-controlled joint loses its own viscous damping (config
            # joint_damping, a maker's model's) at the speed it turns: given
            # back, the feet push with the forces the balance asked for.
            rear = self.kernel.tau_ff[6:]
            rear += self.damping[6:] * ctx.qd[6:]
            np.clip(rear, -self.cfg.torque_limit[6:], self.cfg.torque_limit[6:], out=rear)
        # The rear joints are torque controlled (kp 0): their targets follow
        # the measurement, so rear_kd damps only their tick-to-tick jitter.
        q = ctx.q.copy()
        q[:6] = front
        q = self.robot.inside_limits(q, LIMIT_MARGIN, ctx.q)
        # A torque-controlled joint's target drives nothing: it follows the
        # measurement however fast a shove swings the leg, its velocity
        # feed-forward held to the joint's limit (the kernel would clamp both,
        # and flag a target nobody tracks).
        self.kernel.pos[6:] = q[6:]
        reach = 0.999 * self.cfg.v_max[6:] * self.robot.dt   # just inside: the kernel flags the limit itself
        self.q_prev[6:] = q[6:] - np.clip(q[6:] - self.q_prev[6:], -reach, reach)
        self._stream(ctx, q)
        if abs(bal.x - x_ref - self.x_trim) > p.lose_x or abs(bal.pitch - pitch_ref.value) > p.lose_pitch \
                or -bal.pitch > PAST_VERTICAL:
            self._fail(ctx, f"lost the balance in {self.stage}: centre of mass {bal.x:+.3f} m "
                            f"ahead of the rear feet, pitch {bal.pitch:+.2f} rad "
                            f"(reference {pitch_ref.value:+.2f})")
            return False
        return True

    def _fail(self, ctx: TickContext, why: str) -> None:
        """The balance lost the body: the motion failed (logged by the
        controller, progress frozen, 0 if it never reared up). The legs hold
        where they are, softly, with no feed-forward; a recovery stand (12)
        gets the robot up."""
        if self.failed is None:
            self.failed = why
            self.failed_bar = 0 if self.stage in ("kneel", "rear") else self.PROGRESS[self.stage]
        self.kernel.tau_ff[:] = 0.0
        self.kernel.set_gains(self.pose_kp, self.pose_kd)
        self.q_prev = ctx.q.copy()
        self.kernel.hold(self.q_prev)
        self._begin(ctx, "done")

    def _rear(self, ctx: TickContext) -> None:
        p = self.plan
        pitch_ref = self._rear_reference(ctx)
        # The front feet leave as the balance takes the body back over the
        # rear feet; then they fold.
        front = self.front0 + (self.front1 - self.front0) * smooth((self._elapsed(ctx) - 0.3) / 0.5)
        if not self._balance_tick(ctx, pitch_ref, 0.0, front):
            return
        if self._rear_done(ctx):
            self.height_pitch = None
            if -self.balance.pitch < p.min_pitch:
                self._fail(ctx, f"did not rear up: the nose was {-self.balance.pitch:.2f} rad up "
                                f"(min_pitch {p.min_pitch:g})")
                return
            self.gesture_from = self._front_feet(self.front1)
            self.watch.reset()
            self.swing_phase = 0.0
            self.swing_stopped = None
            self.swing_contacts = 0
            self.deaf_until = 0
            self._begin(ctx, "greet")

    def _rear_reference(self, ctx: TickContext) -> Ref:
        """The rear-up's pitch reference: minimum jerk from where the balance
        began to `pitch` over rear_s - 0.3 s, after 0.3 s still. With
        `rear_lead` its clock (`rear_clock`, s) slows as the trunk lags it
        and stops at that lag (full speed while the trunk keeps up or leads;
        the rate and acceleration scale with the speed), and the height
        follows this reference (`height_pitch`) rather than the trunk."""
        p = self.plan
        span, start, end = p.rear_s - 0.3, float(self.ref0[0]), -p.pitch
        if p.rear_lead <= 0.0:
            return min_jerk(self._elapsed(ctx) - 0.3, span, start, end)
        speed = 1.0
        if self.rear_clock > 0.3:
            ahead = min_jerk(self.rear_clock - 0.3, span, start, end)
            lag = self.balance.pitch - ahead.value         # > 0: the nose is behind it
            speed = min(1.0, max(0.0, 1.0 - lag / p.rear_lead))
        self.rear_clock += speed * self.robot.dt
        ref = min_jerk(self.rear_clock - 0.3, span, start, end)
        ref = Ref(ref.value, ref.rate * speed, ref.acc * speed * speed)
        self.height_pitch = (ref.value, ref.rate)
        return ref

    def _rear_done(self, ctx: TickContext) -> bool:
        """The rear-up's end: rear_s on the clock; with `rear_lead`, its
        reference's clock 0.3 s past the reference's end (still), or
        REAR_WAIT_S after rear_s whatever the trunk did."""
        p = self.plan
        if p.rear_lead <= 0.0:
            return self._over(ctx, p.rear_s)
        return self.rear_clock >= p.rear_s + 0.3 or self._over(ctx, p.rear_s + REAR_WAIT_S)

    def _greet(self, ctx: TickContext) -> None:
        if self.gait not in WAVE_GAITS:
            self._gesture(ctx)
            return
        p = self.plan
        t = self._elapsed(ctx)
        front = self.front1.copy()
        # The front right leg waves sideways (its abad): a swing in the
        # sagittal plane would rock the pitch the balance holds.
        front[0] += p.wave * math.sin(2 * math.pi * p.wave_hz * t) * smooth(t / 0.5) \
            * smooth((p.greet_s - t) / 0.5)
        if not self._balance_tick(ctx, Ref(-p.pitch), 0.0, front):
            return
        if self._over(ctx, p.greet_s):
            self.front0 = front
            self._begin(ctx, "reach")

    def _gesture(self, ctx: TickContext) -> None:
        """Gaits 1-14: the front feet follow the SPEC's path for the gait
        (controller/motion/gestures.py), from where the fold left them."""
        t = self._elapsed(ctx) - GESTURE_SETTLE_S
        if t < GESTURE_LEAD_S:
            s = smooth(t / GESTURE_LEAD_S)
            rel = self.gesture_from + (gestures.HOME - self.gesture_from) * s
        elif self.gait in SWING_GAITS:
            rel = self._swing(ctx)
        else:
            rel = gestures.feet(self.gait, t - GESTURE_LEAD_S)
        front = self._front_joints(rel, ctx)
        if not self._balance_tick(ctx, Ref(-self.plan.pitch), 0.0, front):
            return
        blocked = self.gait in SWING_GAITS and self.swing_contacts >= GIVE_UP_TOUCHES \
            and self.swing_stopped is not None
        if blocked or self._over(ctx, GESTURE_SETTLE_S + GESTURE_LEAD_S + gestures.length(self.gait)):
            self.front0 = front
            self._begin(ctx, "reach")

    def _swing(self, ctx: TickContext) -> np.ndarray:
        """Gestures 6 and 7: the front right foot swings out and back; a
        contact (ContactWatch) stops it, until the torques have been quiet
        for a while (6), or turns it back 100 ticks later (7)."""
        assert ctx.body is not None
        watch = self.watch
        dt = self.robot.dt
        qdd = (self.q_prev[0:3] - 2.0 * self.q_back[1] + self.q_back[0]) / (dt * dt)
        residual = watch.residual(ctx.q[0:3], ctx.qd[0:3], ctx.tau[0:3], ctx.body.rot, qdd)
        if self.swing_stopped is None:
            if ctx.tick >= self.deaf_until and watch.touched(residual):
                self.swing_stopped = ctx.tick
                self.swing_contacts += 1
                # Stop a little short of where the contact was felt (the
                # filter and the 5 ticks lag it): the foot rests clear of the
                # obstacle instead of pressing into it.
                self.swing_phase = max(0.0, self.swing_phase - STOP_BACKOFF)
                watch.inside = 0
            else:
                self.swing_phase += self.robot.dt / gestures.SWING_PERIOD
        elif self.gait == 6:
            if watch.clear(residual):
                self.swing_stopped = None
                watch.outside = 0
        elif ctx.tick - self.swing_stopped >= gestures.REBOUND_TICKS:
            frac = self.swing_phase % 1.0
            if frac < 0.5:                         # going out: turn back from the same point
                self.swing_phase += 1.0 - 2.0 * frac
            self.swing_stopped = None
            self.deaf_until = ctx.tick + gestures.DEAF_TICKS
            watch.outside = 0
        rel = gestures.HOME.copy()
        rel[0] = gestures.swing_point(self.swing_phase % 1.0)
        return rel

    def _front_feet(self, front: np.ndarray) -> np.ndarray:
        """The front feet (FR, FL) from their abad axes, body axes, for joints `front`."""
        q = np.concatenate([front, np.zeros(6)]).reshape(4, 3)
        return self.kin.forward(q)[FRONT] - self.kin.hip[FRONT]

    def _front_joints(self, rel: np.ndarray, ctx: TickContext) -> np.ndarray:
        """The front legs' joints for feet `rel` from their abad axes (IK,
        pulled into reach if need be)."""
        feet = np.zeros((4, 3))
        feet[REAR] = self.kin.hip[REAR] + np.array([0.0, 0.0, -0.2])   # unused: the rear legs balance
        # A foot out of reach with the knee inside its limits (CyberDog 2's
        # front feet reach 0.285 m from the hip at the knee's limit; the
        # SPEC's hold asks 0.30) is pulled toward the hip until it is in reach.
        knee_min = self.cfg.q_min[2:6:3] + LIMIT_MARGIN
        for _ in range(40):
            feet[FRONT] = self.kin.hip[FRONT] + rel
            q, clipped = self.kin.inverse(feet)
            if not clipped[FRONT].any() and np.all(q[FRONT, 2] >= knee_min):
                break
            rel = rel * np.array([0.99, 1.0, 0.99])
        return q[:2].reshape(-1)

    def _front_reach(self) -> np.ndarray:
        """The front legs' joints with the feet where they stood at the end
        of the kneel, in the kneel's body pose."""
        reach = (self.feet[FRONT] - np.array([self.pose1[0], 0.0, self.pose1[1]])) @ nose_up(self.pose1[2])
        q, _ = self.kin.inverse(np.vstack([reach, np.zeros((2, 3))]))
        return q[:2].reshape(-1)

    def _reach(self, ctx: TickContext) -> None:
        """Still on two legs at the top, the front legs slowly unfold to reach
        for the ground (their swing is a disturbance the balance takes)."""
        p = self.plan
        s = smooth(self._elapsed(ctx) / p.reach_s)
        front = self.front0 + (self._front_reach() - self.front0) * s
        if not self._balance_tick(ctx, Ref(-p.pitch), 0.0, front):
            return
        if self._over(ctx, p.reach_s):
            self.front0 = front
            self._begin(ctx, "land")

    def _land(self, ctx: TickContext) -> None:
        p = self.plan
        t = self._elapsed(ctx)
        pitch_ref = min_jerk(t, p.land_s, -p.pitch, float(self.ref0[0]))
        if not self._balance_tick(ctx, pitch_ref, 0.0, self.front0):
            return
        if self._over(ctx, p.land_s):
            self._begin(ctx, "lean")

    def _lean(self, ctx: TickContext) -> None:
        """The centre of mass is led `lean` ahead of the rear feet, onto the
        front feet; the stand begins once they carry FRONT_SHARE of the weight
        (by the joint torques), or LEAN_WAIT_S after the lean at the latest."""
        p = self.plan
        s = smooth(self._elapsed(ctx) / p.lean_s)
        if not self._balance_tick(ctx, Ref(float(self.ref0[0])), p.lean * s,
                                  self.front0):
            return
        assert ctx.body is not None
        loaded = float(ctx.body.force[FRONT, 2].sum()) >= FRONT_SHARE * self.balance.m * GRAVITY_G
        if (self._over(ctx, p.lean_s) and loaded) or self._over(ctx, p.lean_s + LEAN_WAIT_S):
            self._capture_feet(ctx)
            # Flat ground: every foot ends on the rear feet's level, so a
            # front foot still short of the ground is put down by the stand
            # (over the stage, from where it is: no jump in the targets).
            self.feet_from = self.feet.copy()
            self.feet[:, 2] = float(self.feet[REAR, 2].mean())
            rot = level(ctx.body.rot)
            pitch = math.asin(max(-1.0, min(1.0, rot[2, 0])))
            self.pose0 = np.array([0.0, 0.0, pitch])
            self.pose1 = self._stand_pose()
            self.kernel.set_gains(self.pose_kp, self.pose_kd)
            self._begin(ctx, "stand")

    def _height_for_pitch(self) -> Ref:
        """The centre of mass's height for the trunk's measured pitch: from
        where the balance began (pitch, height) to (`pitch`, `height`) on two
        legs, in proportion. Tied to the measured pitch, not to the clock,
        the height stays one the legs can reach: a trunk that lags its pitch
        reference low does not have its hips pushed up past the legs' reach,
        nor a trunk coming down its rear knees pressed to the ground. A
        governed rear-up (`rear_lead`) ties it to its reference instead, which
        the trunk keeps near; rearing up, `rear_height_ease` k gives the
        height 1 - (1 - s)^k of its rise at a share s of the pitch's."""
        bal, p = self.balance, self.plan
        p0, h0 = float(self.ref0[0]), float(self.ref0[1])
        p1, h1 = -p.pitch, p.height
        pitch, rate = (bal.pitch, float(bal.rates[1])) if self.height_pitch is None else self.height_pitch
        share = (pitch - p0) / (p1 - p0)
        if share <= 0.0:
            return Ref(h0)
        if share >= 1.0:
            return Ref(h1)
        k = p.rear_height_ease if self.stage == "rear" else 1.0
        if k == 1.0:
            return Ref(h0 + (h1 - h0) * share, (h1 - h0) / (p1 - p0) * rate)
        slope = (h1 - h0) * k * (1.0 - share) ** (k - 1.0) / (p1 - p0)
        return Ref(h0 + (h1 - h0) * (1.0 - (1.0 - share) ** k), slope * rate)

    def _stand_pose(self) -> np.ndarray:
        """(dx, dz, 0): the body over the middle of the feet at the stand height."""
        mid = self.feet.mean(axis=0)
        dx = float(mid[0]) + self.cfg.stand_com_x
        dz = float(mid[2]) + self.cfg.stand_height - self.kin.foot_radius
        return np.array([dx, dz, 0.0])

    # -- plumbing -------------------------------------------------------------
    def _stream(self, ctx: TickContext, q: np.ndarray) -> None:
        """This tick's joint targets, with the velocity from last tick's as
        the feed-forward (Kernel.stream)."""
        q = np.asarray(q, dtype=float).copy()
        self.q_back = (self.q_back[1], self.q_prev[0:3].copy())   # FR's last two targets
        self.kernel.stream(q, self.q_prev, self.robot.dt)
        self.q_prev = q

    def failure(self) -> str | None:
        return self.failed

    def finished(self) -> bool:
        return self.stage == "done"

    def ready(self) -> bool:
        return self.stage == "done"

    def exit(self) -> None:
        self.kernel.tau_ff[:] = 0.0
        self.stage = "done"
        self.inside = False

    def progress(self, ctx: TickContext) -> int:
        if self.failed is not None:
            return self.failed_bar
        return self.PROGRESS[self.stage]

    def status(self) -> tuple[str, int]:
        """For controller_status: "two-leg <stage>" and the motion's progress."""
        return f"two-leg {self.stage}", self.failed_bar if self.failed is not None \
            else self.PROGRESS[self.stage]

    def reported_gait(self, ctx: TickContext) -> int:
        return self.gait if 1 <= self.gait <= 14 else 0
