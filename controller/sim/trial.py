"""A trial: the controller and the physics body in one process, on a fake
clock, with a client's commands; it records what the body did, tick by tick,
from the simulator's ground truth.

The controller sees only the sensors (joint_state, imu) as the runtime feeds
them; the trace is ground truth, for judging a motion (the physics scorecard,
`motionctl validate --physics`), never for the controller.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import mujoco
import numpy as np

from controller import msgs
from controller.core.controller import Controller
from controller.core.fsm import EDAMP, ESTOP
from controller.robot.angles import quat_to_rotation
from controller.robot.config import Config
from controller.sim.physics import PhysicsRobot
from controller.sim.robot import SENSORS
from controller.sim.world import World

HEARTBEAT_TICKS = 50          # a client re-sends its command every 100 ms at 500 Hz


# How long a physics row's robot stands (mode 12) before its steps: the
# scorecard's prelude, and the start the motion optimiser rolls a jump out
# from, so a jump is searched from the stand the card plays it from.
PRELUDE_S = 3.0


class Recorder(Protocol):
    def __call__(self, port: str, utime: int, channel: str, data: bytes) -> None: ...


@dataclass
class Trace:
    """Ground truth and responses, one row per tick (arrays once finished)."""
    t: list[float] = field(default_factory=list)
    position: list[np.ndarray] = field(default_factory=list)
    rpy: list[tuple[float, float, float]] = field(default_factory=list)
    velocity: list[np.ndarray] = field(default_factory=list)          # world
    body_velocity: list[np.ndarray] = field(default_factory=list)     # base frame, (vx, vy, wz)
    contacts: list[frozenset[str]] = field(default_factory=list)
    # Only when Trial.keep_targets (motionctl validate --physics judges a
    # limb's contact against the pose commanded): the body's quaternion
    # w, x, y, z and the joint targets sent.
    orientation: list[np.ndarray] = field(default_factory=list)
    q_des: list[np.ndarray] = field(default_factory=list)
    feet: list[np.ndarray] = field(default_factory=list)              # (legs, 3) world
    # Horizontal world velocity of each foot's material point at its ground
    # contact (under the ball's centre, at the sole's centre): a foot that rolls
    # or pivots without sliding has none.
    foot_slide: list[np.ndarray] = field(default_factory=list)        # (legs, 2)
    saturated: list[bool] = field(default_factory=list)               # a torque at its limit
    mode: list[int] = field(default_factory=list)
    gait: list[int] = field(default_factory=list)
    bar: list[int] = field(default_factory=list)
    switch_status: list[int] = field(default_factory=list)
    # The controller's own belief, for judging it against the truth above:
    odometry: list[tuple[float, float, float]] = field(default_factory=list)   # ctl.odom x, y, yaw
    estimate: list[np.ndarray] = field(default_factory=list)   # estimated world (vx, vy); NaN without
    fall_seen: list[bool] = field(default_factory=list)     # the controller detected a fall this tick
    tripped: list[bool] = field(default_factory=list)       # the controller damps or stops for a fault
    stiff: list[bool] = field(default_factory=list)         # some joint's kp is not zero


def contact_slide(model: Any, data: Any, sites: list[int], to_contact: np.ndarray,
                  buffer: np.ndarray) -> np.ndarray:
    """Horizontal world velocity (len(sites), 2) of the material point at
    site + to_contact[k] on each site's body: v_site + w x offset."""
    out = np.empty((len(sites), 2))
    for k, site in enumerate(sites):
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_SITE, site, buffer, 0)
        w0, w1, w2, v0, v1, _ = buffer.tolist()
        r0, r1, r2 = to_contact[k].tolist()
        # The cross product's x and y in plain floats (np.cross on one pair
        # of 3-vectors took some 15 us: a sixth of a recorded tick).
        out[k, 0] = v0 + (w1 * r2 - w2 * r1)
        out[k, 1] = v1 + (w2 * r0 - w0 * r2)
    return out


