"""The collider shapes on coordinate rows (`core.collider_rows`, the render strands' exact test)
give `colliders.shape_normal`'s normals and signed distances: every kind, uniform and
non-uniform scale, rotated, points inside and outside, on the axis and at the centre."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.collider_rows import (
    capsule_bound_rows,
    capsule_rows,
    ellipsoid_bound_rows,
    ellipsoid_rows,
    shape_normal_rows,
)
from waft.core.colliders import ColliderKind, ColliderSet, is_similarity, shape_normal


def _matrix(rng, *, uniform: bool) -> np.ndarray:
    M = np.eye(4)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    scale = np.full(3, rng.uniform(0.5, 2.0)) if uniform else rng.uniform(0.5, 2.0, 3)
    M[:3, :3] = q * np.sign(np.linalg.det(q)) @ np.diag(scale)
    M[:3, 3] = rng.normal(size=3)
    return M


@pytest.mark.parametrize("kind", list(ColliderKind))
@pytest.mark.parametrize("uniform", [True, False])
def test_rows_give_the_shapes_normals_and_distances(kind, uniform):
    rng = np.random.default_rng(int(kind) * 2 + uniform)
    colliders = ColliderSet.create(names=["C"], kind=[kind], size=[0.3], radius_a=[0.2],
                                   radius_b=[0.1])
    M = _matrix(rng, uniform=uniform)
    Minv = np.linalg.inv(M)
    points = M[:3, 3] + rng.normal(size=(4000, 3)) * 0.5
    points[0] = M[:3, 3]  # the centre
    points[1] = M[:3, :3] @ (0.0, 0.0, 0.1) + M[:3, 3]  # on a capsule's axis
    similar = kind == ColliderKind.ELLIPSOID and is_similarity(M)
    n, sd = shape_normal(int(kind), points, M, Minv, colliders, 0, similarity=similar)
    n_rows, sd_rows = shape_normal_rows(int(kind), np.ascontiguousarray(points.T), M, Minv,
                                        colliders, 0, similarity=similar)
    assert (sd < 0).any() and (sd > 0).any()  # inside and outside
    np.testing.assert_allclose(sd_rows, sd, atol=1e-12)
    np.testing.assert_allclose(n_rows.T, np.broadcast_to(n, points.shape), atol=1e-12)


def test_capsule_bound_is_below_the_capsules_distance_and_tight_on_a_round_one():
    """`capsule_bound_rows` never exceeds the tapered capsule's signed distance (beyond its
    rounding allowance, `collide.BOUND_TOLERANCE`), inside or out, for tapers either way, a
    sphere holding the other, a zero-length axis and a capsule 1 km from the origin; on a
    round capsule (equal radii) it is the distance itself, so it prunes the points it can."""
    from waft.core.hair.collide import BOUND_TOLERANCE

    rng = np.random.default_rng(29)
    for trial in range(400):
        M = _matrix(rng, uniform=trial % 2 == 0)
        if trial % 3 == 0:
            M[:3, 3] += 1000.0
        half = 0.0 if trial % 11 == 0 else rng.uniform(0.01, 0.4)
        ra, rb = rng.uniform(0.0, 0.2, 2)
        if trial % 5 == 0:
            rb = ra + rng.uniform(0.0, 3.0 * half + 0.01)  # sometimes one holds the other
        points = M[:3, 3, None] + rng.normal(size=(3, 500)) * rng.uniform(0.02, 0.6)
        _, sd = capsule_rows(points.copy(), M, half, ra, rb)
        bound = capsule_bound_rows(points, M, half, ra, rb)
        scale = 1.0 + np.abs(M[:3, 3]).max() + half + max(ra, rb)
        assert np.all(bound <= sd + BOUND_TOLERANCE * scale), trial
    M = _matrix(rng, uniform=True)
    points = M[:3, 3, None] + rng.normal(size=(3, 500)) * 0.5
    _, sd = capsule_rows(points.copy(), M, 0.2, 0.1, 0.1)
    np.testing.assert_allclose(capsule_bound_rows(points, M, 0.2, 0.1, 0.1), sd, atol=1e-12)


def test_ellipsoid_bound_is_below_the_ellipsoids_distance_outside_and_prunes():
    """`ellipsoid_bound_rows` never exceeds `ellipsoid_rows`' signed distance of a point outside
    (beyond the rounding allowance, `collide.BOUND_TOLERANCE`), for flat, long and nearly
    round ellipsoids, rotated and sheared, one 1 km from the origin, and points on the surface;
    it is negative inside; on a sphere it is the distance itself; and on a flat ellipsoid it
    leaves far fewer points within a radius than the bounding sphere does."""
    from waft.core.hair.collide import BOUND_TOLERANCE

    rng = np.random.default_rng(31)
    for trial in range(400):
        M = _matrix(rng, uniform=trial % 4 == 0)
        if trial % 7 == 0:
            M[:3, :3] = M[:3, :3] @ np.array([[1.0, 0.4, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 1.0]])
        if trial % 3 == 0:
            M[:3, 3] += 1000.0
        size = rng.uniform(0.02, 0.4)
        Minv = np.linalg.inv(M)
        points = M[:3, 3, None] + rng.normal(size=(3, 500)) * rng.uniform(0.02, 1.0)
        unit = rng.normal(size=(3, 50))
        unit /= np.linalg.norm(unit, axis=0)
        points[:, :50] = M[:3, :3] @ (unit * size) + M[:3, 3, None]  # on the surface
        _, sd = ellipsoid_rows(points.copy(), M, Minv, size)
        bound = ellipsoid_bound_rows(points, M, Minv, size)
        scale = 1.0 + np.abs(M[:3, 3]).max() + size * np.linalg.norm(M[:3, :3], axis=0).max()
        outside = sd > 0.0
        assert np.all(bound[outside] <= sd[outside] + BOUND_TOLERANCE * scale), trial
        # A bound beyond a radius (all a caller skips on) only ever outside.
        assert np.all(bound[sd < -BOUND_TOLERANCE * scale] < 0.0), trial
    M = _matrix(rng, uniform=True)
    points = M[:3, 3, None] + rng.normal(size=(3, 500)) * 0.5
    np.testing.assert_allclose(ellipsoid_bound_rows(points, M, np.linalg.inv(M), 0.2),
                               ellipsoid_rows(points.copy(), M, np.linalg.inv(M), 0.2)[1],
                               atol=1e-12)
    M = np.diag([1.0, 0.2, 1.0, 1.0])  # a disc of radius 0.3, 6 cm thick
    points = rng.uniform(-0.3, 0.3, size=(3, 4000))
    points = points[:, np.linalg.norm(points, axis=0) <= 0.3]  # in its bounding sphere
    near = ellipsoid_bound_rows(points, M, np.linalg.inv(M), 0.3) < 0.002
    assert near.mean() < 0.4
