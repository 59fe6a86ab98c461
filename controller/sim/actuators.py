"""The real motor behind each joint, for physics runs that ask for it
(World.actuators; `motionctl physics --actuators`): what an ideal motor
law leaves out.

- Torque-speed envelope: a motor driven by a fixed supply voltage gives its
  full torque up to a knee speed, then less as its back-EMF eats the
  voltage, none at its no-load speed. This holds while it drives (torque
  and speed of the same sign); braking, it keeps its full torque.
- Transport delay: the driver acts on a command `delay_s` after the tick
  that sent it (the bus and the driver's loop), in physics steps.
- Encoder: the joint angle the robot reports is counted in steps of
  `encoder_resolution` rad (a rotor encoder's count through the gear).
- Backlash: `backlash` rad of play between the rotor and the joint. The
  rotor side (what the encoder counts and the driver's law holds) follows
  the joint only once the play is taken up.
- Dry friction: `frictionloss` N m replaces the physics file's figure.

The figures come from the physics file's `motor` section (published
figures, with their sources there), one number or one per leg joint (e.g.
abad hip knee); a World's `actuators` mapping changes them for one run.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from controller.robot.config import Config, ConfigError
from controller.robot.motors import per_joint

MAX_DELAY_S = 0.005
KEYS = ("knee_speed", "no_load_speed", "voltage", "resistance", "torque_constant", "gear",
        "delay_s", "encoder_resolution", "backlash", "frictionloss")
ELECTRIC = ("voltage", "resistance", "torque_constant", "gear")


@dataclass(frozen=True)
class MotorFigures:
    """Per joint (the controller's order): the envelope's speeds (rad/s), the
    delay (s), the encoder's step (rad), the play (rad), and dry friction
    (N m, None: the physics file's)."""
    knee_speed: np.ndarray
    no_load_speed: np.ndarray
    delay_s: float
    encoder_resolution: float
    backlash: np.ndarray
    frictionloss: float | None

    @classmethod
    def load(cls, cfg: Config, section: Any, changes: dict[str, Any], path: Path) -> MotorFigures:
        """From the physics file's `motor` section with a World's changes."""
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: motor: no motor figures for {cfg.robot} "
                              "(knee_speed, no_load_speed, ...), so no real actuators in physics")
        unknown = sorted(set(section) - set(KEYS)) + sorted(set(changes) - set(KEYS))
        if unknown:
            raise ConfigError(f"{path}: motor: unknown keys {unknown} (known: {list(KEYS)})")
        merged = {"delay_s": cfg.dt, "encoder_resolution": 0.0, "backlash": 0.0, **section, **changes}
        try:
            if all(k in merged for k in ELECTRIC) and not any(k in merged for k in ("knee_speed", "no_load_speed")):
                merged["knee_speed"], merged["no_load_speed"] = electric_envelope(
                    cfg.torque_limit.astype(float), *(float(merged[k]) for k in ELECTRIC))
            for key in ("knee_speed", "no_load_speed"):
                if key not in merged:
                    raise ConfigError(f"{path}: motor: {key} and no_load_speed, or the motor's "
                                      f"{', '.join(ELECTRIC)}, are needed")
            figures = cls(knee_speed=_per_joint(cfg, merged["knee_speed"]),
                          no_load_speed=_per_joint(cfg, merged["no_load_speed"]),
                          delay_s=float(merged["delay_s"]),
                          encoder_resolution=float(merged["encoder_resolution"]),
                          backlash=_per_joint(cfg, merged["backlash"]),
                          frictionloss=None if merged.get("frictionloss") is None
                          else float(merged["frictionloss"]))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{path}: motor: {exc}") from exc
        if np.any(figures.knee_speed < 0) or np.any(figures.no_load_speed <= figures.knee_speed):
            raise ConfigError(f"{path}: motor: 0 <= knee_speed < no_load_speed, per joint")
        if not 0.0 <= figures.delay_s <= MAX_DELAY_S:
            raise ConfigError(f"{path}: motor: delay_s {figures.delay_s} is outside [0, {MAX_DELAY_S}]")
        if figures.encoder_resolution < 0 or np.any(figures.backlash < 0) or \
                (figures.frictionloss is not None and figures.frictionloss < 0):
            raise ConfigError(f"{path}: motor: encoder_resolution, backlash and frictionloss are not negative")
        return figures


def electric_envelope(limit: np.ndarray, voltage: float, resistance: float, torque_constant: float,
                      gear: float) -> tuple[np.ndarray, np.ndarray]:
    """The knee and no-load joint speeds of a motor on a fixed supply voltage
    (the convention of the MIT Cheetah's actuator model, in which the
    CyberDog 2's figures are published: torque 1.5 kt i at the rotor,
    back-EMF 2 kt at the rotor's speed): the current the voltage left after
    the back-EMF drives gives gear x 1.5 kt (V - 2 kt gear w) / R at joint
    speed w; it is the joint's `limit` at the knee and 0 at no load."""
    emf = 2.0 * torque_constant * gear                # V per joint rad/s
    no_load = np.full(len(limit), voltage / emf)
    knee = np.maximum(0.0, (voltage - limit * resistance / (1.5 * torque_constant * gear)) / emf)
    return knee, no_load


def _per_joint(cfg: Config, value: Any) -> np.ndarray:
    """One number for every joint, one per leg joint (abad hip knee)
    repeated per leg, or one per joint."""
    return per_joint(value, cfg.num_joints, len(cfg.legs))


class Actuators:
    """The real motors of one physics body, in the model's joint order and
    sign convention (figures already mapped there)."""

    def __init__(self, figures: MotorFigures, limit: np.ndarray, knee: np.ndarray, no_load: np.ndarray,
                 backlash: np.ndarray, timestep: float, q: np.ndarray) -> None:
        self.figures = figures
        self.limit, self.knee, self.no_load, self.backlash = limit, knee, no_load, backlash
        self.delay_steps = int(round(figures.delay_s / timestep))
        n = len(limit)
        off = (np.zeros(n), np.zeros(n), np.zeros(n))       # no torque, no gains: before the first command
        self.line: deque[tuple[np.ndarray, np.ndarray, np.ndarray]] = deque([off] * self.delay_steps)
        self.rotor = q.copy()                                # the rotor side of the play

    def command(self, ctrl: np.ndarray, kp: np.ndarray, kd: np.ndarray, steps: int) -> None:
        """A tick's command, acting for `steps` physics steps after the delay."""
        item = (ctrl.copy(), kp.copy(), kd.copy())
        self.line.extend([item] * steps)

    def next(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.line.popleft()

    def follow(self, q: np.ndarray) -> np.ndarray:
        """Move the rotor side with the joint through the play; how far the
        rotor is from the joint (rotor - joint)."""
        half = self.backlash / 2.0
        np.clip(self.rotor, q - half, q + half, out=self.rotor)
        return self.rotor - q

    def encoder(self, q: np.ndarray) -> np.ndarray:
        """What the encoder counts for a (rotor-side) angle q."""
        step = self.figures.encoder_resolution
        return np.round(q / step) * step if step > 0 else q
