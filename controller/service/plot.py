"""Plot a recording: commanded joint positions and velocities against time,
mode changes marked. matplotlib is an optional extra (motiond[plot])."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from controller import msgs
from controller.robot.config import Config
from controller.service.recording import RecordingError, decode, events, port_files


class MissingMatplotlib(RuntimeError):
    pass


@dataclass
class Series:
    t: np.ndarray                      # s since the first joint_cmd
    position: np.ndarray               # (ticks, joints) rad
    velocity: np.ndarray               # (ticks, joints) rad/s
    modes: list[tuple[float, str]] = field(default_factory=list)   # (t, mode name) at each change


def load_series(cfg: Config, base: Path) -> Series:
    ch = cfg.lcm.channels
    files = port_files(base, list(cfg.lcm.ports))
    utimes, pos, vel = [], [], []
    status: list[tuple[int, str]] = []
    for paths in files.values():
        for event in events(paths):
            if event.channel == ch["joint_cmd"]:
                jc = decode(msgs.joint_command_t, event.data, event.channel)
                utimes.append(jc.utime)
                # Off the wire (the robot's joint convention) into the controller's.
                pos.append(cfg.joint_map.positions_from_wire(jc.position))
                vel.append(cfg.joint_map.signed_from_wire(jc.velocity))
            elif event.channel == ch["status"]:
                s = decode(msgs.controller_status_t, event.data, event.channel)
                status.append((s.utime, s.mode_name))
    if not utimes:
        raise RecordingError(f"{base}: no {ch['joint_cmd']} messages to plot")
    t0 = utimes[0]
    series = Series(t=(np.array(utimes) - t0) / 1e6, position=np.array(pos), velocity=np.array(vel))
    last = None
    for utime, name in sorted(status):
        if name != last:
            series.modes.append(((utime - t0) / 1e6, name))
            last = name
    return series


def pick_joints(names: list[str], wanted: list[str] | None) -> list[int]:
    """Joint indices from names or indices (all when none are given)."""
    if not wanted:
        return list(range(len(names)))
    out = []
    for w in wanted:
        if w.isdigit() and int(w) < len(names):
            out.append(int(w))
        elif w in names:
            out.append(names.index(w))
        else:
            raise ValueError(f"no joint {w!r}; joints are {', '.join(names)} (or 0-{len(names) - 1})")
    return out


def render(series: Series, joints: list[int], names: list[str], out: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        raise MissingMatplotlib("needs matplotlib: pip install 'motiond[plot]'") from None
    matplotlib.use("Agg")   # no display needed
    import matplotlib.pyplot as plt

    fig, (ax_q, ax_v) = plt.subplots(2, 1, sharex=True, figsize=(12, 7), constrained_layout=True)
    for j in joints:
        ax_q.plot(series.t, series.position[:, j], lw=0.9, label=names[j])
        ax_v.plot(series.t, series.velocity[:, j], lw=0.9)
    for ax in (ax_q, ax_v):
        for t, _ in series.modes:
            ax.axvline(t, color="0.5", lw=0.7, ls="--")
        ax.grid(alpha=0.3)
    for t, name in series.modes:
        ax_q.annotate(name, (t, 1.0), xycoords=("data", "axes fraction"), rotation=90,
                      va="top", ha="right", fontsize=7, color="0.3")
    ax_q.set_ylabel("position (rad)")
    ax_v.set_ylabel("velocity (rad/s)")
    ax_v.set_xlabel("time (s)")
    ax_q.set_title("joint_cmd")
    ax_q.legend(fontsize=7, ncol=max(1, len(joints) // 6), loc="upper left", bbox_to_anchor=(1.0, 1.0))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
