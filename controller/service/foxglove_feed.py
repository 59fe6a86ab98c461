"""motiond's LCM traffic as Foxglove channels: the robot's 3D scene, joint
plots, mode/gait/progress, the odometry path and the feet on the ground.

One `Feed` turns messages into channel logs, whoever supplies them: the live
WebSocket server of `motionctl foxglove` (messages as they arrive) and the
MCAP export of a recording (`motionctl export`, messages at their recorded
times). Channels it writes:

| topic | schema | from |
|---|---|---|
| /robot/scene | foxglove.SceneUpdate | the robot's model, every body a frame (each second) |
| /tf | foxglove.FrameTransforms | sim_state (simulation) or joint_state + global_to_robot |
| /joint_states, /joint_cmd | foxglove.JointStates | joint_state, joint_cmd |
| /status | JSON | robot_control_response: mode, gait, progress, switch_status |
| /odometry/pose, /odometry/path | foxglove.PoseInFrame, PosesInFrame | global_to_robot |
| /contacts | foxglove.SceneUpdate | sim_state's contacts (simulation only) |

Fast channels are thinned to `rate_hz` on the messages' own times, so a
500 Hz robot does not flood a WebSocket viewer or an MCAP file.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import foxglove
import numpy as np
from foxglove import messages as fm
from foxglove.channels import (
    FrameTransformsChannel,
    JointStatesChannel,
    PoseInFrameChannel,
    PosesInFrameChannel,
    SceneUpdateChannel,
)

from controller import msgs
from controller.protocol.constants import SWITCH_STATUS_NAMES
from controller.robot.config import Config
from controller.service.foxglove_scene import WORLD, Scene, rpy_to_quat, stamp

RATE_HZ = 30.0                # poses and joint plots
SCENE_EVERY_NS = 1_000_000_000  # the model again, for viewers that join later
PATH_EVERY_NS = 100_000_000     # one odometry path point per 0.1 s
PATH_POINTS = 3000              # the last 5 minutes of path
SIM_STATE_FRESH_NS = 500_000_000  # sim_state heard this recently poses the robot
CONTACT_COLOR = fm.Color(r=1.0, g=0.35, b=0.1, a=0.9)

STATUS_SCHEMA = {
    "type": "object",
    "properties": {
        "mode": {"type": "integer"}, "mode_name": {"type": "string"},
        "gait_id": {"type": "integer"}, "progress": {"type": "integer"},
        "switch_status": {"type": "integer"}, "switch_name": {"type": "string"},
        "contact": {"type": "integer"}, "motor_error": {"type": "array", "items": {"type": "integer"}},
    },
}


class Feed:
    """LCM messages in (`on_message`), Foxglove channel logs out."""

    def __init__(self, cfg: Config, context: foxglove.Context | None = None,
                 rate_hz: float = RATE_HZ) -> None:
        self.cfg = cfg
        self.scene = Scene(cfg)
        self.joint_names = list(cfg.joint_names)
        self.every_ns = int(1e9 / rate_hz)
        self.out_scene = SceneUpdateChannel("/robot/scene", context=context)
        self.out_tf = FrameTransformsChannel("/tf", context=context)
        self.out_joints = JointStatesChannel("/joint_states", context=context)
        self.out_cmd = JointStatesChannel("/joint_cmd", context=context)
        self.out_status = foxglove.Channel("/status", schema=STATUS_SCHEMA, context=context)
        self.out_pose = PoseInFrameChannel("/odometry/pose", context=context)
        self.out_path = PosesInFrameChannel("/odometry/path", context=context)
        self.out_contacts = SceneUpdateChannel("/contacts", context=context)
        ch = cfg.lcm.channels
        self.handlers: dict[str, tuple[Any, Callable[[Any, int], None]]] = {
            ch["joint_state"]: (msgs.joint_state_t, self._joint_state),
            ch["joint_cmd"]: (msgs.joint_command_t, self._joint_cmd),
            ch["global_to_robot"]: (msgs.localization_lcmt, self._odometry),
            ch["response"]: (msgs.robot_control_response_lcmt, self._response),
        }
        if "sim_state" in ch:
            self.handlers[ch["sim_state"]] = (msgs.sim_state_t, self._sim_state)
        self.last: dict[str, int] = {}               # output -> log time of its last message
        self.sim_state_ns: int | None = None        # last sim_state's time; until one, the first message's
        self.odometry: msgs.localization_lcmt | None = None
        self.path: deque[fm.Pose] = deque(maxlen=PATH_POINTS)
        self.last_status: tuple[int, ...] | None = None
        self.counts = {"messages": 0, "undecodable": 0, "poses": 0}

    def channels(self) -> list[str]:
        """The LCM channels it draws from."""
        return sorted(self.handlers)

    def on_message(self, channel: str, data: bytes, t_ns: int) -> None:
        """One LCM message heard (or recorded) at `t_ns`."""
        handler = self.handlers.get(channel)
        if handler is None:
            return
        kind, on = handler
        try:
            msg = kind.decode(data)
        except ValueError:
            self.counts["undecodable"] += 1          # another publisher's type: never drawn
            return
        self.counts["messages"] += 1
        if self.sim_state_ns is None:
            self.sim_state_ns = t_ns                  # joint_state waits this long for a sim_state too
        if self._due("scene", t_ns, SCENE_EVERY_NS):
            self.out_scene.log(self.scene.entities(t_ns), log_time=t_ns)
        on(msg, t_ns)

    def _due(self, what: str, t_ns: int, every_ns: int) -> bool:
        last = self.last.get(what)
        if last is not None and 0 <= t_ns - last < every_ns:
            return False
        self.last[what] = t_ns
        return True

    # -- the robot's pose -----------------------------------------------------------
    def _sim_state(self, s: msgs.sim_state_t, t_ns: int) -> None:
        self.sim_state_ns = t_ns
        if not self._due("pose", t_ns, self.every_ns):
            return
        self.scene.pose(np.asarray(s.position), np.asarray(s.quaternion), np.asarray(s.q))
        self._publish_pose(t_ns)
        feet = self.scene.geom_positions(list(s.contacts))
        self.out_contacts.log(fm.SceneUpdate(entities=[fm.SceneEntity(
            timestamp=stamp(t_ns), frame_id=WORLD, id="contacts",
            spheres=[fm.SpherePrimitive(pose=fm.Pose(position=fm.Vector3(
                x=float(p[0]), y=float(p[1]), z=float(p[2])), orientation=fm.Quaternion(w=1.0)),
                size=fm.Vector3(x=0.05, y=0.05, z=0.05), color=CONTACT_COLOR) for p in feet])]),
            log_time=t_ns)

    def _joint_state(self, s: msgs.joint_state_t, t_ns: int) -> None:
        if not self._due("joint_states", t_ns, self.every_ns):
            return
        self.out_joints.log(self._joints(t_ns, s.position, s.velocity, s.torque), log_time=t_ns)
        # A real robot has no sim_state: its joints and odometry pose the model,
        # once none has come for SIM_STATE_FRESH_NS (nor since the first message).
        assert self.sim_state_ns is not None
        if t_ns - self.sim_state_ns > SIM_STATE_FRESH_NS and len(s.position) == len(self.joint_names):
            odo = self.odometry
            xyz = np.asarray(odo.xyz, dtype=float) if odo is not None else np.zeros(3)
            if odo is None or xyz[2] <= 0.0:
                xyz[2] = float(self.cfg.stand_height)   # an odometry without height: the stand's
            quat = rpy_to_quat(*odo.rpy) if odo is not None else np.array([1.0, 0, 0, 0])
            self.scene.pose(xyz, quat, np.asarray(s.position))
            self._publish_pose(t_ns)

    def _publish_pose(self, t_ns: int) -> None:
        self.out_tf.log(self.scene.transforms(t_ns), log_time=t_ns)
        self.counts["poses"] += 1

    def _joint_cmd(self, c: msgs.joint_command_t, t_ns: int) -> None:
        if self._due("joint_cmd", t_ns, self.every_ns):
            self.out_cmd.log(self._joints(t_ns, c.position, c.velocity, c.torque), log_time=t_ns)

    def _joints(self, t_ns: int, q: Any, qd: Any, tau: Any) -> fm.JointStates:
        return fm.JointStates(timestamp=stamp(t_ns), joints=[
            fm.JointState(name=name, position=float(q[i]), velocity=float(qd[i]), effort=float(tau[i]))
            for i, name in enumerate(self.joint_names[:len(q)])])

    # -- odometry and status ----------------------------------------------------------
    def _odometry(self, o: msgs.localization_lcmt, t_ns: int) -> None:
        self.odometry = o
        if not self._due("odometry", t_ns, self.every_ns):
            return
        q = rpy_to_quat(*o.rpy)
        pose = fm.Pose(position=fm.Vector3(x=float(o.xyz[0]), y=float(o.xyz[1]), z=float(o.xyz[2])),
                       orientation=fm.Quaternion(w=float(q[0]), x=float(q[1]), y=float(q[2]), z=float(q[3])))
        self.out_pose.log(fm.PoseInFrame(timestamp=stamp(t_ns), frame_id=WORLD, pose=pose), log_time=t_ns)
        if self._due("path", t_ns, PATH_EVERY_NS):
            self.path.append(pose)
            self.out_path.log(fm.PosesInFrame(timestamp=stamp(t_ns), frame_id=WORLD, poses=list(self.path)),
                              log_time=t_ns)

    def _response(self, r: msgs.robot_control_response_lcmt, t_ns: int) -> None:
        key = (r.mode, r.gait_id, r.order_process_bar, r.switch_status, r.contact)
        if key == self.last_status and not self._due("status", t_ns, self.every_ns * 3):
            return
        self.last_status = key
        self.out_status.log({
            "mode": r.mode, "mode_name": self.cfg.fsm.name(r.mode), "gait_id": r.gait_id,
            "progress": r.order_process_bar, "switch_status": r.switch_status,
            "switch_name": SWITCH_STATUS_NAMES.get(r.switch_status, str(r.switch_status)),
            "contact": r.contact, "motor_error": list(r.motor_error)}, log_time=t_ns)

