"""Tether / long-range attachment (seed 000 figure 7; Kim et al. 2012 "LRA").

Unilateral: each dynamic particle stays within `tether_length` (its rest length along the chain)
of the strand's root; only the dynamic particle moves (the root is kinematic). It bounds the
stretch of long chains that one Gauss-Seidel pass per substep cannot fully remove.
"""

from __future__ import annotations

import numpy as np

EPS_LENGTH = 1e-12


def solve_tether(x: np.ndarray, limit: np.ndarray, d: np.ndarray, d2: np.ndarray,
                 length: np.ndarray, factor: np.ndarray) -> None:
    """`x` (S, P, 3) in place; `limit` (S, P-1) for particles 1..P-1, inf where off.

    `d`, `d2` (S, P-1, 3), `length`, `factor` (S, P-1) are scratch buffers.
    """
    tail = x[:, 1:]
    np.subtract(tail, x[:, 0:1], out=d)
    np.multiply(d, d, out=d2)
    np.sum(d2, axis=-1, out=length)
    np.sqrt(length, out=length)
    np.maximum(length, EPS_LENGTH, out=length)
    # Move back by max(0, 1 - limit/|d|) of d: onto the sphere of radius limit, never outward.
    np.divide(limit, length, out=factor)
    np.subtract(1.0, factor, out=factor)
    np.maximum(factor, 0.0, out=factor)
    np.multiply(d, factor[..., None], out=d2)
    np.subtract(tail, d2, out=tail)
