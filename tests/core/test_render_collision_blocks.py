"""tools/render_collision_blocks.py's measured broad phase (strands in blocks, a box per block
and point index, conservative skip) finds the very candidates `collide._candidates` finds,
also where a cell's box just touches a sphere: its figures in docs/hair-render.md compare the
same work."""

from __future__ import annotations

import numpy as np
import pytest
import render_collision_blocks as blocks  # tools/

from waft.core.hair.collide import _candidates


def test_a_cell_whose_box_just_touches_a_sphere_is_not_skipped(monkeypatch):
    """64 points that float32 rounds onto the sphere's limit, their cells' boxes a rounding
    beyond it in float64: the margin keeps them all; with none, all are missed."""
    assert blocks.touching(16)
    monkeypatch.setattr(blocks, "SKIP_MARGIN", 0.0)
    assert not blocks.touching(16)


@pytest.mark.parametrize("block", [2, 16, 64])
def test_the_block_broad_phase_finds_the_candidates_of_testing_every_point(block):
    rng = np.random.default_rng(block)
    N, P = 1_000, 9  # not a whole number of blocks: the padding is dropped
    strands = (rng.normal(size=(N, 1, 3)) * 0.2
               + np.cumsum(rng.normal(size=(N, P, 3)) * 0.03, axis=1)).astype(np.float32)
    radius = np.linspace(0.004, 0.001, P)
    spheres = [(rng.normal(size=3).astype(np.float32) * 0.2,
                np.float32(rng.uniform(0.05, 0.2)) ** 2) for _ in range(4)]
    order = blocks.morton_order(strands[:, 0].astype(np.float64), block=block)
    ordered = np.empty((len(order), P * 3), dtype=np.float32)
    lo, hi = blocks.cell_boxes(strands, order, block, ordered)
    hit = blocks.cells_hit(lo, hi, spheres, 1, P)
    index = blocks.cell_points(hit, block, P, N)
    found, x, tests = blocks.tested(ordered.reshape(-1, 3).view(blocks.ROW).ravel(), index,
                                    spheres)
    user = order[index[found] // P] * P + index[found] % P
    old = _candidates(strands.reshape(-1, 3), spheres, radius, 1)
    assert len(old[0]) > 100  # the spheres hold points
    assert hit.mean() < 1.0  # and some cells are skipped
    assert blocks.same(old, user, x, tests)
