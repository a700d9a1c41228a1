"""Max distances kept inside a Follow-The-Leader sweep, shared by the cloth's hard vertical links
and the strands' rigid segments.

An FTL sweep (Mueller, Kim, Chentanez 2012) places each child at rest length from its parent;
a max distance (Mueller 2020 eq. 25, Magica Cloth's motion constraint) keeps a particle within
`limit` of its animated reference. Clamped one after the other, the later one wins and breaks
the other: a strand whose max distance holds its tip while gravity or a fast head pulls the
rest away stretched by 5-25 %. Inside the sweep each child goes to the point of its rest-length
sphere that is inside its ball and closest to where FTL put it (`clamp_in_sweep`), so the link
stays exact. Where the sphere misses the ball (the parent, placed without knowing, is too far)
a bottom-up pass moves each parent to within rest of its child, over-relaxed, and inside its
own ball (`pull_parent`, `clamp_into_ball`), and the top-down sweep runs again: alternating
projections onto the link spheres and the balls, which meet where the animation itself is
(the reference satisfies every link and every max distance), so the rounds converge.

All arrays are component-major (3, n).
"""

from __future__ import annotations

import numpy as np

EPS = 1e-12

# Most top-down / bottom-up rounds of the sweep when max distances and links conflict, and the
# conflict worth another round: a child left further than this fraction of its link outside its
# max distance (smaller ones the final clamp takes, stretching the link by as much). A skirt on
# walking legs otherwise spent all its rounds on sub-millimetre conflicts (its bake 0.84 -> 1.69 s).
# The bottom-up pass is over-relaxed (SOR on alternating projections): the sets meet at a
# shallow angle where a max distance shrinks toward the hem (2 cm, or 5 mm) under a fast sway,
# and plain projections shed only 10-15 % of the conflict per round (after ten rounds 1.6 % to
# 2.2 % vertical stretch was left for the final clamp); at 1.5 every such case ends within the
# tolerance, 0.3 %.
SWEEP_ROUNDS = 30
SWEEP_TOLERANCE = 3e-3  # of the link's rest length
SWEEP_OVER_RELAXATION = 1.5


def _norm(d: np.ndarray) -> np.ndarray:
    square = np.square(d)
    return np.sqrt(square[0] + square[1] + square[2])


def clamp_into_ball(point: np.ndarray, centre: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """`point` moved to within `limit` of `centre` (never outward)."""
    d = point - centre
    return centre + d * np.minimum(limit / np.maximum(_norm(d), EPS), 1.0)


def pull_parent(parent: np.ndarray, child: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """The bottom-up move: a parent further than `rest` from its child goes toward it, past rest
    by (SWEEP_OVER_RELAXATION - 1) of its excess (never closer than half rest); the next
    top-down sweep puts the link back at rest."""
    e = parent - child
    length = _norm(e)
    target = rest - (SWEEP_OVER_RELAXATION - 1.0) * (length - rest)
    np.maximum(target, 0.5 * rest, out=target)
    e *= np.minimum(target / np.maximum(length, EPS), 1.0)
    e += child
    return e


def clamp_in_sweep(child: np.ndarray, parent: np.ndarray, reference: np.ndarray,
                   limit: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """Children (3, n), already at rest length from their parents, moved to the closest point
    of that sphere inside their max-distance balls: the link stays exact and the max distance
    holds wherever the parent leaves room for both.

    The sphere's part inside the ball is a cap around the direction `c` from the parent to the
    reference: `|parent + rest u - reference| <= limit` iff `u.c >= cos_max = (rest^2 + |c|^2 -
    limit^2) / (2 rest |c|)`. A child outside it is turned toward `c` along its great circle to
    the cap's rim. Where the sphere misses the ball (`cos_max > 1`, the parent too far) the child
    goes to the sphere's closest point, `u = c`, and the caller's bottom-up round moves the
    parent. (Clamping into the ball then shortening the link toward the parent left each round
    a link short and a child outside: the rounds converged linearly and a cage whose max
    distance shrinks toward the hem still stretched 1.6 % after ten of them.)"""
    u = child - parent
    u /= rest
    c = reference - parent
    distance = _norm(c)
    np.maximum(distance, EPS, out=distance)
    c /= distance
    cos_max = (np.square(rest) + np.square(distance) - np.square(limit)) / (2.0 * rest * distance)
    np.clip(cos_max, -1.0, 1.0, out=cos_max)
    along = u[0] * c[0] + u[1] * c[1] + u[2] * c[2]
    outside = along < cos_max
    if not outside.any():
        return child
    tangent = u - along * c
    length = _norm(tangent)
    sin_max = np.sqrt(1.0 - np.square(cos_max))
    rim = cos_max * c + tangent * (sin_max / np.maximum(length, EPS))
    return np.where(outside, parent + rest * rim, child)


def outside_by(point: np.ndarray, reference: np.ndarray, limit: np.ndarray,
               rest: np.ndarray) -> bool:
    """Whether a point is further than its limit + SWEEP_TOLERANCE of its link outside its ball
    (the conflict worth another round)."""
    e = np.square(point - reference)
    reach = limit + SWEEP_TOLERANCE * rest
    return bool(np.any(e[0] + e[1] + e[2] > reach * reach))
