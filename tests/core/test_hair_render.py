"""Render strands from guides (core/hair): scalp roots, binding, interpolation, B-splines."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from waft.core.errors import SetupError
from waft.core.hair import (
    bind_strands,
    bspline_matrix,
    closest_on_mesh,
    evaluate_roots,
    interpolate_strands,
    render_strands,
    resample_bspline,
    scatter_roots,
    triangle_areas,
)
from waft.core.hair._bench import bench_render_frame, hemisphere


def rotation_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def hanging_guides(roots, normals, *, points: int = 8, length: float = 0.5, curl: float = 0.0):
    """Guides leaving the scalp along the normal and falling down, optionally curled."""
    s = np.linspace(0.0, 1.0, points)[None, :, None]
    down = np.array([0.0, 0.0, -1.0])
    curve = curl * np.stack([np.sin(6 * s[..., 0]), np.cos(6 * s[..., 0]) - 1,
                             np.zeros_like(s[..., 0])], axis=-1)
    return roots[:, None] + length * s * (0.3 * normals[:, None] + down) + curve


@pytest.fixture(scope="module")
def scalp():
    return hemisphere(radius=0.1, rings=8, segments=16)


# -- scalp roots ---------------------------------------------------------------------------------

def test_scatter_is_deterministic_per_seed_and_exact_in_count(scalp):
    vertices, triangles = scalp
    a = scatter_roots(vertices=vertices, triangles=triangles, count=1234, seed=7)
    b = scatter_roots(vertices=vertices, triangles=triangles, count=1234, seed=7)
    c = scatter_roots(vertices=vertices, triangles=triangles, count=1234, seed=8)
    assert a.count == 1234 and a.position.shape == (1234, 3)
    np.testing.assert_array_equal(a.position, b.position)
    np.testing.assert_array_equal(a.triangle, b.triangle)
    assert not np.allclose(a.position, c.position)
    np.testing.assert_allclose(a.barycentric.sum(axis=1), 1.0)
    assert np.all(a.barycentric >= 0.0)


def test_scattered_roots_lie_on_the_scalp(scalp):
    vertices, triangles = scalp
    roots = scatter_roots(vertices=vertices, triangles=triangles, count=500, seed=1)
    closest = closest_on_mesh(roots.position, vertices=vertices, triangles=triangles)
    assert np.max(np.linalg.norm(closest.position - roots.position, axis=1)) < 1e-12
    # Hemisphere normals point outward (away from the centre).
    assert np.all(np.einsum("ij,ij->i", roots.normal, roots.position) > 0.0)


def test_scatter_follows_area_times_density():
    # Two triangles, areas 1 and 3 (square units): 25 % / 75 % of the roots (stratified, so the
    # split is exact to one root).
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 2, 0], [5, 0, 0], [8, 0, 0], [5, 2, 0]], float)
    triangles = np.array([[0, 1, 2], [3, 4, 5]])
    np.testing.assert_allclose(triangle_areas(vertices, triangles), [1.0, 3.0])
    roots = scatter_roots(vertices=vertices, triangles=triangles, count=4000, seed=3)
    assert abs(np.mean(roots.triangle == 0) - 0.25) <= 1 / 4000 + 1e-12
    # Density zero on the big triangle's corners: every root on the small one.
    density = np.array([1, 1, 1, 0, 0, 0], float)
    roots = scatter_roots(vertices=vertices, triangles=triangles, count=300, density=density,
                          seed=3)
    assert np.all(roots.triangle == 0)


@pytest.mark.parametrize("kwargs, match", [
    ({"count": 0}, "count must be at least 1"),
    ({"density": np.zeros(6)}, "density is zero everywhere"),
    ({"triangles": np.zeros((0, 3), int)}, "no faces"),
])
def test_scatter_bad_input_names_the_scalp(kwargs, match):
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 2, 0], [5, 0, 0], [8, 0, 0], [5, 2, 0]], float)
    args = {"vertices": vertices, "triangles": np.array([[0, 1, 2], [3, 4, 5]]), "count": 10,
            "seed": 0, "name": "Scalp 'Head'"}
    args.update(kwargs)
    with pytest.raises(SetupError, match=match) as info:
        scatter_roots(**args)
    assert "Scalp 'Head'" in str(info.value)


def test_closest_on_mesh_projects_onto_faces_edges_and_corners():
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    triangles = np.array([[0, 1, 2]])
    points = np.array([[0.2, 0.2, 0.5], [2.0, -1.0, 0.0], [0.5, -0.3, 0.1], [-1.0, -1.0, 0.0]])
    got = closest_on_mesh(points, vertices=vertices, triangles=triangles).position
    np.testing.assert_allclose(got, [[0.2, 0.2, 0], [1, 0, 0], [0.5, 0, 0], [0, 0, 0]],
                               atol=1e-12)


# -- binding and interpolation -------------------------------------------------------------------

@pytest.mark.parametrize("method", ["BARYCENTRIC", "NEAREST"])
def test_strand_on_a_guide_root_reproduces_that_guide_exactly(scalp, method):
    vertices, triangles = scalp
    g = scatter_roots(vertices=vertices, triangles=triangles, count=40, seed=2)
    rest = hanging_guides(g.position, g.normal, curl=0.02)
    binding = bind_strands(roots=g.position[[3, 17, 31]], guide_rest=rest, method=method,
                           clump=0.6, seed=4)
    # Any pose of the guides, here a head turn with a different bend per guide.
    rng = np.random.default_rng(0)
    posed = rest @ rotation_z(1.2).T + 0.05 * rng.standard_normal(rest.shape)
    posed[:, 0] = rest[:, 0] @ rotation_z(1.2).T
    got = interpolate_strands(binding, posed)
    # Exact up to round-off: the strand is computed as (guide - its root) + root.
    np.testing.assert_allclose(got, posed[[3, 17, 31]], rtol=0, atol=1e-15)


def test_barycentric_blends_three_guides_with_linear_precision():
    # Three parallel straight guides on a plane; a root at the centroid gets 1/3 each and a
    # pose where each guide is displaced differently gives exactly the mean displacement.
    roots = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    rest = roots[:, None] + np.linspace(0, 1, 5)[None, :, None] * np.array([0, 0, -1.0])
    centre = roots.mean(axis=0)[None]
    binding = bind_strands(roots=centre, guide_rest=rest, method="BARYCENTRIC")
    np.testing.assert_allclose(np.sort(binding.weight[0]), [1 / 3] * 3)
    assert not binding.fallback[0]
    posed = rest.copy()
    posed[:, 1:] += np.array([[0.3, 0, 0], [0, 0.3, 0], [0.3, 0.3, 0]])[:, None]
    got = interpolate_strands(binding, posed)
    np.testing.assert_allclose(got[0], posed.mean(axis=0), atol=1e-12)


def test_nearest_offset_follows_the_guide_rigidly_seed_002():
    roots = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    rest = roots[:, None] + np.linspace(0, 1, 6)[None, :, None] * np.array([0, 0, -1.0])
    strand_root = np.array([[0.1, 0.05, 0.0]])
    binding = bind_strands(roots=strand_root, guide_rest=rest, method="NEAREST")
    # Translate everything: the strand is its guide shifted by the rest offset.
    posed = rest + np.array([0.2, -0.4, 0.3])
    got = interpolate_strands(binding, posed)
    np.testing.assert_allclose(got[0], posed[0] + (strand_root - roots[0]), atol=1e-12)
    # Rotate everything about z: the offset turns with the guide triangle.
    rot = rotation_z(0.7)
    got = interpolate_strands(binding, rest @ rot.T)
    np.testing.assert_allclose(got[0], (rest[0] + (strand_root - roots[0])) @ rot.T,
                               atol=1e-12)


@pytest.mark.parametrize("method", ["BARYCENTRIC", "NEAREST"])
def test_no_render_root_leaves_the_scalp_in_a_head_turn(scalp, method):
    # The scalp turns 720°/s about z and squashes (a skinned, non-rigid scalp); roots are
    # evaluated on the deformed scalp each frame, the guides wobble independently.
    vertices, triangles = scalp
    g = scatter_roots(vertices=vertices, triangles=triangles, count=60, seed=5)
    rest = hanging_guides(g.position, g.normal)
    roots = scatter_roots(vertices=vertices, triangles=triangles, count=2000, seed=6)
    binding = bind_strands(roots=roots, guide_rest=rest, method=method, clump=0.4,
                           randomness=0.1, seed=1)
    rng = np.random.default_rng(1)
    frames = 12
    for f in range(frames):
        rot = rotation_z(np.deg2rad(720.0) * f / 24.0)
        squash = np.diag([1.0 + 0.1 * np.sin(f), 1.0, 1.0 - 0.05 * f / frames])
        scalp_now = vertices @ (rot @ squash).T
        guides_now = rest @ rot.T + 0.02 * rng.standard_normal(rest.shape)
        guides_now[:, 0] = evaluate_roots(triangle=g.triangle, barycentric=g.barycentric,
                                          vertices=scalp_now, triangles=triangles)[0]
        root_now, _ = evaluate_roots(triangle=roots.triangle, barycentric=roots.barycentric,
                                     vertices=scalp_now, triangles=triangles)
        strands = render_strands(binding, guides_now, points=10, roots=root_now)
        on_scalp = closest_on_mesh(strands[:, 0], vertices=scalp_now, triangles=triangles)
        assert np.max(np.linalg.norm(on_scalp.position - strands[:, 0], axis=1)) < 1e-9


def test_rigid_head_turn_without_scalp_roots_is_rigid(scalp):
    # Without evaluated roots, a rigid motion of all guides moves every render strand rigidly
    # (offsets and jitter live in the guide-triangle frames), so roots stay on the moved scalp.
    vertices, triangles = scalp
    g = scatter_roots(vertices=vertices, triangles=triangles, count=50, seed=5)
    rest = hanging_guides(g.position, g.normal, curl=0.01)
    roots = scatter_roots(vertices=vertices, triangles=triangles, count=500, seed=9)
    binding = bind_strands(roots=roots, guide_rest=rest, clump=0.3, randomness=0.2, seed=3)
    rot = rotation_z(2.0) @ np.array([[1, 0, 0], [0, 0.8, -0.6], [0, 0.6, 0.8]])
    move = np.array([0.3, -0.1, 1.5])
    got = interpolate_strands(binding, rest @ rot.T + move)
    want = interpolate_strands(binding, rest) @ rot.T + move
    np.testing.assert_allclose(got, want, atol=1e-12)
    np.testing.assert_allclose(want[:, 0] - move, roots.position @ rot.T, atol=1e-12)


def test_clump_pulls_tips_onto_the_nearest_guide_and_keeps_roots():
    roots = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    rest = roots[:, None] + np.linspace(0, 1, 5)[None, :, None] * np.array([0, 0, -1.0])
    strand_roots = np.array([[0.2, 0.2, 0.0], [0.6, 0.1, 0.0]])
    full = bind_strands(roots=strand_roots, guide_rest=rest, clump=1.0)
    got = interpolate_strands(full, rest)
    np.testing.assert_allclose(got[:, 0], strand_roots, atol=1e-12)
    np.testing.assert_allclose(got[:, -1], rest[full.guide[:, 0], -1], atol=1e-12)
    half = interpolate_strands(bind_strands(roots=strand_roots, guide_rest=rest, clump=0.5),
                               rest)
    tip_gap = np.linalg.norm(half[:, -1] - rest[full.guide[:, 0], -1], axis=1)
    np.testing.assert_allclose(tip_gap, 0.5 * np.linalg.norm(
        strand_roots - roots[full.guide[:, 0]], axis=1), atol=1e-12)


def test_randomness_is_seeded_zero_at_the_root_and_bounded():
    roots = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    rest = roots[:, None] + np.linspace(0, 1, 9)[None, :, None] * np.array([0, 0, -2.0])
    strand_roots = np.random.default_rng(0).random((200, 3)) * [0.5, 0.5, 0.0]
    plain = interpolate_strands(bind_strands(roots=strand_roots, guide_rest=rest), rest)
    a = interpolate_strands(bind_strands(roots=strand_roots, guide_rest=rest, randomness=0.1,
                                         seed=4), rest)
    b = interpolate_strands(bind_strands(roots=strand_roots, guide_rest=rest, randomness=0.1,
                                         seed=4), rest)
    c = interpolate_strands(bind_strands(roots=strand_roots, guide_rest=rest, randomness=0.1,
                                         seed=5), rest)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    deviation = np.linalg.norm(a - plain, axis=-1)
    np.testing.assert_allclose(deviation[:, 0], 0.0, atol=1e-12)
    assert deviation.max() <= 0.1 * 2.0 + 1e-12  # randomness × strand length
    assert deviation[:, -1].mean() > 0.05  # the tips really spread


def test_render_strands_equals_resampling_the_interpolated_strands(scalp):
    # Both steps are linear in the guides: resample-then-interpolate == interpolate-then-resample
    # (no clump/jitter, whose profiles are sampled at the output points).
    vertices, triangles = scalp
    g = scatter_roots(vertices=vertices, triangles=triangles, count=30, seed=5)
    rest = hanging_guides(g.position, g.normal, curl=0.03, points=12)
    roots = scatter_roots(vertices=vertices, triangles=triangles, count=300, seed=2)
    binding = bind_strands(roots=roots, guide_rest=rest)
    posed = rest @ rotation_z(0.4).T
    np.testing.assert_allclose(render_strands(binding, posed, points=20),
                               resample_bspline(interpolate_strands(binding, posed), 20),
                               atol=1e-12)


def test_float32_output_matches_float64(scalp):
    vertices, triangles = scalp
    g = scatter_roots(vertices=vertices, triangles=triangles, count=30, seed=5)
    rest = hanging_guides(g.position, g.normal, curl=0.03)
    roots = scatter_roots(vertices=vertices, triangles=triangles, count=300, seed=2)
    binding = bind_strands(roots=roots, guide_rest=rest, clump=0.2, randomness=0.1)
    out = np.empty((300, 16, 3), np.float32)
    got = render_strands(binding, rest.astype(np.float32), points=16, out=out)
    assert got is out
    np.testing.assert_allclose(out, render_strands(binding, rest, points=16), atol=2e-6)


@pytest.mark.parametrize("guide_rest, match", [
    (np.zeros((2, 4, 3)), "guide 0 has zero length"),
    (np.zeros((2, 1, 3)), "at least 2 points"),
    (np.full((2, 4, 3), np.nan), "non-finite"),
])
def test_bind_bad_guides_raise_setup_errors(guide_rest, match):
    with pytest.raises(SetupError, match=match):
        bind_strands(roots=np.zeros((1, 3)), guide_rest=guide_rest, name="Hair 'X'")


def test_bind_rejects_bad_settings():
    rest = np.array([[[0, 0, 0], [0, 0, -1.0]]])
    with pytest.raises(SetupError, match="clump"):
        bind_strands(roots=np.zeros((1, 3)), guide_rest=rest, clump=1.5)
    with pytest.raises(SetupError, match="randomness"):
        bind_strands(roots=np.zeros((1, 3)), guide_rest=rest, randomness=-1)
    with pytest.raises(SetupError, match="method"):
        bind_strands(roots=np.zeros((1, 3)), guide_rest=rest, method="CUBIC")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(guides=st.integers(1, 12), points=st.integers(2, 10), strands=st.integers(1, 50),
       clump=st.floats(0.0, 1.0), randomness=st.floats(0.0, 2.0), seed=st.integers(0, 2**31),
       method=st.sampled_from(["BARYCENTRIC", "NEAREST"]), lod=st.integers(2, 24),
       coplanar=st.booleans())
def test_fuzz_random_guides_never_give_nan(guides, points, strands, clump, randomness, seed,
                                           method, lod, coplanar):
    rng = np.random.default_rng(seed)
    roots = rng.standard_normal((guides, 3))
    if coplanar:  # collinear / coincident-ish guide roots: degenerate triangles
        roots[:, 1:] = 0.0
    steps = rng.standard_normal((guides, points - 1, 3)) * 0.1 + [0, 0, -0.1]
    rest = np.concatenate([roots[:, None], roots[:, None] + np.cumsum(steps, axis=1)], axis=1)
    strand_roots = rng.standard_normal((strands, 3))
    binding = bind_strands(roots=strand_roots, guide_rest=rest, method=method, clump=clump,
                           randomness=randomness, seed=seed)
    posed = rest + 0.3 * rng.standard_normal(rest.shape)
    out = render_strands(binding, np.stack([rest, posed]), points=lod)
    assert out.shape == (2, strands, lod, 3)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out[0, :, 0], strand_roots, atol=1e-9)


# -- B-splines -----------------------------------------------------------------------------------

@pytest.mark.parametrize("points, count", [(2, 5), (3, 3), (8, 16), (32, 16), (16, 64)])
def test_bspline_of_a_straight_line_is_the_line(points, count):
    start, end = np.array([0.1, -0.2, 1.5]), np.array([0.4, 0.3, 0.2])
    line = start + np.linspace(0, 1, points)[:, None] * (end - start)
    got = resample_bspline(line[None], count)[0]
    assert got.shape == (count, 3)
    np.testing.assert_allclose(got, start + np.linspace(0, 1, count)[:, None] * (end - start),
                               atol=1e-12)


def test_bspline_is_clamped_smooth_and_in_the_convex_hull():
    rng = np.random.default_rng(0)
    control = rng.standard_normal((5, 7, 3))
    curve = resample_bspline(control, 50)
    np.testing.assert_allclose(curve[:, 0], control[:, 0], atol=1e-12)
    np.testing.assert_allclose(curve[:, -1], control[:, -1], atol=1e-12)
    M = bspline_matrix(7, 50)
    np.testing.assert_allclose(M.sum(axis=1), 1.0)
    # Interior spans are convex combinations (the clamping phantoms only touch the end spans).
    interior = M[(np.linspace(0, 6, 50) >= 1) & (np.linspace(0, 6, 50) <= 5)]
    assert np.all(interior >= -1e-12)
    # Smoother than the control polygon: the curve's turning is less than the polygon's.
    def turning(x):
        d = np.diff(x, axis=-2)
        d /= np.linalg.norm(d, axis=-1, keepdims=True)
        return np.arccos(np.clip(np.sum(d[..., 1:, :] * d[..., :-1, :], axis=-1), -1, 1)).sum()
    assert turning(curve) < turning(control)


def test_bspline_bad_counts():
    with pytest.raises(SetupError, match="at least 2"):
        resample_bspline(np.zeros((1, 4, 3)), 1)
    with pytest.raises(SetupError, match="at least 2 points"):
        resample_bspline(np.zeros((1, 1, 3)), 4)


def test_bench_kernel_runs_small():
    result = bench_render_frame(strands=2000, points=8, guides=50, guide_points=8, frames=2)
    assert result["strands"] == 2000 and result["ms_per_frame"] > 0.0


def test_per_strand_clump_matches_uniform_clump_path():
    # The uniform-clump fast path and the per-strand path agree.
    roots = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    rest = roots[:, None] + np.linspace(0, 1, 5)[None, :, None] * np.array([0, 0.3, -1.0])
    strand_roots = np.random.default_rng(2).random((50, 3)) * [0.5, 0.5, 0.0]
    binding = bind_strands(roots=strand_roots, guide_rest=rest, clump=0.4)
    posed = rest + 0.1 * np.random.default_rng(3).standard_normal(rest.shape)
    uniform = interpolate_strands(binding, posed)
    clump = binding.clump.copy()
    clump[0] = 0.0
    mixed = interpolate_strands(replace(binding, clump=clump), posed)
    np.testing.assert_allclose(mixed[1:], uniform[1:], atol=1e-12)
    np.testing.assert_allclose(mixed[0], interpolate_strands(
        bind_strands(roots=strand_roots[:1], guide_rest=rest, clump=0.0), posed)[0], atol=1e-12)


def test_root_outside_the_guides_blends_along_the_nearest_edge():
    # Below the edge between guides 0 and 1: half of each (not a snap to one guide), and the
    # root stays where it is.
    roots = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    rest = roots[:, None] + np.linspace(0, 1, 5)[None, :, None] * np.array([0, 0, -1.0])
    strand_root = np.array([[0.5, -0.2, 0.0]])
    binding = bind_strands(roots=strand_root, guide_rest=rest, method="BARYCENTRIC")
    assert binding.fallback[0]  # outside every triangle...
    weights = dict(zip(binding.guide[0].tolist(), binding.weight[0].tolist(), strict=True))
    np.testing.assert_allclose([weights.get(0, 0.0), weights.get(1, 0.0)], [0.5, 0.5])
    posed = rest.copy()
    posed[0, 1:] += [0.2, 0, 0]
    posed[1, 1:] += [0, 0.2, 0]
    got = interpolate_strands(binding, posed)
    np.testing.assert_allclose(got[0, 0], strand_root[0], atol=1e-12)
    np.testing.assert_allclose(got[0, -1] - got[0, 0], [0.1, 0.1, -1.0], atol=1e-12)
