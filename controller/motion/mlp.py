"""A robot's own learned policy: a small multilayer perceptron read from the
reference controller's weight file format (SPEC §12.C).

The file is one text line of comma-separated numbers: layer by layer from
the input, the weight matrix (out x in, stored column by column) and then the
bias vector. Hidden layers apply the activation; the output layer is linear.
The layer sizes are not in the file, so the caller names them and the count
of numbers must match exactly: a truncated or foreign file is refused with
the counts, never run.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np


class PolicyError(ValueError):
    pass


def _elu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0.0, x, np.expm1(np.minimum(x, 0.0)))


ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"tanh": np.tanh, "elu": _elu}


def weight_count(sizes: Sequence[int]) -> int:
    return sum(o * i + o for i, o in zip(sizes[:-1], sizes[1:]))


class Mlp:
    """sizes = (inputs, hidden..., outputs); `forward` maps one input vector."""

    def __init__(self, numbers: np.ndarray, sizes: Sequence[int], activation: str) -> None:
        if activation not in ACTIVATIONS:
            raise PolicyError(f"unknown activation {activation!r} (known: {sorted(ACTIVATIONS)})")
        if len(sizes) < 2 or min(sizes) < 1:
            raise PolicyError(f"layer sizes {list(sizes)} need an input and an output of at least 1")
        expected = weight_count(sizes)
        if numbers.size != expected:
            raise PolicyError(f"{numbers.size} numbers, but layers {list(sizes)} need {expected}")
        if not np.all(np.isfinite(numbers)):
            raise PolicyError("the weights hold a NaN or an infinity")
        self.sizes = tuple(sizes)
        self.act = ACTIVATIONS[activation]
        self.layers: list[tuple[np.ndarray, np.ndarray]] = []
        at = 0
        for n_in, n_out in zip(sizes[:-1], sizes[1:]):
            # Column by column: element (r, c) is number c * out + r.
            w = numbers[at:at + n_in * n_out].reshape(n_in, n_out).T.copy()
            at += n_in * n_out
            b = numbers[at:at + n_out].copy()
            at += n_out
            self.layers.append((w, b))

    @classmethod
    def load(cls, path: Path, sizes: Sequence[int], activation: str) -> Mlp:
        try:
            text = path.read_text()
        except OSError as exc:
            raise PolicyError(f"{path}: {exc.strerror or exc}") from exc
        fields = [f for f in (s.strip() for s in text.replace("\n", ",").split(",")) if f]
        try:
            numbers = np.array([float(f) for f in fields], dtype=np.float64)
        except ValueError as exc:
            raise PolicyError(f"{path}: not a comma-separated list of numbers ({exc})") from exc
        try:
            return cls(numbers, sizes, activation)
        except PolicyError as exc:
            raise PolicyError(f"{path}: {exc}") from exc

    def forward(self, x: np.ndarray) -> np.ndarray:
        if x.shape != (self.sizes[0],):
            raise PolicyError(f"input of {x.shape}, the network takes ({self.sizes[0]},)")
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            x = w @ x + b
            if i < last:
                x = self.act(x)
        return x
