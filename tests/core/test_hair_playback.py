"""The compact render-strand bake's carrier (core/hair/playback.py): the layout the rebuild tree
reads, and collider records whose shapes are the solvers' shapes. ``_decoded`` restates, in
NumPy, what the geometry-nodes tree computes from a record (addon/hair/rebuild_nodes.py)."""

from __future__ import annotations

import numpy as np

from waft.core.colliders import ColliderKind, ColliderSet, shape_normal
from waft.core.hair import bind_strands, collide_strands
from waft.core.hair import playback as pb

RNG = np.random.default_rng(7)


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _decoded(record: np.ndarray, x: np.ndarray):
    """(normal, signed distance) at points x from one record, as the rebuild tree does."""
    kind, _bound, f0 = record[0]
    v = record[2:14]
    f1, f2, f3 = record[14]
    f4 = record[15, 0]
    if kind == pb.SPHERE:
        d = x - v[0]
        return _unit(d), np.linalg.norm(d, axis=-1) - f0
    if kind == pb.ELLIPSOID:
        s = _unit((x @ v[4:7].T + v[7]) / f0)
        p = f0 * s @ v[0:3] + v[3]
        n = _unit(s @ v[4:7])
        return n, np.einsum("nk,nk->n", x - p, n)
    if kind == pb.CAPSULE:
        A, axis, B = v[0], v[1], v[2]
        ra, rb, length, a, b = f0, f1, f2, f3, f4
        rel = x - A
        y = rel @ axis
        radial = rel - y[:, None] * axis
        rho = np.linalg.norm(radial, axis=-1)
        along = a * y - b * rho
        n = a * _unit(radial) + b * axis
        sd = a * rho + b * y - ra
        low, high = along < 0.0, along > a * length
        n[low], sd[low] = _unit(x[low] - A), np.linalg.norm(x[low] - A, axis=-1) - ra
        n[high], sd[high] = _unit(x[high] - B), np.linalg.norm(x[high] - B, axis=-1) - rb
        return n, sd
    if kind == pb.BOX:
        half = f0
        local = x @ v[4:7].T + v[7]
        outside = np.abs(local).max(axis=-1) > half
        gap = (half - np.abs(local)) * v[8]
        face = np.argmin(gap, axis=-1)
        on_face = np.take_along_axis(local, face[:, None], -1)[:, 0]
        sign = np.where(on_face >= 0.0, 1.0, -1.0)
        inside_point = local.copy()
        inside_point[np.arange(len(x)), face] = sign * half
        surface = np.where(outside[:, None], np.clip(local, -half, half), inside_point) @ v[0:3] \
            + v[3]
        n = np.where(outside[:, None], _unit(x - surface), v[9 + face] * sign[:, None])
        return n, np.einsum("nk,nk->n", x - surface, n)
    assert kind == pb.PLANE
    return np.broadcast_to(v[0], x.shape), x @ v[0] - f0


def _matrix(scale, angle, at):
    c, s = np.cos(angle), np.sin(angle)
    M = np.eye(4)
    M[:3, :3] = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]) @ np.diag(scale)
    M[:3, 3] = at
    return M


CASES = [  # (kind, matrix, size, radius_a, radius_b, expected record kind)
    (ColliderKind.ELLIPSOID, _matrix((1.2, 1.2, 1.2), 0.3, (0, 0, 1)), 0.1, 0, 0, pb.SPHERE),
    (ColliderKind.ELLIPSOID, _matrix((1.5, 0.7, 1.0), 0.4, (0, 0, 1)), 0.1, 0, 0, pb.ELLIPSOID),
    (ColliderKind.CAPSULE, _matrix((1.0, 1.1, 0.9), 0.8, (0.1, 0, 1)), 0.08, 0.05, 0.02,
     pb.CAPSULE),
    (ColliderKind.CAPSULE, _matrix((1, 1, 1), 0.2, (0, 0, 1)), 0.01, 0.09, 0.02, pb.SPHERE),
    (ColliderKind.BOX, _matrix((1.0, 1.6, 0.8), 0.6, (0, 0.1, 1)), 0.07, 0, 0, pb.BOX),
    (ColliderKind.PLANE, _matrix((1, 1, 1), 0.3, (0, 0, 0.95)), 1.0, 0, 0, pb.PLANE),
]


