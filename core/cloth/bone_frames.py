"""Bone matrices from the simulated grid (seed 001, "creating the bone matrices").

Each bone is mapped to a grid vertex. Its frame: x along the column towards the vertex below
(or away from the vertex above on the last row), y from the left to the right neighbour, z = x × y,
orthonormalised by Gram-Schmidt keeping x; the translation is the vertex position. The bone's
own rest orientation relative to that frame (`rest_offsets`) is kept constant, so a bone whose
axes differ from the grid's still follows it rigidly (`bone_world`).
"""

from __future__ import annotations

import numpy as np

from ..errors import SetupError

_EPS = 1e-12


def _take(positions: np.ndarray, index: np.ndarray) -> np.ndarray:
    return np.take(positions, index, axis=-2)


def _normalise(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), _EPS)


def grid_frames(positions: np.ndarray, *, vertex: np.ndarray, below: np.ndarray,
                left: np.ndarray, right: np.ndarray,
                above: np.ndarray | None = None) -> np.ndarray:
    """World frames (..., B, 4, 4) of B bones from grid `positions` (..., N, 3).

    `vertex`, `below`, `left`, `right` (and optional `above`) are (B,) vertex indices, -1 for
    none: `below == -1` uses the direction away from `above` (required then); a missing left or
    right neighbour is replaced by the vertex itself. Columns of the 3x3 part are the x, y, z
    axes (Blender's convention).
    """
    positions = np.asarray(positions, dtype=np.float64)
    vertex = np.asarray(vertex, dtype=np.int64)
    below = np.asarray(below, dtype=np.int64)
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    no_below = below < 0
    if no_below.any():
        if above is None:
            raise SetupError("grid_frames: a bone has no vertex below; pass `above` for it")
        above = np.asarray(above, dtype=np.int64)
        if np.any(above[no_below] < 0):
            b = int(np.flatnonzero(no_below & (above < 0))[0])
            raise SetupError(f"grid_frames: bone {b} has neither a vertex below nor above")
    p = _take(positions, vertex)
    if no_below.any():
        # Away from the vertex above: x = p - above (same direction as a column going down).
        down = np.where(no_below[:, None], p - _take(positions, np.where(no_below, above, 0)),
                        _take(positions, np.where(no_below, 0, below)) - p)
    else:
        down = _take(positions, below) - p
    y = _take(positions, np.where(right < 0, vertex, right)) \
        - _take(positions, np.where(left < 0, vertex, left))
    x_axis = _normalise(down)
    y = y - np.sum(y * x_axis, axis=-1, keepdims=True) * x_axis  # Gram-Schmidt keeps x
    y_axis = _normalise(y)
    z_axis = np.cross(x_axis, y_axis)
    frames = np.zeros(p.shape[:-1] + (4, 4))
    frames[..., :3, 0] = x_axis
    frames[..., :3, 1] = y_axis
    frames[..., :3, 2] = z_axis
    frames[..., :3, 3] = p
    frames[..., 3, 3] = 1.0
    return frames


def rigid_inverse(m: np.ndarray) -> np.ndarray:
    """Inverse of rigid 4x4 matrices (orthonormal rotation + translation)."""
    out = np.zeros_like(m)
    rt = np.swapaxes(m[..., :3, :3], -1, -2)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", rt, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def rest_offsets(*, grid_rest: np.ndarray, bone_rest_world: np.ndarray) -> np.ndarray:
    """`inverse(grid_rest) @ bone_rest_world` (B, 4, 4): the bone in its grid frame."""
    return rigid_inverse(np.asarray(grid_rest, dtype=np.float64)) @ np.asarray(
        bone_rest_world, dtype=np.float64)


def bone_world(frames: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """World matrices (..., B, 4, 4) of the bones: `frames @ offsets`."""
    return np.asarray(frames, dtype=np.float64) @ np.asarray(offsets, dtype=np.float64)
