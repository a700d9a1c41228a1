"""Inside a closed mesh beyond its reach (`core/mesh_inside.py`): ray parity says inside exactly
where the analytic solid is, also for rays through edges and vertices and for nested parts;
open parts have no inside; render strands cutting chords deep through a closed head end
outside it by their radius, and strands behind an open cap stay."""

from __future__ import annotations

import numpy as np

from waft.core._bench_meshes import uv_sphere
from waft.core.hair import collide_strands_meshes
from waft.core.mesh_colliders import MeshColliders, MeshField, _topology
from waft.core.mesh_inside import closed_shells, in_hull, ray_parity, ray_within

QUADS = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]


def _box(low, high, offset: int = 0):
    corners = np.array([[x, y, z] for x in (low[0], high[0]) for y in (low[1], high[1])
                        for z in (low[2], high[2])], dtype=np.float64)
    tris = np.array([t for a, b, c, d in QUADS for t in ((a, b, c), (a, c, d))]) + offset
    return corners, tris


def _shells(vertices, triangles):
    triangles = np.ascontiguousarray(triangles, dtype=np.int64)
    return closed_shells(triangles, _topology(triangles, len(vertices)))


def test_rays_through_edges_and_vertices_count_once():
    """A unit cube with its corners on the lattice the points are on: most rays go straight
    through an edge or a vertex of two or more triangles (simulation of simplicity decides)."""
    vertices, triangles = _box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    shells = _shells(vertices, triangles)
    g = np.linspace(-0.5, 1.5, 9)  # steps of 0.25: through faces, edges and corners
    points = np.array([[x, y, z] for x in g for y in g for z in g])
    strictly_in = np.all((points > 0.0) & (points < 1.0), axis=1)
    strictly_out = np.any((points < 0.0) | (points > 1.0), axis=1)
    inside, bound = ray_parity(vertices, shells, points)
    np.testing.assert_array_equal(inside[strictly_in], True)
    np.testing.assert_array_equal(inside[strictly_out], False)
    # The nearest crossing of a point inside is a face above or below it.
    np.testing.assert_allclose(bound[strictly_in],
                               np.minimum(points[strictly_in, 2], 1 - points[strictly_in, 2]))


def test_a_sphere_and_a_nested_part_and_an_open_part():
    """A UV sphere with a smaller closed sphere inside it (an eyeball in a head) and an open
    cap beside it: inside either sphere is inside (the total crossing count's parity would say
    outside in the inner one); the open cap has no inside; the 26-DOP keeps every inside point."""
    outer, t_outer = uv_sphere(0.1, 16, 32)
    inner, t_inner = uv_sphere(0.03, 8, 16)
    cap, t_cap = uv_sphere(0.05, 8, 16)
    t_cap = t_cap[np.all(cap[t_cap][..., 2] >= -1e-9, axis=1)]
    cap = cap + (0.3, 0.0, 0.0)
    vertices = np.concatenate([outer, inner, cap])
    triangles = np.concatenate([t_outer, t_inner + len(outer), t_cap + len(outer) + len(inner)])
    shells = _shells(vertices, triangles)
    assert shells.parts == 2 and len(shells.triangles) == len(t_outer) + len(t_inner)
    rng = np.random.default_rng(1)
    points = rng.uniform(-0.12, 0.12, (20000, 3))
    points[::4, 0] += 0.3  # under the cap
    points[1::97, :2] = 0.0  # through the poles' vertices
    r = np.linalg.norm(points, axis=1)
    # Away from the faceted surfaces (their chords lie up to 2 mm inside the spheres).
    clear = (np.abs(r - 0.1) > 0.003) & (np.abs(r - 0.03) > 0.003)
    inside, _ = ray_parity(vertices, shells, points)
    np.testing.assert_array_equal(inside[clear], (r < 0.1)[clear])
    assert np.all(in_hull(vertices, shells, points)[inside])
    assert (r < 0.03).sum() > 50 and (points[:, 0] > 0.2).sum() > 4000


def test_chords_deep_through_a_closed_head_end_outside_and_open_caps_keep_theirs():
    """Strands cut straight through a 0.1 m head from the scalp down (10 cm deep; a Depth of 2
    cm): on the closed head every point ends outside by its radius (before: thousands of points
    stayed up to 9 cm inside); on the head's open upper half, the points beyond the reach stay
    where they were, as before."""
    vertices, triangles = uv_sphere(0.1, 24, 48)
    centre = np.array([0.0, 0.0, 1.6])
    rng = np.random.default_rng(2)
    n, P = 2000, 12
    u = rng.normal(size=(n, 3))
    u[:, 2] = np.abs(u[:, 2]) + 0.3
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    roots = centre + 0.1 * u
    tips = roots + np.column_stack([rng.uniform(-0.1, 0.1, (n, 2)), np.full(n, -0.25)])
    s = np.linspace(0.0, 1.0, P)[None, :, None]
    strands = (roots[:, None] + s * (tips - roots)[:, None]).astype(np.float32)
    radius = np.linspace(0.002, 0.001, P)
    head = MeshColliders.create(names=["Head"], triangles=[triangles],
                                vertices=[(vertices + centre)[None]], depth=[0.02])
    probe = MeshField(MeshColliders.create(names=["Head"], triangles=[triangles],
                                           vertices=[(vertices + centre)[None]], depth=[1.0]),
                      fps=1.0, radius=0.0)

    def clearance(points):
        x = points[:, 1:].reshape(-1, 3).astype(np.float64)
        c = probe.contacts(0, x, 0.0, 0.0)
        assert len(c.index) == len(x)
        return c.distance[np.argsort(c.index)] - np.tile(radius[1:], len(points))

    out = strands.copy()
    moved = collide_strands_meshes(out, radius, head)
    before = clearance(strands)
    assert (before < -0.022).sum() > 2000  # beyond the reach
    assert clearance(out).min() > -1e-6
    np.testing.assert_array_equal(moved, np.flatnonzero(np.any(out != strands, axis=-1)))

    upper = triangles[np.all(vertices[triangles][..., 2] >= -1e-9, axis=1)]
    cap = MeshColliders.create(names=["Cap"], triangles=[upper],
                               vertices=[(vertices + centre)[None]], depth=[0.02])
    out = strands.copy()
    collide_strands_meshes(out, radius, cap)
    x = strands[:, 1:].reshape(-1, 3).astype(np.float64)
    near = MeshField(cap, fps=1.0, radius=float(radius[1:].max())).contacts(0, x, 0.0, 0.0)
    far = np.ones(len(x), dtype=bool)
    far[near.index] = False
    assert far.sum() > 5000
    np.testing.assert_array_equal(out[:, 1:].reshape(-1, 3)[far], x[far].astype(np.float32))


