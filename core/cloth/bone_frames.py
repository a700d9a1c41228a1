"""Bone matrices from the simulated grid (seed 001, "creating the bone matrices").

Each bone is mapped to a grid vertex. Its frame: x along the column towards the vertex below
(or away from the vertex above on the last row), y from the left to the right neighbour, z = x × y,
orthonormalised by Gram-Schmidt keeping x; the translation is the vertex position. The bone's
own rest orientation relative to that frame (`rest_offsets`) is kept constant, so a bone whose
axes differ from the grid's still follows it rigidly (`bone_world`).

Folds: the row's part across the column, (right - left) minus its component along x, fixes the
roll, and it is short when the cage folds or shears so that the row turns into the column (a
cage pressed round a collider ball, a skirt's top row in a jump). A small vertex move then
swings that short vector through 150°, so the bone rolls over in one frame (audit r8). Given the
undeformed cage and its quads, `grid_frames` blends the row's y towards the roll of a best-fit
rotation of the whole 1-ring (`_ring_fit_y`, Kabsch / polar decomposition) where the row is
poorly conditioned. No construction from the cage alone can be continuous everywhere: the fit
is undetermined for a ring crushed onto a line or folded flat onto itself across the vertex,
and a cell turned inside out (its row reversed against its ring) still changes roll somewhere,
now spread over the frames in which the row's conditioning recovers.
"""

from __future__ import annotations

import numpy as np

from ..errors import SetupError

_EPS = 1e-12
# Conditioning of the row, s = |(right - left) across x| / |right - left at rest| (1 for a
# square cell, 0 when the row lies along the column or folds onto itself). At or above
# ROW_WELL_CONDITIONED the frame is the seed's, bit for bit; at or below ROW_ILL_CONDITIONED
# the roll is the 1-ring fit's; smoothstep in between.
ROW_WELL_CONDITIONED = float(np.sin(np.radians(45.0)))
ROW_ILL_CONDITIONED = float(np.sin(np.radians(15.0)))


def _take(positions: np.ndarray, index: np.ndarray) -> np.ndarray:
    return np.take(positions, index, axis=-2)


def _normalise(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), _EPS)


def _column_and_row(positions: np.ndarray, vertex: np.ndarray, below: np.ndarray,
                    left: np.ndarray, right: np.ndarray, above: np.ndarray | None):
    """Vertex positions, unit x along the column and the row vector (right - left)."""
    no_below = below < 0
    p = _take(positions, vertex)
    if no_below.any():
        # Away from the vertex above: x = p - above (same direction as a column going down).
        down = np.where(no_below[:, None], p - _take(positions, np.where(no_below, above, 0)),
                        _take(positions, np.where(no_below, 0, below)) - p)
    else:
        down = _take(positions, below) - p
    row = _take(positions, np.where(right < 0, vertex, right)) \
        - _take(positions, np.where(left < 0, vertex, left))
    return p, _normalise(down), row


def _across(v: np.ndarray, x_axis: np.ndarray) -> np.ndarray:
    """`v` minus its component along the unit `x_axis` (Gram-Schmidt keeping x)."""
    return v - np.sum(v * x_axis, axis=-1, keepdims=True) * x_axis


