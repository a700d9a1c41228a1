"""Uniform cubic B-spline resampling of strands (seed 000: "uniform cubic B-splines smooth the
simulated strand; the number of samples is a run-time LOD parameter").

The simulated particles are the control points. The curve is clamped to the root and the tip
with one phantom control point reflected at each end (P₋₁ = 2P₀ − P₁, Pₙ = 2Pₙ₋₁ − Pₙ₋₂): the
uniform cubic basis then gives (P₋₁ + 4P₀ + P₁)/6 = P₀ at the root, so a render strand still
starts exactly on the scalp. B-splines reproduce linear functions, so evenly spaced points on a
line stay on that line.

Resampling is linear in the control points: one (count, P) matrix per (P, count) pair, applied
to every strand of every frame with a single matrix product.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import SetupError


@lru_cache(maxsize=64)
def _matrix(points: int, count: int) -> np.ndarray:
    # Extended control points E[j] = P[j - 1] for j = 1..P, plus the two phantom points; the
    # spline has P - 1 spans, span i uses E[i..i + 3] and parameter u = i + t runs 0..P - 1.
    u = np.linspace(0.0, points - 1.0, count)
    span = np.minimum(np.floor(u).astype(np.int64), points - 2)
    t = u - span
    t2, t3 = t * t, t * t * t
    basis = np.stack([(1 - t) ** 3, 3 * t3 - 6 * t2 + 4, -3 * t3 + 3 * t2 + 3 * t + 1, t3],
                     axis=1) / 6.0                                   # (count, 4)
    extended = np.zeros((count, points + 2))
    rows = np.arange(count)[:, None]
    np.add.at(extended, (rows, span[:, None] + np.arange(4)[None]), basis)
    # Fold the phantom points back onto real ones: E[0] = 2P0 - P1, E[P + 1] = 2P[-1] - P[-2].
    matrix = extended[:, 1:points + 1].copy()
    matrix[:, 0] += 2.0 * extended[:, 0]
    matrix[:, 1] -= extended[:, 0]
    matrix[:, -1] += 2.0 * extended[:, -1]
    matrix[:, -2] -= extended[:, -1]
    matrix.setflags(write=False)
    return matrix


def bspline_matrix(points: int, count: int) -> np.ndarray:
    """The (count, points) matrix M with resampled = M @ control points (rows sum to 1)."""
    points, count = int(points), int(count)
    if points < 2:
        raise SetupError(f"a strand needs at least 2 points to resample, got {points}")
    if count < 2:
        raise SetupError(f"points per strand must be at least 2, got {count}")
    if points == 2:
        # A single segment: the clamped cubic is the segment itself.
        t = np.linspace(0.0, 1.0, count)
        matrix = np.stack([1 - t, t], axis=1)
        matrix.setflags(write=False)
        return matrix
    return _matrix(points, count)


def resample_bspline(points: np.ndarray, count: int) -> np.ndarray:
    """Resample strands (..., N, P, 3) to (..., N, count, 3) on their uniform cubic B-spline."""
    points = np.asarray(points)
    if points.ndim < 2 or points.shape[-1] != 3:
        raise SetupError(f"strand points must have shape (..., P, 3), got {points.shape}")
    matrix = bspline_matrix(points.shape[-2], count).astype(points.dtype, copy=False) \
        if points.dtype == np.float32 else bspline_matrix(points.shape[-2], count)
    # (count, P) @ (..., P, 3) broadcasts over every leading axis.
    return np.matmul(matrix, points)
