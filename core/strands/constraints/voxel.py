"""Inter-hair friction and cohesion from a voxel velocity grid (seed 002; Petrovic et al. 2005,
used by Mueller et al. 2012 for hair-hair interaction).

Every movable particle's velocity is splatted (mass-weighted, nearest cell) into a regular grid
of `N^3` cells spanning the bounding box of its setup's particles; each particle's velocity is
then blended toward its cell's mean, `v <- v + f (v_cell - v)`. Neighbouring strands that move
apart lose their relative velocity (friction), strands move together as a clump (cohesion).
Within a cell the mass-weighted corrections sum to zero, so the grid never changes the total
momentum (exactly, when `f` is the same inside a cell).

In the velocity-less Verlet form the velocity is `x - x_prev` (per substep), so the blend is a
change of `x_prev` only; positions are untouched. Splatting is `np.bincount` over flat cell ids
(one grid per setup, offset in one id space), gathering is fancy indexing: no Python loop over
particles. Every particle of the state gets a cell (roots and padding too, with weight 0 and
factor 0), so nothing is gathered or scattered by index; the cost is a few ufuncs over the state.
"""

from __future__ import annotations

import numpy as np


class VoxelCoefficients:
    """Per-frame data (flat over the (S, Ps) state): splat weights (mass of participating
    particles, 0 elsewhere), per-substep blend factors, and each strand's grid (group, N,
    id offset)."""

    def __init__(self, *, movable: np.ndarray, inv_mass: np.ndarray, factor: np.ndarray,
                 strand_group: np.ndarray, resolution: np.ndarray):
        S, Ps = movable.shape
        take = movable & (inv_mass > 0) & (factor > 0)
        self.count = int(take.sum())
        safe = np.where(take, inv_mass, 1.0)
        self.weight = np.where(take, 1.0 / safe, 0.0).reshape(-1)
        self.factor = np.where(take, factor, 0.0).reshape(-1)
        strand_group = np.asarray(strand_group, dtype=np.int64)
        groups, group = np.unique(strand_group, return_inverse=True)
        resolution = np.asarray(resolution, dtype=np.int64).reshape(-1)
        # The first strand of each group decides its resolution.
        first = np.array([int(np.flatnonzero(group == g)[0]) for g in range(len(groups))])
        n = resolution[first]
        cells = n**3
        offset = np.concatenate([[0], np.cumsum(cells)[:-1]]).astype(np.int64)
        self.cells = int(cells.sum())
        self.groups = [np.flatnonzero(group == g) for g in range(len(groups))]
        self.single = len(groups) == 1
        # Per strand, broadcast over its particles: (S, 1).
        self.n = n[group][:, None].astype(np.float64)
        self.n_int = n[group][:, None]
        self.offset = offset[group][:, None]
        self.n_top = self.n - 1.0  # highest cell coordinate (a particle on the box's far face)
        self.n_single = float(n[0])
        self.offset_f = self.offset.astype(np.float64)
        self.shape = (S, Ps)

    def any(self) -> bool:
        return self.count > 0


def cell_ids(x: np.ndarray, c: VoxelCoefficients) -> np.ndarray:
    """Flat cell id (S * Ps,) of every particle of `x` (3, S, Ps)."""
    if c.single:
        lo = x.reshape(3, -1).min(axis=1)[:, None, None]
        hi = x.reshape(3, -1).max(axis=1)[:, None, None]
    else:
        S = x.shape[1]
        lo = np.empty((3, S, 1))
        hi = np.empty((3, S, 1))
        for strands in c.groups:
            part = x[:, strands].reshape(3, -1)
            lo[:, strands, 0] = part.min(axis=1)[:, None]
            hi[:, strands, 0] = part.max(axis=1)[:, None]
    # One grid: its resolution as a scalar, so every operand below broadcasts over the whole
    # (S, Ps) block (one long loop) instead of per strand (rows of Ps, several times slower).
    n, n_top = (c.n_single, c.n_single - 1.0) if c.single else (c.n, c.n_top)
    scale = n / np.maximum(hi - lo, 1e-9)  # (3, S or 1, 1)
    # Cell coordinates in floating point: floor is the integer truncation of these non-negative
    # values, and the flat id (< 2^53) is exact in float64, so only the final id array is cast
    # to integers (one cast of (S, Ps) instead of three).
    u = x - lo
    u *= scale
    np.floor(u, out=u)
    # Clamp the far face (u == n) to the last cell. Only those few values change, so a compare
    # and a masked copy (~2x faster than np.minimum, whose NaN handling is slow) give the same
    # array.
    far = u > n_top
    np.copyto(u, n_top, where=far)
    ids = u[0] * n
    ids += u[1]
    ids *= n
    ids += u[2]
    if not c.single:  # the single grid's offset is 0
        ids += c.offset_f
    return ids.astype(np.int64).reshape(-1)


def solve_voxel_friction(x: np.ndarray, x_prev: np.ndarray, c: VoxelCoefficients) -> None:
    """Blend each participating particle's velocity toward its cell mean; `x`, `x_prev`
    (3, S, Ps), only `x_prev` changes."""
    ids = cell_ids(x, c)
    v = (x - x_prev).reshape(3, -1)
    weighted = v * c.weight
    mass = np.bincount(ids, weights=c.weight, minlength=c.cells)
    np.copyto(mass, 1e-300, where=mass < 1e-300)  # empty cells: = np.maximum(mass, 1e-300)
    inv = 1.0 / mass
    blend = np.empty_like(v)
    for k in range(3):
        mean = np.bincount(ids, weights=weighted[k], minlength=c.cells)
        mean *= inv
        # mode='clip': `take` with `out` buffers the result under the default mode='raise'
        # (about 2x slower); every id is a valid cell by construction, so nothing is clipped.
        np.take(mean, ids, out=blend[k], mode="clip")
    blend -= v
    blend *= c.factor
    x_prev -= blend.reshape(x_prev.shape)  # v_new = v + blend  <=>  x_prev_new = x_prev - blend