class Trial:
    def __init__(self, cfg: Config, sensors: dict[str, Any] | None = None,
                 recorder: Recorder | None = None, world: World | None = None) -> None:
        """`sensors` replaces the config's sim.sensors (None keeps it).
        `recorder(port, utime, channel,
        data)` is given everything the sim and the controller publish, stamped
        with the trial's clock (e.g. controller/service/recording.py's
        RecordingWriter, for `motionctl render`). `world` changes the physics
        world (model.py's World: friction, terrain, trunk mass), not the
        controller's config."""
        if sensors is not None:
            cfg = replace(cfg, sim={**cfg.sim, "sensors": sensors})
        self.cfg = cfg
        self.ctl = Controller(cfg)
        self.robot = PhysicsRobot(cfg, world)
        self.ch = cfg.lcm.channels
        self.now_ns = 1_000_000_000
        self.tick_ns = int(round(1e9 / cfg.tick_hz))
        self.life_count = 0
        self.pending: list[tuple[str, bytes]] = []
        self.heartbeat: bytes | None = None
        self.trace = Trace()
        self.keep_targets = False     # record Trace.orientation and q_des too
        # The feet: the model's geoms named <leg>_foot, each with a site at its
        # contact point (<leg>_foot on a quadruped, <leg>_sole on a humanoid).
        model = self.robot.model
        self.feet = [model.geom(g).name for g in range(model.ngeom)
                     if model.geom(g).name.endswith("_foot")]
        sites = {model.site(i).name for i in range(model.nsite)}
        self.recorder = recorder
        self.foot_sites = [model.site(f if f in sites else f.removesuffix("_foot") + "_sole").id
                           for f in self.feet]
        # From the site to the contact point: a ball's radius straight down (its
        # site is the centre); a sole's site is already on the sole.
        self._to_contact = np.array([
            [0.0, 0.0, -float(model.geom(f).size[0])]
            if model.geom(f).type == mujoco.mjtGeom.mjGEOM_SPHERE else [0.0, 0.0, 0.0]
            for f in self.feet])
        self._site_velocity = np.zeros(6)

    def send(self, mode: int, gait_id: int = 0, duration: int = 0, **fields: Any) -> None:
        """A client command (fields as robot_control_cmd_lcmt names them); it is
        re-sent as the heartbeat until the next one."""
        self.life_count = (self.life_count + 1) % 128
        msg = msgs.robot_control_cmd_lcmt()
        msg.mode, msg.gait_id, msg.life_count, msg.duration = mode, gait_id, self.life_count, duration
        for name, value in fields.items():
            current = getattr(msg, name)
            if isinstance(current, list):
                value = [float(v) for v in value] + [0.0] * (len(current) - len(value))
            setattr(msg, name, value)
        data = msg.encode()
        self.pending.append((self.ch["command"], data))
        self.heartbeat = data

    def send_goal(self, msg: msgs.motion_goal_t) -> None:
        """A motion goal (e.g. controller/cli/goal_cmd.py's goal_from_args), into
        the controller's inbox on the next tick, as `motionctl goal` sends it."""
        msg.utime = self.now_ns // 1000
        self.pending.append((self.ch["motion_goal"], msg.encode()))

    def send_file(self, text: str) -> None:
        """A user-gait upload (a Gait Def or Gait Params text, SPEC §8.1), into the
        controller's inbox on the next tick on its user_gait_file channel, as a
        client publishes it."""
        msg = msgs.file_send_lcmt()
        msg.data = text
        self.pending.append((self.ch["user_gait_file"], msg.encode()))

    def send_script(self, name: str, request_id: int) -> None:
        """A script request for `name` (as `motionctl script NAME` sends it),
        into the controller's inbox on the next tick, at a priority above
        robot_control_cmd: a full-body script takes the legs from the
        commanded mode."""
        msg = msgs.script_request_t()
        msg.utime = self.now_ns // 1000
        msg.request_id = request_id
        msg.priority = min(100, self.cfg.priorities["robot_control_cmd"] + 1)
        msg.names = [name]
        msg.num_names = 1
        self.pending.append((self.ch["script_request"], msg.encode()))

    def tick(self, heartbeat: bool = True) -> None:
        published = self.robot.messages(self.now_ns // 1000, truth=self.recorder is not None)
        inbox = [(self.ch[key], data) for key, data in published if key in SENSORS]
        if self.pending:
            inbox += self.pending
            self.pending = []
        elif heartbeat and self.heartbeat is not None and self.ctl.tick % HEARTBEAT_TICKS == 0:
            inbox.append((self.ch["command"], self.heartbeat))
        out = self.ctl.step(self.now_ns, inbox)
        response = out.get(self.ch["response"])
        if self.recorder is not None:
            stamp = self.now_ns // 1000
            for key, data in published:
                self.recorder("joint", stamp, self.ch[key], data)
            for port, channel, payload in out.messages:
                self.recorder(port, stamp, channel, bytes(payload))
        # The body moves under the joint_cmd as the robot's bridge gets it
        # (the robot's joint convention: controller/sim/bridge.py).
        command = out.get(self.ch["joint_cmd"])
        assert command is not None, "the controller publishes a joint_cmd every tick"
        self.robot.command(bytes(command))
        self.now_ns += self.tick_ns
        self._record(response)

    def _foot_slide(self) -> np.ndarray:
        return contact_slide(self.robot.model, self.robot.data, self.foot_sites,
                             self._to_contact, self._site_velocity)

    def _record(self, response: Any) -> None:
        tr, robot = self.trace, self.robot
        truth = robot.truth()
        rot = quat_to_rotation(truth.quaternion)
        tr.t.append(robot.data.time)
        tr.position.append(truth.position)
        tr.rpy.append(truth.rpy)
        tr.velocity.append(truth.velocity)
        body = rot.T @ truth.velocity
        tr.body_velocity.append(np.array([body[0], body[1], (rot @ truth.angular_velocity)[2]]))
        tr.contacts.append(truth.contacts)
        if self.keep_targets:
            tr.orientation.append(truth.quaternion)
            tr.q_des.append(self.ctl.kernel.pos.copy())
        tr.feet.append(robot.data.site_xpos[self.foot_sites].copy())
        tr.foot_slide.append(self._foot_slide())
        tr.saturated.append(bool(np.any(np.abs(robot.tau) >= robot.limit - 1e-9)))
        odom, est = self.ctl.odom, self.ctl.estimator
        tr.odometry.append((odom.x, odom.y, odom.yaw))
        tr.estimate.append(est.velocity[:2].copy() if est is not None else np.full(2, np.nan))
        tr.fall_seen.append(self.ctl.fsm.fell)
        tr.tripped.append(self.ctl.fsm.operating in (EDAMP, ESTOP))
        tr.stiff.append(bool(np.any(self.ctl.kernel.kp > 0.0)))
        if response is not None:
            r = msgs.robot_control_response_lcmt.decode(bytes(response))
            tr.mode.append(r.mode)
            tr.gait.append(r.gait_id)
            tr.bar.append(r.order_process_bar)
            tr.switch_status.append(r.switch_status)
        else:
            for column in (tr.mode, tr.gait, tr.bar, tr.switch_status):
                column.append(column[-1] if column else -1)

    def run(self, seconds: float, heartbeat: bool = True) -> None:
        for _ in range(int(round(seconds * self.cfg.tick_hz))):
            self.tick(heartbeat)
