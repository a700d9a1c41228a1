"""Max distance from the animated reference (Magica Cloth "max distance", seed 000/001).

Unilateral clamp, `|x - reference| <= max_distance`, the upper distance limit of Mueller 2020
eq. 25 with a kinematic target: the particle is moved back onto the sphere around its reference.
"""

from __future__ import annotations

import numpy as np

EPS_LENGTH = 1e-12


def clamp_within(x: np.ndarray, anchor: np.ndarray, limit: np.ndarray, d: np.ndarray,
                 d2: np.ndarray, length: np.ndarray) -> bool:
    """Move each point of `x` (3, ...) in place to within `limit` of `anchor`, never outward;
    whether one was outside.

    `x = anchor + d * min(1, limit / |d|)` with `d = x - anchor`: the one unilateral distance
    limit behind both max distance (anchor = reference) and the tether (anchor = root).
    `d`, `d2` (shape of `x`) and `length` (shape of `limit`) are scratch buffers.
    """
    np.subtract(x, anchor, out=d)
    np.multiply(d, d, out=d2)
    np.add(d2[0], d2[1], out=length)
    np.add(length, d2[2], out=length)
    np.sqrt(length, out=length)
    np.maximum(length, EPS_LENGTH, out=length)
    np.divide(limit, length, out=length)
    outside = bool(np.any(length < 1.0))
    np.minimum(length, 1.0, out=length)
    np.multiply(d, length, out=d)
    np.add(anchor, d, out=x)
    return outside


def solve_max_distance(x: np.ndarray, reference: np.ndarray, limit: np.ndarray, d: np.ndarray,
                       d2: np.ndarray, length: np.ndarray) -> bool:
    """`x`, `reference` (3, S, P); `limit` (S, P), inf where off; the rest are scratch.
    Whether a particle was outside its max distance."""
    return clamp_within(x, reference, limit, d, d2, length)
