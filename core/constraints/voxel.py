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
particles.
"""

from __future__ import annotations

import numpy as np


class VoxelCoefficients:
    """Per-frame data: which particles take part, their masses, blend factors and grid groups.

    `index` (n,) flat indices into (S, Ps) of movable particles with a nonzero factor;
    `mass` (n,); `factor` (n,) per-substep blend; `group` (n,) setup index; `resolution` per group.
    """

    def __init__(self, *, movable: np.ndarray, inv_mass: np.ndarray, factor: np.ndarray,
                 strand_group: np.ndarray, resolution: np.ndarray):
        S, Ps = movable.shape
        take = movable & (inv_mass > 0) & (factor > 0)
        self.index = np.flatnonzero(take)
        strand = self.index // Ps
        self.mass = 1.0 / inv_mass.reshape(-1)[self.index]
        self.factor = factor.reshape(-1)[self.index]
        group = np.asarray(strand_group, dtype=np.int64)[strand]
        groups, self.group = np.unique(group, return_inverse=True)
        # The first strand of each group decides its resolution.
        first = np.array([int(np.flatnonzero(strand_group == g)[0]) for g in groups],
                         dtype=np.int64)
        self.resolution = np.asarray(resolution, dtype=np.int64)[first].reshape(-1)
        cells = self.resolution**3
        self.offset = np.concatenate([[0], np.cumsum(cells)[:-1]]).astype(np.int64)
        self.cells = int(cells.sum())
        self.members = [np.flatnonzero(self.group == g) for g in range(len(groups))]

    def any(self) -> bool:
        return self.index.size > 0


def cell_ids(points: np.ndarray, c: VoxelCoefficients) -> np.ndarray:
    """Flat cell id (n,) of each participating particle at `points` (3, n)."""
    if len(c.members) == 1:  # one setup: no gathering
        return _group_ids(points, int(c.resolution[0]), int(c.offset[0]))
    ids = np.empty(points.shape[1], dtype=np.int64)
    for g, members in enumerate(c.members):
        ids[members] = _group_ids(points[:, members], int(c.resolution[g]), int(c.offset[g]))
    return ids


def _group_ids(p: np.ndarray, n: int, offset: int) -> np.ndarray:
    """Cells of an N^3 grid over the bounding box of `p` (3, m), component-major for speed."""
    lo = p.min(axis=1)
    scale = n / np.maximum(p.max(axis=1) - lo, 1e-9)
    ijk = ((p - lo[:, None]) * scale[:, None]).astype(np.int64)
    np.minimum(ijk, n - 1, out=ijk)
    return offset + (ijk[0] * n + ijk[1]) * n + ijk[2]


def solve_voxel_friction(x: np.ndarray, x_prev: np.ndarray, c: VoxelCoefficients) -> None:
    """Blend each participating particle's velocity toward its cell mean; `x`, `x_prev`
    (3, S, Ps), only `x_prev` changes."""
    flat_x = x.reshape(3, -1)
    flat_prev = x_prev.reshape(3, -1)
    p = flat_x[:, c.index]  # (3, n)
    v = p - flat_prev[:, c.index]
    ids = cell_ids(p, c)
    m = c.mass
    mass = np.bincount(ids, weights=m, minlength=c.cells)
    mean = np.stack([np.bincount(ids, weights=m * v[k], minlength=c.cells) for k in range(3)])
    mean /= np.maximum(mass, 1e-300)
    v += c.factor * (mean[:, ids] - v)
    flat_prev[:, c.index] = p - v
