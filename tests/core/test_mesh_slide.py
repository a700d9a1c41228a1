"""Audit (session 45, issue 13) of the slide to length on body meshes (`solver._slide_to_length`,
`_slide_on_meshes`): a point slid on a mesh ends on its contact surface, not above it; a mesh
body part with a sphere, max distance and tether, read at every substep end."""

from __future__ import annotations

import numpy as np
import pytest

from waft import core
from waft.core._bench_meshes import uv_sphere
from waft.core.colliders import shape_normal
from waft.core.mesh_colliders import MeshColliders
from waft.core.strands import solver
from waft.core.strands._bench_cases import (
    BODY_SPHERES,
    HEAD,
    LIMB_SPHERES,
    TORSO_CHEST,
    TORSO_SHOULDERS,
    combed_down,
    figure_eight,
    groom_every_substep,
    hanging_from_roots,
    head_guides,
    head_turning,
    torso_meshes,
)

# The hair benchmark's head (a sphere: the roots sit on it) and its torso, chest and back, as
# low-poly closed meshes (6 rings of 12 segments: flat faces, edges and corners a strand of
# 5 mm radius wraps around). With the head alone no point slid on a mesh ends inside a
# sphere; one that does goes onto the crease of the two (`_mesh_sphere_crease`), on the
# mesh's tangent plane (the limbs' case, a strict xfail).
HEAD_SPHERE = tuple(b for b in BODY_SPHERES if b[0] == "Head")


def _surface_distance(nearest_triangle, points: np.ndarray, corners: list) -> np.ndarray:
    """The unsigned distance of `points` (n, 3) to the nearest of the meshes' triangles
    (`corners`: per mesh, the (T, 3) corner arrays a, b, c), by brute force
    (conftest.nearest_triangle_distance: no grid, no reach, nothing shared with the collider's
    own query; over every pair the 120 Hz case spent 7.7 of its 28 CPU-s here)."""
    a, b, c = (np.concatenate([mesh[k] for mesh in corners]) for k in range(3))
    return nearest_triangle(points, a, b, c)


@pytest.mark.parametrize(("hz", "spheres"), [
    (120.0, HEAD_SPHERE), (240.0, HEAD_SPHERE),
    pytest.param(240.0, LIMB_SPHERES, marks=pytest.mark.xfail(strict=True, reason=(
        "open (issue 13 audit): with the neck, shoulder and arm spheres as well, points slid "
        "on a mesh end up to 54 um above its contact surface (37 of 1,677 slides more than "
        "1 um): those that ended inside a sphere and went onto the crease "
        "(`_mesh_sphere_crease`), the line where the mesh's and the sphere's tangent planes "
        "meet, which is above the curved contact surface as the push's plane was; without "
        "the crease step 16 nm (0 of 3,762), but the tip wedged between the chest mesh and "
        "a shoulder then stays inside the sphere and short (799d90f: 8.9 %)"))),
], ids=["120Hz", "240Hz", "240Hz-limbs"])
def test_a_point_slid_on_a_low_poly_mesh_ends_on_its_contact_surface(monkeypatch, hz, spheres,
                                                                     nearest_triangle):
    """40 guides of the hair benchmark (32 particles, 0.5 m, 5 mm radius) falling from a head
    turning at 360 deg/s onto a low-poly chest and back (frictionless meshes), 120 and 240 Hz
    substeps: every point the slide put back on a mesh (`_slide_on_meshes`, read as it
    leaves) is at its collision radius from the mesh's surface within 1 um, as a resting
    contact is (measured: 39 / 521 slides, at most 73 / 1.5 nm above, none below). The
    contact surface (the mesh offset by the radius) is a cylinder or sphere of that radius
    round an edge or a corner, and a point left on the push's tangent plane there sits
    above it, a lift with nothing to pay for it: the plane-only slide (the back-to-surface
    step bypassed) leaves points up to 83 / 11 um above (6 / 11 slides more than 1 um), and
    1.74 mm on the slide audit's 24 x 48 UV spheres at 100 guides. (At 480 Hz the slides are
    short and so is the lift, 0.73 um: not a case that can tell the two apart.) And at every
    substep end no particle is inside a mesh's contact surface by more than 1 um."""
    frames, fps, S, P, radius = 13, 24.0, 40, 32, 0.005
    rest = head_guides(S, P, length=0.5)
    model, kinematic, M = hanging_from_roots(rest, spheres, setup="Guide", frames=frames)
    meshes, corners = torso_meshes(frames, rings=6, segments=12)
    gaps = []
    slide_on_meshes = solver._slide_on_meshes

    def reading(slid, foot, rho, n, on, ids, xf, rest_, meshes_, Ps, spheres=None):
        slide_on_meshes(slid, foot, rho, n, on, ids, xf, rest_, meshes_, Ps, spheres)
        gaps.append(_surface_distance(nearest_triangle, slid[:, on].T, corners)
                    - meshes_[3].take(ids[on]))

    monkeypatch.setattr(solver, "_slide_on_meshes", reading)
    params = core.StrandParams.defaults(S, P, shape_stiffness=0.05, radius=radius,
                                        voxel_friction=0.2, voxel_resolution=32)
    x = groom_every_substep(model, rest, kinematic, M, params, frames=frames, fps=fps, hz=hz,
                            meshes=meshes)
    gap = np.concatenate(gaps)
    assert gap.size >= 20, gap.size  # the scene slides on the meshes
    assert gap.max() <= 1e-6, (gap.max(), int((gap > 1e-6).sum()), gap.size)
    assert gap.min() >= -1e-6, gap.min()
    # Outside at every substep end (the meshes are convex: a point inside is nearer the
    # surface than its radius).
    depth = min(float((_surface_distance(nearest_triangle, x[f, :, 1:].reshape(-1, 3), corners)
                       - radius).min())
                for f in range(len(x)))
    assert depth >= -1e-6, depth


