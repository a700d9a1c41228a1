"""Tether / long-range attachment (seed 000 figure 7; Kim et al. 2012 "LRA").

Unilateral: each dynamic particle stays within `tether_length` (its rest length along the chain)
of the strand's root; only the dynamic particle moves (the root is kinematic). It bounds the
stretch of long chains that one Gauss-Seidel pass per substep cannot fully remove.
"""

from __future__ import annotations

import numpy as np

from .max_distance import clamp_within


def solve_tether(x: np.ndarray, limit: np.ndarray, d: np.ndarray, d2: np.ndarray,
                 length: np.ndarray) -> None:
    """`x` (3, S, P) in place; `limit` (S, P-1) for particles 1..P-1, inf where off.

    `d`, `d2` (3, S, P-1) and `length` (S, P-1) are scratch buffers.
    """
    clamp_within(x[:, :, 1:], x[:, :, 0:1], limit, d, d2, length)
