"""Strands in the crease between two overlapping colliders (a shoulder and the back): the exact
lengths and the colliders agree at the end of every substep (`solver._lengths_after_contact`,
CONTACT_LENGTH_PASSES, and `spheres.resolve_creases`).

One pass of FTL sweep + colliders after the contacts left tips wedged in the crease 1.6 % long
(the two colliders push a particle away from its parent, and alternating projections creep
along the crease), and the first segment of a root inside the head's particle shell up to
1.1 % long. With two passes the tips were still 0.65 % long and 0.1 mm inside a sphere: each
sphere's push could leave a particle inside the one before; the nearest point outside both
(out of one along its normal, or onto the circle where they meet, at length from the parent)
took them to 0.13 % and 0.
"""

from __future__ import annotations

import numpy as np
import pytest

HEAD = np.array([0.0, 0.0, 1.6])
SPHERES = (("Head", (0.0, 0.0, 1.6), 0.1), ("Shoulder.L", (0.17, 0.0, 1.38), 0.08),
           ("Shoulder.R", (-0.17, 0.0, 1.38), 0.08), ("Back", (0.0, -0.05, 1.3), 0.13))
RADIUS = 0.005
# No damping, no drag, no pull toward the groom (a spring whose energy is not counted).
PASSIVE = dict(damping=0.0, drag=0.0, shape_stiffness=0.0)


def _case(rig, *, turn: bool, frames: int, strands: int = 60, particles: int = 24,
          passive: bool = False):
    """Strands from the back of a head sphere over the shoulders and the back; the head turns
    back and forth (`turn`) or everything is still (the strands fall into place)."""
    from waft import core
    from waft.core.strands._bench_cases import hanging_from_roots

    S, P, length = strands, particles, 0.45
    rng = np.random.default_rng(2)
    theta = rng.uniform(1.1 * np.pi, 1.9 * np.pi, S)
    phi = rng.uniform(0.6, 1.3, S)
    normal = np.stack([np.sin(phi) * np.cos(theta), np.sin(phi) * np.sin(theta), np.cos(phi)], -1)
    direction = normal + (0.0, 0.0, -0.4)
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    steps = length / (P - 1) * np.arange(P)
    rest = (HEAD + 0.102 * normal)[:, None] + direction[:, None] * steps[None, :, None]
    model, kinematic, M = hanging_from_roots(rest, SPHERES, setup="Crease", frames=frames)
    angle = np.pi * np.arange(frames) / 24 * np.sin(np.arange(frames) / 6) if turn else \
        np.zeros(frames)
    R = np.zeros((frames, 3, 3))
    R[:, 0, 0], R[:, 0, 1] = np.cos(angle), -np.sin(angle)
    R[:, 1, 0], R[:, 1, 1], R[:, 2, 2] = np.sin(angle), np.cos(angle), 1.0
    reference = np.einsum("fij,spj->fspi", R, rest - HEAD) + HEAD
    M[:, 0, :3, :3] = R  # the head sphere turns with its hair
    params = core.StrandParams.defaults(S, P, radius=RADIUS, **(PASSIVE if passive else {}))
    drive = core.Drive(fps=24.0, reference=reference,
                       kinematic=np.broadcast_to(kinematic, (S, P)).copy(),
                       space=np.broadcast_to(np.eye(4), (frames, S, 4, 4)),
                       collider_matrix=M, params=params)
    x = core.bake(model, drive, core.SolverSettings(substep=1 / 240)).positions
    return rest, x


def _stretch(rest, x):
    rest_length = np.linalg.norm(np.diff(rest, axis=1), axis=-1)
    return np.abs(np.linalg.norm(np.diff(x, axis=-2), axis=-1) / rest_length - 1.0)


def _inside(x):
    """Deepest point (after the roots) inside a sphere's particle shell, per frame, metres."""
    depth = [r + RADIUS - np.linalg.norm(x[..., 1:, :] - np.array(c), axis=-1)
             for _, c, r in SPHERES]
    return np.max(depth, axis=0).max(axis=(1, 2))


