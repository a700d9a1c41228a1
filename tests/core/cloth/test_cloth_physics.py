"""Cloth-core physics against known answers: free fall, catenary, max distance, determinism."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from waft.core import ColliderKind, ColliderSet, SolverSettings
from waft.core.cloth import ClothRest, bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_positions, grid_quads, grid_rest

from .conftest import still_drive

G = 9.81


def test_free_fall_is_exact_with_constraints_off():
    """Every constraint off (compliance inf, no hard vertical): free vertices fall as
    z0 - g t^2 / 2 exactly (Verlet is exact for constant acceleration), pins stay."""
    model = build_cloth_model(cloths=[grid_rest(4, 3)])
    off = dict(stretch_compliance=np.inf, horizontal_compliance=np.inf,
               shear_compliance=np.inf, bend_compliance=np.inf, use_hard_vertical=False,
               damping=0.0, drag=0.0)
    drive = still_drive(model, 25, **off)
    x = bake_cloth(model, drive, SolverSettings(substep=1 / 240)).positions
    t = np.arange(25) / 24.0
    free = ~model.pinned
    expected = model.rest_positions[None, free, 2] - 0.5 * G * t[:, None] ** 2
    np.testing.assert_allclose(x[:, free, 2], expected, atol=1e-9)
    np.testing.assert_array_equal(x[:, model.pinned], np.broadcast_to(
        model.rest_positions[model.pinned], (25, int(model.pinned.sum()), 3)))


def discrete_catenary_sag(*, span: float, length: float, links: int) -> float:
    """Exact sag of `links` equal rigid links with unit masses at the interior joints, hung
    between two supports `span` apart at equal height.

    The horizontal tension H is the same in every link; link k carries the vertical force
    V_k = ((links - 1) / 2 - k) m g, so its angle is atan(V_k / H); H follows from
    sum(l cos) = span (bisection), and the sag is the sum of l sin over the first half.
    """
    ell = length / links
    vertical = (links - 1) / 2.0 - np.arange(links)
    lo, hi = 1e-6, 1e6
    for _ in range(200):
        H = np.sqrt(lo * hi)
        if np.sum(ell * np.cos(np.arctan2(vertical, H))) < span:
            lo = H
        else:
            hi = H
    angles = np.arctan2(vertical, lo)
    return float(np.sum(ell * np.sin(angles[: links // 2])))


def test_two_pinned_strip_sags_like_the_catenary():
    """A 2 x 33 strip (two chains joined by rungs) pinned at its four corners, span 1 m, length
    1.2 m: every column link is a chain link, so each long edge hangs as a catenary
    (a = 0.46954 m, sag 0.29234 m for the continuous chain)."""
    span, length, links = 1.0, 1.2, 32
    cols = links + 1
    flat = grid_positions(2, cols, width=length, height=0.05)
    rest = np.stack([flat[:, 0], flat[:, 2], np.zeros(2 * cols)], axis=1)  # horizontal strip
    pinned = np.zeros(2 * cols, dtype=bool)
    pinned[[0, cols - 1, cols, 2 * cols - 1]] = True
    model = build_cloth_model(cloths=[ClothRest("Chain", rest, grid_quads(2, cols), pinned,
                                                np.full(2 * cols, np.inf))])
    start = rest.copy()
    start[:, 0] *= span / length  # supports `span` apart, the chain bunched in between
    drive = still_drive(model, 48, reference=np.repeat(start[None], 48, axis=0),
                        stretch_compliance=1e-9, horizontal_compliance=1e-9,
                        shear_compliance=np.inf, bend_compliance=np.inf,
                        use_hard_vertical=False, damping=10.0, drag=0.0)
    # Small steps (Macklin 2019): a 32-link near-rigid chain converges with tiny substeps.
    x = bake_cloth(model, drive, SolverSettings(substep=1 / 5000)).positions[-1]
    sag = -x[:, 2].min()
    exact = discrete_catenary_sag(span=span, length=length, links=links)
    assert abs(exact - 0.29234) / 0.29234 < 0.002  # the discrete chain is the catenary
    assert abs(sag - exact) / exact < 0.02, (sag, exact)
    ell = np.linalg.norm(np.diff(x[:cols], axis=0), axis=1)
    assert np.all(np.abs(ell / (length / links) - 1.0) < 0.002)


def swinging_grid(rows=8, cols=6, frames=48, max_distance=np.inf, **params):
    rest = grid_rest(rows, cols, max_distance=max_distance)
    model = build_cloth_model(cloths=[rest])
    t = np.arange(frames) / 24.0
    ref = np.repeat(rest.rest_positions[None], frames, axis=0)
    ref[:, :, 0] += 0.4 * np.sin(2 * np.pi * 1.5 * t)[:, None]
    ref[:, :, 1] += 0.2 * np.sin(2 * np.pi * 0.7 * t)[:, None]
    return model, still_drive(model, frames, reference=ref, **params)


def _swaying_cage(limit: np.ndarray):
    """A cage pinned at the top, its reference swaying ±0.5 m at 1.5 Hz, max distance `limit`
    per vertex × 0.8 (× 1.25 on edges): (model, reference, positions, allowed distance)."""
    rest = grid_rest(8, 6)
    rest = ClothRest(rest.setup, rest.rest_positions, rest.quads, rest.pinned, limit)
    model = build_cloth_model(cloths=[rest])
    frames = 48
    t = np.arange(frames) / 24.0
    ref = np.repeat(rest.rest_positions[None], frames, axis=0)
    ref[:, :, 0] += 0.5 * np.sin(2 * np.pi * 1.5 * t)[:, None]
    drive = still_drive(model, frames, reference=ref, max_distance_scale=0.8,
                        edge_max_distance_scale=1.25)
    x = bake_cloth(model, drive).positions
    return model, ref, x, limit * 0.8 * np.where(model.edge_vertex, 1.25, 1.0)


def test_no_vertex_beyond_its_max_distance():
    limit = np.linspace(0.0, 0.25, 8).repeat(6)  # larger at the hem (Alan Wake)
    model, ref, x, allowed = _swaying_cage(limit)
    distance = np.linalg.norm(x - ref, axis=-1)
    assert np.all(distance <= allowed + 1e-9)
    assert distance[:, limit > 0].max() > 0.5 * allowed[limit > 0].min()  # it is active


def test_vertical_links_never_stretch_with_hard_constraints():
    model, drive = swinging_grid()
    x = bake_cloth(model, drive).positions
    v = model.vertical
    a, b = model.stretch.a[v], model.stretch.b[v]
    ratio = np.linalg.norm(x[:, b] - x[:, a], axis=-1) / model.stretch.rest[v]
    assert ratio.max() < 1.0 + 1e-9


def test_bake_is_deterministic():
    model, drive = swinging_grid(wind_velocity=(3.0, 2.0, 0.0), wind_turbulence=0.5)
    a = bake_cloth(model, drive).positions
    b = bake_cloth(model, drive).positions
    assert np.array_equal(a, b)


def test_sphere_collider_keeps_vertices_outside_and_flags_contact():
    rest = grid_rest(8, 8)
    colliders = ColliderSet.create(names=["Ball"], kind=[ColliderKind.ELLIPSOID], size=[0.2],
                                   friction=[0.3])
    model = build_cloth_model(cloths=[rest], colliders=colliders)
    frames = 36
    M = np.repeat(np.eye(4)[None, None], frames, axis=0)
    M[:, 0, :3, 3] = (0.5, 0.25, -0.6)
    # Blow the cloth onto the ball in front of it (wind along +y).
    drive = still_drive(model, frames, collider_matrix=M, wind_velocity=(0.0, 6.0, 0.0),
                        drag=2.0, radius=0.02)
    result = bake_cloth(model, drive)
    d = np.linalg.norm(result.positions - M[:, 0, None, :3, 3], axis=-1)
    assert d[:, ~model.pinned].min() >= 0.22 - 1e-6
    assert result.contact.any()


@pytest.mark.parametrize(("limit", "friction"), [(np.inf, 0.0), (0.3, 0.5)])
def test_hard_vertical_links_hold_at_the_end_of_every_frame_on_a_ball(limit, friction):
    """A 12 x 12 metre cloth pinned along one edge, laid flat, falls undamped onto a ball: at
    every frame every hard vertical link is at rest length (0.5 %) and no vertex is inside the
    ball. The colliders ran after the sweep and won: the links ended the impact frame 4 % long
    and 0.4-0.8 % while draped (with a max distance and friction)."""
    rest = grid_rest(12, 12, width=1.0, height=1.0, origin=(-0.5, 0.0, 0.0))
    p = rest.rest_positions
    flat = np.stack([p[:, 0], -p[:, 2], np.zeros(len(p))], axis=1)
    rest = dataclasses.replace(rest, rest_positions=flat, max_distance=np.full(len(p), limit))
    colliders = ColliderSet.create(names=["Ball"], kind=[ColliderKind.ELLIPSOID], size=[0.25],
                                   friction=[friction])
    model = build_cloth_model(cloths=[rest], colliders=colliders)
    frames, centre = 61, np.array([0.0, 0.5, -0.45])
    M = np.repeat(np.eye(4)[None, None], frames, axis=0)
    M[:, 0, :3, 3] = centre
    drive = still_drive(model, frames, collider_matrix=M, damping=0.0, drag=0.0,
                        edge_max_distance_scale=1.0)
    result = bake_cloth(model, drive, SolverSettings(substep=1.0 / 240.0))
    assert result.contact.any()
    x = result.positions
    v = model.vertical
    a, b = model.stretch.a[v], model.stretch.b[v]
    ratio = np.linalg.norm(x[:, b] - x[:, a], axis=-1) / model.stretch.rest[v]
    assert np.abs(ratio - 1.0).max() <= 5e-3
    gap = np.linalg.norm(x[:, ~model.pinned] - centre, axis=-1)
    assert gap.min() >= 0.25 + float(drive.params.radius.min()) - 1e-6


@pytest.mark.parametrize("fraction", [0.0, 1.0])
def test_world_motion_fraction(fraction):
    """fraction 0: the cloth moves rigidly with its space (translation only, no sway);
    fraction 1: it lags behind a moving space (world-space inertia)."""
    model = build_cloth_model(cloths=[grid_rest(6, 5)])
    frames = 24
    space = np.repeat(np.eye(4)[None, None], frames, axis=0)
    offset = np.zeros((frames, 3))
    offset[:, 0] = 0.5 * (np.arange(frames) / 24.0) ** 2 * 20  # accelerating along x
    space[:, 0, :3, 3] = offset
    ref = model.rest_positions[None] + offset[:, None]
    # Start hanging at rest: no gravity, so the only motion is from the space.
    drive = still_drive(model, frames, reference=ref, space=space, gravity=(0, 0, 0),
                        world_motion_fraction=fraction, edge_world_motion_scale=1.0)
    x = bake_cloth(model, drive).positions
    lag = np.abs(x[-1, :, 0] - ref[-1, :, 0]).max()
    if fraction == 0.0:
        assert lag < 1e-9
    else:
        assert lag > 0.05


def test_fast_collider_sweeping_through_never_leaves_vertices_inside():
    """A ball crossing the cloth at 6 m/s (2.5 cm per substep): the per-frame broad phase must
    still hand every vertex it can reach to the narrow phase, every substep."""
    rest = grid_rest(10, 10)
    colliders = ColliderSet.create(names=["Ball"], kind=[ColliderKind.ELLIPSOID], size=[0.15])
    model = build_cloth_model(cloths=[rest], colliders=colliders)
    frames = 24
    t = np.arange(frames) / 24.0
    M = np.repeat(np.eye(4)[None, None], frames, axis=0)
    M[:, 0, :3, 3] = np.stack([0.5 + 0 * t, -0.6 + 6.0 * np.clip(t - 0.1, 0, None),
                               np.full(frames, -0.5)], axis=1)
    result = bake_cloth(model, still_drive(model, frames, collider_matrix=M, radius=0.01))
    d = np.linalg.norm(result.positions - M[:, 0, None, :3, 3], axis=-1)
    assert d[:, ~model.pinned].min() >= 0.16 - 1e-6
    assert result.contact.any()


def test_blow_up_raises_divergence_naming_setup_and_frame():
    """Constraints off under an absurd gravity: the free vertices leave every sane bound and the
    bake raises DivergenceError (setup, frame) instead of returning anything."""
    from waft.core import DivergenceError
    from waft.core.cloth import bake_cloth_steps

    model = build_cloth_model(cloths=[grid_rest(4, 3, setup="Cape")])
    drive = still_drive(model, 24, gravity=(0.0, 0.0, -1e5), stretch_compliance=np.inf,
                        horizontal_compliance=np.inf, shear_compliance=np.inf,
                        bend_compliance=np.inf, use_hard_vertical=False)
    job = bake_cloth_steps(model, drive)
    with pytest.raises(DivergenceError, match="Cape") as info:
        for _ in job:
            pass
    assert info.value.setup == "Cape" and 0 < info.value.frame < 24
    assert job.result is None


@pytest.mark.parametrize(("hem_limit", "bound"), [(0.25, 1e-9), (0.02, 0.005), (0.005, 0.005)])
def test_max_distance_and_hard_vertical_links_hold_together(hem_limit, bound):
    """A cage pinned at the top swaying ±0.5 m at 1.5 Hz, its max distance going from the
    waist to `hem_limit` at the hem: at every frame every vertex is within its max distance and
    no vertical link is longer than rest by more than `bound`. The max distance used to run
    after the top-down sweep, stretching the links 0.1 % (growing toward the hem) and 22.6 %
    (shrinking to 2 cm at the hem); ten plain alternating rounds still left 2.2 %, the
    over-relaxed rounds 0.3 %."""
    waist = 0.0 if hem_limit > 0.1 else 0.25
    model, ref, x, allowed = _swaying_cage(np.linspace(waist, hem_limit, 8).repeat(6))
    assert np.all(np.linalg.norm(x - ref, axis=-1) <= allowed + 1e-9)
    v = model.vertical
    a, b = model.stretch.a[v], model.stretch.b[v]
    ratio = np.linalg.norm(x[:, b] - x[:, a], axis=-1) / model.stretch.rest[v]
    assert ratio.max() <= 1.0 + bound


def test_a_moving_collider_drags_the_cloth_lying_on_it():
    """A panel lying on a conveyor plane (its first row pinned) while the plane moves along +X
    at 1 m/s: friction on the motion relative to the plane drags the free rows along (friction
    against the world left them where they lay), and nothing goes through."""
    rest = grid_rest(6, 5)
    flat = rest.rest_positions.copy()
    flat[:, 1], flat[:, 2] = -flat[:, 2], 0.012  # lying on the plane, pinned row at y = 0
    rest = ClothRest(rest.setup, flat, rest.quads, rest.pinned, rest.max_distance)
    colliders = ColliderSet.create(names=["Belt"], kind=[ColliderKind.PLANE], size=[1.0],
                                   friction=[1.0])
    model = build_cloth_model(cloths=[rest], colliders=colliders)
    frames = 25
    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    M[:, 0, 0, 3] = np.arange(frames) / 24.0
    x = bake_cloth(model, still_drive(model, frames, collider_matrix=M)).positions
    far = x[-1, -5:, 0] - flat[-5:, 0]
    assert far.mean() > 0.1
    assert np.all(x[..., 2] > 0.0)
