"""Each cloth bone's grid neighbours on the cage (``addon.cloth.topology.grid_neighbours``, NumPy
only): left and right run the same way along every row.

The row neighbours used to be the quads' winding successors; quads above and below a vertex run
along its row in opposite directions, so below the top row both neighbours came out "after" the
vertex: left was -1 and right the lower-index neighbour, a one-sided row difference pointing
the other way from the top row's (a 133° one-frame roll pop on a folded cage).
"""

from __future__ import annotations

import numpy as np
import pytest

from waft.addon.cloth import topology
from waft.core.cloth._bench_cases import grid_positions, grid_quads


def neighbours(quads, positions, pinned):
    edges = topology.check_cage("Cage", len(positions), quads)
    level = topology.levels(len(positions), edges, np.asarray(pinned))
    grid = topology.grid_neighbours(quads, edges, level, np.arange(len(positions)), positions)
    return grid, edges, level


def check_links(grid, edges, level):
    """Every neighbour is joined to its vertex by an edge, on the level it should be on; left
    and right are different vertices."""
    linked = {tuple(e) for e in edges.tolist()}
    for v in range(len(level)):
        for name, step in (("below", 1), ("above", -1), ("left", 0), ("right", 0)):
            n = int(getattr(grid, name)[v])
            if n >= 0:
                assert (min(v, n), max(v, n)) in linked, (v, name, n)
                assert level[n] == level[v] + step, (v, name, n)
        assert grid.left[v] < 0 or grid.left[v] != grid.right[v], v


def frame_sides(grid, positions, normal):
    """Per vertex with a column and a row neighbour: the sign of (column x row) . normal, the
    frame's z against the cage's face normal (+1 or -1; 0 where undefined)."""
    v = np.arange(len(positions))
    p = positions
    down = np.where((grid.below >= 0)[:, None], p[grid.below] - p, p - p[grid.above])
    row = p[np.where(grid.right >= 0, grid.right, v)] - p[np.where(grid.left >= 0, grid.left, v)]
    has = ((grid.below >= 0) | (grid.above >= 0)) & ((grid.left >= 0) | (grid.right >= 0))
    z = np.einsum("vi,vi->v", np.cross(down, row), np.broadcast_to(normal, p.shape))
    return np.where(has, np.sign(z), 0)


@pytest.mark.parametrize("rows, cols", [(4, 4), (3, 6)])
def test_every_row_runs_left_to_right_the_same_way(rows, cols):
    positions = grid_positions(rows, cols)
    quads = grid_quads(rows, cols)
    grid, edges, level = neighbours(quads, positions, np.arange(cols))
    check_links(grid, edges, level)
    left, right = grid.left.reshape(rows, cols), grid.right.reshape(rows, cols)
    # Both row neighbours inside the grid, the one that exists on the borders.
    assert np.all(left[:, 1:] >= 0) and np.all(right[:, :-1] >= 0)
    assert np.all(left[:, 0] == -1) and np.all(right[:, -1] == -1)
    # right - left points the same way on every row as on the top row (+x here).
    v = np.arange(rows * cols)
    x = positions[:, 0]
    step = (x[np.where(grid.right >= 0, grid.right, v)]
            - x[np.where(grid.left >= 0, grid.left, v)]).reshape(rows, cols)
    assert np.all(step[0] > 0)
    assert np.all(np.sign(step) == np.sign(step[0])), step
    # The column is untouched: straight down, straight up.
    index = v.reshape(rows, cols)
    np.testing.assert_array_equal(grid.below.reshape(rows, cols)[:-1], index[1:])
    np.testing.assert_array_equal(grid.above.reshape(rows, cols)[1:], index[:-1])


