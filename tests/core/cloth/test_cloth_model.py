"""Cloth model topology, validation errors and bone frames."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from waft.core import SetupError
from waft.core.cloth import (
    ClothRest,
    bake_cloth,
    bone_world,
    build_cloth_model,
    grid_frames,
    rest_offsets,
)
from waft.core.cloth._bench_cases import grid_quads, grid_rest
from waft.core.cloth.colouring import colour_groups, colour_pairs

from .conftest import still_drive


def test_grid_topology():
    rows, cols = 5, 4
    model = build_cloth_model(cloths=[grid_rest(rows, cols), grid_rest(3, 3, setup="B")])
    assert model.n_vertices == rows * cols + 9
    assert model.setup_names == ("Grid", "B")
    np.testing.assert_array_equal(model.vertex_offset, [0, 20, 29])
    level = model.level[:20].reshape(rows, cols)
    np.testing.assert_array_equal(level, np.repeat(np.arange(rows)[:, None], cols, axis=1))
    edge = model.edge_vertex[:20].reshape(rows, cols)
    assert edge[0].all() and edge[-1].all() and edge[:, 0].all() and edge[:, -1].all()
    assert not edge[1:-1, 1:-1].any()
    # Every vertex below the top hangs from the one straight above it.
    v = np.arange(cols, 20)
    np.testing.assert_array_equal(model.parent[v], v - cols)
    # Vertical links join levels, horizontal ones stay in one.
    s = model.stretch
    assert np.all(np.abs(model.level[s.a] - model.level[s.b])[model.vertical] == 1)
    assert np.all(model.level[s.a][~model.vertical] == model.level[s.b][~model.vertical])
    # Every colour touches each vertex at most once; colours cover every constraint once.
    for group in (model.stretch, model.shear, model.bend):
        seen = np.concatenate(group.colours)
        assert np.array_equal(np.sort(seen), np.arange(group.count))
        for colour in group.colours:
            ends = np.concatenate([group.a[colour], group.b[colour]])
            assert np.unique(ends).size == ends.size
    assert len(model.stretch.colours) <= 5


def bad_rest(**change):
    rest = grid_rest(3, 3)
    fields = dict(setup="Skirt", rest_positions=rest.rest_positions, quads=rest.quads,
                  pinned=rest.pinned, max_distance=rest.max_distance, layer=None)
    fields.update(change)
    return ClothRest(**fields)


@pytest.mark.parametrize("change, message", [
    (dict(pinned=np.zeros(9, bool)), "no vertex is pinned"),
    (dict(pinned=np.ones(9, bool)), "every vertex is pinned"),
    (dict(quads=np.array([[0, 1, 4, 3]])), "vertex 2 has no stretch neighbour"),
    (dict(quads=np.array([[0, 1, 2]])), "triangle-only"),
    (dict(quads=np.array([[0, 1, 4, 9]])), "outside"),
    (dict(max_distance=np.full(9, -1.0)), "max distance"),
])
def test_bad_input_names_the_setup(change, message):
    with pytest.raises(SetupError, match="Skirt") as info:
        build_cloth_model(cloths=[bad_rest(**change)])
    assert message in str(info.value)


def test_zero_length_edge_and_unconnected_vertex():
    rest = grid_rest(3, 3)
    x = rest.rest_positions.copy()
    x[4] = x[3]
    with pytest.raises(SetupError, match="zero length"):
        build_cloth_model(cloths=[bad_rest(rest_positions=x)])
    # Two separate pieces, only one pinned: the other would fall away.
    x = np.concatenate([rest.rest_positions, rest.rest_positions + (2.0, 0, 0)])
    quads = np.concatenate([grid_quads(3, 3), grid_quads(3, 3) + 9])
    pinned = np.zeros(18, bool)
    pinned[:3] = True
    with pytest.raises(SetupError, match="not connected to any pinned vertex"):
        build_cloth_model(cloths=[ClothRest("Skirt", x, quads, pinned, np.full(18, np.inf))])


def test_non_manifold_edge_is_rejected():
    x = np.array([[0, 0, 0], [1, 0, 0], [1, 0, -1], [0, 0, -1], [1, 1, -1], [0, 1, -1],
                  [1, -1, -1], [0, -1, -1]], dtype=float)
    quads = np.array([[0, 1, 2, 3], [3, 2, 4, 5], [3, 2, 6, 7]])
    pinned = np.zeros(8, bool)
    pinned[:2] = True
    with pytest.raises(SetupError, match="manifold"):
        build_cloth_model(cloths=[ClothRest("Skirt", x, quads, pinned, np.full(8, np.inf))])


def test_bad_setting_names_the_setup_and_field():
    model = build_cloth_model(cloths=[grid_rest(3, 3, setup="Cape")])
    with pytest.raises(SetupError, match="Cape.*damping"):
        bake_cloth(model, still_drive(model, 3, damping=-1.0))
    with pytest.raises(SetupError, match="unknown cloth setting"):
        still_drive(model, 3, dampening=1.0)


def grid_bone_indices(rows, cols):
    """Seed 001 mapping: every row but the last, every other column."""
    r, c = np.meshgrid(np.arange(rows - 1), np.arange(0, cols, 2), indexing="ij")
    vertex = (r * cols + c).reshape(-1)
    below = vertex + cols
    col = c.reshape(-1)
    left = np.where(col > 0, vertex - 1, -1)
    right = np.where(col < cols - 1, vertex + 1, -1)
    return vertex, below, left, right


def test_bone_frames_orthonormal_every_frame():
    from .test_cloth_physics import swinging_grid

    model, drive = swinging_grid(rows=6, cols=5)
    x = bake_cloth(model, drive).positions
    vertex, below, left, right = grid_bone_indices(6, 5)
    frames = grid_frames(x, vertex=vertex, below=below, left=left, right=right)
    R = frames[..., :3, :3]
    eye = np.broadcast_to(np.eye(3), R.shape)
    np.testing.assert_allclose(np.swapaxes(R, -1, -2) @ R, eye, atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-12)
    np.testing.assert_array_equal(frames[..., :3, 3], x[:, vertex])
    # x axis points to the vertex below.
    down = x[:, below] - x[:, vertex]
    cos = np.sum(R[..., :, 0] * down, axis=-1) / np.linalg.norm(down, axis=-1)
    np.testing.assert_allclose(cos, 1.0, atol=1e-12)


def test_rest_offsets_reproduce_the_bone_rest_pose():
    rest = grid_rest(3, 3)
    vertex, below, left, right = grid_bone_indices(3, 3)
    grid = grid_frames(rest.rest_positions, vertex=vertex, below=below, left=left, right=right)
    rng = np.random.default_rng(1)
    bone = np.repeat(np.eye(4)[None], vertex.size, axis=0)
    q, _ = np.linalg.qr(rng.normal(size=(vertex.size, 3, 3)))
    bone[:, :3, :3] = q * np.sign(np.linalg.det(q))[:, None, None]
    bone[:, :3, 3] = rest.rest_positions[vertex] + 0.01
    offsets = rest_offsets(grid_rest=grid, bone_rest_world=bone)
    np.testing.assert_allclose(bone_world(grid, offsets), bone, atol=1e-12)


def test_last_row_frame_points_away_from_the_vertex_above():
    rest = grid_rest(3, 3)
    x = rest.rest_positions
    f = grid_frames(x, vertex=np.array([7]), below=np.array([-1]), left=np.array([6]),
                    right=np.array([8]), above=np.array([4]))
    np.testing.assert_allclose(f[0, :3, 0], [0, 0, -1], atol=1e-12)
    with pytest.raises(SetupError, match="above"):
        grid_frames(x, vertex=np.array([7]), below=np.array([-1]), left=np.array([6]),
                    right=np.array([8]))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 40).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                         min_size=1, max_size=120))))
def test_colouring_of_any_graph_is_a_partition_into_disjoint_sets(case):
    n, pairs = case
    pairs = np.array([(a, b) for a, b in pairs if a != b] or [(0, 1)])
    colour = colour_pairs(pairs[:, 0], pairs[:, 1], n)
    groups = colour_groups(colour)
    assert np.array_equal(np.sort(np.concatenate(groups)), np.arange(len(pairs)))
    for g in groups:
        ends = pairs[g].reshape(-1)
        assert np.unique(ends).size == ends.size
    # Never more colours than a greedy colouring can need: 2 * max degree - 1.
    degree = np.bincount(pairs.reshape(-1), minlength=n).max()
    assert len(groups) <= 2 * degree - 1