def _incident_quads(quads: np.ndarray, vertex: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(B, K, 4) corners of the quads around each bone's vertex (padded) and (B, K) validity."""
    around = (quads[None, :, :] == vertex[:, None, None]).any(axis=-1)  # (B, Q)
    count = around.sum(axis=1)
    k = max(int(count.max()) if count.size else 0, 1)
    order = np.argsort(~around, axis=1, kind="stable")[:, :k]  # incident quads first, in order
    return quads[order], np.arange(k)[None, :] < count[:, None]


def _ring_fit_y(current: np.ndarray, at_rest: np.ndarray, valid: np.ndarray,
                y_rest: np.ndarray, x_axis: np.ndarray) -> np.ndarray:
    """Unit y of n (frame, bone) pairs from a shape-matching fit of the 1-ring: `current` and
    `at_rest` (n, K, 4, 3) are the corners of the K quads around the vertex minus the vertex,
    now and in the undeformed cage, `valid` (n, K) marks real quads, `y_rest` the rest y and
    `x_axis` the current x (n, 3).

    R is the rotation that best maps the rest 1-ring onto the current one (Kabsch / polar
    decomposition: the polar factor of H = sum over the corners c of (x_c - x_v)(X_c - X_v)^T,
    by SVD with the determinant fixed to +1; the row and column neighbours, in two quads each,
    count twice). A least-squares fit to all eight neighbours stays defined and turns smoothly
    while one direction of the ring (the row) folds onto another (the column); only a ring
    crushed onto a line, or folded flat onto itself across the vertex, leaves it undetermined.
    The rest y turned by R, made perpendicular to x, is the roll.
    """
    h = np.einsum("nkci,nkcj->nij", current * valid[:, :, None, None], at_rest)
    u, _, vt = np.linalg.svd(h)
    u[:, :, 2] *= np.sign(np.linalg.det(u @ vt))[:, None]  # a rotation, never a reflection
    turned = np.einsum("nij,nj->ni", u @ vt, y_rest)
    return _normalise(_across(turned, x_axis))


def _smoothstep(t: np.ndarray) -> np.ndarray:
    t = np.clip(t, 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def grid_frames(positions: np.ndarray, *, vertex: np.ndarray, below: np.ndarray,
                left: np.ndarray, right: np.ndarray,
                above: np.ndarray | None = None, rest: np.ndarray | None = None,
                quads: np.ndarray | None = None) -> np.ndarray:
    """World frames (..., B, 4, 4) of B bones from grid `positions` (..., N, 3).

    `vertex`, `below`, `left`, `right` (and optional `above`) are (B,) vertex indices, -1 for
    none: `below == -1` uses the direction away from `above` (required then); a missing left or
    right neighbour is replaced by the vertex itself. Columns of the 3x3 part are the x, y, z
    axes (Blender's convention).

    With the undeformed cage `rest` (N, 3) and its `quads` (Q, 4), the roll is made robust to
    folds ("row frame with a shape-matching fallback"): x is still exactly towards the vertex
    below; y is the seed's (right - left, Gram-Schmidt against x) wherever the row is well
    conditioned (s >= ROW_WELL_CONDITIONED: the frame is then bit for bit the seed's, as for
    every frame of a cage whose rows stay well off its columns), the rest y turned by the
    best-fit rotation of the vertex's 1-ring (`_ring_fit_y`) where it is not
    (s <= ROW_ILL_CONDITIONED), a smoothstep of the two in between.
    s = |(right - left) across x| / |right - left at rest| measures how far the row still
    stands off the column: the row's y turns by about (vertex move) / (s × spacing) per
    frame, so where s is small the row no longer measures the roll and the ring does. The rest
    frame comes from the same call on `rest` (there the fit is the identity), so a cage at rest
    gives the bone's rest pose. Deterministic, vectorised over all frames and bones; the SVDs
    run only for (frame, bone) pairs below ROW_WELL_CONDITIONED.
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
    if (rest is None) != (quads is None):
        raise TypeError("grid_frames: pass both `rest` and `quads` (the 1-ring fit) or neither")
    p, x_axis, row = _column_and_row(positions, vertex, below, left, right, above)
    across = _across(row, x_axis)
    y_axis = _normalise(across)
    if rest is not None:
        y_axis = _fold_safe_y(positions, np.asarray(rest, dtype=np.float64),
                              np.asarray(quads, dtype=np.int64), vertex, below, left, right,
                              above, x_axis, across, y_axis)
    z_axis = np.cross(x_axis, y_axis)
    frames = np.zeros(p.shape[:-1] + (4, 4))
    frames[..., :3, 0] = x_axis
    frames[..., :3, 1] = y_axis
    frames[..., :3, 2] = z_axis
    frames[..., :3, 3] = p
    frames[..., 3, 3] = 1.0
    return frames


def _fold_safe_y(positions, rest, quads, vertex, below, left, right, above, x_axis, across,
                 y_row):
    """`y_row` where the row is well conditioned, blended towards the 1-ring fit elsewhere."""
    _, x_rest, row_rest = _column_and_row(rest, vertex, below, left, right, above)
    y_rest = _normalise(_across(row_rest, x_rest))
    s = np.linalg.norm(across, axis=-1) / np.maximum(np.linalg.norm(row_rest, axis=-1), _EPS)
    weak = s < ROW_WELL_CONDITIONED  # (..., B)
    if not weak.any():
        return y_row
    flat = positions.reshape((-1,) + positions.shape[-2:])  # (M, N, 3)
    frame_of, bone_of = np.nonzero(weak.reshape(-1, weak.shape[-1]))
    corners, valid = _incident_quads(quads, vertex)
    corners, centre = corners[bone_of], vertex[bone_of]  # (n, K, 4), (n,)
    current = flat[frame_of[:, None, None], corners] - flat[frame_of, centre][:, None, None]
    at_rest = rest[corners] - rest[centre][:, None, None]
    x_weak = x_axis[weak]
    fit = _ring_fit_y(current, at_rest, valid[bone_of], y_rest[bone_of], x_weak)
    w = _smoothstep((s[weak] - ROW_ILL_CONDITIONED)
                    / (ROW_WELL_CONDITIONED - ROW_ILL_CONDITIONED))[:, None]
    blend = w * y_row[weak] + (1.0 - w) * fit
    # The two disagree by 180° only on a cell turned inside out; keep the fit there.
    blend = np.where(np.linalg.norm(blend, axis=-1, keepdims=True) > 1e-6, blend, fit)
    out = y_row.copy()
    out[weak] = _normalise(_across(blend, x_weak))
    return out


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
