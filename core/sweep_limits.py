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

from .triangles import row_dot

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


def pull_parent(parent: np.ndarray, child: np.ndarray, rest: np.ndarray, *,
                over_relaxation: float = SWEEP_OVER_RELAXATION) -> np.ndarray:
    """The bottom-up move: a parent further than `rest` from its child goes toward it, past rest
    by (`over_relaxation` - 1) of its excess (never closer than half rest); the next
    top-down sweep puts the link back at rest."""
    e = parent - child
    length = _norm(e)
    target = rest - (over_relaxation - 1.0) * (length - rest)
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


def into_ball_and_half_space(point: np.ndarray, centre: np.ndarray, limit: np.ndarray,
                             normal: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """`point` (3, n) projected onto the intersection of its max-distance ball (`centre`,
    `limit`) and the half-space `normal . x >= offset` (a contact's tangent plane, unit
    `normal`; `offset` -inf: none): the projection onto one set when it lies in the other (the
    nearest point of that set is then the nearest of the intersection, both being convex),
    else the nearest point of the circle where the plane cuts the ball's sphere. Where the
    plane misses the ball the ball wins (the colliders after the sweep push again)."""
    below = np.minimum(row_dot(normal, point) - offset, 0.0)
    onto_plane = point - below * normal
    d = onto_plane - centre
    e = np.square(d)
    if not np.any(e[0] + e[1] + e[2] > np.square(limit)):
        return onto_plane
    into_ball = clamp_into_ball(point, centre, limit)
    e = np.square(onto_plane - centre)
    plane_in_ball = e[0] + e[1] + e[2] <= np.square(limit)
    ball_above = row_dot(normal, into_ball) >= offset
    # The circle: centre's foot on the plane, radius sqrt(limit^2 - h^2).
    h = row_dot(normal, centre) - offset
    np.minimum(h, 2.0 * limit, out=h)  # (no contact: offset -inf, normal 0)
    foot = centre - h * normal
    radius = np.sqrt(np.maximum(np.square(limit) - np.square(h), 0.0))
    t = onto_plane - foot
    tl = np.maximum(_norm(t), EPS)
    circle = foot + t * (radius / tl)
    meets = np.abs(h) <= limit
    return np.where(plane_in_ball, onto_plane,
                    np.where(ball_above | ~meets, into_ball, circle))


def _rim(u: np.ndarray, along: np.ndarray, axis: np.ndarray, cos: np.ndarray) -> np.ndarray:
    """Unit directions `u` (3, n), `along` = u . axis, turned along their great circle through
    `axis` (unit) to the rim of the cap `u . axis >= cos` (`cos` in [-1, 1])."""
    tangent = u - along * axis
    length = _norm(tangent)
    return cos * axis + tangent * (np.sqrt(1.0 - np.square(cos)) / np.maximum(length, EPS))


# Directions within this of a cap's bound count as inside it (the rims' rounding).
_CAP_SLACK = 1e-12


def clamp_in_sweep_on_contacts(child: np.ndarray, parent: np.ndarray, reference: np.ndarray,
                               limit: np.ndarray, rest: np.ndarray, normal: np.ndarray,
                               offset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`clamp_in_sweep` with a contact as well: children (3, n) at rest length from their
    parents moved to the closest point of that sphere inside their max-distance balls and on
    the outer side of their contact's tangent plane (`normal . x >= offset`; `offset` -inf:
    none). On the unit sphere of directions from the parent both are caps, `u . c >= cos_ball`
    about the direction c to the reference and `u . normal >= cos_plane`; the closest direction
    of their intersection is the child's own, or its turn onto one cap's rim when that lies in
    the other cap, or the nearer of the two points where the rims cross. Returns (placed,
    met): where the caps do not meet the child goes onto the ball's cap as `clamp_in_sweep`
    puts it (the colliders after the sweep push it out) and `met` is False, for the caller's
    bottom-up rounds to move the parent."""
    u = (child - parent) / rest
    c = reference - parent
    distance = np.maximum(_norm(c), EPS)
    c /= distance
    cos_ball = (np.square(rest) + np.square(distance) - np.square(limit)) / (2.0 * rest * distance)
    cos_plane = (offset - row_dot(normal, parent)) / rest
    empty = (cos_ball > 1.0) | (cos_plane > 1.0)
    np.clip(cos_ball, -1.0, 1.0, out=cos_ball)
    np.clip(cos_plane, -1.0, 1.0, out=cos_plane)
    uc, un = row_dot(u, c), row_dot(u, normal)
    ball_ok = uc >= cos_ball - _CAP_SLACK
    plane_ok = un >= cos_plane - _CAP_SLACK
    best = u
    score = np.where(ball_ok & plane_ok, 2.0, -3.0)  # u . candidate; -3: none yet
    # The turn onto one cap's rim, where it lies in the other cap.
    for fix, along, axis, cos, other, other_cos in (
            (~ball_ok, uc, c, cos_ball, normal, cos_plane),
            (~plane_ok, un, normal, cos_plane, c, cos_ball)):
        if fix.any():
            v = _rim(u, along, axis, cos)
            ok = fix & (row_dot(v, other) >= other_cos - _CAP_SLACK)
            s = np.where(ok, row_dot(v, u), -3.0)
            better = s > score
            best = np.where(better, v, best)
            score = np.where(better, s, score)
    open_ = score < -2.0
    if open_.any():
        # The rims' crossings u = a c + b normal +- g (c x normal), the one on u's side.
        cn = row_dot(c, normal)
        det = np.maximum(1.0 - np.square(cn), EPS)
        a = (cos_ball - cos_plane * cn) / det
        b = (cos_plane - cos_ball * cn) / det
        cross = np.stack([c[1] * normal[2] - c[2] * normal[1], c[2] * normal[0] - c[0] * normal[2],
                          c[0] * normal[1] - c[1] * normal[0]])
        g2 = (1.0 - (np.square(a) + np.square(b) + 2.0 * a * b * cn)) / det
        g = np.copysign(np.sqrt(np.maximum(g2, 0.0)), row_dot(u, cross))
        crossing = a * c + b * normal + g * cross
        ok = open_ & (g2 >= 0.0) & (1.0 - np.square(cn) > EPS)
        best = np.where(ok, crossing, best)
        score = np.where(ok, 0.0, score)
    met = (score > -2.0) & ~empty
    if met.all():
        return parent + rest * best, met
    return np.where(met, parent + rest * best, clamp_in_sweep(child, parent, reference, limit,
                                                                rest)), met
