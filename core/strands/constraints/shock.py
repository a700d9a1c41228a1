"""Velocity shock propagation (TressFX 4.x `VelocityShockPropagation`).

A sudden head turn moves the root by a lot in one step; the rest of the strand only learns of it
through the length constraints, one segment per pass, so long hair lags and stretches (seed 000
ran into exactly this). TressFX takes the rigid motion of the root segment over the step, a
rotation `R` (shortest arc from its old to its new direction) and translation
`t = root_new - R root_old`, and blends every particle, current and previous position alike,
toward that rigidly moved copy: `x <- x + c (R x + t - x)`. Moving both positions by the same
motion carries the strand along without adding velocity relative to the head; `c = 1` makes the
strand follow the root rigidly.

Here the root segment is the reference (animated) segment 0 -> 1 at the start and end of the
substep, and `c` is rate-normalised (a fraction per 1/60 s) so the effect is the same at any
substep size.
"""

from __future__ import annotations

import numpy as np

from ...rotations import swing_matrix

_EPS = 1e-12


def root_motion(reference_start: np.ndarray, reference_end: np.ndarray,
                fraction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Affine increments `x += x @ A + b` for `fraction` (S,) of each root segment's motion.

    `reference_start`, `reference_end` (..., 3, S, n >= 2): particles 0 and 1 are read, any
    leading axes are substeps computed at once (the bake does a frame's substeps in one call).
    Returns `A` (..., S, 3, 3) (transposed for row vectors, as `space.apply_carry` takes them)
    and `b` (..., S, 1, 3).
    """
    a = np.moveaxis(reference_start[..., 1] - reference_start[..., 0], -2, -1)  # (..., S, 3)
    b = np.moveaxis(reference_end[..., 1] - reference_end[..., 0], -2, -1)
    a = a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), _EPS)
    b = b / np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), _EPS)
    R = swing_matrix(a, b)  # (..., S, 3, 3)
    root_old = np.moveaxis(reference_start[..., 0], -2, -1)
    root_new = np.moveaxis(reference_end[..., 0], -2, -1)
    t = root_new - np.einsum("...ij,...j->...i", R, root_old)
    c = np.asarray(fraction, dtype=np.float64)
    A = c[:, None, None] * (R - np.eye(3))
    return np.swapaxes(A, -1, -2).copy(), (c[:, None] * t)[..., None, :].copy()
