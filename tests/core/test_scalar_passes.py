"""Small rigs run some strand passes on Python floats (a tail's handful of constraints cost
less there than NumPy's per-call overhead). They must give the vectorised passes' bits
exactly, whatever the input: the same operations in the same order, each rounded by IEEE 754
alike. Fuzzed here pass against pass, and a whole bake of a small rig against the same rig
solved with the scalar passes switched off."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import waft.core.shake as shake
import waft.core.strands.constraints.bending as bending
import waft.core.strands.constraints.ftl as ftl
import waft.core.strands.solver as solver
from waft import core


def _state(rng, S: int, Ps: int) -> np.ndarray:
    x = np.zeros((3, S, Ps))
    x[2] = -0.1 * np.arange(Ps)[None]
    x += rng.normal(scale=0.03, size=x.shape)
    return x


def _bend_coefficients(rng: np.random.Generator, S: int, Ps: int) -> bending.BendCoefficients:
    """Random bending of S strands of Ps particles: mixed weights (pinned ones too), a tenth of
    the joints off, rest offsets up to 5 cm, rigid to soft compliance, 240 Hz."""
    w = rng.choice([0.0, 0.5, 1.0, 2.0], size=(S, Ps))
    active = rng.random((S, Ps)) > 0.1
    return bending.BendCoefficients(w=w, active=active,
                                    rest_offset=rng.uniform(0.0, 0.05, (S, Ps - 2)),
                                    compliance=rng.choice([0.0, 1e-6, 1e-3], size=(S, Ps - 2)),
                                    h=1.0 / 240.0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), S=st.integers(1, 4), Ps=st.integers(3, 10),
       passes=st.integers(1, 3))
def test_scalar_bending_is_the_vectorised_pass_bit_for_bit(seed, S, Ps, passes):
    rng = np.random.default_rng(seed)
    c = _bend_coefficients(rng, S, Ps)
    if not c:
        return
    assert c.scalar is not None  # S * Ps <= SCALAR_PARTICLES: this size runs on floats
    x_scalar = _state(rng, S, Ps)
    x_vector = x_scalar.copy()
    scalar_scratch = bending.BendScratch(S * Ps)
    vector_scratch = bending.BendScratch(S * Ps)
    lists = c.scalar
    for k in range(passes):
        bending.solve_bending(x_scalar, c, scalar_scratch, first=k == 0)
        c.scalar = None
        bending.solve_bending(x_vector, c, vector_scratch, first=k == 0)
        c.scalar = lists
        np.testing.assert_array_equal(x_scalar, x_vector)
    for colour, n, _ in c.colours:
        np.testing.assert_array_equal(scalar_scratch.scalar_multipliers[colour][:n],
                                      vector_scratch.multipliers[colour][:n])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), S=st.integers(1, 40), Ps=st.integers(3, 12))
def test_bending_sweep_on_planes_is_the_strided_passes_bit_for_bit(seed, S, Ps):
    """A sweep of more than one pass runs on the positions split by flat index mod 3
    (`BendScratch.plane_views`, session 50); visit by visit on the state's stride-3 views it
    must give the same bits, whatever S * Ps is mod 3."""
    rng = np.random.default_rng(seed)
    c = _bend_coefficients(rng, S, Ps)
    if not c:
        return
    c.scalar = None  # the vectorised passes at every size
    x_planes = _state(rng, S, Ps)
    x_views = x_planes.copy()
    planes_scratch = bending.BendScratch(S * Ps)
    views_scratch = bending.BendScratch(S * Ps)
    # Firm bending's sweep and one more pass: more visits than colours, the planes' path.
    sweep = c.firm_sweep + tuple((k, False) for k in range(len(c.colours)))
    assert len(sweep) > bending.COLOURS
    bending.solve_bending(x_planes, c, planes_scratch, sweep=sweep)
    for visit in sweep:
        bending.solve_bending(x_views, c, views_scratch, sweep=(visit,))
    np.testing.assert_array_equal(x_planes, x_views)
    for colour, n, _ in c.colours:
        np.testing.assert_array_equal(planes_scratch.multipliers[colour][:n],
                                      views_scratch.multipliers[colour][:n])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), S=st.integers(1, ftl.SCALAR_STRANDS),
       Ps=st.integers(2, 12), damping=st.sampled_from([0.0, 0.3, 1.0]))
def test_scalar_ftl_sweep_is_the_vectorised_sweep_bit_for_bit(seed, S, Ps, damping):
    rng = np.random.default_rng(seed)
    mask = rng.random((S, Ps)) > 0.2
    mask[:, 0] = False
    rest = rng.uniform(0.01, 0.2, (S, Ps - 1))
    c_scalar = ftl.FtlCoefficients(mask, rest, np.full(S, damping), Ps)
    c_vector = ftl.FtlCoefficients(mask, rest, np.full(S, damping), Ps)
    c_vector.scalar = None
    assert c_scalar.scalar is not None
    x_scalar = _state(rng, S, Ps)
    x_vector = x_scalar.copy()
    prev_scalar = x_scalar + rng.normal(scale=0.001, size=x_scalar.shape)
    prev_vector = prev_scalar.copy()
    ftl.solve_ftl(x_scalar, prev_scalar, c_scalar, ftl.FtlScratch(S, Ps))
    ftl.solve_ftl(x_vector, prev_vector, c_vector, ftl.FtlScratch(S, Ps))
    np.testing.assert_array_equal(x_scalar, x_vector)
    np.testing.assert_array_equal(prev_scalar, prev_vector)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), S=st.integers(1, shake.SCALAR_STRANDS),
       Ps=st.integers(2, 10), jolt=st.sampled_from([0.001, 0.02, 0.3]))
def test_scalar_shake_is_the_vectorised_projection_bit_for_bit(seed, S, Ps, jolt):
    """Small corrections and jolts the projection rejects (a step over MAX_STEP) alike, and
    zero pivots (a segment between two pinned particles), where the scalar solve raises and
    hands the projection to the vectorised one."""
    rng = np.random.default_rng(seed)
    active = rng.random((S, Ps - 1)) > 0.15
    w = rng.choice([0.0, 1.0, 2.0], size=(S, Ps))
    c = shake.ShakeCoefficients(active=active, rest=rng.uniform(0.02, 0.1, (S, Ps - 1)), w=w)
    if not c:
        return
    start = _state(rng, S, Ps)
    x_scalar = start + rng.normal(scale=jolt, size=start.shape)
    x_vector = x_scalar.copy()
    shake.solve_shake(x_scalar, start, c, shake.ShakeScratch(S, c.n))
    limit = shake.SCALAR_STRANDS
    shake.SCALAR_STRANDS = 0
    try:
        shake.solve_shake(x_vector, start, c, shake.ShakeScratch(S, c.n))
    finally:
        shake.SCALAR_STRANDS = limit
    np.testing.assert_array_equal(x_scalar, x_vector)


def _tail(fps: float):
    """A 4-bone tail swinging fast past a moving sphere, the defaults otherwise."""
    frames, P = 40, 5
    rest = np.zeros((1, P, 3))
    rest[0, :, 2] = 1.5 - 0.08 * np.arange(P)
    kinematic = np.zeros(P, dtype=bool)
    kinematic[0] = True
    model = core.build_strand_model(
        chains=[core.ChainRest(setup="T", name="T: Tail", rest_positions=rest[0],
                               kinematic=kinematic)],
        colliders=core.ColliderSet.create(names=["Ball"], kind=[core.ColliderKind.ELLIPSOID],
                                          size=[0.1], friction=[0.3]))
    t = np.arange(frames) / fps
    reference = np.repeat(rest[None], frames, axis=0)
    reference[..., 0] += 0.3 * np.sin(2.0 * np.pi * 2.0 * t)[:, None, None]
    ball = np.tile(np.eye(4), (frames, 1, 1, 1))
    ball[:, 0, :3, 3] = (0.12, 0.0, 1.3)
    ball[:, 0, 1, 3] = 0.03 * np.sin(2.0 * np.pi * 3.0 * t)  # friction on a moving surface
    drive = core.Drive(fps=fps, reference=reference, kinematic=kinematic[None].copy(),
                       space=np.broadcast_to(np.eye(4), (frames, 1, 4, 4)),
                       collider_matrix=ball,
                       params=core.StrandParams.defaults(1, P, bend_compliance=1e-5))
    return model, drive


def test_a_small_rig_bakes_the_same_bits_with_and_without_the_scalar_passes(monkeypatch):
    model, drive = _tail(24.0)
    settings_ = core.SolverSettings(substep=1.0 / 240.0)
    scalar = core.bake(model, drive, settings_).positions
    monkeypatch.setattr(bending, "SCALAR_PARTICLES", 0)
    monkeypatch.setattr(ftl, "SCALAR_STRANDS", 0)
    monkeypatch.setattr(shake, "SCALAR_STRANDS", 0)
    monkeypatch.setattr(solver, "SCALAR_TOUCH_PARTICLES", 0)
    vector = core.bake(model, drive, settings_).positions
    assert np.abs(scalar[-1] - scalar[0]).max() > 0.05  # the tail swings
    np.testing.assert_array_equal(scalar, vector)


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), S=st.integers(1, 4), Ps=st.integers(2, 10),
       odd=st.sampled_from([None, np.nan, np.inf, -np.inf, 0.0, -0.0]),
       odd_prev=st.sampled_from([None, np.nan, np.inf]), friction=st.sampled_from([0.0, 0.3]),
       moving=st.booleans())
def test_the_scalar_sphere_push_is_the_vectorised_push_bit_for_bit(seed, S, Ps, odd, odd_prev,
                                                                   friction, moving):
    """`push_out_of_sphere` on Python floats (up to SCALAR_TOUCH_PARTICLES particles) and
    vectorised: the same answer, the same bits and the same pushed particles, also with a NaN,
    infinite or (signed) zero coordinate, a non-finite start of the substep, immovable (-inf
    radius) particles and friction relative to a moving sphere's surface."""
    rng = np.random.default_rng(seed)
    x = _state(rng, S, Ps)
    if odd is not None:
        x[rng.integers(3), rng.integers(S), rng.integers(Ps)] = odd
    x_prev = x + rng.normal(scale=0.01, size=x.shape)
    if odd_prev is not None:
        x_prev[rng.integers(3), rng.integers(S), rng.integers(Ps)] = odd_prev
    radius = np.where(rng.random((S, Ps)) < 0.2, -np.inf, rng.uniform(0.0, 0.02, (S, Ps)))
    centre = np.nan_to_num(x[:, rng.integers(S), rng.integers(Ps)]) + \
        rng.normal(scale=0.05, size=3)
    R = float(rng.uniform(0.0, 0.1))
    surface = None
    if moving:  # a small turn and shift of the surface over the substep
        angle = rng.normal(scale=0.05)
        surface = np.eye(4)
        surface[:2, :2] = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
        surface[:3, 3] = rng.normal(scale=0.01, size=3)
    results = []
    for limit in (solver.SCALAR_TOUCH_PARTICLES, 0):
        ws = SimpleNamespace(tmp=np.empty_like(x), tmp_b=np.empty_like(x),
                             len=np.empty((S, Ps)), pen=np.empty((S, Ps)))
        xs, prev = x.copy(), x_prev.copy()
        pushed: list = []
        original = solver.SCALAR_TOUCH_PARTICLES
        solver.SCALAR_TOUCH_PARTICLES = limit
        try:
            with np.errstate(all="ignore"):  # an infinite coordinate overflows its square
                moved = solver.push_out_of_sphere(xs, prev, centre, R, radius, friction, ws,
                                                  surface, pushed)
        finally:
            solver.SCALAR_TOUCH_PARTICLES = original
        results.append((moved, xs, prev, pushed))
    (moved_a, x_a, prev_a, pushed_a), (moved_b, x_b, prev_b, pushed_b) = results
    assert moved_a == moved_b
    np.testing.assert_array_equal(x_a, x_b)
    np.testing.assert_array_equal(prev_a, prev_b)
    assert len(pushed_a) == len(pushed_b)
    for a, b in zip(pushed_a, pushed_b, strict=True):
        np.testing.assert_array_equal(a, b)


