"""Global shape: pull every particle toward its animated (groomed) reference position.

TressFX's global shape constraint / seed 000 "restitution": `x += k * (reference - x)` with a
per-particle, per-substep fraction `k = 1 - (1 - s) ** (h * 60)` (rate normalised, so `s` is the
fraction of the gap closed per 1/60 s whatever the substep) and `s` decaying root to tip.
"""

from __future__ import annotations

import numpy as np


def solve_shape(x: np.ndarray, reference: np.ndarray, fraction: np.ndarray,
                scratch: np.ndarray) -> None:
    """`x += fraction * (reference - x)`; x (3, S, P), `fraction` (S, P), 0 where not movable."""
    np.subtract(reference, x, out=scratch)
    np.multiply(scratch, fraction, out=scratch)
    np.add(x, scratch, out=x)
