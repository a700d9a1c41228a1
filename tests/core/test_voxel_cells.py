"""Voxel cell ids (core/strands/constraints/voxel.py) against a direct per-group transcription:
one grid
per setup spanning its particles' bounding box, resolution per setup, ids offset per grid."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.strands.constraints.voxel import VoxelCoefficients, cell_ids


def _direct(x: np.ndarray, group: np.ndarray, resolution: dict[int, int]) -> np.ndarray:
    S, Ps = x.shape[1:]
    ids = np.empty((S, Ps), dtype=np.int64)
    offset = 0
    for g in sorted(resolution):
        n = resolution[g]
        strands = np.flatnonzero(group == g)
        part = x[:, strands]
        lo = part.reshape(3, -1).min(axis=1)
        hi = part.reshape(3, -1).max(axis=1)
        for s in strands:
            for p in range(Ps):
                ijk = [min(int((x[a, s, p] - lo[a]) * (n / max(hi[a] - lo[a], 1e-9))), n - 1)
                       for a in range(3)]
                ids[s, p] = offset + (ijk[0] * n + ijk[1]) * n + ijk[2]
        offset += n**3
    return ids.reshape(-1)


@pytest.mark.parametrize("groups", [{0: 4}, {0: 4, 1: 7}, {0: 32, 1: 3, 2: 5}])
def test_cell_ids_match_a_direct_transcription(groups):
    rng = np.random.default_rng(len(groups))
    S, Ps = 12, 6
    group = np.arange(S) % len(groups)
    x = rng.normal(size=(3, S, Ps)) * (1.0 + group)[None, :, None]
    x[:, 0, 0] = x[:, 0, 1]  # a duplicate point, and particles on the box faces below
    c = VoxelCoefficients(movable=np.ones((S, Ps), bool), inv_mass=np.ones((S, Ps)),
                          factor=np.full((S, Ps), 0.5), strand_group=group,
                          resolution=np.array([groups[g] for g in group]))
    got = cell_ids(x, c)
    assert np.array_equal(got, _direct(x, group, groups))
    assert got.max() < sum(n**3 for n in groups.values())
