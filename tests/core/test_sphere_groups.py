"""Spheres that commute are pushed together (core/strands/constraints/spheres.py): the result
is the bits of pushing them one after the other, in order, with friction and with particles
deep inside; only spheres no particle can reach from one another share a group."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.strands.constraints import spheres

# The hair benchmark's body (tests/benchmarks/bench_hair.py): head, neck, shoulders, chest,
# back and arms, in the order the solver applies them.
BODY = [((0.0, 0.0, 1.6), 0.1), ((0.0, 0.0, 1.45), 0.06), ((0.17, 0.0, 1.38), 0.08),
        ((-0.17, 0.0, 1.38), 0.08), ((0.0, 0.03, 1.25), 0.14), ((0.0, -0.05, 1.3), 0.13),
        ((0.25, 0.0, 1.2), 0.06), ((-0.25, 0.0, 1.2), 0.06)]


def _state(seed: int, S: int = 300, Ps: int = 34, P: int = 32):
    """Chains scattered over the body, many particles deep inside a sphere."""
    rng = np.random.default_rng(seed)
    x = np.empty((3, S, Ps))
    x[0] = rng.uniform(-0.35, 0.35, (S, 1)) + np.cumsum(rng.normal(0, 0.01, (S, Ps)), axis=1)
    x[1] = rng.uniform(-0.15, 0.15, (S, 1)) + np.cumsum(rng.normal(0, 0.01, (S, Ps)), axis=1)
    x[2] = rng.uniform(1.1, 1.75, (S, 1)) + np.cumsum(rng.normal(0, 0.01, (S, Ps)), axis=1)
    x_prev = x + rng.normal(0.0, 0.004, x.shape)  # a substep's motion, for the friction
    radius = np.full((S, Ps), 0.005)
    radius[:, 0] = -np.inf  # roots do not move
    return x, x_prev, spheres.SphereBlocks(radius, P)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("friction", [0.0, 0.3, 1.0])
def test_a_group_pushes_as_its_spheres_one_after_the_other(seed, friction):
    x, x_prev, blocks = _state(seed)
    body = [(np.array(c), r) for c, r in BODY]
    everything = np.arange(len(blocks.blocks) * x.shape[1])  # every block a candidate
    one_by_one, x_one, prev_one = [], x.copy(), x_prev.copy()
    for centre, r in body:
        ids: list = []
        spheres.push_out_candidates(x_one, prev_one, blocks, everything, centre, r, friction,
                                    None, ids)
        one_by_one.append(ids[0] if ids else np.zeros(0, dtype=np.int64))
    assert sum(len(ids) for ids in one_by_one) > 200  # not vacuous: many contacts

    groups = spheres.sphere_groups([(c, r, friction, True) for c, r in body],
                                   float(blocks.max_radius))
    assert sum(len(g) > 1 for g in groups) >= 1  # some spheres do share a call
    together, x_all, prev_all = [[] for _ in body], x.copy(), x_prev.copy()
    for group in groups:
        parts = [(everything, body[i][0], body[i][1]) for i in group]
        spheres.push_out_spheres(x_all, prev_all, blocks, parts, friction, None,
                                 [together[i] for i in group])
    np.testing.assert_array_equal(x_all.view(np.uint64), x_one.view(np.uint64))
    np.testing.assert_array_equal(prev_all, x_prev)  # friction reads the start, never writes it
    for ids, alone in zip(together, one_by_one, strict=True):
        moved = ids[0] if ids else np.zeros(0, dtype=np.int64)
        np.testing.assert_array_equal(np.unique(moved), np.unique(alone))


def test_the_body_groups_keep_every_overlapping_pair_in_order():
    body = [(np.array(c), r, 0.3, True) for c, r in BODY]
    groups = spheres.sphere_groups(body, 0.005)
    # Head, shoulders and arms are far enough apart; the neck comes after the head it overlaps,
    # the chest after neck and shoulders, the back after the chest.
    assert groups == [[0, 2, 3, 6, 7], [1], [4], [5]]
    order = {k: g for g, members in enumerate(groups) for k in members}
    for i in range(len(body)):
        for j in range(i + 1, len(body)):
            if not spheres.commute(body[i][:2], body[j][:2], 0.005, 0.3):
                assert order[i] < order[j]


def test_only_still_spheres_with_one_friction_share_a_call():
    far = [((0.0, 0.0, 0.0), 0.1), ((1.0, 0.0, 0.0), 0.1), ((2.0, 0.0, 0.0), 0.1)]
    same = [(np.array(c), r, 0.3, True) for c, r in far]
    assert spheres.sphere_groups(same, 0.01) == [[0, 1, 2]]
    moving = [*same[:2], (same[2][0], 0.1, 0.3, False)]
    assert spheres.sphere_groups(moving, 0.01) == [[0, 1], [2]]
    mixed = [*same[:2], (same[2][0], 0.1, 0.5, True)]
    assert spheres.sphere_groups(mixed, 0.01) == [[0, 1], [2]]


def test_a_slide_that_could_reach_the_next_sphere_keeps_the_order():
    """Reaches 0.11 and 0.11 with 0.05 between them: apart, but a particle pushed out of one
    and slid by its friction (up to 0.5 x 0.11) could end within the other's reach."""
    a, b = (np.zeros(3), 0.1), (np.array([0.26, 0.0, 0.0]), 0.1)
    assert spheres.commute(a, b, 0.01, 0.0)
    assert not spheres.commute(a, b, 0.01, 0.5)
    assert spheres.sphere_groups([(*a, 0.5, True), (*b, 0.5, True)], 0.01) == [[0], [1]]
