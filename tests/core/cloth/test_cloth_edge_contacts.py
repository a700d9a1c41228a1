"""Colliders thinner than the grid spacing cannot pass between a cage's vertices: every link
(quad side and diagonal) is pushed out where it crosses a collider between its ends."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core import ColliderKind, ColliderSet
from waft.core.cloth import bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_rest
from waft.core.cloth.constraints import _closest_on_edges_to_segment, collide_edges

from .conftest import still_drive

FRAMES = 30  # 1.25 s at 24 fps


def _sweep(kind, size, radius_a=0.0, radius_b=0.0):
    """A 1 m grid of 6 x 6 vertices (20 cm apart) in the x-z plane, pinned along its top; the
    collider crosses it along +y at 0.8 m/s through the middle of the column gap at x = 0.5."""
    colliders = ColliderSet.create(names=["Leg"], kind=[kind], size=[size],
                                   radius_a=[radius_a], radius_b=[radius_b])
    model = build_cloth_model(cloths=[grid_rest(6, 6)], colliders=colliders)
    t = np.arange(FRAMES) / 24.0
    M = np.repeat(np.eye(4)[None, None], FRAMES, axis=0)
    M[:, 0, :3, 3] = np.stack([np.full(FRAMES, 0.5), -0.4 + 0.8 * t,
                               np.full(FRAMES, -0.5)], axis=1)
    drive = still_drive(model, FRAMES, collider_matrix=M, gravity=(0.0, 0.0, 0.0), radius=0.01)
    return model, M, bake_cloth(model, drive)


def _links(model):
    return (np.concatenate([model.stretch.a, model.shear.a]),
            np.concatenate([model.stretch.b, model.shear.b]))


def test_a_thin_leg_cannot_pass_between_the_vertices():
    """A 6 cm capsule (a leg) against 20 cm spacing: it used to slip between two columns,
    touching no vertex. Now no link comes closer to its axis than its radius plus the cloth's,
    and the cloth is carried along in front of it."""
    model, M, result = _sweep(ColliderKind.CAPSULE, 0.3, 0.03, 0.03)  # z from -0.8 to -0.2
    a, b = _links(model)
    worst = np.inf
    for f in range(FRAMES):
        A = M[f, 0, :3, 3] - (0.0, 0.0, 0.3)
        B = M[f, 0, :3, 3] + (0.0, 0.0, 0.3)
        x = result.positions[f]
        s = _closest_on_edges_to_segment(x[a], x[b], A, B)
        p = x[a] + s[:, None] * (x[b] - x[a])
        d = B - A
        u = np.clip((p - A) @ d / (d @ d), 0.0, 1.0)
        worst = min(worst, float(np.min(np.linalg.norm(p - (A + u[:, None] * d), axis=1))))
    assert worst >= 0.04 - 2e-3  # capsule 3 cm + cloth 1 cm, within 2 mm
    assert result.positions[-1, ~model.pinned, 1].max() > 0.3  # pushed along with the leg
    assert result.contact.any()


def test_a_small_ball_cannot_pass_through_the_middle_of_a_quad():
    """A 10 cm ball through the centre of a 20 cm quad is 10 cm from every side: the quad's
    diagonals stop it."""
    colliders = ColliderSet.create(names=["Ball"], kind=[ColliderKind.ELLIPSOID], size=[0.05])
    model = build_cloth_model(cloths=[grid_rest(6, 6)], colliders=colliders)
    t = np.arange(FRAMES) / 24.0
    M = np.repeat(np.eye(4)[None, None], FRAMES, axis=0)
    M[:, 0, :3, 3] = np.stack([np.full(FRAMES, 0.5), -0.4 + 0.8 * t,
                               np.full(FRAMES, -0.5)], axis=1)
    result = bake_cloth(model, still_drive(model, FRAMES, collider_matrix=M,
                                           gravity=(0.0, 0.0, 0.0), radius=0.01))
    a, b = _links(model)
    worst = np.inf
    for f in range(FRAMES):
        c = M[f, 0, :3, 3]
        x = result.positions[f]
        s = _closest_on_edges_to_segment(x[a], x[b], c, c)
        p = x[a] + s[:, None] * (x[b] - x[a])
        worst = min(worst, float(np.min(np.linalg.norm(p - c, axis=1))))
    assert worst >= 0.06 - 2e-3
    assert result.positions[-1, ~model.pinned, 1].max() > 0.3


@pytest.mark.parametrize("s_expected", [0.0, 0.25, 1.0])
def test_closest_points_between_segments(s_expected):
    """The edge parameter of the closest point to a segment, against a dense search."""
    rng = np.random.default_rng(7)
    xa = rng.normal(size=(50, 3))
    xb = xa + rng.normal(size=(50, 3))
    A, B = np.array([0.1, -0.2, 0.3]), np.array([0.4 + s_expected, 0.5, -0.6])
    s = _closest_on_edges_to_segment(xa, xb, A, B)

    def to_segment(points):  # exact distance of points (..., 3) to segment AB
        d = B - A
        u = np.clip((points - A) @ d / (d @ d), 0.0, 1.0)
        return np.linalg.norm(points - (A + u[..., None] * d), axis=-1)

    grid = np.linspace(0.0, 1.0, 2001)
    dense = to_segment(xa[:, None] + grid[None, :, None] * (xb - xa)[:, None]).min(axis=1)
    mine = to_segment(xa + s[:, None] * (xb - xa))
    assert np.all(mine <= dense + 1e-12)
    assert np.all(dense - mine < 1e-5)  # the grid's own error


def test_colliders_too_wide_to_slip_between_vertices_skip_the_edge_test(monkeypatch):
    """A 30 cm ball against 20 cm quads (half-diagonal 14 cm) meets a vertex before it could
    fit between them: the edge pass is skipped (the speed of dense cages), the thin leg's is
    not."""
    import waft.core.cloth.solver as solver

    tested = []
    original = solver.collide_edges

    def spy(x, a, *args, **kwargs):
        tested.append(a.size)
        return original(x, a, *args, **kwargs)

    monkeypatch.setattr(solver, "collide_edges", spy)
    _sweep(ColliderKind.ELLIPSOID, 0.3)
    assert tested and max(tested) == 0
    tested.clear()
    _sweep(ColliderKind.CAPSULE, 0.3, 0.03, 0.03)
    assert max(tested) > 0


def test_a_thin_body_mesh_leg_cannot_pass_between_the_vertices():
    """The same 6 cm leg as a body mesh (a closed spindle, 3 cm thick, 60 cm long) swept
    through the 20 cm column gap: no vertex is within reach, so only the links' own contacts
    can stop it. Checked against the spindle's exact surface along 41 points of every link
    (in the spindle's normalised coordinates: 1 at its axis, 0 on its surface)."""
    from dataclasses import replace

    from waft.core._bench_meshes import uv_sphere
    from waft.core.mesh_colliders import MeshColliders

    model = build_cloth_model(cloths=[grid_rest(6, 6)])
    t = np.arange(FRAMES) / 24.0
    centre = np.stack([np.full(FRAMES, 0.5), -0.4 + 0.8 * t, np.full(FRAMES, -0.5)], axis=1)
    unit, tris = uv_sphere(1.0, 24, 48)
    axes = np.array([0.03, 0.03, 0.3])
    meshes = MeshColliders.create(names=["Leg"], triangles=[tris],
                                  vertices=[(unit * axes)[None] + centre[:, None]])
    drive = replace(still_drive(model, FRAMES, gravity=(0.0, 0.0, 0.0), radius=0.01),
                    meshes=meshes)
    result = bake_cloth(model, drive)
    a, b = _links(model)
    s = np.linspace(0.0, 1.0, 41)
    deepest = -np.inf
    for f in range(FRAMES):
        x = result.positions[f]
        p = x[a][:, None] + s[None, :, None] * (x[b] - x[a])[:, None]
        q = (p - centre[f]) / axes  # inside the spindle where |q| < 1
        deepest = max(deepest, float(1.0 - np.linalg.norm(q, axis=-1).min()))
    # The links are sampled every 4 cm (`mesh_edge_samples`): between samples a link may sag
    # into the leg by 16 cm² / (8 x 3 cm) = 0.7 cm past the cloth's 1 cm radius band; measured
    # 0.056 (under 2 mm at the leg's middle). Without the links' contacts: 1.0, the leg passes
    # straight through.
    assert deepest <= 0.1
    assert result.positions[-1, ~model.pinned, 1].max() > 0.3  # pushed along with the leg
    assert result.contact.any()


def _distance_to_box(xa, xb, half):
    """Signed distance of segment xa xb to the box [-half, half]^3 (dense samples)."""
    u = xa + np.linspace(0.0, 1.0, 20001)[:, None] * (xb - xa)
    q = np.abs(u) - half
    outside = np.linalg.norm(np.maximum(q, 0.0), axis=1)
    return float(np.where(q.max(axis=1) > 0.0, outside, q.max(axis=1)).min())


@pytest.mark.parametrize("shift", [-2.0e-3, -0.5e-3, 0.5e-3, 2.0e-3, 4.0e-3])
def test_a_link_across_a_box_edge_is_pushed_out_along_the_edge_normal(shift):
    """A diagonal link leaving the top of a box over its -x edge (the cage on a box at 160 Hz,
    substeps 54-56: its near end 4 cm above the top, its far end hanging beside the -x face),
    moved across the edge from cutting it by 2.8 mm to passing 2 mm outside. Tested at its
    point closest to the box's centre against that point's nearest face, a link cutting the
    edge was pushed along -x (or +z), 11-14 mm for its near end, and still cut the cloth's
    1 cm radius by 3.3-3.9 mm after the push, while one just outside went along the edge's
    normal: the next round pushed the other way. One push now takes every one of them to the
    radius, along the same normal, perpendicular to the link and to the edge (the separating
    axis d x e_y of least overlap, Ericson §5.3.3)."""
    half, radius = 0.15, 0.01
    box = ColliderSet.create(names=["Box"], kind=[ColliderKind.BOX], size=[half],
                             friction=[0.0])
    out = np.array([-1.0, 0.0, 1.0]) / np.sqrt(2.0)  # off the edge x = -half, z = half
    x = np.array([[-0.1178, 0.1299, 0.1966], [-0.2082, 0.1777, 0.0557]]) + shift * out
    before = x.copy()
    collide_edges(x, np.array([0]), np.array([1]), np.ones(2), np.full(2, radius),
                  ColliderKind.BOX, np.eye(4), np.eye(4), box, 0, True, np.zeros(2, dtype=bool))
    assert _distance_to_box(x[0], x[1], half) >= radius - 1e-4
    normal = np.cross(before[1] - before[0], [0.0, 1.0, 0.0])
    normal *= -np.sign(normal[0]) / np.linalg.norm(normal)  # outward: toward -x
    for move in x - before:
        assert np.linalg.norm(move) > 0.0
        np.testing.assert_allclose(move / np.linalg.norm(move), normal, atol=1e-9)
