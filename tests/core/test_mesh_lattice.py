"""Render strands on a closed body mesh read the signed distance from a lattice where the field is
smooth (`core/mesh_lattice.py`) and ask the exact query elsewhere: the result is the exact push's
to within the lattice's tolerance, every point ends outside by its radius to that tolerance, thin
parts and deep points are still found, and open meshes and sparse points keep the exact query."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core import mesh_lattice
from waft.core._bench_meshes import draped_strands, uv_sphere
from waft.core.hair import collide, collide_strands_meshes
from waft.core.mesh_colliders import MeshColliders, MeshField

# What the lattice may differ from the exact push by (the module doc's measured 0.15 mm, with
# room for other facets).
TOLERANCE = 2.5e-4
CENTRE = np.array([0.0, 0.0, 1.6])


def _draped(n: int, points: int, seed: int) -> np.ndarray:
    """Strands draped over the 0.1 m head, from 4 mm inside to 15 mm off its surface, a
    twentieth cutting up to 2 cm into it."""
    return draped_strands(n, points, seed=seed, cut=n // 20, centre=CENTRE)


def _exact(strands: np.ndarray, radius: np.ndarray, meshes: MeshColliders, *,
           staged: bool = False) -> np.ndarray:
    """The strands pushed by one exact query of the full reach (radius + Depth) per point, or
    by the exact staged query (`staged`: what a point the lattice leaves takes)."""
    out = strands.copy()
    x = out[:, 1:].reshape(-1, 3).astype(np.float64)
    field = MeshField(meshes, fps=1.0, radius=float(radius[1:].max()))
    c = (field.staged_contacts if staged else field.contacts)(0, x, 0.0, 0.0)
    r = np.tile(radius[1:], len(strands))[c.index]
    push = r - c.distance > 0.0
    x[c.index[push]] += c.normal[push] * (r - c.distance)[push, None]
    out[:, 1:] = x.reshape(len(strands), -1, 3)
    return out


def _head(rings: int = 40, segments: int = 64, depth: float = 0.03) -> MeshColliders:
    vertices, triangles = uv_sphere(0.1, rings, segments)
    return MeshColliders.create(names=["Head"], triangles=[triangles],
                                vertices=[(vertices + CENTRE)[None].astype(np.float32)],
                                depth=[depth])


@pytest.fixture
def lattice_calls(monkeypatch):
    """How the lattice answered: the smooth points and the unresolved ones, per call."""
    calls = []

    def spy(field, m, points, reach, cache=None):
        out = mesh_lattice.lattice_contacts(field, m, points, reach, cache)
        calls.append(None if out is None else (len(out.index), len(out.unresolved),
                                               len(points)))
        return out

    monkeypatch.setattr(collide, "lattice_contacts", spy)
    return calls


def test_lattice_pushes_as_the_exact_query_does_within_its_tolerance(lattice_calls):
    meshes = _head()
    strands = _draped(12000, 12, seed=1)
    radius = np.linspace(0.003, 0.001, 12)
    exact = _exact(strands, radius, meshes)
    out = strands.copy()
    moved = collide_strands_meshes(out, radius, meshes)

    (smooth, unresolved, asked), = lattice_calls
    assert smooth > 0.6 * asked  # the lattice answered most points
    assert unresolved > 0  # and left some to the exact query
    assert np.all(out[:, 0] == strands[:, 0])  # roots stay
    changed = np.flatnonzero(np.any(out != strands, axis=-1).ravel())
    np.testing.assert_array_equal(moved, changed)
    _assert_as_exact(strands, out, exact, radius, meshes)
    assert _deeper_than(strands, meshes, 0.005).sum() > 1000


def _assert_as_exact(strands, out, exact, radius, meshes, pushes: int = 5000,
                     where: np.ndarray | None = None, tolerance: float = TOLERANCE) -> None:
    """A point the exact push leaves alone moves by less than the tolerance; one it pushes
    (inside or touching) ends at its radius from the exact surface, to the tolerance. (Not at
    the exact push's point: inside a faceted mesh the closest facet jumps at each ridge between
    two, and the lattice's normal blends them, so a deep point goes out a little to one side.)
    `where` (N, P - 1) bool: the points checked (default: every point but the roots)."""
    keep = np.ones(strands[:, 1:].shape[:2], dtype=bool) if where is None else where
    keep = keep.ravel()
    before, after = strands[:, 1:].reshape(-1, 3)[keep], out[:, 1:].reshape(-1, 3)[keep]
    pushed = np.any(exact[:, 1:] != strands[:, 1:], axis=-1).ravel()[keep]
    assert pushed.sum() > pushes
    assert np.abs(after - before)[~pushed].max(initial=0.0) <= tolerance
    c = MeshField(meshes, fps=1.0, radius=0.003).contacts(0, after[pushed].astype(np.float64),
                                                          0.0, 0.0)
    r = np.tile(radius[1:], len(strands))[keep][pushed][c.index]
    assert len(c.index) == pushed.sum()
    assert np.abs(c.distance - r).max() <= tolerance


def _deeper_than(strands: np.ndarray, meshes: MeshColliders, depth: float) -> np.ndarray:
    """(N * (P - 1),) bool: the points (roots left out) more than `depth` inside the closed head,
    as the exact query with a Depth past the head's radius says, asked only for the points two
    bounds cannot decide. A point at r from the centre is at least (the least face-plane
    distance from the centre) - r from every triangle (a triangle is no nearer than its plane),
    and at most (the farthest vertex) - r from the surface (the surface along its radius is no
    farther out). The exact query over every point cost ~40 CPU-s for 132,000 points; ~70 of
    them lie in the shell between the bounds (the mask is the same bits for seeds 1 and 5)."""
    v = meshes.vertices[0][0].astype(np.float64) - CENTRE
    a, b, c = (v[meshes.triangles[0][:, k]] for k in range(3))
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1)[:, None]
    inner = np.einsum("ij,ij->i", n, a).min() - 1e-6  # float32 vertices: a micron of room
    outer = np.linalg.norm(v, axis=1).max() + 1e-6
    x = strands[:, 1:].reshape(-1, 3).astype(np.float64)
    r = np.linalg.norm(x - CENTRE, axis=1)
    deep = inner - r > depth
    shell = np.flatnonzero(~deep & (outer - r > depth))
    whole = MeshColliders.create(names=["Head"], triangles=[meshes.triangles[0]],
                                 vertices=[meshes.vertices[0]], depth=[outer])
    field = MeshField(whole, fps=1.0, radius=0.003)
    c = field.contacts(0, x[shell], 0.0, 0.0)
    deep[shell[c.index]] = -c.distance > depth
    return deep


def test_thin_parts_and_sharp_edges_are_still_found(lattice_calls):
    """A closed plate 2 mm thick with square edges (an ear's rim) in dense strands: the cells
    around it see both faces, or two faces at an edge, so its points take the exact query; every
    point ends outside it by its radius."""
    plate = np.array([[x, y, z] for x in (-0.02, 0.02) for y in (-0.02, 0.02)
                      for z in (-0.001, 0.001)]) + CENTRE
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    triangles = np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))])
    meshes = MeshColliders.create(names=["Plate"], triangles=[triangles],
                                  vertices=[plate[None].astype(np.float32)], depth=[0.01])
    rng = np.random.default_rng(4)
    n, P = 6000, 12
    roots = CENTRE + np.column_stack([rng.uniform(-0.03, 0.03, (n, 2)),
                                      rng.uniform(0.025, 0.035, n)])
    s = np.linspace(0.0, 1.0, P)[None, :, None]
    strands = (roots[:, None] + s * np.array([0.0, 0.0, -0.06])).astype(np.float32)
    strands[:, :, :2] += rng.normal(scale=0.002, size=(n, P, 2)).astype(np.float32)
    strands[:, 0] = roots  # roots on their line
    radius = np.full(P, 0.0015)
    exact = _exact(strands, radius, meshes)
    out = strands.copy()
    collide_strands_meshes(out, radius, meshes)
    (smooth, unresolved, _), = lattice_calls
    assert smooth > 0 and unresolved > 0
    _assert_as_exact(strands, out, exact, radius, meshes, pushes=1000)


def test_open_meshes_keep_the_exact_query_near_their_border(lattice_calls):
    """The head's upper half, open at the equator: behind its border (on the plane of the
    border's faces, a cylinder down from the equator) the side flips without the distance
    passing zero, so cells near the border take the exact query; the rest of the cap reads the
    lattice."""
    vertices, triangles = uv_sphere(0.1, 40, 64)
    upper = triangles[np.all(vertices[triangles][..., 2] >= -1e-9, axis=1)]
    cap = MeshColliders.create(names=["Cap"], triangles=[upper],
                               vertices=[(vertices + CENTRE)[None].astype(np.float32)])
    strands = _draped(12000, 12, seed=2)
    radius = np.linspace(0.003, 0.001, 12)
    out = strands.copy()
    collide_strands_meshes(out, radius, cap)
    staged = _exact(strands, radius, cap, staged=True)
    (smooth, unresolved, _), = lattice_calls
    assert smooth > 10000 and unresolved > 10000
    low = strands[:, 1:, 2] < CENTRE[2] + 0.04  # within 4 cm of the border's height
    np.testing.assert_array_equal(out[:, 1:][low], staged[:, 1:][low])
    _assert_as_exact(strands, out, staged, radius, cap, pushes=3000, where=~low)


def test_sparse_points_keep_the_exact_query(lattice_calls):
    """40 strands on a closed head: a lattice node per point or more, so no lattice."""
    radius = np.linspace(0.003, 0.001, 12)
    sparse = _draped(40, 12, seed=3)
    out = sparse.copy()
    collide_strands_meshes(out, radius, _head())
    np.testing.assert_array_equal(out, _exact(sparse, radius, _head(), staged=True))
    assert lattice_calls == [None]


def test_points_deeper_than_the_depth_go_to_the_nearest_surface(lattice_calls):
    """A Depth (3 mm) under the lattice's node reach: the points deeper inside the closed head
    than Depth + radius, where no distance is known, are found inside by ray parity and go to
    the nearest surface, out by their radius (they used to stay inside); the others are
    pushed as the exact query pushes them."""
    meshes = _head(depth=0.003)
    strands = _draped(12000, 12, seed=5)
    radius = np.linspace(0.003, 0.001, 12)
    exact = _exact(strands, radius, meshes)
    out = strands.copy()
    collide_strands_meshes(out, radius, meshes)
    assert lattice_calls[0] is not None and lattice_calls[0][0] > 0
    deep = _deeper_than(strands, meshes, 0.003 + radius[1:].max())  # than the reach
    assert deep.sum() > 1000
    after = out[:, 1:].reshape(-1, 3)[deep].astype(np.float64)
    c = MeshField(_head(depth=0.2), fps=1.0, radius=0.0).contacts(0, after, 0.0, 0.0)
    assert len(c.index) == deep.sum()
    r = np.tile(radius[1:], len(strands))[deep][c.index]
    np.testing.assert_allclose(c.distance, r, atol=1e-6)
    shallow = ~deep.reshape(len(strands), -1)
    _assert_as_exact(strands, out, exact, radius, meshes, where=shallow)


def test_blending_in_chunks_gives_the_same_bits(monkeypatch):
    meshes = _head()
    strands = _draped(3000, 12, seed=6)
    monkeypatch.setattr(mesh_lattice, "MAX_NODES_PER_POINT", np.inf)  # sparse: used anyway
    field = MeshField(meshes, fps=1.0, radius=0.003)
    nodes = mesh_lattice.node_field(field, 0.003)
    x = strands[:, 1:].reshape(-1, 3).astype(np.float64)
    whole = mesh_lattice.lattice_contacts(nodes, 0, x, float(field.reach[0]))
    monkeypatch.setattr(mesh_lattice, "BLEND_CHUNK", 1000)
    chunked = mesh_lattice.lattice_contacts(nodes, 0, x, float(field.reach[0]))
    assert len(whole.index) > 3000
    for a, b in zip(whole, chunked, strict=True):
        np.testing.assert_array_equal(a, b)


def test_nodes_kept_between_frames_of_a_still_body_give_the_same_bits():
    """Three frames of strands swaying over a still head, then the head moved: with the cache
    the later frames query only the nodes the strands reach anew, and every frame is the same
    bits as without it; a moved head (or reach) starts over."""
    head = _head()
    radius = np.linspace(0.003, 0.001, 12)
    strands = _draped(12000, 12, seed=7)
    cache = mesh_lattice.NodeCache()
    moved_head = MeshColliders.create(
        names=["Head"], triangles=list(head.triangles), depth=[0.03],
        vertices=[head.vertices[0] + np.float32(0.001)])
    queried = []
    for frame, meshes in enumerate((head, head, head, moved_head)):
        sway = strands.copy()
        sway[:, 1:, 0] += np.float32(0.002 * frame) * np.linspace(0, 1, 11, dtype=np.float32)
        cached, fresh = sway.copy(), sway.copy()
        collide_strands_meshes(cached, radius, meshes, cache=cache)
        collide_strands_meshes(fresh, radius, meshes)
        np.testing.assert_array_equal(cached, fresh)
        queried.append(cache.queried - sum(queried))
    assert queried[0] > 20000
    assert 0 < queried[1] < queried[0] / 3 and 0 < queried[2] < queried[0] / 3
    assert queried[3] > 20000  # the head moved: every node again


def test_a_coarse_faceted_head_is_read_to_its_own_tolerance(monkeypatch, lattice_calls):
    """A 224-triangle head (flat faces meeting at 22 degrees) with strands cutting deep into
    it: inside, the field creases at each ridge between two faces, and the stricter agreement
    for cells with a corner inside keeps those cells exact (0.46 mm off without it, 0.25 mm
    with); next to a convex edge outside the field rounds within a cell (up to 0.34 mm over
    nine coarse heads and seeds; 0.4 mm allowed)."""
    monkeypatch.setattr(mesh_lattice, "MAX_NODES_PER_POINT", np.inf)
    meshes = _head(rings=8, segments=16, depth=0.12)
    strands = _draped(12000, 12, seed=10)
    radius = np.linspace(0.003, 0.001, 12)
    exact = _exact(strands, radius, meshes)
    out = strands.copy()
    collide_strands_meshes(out, radius, meshes)
    (smooth, _unresolved, _), = lattice_calls
    assert smooth > 20000
    _assert_as_exact(strands, out, exact, radius, meshes, tolerance=4e-4)


def test_a_still_body_keeps_its_fields_and_a_moved_one_rebuilds_them():
    """`NodeCache.fields` hands back the same fields while the sample's vertices are equal
    (a still body: no triangle grid, normals or node grid built again), new ones once they
    move, and copies what it keeps: a caller that writes the next frame into the same arrays
    is not answered from the old frame."""
    head = _head()
    cache = mesh_lattice.NodeCache()
    field, nodes = cache.fields(head, 0, 0.003)
    assert cache.fields(head, 0, 0.003) == (field, nodes)
    assert cache.fields(head, 0, 0.002)[0] is not field  # another radius: another reach
    field, _ = cache.fields(head, 0, 0.003)
    head.vertices[0][...] += np.float32(0.001)  # the same arrays, the next frame written in
    moved, _ = cache.fields(head, 0, 0.003)
    assert moved is not field
    np.testing.assert_array_equal(moved.meshes.vertices[0], head.vertices[0])
    assert moved.topology is field.topology  # the same triangles: their topology is kept


def test_cells_and_nodes_are_numbered_alike_dense_or_sorted(monkeypatch):
    """The dense box numbering of the points' cells and corner nodes gives what the two
    np.unique calls give (the keys' order is the box's linear order)."""
    rng = np.random.default_rng(3)
    for spread in (4, 60):  # a compact cloud (dense) and a sparse one (sorted)
        lattice = rng.integers(0, spread, size=(5000, 3)) + 1000
        dense = mesh_lattice._cells_and_nodes(lattice)
        monkeypatch.setattr(mesh_lattice, "DENSE_CELLS", -1)  # always sort
        sorted_ = mesh_lattice._cells_and_nodes(lattice)
        monkeypatch.undo()
        for a, b in zip(dense, sorted_, strict=True):
            np.testing.assert_array_equal(a, b)
