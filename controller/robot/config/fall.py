"""A humanoid's `fall` section: when the IMU calls it a fall, and the
protective posture it then takes (controller/core/fall.py,
controller/behaviours/off.py)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from controller.robot.config.body import Gains
from controller.robot.config.reader import Reader


@dataclass(frozen=True)
class FallConfig:
    tilt: float            # rad from upright, and ...
    tilt_rate: float       # ... tipping further at least this fast (rad/s): a fall
    passive_tilt: float    # rad: stiffness off (limp) from here, before the impact
    protect_s: float       # s to move into the protective posture
    front: np.ndarray      # the posture falling forward (every joint)
    back: np.ndarray       # falling backward
    gains: Gains           # the posture's gains
    # Scripts that tip the robot on purpose (getting up): no fall check while
    # one of them plays.
    except_scripts: frozenset[str] = frozenset()


KEYS = ("tilt", "tilt_rate", "passive_tilt", "protect_s", "front", "back", "gains",
        "except_scripts")


def load_optional_fall(r: Reader, poses: dict[str, np.ndarray],
                       gains: dict[str, Gains]) -> FallConfig | None:
    if "fall" not in r.data:
        return None
    fr = r.sub("fall")
    unknown = sorted(set(fr.data) - set(KEYS))
    if unknown:
        raise fr.fail(unknown[0], f"unknown key (known: {', '.join(KEYS)})")
    tilt = fr.number("tilt", 0.05, 1.5)
    passive = fr.number("passive_tilt", 0.05, 1.57)
    if passive <= tilt:
        raise fr.fail("passive_tilt", f"{passive} must be above tilt {tilt}")
    named = {}
    for key in ("front", "back"):
        name = fr.get(key, str)
        if name not in poses:
            raise fr.fail(key, f"{name!r} is not a pose of `poses` ({sorted(poses)})")
        named[key] = poses[name]
    gain_set = fr.get("gains", str)
    if gain_set not in gains:
        raise fr.fail("gains", f"{gain_set!r} is not a set of `gains` ({sorted(gains)})")
    exempt = fr.get("except_scripts", list, [])
    if not all(isinstance(n, str) for n in exempt):
        raise fr.fail("except_scripts", f"expected a list of script names, got {exempt!r}")
    return FallConfig(except_scripts=frozenset(exempt), tilt=tilt, tilt_rate=fr.number("tilt_rate", 0.0, 50.0),
                      passive_tilt=passive, protect_s=fr.number("protect_s", 0.02, 2.0),
                      front=named["front"], back=named["back"], gains=gains[gain_set])