def test_every_record_is_the_solvers_shape_inside_and_outside():
    for kind, M, size, ra, rb, code in CASES:
        record = pb.collider_record(kind, M, size=size, radius_a=ra, radius_b=rb)
        assert int(record[0, 0]) == code
        x = M[:3, 3] + RNG.normal(scale=0.12, size=(4000, 3))  # inside and outside
        colliders = ColliderSet.create(names=["C"], kind=[kind], size=[size], radius_a=[ra],
                                       radius_b=[rb], friction=[0.0])
        n_ref, sd_ref = shape_normal(int(kind), x, M, np.linalg.inv(M), colliders, 0)
        n, sd = _decoded(record, x)
        np.testing.assert_allclose(sd, sd_ref, atol=1e-12, err_msg=str(kind))
        np.testing.assert_allclose(n, n_ref, atol=1e-9, err_msg=str(kind))
        assert (sd < 0).sum() > 50 and (sd > 0).sum() > 50  # both sides were tested
        centre, bound = record[1], record[0, 1]
        assert np.all(sd[np.linalg.norm(x - centre, axis=1) > bound] > -1e-12)


def test_carrier_layout_is_what_the_tree_reads():
    G, P, K = 5, 6, 2
    guides = RNG.normal(size=(G, P, 3)).astype(np.float32)
    guides[:, :, 2] -= np.arange(P)  # hanging, non-degenerate
    binding = bind_strands(roots=guides[:, 0] + RNG.normal(scale=0.01, size=(G, 3)),
                           guide_rest=guides, seed=3)
    records = np.stack([pb.collider_record(*case[:2], size=case[2], radius_a=case[3],
                                           radius_b=case[4]) for case in CASES[:K]])
    scalp = np.eye(4)
    scalp[:3, 3] = (1.0, 2.0, 3.0)
    points = pb.carrier_points(binding, guides, scalp_matrix=scalp, clump=0.25, randomness=0.5,
                               root_radius=0.003, tip_radius=0.001, records=records, passes=3)
    assert points.dtype == np.float32 and len(points) == sum(pb.carrier_sizes(G, P, K))
    np.testing.assert_array_equal(points[3], (1.0, 2.0, 3.0))
    np.testing.assert_allclose(points[4:7], [(0.25, 0.5, K), (G, P, 3), (0.003, 0.001, 0)],
                               rtol=1e-7)
    for g in range(G):
        for k in range(P):
            np.testing.assert_array_equal(points[pb.HEADER + g * P + k], guides[g, k])
        frame = points[pb.HEADER + G * P + 2 * g]
        np.testing.assert_array_equal(frame, (*binding.corners[g, 1:], binding.flat[g]))
    first = pb.HEADER + G * P + 2 * G
    np.testing.assert_array_equal(points[first:].reshape(K, pb.COLLIDER_POINTS, 3),
                                  records.astype(np.float32))


def test_collision_reports_the_passes_it_made():
    head = _matrix((1, 1, 1), 0.0, (0, 0, 1.6))
    neck = _matrix((1, 1, 1), 0.0, (0.0, 0.0, 1.45))
    colliders = ColliderSet.create(names=["Head", "Neck"], kind=[ColliderKind.ELLIPSOID] * 2,
                                   size=[0.1, 0.08], radius_a=[0, 0], radius_b=[0, 0],
                                   friction=[0, 0])
    s = np.linspace(0.0, 1.0, 10)[None, :, None]
    roots = np.array([0.0, 0.0, 1.6]) + 0.1 * _unit(RNG.normal(size=(400, 3)))
    tips = roots + np.array([0.0, 0.0, -0.5])
    strands = (roots[:, None] + s * (tips - roots)[:, None]).astype(np.float32)
    far = strands + np.float32(5.0)
    assert collide_strands(far, np.full(10, 0.002), colliders,
                           np.stack([head, neck])) == (0, 1)
    result = collide_strands(strands, np.full(10, 0.002), colliders, np.stack([head, neck]))
    assert result.moved > 100 and 2 <= result.passes <= 8  # head and neck overlap
