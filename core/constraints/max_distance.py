"""Max distance from the animated reference (Magica Cloth "max distance", seed 000/001).

Unilateral clamp, `|x - reference| <= max_distance`, the upper distance limit of Mueller 2020
eq. 25 with a kinematic target: the particle is moved back onto the sphere around its reference.
"""

from __future__ import annotations

import numpy as np

EPS_LENGTH = 1e-12


def solve_max_distance(x: np.ndarray, reference: np.ndarray, limit: np.ndarray, d: np.ndarray,
                       d2: np.ndarray, length: np.ndarray, factor: np.ndarray) -> None:
    """`x`, `reference` (S, P, 3); `limit` (S, P), inf where off; the rest are scratch."""
    np.subtract(x, reference, out=d)
    np.multiply(d, d, out=d2)
    np.sum(d2, axis=-1, out=length)
    np.sqrt(length, out=length)
    np.maximum(length, EPS_LENGTH, out=length)
    np.divide(limit, length, out=factor)
    np.subtract(1.0, factor, out=factor)
    np.maximum(factor, 0.0, out=factor)
    np.multiply(d, factor[..., None], out=d2)
    np.subtract(x, d2, out=x)
