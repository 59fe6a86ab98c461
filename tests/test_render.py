"""`motionctl render` (controller/service/render.py): a short physics trial
recorded in process, drawn offscreen through EGL in a subprocess (MuJoCo
picks its GL backend once per process), and the frames looked at: the robot
is in the picture and it moves between frames."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from controller.robot.config import load_config
from controller.service.recording import RecordingWriter
from controller.sim.trial import Trial

ROOT = Path(__file__).resolve().parent.parent


def record(base: Path, config: str | None = None) -> None:
    cfg = load_config(config)
    writer = RecordingWriter(base, list(cfg.lcm.ports))
    trial = Trial(cfg, recorder=writer)
    trial.send(12)
    trial.run(2.0)
    writer.close()


def frames(path: Path) -> list[np.ndarray]:
    image = Image.open(path)
    out = []
    for k in range(getattr(image, "n_frames", 1)):
        image.seek(k)
        out.append(np.asarray(image.convert("RGB")))
    return out


def render(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli.motionctl", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def robot_pixels(frame: np.ndarray) -> np.ndarray:
    """Where the robot is: below the label band, the blue of the robot's
    geoms (the floor is grey, the sky pale)."""
    body = frame[20:].astype(int)
    return (body[..., 2] - body[..., 0] > 30) & (body[..., 2] < 200)


def test_render_draws_the_robot_standing_up(tmp_path: Path) -> None:
    base = tmp_path / "stand"
    record(base)
    out = tmp_path / "stand.gif"
    proc = render("render", str(base), "-o", str(out), "--fps", "10", "--size", "320x240")
    assert proc.returncode == 0, proc.stderr
    assert "20 frames, 2.0 s" in proc.stdout
    shots = frames(out)
    assert len(shots) == 20 and shots[0].shape == (240, 320, 3)
    first, last = robot_pixels(shots[0]), robot_pixels(shots[-1])
    assert first.sum() > 300 and last.sum() > 300          # the robot is in the picture
    # Standing up changes its silhouette: the dark pixels move.
    assert (first ^ last).sum() > 0.3 * min(first.sum(), last.sum())
    # and it rises: the silhouette's top moves up the picture
    top = [int(np.argmax(robot_pixels(s).any(axis=1))) for s in (shots[0], shots[-1])]
    assert top[1] < top[0]


def test_render_names_what_is_missing(tmp_path: Path) -> None:
    proc = render("render", str(tmp_path / "nothing"), "-o", str(tmp_path / "x.gif"))
    assert proc.returncode == 1 and "no recording at" in proc.stderr
    base = tmp_path / "stand"
    record(base)
    proc = render("render", str(base), "-o", str(tmp_path / "x.avi"))
    assert proc.returncode == 1 and "write a .gif or an .mp4" in proc.stderr
    proc = render("render", str(base), "-o", str(tmp_path / "x.gif"), "--size", "big")
    assert proc.returncode == 1 and "WIDTHxHEIGHT" in proc.stderr


def test_the_camera_keeps_up_with_a_walk_at_any_frame_rate() -> None:
    """A trunk trotting at 0.6 m/s with a 1 cm, 4 Hz bounce: at 1 and at 25
    frames a second the camera trails it by at most speed x tau, and at 25
    frames a second the bounce is damped."""
    from controller.service.render import FOLLOW_TAU_S, Follow

    for fps in (1.0, 25.0):
        follow = Follow(FOLLOW_TAU_S)
        lags, bounce = [], []
        for k in range(int(10 * fps)):
            t = k / fps
            target = np.array([0.6 * t, 0.0, 0.01 * np.sin(2 * np.pi * 4.0 * t)])
            point = follow.update(t, target)
            if t >= 2.0:
                lags.append(target[0] - point[0])
                bounce.append(point[2])
        assert min(lags) >= 0.0 and max(lags) <= 0.6 * FOLLOW_TAU_S + 1e-9, (fps, max(lags))
        if fps == 25.0:
            assert max(np.abs(bounce)) < 0.5 * 0.01


def test_an_mp4_streams_through_the_video_extras_ffmpeg_with_progress(tmp_path: Path) -> None:
    """No system ffmpeg needed (imageio-ffmpeg, the `video` extra); the
    frames go in as they are drawn, and stderr shows the progress."""
    import imageio_ffmpeg
    base = tmp_path / "stand"
    record(base)
    out = tmp_path / "stand.mp4"
    proc = render("render", str(base), "-o", str(out), "--fps", "10", "--size", "320x240")
    assert proc.returncode == 0, proc.stderr
    assert "20 frames, 2.0 s" in proc.stdout
    progress = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == 10 and progress[-1].startswith("[20/20] ok   t   1.9 s")
    reader = imageio_ffmpeg.read_frames(str(out))
    meta = next(reader)
    assert tuple(meta["size"]) == (320, 240)
    shots = [np.frombuffer(f, dtype=np.uint8).reshape(240, 320, 3) for f in reader]
    assert len(shots) == 20 and robot_pixels(shots[-1]).sum() > 300


def test_a_makers_model_without_its_meshes_is_drawn_by_its_collision_shapes_or_inertia() -> None:
    """Go1's model keeps only its collision shapes, in Menagerie's hidden
    group 3: they are drawn. Barkour vB's only shapes are its feet: each
    body is drawn as its inertia's box. CyberDog 2's generated body is drawn
    as MuJoCo draws it by default."""
    import mujoco

    from controller.service.render import shown_groups
    from controller.sim.mjcf import robot_mjcf

    def option(name: str) -> mujoco.MjvOption:
        return shown_groups(mujoco.MjModel.from_xml_string(robot_mjcf(load_config(ROOT / "config" / name))))

    default = mujoco.MjvOption()
    inertia = mujoco.mjtVisFlag.mjVIS_INERTIA
    cd2, go1, barkour = option("cyberdog2.yaml"), option("go1.yaml"), option("barkour_vb.yaml")
    assert list(cd2.geomgroup) == list(default.geomgroup) and not cd2.flags[inertia]
    assert go1.geomgroup[3] == 1 and not go1.flags[inertia]
    assert barkour.flags[inertia] == 1


def test_a_robot_on_its_own_mjcf_renders_without_mujoco_gl_set(tmp_path: Path) -> None:
    """Loading a config that names its own MJCF imports MuJoCo (the foot
    sink is measured on the model); render must pick EGL before that, or
    MuJoCo starts without a GL backend and no frame is drawn (Barkour vB
    and Go1 failed so unless MUJOCO_GL was set by hand)."""
    import os

    base = tmp_path / "go1"
    record(base, str(ROOT / "config" / "go1.yaml"))
    env = {k: v for k, v in os.environ.items() if k != "MUJOCO_GL"}
    proc = subprocess.run([sys.executable, "-m", "controller.cli.motionctl", "--config", "config/go1.yaml",
                           "render", str(base), "-o", str(tmp_path / "go1.gif"), "--fps", "2",
                           "--size", "160x120"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "4 frames, 2.0 s" in proc.stdout