def test_strands_in_a_crease_keep_their_lengths_and_stay_outside(rig):
    """A head turning back and forth: the tips slide into the creases between the shoulders
    and the back. At every frame every segment is within 0.5 % of its length (one pass left
    1.6 %, two 0.65 %) and no particle is inside a sphere (two passes left 0.1 mm)."""
    rest, x = _case(rig, turn=True, frames=30)
    assert _stretch(rest, x).max() <= 0.005
    assert _inside(x).max() <= 1e-9
    assert (_inside(x)[8:] > -1e-4).all()  # they do lie in contact once the hair has fallen


@pytest.mark.parametrize("strands", [1, 60])
def test_a_passive_strand_falling_into_a_crease_gains_no_energy(rig, strands):
    """Nothing animated: the strands fall over the shoulders and the back. From any frame to
    any later one the energy does not rise by more than 1 % of the fall's: the passes after
    the contacts are position fixes, which move the previous positions with them (no
    velocity)."""
    rest, x = _case(rig, turn=False, frames=72, strands=strands, passive=True)
    assert _stretch(rest, x[8:]).max() <= 0.01
    v = (x[2:] - x[:-2]) * 24.0 / 2.0
    energy = 0.5 * np.sum(v[:, :, 1:] ** 2, axis=(1, 2, 3)) + \
        9.81 * np.sum(x[1:-1, :, 1:, 2], axis=(1, 2))
    fall = energy[0] - energy.min()
    assert fall > 0.0
    rise = np.max(energy - np.minimum.accumulate(energy))
    assert rise <= 0.01 * fall, (rise, fall)


@pytest.mark.parametrize("kind", ["sphere", "capsule"])
def test_a_collider_nothing_touches_changes_nothing(rig, kind):
    """A swinging chain and a collider a metre away: the bake is bit for bit the bake without
    it. The passes after contact used to run whenever a collider existed, and their re-sweep
    of lengths that were already exact changed the last bits every substep."""
    from waft import core

    rest = rig.vertical_chain(bones=6, length=0.1)
    motion = lambda t: np.stack([0.3 * np.sin(5 * t), 0 * t, 0 * t], axis=-1)  # noqa: E731
    plain_model, plain_drive = rig.build([rest], frames=24, root_motion=motion)
    alone = core.bake(plain_model, plain_drive).positions
    if kind == "sphere":
        shapes = core.ColliderSet.create(names=["Far"], kind=[core.ColliderKind.ELLIPSOID],
                                         size=[0.1], friction=[0.3])
    else:
        shapes = core.ColliderSet.create(names=["Far"], kind=[core.ColliderKind.CAPSULE],
                                         size=[0.2], radius_a=[0.05], radius_b=[0.05],
                                         friction=[0.3])
    far = np.tile(np.eye(4), (24, 1, 1, 1))
    far[:, 0, :3, 3] = (2.0, 0.0, 0.0)
    model, drive = rig.build([rest], frames=24, root_motion=motion, colliders=shapes,
                             collider_matrix=far)
    np.testing.assert_array_equal(core.bake(model, drive).positions, alone)


@pytest.mark.parametrize("seed", range(4))
def test_a_particle_in_the_lens_of_two_spheres_goes_to_the_nearest_point_outside_both(seed):
    """`resolve_creases` against a brute-force search: particles a later sphere's push left
    inside an earlier, overlapping sphere end outside both, no farther than the nearest of
    20,000 sampled points of the outside's boundary (both spheres' surfaces outside the other
    one, and the crease circle); particles outside the earlier sphere do not move."""
    from waft.core.strands.constraints.spheres import resolve_creases

    rng = np.random.default_rng(seed)
    ca, cb = rng.normal(size=3), rng.normal(size=3)
    gap = np.linalg.norm(cb - ca)
    ra, rb = rng.uniform(0.6, 1.0) * gap, rng.uniform(0.6, 1.0) * gap  # they overlap
    radius = np.full(200, 0.01)
    # Points around the lens; B has pushed them out of itself (onto its shell) or left them.
    p = ca + rng.normal(size=(200, 3)) * ra
    d = p - cb
    length = np.linalg.norm(d, axis=1, keepdims=True)
    p = np.where(length < rb + 0.01, cb + d * (rb + 0.01) / length, p)
    x = np.ascontiguousarray(p.T).reshape(3, 1, 200)
    before = x.copy()
    applied = [(ca, ra, np.zeros(0, np.int64)), (cb, rb, np.arange(200))]
    resolve_creases(x, radius, 0.01, applied)
    out = x.reshape(3, -1).T
    assert (np.linalg.norm(out - ca, axis=1) >= ra + 0.01 - 1e-9).all()
    assert (np.linalg.norm(out - cb, axis=1) >= rb + 0.01 - 1e-9).all()
    was_outside = np.linalg.norm(p - ca, axis=1) >= ra + 0.01
    np.testing.assert_array_equal(out[was_outside], before.reshape(3, -1).T[was_outside])
    # Boundary samples of the outside of both offset spheres.
    samples = []
    for c, r, other, r_other in ((ca, ra, cb, rb), (cb, rb, ca, ra)):
        u = rng.normal(size=(10_000, 3))
        q = c + u / np.linalg.norm(u, axis=1, keepdims=True) * (r + 0.01)
        samples.append(q[np.linalg.norm(q - other, axis=1) >= r_other + 0.01])
    samples = np.concatenate(samples)
    moved = ~was_outside
    nearest = np.min(np.linalg.norm(p[moved, None] - samples[None], axis=2), axis=1)
    assert (np.linalg.norm(out[moved] - p[moved], axis=1) <= nearest + 1e-9).all()


