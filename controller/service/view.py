"""MuJoCo's interactive viewer on a running simulator: the robot's model
posed, as the frames come, from the sim_state ground truth that `motiond
--sim` or `motionctl sim` publishes on the joint port (`motionctl view`).
The viewer only looks: it sends nothing and pushes nothing.
"""
from __future__ import annotations

import os
import threading
import time

import numpy as np

from controller import msgs
from controller.robot.config import Config

SIM_STATE_WAIT_S = 5.0


class ViewError(RuntimeError):
    """The viewer cannot open (no display, no GL) or hears no simulator."""


class LatestState:
    """The newest sim_state heard on the joint port, from an LCM thread."""

    def __init__(self, cfg: Config) -> None:
        import lcm

        self.lc = lcm.LCM(cfg.lcm.url("joint"))
        self.lock = threading.Lock()
        self.state: msgs.sim_state_t | None = None
        self.count = 0
        self.running = True
        self.lc.subscribe(cfg.lcm.channels["sim_state"], self._on_state)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _on_state(self, _channel: str, data: bytes) -> None:
        try:
            state = msgs.sim_state_t.decode(data)
        except ValueError:
            return                  # not ours: a viewer ignores what it cannot draw
        with self.lock:
            self.state = state
            self.count += 1

    def _spin(self) -> None:
        while self.running:
            self.lc.handle_timeout(50)

    def latest(self) -> msgs.sim_state_t | None:
        with self.lock:
            return self.state

    def close(self) -> None:
        self.running = False
        self.thread.join(1)


def check_display() -> None:
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        raise ViewError("no display: the viewer needs a desktop session (DISPLAY is not set); "
                        "over ssh use `ssh -X`, or draw a recording offscreen with `motionctl render`")


def view(cfg: Config, seconds: float | None = None) -> int:
    """Show the simulator until the window is closed (or `seconds` pass);
    the number of frames shown."""
    check_display()
    import mujoco
    import mujoco.viewer

    from controller.sim.mjcf import robot_mjcf
    from controller.sim.own_model import model_joints

    model = mujoco.MjModel.from_xml_string(robot_mjcf(cfg))
    data = mujoco.MjData(model)
    names, model_map = model_joints(cfg)     # sim_state's q is in the controller's convention
    qadr = np.array([model.jnt_qposadr[model.joint(n).id] for n in names])
    listener = LatestState(cfg)
    try:
        deadline = time.monotonic() + SIM_STATE_WAIT_S
        while listener.latest() is None:
            if time.monotonic() > deadline:
                raise ViewError(f"no {cfg.lcm.channels['sim_state']} on {cfg.lcm.url('joint')} within "
                                f"{SIM_STATE_WAIT_S:g} s: is `motiond --sim` or `motionctl sim` running "
                                "with this config and namespace?")
            time.sleep(0.02)
        before = set(threading.enumerate())
        try:
            handle = mujoco.viewer.launch_passive(model, data, show_left_ui=False, show_right_ui=False)
        except Exception as exc:  # noqa: BLE001 - every window/GL failure means the same here
            raise ViewError(f"cannot open the viewer window ({exc})") from exc
        frames = 0
        end = None if seconds is None else time.monotonic() + seconds
        try:
            with handle:
                handle.cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
                handle.cam.trackbodyid = model.body("trunk").id
                handle.cam.distance = 5.0 * float(cfg.stand_height) + 0.3
                handle.cam.elevation = -18.0
                handle.cam.azimuth = 120.0
                while handle.is_running() and (end is None or time.monotonic() < end):
                    state = listener.latest()
                    if state is not None:
                        data.qpos[0:3] = state.position
                        data.qpos[3:7] = state.quaternion
                        data.qpos[qadr] = model_map.positions_to_wire(np.asarray(state.q))
                        mujoco.mj_kinematics(model, data)
                        mujoco.mj_comPos(model, data)    # the tracking camera follows subtree_com
                        handle.sync()
                        frames += 1
                    time.sleep(1 / 60)
        finally:
            # The viewer's window threads must end before the interpreter
            # does, on every way out (Ctrl-C and SIGTERM too): GLFW is torn
            # down at exit, and under a render loop still running that
            # segfaulted or aborted the process, or hung it for more than 10 s.
            for thread in set(threading.enumerate()) - before:
                thread.join(5.0)
        return frames
    finally:
        listener.close()
