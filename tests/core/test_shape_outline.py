"""The overlay's outlines of simulated shapes lie exactly on the shapes the solvers use."""

from __future__ import annotations

import numpy as np

from waft.core._bench_meshes import uv_sphere
from waft.core.ragdoll.bodies import q2m, quat_exp
from waft.core.ragdoll.limits import limit_correction
from waft.core.shape_outline import (
    capsules_outline,
    crosses_outline,
    mesh_edges_outline,
    spheres_outline,
    swing_cone_outline,
)


def _rotation(seed: int) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(3, 3)))
    return q * np.sign(np.linalg.det(q))


def test_spheres_are_at_their_radius():
    centres = np.array([[0.0, 0.0, 1.0], [0.3, -0.2, 1.5]])
    radii = np.array([0.01, 0.25])
    lines = spheres_outline(centres, radii).reshape(2, -1, 3)
    for k in range(2):
        distance = np.linalg.norm(lines[k] - centres[k], axis=-1)
        np.testing.assert_allclose(distance, radii[k], rtol=1e-12)


def test_body_capsules_are_at_their_radius_from_their_bones():
    heads = np.array([[0.1, 0.2, 1.0], [0.0, 0.0, 0.0], [0.5, 0.5, 0.5]])
    tails = np.array([[0.3, -0.1, 0.6], [0.95, 0.0, 0.0], [0.5, 0.5, 0.9]])  # one along x
    radii = np.array([0.05, 0.02, 0.1])
    lines = capsules_outline(heads, tails, radii).reshape(3, -1, 2, 3)
    for k in range(3):
        points = lines[k].reshape(-1, 3)
        axis = tails[k] - heads[k]
        t = np.clip((points - heads[k]) @ axis / (axis @ axis), 0.0, 1.0)
        distance = np.linalg.norm(points - (heads[k] + t[:, None] * axis), axis=1)
        np.testing.assert_allclose(distance, radii[k], rtol=1e-9)
        along = (points - heads[k]) @ (axis / np.linalg.norm(axis))
        assert np.isclose(along.min(), -radii[k])
        assert np.isclose(along.max(), np.linalg.norm(axis) + radii[k])


def test_the_swing_cone_is_the_limit_the_solver_clamps_to():
    """Each drawn direction is the bone axis turned by a swing on the limit ellipse, and the
    solver's own limit test finds those swings exactly on the limit (a 1 % wider one outside)."""
    frame = _rotation(3)
    apex, length, limit = np.array([0.0, 0.1, 1.2]), 0.3, np.array([0.4, 1.1])
    lines = swing_cone_outline(apex, frame, limit, length)
    tips = lines[:, 1][np.linalg.norm(lines[:, 1] - apex, axis=1) > 0.5 * length]
    direction = (tips - apex) / length @ frame  # back in the joint frame
    np.testing.assert_allclose(np.linalg.norm(direction, axis=1), 1.0, rtol=1e-12)
    # The swing vector that turns +Y onto each direction (axis ⟂ Y, in the XZ plane).
    angle = np.arccos(np.clip(direction[:, 1], -1.0, 1.0))
    axis = np.cross(np.array([0.0, 1.0, 0.0]), direction)
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    swing = axis * angle[:, None]
    np.testing.assert_allclose(swing[:, 1], 0.0, atol=1e-12)
    turned = np.einsum("nij,j->ni", q2m(quat_exp(swing)).reshape(-1, 3, 3), [0.0, 1.0, 0.0])
    np.testing.assert_allclose(turned, direction, atol=1e-12)
    e = (swing[:, 0] / limit[0]) ** 2 + (swing[:, 2] / limit[1]) ** 2
    np.testing.assert_allclose(e, 1.0, rtol=1e-9)
    n = len(swing)
    limits = np.broadcast_to(limit, (n, 2))
    twist = np.zeros(n)
    twist_limit = np.broadcast_to([-1.0, 1.0], (n, 2))
    fix, _ = limit_correction(0.999 * swing, twist, limits, twist_limit)
    assert not fix.any()  # inside: untouched
    fix, _ = limit_correction(1.01 * swing, twist, limits, twist_limit)
    assert np.all(np.linalg.norm(fix, axis=1) > 0)  # outside: clamped


def test_mesh_edges_are_the_triangle_edges_once():
    vertices, tris = uv_sphere(0.1, 6, 12)
    lines = mesh_edges_outline(vertices, tris)
    pairs = {tuple(sorted((tuple(a), tuple(b)))) for a, b in lines}
    assert len(pairs) == len(lines)
    expected = {tuple(sorted((tuple(vertices[a]), tuple(vertices[b]))))
                for t in tris for a, b in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0]))}
    assert pairs == expected


def test_crosses_are_centred_on_the_points():
    points = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    lines = crosses_outline(points, 0.02).reshape(2, 3, 2, 3)
    np.testing.assert_allclose(lines.mean(axis=(1, 2)), points)
    np.testing.assert_allclose(np.linalg.norm(lines[..., 1, :] - lines[..., 0, :], axis=-1),
                               0.04)