def test_a_skirt_runs_round_the_same_way_on_every_ring():
    """A closed cylinder (a skirt): every vertex has both neighbours, each ring is one cycle of
    right links, and the bone frames all face the same side of the cage."""
    rows, around = 4, 6
    angle = 2 * np.pi * np.arange(around) / around
    r, c = np.meshgrid(np.arange(rows), np.arange(around), indexing="ij")
    positions = np.stack([np.cos(angle)[c], np.sin(angle)[c], -r * 0.5], axis=-1).reshape(-1, 3)
    index = r * around + c
    quads = np.stack([index[:-1], np.roll(index, -1, axis=1)[:-1],
                      np.roll(index, -1, axis=1)[1:], index[1:]], axis=-1).reshape(-1, 4)
    grid, edges, level = neighbours(quads, positions, np.arange(around))
    check_links(grid, edges, level)
    assert np.all(grid.left >= 0) and np.all(grid.right >= 0)
    np.testing.assert_array_equal(grid.left[grid.right], np.arange(rows * around))
    np.testing.assert_array_equal(grid.right.reshape(rows, around) % around,
                                  np.broadcast_to((np.arange(around) + 1) % around,
                                                  (rows, around)))
    outward = positions * [1.0, 1.0, 0.0]
    sides = frame_sides(grid, positions, outward)
    assert np.all(sides == sides[0]) and sides[0] != 0


def test_a_pinned_middle_row_orients_each_half_by_its_own_column():
    """Cloth hanging on both sides of a pinned row: above the pin "below" points up. The frames
    stay on one side of the cage everywhere (the row turns with the column), the pinned row's
    included (its row follows the half its column goes into)."""
    rows, cols = 5, 4
    positions = grid_positions(rows, cols)
    grid, edges, level = neighbours(grid_quads(rows, cols), positions, np.arange(8, 12))
    check_links(grid, edges, level)
    sides = frame_sides(grid, positions, np.array([0.0, 1.0, 0.0]))
    assert np.all(sides == sides[0]) and sides[0] != 0
    inner = np.arange(rows * cols).reshape(rows, cols)[:, 1:-1]
    assert np.all(grid.left[inner] >= 0) and np.all(grid.right[inner] >= 0)


def split_into_quads(points, polygons):
    """One Catmull-Clark split (positions not smoothed): each k-gon becomes k quads."""
    points = [np.asarray(p, dtype=float) for p in points]
    mids: dict[tuple[int, int], int] = {}

    def mid(a, b):
        key = (min(a, b), max(a, b))
        if key not in mids:
            mids[key] = len(points)
            points.append((points[a] + points[b]) / 2)
        return mids[key]

    quads = []
    for poly in polygons:
        centre = len(points)
        points.append(np.mean([points[i] for i in poly], axis=0))
        k = len(poly)
        for j in range(k):
            quads.append([poly[j], mid(poly[j], poly[(j + 1) % k]), centre,
                          mid(poly[j - 1], poly[j])])
    return np.array(points), np.array(quads)


def test_an_irregular_cage_gives_one_neighbour_per_side():
    """Valence 3 and 5 vertices (a fan of triangles split into quads), then the same cage with
    one quad wound the other way: no crash, deterministic, neighbours are real links on the
    right levels, left differs from right."""
    hub = [0.0, 0.0, 0.0]
    rim = [[np.cos(a), 0.0, np.sin(a)] for a in np.linspace(0.3, 2.8, 5)]
    points, quads = split_into_quads([hub, *rim], [[0, i, i + 1] for i in range(1, 5)])
    top = np.nonzero(points[:, 2] > 0.8)[0]
    flipped = quads.copy()
    flipped[3] = flipped[3, ::-1]
    for cage in (quads, flipped):
        grid, edges, level = neighbours(cage, points, top)
        check_links(grid, edges, level)
        assert np.any(grid.left >= 0) and np.any(grid.right >= 0)
        again = topology.grid_neighbours(cage, edges, level, np.arange(len(points)), points)
        for name in ("below", "above", "left", "right"):
            np.testing.assert_array_equal(getattr(grid, name), getattr(again, name))
