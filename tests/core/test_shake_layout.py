"""SHAKE's vectorised projection runs on the flat (3, S * Ps) layout of the state
(core/shake.py): the differences it takes there include the pair that straddles two strands
and the padding. They must take no part: the result is the strand-by-strand projection's bits
(signed zeros included), and a strand gone non-finite leaves its neighbours as they would be
without it."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import waft.core.shake as shake


def _chains(rng, S: int, Ps: int, jolt: float):
    start = np.zeros((3, S, Ps))
    start[2] = -0.05 * np.arange(Ps)[None]
    start += rng.normal(scale=0.01, size=start.shape)
    x = start + rng.normal(scale=jolt, size=start.shape)
    return start, x


def _rows(rng, S: int, Ps: int, tail: int) -> dict:
    """Active segments hanging from a pinned root, the last `tail` segments of every strand
    left out (so the projection's n is below Ps - 1: padding columns)."""
    active = np.ones((S, Ps - 1), dtype=bool)
    if tail:
        active[:, -tail:] = False
    active &= rng.random((S, Ps - 1)) > 0.1
    w = rng.choice([0.5, 1.0, 2.0], size=(S, Ps))
    w[:, 0] = 0.0
    return {"active": active, "rest": rng.uniform(0.03, 0.07, (S, Ps - 1)), "w": w}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), S=st.integers(shake.SCALAR_STRANDS + 1, 12),
       Ps=st.integers(3, 12), tail=st.integers(0, 2),
       jolt=st.sampled_from([1e-4, 0.005, 0.2]))
def test_the_flat_projection_is_the_strand_by_strand_projection_bit_for_bit(seed, S, Ps, tail,
                                                                             jolt):
    rng = np.random.default_rng(seed)
    c = shake.ShakeCoefficients(**_rows(rng, S, Ps, min(tail, Ps - 2)))
    if not c:
        return
    start, x = _chains(rng, S, Ps, jolt)
    x[:, rng.integers(S), rng.integers(Ps)] = -0.0  # signed zeros keep their sign
    x[:, rng.integers(S), -1] = -0.0
    flat, by_strand = x.copy(), x.copy()
    shake.solve_shake(flat, start, c, shake.ShakeScratch(S, c.n))
    # (False: a zero pivot, where Python raises; the vectorised solve's inf/NaN rejection
    # then takes the strand, as it always did.)
    assume(shake._solve_shake_scalar(by_strand, start, c))
    np.testing.assert_array_equal(flat.view(np.uint64), by_strand.view(np.uint64))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), S=st.integers(shake.SCALAR_STRANDS + 2, 10),
       Ps=st.integers(3, 10), bad=st.sampled_from([np.inf, -np.inf, np.nan]))
def test_a_non_finite_strand_leaves_its_neighbours_alone(seed, S, Ps, bad):
    rng = np.random.default_rng(seed)
    rows = _rows(rng, S, Ps, 0)
    c = shake.ShakeCoefficients(**rows)
    start, x = _chains(rng, S, Ps, 0.005)
    k = int(rng.integers(S))
    x[:, k] = bad
    start[:, k] = bad
    with_it = x.copy()
    shake.solve_shake(with_it, start, c, shake.ShakeScratch(S, c.n))
    keep = np.arange(S) != k
    others = shake.ShakeCoefficients(**{name: a[keep] for name, a in rows.items()})
    without = x[:, keep].copy()
    if others.n != c.n:
        return  # the strand left out held the longest active run: another system size
    shake.solve_shake(without, start[:, keep], others, shake.ShakeScratch(S - 1, others.n))
    np.testing.assert_array_equal(with_it[:, keep, : c.n + 1], without[:, :, : c.n + 1])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), S=st.integers(shake.SCALAR_STRANDS + 1, 12),
       Ps=st.integers(3, 12), tail=st.integers(0, 2), rounds=st.integers(1, 3))
def test_kept_directions_give_the_bits_of_taking_them_anew(seed, S, Ps, tail, rounds):
    """The solver's contact rounds project along the same start-of-substep segments several
    times in a substep (nothing writes x_prev between them): with `same_directions` the later
    rounds use the directions the scratch kept from the first, with the bits of a scratch that
    takes them anew each round. A call without the promise forgets them, so one that makes it
    after a different start takes that start's."""
    rng = np.random.default_rng(seed)
    c = shake.ShakeCoefficients(**_rows(rng, S, Ps, min(tail, Ps - 2)))
    if not c:
        return
    start, x = _chains(rng, S, Ps, 0.005)
    other, _ = _chains(rng, S, Ps, 0.005)
    kept, fresh = x.copy(), x.copy()
    scratch = shake.ShakeScratch(S, c.n)
    shake.solve_shake(kept.copy(), other, c, scratch)  # the scratch holds another start's
    for k in range(rounds):
        push = rng.normal(scale=0.002, size=x.shape)  # a collider's push between the rounds
        kept += push
        fresh += push
        shake.solve_shake(kept, start, c, scratch, same_directions=k > 0)
        shake.solve_shake(fresh, start, c, shake.ShakeScratch(S, c.n))
        np.testing.assert_array_equal(kept.view(np.uint64), fresh.view(np.uint64))