def _brute_nearest(nearest_triangle, vertices, shells, points):
    """The distance from each point to its nearest triangle of `shells` by brute force
    (conftest.nearest_triangle_distance): what the tree's search must find (over every pair it
    took ~26 CPU-s for 9,000 points on the 2,208 triangles of a head)."""
    corners = vertices[shells.triangles]
    return nearest_triangle(points, corners[:, 0], corners[:, 1], corners[:, 2])


def test_nearest_surface_of_deep_points_is_the_nearest_of_every_triangle(nearest_triangle):
    """Points 1 mm to 9 cm deep in a non-convex closed head (lobed: its radius swells and
    narrows three times around) go to the surface the exhaustive search over every triangle
    finds, to 1e-12 m: the bounding-volume tree (spheres and normal slabs) prunes no triangle
    that can be nearest, also where a slab faces away from the point (the lobes' flanks)."""
    from waft.core.mesh_inside import nearest_contacts

    vertices, triangles = uv_sphere(0.1, 24, 48)
    azimuth = np.arctan2(vertices[:, 1], vertices[:, 0])
    sine = np.sqrt(np.maximum(1.0 - (vertices[:, 2] / 0.1) ** 2, 0.0))
    vertices = vertices * (1.0 + 0.35 * np.sin(3.0 * azimuth) * sine)[:, None]
    shells = _shells(vertices, triangles)
    assert shells.parts == 1
    rng = np.random.default_rng(7)
    u = rng.normal(size=(4000, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    points = u * rng.uniform(0.0, 0.13, len(u))[:, None]
    inside, _ = ray_parity(vertices, shells, points)
    points = points[inside]
    assert len(points) > 1500
    index, normal, distance = nearest_contacts(vertices, shells, points,
                                               ray_within(vertices, shells, points))
    np.testing.assert_array_equal(np.sort(index), np.arange(len(points)))
    expected = _brute_nearest(nearest_triangle, vertices, shells, points[index])
    np.testing.assert_allclose(-distance, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(normal, axis=1), 1.0, atol=1e-12)


def test_points_in_nested_and_overlapping_parts_leave_the_whole_body(nearest_triangle):
    """A head with an eyeball inside it and a nose box that overlaps it: every point inside
    any of them goes out of all of them (moved by its contact plus 1 mm, ray parity finds it
    in none; before, 1,865 of 12,176 stayed inside: a point in the head beside the eyeball went
    to the eyeball's surface from outside, or a point in both to the eyeball's surface inside
    the head). Away from the nose the contact is the head's nearest surface, to 1e-12 m."""
    from waft.core.mesh_inside import nearest_contacts

    head, t_head = uv_sphere(0.1, 24, 48)
    nose, t_nose = _box((0.08, -0.015, -0.02), (0.14, 0.015, 0.02))
    eye, t_eye = uv_sphere(0.02, 8, 16)
    eye = eye + (0.06, 0.04, 0.03)
    vertices = np.concatenate([head, nose, eye])
    triangles = np.concatenate([t_head, t_nose + len(head), t_eye + len(head) + len(nose)])
    shells = _shells(vertices, triangles)
    assert shells.parts == 3
    points = np.random.default_rng(7).uniform(-0.1, 0.14, (40000, 3))
    points = points[ray_parity(vertices, shells, points)[0]]
    in_eye = np.linalg.norm(points - (0.06, 0.04, 0.03), axis=1) < 0.019
    assert len(points) > 10000 and in_eye.sum() > 50
    index, normal, distance = nearest_contacts(vertices, shells, points,
                                               ray_within(vertices, shells, points))
    np.testing.assert_array_equal(np.sort(index), np.arange(len(points)))
    out = points[index] + normal * (0.001 - distance)[:, None]
    assert not ray_parity(vertices, shells, out)[0].any()
    # Where the head's nearest surface point (straight out from the centre) is away from the
    # nose, and the point not in the nose: the head's nearest, for the points in the eyeball too.
    p = points[index]
    s = 0.1 * p / np.linalg.norm(p, axis=1, keepdims=True)
    low, high = np.array([0.075, -0.02, -0.025]), np.array([0.145, 0.02, 0.025])
    far = ~np.all((s > low) & (s < high), axis=1) & ~np.all((p > low) & (p < high), axis=1)
    assert in_eye[index][far].sum() > 50 and far.sum() > 9000
    head_only = _shells(head, t_head)
    expected = _brute_nearest(nearest_triangle, head, head_only, p[far])
    np.testing.assert_allclose(-distance[far], expected, rtol=0, atol=1e-12)