CHEST = TORSO_CHEST


def _torso_on_a_mesh(nearest_triangle, shoulders: bool):
    """test_slide_audit's torso scene with its chest sphere as a closed UV-sphere body mesh
    (0.13 m, 24 x 48, frictionless, carried along): eight 0.4 m strands of 31 segments from
    the 0.1 m head sphere, the shoulder capsule when `shoulders`, all on a 1.5 Hz figure-eight
    at 2 g, max distance 15 cm, tether on, 480 Hz read at every substep end. Returns the max
    distance excess (F, S, P), the segments' relative errors (F, S, P-1), the tether excess,
    and the deepest point inside a collider (metres, negative inside)."""
    P, S, hz, g, radius, length = 32, 8, 480.0, 2.0, 0.005, 0.4
    frames = int(0.5 * hz) + 1
    t = np.arange(frames) / hz
    rests = combed_down(lambda points, margin: _clear(points, margin, shoulders), strands=S,
                        particles=P, radius=radius, length=length)
    K = 2 if shoulders else 1
    colliders = core.ColliderSet.create(names=["Head", "Shoulders"][:K], kind=[0, 1][:K],
                                        size=[0.1, 0.14][:K], radius_a=[0, 0.06][:K],
                                        radius_b=[0, 0.06][:K], friction=[0.0] * K)
    local = np.tile(np.eye(4), (K, 1, 1))
    local[0, :3, 3] = HEAD
    if shoulders:
        local[1, :3, :3] = [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]  # the capsule along x
        local[1, :3, 3] = TORSO_SHOULDERS
    offset = figure_eight(t, g=g)
    M = np.tile(local, (frames, 1, 1, 1))
    M[:, :, :3, 3] += offset[:, None]
    v, tri = uv_sphere(0.13, 24, 48)
    meshes = MeshColliders.create(names=["Chest"], triangles=[tri],
                                  vertices=[v[None] + CHEST + offset[:, None]], friction=[0.0])
    model = core.build_strand_model(chains=rests, colliders=colliders)
    params = core.StrandParams.defaults(S, P, radius=radius, max_distance=0.15,
                                        wind_turbulence=0.0, wind_gust=0.0)
    assert params.use_tether.all()
    reference = np.stack([r.rest_positions for r in rests])[None] + offset[:, None, None]
    drive = core.Drive(fps=hz, reference=reference,
                       kinematic=np.stack([r.kinematic for r in rests]),
                       space=np.broadcast_to(np.eye(4), (frames, S, 4, 4)), collider_matrix=M,
                       params=params, meshes=meshes)
    x = core.bake(model, drive, core.SolverSettings(substep=1.0 / hz)).positions
    beyond = np.linalg.norm(x - reference, axis=-1) - 0.15
    stretch = np.abs(np.linalg.norm(np.diff(x, axis=2), axis=-1) / (length / (P - 1)) - 1.0)
    tether = float((np.linalg.norm(x - x[:, :, :1], axis=-1) - model.tether_length[None]).max())
    depth = np.inf
    corners = [np.moveaxis(v[tri], 1, 0)]
    a, b, c = corners[0]
    normal = np.cross(b - a, c - a)
    for f in range(frames):
        points = x[f, :, 1:].reshape(-1, 3)
        for k in range(K):
            _, sd = shape_normal(int(colliders.kind[k]), points, M[f, k], np.linalg.inv(M[f, k]),
                                 colliders, k)
            depth = min(depth, float(sd.min()) - radius)
        # The mesh is convex: a point is inside when behind every face's plane.
        p = points - CHEST - offset[f]
        p = p[np.linalg.norm(p, axis=1) < 0.13 + 0.02]
        if len(p):
            inside = (np.einsum("ntk,tk->nt", p[:, None] - a[None], normal) < 0.0).all(axis=1)
            d = _surface_distance(nearest_triangle, p, corners)
            depth = min(depth, float((np.where(inside, -d, d) - radius).min()))
    return beyond, stretch, tether, depth


