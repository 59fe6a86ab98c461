"""`motionctl teleop`'s logic: keys in, commands out, with the heartbeat, the
speed limits and one state line. The terminal side is teleop_cmd.py; this
part runs on a Link and a clock, so the tests drive it with a key script.

Keys (KEY_HELP): w/s faster forward/backward, a/d to the left/right, q/e turn
left/right, space stop moving, 1 stand, 2 trot, 3 walk, l lie down, x (or
Esc, or the end of the input) lie down and quit. A speed key on a robot that
is not walking starts the trot. A gamepad (controller/cli/gamepad.py) sets
the speeds with its sticks (`sticks`) and presses the same keys with its
buttons. Each change is a new command (a fresh
life_count); between changes the last one is repeated every 100 ms.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TextIO

from controller.cli.client import (
    Link,
    ModeNames,
    last_life_count,
    next_life_count,
)
from controller.cli.names import GAIT_WORDS, MODE_WORDS
from controller.motion.sequence import build_command
from controller.msgs import robot_control_response_lcmt

KEY_HELP = "w/s a/d speed, q/e turn, space stop, 1 stand, 2 trot, 3 walk, l lie down, x quit"
STEP_V = 0.1          # m/s per key press
STEP_W = 0.2          # rad/s per key press
STEP_HEIGHT = 0.05    # m, the walking gaits' foot lift
QUIT_KEYS = ("x", "\x1b", "\x03", "\x04")      # x, Esc, Ctrl-C, Ctrl-D


@dataclass(frozen=True)
class Limits:
    """The largest speeds teleop asks for (clamped, whatever the keys)."""

    vx: float = 0.5
    vy: float = 0.3
    wz: float = 1.0


class Teleop:
    """The command being driven and the keys that change it."""

    def __init__(self, link: Link, names: ModeNames, out: TextIO, limits: Limits = Limits(),
                 rng: random.Random | None = None, tty: bool = False) -> None:
        self.link = link
        self.names = names
        self.out = out
        self.limits = limits
        self.tty = tty
        self.rng = rng or random.Random()
        self.life = last_life_count(link)
        self.mode, self.gait = -1, 0          # nothing sent yet
        self.v = [0.0, 0.0, 0.0]
        self.response: robot_control_response_lcmt | None = None
        self._line = ""

    def key(self, k: str) -> bool:
        """Act on one key; False once it asks to quit (the lie-down is sent)."""
        k = k.lower() if len(k) == 1 and k.isalpha() else k
        if k in QUIT_KEYS:
            self.command(*MODE_WORDS["lie"])
            return False
        axis = {"w": (0, STEP_V), "s": (0, -STEP_V), "a": (1, STEP_V), "d": (1, -STEP_V),
                "q": (2, STEP_W), "e": (2, -STEP_W)}.get(k)
        if axis is not None:
            i, step = axis
            limit = (self.limits.vx, self.limits.vy, self.limits.wz)[i]
            self.v[i] = round(max(-limit, min(limit, self.v[i] + step)), 3)
            self.command(11, self.gait if self.mode == 11 else GAIT_WORDS["trot"])
        elif k == " ":
            self.v = [0.0, 0.0, 0.0]
            if self.mode == 11:
                self.command(11, self.gait)
        elif k == "1":
            self.v = [0.0, 0.0, 0.0]
            self.command(*MODE_WORDS["stand"])
        elif k in ("2", "3"):
            self.command(11, GAIT_WORDS["trot" if k == "2" else "walk"])
        elif k == "l":
            self.v = [0.0, 0.0, 0.0]
            self.command(*MODE_WORDS["lie"])
        return True

    def sticks(self, forward: float, left: float, turn: float) -> None:
        """A gamepad's sticks: speeds as fractions (-1..1) of the limits. Moving
        starts the trot (or keeps the gait being walked); sticks back at rest
        stop the walking in place."""
        fractions = (forward, left, turn)
        limits = (self.limits.vx, self.limits.vy, self.limits.wz)
        self.v = [round(max(-1.0, min(1.0, f)) * lim, 3) for f, lim in zip(fractions, limits)]
        if any(self.v):
            self.command(11, self.gait if self.mode == 11 else GAIT_WORDS["trot"])
        elif self.mode == 11:
            self.command(11, self.gait)

    def command(self, mode: int, gait: int) -> None:
        """Send (mode, gait) at the current speeds with a fresh life_count."""
        self.mode, self.gait = mode, gait
        life = self.life = next_life_count(self.link.status, self.life, self.rng)
        fields: dict[str, object] = {"mode": mode, "gait_id": gait}
        if mode == 11:
            fields.update(vel_des=list(self.v), step_height=[STEP_HEIGHT, STEP_HEIGHT])
        self.link.send(build_command(fields, life))
        self.show()

    def poll(self) -> None:
        """The heartbeat and the feedback; the state line when it changed."""
        for msg in self.link.poll():
            if isinstance(msg, robot_control_response_lcmt):
                self.response = msg
        self.show()

    def state_line(self) -> str:
        r = self.response
        robot = "no response yet" if r is None else \
            f"{self.names(r.mode)} ({r.mode}) gait {r.gait_id} {r.order_process_bar:3d} %" \
            + (f" switch_status {r.switch_status}" if r.switch_status else "")
        asked = "nothing" if self.mode < 0 else f"{self.names(self.mode)} gait {self.gait}"
        if self.mode == 11:
            asked += f" vx {self.v[0]:+.2f} vy {self.v[1]:+.2f} wz {self.v[2]:+.2f}"
        return f"robot: {robot} | asked: {asked}"

    def show(self) -> None:
        line = self.state_line()
        if line == self._line:
            return
        self._line = line
        if self.tty:
            print("\r\x1b[2K" + line, end="", file=self.out, flush=True)
        else:
            print(line, file=self.out, flush=True)
