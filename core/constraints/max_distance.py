"""Max distance from the animated reference (Magica Cloth "max distance", seed 000/001).

Unilateral clamp, `|x - reference| <= max_distance`, the upper distance limit of Mueller 2020
eq. 25 with a kinematic target: the particle is moved back onto the sphere around its reference.
"""

from __future__ import annotations

import numpy as np

EPS_LENGTH = 1e-12


def solve_max_distance(x: np.ndarray, reference: np.ndarray, limit: np.ndarray, d: np.ndarray,
                       d2: np.ndarray, length: np.ndarray) -> None:
    """`x`, `reference` (3, S, P); `limit` (S, P), inf where off; the rest are scratch."""
    np.subtract(x, reference, out=d)
    np.multiply(d, d, out=d2)
    np.add(d2[0], d2[1], out=length)
    np.add(length, d2[2], out=length)
    np.sqrt(length, out=length)
    np.maximum(length, EPS_LENGTH, out=length)
    np.divide(limit, length, out=length)
    np.minimum(length, 1.0, out=length)
    np.multiply(d, length, out=d)
    np.add(reference, d, out=x)