def _clear(points: np.ndarray, margin: float, shoulders: bool) -> bool:
    """Whether `points` keep `margin` off the head, the chest and (`shoulders`) the capsule
    of `_torso_on_a_mesh`."""
    if (np.linalg.norm(points - HEAD, axis=1) < 0.1 + margin).any():
        return False
    if (np.linalg.norm(points - CHEST, axis=1) < 0.13 + margin).any():
        return False
    if not shoulders:
        return True
    q = points - TORSO_SHOULDERS
    along = np.clip(q[:, 0], -0.14, 0.14)
    return bool((np.hypot(np.hypot(q[:, 0] - along, q[:, 1]), q[:, 2]) >= 0.06 + margin).all())


def test_strands_on_a_mesh_chest_and_a_head_sphere_keep_every_limit_at_every_substep_end(
        nearest_triangle):
    """`_torso_on_a_mesh` without the shoulders: a body mesh and a sphere, max distance and
    tether. Every particle within its max distance to 0.1 um (measured: 3e-16 m; 12 nm beyond
    at 2 of 241 substep ends, a particle resting on the chest mesh, before its push after the
    clamp was put where contact and ball meet, solver `_onto_limit_crease`),
    within its tether, every segment within 0.5 % (measured 7e-13; 0.0098 % before), none inside a
    collider by more than 1 um (the 1,432 particle-substeps within 0.5 mm of the mesh)."""
    beyond, stretch, tether, depth = _torso_on_a_mesh(nearest_triangle, shoulders=False)
    assert depth >= -1e-6, depth
    assert beyond.max() <= 1e-7, (beyond.max(), int((beyond.max(axis=(1, 2)) > 1e-9).sum()))
    assert tether <= 1e-9, tether
    assert stretch.max() <= 5e-3, (stretch.max(), int((stretch.max(axis=(1, 2)) > 5e-3).sum()))


def test_strands_on_a_mesh_chest_head_and_shoulders_keep_every_limit_at_every_substep_end(
        nearest_triangle):
    """`_torso_on_a_mesh` with the shoulder capsule: as the test above. Measured: 2.5e-16 m
    beyond, segments within 0.031 %; before the sweep kept the colliders' pushes as
    half-spaces (test_slide_audit's torso) 0.26 mm beyond (26 of 241) and 0.54 % (1), on
    particles resting on the capsule 10 cm from the chest mesh."""
    beyond, stretch, tether, depth = _torso_on_a_mesh(nearest_triangle, shoulders=True)
    assert depth >= -1e-6, depth
    assert beyond.max() <= 1e-7, (beyond.max(), int((beyond.max(axis=(1, 2)) > 1e-9).sum()))
    assert tether <= 1e-9, tether
    assert stretch.max() <= 5e-3, (stretch.max(), int((stretch.max(axis=(1, 2)) > 5e-3).sum()))


def test_a_drape_on_body_meshes_bakes_the_same_bits_at_24_30_and_60_fps():
    """40 guides of the hair benchmark on the head turning at 360 deg/s, falling onto the
    chest and back as 24 x 48 UV-sphere body meshes (frictionless), the inputs sampled on the
    240 Hz substep grid as the add-on passes them (`Drive.fps` = 240, `output_fps` = the
    scene's rate): the 24, 30 and 60 fps bakes give the same bits at the times they share
    (every 1/6 s over 0.5 s). The meshes' queries, the slide on them and its crease step
    depend on the substep, never on the output rate. (Inputs sampled once per frame instead,
    linear in between, the tips part by up to 30 mm between 24 and 60 fps, 3.6 mm RMS, the
    roots' own paths 0.8 mm apart: the input's sampling, as on spheres, 22 mm.)"""
    S, P, hz, seconds = 40, 32, 240.0, 0.5
    rest = head_guides(S, P, length=0.5)
    samples = int(round(seconds * hz)) + 1
    model, kinematic, M = hanging_from_roots(rest, HEAD_SPHERE, setup="Guide", frames=samples)
    meshes = torso_meshes(samples, rings=24, segments=48)[0]
    params = core.StrandParams.defaults(S, P, shape_stiffness=0.05, radius=0.005,
                                        voxel_friction=0.2, voxel_resolution=32)
    times = np.arange(0.0, seconds + 1e-9, 1.0 / 6.0)
    shared = {}
    for fps in (24, 30, 60):
        drive = core.Drive(fps=hz, reference=head_turning(rest, samples, hz),
                           kinematic=np.broadcast_to(kinematic, (S, P)).copy(),
                           space=np.broadcast_to(np.eye(4), (samples, S, 4, 4)),
                           collider_matrix=M, params=params, meshes=meshes,
                           output_fps=float(fps), output_frames=int(round(seconds * fps)) + 1)
        x = core.bake(model, drive, core.SolverSettings(substep=1.0 / hz)).positions
        shared[fps] = x[np.round(times * fps).astype(int)]
    assert not np.array_equal(shared[60][-1], shared[60][0])  # the hair moved
    for fps in (24, 30):
        assert np.array_equal(shared[fps], shared[60]), (
            fps, float(np.abs(shared[fps] - shared[60]).max()))
