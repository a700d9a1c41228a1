"""The outline drawn for a collider lies on the surface the solvers collide with: every point of
every line is at signed distance 0 (± 1e-9 m) from the shape, for uniform and non-uniform scale,
rotated and moved, tapered capsules included."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.collider_outline import collider_outline
from waft.core.colliders import ColliderKind, ColliderSet, shape_normal


def _matrix(scale, angle=0.7, axis=(0.3, -0.5, 0.8), translation=(0.2, -1.0, 1.4)):
    axis = np.asarray(axis) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    R = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K
    M = np.eye(4)
    M[:3, :3] = R @ np.diag(scale)
    M[:3, 3] = translation
    return M


CASES = [
    (ColliderKind.ELLIPSOID, 0.12, 0.0, 0.0, (1.0, 1.0, 1.0)),
    (ColliderKind.ELLIPSOID, 0.12, 0.0, 0.0, (1.0, 2.0, 0.5)),
    (ColliderKind.CAPSULE, 0.2, 0.06, 0.06, (1.0, 1.0, 1.0)),
    (ColliderKind.CAPSULE, 0.2, 0.09, 0.03, (1.5, 1.5, 2.0)),
    (ColliderKind.CAPSULE, 0.2, 0.02, 0.08, (0.7, 0.7, 1.0)),
    (ColliderKind.CAPSULE, 0.02, 0.2, 0.05, (1.0, 1.0, 1.0)),  # one sphere holds the other
    (ColliderKind.BOX, 0.15, 0.0, 0.0, (1.0, 3.0, 0.5)),
    (ColliderKind.PLANE, 0.5, 0.0, 0.0, (2.0, 1.0, 1.0)),
]


@pytest.mark.parametrize(("kind", "size", "ra", "rb", "scale"), CASES)
def test_every_outline_point_is_on_the_collision_surface(kind, size, ra, rb, scale):
    M = _matrix(scale)
    lines = collider_outline(kind, M, size=size, radius_a=ra, radius_b=rb)
    assert lines.ndim == 3 and lines.shape[1:] == (2, 3) and len(lines) >= 4
    # Points along each line too (the drawn segment, not only its ends): circles are polylines,
    # so only their vertices lie on curved surfaces; straight lines (box edges, capsule sides,
    # the plane) lie on the surface along their whole length.
    points = lines.reshape(-1, 3)
    colliders = ColliderSet.create(names=["C"], kind=[kind], size=[size], radius_a=[ra],
                                   radius_b=[rb], friction=[0.0])
    _, sd = shape_normal(kind, points, M, np.linalg.inv(M), colliders, 0)
    assert np.abs(sd).max() < 1e-9
    if kind in (ColliderKind.BOX, ColliderKind.PLANE):
        middle = lines.mean(axis=1)
        _, sd = shape_normal(kind, middle, M, np.linalg.inv(M), colliders, 0)
        assert np.abs(sd).max() < 1e-9


def test_the_capsule_outline_spans_its_length_and_radii():
    """A straight capsule of half-length 0.2 and radius 0.05 spans 0.5 m along its axis and
    0.1 m across: what was drawn as a 0.1 m sphere and collided as a 0.5 m capsule."""
    lines = collider_outline(ColliderKind.CAPSULE, np.eye(4), size=0.2, radius_a=0.05,
                             radius_b=0.05)
    points = lines.reshape(-1, 3)
    assert np.isclose(points[:, 2].max() - points[:, 2].min(), 0.5)
    assert np.isclose(points[:, 0].max() - points[:, 0].min(), 0.1)
