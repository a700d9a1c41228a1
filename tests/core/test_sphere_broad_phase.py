"""The sphere-collider broad phase (core/strands/constraints/spheres.py) changes the cost, not
the result:
a large head of hair baked with it equals the whole-array pass, also with overlapping spheres
(a particle pushed by one sphere into the next), friction, a capsule between the spheres, and
strands pinned along their length."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from waft import core
from waft.core.strands.constraints import spheres

FPS = 24
CENTRE = np.array([0.0, 0.0, 1.6])


def _head_of_hair(strands: int, particles: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.0, 2.0 * np.pi, strands)
    phi = rng.uniform(0.3, 1.4, strands)
    normal = np.stack([np.sin(phi) * np.cos(theta), np.sin(phi) * np.sin(theta), np.cos(phi)], -1)
    direction = normal + np.array([0.0, 0.0, -0.6])
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    steps = 0.4 / (particles - 1) * np.arange(particles)
    return (CENTRE + 0.102 * normal)[:, None] + direction[:, None] * steps[None, :, None]


def _bake(rest: np.ndarray, shapes, *, frames: int = 8, pinned_middle: bool = False,
          **params) -> np.ndarray:
    S, P = rest.shape[:2]
    kinematic = np.zeros((S, P), dtype=bool)
    kinematic[:, 0] = True
    if pinned_middle:
        kinematic[::3, P // 2] = True
    chains = [core.ChainRest(setup="Hair", name=f"Guide.{s}", rest_positions=rest[s],
                             kinematic=kinematic[s]) for s in range(S)]
    colliders = core.ColliderSet.create(
        names=[f"C{k}" for k in range(len(shapes))], kind=[kind for kind, *_ in shapes],
        size=[size for _, size, *_ in shapes], radius_a=[0.05] * len(shapes),
        radius_b=[0.05] * len(shapes), friction=[f for *_, f, _ in shapes])
    model = core.build_strand_model(chains=chains, colliders=colliders)
    M = np.tile(np.eye(4), (frames, len(shapes), 1, 1))
    t = np.arange(frames) / FPS
    for k, (*_, centre) in enumerate(shapes):
        M[:, k, :3, 3] = centre
        M[:, k, 0, 3] += 0.2 * np.sin(6.0 * t)  # colliders sweep through the hair
    angle = np.radians(540.0) * t  # a fast head turn
    c, s = np.cos(angle), np.sin(angle)
    R = np.zeros((frames, 3, 3))
    R[:, 0, 0], R[:, 0, 1], R[:, 1, 0], R[:, 1, 1], R[:, 2, 2] = c, -s, s, c, 1.0
    reference = np.einsum("fij,spj->fspi", R, rest - CENTRE) + CENTRE
    drive = core.Drive(fps=FPS, reference=reference, kinematic=kinematic,
                       space=np.broadcast_to(np.eye(4), (frames, S, 4, 4)), collider_matrix=M,
                       params=core.StrandParams.defaults(S, P, **params))
    return core.bake(model, drive).positions


SPHERE, CAPSULE = core.ColliderKind.ELLIPSOID, core.ColliderKind.CAPSULE
# (kind, size, friction, centre): overlapping spheres around the shoulders, one capsule.
SHAPES = [
    (SPHERE, 0.10, 0.3, (0.0, 0.0, 1.6)),
    (SPHERE, 0.12, 0.5, (0.12, 0.0, 1.35)),
    (SPHERE, 0.12, 0.0, (0.0, 0.08, 1.33)),
    (CAPSULE, 0.1, 0.3, (-0.1, 0.0, 1.35)),
    (SPHERE, 0.09, 0.8, (-0.12, 0.02, 1.3)),
]


@pytest.mark.parametrize(("shapes", "extra"), [
    (SHAPES, {}),
    ([s for s in SHAPES if s[0] == SPHERE], {"voxel_friction": 0.2}),
    (SHAPES, {"pinned_middle": True, "use_tether": True}),
    (SHAPES, {"stretch_compliance": 1e-6, "max_distance": 0.3}),
])
def test_broad_phase_equals_the_whole_array_pass(monkeypatch, shapes, extra):
    """Up to rounding, with the contact rounds off: their SHAKE steps amplify a rounding
    difference (an ill-conditioned strand turned 7.6e-10 m into 1.6e-8 m in one step here), so
    with them on the two passes agree to 1e-6 m instead (a missed contact is millimetres)."""
    monkeypatch.setattr(core.strands.solver, "CONTACT_ROUNDS", 0)
    rest = _head_of_hair(180, 24)  # 4,320 particles: above the broad-phase threshold
    assert rest.shape[0] * rest.shape[1] >= spheres.MIN_PARTICLES
    calls, hits = [], []
    original = spheres.push_out_candidates

    def counting(*args, **kwargs):
        calls.append(len(args[3]))
        hits.append(original(*args, **kwargs))
        return hits[-1]

    monkeypatch.setattr(core.strands.solver, "push_out_candidates", counting)
    fast = _bake(rest, shapes, radius=0.01, **extra)
    candidates = np.array(calls)
    spheres_threshold, solver_threshold = spheres.MIN_PARTICLES, core.strands.solver.MIN_PARTICLES
    monkeypatch.setattr(spheres, "MIN_PARTICLES", 10**9)
    monkeypatch.setattr(core.strands.solver, "MIN_PARTICLES", 10**9)
    calls.clear()
    full = _bake(rest, shapes, radius=0.01, **extra)
    assert not calls  # the reference run really used the whole-array pass
    blocks = 180 * 3
    assert candidates.size and candidates.max() <= blocks
    assert candidates.mean() < 0.6 * blocks  # most blocks are culled
    assert max(pen for pen, _ in hits) > 0.0  # the hair touches the spheres: not vacuous
    # Equal up to rounding (summation order), which the swinging strands amplify over the bake.
    assert np.abs(fast - full).max() <= 1e-10
    monkeypatch.setattr(core.strands.solver, "CONTACT_ROUNDS", 3)
    full_with_rounds = _bake(rest, shapes, radius=0.01, **extra)
    monkeypatch.setattr(spheres, "MIN_PARTICLES", spheres_threshold)
    monkeypatch.setattr(core.strands.solver, "MIN_PARTICLES", solver_threshold)
    fast_with_rounds = _bake(rest, shapes, radius=0.01, **extra)
    assert np.abs(fast_with_rounds - full_with_rounds).max() <= 1e-6


@pytest.mark.parametrize("between", ["sphere", "capsule"])
def test_a_particle_pushed_into_a_later_sphere_is_still_found(monkeypatch, rig, between):
    """Blocks tested before a push must still find a particle that push moved into a later
    sphere: sphere A (or a capsule) at the origin pushes a block sitting at x = 0.3, whose box
    is out of reach of sphere B, to x = 0.51, inside B."""
    first = (SPHERE, 0.5) if between == "sphere" else (CAPSULE, 0.1)
    kinds = [SPHERE, first[0], SPHERE]  # a far sphere first: its test is done before the push
    colliders = core.ColliderSet.create(names=["Far", "A", "B"], kind=kinds,
                                        size=[0.1, first[1], 1.0], radius_a=[0.5] * 3,
                                        radius_b=[0.5] * 3, friction=[0.0, 0.3, 0.3])
    M = np.tile(np.eye(4), (2, 3, 1, 1))
    M[:, 0, :3, 3] = (0.0, 0.0, 10.0)
    M[:, 2, :3, 3] = (1.4, 0.0, 0.0)  # B's surface at x = 0.4
    chain = np.array([[0.0, 0.0, 5.0]] + [[0.3, 0.0, 0.0]] * 8)  # root far away, block at 0.3
    chain[1:, 1] = 1e-4 * np.arange(8)  # distinct particles, all inside A
    monkeypatch.setattr(core.strands.solver, "MIN_PARTICLES", 0)
    model, drive = rig.build([chain, chain + (0.0, 0.0, 2e-4)], frames=2, colliders=colliders,
                             collider_matrix=M, radius=0.01)
    state, substep = core.strands.solver.start(model, drive)
    c = substep.coefficients
    assert c.sphere_blocks is not None
    ws = core.strands.solver.Workspace(model, 1 / 240)
    x, x_prev = state.x.copy(), state.x_prev.copy()
    core.strands.solver._collide(model, ws, x, x_prev, substep, c)
    full = state.x.copy()
    core.strands.solver._collide(model, ws, full, state.x_prev.copy(), substep,
                         dataclasses.replace(c, sphere_blocks=None))
    # A moved them into B, B back into A (to x = 0.39): the nearest point outside both is on
    # the crease where the offset surfaces |p| = 0.51 and |p - (1.4, 0, 0)| = 1.01 meet, in
    # the plane x = (1.4^2 + 0.51^2 - 1.01^2) / 2.8 (`spheres.resolve_creases`).
    if between == "sphere":
        moved = np.moveaxis(full[:, :, 1:9], 0, -1)
        assert np.allclose(moved[..., 0], (1.96 + 0.51**2 - 1.01**2) / 2.8, atol=1e-9)
        assert np.linalg.norm(moved, axis=-1).min() >= 0.51 - 1e-9
        assert np.linalg.norm(moved - (1.4, 0.0, 0.0), axis=-1).min() >= 1.01 - 1e-9
    else:  # a capsule is not a sphere: B's push stands
        assert np.allclose(full[0, :, 1:9], 0.39, atol=1e-6)
    assert np.abs(x - full).max() <= 1e-12


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40))
def test_cross_columns_is_np_cross_bit_for_bit(seed, n):
    """The crease pass's u x e1 (`spheres.cross_columns`) is written out for speed: it must give
    np.cross's bits, signed zeros included."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=3)
    v = rng.normal(size=(3, n)) * rng.choice([1e-9, 1.0, 1e6], size=(1, n))
    v[:, rng.random(n) < 0.2] = 0.0
    v[rng.integers(3), rng.integers(n)] = -0.0
    u[rng.integers(3)] = rng.choice([0.0, -0.0, u[0]])
    expected = np.cross(u[None, :], v.T).T
    np.testing.assert_array_equal(spheres.cross_columns(u, v).view(np.uint64),
                                  expected.view(np.uint64))
