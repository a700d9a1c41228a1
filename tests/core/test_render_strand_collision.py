"""Render strands end outside the colliders of their guides: every point but the root at least
its radius from the surface after `collide_strands`, points already outside untouched (bitwise),
roots never moved."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from waft.core.colliders import ColliderKind, ColliderSet, shape_normal
from waft.core.hair import collide_strands

RNG = np.random.default_rng(3)


def _colliders():
    """A head sphere, a tapered neck capsule, a rotated shoulder box and a floor plane, apart."""
    colliders = ColliderSet.create(
        names=["Head", "Neck", "Shoulder", "Floor"],
        kind=[ColliderKind.ELLIPSOID, ColliderKind.CAPSULE, ColliderKind.BOX, ColliderKind.PLANE],
        size=[0.11, 0.06, 0.08, 1.0], radius_a=[0, 0.06, 0, 0], radius_b=[0, 0.045, 0, 0])
    head = np.eye(4)
    head[:3, 3] = (0.0, 0.0, 1.6)
    neck = np.eye(4)
    neck[:3, 3] = (0.0, 0.02, 1.42)
    c, s = np.cos(0.4), np.sin(0.4)
    shoulder = np.eye(4)
    shoulder[:3, :3] = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ np.diag([1.5, 1.0, 0.6])
    shoulder[:3, 3] = (0.25, 0.0, 1.35)
    floor = np.eye(4)
    floor[:3, 3] = (0.0, 0.0, 0.9)
    return colliders, np.stack([head, neck, shoulder, floor])


def _strands(n: int = 3000, points: int = 12) -> np.ndarray:
    """Strands from roots around the head falling straight through the body region."""
    roots = np.array([0.0, 0.0, 1.6]) + 0.11 * _unit(RNG.normal(size=(n, 3)))
    roots[:, 2] = np.abs(roots[:, 2] - 1.6) + 1.6  # upper half: a scalp
    tips = roots + np.column_stack([RNG.uniform(-0.3, 0.3, (n, 2)), -RNG.uniform(0.3, 0.9, n)])
    s = np.linspace(0.0, 1.0, points)[None, :, None]
    return (roots[:, None] + s * (tips - roots)[:, None]).astype(np.float32)


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _signed_distances(points, colliders, matrices) -> np.ndarray:
    x = points.reshape(-1, 3).astype(np.float64)
    return np.stack([shape_normal(int(colliders.kind[k]), x, matrices[k],
                                  np.linalg.inv(matrices[k]), colliders, k)[1]
                     for k in range(colliders.count)]).reshape(colliders.count,
                                                               *points.shape[:2])


def test_every_point_ends_outside_every_collider_by_its_radius():
    colliders, matrices = _colliders()
    strands = _strands()
    radius = np.linspace(0.004, 0.001, strands.shape[1])
    before = _signed_distances(strands, colliders, matrices)
    assert (before[:, :, 1:] < radius[1:]).sum() > 1000  # many points start inside
    original = strands.copy()
    moved = collide_strands(strands, radius, colliders, matrices).moved
    after = _signed_distances(strands, colliders, matrices)
    assert moved > 1000
    # Within 0.1 mm of the radius (SETTLED_DEPTH: where head and neck overlap the last pass
    # may leave a point that little inside), never inside a shape.
    assert after[:, :, 1:].min() > -1e-6
    assert np.all(after[:, :, 1:] >= radius[1:] - 1.01e-4)
    assert np.array_equal(strands[:, 0], original[:, 0])  # roots stay on the scalp
    untouched = np.all(before >= radius, axis=0)  # outside every collider already
    untouched[:, 0] = True
    assert np.array_equal(strands[untouched], original[untouched])


def test_far_from_the_origin_no_point_is_missed_by_the_broad_phase():
    """The broad phase expands |x - c|² in float32, which cancels: 1.8 km from the origin its
    rounding is about a square metre. Its margin must keep every point the exact test moves:
    the scene of the test above, moved there, ends outside by the radius just the same."""
    colliders, matrices = _colliders()
    offset = np.array([1500.0, -900.0, 300.0])
    matrices = matrices.copy()
    matrices[:, :3, 3] += offset
    strands = (_strands().astype(np.float64) + offset).astype(np.float32)
    radius = np.linspace(0.004, 0.001, strands.shape[1])
    before = _signed_distances(strands, colliders, matrices)
    assert (before[:, :, 1:] < radius[1:]).sum() > 1000
    collide_strands(strands, radius, colliders, matrices)
    after = _signed_distances(strands, colliders, matrices)
    # float32 positions there are 0.12 mm apart: the radius is met to that rounding.
    assert np.all(after[:, :, 1:] >= radius[1:] - 1.01e-4 - 2.5e-4)


def test_strands_away_from_every_collider_are_bitwise_unchanged():
    colliders, matrices = _colliders()
    strands = _strands() + np.float32(5.0) * np.array([1, 0, 0], dtype=np.float32)
    strands[..., 2] += 2.0  # above the floor as well
    original = strands.copy()
    assert collide_strands(strands, np.full(strands.shape[1], 0.003), colliders,
                           matrices).moved == 0
    assert np.array_equal(strands, original)


def test_mesh_pushes_every_point_it_reaches_out_by_its_radius_and_reports_them():
    """A closed mesh (flat faces) cut by straight strands: every non-root point ends outside by
    its radius (exact brute-force distance), those deeper than the mesh's reach too (to the
    nearest surface), the points it did not move are bitwise unchanged, and the returned
    indices are exactly the moved points."""
    from waft.core._bench_meshes import uv_sphere
    from waft.core.hair import collide_strands_meshes
    from waft.core.mesh_colliders import MeshColliders
    from waft.core.triangles import closest_on_triangles

    centre = np.array([0.0, 0.0, 1.6])
    vertices, triangles = uv_sphere(0.1, rings=8, segments=16)
    vertices = vertices + centre
    meshes = MeshColliders.create(names=["Head"], triangles=[triangles],
                                  vertices=[np.stack([vertices + 1.0, vertices])],
                                  depth=[0.03])
    strands = _strands(n=600, points=10)
    before = strands.copy()
    radius = np.linspace(0.004, 0.001, strands.shape[1])
    moved = collide_strands_meshes(strands, radius, meshes, sample=1)
    changed = np.flatnonzero(np.any(strands != before, axis=-1).ravel())
    np.testing.assert_array_equal(moved, changed)
    assert np.all(strands[:, 0] == before[:, 0])  # roots stay

    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    normal = np.cross(b - a, c - a)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)

    def signed(points):
        plane = np.einsum("ptk,tk->pt", points[:, None] - a, normal).max(axis=1)
        T = len(triangles)
        p = np.repeat(points, T, axis=0)
        closest = closest_on_triangles(p, np.tile(a, (len(points), 1)),
                                       np.tile(b, (len(points), 1)),
                                       np.tile(c, (len(points), 1)))[0]
        far = np.linalg.norm(p - closest, axis=1).reshape(len(points), T).min(axis=1)
        return np.where(plane < 0.0, plane, far)

    r = np.tile(radius[1:], len(strands))
    start = signed(before[:, 1:].reshape(-1, 3).astype(np.float64))
    end = signed(strands[:, 1:].reshape(-1, 3).astype(np.float64))
    reach = 0.03 + radius[1:].max()  # Depth + the largest radius moved: how far it looks
    reached = start > -reach
    assert (start[reached] < r[reached]).sum() > 200  # many points start inside or touching
    assert (end[reached] - r[reached]).min() > -1e-6
    assert np.any(np.abs(end - r) < 1e-6)
    # Deeper than Depth + radius inside the closed head: no distance is known there, the ray
    # parity finds them inside and they go to the nearest surface, out by their radius.
    deep = start < -reach - 1e-6
    assert deep.sum() > 100
    np.testing.assert_allclose(end[deep], r[deep], atol=1e-6)


def test_carrier_corrections_keep_their_keys_and_padding_matches_no_point():
    from waft.core.hair import bind_strands, playback

    rng = np.random.default_rng(5)
    guides = rng.normal(size=(3, 16, 3))
    binding = bind_strands(roots=guides[:, 0] + 0.01, guide_rest=guides, method="NEAREST")
    # The last: point 15 of strand 1,999,999 (the most strands), past 2^24 as a flat index.
    index = np.array([0, 7, 4095, 4096, 31_999_999])
    values = rng.normal(size=(5, 3))
    carrier = playback.carrier_points(binding, guides, scalp_matrix=np.eye(4), clump=0.0,
                                      randomness=0.0, root_radius=0.001, tip_radius=0.001,
                                      records=np.zeros((0, playback.COLLIDER_POINTS, 3)),
                                      passes=0, corrections=(index, values))
    assert playback.corrections_in(carrier) == 5
    padded = playback.with_slots(carrier, 9)
    assert len(padded) == sum(playback.carrier_sizes(3, 16, 0, 9))
    base = playback.HEADER + 3 * 16 + 2 * 3
    keys, stored = padded[base:base + 9], padded[base + 9:base + 18]
    assert padded[6, 2] == 5 and padded[7, 0] == 9
    np.testing.assert_array_equal(keys[:5, 0].astype(np.int64) * 16 + keys[:5, 1], index)
    np.testing.assert_array_equal(stored[:5], values.astype(np.float32))
    assert np.all(keys[5:, :2] < 0.0)  # padding: below every (non-negative) key
    np.testing.assert_array_equal(np.delete(padded[:base], 7, axis=0),
                                  np.delete(carrier[:base], 7, axis=0))


def test_staged_mesh_query_moves_exactly_what_one_full_reach_query_moves(monkeypatch):
    """The near query, the lattice corners' side and the deep points' full query
    (`MeshField.staged_contacts`) push every point exactly as one query of the full reach (radius +
    Depth) does, bit for bit: strands cutting deep into a coarse head, hanging off it and
    lying on it. (The distance lattice of dense strands is off here: test_mesh_lattice.py.)
    The points deeper than that reach, which neither query finds, go to the nearest surface
    (`mesh_inside`), out by their radius."""
    from waft.core._bench_meshes import uv_sphere
    from waft.core.hair import collide, collide_strands_meshes

    monkeypatch.setattr(collide, "lattice_contacts", lambda *args: None)
    from waft.core.mesh_colliders import MeshColliders, MeshField

    rng = np.random.default_rng(8)
    vertices, triangles = uv_sphere(0.1, rings=10, segments=20)
    meshes = MeshColliders.create(names=["Head"], triangles=[triangles],
                                  vertices=[(vertices + (0.0, 0.0, 1.6))[None]],
                                  depth=[0.04])
    strands = _strands(n=1500, points=12)
    strands += rng.normal(scale=0.01, size=strands.shape).astype(np.float32)
    radius = np.linspace(0.003, 0.001, strands.shape[1])
    staged = strands.copy()
    moved = collide_strands_meshes(staged, radius, meshes)

    full = strands.copy()
    x = full[:, 1:].reshape(-1, 3).astype(np.float64)
    field = MeshField(meshes, fps=1.0, radius=float(radius[1:].max()))
    c = field.contacts(0, x, 0.0, 0.0)
    r = np.tile(radius[1:], len(strands))[c.index]
    push = r - c.distance > 0.0
    x[c.index[push]] += c.normal[push] * (r - c.distance)[push, None]
    full[:, 1:] = x.reshape(len(strands), -1, 3)
    assert push.sum() > 1000 and (c.distance < -0.02).sum() > 50  # deep points too
    probe = MeshField(replace(meshes, depth=np.array([1.0])), fps=1.0, radius=0.0)
    d = probe.contacts(0, strands[:, 1:].reshape(-1, 3).astype(np.float64), 0.0, 0.0)
    assert len(d.index) == len(x)
    deep = np.zeros(len(x), dtype=bool)
    deep[d.index] = d.distance < -float(field.reach[0])
    assert deep.sum() > 100
    flat = staged[:, 1:].reshape(-1, 3)
    np.testing.assert_array_equal(flat[~deep], full[:, 1:].reshape(-1, 3)[~deep])
    np.testing.assert_array_equal(staged[:, 0], full[:, 0])
    end = probe.contacts(0, flat[deep].astype(np.float64), 0.0, 0.0)
    r_deep = np.tile(radius[1:], len(strands))[deep]
    np.testing.assert_allclose(end.distance, r_deep[end.index], atol=1e-6)
    assert len(end.index) == deep.sum()
    assert len(moved) == push.sum() + deep.sum()


def _reference_collide(points, radius, colliders, matrices, first=1, *, settle=True):
    """`collide_strands` without any broad phase: every pass tests every point of its strands
    against every collider in turn, where the point is at that moment (the float32 bounding
    sphere, as stored, then the exact signed distance on the points inside, in ascending
    order), and pushes the ones inside out to their radius; but a collider with an exact
    distance (all but a general ellipsoid) does not test again a point whose last move was its
    own push (the projection is idempotent; `settle=False` tests it too, as before that rule).
    (moved, passes)."""
    from waft.core.collider_rows import shape_normal_rows
    from waft.core.colliders import is_similarity
    from waft.core.hair.collide import MAX_PASSES, SETTLED_DEPTH, bounding_sphere

    N, P = points.shape[:2]
    flat = points.reshape(-1, 3)  # a view
    reach = float(radius[first:].max())
    strands = np.arange(N)
    moved = passes = 0
    pushed_by = np.full(N * P, -1)  # the collider whose exact push was the point's last move
    for _ in range(MAX_PASSES):
        touched = np.zeros(N, dtype=bool)
        for k in range(colliders.count):
            kind, M = int(colliders.kind[k]), matrices[k]
            centre, bound = bounding_sphere(kind, M, float(colliders.size[k]),
                                            float(colliders.radius_a[k]),
                                            float(colliders.radius_b[k]))
            point = (strands[:, None] * P + np.arange(first, P)).ravel()
            point = point[pushed_by[point] != k]
            x = flat[point].T
            if np.isfinite(bound):
                d2 = np.sum((x - centre.astype(np.float32)[:, None]) ** 2, axis=0,
                            dtype=x.dtype)  # x, y, z summed in order, as stored
                point = point[d2 <= np.float32(bound + reach) ** 2]
            xs = flat[point].T.astype(np.float64)
            similar = kind == ColliderKind.ELLIPSOID and is_similarity(M)
            n, sd = shape_normal_rows(kind, xs, M, np.linalg.inv(M), colliders, k,
                                      similarity=similar)
            depth = radius[point % P] - sd
            inside = depth > 0.0
            flat[point[inside]] = (xs + n * depth).T[inside]
            pushed_by[point[inside]] = -1 if (kind == ColliderKind.ELLIPSOID and not similar
                                              or not settle) else k
            touched[point[inside][depth[inside] > SETTLED_DEPTH] // P] = True
            moved += int(inside.sum())
        passes += 1
        if not touched.any():
            break
        strands = np.flatnonzero(touched)
    return moved, passes


def _random_colliders(rng):
    """One to five colliders of random kinds (a plane now and then), sizes and poses, around
    the origin where the strands hang."""
    count = int(rng.integers(1, 6))
    kinds = rng.choice([ColliderKind.ELLIPSOID, ColliderKind.CAPSULE, ColliderKind.BOX],
                       size=count)
    if rng.random() < 0.2:
        kinds[rng.integers(count)] = ColliderKind.PLANE
    matrices = np.repeat(np.eye(4)[None], count, axis=0)
    for k in range(count):
        q = rng.normal(size=4)
        a, b, c, d = q / np.linalg.norm(q)
        rotation = np.array([[a * a + b * b - c * c - d * d, 2 * (b * c - a * d),
                              2 * (b * d + a * c)],
                             [2 * (b * c + a * d), a * a - b * b + c * c - d * d,
                              2 * (c * d - a * b)],
                             [2 * (b * d - a * c), 2 * (c * d + a * b),
                              a * a - b * b - c * c + d * d]])
        scale = rng.uniform(0.6, 1.4, 3) if rng.random() < 0.5 else np.ones(3)
        matrices[k, :3, :3] = rotation @ np.diag(scale)
        matrices[k, :3, 3] = rng.uniform(-0.15, 0.15, 3) + (0.0, 0.0, -0.2)
    radius_a = rng.uniform(0.03, 0.08, count)
    return ColliderSet.create(names=[f"C{k}" for k in range(count)], kind=kinds,
                              size=rng.uniform(0.04, 0.12, count), radius_a=radius_a,
                              radius_b=radius_a * rng.uniform(0.5, 1.0, count)), matrices


def test_collide_strands_moves_exactly_what_testing_every_point_moves():
    """Seeded random scenes (colliders of every kind, overlapping; strands hanging through
    them, float32 and float64, roots of one or two points): the broad phase may leave out
    only points no collider can move, so the result is bit for bit that of testing every
    point against every collider in every pass (but a collider's own exact push), with the
    same moves and passes; and within a rounding of testing its own pushes again too."""
    rng = np.random.default_rng(1913)
    moved_any, gap = 0, 0.0
    for trial in range(60):
        colliders, matrices = _random_colliders(rng)
        n, points = int(rng.integers(1, 400)), int(rng.integers(2, 14))
        roots = rng.normal(size=(n, 3)) * 0.12
        steps = rng.normal(size=(n, points, 3)) * 0.03 + (0.0, 0.0, -0.04)
        steps[:, 0] = roots
        strands = np.cumsum(steps, axis=1).astype(np.float32 if trial % 4 else np.float64)
        radius = np.linspace(rng.uniform(0.001, 0.01), rng.uniform(0.0, 0.005), points)
        first = 1 if trial % 5 else min(2, points - 1)
        expected, strands_before = strands.copy(), strands.copy()
        reference = _reference_collide(expected, radius, colliders, matrices, first)
        result = collide_strands(strands, radius, colliders, matrices, first=first)
        assert (result.moved, result.passes) == reference, trial
        assert strands.tobytes() == expected.tobytes(), trial
        if trial % 4 == 1:  # a quarter of the scenes, float32: the rule's rounding
            retested = strands_before.copy()
            _reference_collide(retested, radius, colliders, matrices, first, settle=False)
            gap = max(gap, float(np.abs(retested.astype(np.float64) - strands).max()))
        moved_any += reference[0]
    assert moved_any > 10_000  # the scenes do push many points
    assert gap < 1e-6  # metres (measured 3e-8: a float32 rounding)


def test_float32_bounds_keep_every_point_of_thin_ellipsoids_and_capsules_far_out():
    """The broad phase bounds a capsule's and a general ellipsoid's distance in float32 on the
    stored points, with an allowance for its rounding (scaled by the matrix's condition and the
    distance from the origin): strands hugging a flat ellipsoid (axes 1 : 0.1) and a thin
    capsule 300 m out move exactly as testing every point in every pass moves them."""
    rng = np.random.default_rng(44)
    colliders = ColliderSet.create(names=["Flat", "Thin"],
                                   kind=[ColliderKind.ELLIPSOID, ColliderKind.CAPSULE],
                                   size=[0.1, 0.08], radius_a=[0, 0.02], radius_b=[0, 0.012])
    offset = np.array([300.0, -120.0, 40.0])
    matrices = np.repeat(np.eye(4)[None], 2, axis=0)
    c, s = np.cos(0.7), np.sin(0.7)
    matrices[0, :3, :3] = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ np.diag([1.0, 0.1, 0.6])
    matrices[0, :3, 3] = offset
    matrices[1, :3, 3] = offset + (0.0, 0.0, -0.09)
    n, points = 2000, 10
    roots = offset + rng.normal(size=(n, 3)) * (0.1, 0.03, 0.06) + (0.0, 0.0, 0.08)
    steps = rng.normal(size=(n, points, 3)) * 0.01 + (0.0, 0.0, -0.02)
    steps[:, 0] = roots
    strands = np.cumsum(steps, axis=1).astype(np.float32)
    radius = np.linspace(0.003, 0.001, points)
    expected = strands.copy()
    reference = _reference_collide(expected, radius, colliders, matrices)
    result = collide_strands(strands, radius, colliders, matrices)
    assert reference[0] > 1000  # the shapes do push many points
    assert (result.moved, result.passes) == reference
    assert strands.tobytes() == expected.tobytes()


def _touching_strands(rng, on_surface, n: int, points: int, radius: np.ndarray) -> np.ndarray:
    """Strands (n, points, 3) float32 whose every point but the root lies at its radius from a
    surface point (`on_surface(count)` → points, unit normals; float64), give or take 0.1 mm:
    each point's exact depth is a few float32 roundings either side of zero."""
    x, normal = on_surface(n * points)
    offset = np.tile(radius, n) + rng.uniform(-1e-4, 1e-4, n * points)
    return (x + normal * offset[:, None]).reshape(n, points, 3).astype(np.float32)


def test_points_whose_bounds_just_touch_a_capsule_or_ellipsoid_move_as_testing_every_point():
    """The float32 screens before the float64 bounds (`collider_rows.capsule_screen_rows`,
    `ellipsoid_screen_rows`) may drop only points the float64 bound drops. Where the bound is
    the exact distance (a round capsule's sides; an ellipsoid along its shortest axis), strands
    lying at their radius from the surface 500 m from the origin, where float32 coordinates are
    30 µm apart, have points a rounding inside and a rounding outside: every one the bound keeps
    must reach the exact test, so the result is bit for bit that of testing every point (with no
    allowance, SCREEN_TOLERANCE = 0, the screens miss 5 of its 7,187 pushes)."""
    rng = np.random.default_rng(50)
    offset = np.array([400.0, -250.0, 180.0])
    colliders = ColliderSet.create(names=["Neck", "Flat"],
                                   kind=[ColliderKind.CAPSULE, ColliderKind.ELLIPSOID],
                                   size=[0.07, 0.1], radius_a=[0.05, 0], radius_b=[0.05, 0])
    matrices = np.repeat(np.eye(4)[None], 2, axis=0)
    c, s = np.cos(0.6), np.sin(0.6)
    tilt = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    matrices[0, :3, :3] = tilt
    matrices[0, :3, 3] = offset
    matrices[1, :3, :3] = tilt @ np.diag([1.0, 0.7, 0.25])  # shortest axis: local z
    matrices[1, :3, 3] = offset + (0.5, 0.0, 0.0)
    points = 8
    radius = np.linspace(0.003, 0.001, points)

    def capsule_side(count):  # the round capsule's side: distance to the axis = its radius
        angle = rng.uniform(0.0, 2.0 * np.pi, count)
        normal = np.column_stack([np.cos(angle), np.sin(angle), np.zeros(count)]) @ tilt.T
        along = rng.uniform(-0.07, 0.07, count)[:, None] * tilt[:, 2]
        return offset + along + 0.05 * normal, normal

    def ellipsoid_pole(count):  # on the shortest axis, where σ_min (|Minv x| − size) is exact
        side = rng.choice([-1.0, 1.0], count)[:, None]
        normal = side * tilt[:, 2]
        return offset + (0.5, 0.0, 0.0) + 0.025 * normal, normal

    strands = np.concatenate([_touching_strands(rng, capsule_side, 1000, points, radius),
                              _touching_strands(rng, ellipsoid_pole, 1000, points, radius)])
    expected = strands.copy()
    reference = _reference_collide(expected, radius, colliders, matrices)
    result = collide_strands(strands, radius, colliders, matrices)
    assert reference[0] > 1000  # about half the points are a rounding inside
    assert (result.moved, result.passes) == reference
    assert strands.tobytes() == expected.tobytes()
