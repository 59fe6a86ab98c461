"""Draw a recording of the simulated robot offscreen: the robot's own MuJoCo
model posed from each sim_state (ground truth) of the recording, a camera
that follows the trunk, and the mode and gait the controller reported
written on every frame. `motionctl render BASE -o out.gif|out.mp4`.

Rendering runs on the CPU through EGL (Mesa): MUJOCO_GL is set to `egl`
before MuJoCo is imported, unless the caller chose another backend.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from controller import msgs
from controller.robot.config import Config
from controller.service.recording import RecordingError, decode, events, port_files
from controller.sim.progress import Progress

os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco  # noqa: E402 - after the GL backend is chosen

from controller.sim.mjcf import robot_mjcf  # noqa: E402
from controller.sim.own_model import model_joints  # noqa: E402

EGL_PACKAGES = "libegl1 libegl-mesa0 libgl1-mesa-dri"
FOLLOW_TAU_S = 0.15     # the camera's follow time constant: smooths a bounce, not a walk


class RenderError(RuntimeError):
    """The recording cannot be drawn (no sim_state, no GL, no encoder)."""


@dataclass(frozen=True)
class Pose:
    """One frame's worth of ground truth and what the controller said."""
    t: float                      # s since the first sim_state
    position: np.ndarray
    quaternion: np.ndarray
    q: np.ndarray
    label: str


def poses(cfg: Config, base: Path, fps: float, start: float = 0.0,
          seconds: float | None = None) -> list[Pose]:
    """The recording's sim_states at `fps`, each labelled with the last
    response before it (both ordered by the logger's receive time)."""
    files = port_files(base, ["joint", "response"])
    ch = cfg.lcm.channels
    states = [(e.timestamp_us, e.data) for e in events(files.get("joint", []))
              if e.channel == ch["sim_state"]]
    if not states:
        raise RenderError(f"{base}: no {ch['sim_state']} messages: record a daemon running "
                          "--sim (physics) or `motionctl sim`")
    responses = [(e.timestamp_us, decode(msgs.robot_control_response_lcmt, e.data, e.channel))
                 for e in events(files.get("response", [])) if e.channel == ch["response"]]
    return list(_sample(cfg, states, responses, fps, start, seconds))


def _sample(cfg: Config, states: list[tuple[int, bytes]],
            responses: list[tuple[int, msgs.robot_control_response_lcmt]],
            fps: float, start: float, seconds: float | None) -> Iterator[Pose]:
    t0 = states[0][0]
    step_us = 1e6 / fps
    next_us = t0 + start * 1e6
    end_us = None if seconds is None else next_us + seconds * 1e6
    k = 0
    label = "no response yet"
    for stamp, data in states:
        while k < len(responses) and responses[k][0] <= stamp:
            r = responses[k][1]
            label = f"mode {r.mode} {cfg.fsm.name(r.mode)}  gait {r.gait_id}  {r.order_process_bar}%"
            k += 1
        if stamp < next_us:
            continue
        if end_us is not None and stamp > end_us:
            break
        s = decode(msgs.sim_state_t, data, "sim_state")
        yield Pose((stamp - t0) / 1e6, np.array(s.position), np.array(s.quaternion),
                   np.array(s.q), label)
        next_us += step_us


class Follow:
    """Where the camera looks: the trunk's point through a first-order lag of
    time constant `tau` seconds, so that a bounce does not shake the picture
    and, at any frame rate, a walk is trailed by at most speed x tau (a blend
    per frame instead trails by a distance that grows as the rate falls)."""

    def __init__(self, tau: float) -> None:
        self.tau = tau
        self.point: np.ndarray | None = None
        self.t = 0.0

    def update(self, t: float, target: np.ndarray) -> np.ndarray:
        if self.point is None:
            self.point = np.array(target, dtype=float)
        else:
            blend = 1.0 - np.exp(-max(0.0, t - self.t) / self.tau)
            self.point = self.point + blend * (np.asarray(target, dtype=float) - self.point)
        self.t = t
        return self.point


def shown_groups(model: mujoco.MjModel) -> mujoco.MjvOption:
    """MuJoCo's default view (geom groups 0-2), and every group the robot's
    geoms are in when none of them is in those: a maker's model whose look
    (its meshes) was left out keeps only its collision shapes, which makers
    put in a hidden group (Menagerie: 3)."""
    option = mujoco.MjvOption()
    geoms = [g for g in range(model.ngeom) if int(model.geom_bodyid[g]) != 0]
    groups = {int(model.geom_group[g]) for g in geoms}
    if groups and min(groups) > 2:
        for group in groups:
            option.geomgroup[group] = 1
    # A body with no shape of its own (Barkour vB's: only its feet collide)
    # is drawn as its inertia's box, so the robot is seen, not four dots.
    shaped = {int(model.geom_bodyid[g]) for g in geoms}
    if len(shaped) < (model.nbody - 1) / 2:
        option.flags[mujoco.mjtVisFlag.mjVIS_INERTIA] = 1
    return option