def test_spheres_and_a_capsule_between_them_bake_the_same_bits_on_floats(monkeypatch):
    """Two chains swinging through a sphere, a capsule and a second sphere (in that order, the
    capsule solved by the shape pass, which reads the array): the spheres' floats shared within
    a collider pass are written back before the capsule reads the positions and before the
    crease pass, so the bake is the vectorised one bit for bit."""
    frames, P = 40, 6
    rest = np.zeros((2, P, 3))
    rest[:, :, 2] = 1.5 - 0.06 * np.arange(P)
    rest[1, :, 1] = 0.04
    kinematic = np.zeros(P, dtype=bool)
    kinematic[0] = True
    colliders = core.ColliderSet.create(
        names=["Ball", "Bar", "Knob"],
        kind=[core.ColliderKind.ELLIPSOID, core.ColliderKind.CAPSULE,
              core.ColliderKind.ELLIPSOID],
        size=[0.06, 0.05, 0.05], friction=[0.3, 0.2, 0.0], radius_a=[0.0, 0.03, 0.0],
        radius_b=[0.0, 0.03, 0.0])
    model = core.build_strand_model(
        chains=[core.ChainRest(setup="T", name=f"T: Tail.{i}", rest_positions=rest[i],
                               kinematic=kinematic) for i in range(2)],
        colliders=colliders)
    t = np.arange(frames) / 24.0
    reference = np.repeat(rest[None], frames, axis=0)
    reference[..., 0] += 0.3 * np.sin(2.0 * np.pi * 1.5 * t)[:, None, None]
    M = np.tile(np.eye(4), (frames, 3, 1, 1))
    M[:, 0, :3, 3] = (0.1, 0.0, 1.32)
    M[:, 1, :3, 3] = (-0.1, 0.0, 1.3)
    M[:, 1, :3, :3] = [[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]  # across the swing
    M[:, 2, :3, 3] = (0.0, 0.0, 1.18)
    drive = core.Drive(fps=24.0, reference=reference, kinematic=np.repeat(kinematic[None], 2, 0),
                       space=np.broadcast_to(np.eye(4), (frames, 2, 4, 4)),
                       collider_matrix=M, params=core.StrandParams.defaults(2, P))
    settings_ = core.SolverSettings(substep=1.0 / 240.0)
    pushes = []
    original = solver._push_out_of_sphere_scalar

    def counted(*args, **kwargs):
        moved = original(*args, **kwargs)
        pushes.append(moved)
        return moved

    monkeypatch.setattr(solver, "_push_out_of_sphere_scalar", counted)
    floats = core.bake(model, drive, settings_).positions
    assert sum(pushes) > 100  # the spheres really push
    monkeypatch.setattr(solver, "SCALAR_TOUCH_PARTICLES", 0)
    vector = core.bake(model, drive, settings_).positions
    np.testing.assert_array_equal(floats, vector)
