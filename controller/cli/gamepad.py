"""A gamepad for `motionctl teleop`: Linux input events in, teleop actions out.

The sticks set the speeds directly (left stick: forward/backward and
sideways, right stick across: turn), scaled to teleop's limits, with a dead
zone; the face buttons: south (A, cross) stand, west (X, square) trot, north
(Y, triangle) walk, east (B, circle) lie down, start quits (lying down).

`Pad` is the pure part: (type, code, value) events, as the kernel's evdev
interface gives them, in; speeds and keys out; the tests feed it a script.
`open_gamepad` finds a device with the `evdev` package (the `gamepad` extra)
and reads it without blocking.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# linux/input-event-codes.h
EV_KEY, EV_ABS = 0x01, 0x03
ABS_X, ABS_Y, ABS_RX = 0x00, 0x01, 0x03
BTN_SOUTH, BTN_EAST, BTN_NORTH, BTN_WEST, BTN_START = 0x130, 0x131, 0x133, 0x134, 0x13B
BUTTON_KEYS = {BTN_SOUTH: "1", BTN_WEST: "2", BTN_NORTH: "3", BTN_EAST: "l", BTN_START: "x"}
DEAD_ZONE = 0.12          # of full deflection: a stick at rest reads a little off centre
SPEED_STEP = 0.05         # fractions of the limit: finer stick moves send nothing new
INSTALL_HINT = "pip install 'motiond[gamepad]' (or: pip install evdev)"


@dataclass
class Axis:
    low: int
    high: int

    def fraction(self, value: int) -> float:
        """-1..1 from the raw value, 0 inside the dead zone, then rescaled."""
        mid, half = (self.low + self.high) / 2.0, (self.high - self.low) / 2.0
        x = max(-1.0, min(1.0, (value - mid) / half)) if half > 0 else 0.0
        if abs(x) < DEAD_ZONE:
            return 0.0
        x = (abs(x) - DEAD_ZONE) / (1.0 - DEAD_ZONE) * (1 if x > 0 else -1)
        return round(x / SPEED_STEP) * SPEED_STEP


@dataclass
class Pad:
    """Stick positions as fractions of the speed limits, and button presses as teleop keys."""

    axes: dict[int, Axis] = field(default_factory=lambda: {c: Axis(-32768, 32767) for c in (ABS_X, ABS_Y, ABS_RX)})
    sticks: dict[int, float] = field(default_factory=dict)

    def event(self, kind: int, code: int, value: int) -> tuple[str | None, bool]:
        """One input event: (a teleop key to press or None, whether the sticks moved)."""
        if kind == EV_KEY and value == 1:
            return BUTTON_KEYS.get(code), False
        if kind == EV_ABS and code in self.axes:
            before = self.sticks.get(code, 0.0)
            self.sticks[code] = self.axes[code].fraction(value)
            return None, self.sticks[code] != before
        return None, False

    def speeds(self) -> tuple[float, float, float]:
        """(forward, left, turn left) as fractions of the limits: a stick up,
        to the left, the right stick to the left, are positive."""
        return (-self.sticks.get(ABS_Y, 0.0), -self.sticks.get(ABS_X, 0.0), -self.sticks.get(ABS_RX, 0.0))


class GamepadError(RuntimeError):
    """No gamepad, or no evdev to read one."""


class Gamepad:
    """The first input device with sticks and a south button, read without blocking."""

    def __init__(self, path: str | None = None) -> None:
        try:
            import evdev
        except ImportError:
            raise GamepadError(f"reading a gamepad needs the evdev package: {INSTALL_HINT}") from None
        paths = [path] if path else evdev.list_devices()
        for p in paths:
            try:
                dev = evdev.InputDevice(p)
            except OSError as exc:
                if path:
                    raise GamepadError(f"{p}: {exc.strerror} (is your user in the input group?)") from None
                continue
            caps = dev.capabilities()
            if BTN_SOUTH in caps.get(EV_KEY, []) and any(c == ABS_Y for c, _ in caps.get(EV_ABS, [])):
                self.device: Any = dev
                self.pad = Pad(axes={c: Axis(info.min, info.max) for c, info in caps[EV_ABS]
                                     if c in (ABS_X, ABS_Y, ABS_RX)})
                self.name = f"{dev.name} ({p})"
                return
            dev.close()
        raise GamepadError("no gamepad found (a device under /dev/input with sticks and an A button)"
                           + ("" if paths else ": no input devices are readable"))

    def fileno(self) -> int:
        return int(self.device.fd)

    def events(self) -> Iterator[tuple[int, int, int]]:
        """The events waiting now (none: nothing)."""
        try:
            while (e := self.device.read_one()) is not None:
                yield e.type, e.code, e.value
        except OSError as exc:
            raise GamepadError(f"the gamepad went away ({exc.strerror})") from None

    def close(self) -> None:
        self.device.close()
