"""Inverses of stacked 3×3 and affine 4×4 matrices, written out term by term.

Every system converts between world, armature and bone spaces for every bone of every frame at
once; LAPACK's per-matrix call overhead dominates at this size, so the closed forms win.
"""

from __future__ import annotations

import numpy as np


def inverse3(m: np.ndarray) -> np.ndarray:
    """Inverses of stacked 3×3 matrices from the adjugate, written out term by term.

    ~25× faster than ``np.linalg.inv`` on the tens of thousands of tiny matrices a bake of every
    bone of every frame needs (LAPACK's per-matrix call overhead dominates at this size).
    """
    a00, a01, a02 = m[..., 0, 0], m[..., 0, 1], m[..., 0, 2]
    a10, a11, a12 = m[..., 1, 0], m[..., 1, 1], m[..., 1, 2]
    a20, a21, a22 = m[..., 2, 0], m[..., 2, 1], m[..., 2, 2]
    out = np.empty_like(m)
    out[..., 0, 0] = a11 * a22 - a12 * a21
    out[..., 1, 0] = a12 * a20 - a10 * a22
    out[..., 2, 0] = a10 * a21 - a11 * a20
    out[..., 0, 1] = a02 * a21 - a01 * a22
    out[..., 1, 1] = a00 * a22 - a02 * a20
    out[..., 2, 1] = a01 * a20 - a00 * a21
    out[..., 0, 2] = a01 * a12 - a02 * a11
    out[..., 1, 2] = a02 * a10 - a00 * a12
    out[..., 2, 2] = a00 * a11 - a01 * a10
    det = a00 * out[..., 0, 0] + a01 * out[..., 1, 0] + a02 * out[..., 2, 0]
    out /= det[..., None, None]
    return out


def inverse_affine(m: np.ndarray) -> np.ndarray:
    """Inverses of stacked affine 4×4 matrices (…, 4, 4) whose last row is 0 0 0 1 (not
    checked): ``inverse3`` of the 3×3 part and ``-inv @ t``, without LAPACK's per-call
    overhead."""
    out = np.zeros_like(m)
    inv = inverse3(m[..., :3, :3])
    out[..., :3, :3] = inv
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", inv, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def lerp_affine(a: np.ndarray, b: np.ndarray, alpha) -> np.ndarray:
    """Affine matrices (..., 4, 4) between the samples `a` and `b` at the blend `alpha` (a
    scalar, or an array broadcast against the matrices: (n, 1, 1, 1) for n blends of (K, 4, 4)):
    the element-wise blend `a + alpha (b - a)`, with each column of its 3×3 part brought back to
    the blend of the samples' column lengths (normalised lerp, as rotations are blended by nlerp).

    Why: the plain blend of two rotations is a chord, shorter than both: a collider turning by
    theta between two samples is scaled by cos(theta / 2) across its plane of rotation halfway
    between them. A head sphere turning 1,500 deg/s (12.5 deg per 120 Hz sample) was 0.6 %
    smaller there, and hair ended frames between samples 0.57 mm inside the real head (audit
    s46, tests/core/test_chains_audit.py). Where the two samples' 3×3 parts are equal (still or
    only travelling colliders) the lengths are already right: the blend is returned as it is,
    the same bits."""
    out = a + alpha * (b - a)
    linear_a, linear_b = a[..., :3, :3], b[..., :3, :3]
    if np.array_equal(linear_a, linear_b):
        return out
    length_a = np.sqrt(np.einsum("...ij,...ij->...j", linear_a, linear_a))
    length_b = np.sqrt(np.einsum("...ij,...ij->...j", linear_b, linear_b))
    blend = np.asarray(alpha)
    if blend.ndim:
        blend = blend[..., 0]  # (n, 1, 1, 1) -> (n, 1, 1): against the (…, 3) column lengths
    want = length_a + blend * (length_b - length_a)
    linear = out[..., :3, :3]
    have = np.sqrt(np.einsum("...ij,...ij->...j", linear, linear))
    # A column that turned half a turn between the samples blends to nothing: left as it is.
    scale = np.where(have > 0.0, want / np.where(have > 0.0, have, 1.0), 1.0)
    linear *= scale[..., None, :]
    return out