@pytest.mark.parametrize("seed", range(4))
def test_a_particle_sent_to_the_crease_keeps_its_length_to_its_parent_where_it_can(seed):
    """With the rest lengths given, a particle that goes onto the crease (nothing outside both
    spheres nearer) goes to the crease point at its rest length from its parent nearest to it,
    when the crease passes at that length: outside both, on the crease, at length to 1e-9. A
    tip thrown into the lens of chest and shoulder was left 40 % long on the nearest point."""
    from waft.core.strands.constraints.spheres import resolve_creases

    rng = np.random.default_rng(seed)
    ca, cb = np.zeros(3), np.array([1.0, 0.0, 0.0])
    ra, rb = 0.7, 0.6
    n = 400
    # Particle k's parent is k - 1 (one strand): even ids are parents near the crease, odd ids
    # the particles, deep in the lens.
    rest = np.zeros(n)
    rest[1::2] = rng.uniform(0.05, 0.4, n // 2)
    x = np.zeros((3, 1, n))
    flat = x.reshape(3, -1)
    angle = rng.uniform(0.0, 2.0 * np.pi, n // 2)
    ring = np.stack([np.full(n // 2, 0.55), np.cos(angle), np.sin(angle)])
    flat[:, 0::2] = ring * np.array([[1.0], [0.75], [0.75]])  # outside both, near the crease
    flat[:, 1::2] = np.array([[0.5], [0.0], [0.0]]) + 0.05 * rng.normal(size=(3, n // 2))
    radius = np.zeros(n)
    ids = np.arange(1, n, 2)
    applied = [(ca, ra, np.zeros(0, np.int64)), (cb, rb, ids)]
    # B has pushed them out of itself first, as it would have.
    d = flat[:, ids] - cb[:, None]
    flat[:, ids] = cb[:, None] + d * (rb / np.linalg.norm(d, axis=0))
    resolve_creases(x, radius, 0.0, applied, rest)
    out, parent = flat[:, ids].T, flat[:, ids - 1].T
    assert (np.linalg.norm(out - ca, axis=1) >= ra - 1e-9).all()
    assert (np.linalg.norm(out - cb, axis=1) >= rb - 1e-9).all()
    on_crease = np.isclose(np.linalg.norm(out - ca, axis=1), ra, atol=1e-9) & \
        np.isclose(np.linalg.norm(out - cb, axis=1), rb, atol=1e-9)
    assert on_crease.mean() > 0.5  # most had no nearer point outside both
    # The crease: x = (1 + ra^2 - rb^2) / 2, radius rho; a point on it at the rest length from
    # the parent exists when the parent's distance to the circle spans the length.
    a = (1.0 + ra * ra - rb * rb) / 2.0
    rho = np.sqrt(ra * ra - a * a)
    radial = np.hypot(parent[:, 1], parent[:, 2])
    near, far = (np.hypot(parent[:, 0] - a, radial - rho), np.hypot(parent[:, 0] - a, radial + rho))
    reachable = on_crease & (near <= rest[ids]) & (rest[ids] <= far)
    assert reachable.sum() > 20  # not vacuous
    length = np.linalg.norm(out - parent, axis=1)
    np.testing.assert_allclose(length[reachable], rest[ids][reachable], atol=1e-9)
