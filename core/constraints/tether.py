"""Tether / long-range attachment (seed 000 figure 7; Kim et al. 2012 "LRA").

Unilateral: each dynamic particle stays within `tether_length` (its rest length along the chain)
of the strand's root; only the dynamic particle moves (the root is kinematic). It bounds the
stretch of long chains that one Gauss-Seidel pass per substep cannot fully remove.
"""

from __future__ import annotations

import numpy as np

EPS_LENGTH = 1e-12


def solve_tether(x: np.ndarray, limit: np.ndarray, d: np.ndarray, d2: np.ndarray,
                 length: np.ndarray) -> None:
    """`x` (3, S, P) in place; `limit` (S, P-1) for particles 1..P-1, inf where off.

    `d`, `d2` (3, S, P-1) and `length` (S, P-1) are scratch buffers.
    """
    tail, root = x[:, :, 1:], x[:, :, 0:1]
    np.subtract(tail, root, out=d)
    np.multiply(d, d, out=d2)
    np.add(d2[0], d2[1], out=length)
    np.add(length, d2[2], out=length)
    np.sqrt(length, out=length)
    np.maximum(length, EPS_LENGTH, out=length)
    # x = root + d * min(1, limit / |d|): onto the sphere of radius limit, never outward.
    np.divide(limit, length, out=length)
    np.minimum(length, 1.0, out=length)
    np.multiply(d, length, out=d)
    np.add(root, d, out=tail)