class Painter:
    """The robot's model, a following camera and an offscreen renderer."""

    def __init__(self, cfg: Config, width: int, height: int) -> None:
        self.cfg = cfg
        self.model = mujoco.MjModel.from_xml_string(robot_mjcf(cfg))
        self.model.vis.global_.offwidth = max(width, int(self.model.vis.global_.offwidth))
        self.model.vis.global_.offheight = max(height, int(self.model.vis.global_.offheight))
        self.data = mujoco.MjData(self.model)
        # sim_state's q is in the controller's convention; the model may be the robot's own.
        names, self.model_map = model_joints(cfg)
        self.qadr = np.array([self.model.jnt_qposadr[self.model.joint(n).id] for n in names])
        try:
            self.renderer = mujoco.Renderer(self.model, height, width)
        except Exception as exc:  # noqa: BLE001 - every GL failure means the same to the user
            raise RenderError(f"cannot render offscreen with MUJOCO_GL={os.environ.get('MUJOCO_GL')} "
                              f"({exc}); on Debian/Ubuntu: sudo apt-get install -y {EGL_PACKAGES}") from exc
        self.option = shown_groups(self.model)
        if self.model.nlight == 0:            # a maker's model without its lights: the head light only
            self.model.vis.headlight.ambient[:] = 0.4
            self.model.vis.headlight.diffuse[:] = 0.7
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        self.camera.distance = 5.0 * float(cfg.stand_height) + 0.3
        self.camera.azimuth = 120.0
        self.camera.elevation = -18.0
        self.follow = Follow(FOLLOW_TAU_S)

    def frame(self, pose: Pose) -> np.ndarray:
        d = self.data
        d.qpos[0:3] = pose.position
        d.qpos[3:7] = pose.quaternion
        d.qpos[self.qadr] = self.model_map.positions_to_wire(pose.q)
        mujoco.mj_kinematics(self.model, d)
        target = np.array([pose.position[0], pose.position[1], 0.6 * float(self.cfg.stand_height)])
        self.camera.lookat[:] = self.follow.update(pose.t, target)
        self.renderer.update_scene(d, camera=self.camera, scene_option=self.option)
        return np.asarray(self.renderer.render()).copy()

    def close(self) -> None:
        self.renderer.close()


def annotate(pixels: np.ndarray, text: str) -> np.ndarray:
    """The frame with `text` in a dark band along its top."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.fromarray(pixels)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    draw.rectangle((0, 0, image.width, 18), fill=(20, 20, 24))
    draw.text((6, 3), text, fill=(240, 240, 240), font=font)
    return np.asarray(image)


def render(cfg: Config, frames: Sequence[Pose], out: Path, fps: float, width: int, height: int,
           progress: Progress | None = None) -> int:
    """Draw the frames into out (.gif or .mp4), one at a time: each frame
    goes to the encoder as it is drawn (an .mp4 holds none in memory, a
    .gif its palette images, a third of the pixels); the number of frames."""
    encoder = mp4_encoder() if check_output(out) == ".mp4" else None
    if not frames:
        raise RenderError("no frames in the chosen time range")
    out.parent.mkdir(parents=True, exist_ok=True)
    painter = Painter(cfg, width, height)

    def drawn() -> Iterator[np.ndarray]:
        for pose in frames:
            yield annotate(painter.frame(pose), f"{cfg.robot}  t {pose.t:5.1f} s  {pose.label}")
            if progress is not None:
                progress.step(f"t {pose.t:5.1f} s")
    try:
        if encoder is None:
            _gif(drawn(), out, fps)
        else:
            _mp4(encoder, drawn(), out, fps, width, height)
    finally:
        painter.close()
    return len(frames)


def check_output(out: Path) -> str:
    """The output's kind; RenderError before anything is loaded if it is not one."""
    if out.suffix not in (".gif", ".mp4"):
        raise RenderError(f"{out}: write a .gif or an .mp4")
    return out.suffix


def mp4_encoder() -> str:
    """ffmpeg: the one the `video` extra installs (imageio-ffmpeg), else the
    system's; RenderError naming both ways to get one."""
    try:
        import imageio_ffmpeg
        return str(imageio_ffmpeg.get_ffmpeg_exe())
    except (ImportError, RuntimeError):
        pass
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise RenderError("an .mp4 needs ffmpeg: pip install 'motiond[video]' (imageio-ffmpeg, no system "
                          "package), or sudo apt-get install -y ffmpeg; a .gif needs nothing more")
    return ffmpeg


def _gif(images: Iterator[np.ndarray], out: Path, fps: float) -> None:
    from PIL import Image

    quantized = (Image.fromarray(i).quantize(colors=128, method=Image.Quantize.MEDIANCUT) for i in images)
    first = next(quantized)
    first.save(out, save_all=True, append_images=quantized, duration=int(round(1000 / fps)), loop=0,
               optimize=True)


def _mp4(ffmpeg: str, images: Iterator[np.ndarray], out: Path, fps: float, width: int, height: int) -> None:
    proc = subprocess.Popen(
        [ffmpeg, "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
         "-s", f"{width}x{height}", "-r", f"{fps:g}", "-i", "-", "-pix_fmt", "yuv420p",
         "-vcodec", "libx264", str(out)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stderr is not None
    try:
        for image in images:
            proc.stdin.write(image.tobytes())
        proc.stdin.close()
    except BrokenPipeError:
        pass                                  # ffmpeg stopped: its message says why
    finally:
        if proc.poll() is None and not proc.stdin.closed:
            proc.stdin.close()
    error = proc.stderr.read().decode(errors="replace").strip()
    if proc.wait() != 0:
        raise RenderError(f"ffmpeg failed: {error}")


__all__ = ["Follow", "Painter", "Pose", "RecordingError", "RenderError", "annotate", "check_output",
           "mp4_encoder", "poses", "render"]
