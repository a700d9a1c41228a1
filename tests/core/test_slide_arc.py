"""The slide to length kept within a limit's ball (`strands.solver._onto_arc`): a point on its
circle (the rest length from the parent, in the collider's tangent plane) that left the ball
moves along the circle to the nearest point inside it, checked against a fine sampling of the
circle; where no point of the circle is inside, the slide is refused."""

from __future__ import annotations

import numpy as np

from waft.core.strands.solver import _onto_arc


def _circles(m: int, rng):
    n = rng.normal(size=(3, m))
    n /= np.linalg.norm(n, axis=0)
    a = np.cross(n.T, rng.normal(size=(m, 3))).T  # an axis in each plane
    a /= np.linalg.norm(a, axis=0)
    b = np.cross(n.T, a.T).T
    foot = rng.uniform(-0.05, 0.05, (3, m))
    rho = rng.uniform(0.005, 0.02, m)
    return foot, rho, n, a, b


def test_a_slid_point_outside_the_ball_moves_to_the_nearest_point_of_its_circle_inside():
    rng = np.random.default_rng(3)
    m = 400
    foot, rho, n, a, b = _circles(m, rng)
    start = rng.uniform(0.0, 2.0 * np.pi, m)
    slid = foot + rho * (np.cos(start) * a + np.sin(start) * b)
    centre = foot + rng.normal(0.0, 0.02, (3, m))
    limit = rng.uniform(0.002, 0.03, m)
    before = slid.copy()
    keep = np.ones(m, dtype=bool)
    _onto_arc(slid, foot, rho, n, centre, limit, keep)

    angles = np.linspace(0.0, 2.0 * np.pi, 20_000, endpoint=False)
    moved = 0
    for i in range(m):
        ring = foot[:, i, None] + rho[i] * (np.cos(angles) * a[:, i, None]
                                            + np.sin(angles) * b[:, i, None])
        inside = np.linalg.norm(ring - centre[:, i, None], axis=0) <= limit[i]
        was_inside = np.linalg.norm(before[:, i] - centre[:, i]) <= limit[i]
        if was_inside:  # left as it was
            assert keep[i] and np.array_equal(slid[:, i], before[:, i])
            continue
        if not inside.any():
            assert not keep[i], i  # no point of the circle in the ball: refused
            continue
        if not keep[i]:  # refused only where the arc is too thin for the sampling to miss
            assert inside.sum() <= 2, i
            continue
        moved += 1
        p = slid[:, i]
        assert abs(np.linalg.norm(p - foot[:, i]) - rho[i]) <= 1e-12, i  # on its circle
        assert abs((p - foot[:, i]) @ n[:, i]) <= 1e-12, i  # in the tangent plane
        assert np.linalg.norm(p - centre[:, i]) <= limit[i] * (1.0 + 1e-9), i  # inside
        # the nearest such point: no sampled point inside the ball is nearer to where it was
        nearest = np.linalg.norm(ring[:, inside] - before[:, i, None], axis=0).min()
        assert np.linalg.norm(p - before[:, i]) <= nearest + 1e-9, i
    assert moved > 50  # not vacuous: many points left the ball and came back onto the arc
