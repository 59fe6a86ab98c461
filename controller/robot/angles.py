"""Planar angles: the one place a heading is folded into [-pi, pi)."""
from __future__ import annotations

import math


def wrap_angle(angle: float) -> float:
    """`angle` folded into [-pi, pi)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi
