"""Position projections of the cloth solver, each vectorised over every cloth.

All act in place on positions `x` (N, 3) world metres:

* `solve_colour`: one graph colour of XPBD distance constraints (Macklin et al. 2016,
  "XPBD"; one pass per substep as in Macklin et al. 2019, "Small Steps in Physics Simulation");
* `solve_spans`: exact lengths along pin-to-pin spans (a strip pinned at both ends), by the
  mass-weighted SHAKE projection of `core.shake`, before the sweep;
* `sweep_levels`: seed 001's hard vertical constraints, top-down: each vertex is placed at rest
  length from the vertex it hangs from, which is already final (Follow-The-Leader, Mueller et al.
  2012), so after one sweep no vertical link is stretched; the velocity it leaves is a
  mass-weighted inelastic impulse's;
* `clamp_max_distance`, `push_backstop`: Jolt's skinned constraint (max distance from the
  skinned position, and a back stop behind the reference surface along its normal);
* `push_layers`: seed 003 layered self-collision, one-sided against the layer below;
* `collide`: particles against the shared collider shapes of `core.colliders`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..colliders import ColliderKind, apply_friction, shape_normal
from ..shake import ShakeCoefficients, ShakeScratch, solve_shake
from ..sweep_limits import (
    SWEEP_ROUNDS,
    clamp_in_sweep,
    clamp_into_ball,
    outside_by,
    pull_parent,
)
from .contact_friction import friction_from_start
from .model import bilinear, quad_normal

EPS = 1e-12
ONES3 = np.ones(3)


def dot3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot products of (n, 3) arrays (a matmul with ones: ~3x cheaper than einsum)."""
    return (a * b) @ ONES3


def norm3(d: np.ndarray) -> np.ndarray:
    """Row lengths of (n, 3) `d`."""
    return np.sqrt(np.square(d) @ ONES3)


def flat_index(index: np.ndarray) -> np.ndarray:
    """Indices into `x.reshape(-1)` of the rows `index` of an (N, 3) array: gathering and
    scattering a flat float array is 2-4x faster in NumPy than fancy-indexing its rows."""
    return (np.asarray(index, dtype=np.int64)[:, None] * 3 + np.arange(3)).reshape(-1)


@dataclass
class Colour:
    """One colour of distance constraints with its per-frame XPBD factors.

    `k_a = w_a / (w_a + w_b + alpha / h^2)` (and `k_b`); `ends` are the flat indices of the
    a-rows then the b-rows and `factor` (2, E, 1) is (k_a, -k_b), so one gather, one update
    and one scatter move both ends. `alpha_tilde`, `denominator`, `lam` serve iterations > 1.
    """

    a: np.ndarray
    b: np.ndarray
    rest: np.ndarray
    k_a: np.ndarray
    k_b: np.ndarray
    w_a: np.ndarray
    w_b: np.ndarray
    alpha_tilde: np.ndarray
    denominator: np.ndarray
    lam: np.ndarray
    ends: np.ndarray = None  # type: ignore[assignment]
    factor: np.ndarray = None  # type: ignore[assignment]
    weight: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self):
        self.ends = np.concatenate([flat_index(self.a), flat_index(self.b)])
        self.factor = np.stack([self.k_a, -self.k_b])  # (2, E, 1)
        self.weight = np.stack([-self.w_a, self.w_b])  # (2, E, 1) for the lambda form
        # Component-major copies for the one-pass update: gathered as (2, 3, E), every
        # per-constraint factor broadcasts along the contiguous last axis (a (E, 3) * (E, 1)
        # broadcast runs an inner loop of length 1 and costs ~1.6x as much).
        self.ends_by_axis = np.stack([axis_major(self.a), axis_major(self.b)])  # (2, 3, E)
        self.factor_by_axis = np.stack([self.k_a.T, -self.k_b.T])  # (2, 1, E)


def axis_major(index: np.ndarray) -> np.ndarray:
    """Flat indices (3, E) of the x, y, z components of rows `index` of an (N, 3) array."""
    return np.asarray(index, dtype=np.int64)[None, :] * 3 + np.arange(3)[:, None]


def solve_colour(x: np.ndarray, c: Colour, *, use_lambda: bool) -> None:
    """XPBD update of one colour: `dl = (-C - at lam) / (w_a + w_b + at)`,
    `x_a -= w_a n dl`, `x_b += w_b n dl` with `n` from a to b and `C = |x_b - x_a| - rest`.

    With one pass per substep lambda starts at 0, so the lambda term vanishes (`use_lambda`
    False) and the update is `x_a += k_a d s`, `x_b -= k_b d s` with `s = C / |d|`, computed
    component-major (the same products and sums in the same order as row-major: same bits).
    `x` must be C-contiguous (N, 3) (its flat view is gathered and scattered).
    """
    flat = x.reshape(-1)
    if use_lambda:
        ends = flat.take(c.ends).reshape(2, -1, 3)
        d = ends[1] - ends[0]
        length = norm3(d)
        np.maximum(length, EPS, out=length)
        dl = (c.rest - length - c.alpha_tilde * c.lam) / c.denominator
        c.lam += dl
        d *= (dl / length)[:, None]
        ends += c.weight * d
        flat[c.ends] = ends.reshape(-1)
        return
    ends = flat.take(c.ends_by_axis)  # (2, 3, E)
    d = ends[1] - ends[0]
    square = np.square(d)
    length = square[0] + square[1]
    length += square[2]
    np.sqrt(length, out=length)
    np.maximum(length, EPS, out=length)
    s = length - c.rest
    s /= length
    d *= s
    ends += c.factor_by_axis * d
    flat[c.ends_by_axis] = ends


@dataclass
class Level:
    """The vertices of one level, the vertex each hangs from and the rest length between."""

    child: np.ndarray
    parent: np.ndarray
    rest: np.ndarray  # (n, 1)
    unique_parents: bool = True  # kept for callers; the sweep accumulates with bincount


def mass_share(w_parent: np.ndarray, w_child: np.ndarray) -> np.ndarray:
    """Each link's parent share of the pair's inverse mass, `w_parent / (w_parent + w_child)`
    (0 where neither moves): how a mass-weighted impulse along the link splits between its ends
    (`sweep_levels`, the rods' length sweep)."""
    pair = w_parent + w_child
    return np.divide(w_parent, pair, out=np.zeros(pair.shape), where=pair > 0.0)


class Sweep:
    """Precomputed top-down sweep over levels: component-major flat indices (3, n), one slice
    of the gathered children per level. With inverse masses `w` (N,), `share` (n,) is each
    link's parent share of the pair's inverse mass, `w_parent / (w_parent + w_child)`: 0 below a
    pin, 1/2 between two free unit-mass vertices (`sweep_levels`' velocity split)."""

    def __init__(self, levels: list[Level], n_vertices: int, w: np.ndarray | None = None):
        self.levels = levels
        self.size = 3 * n_vertices
        child = np.concatenate([lv.child for lv in levels]) if levels else np.zeros(0, np.int64)
        parent = np.concatenate([lv.parent for lv in levels]) if levels else np.zeros(0, np.int64)
        self.child_flat = axis_major(child)  # (3, n)
        self.parent_flat = axis_major(parent)
        self.share = None if w is None else mass_share(w[parent], w[child])
        self.steps = []
        # The step placing each vertex (-1: none, a pin or a soft-vertical vertex), for the
        # contact sweep's first touched level (`contact_sweep.first_step`).
        self.step_of_vertex = np.full(n_vertices, -1, dtype=np.int64)
        start = 0
        for i, lv in enumerate(levels):
            self.step_of_vertex[lv.child] = i
            n = lv.child.size
            self.steps.append((slice(start, start + n), axis_major(lv.parent),
                               axis_major(lv.child), np.asarray(lv.rest).reshape(-1)))
            start += n

    def __bool__(self) -> bool:
        return bool(self.levels)


class Span:
    """One colour of pin-to-pin spans (`model._spans`) or hanging columns (`model._columns`)
    with its SHAKE data for one frame's settings: `path` (P, L) vertex paths padded with their
    last vertex (a padded segment joins a vertex to itself and takes no part); a segment takes
    part where `hard` (per vertex: its cloth uses hard vertical links) holds at both ends."""

    def __init__(self, path: np.ndarray, rest_positions: np.ndarray, w: np.ndarray,
                 hard: np.ndarray):
        self.path = path
        lo, hi = path[:, :-1], path[:, 1:]
        active = (lo != hi) & hard[lo] & hard[hi]
        rest = norm3((rest_positions[hi] - rest_positions[lo]).reshape(-1, 3)).reshape(lo.shape)
        self.coefficients = ShakeCoefficients(active=active, rest=rest, w=w[path])
        self.scratch = ShakeScratch(path.shape[0], self.coefficients.n)


def solve_spans(x: np.ndarray, x_start: np.ndarray, spans: list[Span]) -> None:
    """Every segment of every span at its rest length: SHAKE's mass-weighted projection along
    the segments of `x_start` (the start of the substep), both pins fixed (Ryckaert et al. 1977;
    `core.shake`). The top-down sweep alone hangs each vertex from one pin and leaves the link
    where the two chains meet to XPBD: a strip pinned at both ends kept it 1.5-70 % long (the
    tauter, the longer) and never settled. Spans run before the sweep, which then finds their
    links at length and moves them only by rounding. A span whose step is not a small
    correction (a taut strip pulled past its length) is left to the sweep that substep.

    The hanging columns (a pin down to a free end) of stiff cloths (`solver.STIFF_COMPLIANCE`)
    go the same way, for energy: the sweep alone
    places each child at length from its parent and can give the parent its mass share of the
    move only as velocity, leaving the rest a position fix; stiff bending and shear links then
    turned those fixes into velocity every substep. A cage with rigid bending falling onto its
    max distance gained 104-136 % of its fall's energy, 37-54 % onto a ball; SHAKE's projection
    moves positions and velocities alike, and the gain is under 1.5 %."""
    for span in spans:
        if not span.coefficients:
            continue
        xs = np.ascontiguousarray(x[span.path].transpose(2, 0, 1))  # (3, P, L)
        start = np.ascontiguousarray(x_start[span.path].transpose(2, 0, 1))
        solve_shake(xs, start, span.coefficients, span.scratch)
        x[span.path] = xs.transpose(1, 2, 0)


# The rounds' limits and relaxation: `core.sweep_limits`.


def sweep_levels(x: np.ndarray, sweep: Sweep | list[Level], x_prev: np.ndarray | None = None,
                 *, reference: np.ndarray | None = None, limit: np.ndarray | None = None,
                 fixed: np.ndarray | None = None) -> None:
    """Hard vertical constraints, top-down: place each child at rest length from its parent.

    A child is untouched until its own level, so every child's position before the sweep is
    gathered once and sliced per level. Component-major (3, n) like `solve_colour`.

    With `x_prev` (and a `Sweep` built with inverse masses), the velocity the sweep leaves is
    that of an inelastic, mass-weighted impulse along each link, though the positions are
    Follow-The-Leader's (Mueller et al. 2012: the parent stays where it is, so the sweep ends
    with every link exact). A child moved by `d` along its link changes the pair's relative
    velocity by `d / h`; a mass-weighted impulse gives the child `(1 - share) d / h` and its
    parent `-share d / h` (`Sweep.share`, 1/2 between free vertices, 0 below a pin). So both
    `x_prev` move by `share d`: the child's `share d` is a position fix only, the parent's is
    DFTL's velocity correction with its weight equal to the mass share. Momentum is kept and
    the link's relative speed along it ends at zero, so no link pass adds energy. DFTL's usual
    weight (0.9, the child's move all velocity) is not that impulse: it made energy wherever the
    sweep worked against stiff XPBD links, and an undamped cage with rigid bending (compliance
    0) swinging free gained 24 times its fall (now under 0.1 %); a weight of 1 keeps energy but
    is elastic along the link, which then rattles from substep to substep (frame rates drifted
    apart 5x further).

    With `reference` (N, 3) and `limit` (N,) (inf = none), each child is also kept within its
    max distance of the reference as the sweep reaches it (Mueller 2020 eq. 25), at the point of
    its rest-length sphere closest to where FTL put it (`core.sweep_limits.clamp_in_sweep`). A
    max distance that shrinks toward the hem cannot be met top-down alone (the parents above
    were placed without it), so a bottom-up pass then pulls each parent (not `fixed` ones: pins)
    to within rest of
    its child, over-relaxed (SWEEP_OVER_RELAXATION), and inside its own max distance, and the
    rounds repeat (alternating projections onto the link spheres and max-distance balls) while
    any link still had to leave a child outside its max distance by a fraction of the link,
    at most SWEEP_ROUNDS times. Clamped only after the sweep, the max distance pulled a swept
    child back toward its reference, away from its parent: a cage swaying ±0.5 m at 1.5 Hz
    whose max distance grows toward the hem stretched 0.1 % vertically (now 0), one whose max
    distance shrinks to 2 cm at the hem 22.6 % (now 0.3 %: the rounds stop within
    SWEEP_TOLERANCE, before full convergence).
    """
    if not isinstance(sweep, Sweep):
        sweep = Sweep(sweep, x.shape[0])
    if not sweep:
        return
    flat = x.reshape(-1)
    before = flat.take(sweep.child_flat)  # (3, n)
    ref_flat = None if reference is None else np.ascontiguousarray(reference).reshape(-1)
    split = x_prev is not None and sweep.share is not None
    limited = x_prev is not None and ref_flat is not None
    length_only = np.empty_like(before) if split or limited else None
    conflict = _sweep_down(flat, sweep, before, ref_flat, limit, length_only)
    rounds = 1
    while conflict and rounds < SWEEP_ROUNDS:
        _sweep_up(flat, sweep, ref_flat, limit, fixed)
        conflict = _sweep_down(flat, sweep, flat.take(sweep.child_flat), ref_flat, limit)
        rounds += 1
    if split:
        # Only the length moves are split; the max-distance clamps and the rounds are not such
        # moves (a clamp stops a vertex at its limit, inelastic): taken into the parents'
        # velocity, a cage falling onto its max distance was kicked back up (20 J above its
        # start from a 112 J fall).
        shared = length_only - before
        shared *= sweep.share
        # Each component's children arrive in the same order as row-major: same sums.
        moved = np.bincount(sweep.parent_flat.reshape(-1), weights=shared.reshape(-1),
                            minlength=sweep.size)
        moved += np.bincount(sweep.child_flat.reshape(-1), weights=shared.reshape(-1),
                             minlength=sweep.size)
        x_prev += moved.reshape(x_prev.shape)
    if limited:
        _frictionless_limits(x_prev, flat.take(sweep.child_flat), length_only,
                             ref_flat.take(sweep.child_flat), sweep)


def _frictionless_limits(x_prev: np.ndarray, placed: np.ndarray, length_only: np.ndarray,
                         reference: np.ndarray, sweep: Sweep) -> None:
    """The max-distance limit stops a child's motion out of its ball and nothing else: of the
    move from where the length put it to where it was placed (`length_only` -> `placed`, both
    (3, n)), the part along the ball's normal (from `reference` to `placed`) stays a velocity
    change (inelastic), the part across it is a position fix only (`x_prev` moves with it). The
    clamp turns a child about its parent to the rim of the cap its ball leaves on the
    rest-length sphere; taken whole into the velocity, that turn pushed the child sideways and a
    passive cage falling onto its max distance got 5.2 % of its fall's energy back (2.7 %
    now)."""
    move = placed - length_only
    normal = placed - reference
    square = np.square(normal)
    length = square[0] + square[1]
    length += square[2]
    np.sqrt(length, out=length)
    normal /= np.maximum(length, EPS)
    along = move[0] * normal[0] + move[1] * normal[1]
    along += move[2] * normal[2]
    move -= along * normal
    x_prev += np.bincount(sweep.child_flat.reshape(-1), weights=move.reshape(-1),
                          minlength=sweep.size).reshape(x_prev.shape)


def _sweep_down(flat: np.ndarray, sweep: Sweep, before: np.ndarray, ref_flat, limit,
                length_only: np.ndarray | None = None) -> bool:
    """Place each level's children at rest length from their parents (and inside their max
    distances), top down; whether some link had to leave a child outside its max distance.
    `length_only` (3, n): receives each child's place from the length alone (before its max
    distance), for DFTL."""
    conflict = False
    for rows, parent_flat, child_flat, rest in sweep.steps:
        top = flat.take(parent_flat)
        d = before[:, rows] - top
        square = np.square(d)
        length = square[0] + square[1]
        length += square[2]
        np.sqrt(length, out=length)
        np.maximum(length, EPS, out=length)
        d *= rest / length
        d += top
        if length_only is not None:
            length_only[:, rows] = d
        if ref_flat is not None:
            child_limit = limit[child_flat[0] // 3]
            if np.isfinite(child_limit).any():
                ref = ref_flat.take(child_flat)
                d = clamp_in_sweep(d, top, ref, child_limit, rest)
                conflict = conflict or outside_by(d, ref, child_limit, rest)
        flat[child_flat] = d
    return conflict


def _sweep_up(flat: np.ndarray, sweep: Sweep, ref_flat: np.ndarray, limit: np.ndarray,
              fixed: np.ndarray | None) -> None:
    """Bottom up: move each parent that is further than rest from its child toward it, then
    inside its own max distance (pins stay)."""
    for _, parent_flat, child_flat, rest in reversed(sweep.steps):
        child = clamp_into_ball(flat.take(child_flat), ref_flat.take(child_flat),
                                limit[child_flat[0] // 3])
        flat[child_flat] = child
        parent = flat.take(parent_flat)
        vertex = parent_flat[0] // 3
        e = clamp_into_ball(pull_parent(parent, child, rest), ref_flat.take(parent_flat),
                            limit[vertex])
        if fixed is not None:
            e = np.where(fixed[vertex], parent, e)
        flat[parent_flat] = e


def clamp_max_distance(x: np.ndarray, reference: np.ndarray, index: np.ndarray,
                       limit: np.ndarray, *, by_axis: np.ndarray | None = None) -> None:
    """`|x - reference| <= limit` for the vertices `index` (Mueller 2020 eq. 25 upper limit).

    `by_axis`: `axis_major(index)` when the caller keeps it (the solver, per frame); x must be
    C-contiguous (N, 3)."""
    if by_axis is None:
        by_axis = axis_major(index)
    flat = x.reshape(-1)
    r = np.ascontiguousarray(reference).reshape(-1).take(by_axis)  # (3, n)
    d = flat.take(by_axis)
    d -= r
    square = np.square(d)
    length = square[0] + square[1]
    length += square[2]
    np.sqrt(length, out=length)
    scale = np.minimum(limit / np.maximum(length, EPS), 1.0)
    d *= scale
    d += r
    flat[by_axis] = d


def push_backstop(x: np.ndarray, reference: np.ndarray, normal: np.ndarray, index: np.ndarray,
                  distance: np.ndarray) -> None:
    """Keep vertices `index` no further than `distance` behind the reference surface.

    Behind = against the surface normal `normal` (unit, from the reference quads' winding, which
    points away from the body); the vertex is moved along the normal only (Jolt back stop).
    """
    n = normal[index]
    s = dot3(x[index] - reference[index], n)
    push = np.maximum(-distance - s, 0.0)
    x[index] += n * push[:, None]


def push_layers(x: np.ndarray, vertex: np.ndarray, quad: np.ndarray, uv: np.ndarray,
                side: np.ndarray, thickness: np.ndarray) -> bool:
    """Seed 003 layered self-collision: a vertex of layer L stays `thickness` on its side of the
    paired quad of layer L - 1 (moving only itself: the layer below is an obstacle to it).
    Whether it moved a vertex.

    The side is fixed at rest, so a vertex that got through is pulled back to its own side.
    """
    corners = x[quad]  # (L, 4, 3)
    n = quad_normal(corners) * side[:, None]
    p = bilinear(corners, uv)
    s = dot3(x[vertex] - p, n)
    push = np.maximum(thickness - s, 0.0)
    if not np.any(push > 0.0):
        return False
    x[vertex] += n * push[:, None]
    return True


def may_touch(kind: int, x: np.ndarray, by_axis: np.ndarray, M: np.ndarray,
              Minv: np.ndarray | None, colliders, k: int, similar: bool,
              radius: np.ndarray) -> np.ndarray | None:
    """Exact narrow-phase pre-test of the vertices whose flat indices are `by_axis` (3, n):
    False where a vertex provably cannot touch collider `k` this substep (its signed distance is
    at least its radius), None when the shape has no cheap test. Only the rest go through
    `shape_normal`, so the result is the same as testing all (a vertex that does not touch is
    neither moved nor flagged) at a fraction of the cost: the frame's broad phase keeps every
    vertex a collider might reach over a whole frame. Component-major: a (3, 3) @ (3, n) product
    and row sums instead of (n, 3) rows.

    Ellipsoid, uniform scale: the sphere's own distance `|x - c| - R`. Ellipsoid, general matrix:
    with `u = Minv x` (local, unit sphere of radius `size`), `core.colliders.ellipsoid_normal`'s
    tangent-plane distance is `(|u| - size) / |Minv^T s|` for the unit direction `s`, and
    `|Minv^T s| <= |Minv|_F`, so `(|u| - size) / |Minv|_F` is a lower bound of it.
    """
    if kind != ColliderKind.ELLIPSOID or (Minv is None and not similar):
        return None
    size = float(colliders.size[k])
    tolerance = 1e-9 * (1.0 + size)  # rounding of the bound versus the exact distance
    xs = x.reshape(-1).take(by_axis)  # (3, n)
    if similar:
        xs -= M[:3, 3, None]
        reach = size * float(np.linalg.norm(M[:3, 0]))
        scale = 1.0
        u = xs
    else:
        A = Minv[:3, :3]
        u = A @ xs
        u += Minv[:3, 3, None]
        reach = size
        scale = float(np.sqrt(np.square(A).sum()))
    np.square(u, out=u)
    length = u[0] + u[1]
    length += u[2]
    np.sqrt(length, out=length)
    length -= reach
    length /= scale
    return length < radius + tolerance


def collide(x: np.ndarray, x_prev: np.ndarray, index: np.ndarray, radius: np.ndarray,
            kind: int, M: np.ndarray, Minv: np.ndarray | None, colliders, k: int,
            similar: bool, friction: float, contact: np.ndarray, *,
            by_axis: np.ndarray | None = None, surface: np.ndarray | None = None,
            start: np.ndarray | None = None) -> None:
    """Push vertices `index` out of collider `k` to their radius, with position-based Coulomb
    friction (`core.colliders`; `surface`: the collider's motion over the substep, so friction
    acts on the motion relative to it); flag the ones that touched in `contact` (N,).
    `by_axis`: `axis_major(index)` when the caller keeps it; x must be C-contiguous (N, 3).
    `start` (N, 3): where the vertices started the substep; friction then holds their motion
    from there (`contact_friction`, the solver's `x_prev` is a velocity reference)."""
    close = may_touch(kind, x, axis_major(index) if by_axis is None else by_axis, M, Minv,
                      colliders, k, similar, radius)
    if close is not None:
        if not close.any():
            return
        index, radius = index[close], radius[close]
    xs = x.take(index, axis=0)  # rows: 3-4x faster than x[index]
    n, sd = shape_normal(kind, xs, M, Minv, colliders, k, similarity=similar)
    penetration = radius - sd
    hit = penetration > 0.0
    if not hit.any():
        return
    np.maximum(penetration, 0.0, out=penetration)
    xs += n * penetration[:, None]
    if friction > 0.0 and start is not None:
        prev = x_prev.take(index, axis=0)
        friction_from_start(xs, start.take(index, axis=0), prev, n, penetration, friction,
                            surface)
        x_prev[index] = prev
    elif friction > 0.0:
        apply_friction(xs, x_prev.take(index, axis=0), n, penetration, friction, surface)
    x[index] = xs
    contact[index[hit]] = True


# Edge contacts. A collider thinner than the grid spacing (a 6 cm leg against a cage with 20 cm
# between vertices) passes between vertices that each test clear. Each link is tested at its
# point closest to the collider (segment-segment closest points for a capsule, the closest point
# to the centre in the collider's local space for an ellipsoid or box) and, where that point is
# inside, the link is pushed out as a whole: the two ends move along the contact normal,
# weighted by their barycentric share and inverse mass so that the contact point itself moves
# exactly the penetration (the PBD point-on-edge constraint, Müller et al. 2007). Contacts at an
# end are the vertex test's. Several links pushing one vertex are averaged (Jacobi).
EDGE_END = 1e-3  # parameter margin: contacts closer to an end are left to the vertex test


def _closest_on_edges_to_segment(xa: np.ndarray, xb: np.ndarray, A: np.ndarray,
                                 B: np.ndarray) -> np.ndarray:
    """Parameter s (E,) of the point of each edge xa + s (xb - xa) closest to segment AB
    (Ericson, Real-Time Collision Detection §5.1.9)."""
    d1 = xb - xa
    d2 = B - A
    r = xa - A
    a = np.einsum("ek,ek->e", d1, d1)
    e = float(d2 @ d2)
    # einsum, not @: a matrix-vector product on (E, 3) goes to multithreaded BLAS
    f = np.einsum("ek,k->e", r, d2)
    c = np.einsum("ek,ek->e", d1, r)
    safe_a = np.maximum(a, 1e-300)
    if e <= 1e-300:  # the segment is a point
        return np.clip(-c / safe_a, 0.0, 1.0)
    b = np.einsum("ek,k->e", d1, d2)
    denom = a * e - b * b
    s = np.where(denom > 1e-12 * a * e, np.clip((b * f - c * e) / np.maximum(denom, 1e-300),
                                                 0.0, 1.0), 0.0)
    t = (b * s + f) / e
    s = np.where(t < 0.0, np.clip(-c / safe_a, 0.0, 1.0),
                 np.where(t > 1.0, np.clip((b - c) / safe_a, 0.0, 1.0), s))
    return s


def edge_contact_parameter(kind: int, xa: np.ndarray, xb: np.ndarray, M: np.ndarray,
                           Minv: np.ndarray | None, colliders, k: int) -> tuple | None:
    """(s, clear): where on each edge (E,) to test collider `k`, and a lower bound of the
    signed distance of that point to the collider's surface (cheap: only the edges within
    their radius of it go through the exact `shape_normal`). None for a plane (a plane cannot
    pass between two vertices that are both outside it)."""
    if kind == ColliderKind.PLANE:
        return None
    if kind == ColliderKind.CAPSULE:
        half = float(colliders.size[k])
        A = M[:3, :3] @ np.array([0.0, 0.0, -half]) + M[:3, 3]
        B = M[:3, :3] @ np.array([0.0, 0.0, half]) + M[:3, 3]
        s = _closest_on_edges_to_segment(xa, xb, A, B)
        p = xa + s[:, None] * (xb - xa)
        axis = B - A
        u = np.clip(np.einsum("ek,k->e", p - A, axis) / max(float(axis @ axis), 1e-300),
                    0.0, 1.0)
        gap = p - A - u[:, None] * axis
        scale = 0.5 * (np.linalg.norm(M[:3, 0]) + np.linalg.norm(M[:3, 1]))
        widest = max(float(colliders.radius_a[k]), float(colliders.radius_b[k])) * scale
        return s, np.sqrt(np.einsum("ek,ek->e", gap, gap)) - widest
    inverse = np.linalg.inv(M) if Minv is None else Minv
    ua = np.einsum("jk,ek->ej", inverse[:3, :3], xa) + inverse[:3, 3]
    d = np.einsum("jk,ek->ej", inverse[:3, :3], xb - xa)
    length2 = np.maximum(np.einsum("ek,ek->e", d, d), 1e-300)
    s = np.clip(-np.einsum("ek,ek->e", ua, d) / length2, 0.0, 1.0)
    u = ua + s[:, None] * d
    # Local distance over the largest stretch of the inverse (as `may_touch`); a box's corner
    # is up to sqrt(3) of its half-size from the centre.
    reach = float(colliders.size[k]) * (np.sqrt(3.0) if kind == ColliderKind.BOX else 1.0)
    scale = np.linalg.norm(inverse[:3, :3])
    clear = (np.sqrt(np.einsum("ek,ek->e", u, u)) - reach) / scale
    if kind == ColliderKind.BOX:
        # A link passing a box's edge or corner comes closest to the box there, not at its
        # point closest to the centre: a link leaving a vertex on the top face over the edge
        # was tested near that vertex, against the top face, and its child turned 2 cm up for
        # a 2 mm contact (the lever 1 / s), substep after substep, while the link still cut
        # the edge. Where the link stays outside, test its point closest to the box.
        s_box, gap = _closest_on_edges_to_box(ua, d, float(colliders.size[k]))
        outside = gap > 0.0
        s = np.where(outside, s_box, s)
        clear = np.where(outside, gap / scale, clear)
    return s, clear


def _closest_on_edges_to_box(ua: np.ndarray, d: np.ndarray, half: float
                             ) -> tuple[np.ndarray, np.ndarray]:
    """Parameter s (E,) of the point of each local-space segment ua + s d closest to the box
    [-half, half]^3, and that distance (0 where the segment meets the box). The squared
    distance sum_k max(|u_k| - half, 0)^2 is convex and piecewise quadratic in s, its pieces
    ending where a coordinate crosses +-half: its minimum is at a piece's end or at a piece's
    own stationary point, and every candidate is evaluated (no iteration)."""
    E = ua.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = np.concatenate([(half - ua) / d, (-half - ua) / d], axis=1)  # (E, 6)
    cross = np.where(np.isfinite(cross), np.clip(cross, 0.0, 1.0), 0.0)
    ends = np.sort(np.concatenate([np.zeros((E, 1)), cross, np.ones((E, 1))], axis=1), axis=1)
    lo, hi = ends[:, :-1], ends[:, 1:]  # (E, 7) pieces
    mid = 0.5 * (lo + hi)
    u_mid = ua[:, None, :] + mid[..., None] * d[:, None, :]  # (E, 7, 3)
    side = np.where(u_mid > half, half, np.where(u_mid < -half, -half, np.nan))
    active = ~np.isnan(side)
    offset = np.where(active, ua[:, None, :] - np.nan_to_num(side), 0.0)
    slope = np.where(active, d[:, None, :], 0.0)
    denominator = np.einsum("epk,epk->ep", slope, slope)
    with np.errstate(divide="ignore", invalid="ignore"):
        stationary = -np.einsum("epk,epk->ep", offset, slope) / denominator
    stationary = np.where(denominator > 0.0, np.clip(stationary, lo, hi), mid)
    candidates = np.concatenate([ends, stationary], axis=1)  # (E, 15)
    u = ua[:, None, :] + candidates[..., None] * d[:, None, :]
    excess = np.maximum(np.abs(u) - half, 0.0)
    square = np.einsum("eck,eck->ec", excess, excess)
    best = np.argmin(square, axis=1)
    rows = np.arange(E)
    return candidates[rows, best], np.sqrt(square[rows, best])


def narrowest_radius(kind: int, M: np.ndarray, colliders, k: int) -> float:
    """Half the collider's smallest width (world); 0 for a box (its corners and edges are sharp)
    and a plane. A round collider passes a quad untouched by its vertices only through the
    quad's inside, within half the quad's diagonal (its longest link) of every corner: one at
    least that wide meets a vertex first, and the vertex test is enough."""
    scale = np.linalg.norm(M[:3, :3], axis=0)
    if kind == ColliderKind.ELLIPSOID:
        return float(colliders.size[k]) * float(scale.min())
    if kind == ColliderKind.CAPSULE:
        return min(float(colliders.radius_a[k]), float(colliders.radius_b[k])) * float(
            0.5 * (scale[0] + scale[1]))
    return 0.0


def _crossing(x: np.ndarray, a: np.ndarray, b: np.ndarray, radius: np.ndarray, kind: int,
              M: np.ndarray, Minv: np.ndarray | None, colliders, k: int, similar: bool):
    """The links (a, b) whose closest approach to collider `k` lies between their ends and within
    the larger end radius: (their index into a, b; the link parameter s; the ends xa, xb of
    those links; the point p at s; the collider's normal n and signed distance sd at p), or
    None when no link crosses it."""
    if a.size == 0:
        return None
    xa, xb = x.take(a, axis=0), x.take(b, axis=0)
    found = edge_contact_parameter(kind, xa, xb, M, Minv, colliders, k)
    if found is None:
        return None
    s, clear = found
    reach = np.maximum(radius.take(a), radius.take(b))
    interior = (s > EDGE_END) & (s < 1.0 - EDGE_END) & (clear < reach)
    if not interior.any():
        return None
    s, xa, xb = s[interior], xa[interior], xb[interior]
    p = xa + s[:, None] * (xb - xa)
    n, sd = shape_normal(kind, p, M, Minv, colliders, k, similarity=similar)
    if kind == ColliderKind.BOX:
        edge, s_edge, n_edge, sd_edge = _box_edge_contacts(xa, xb, M, Minv,
                                                           float(colliders.size[k]))
        if edge.any():
            s, n, sd = s.copy(), n.copy(), sd.copy()
            s[edge], n[edge], sd[edge] = s_edge, n_edge, sd_edge
            p[edge] = xa[edge] + s_edge[:, None] * (xb[edge] - xa[edge])
            keep = (s > EDGE_END) & (s < 1.0 - EDGE_END)  # at an end: the vertex test's
            if not keep.all():
                interior = interior.copy()
                interior[np.flatnonzero(interior)[~keep]] = False
                if not interior.any():
                    return None
                s, xa, xb, p, n, sd = s[keep], xa[keep], xb[keep], p[keep], n[keep], sd[keep]
    return interior, s, xa, xb, p, n, sd


def _box_edge_contacts(xa: np.ndarray, xb: np.ndarray, M: np.ndarray, Minv: np.ndarray | None,
                       half: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Links (xa, xb) that cut into a box across one of its edges: (which (E,) bool; for those,
    the link parameter s, the world normal n, the signed distance sd). A link cutting a corner
    region was tested at its point closest to the box's centre, against the face nearest that
    point: its normal jumped between the two faces of the edge it cut (+z one substep, -x the
    next) and the point push threw the near end 11-13 mm a substep up, then sideways (the 8 x 8
    cage on a box gained 3.2 % of its fall at 160 Hz substeps). The least translation taking a
    segment out of a box is along one of the separating axes of the segment-box test (Ericson,
    Real-Time Collision Detection §5.3.3 / §5.2.1: the 3 face normals and the 3 d x e_k): the
    axis of least overlap. Where that is an edge axis d x e_k the contact is the link's point
    closest to the box edge along e_k on that side (the closest point of a segment to the
    edge's line, in the projection along e_k: Ericson §5.1.2), the normal d x e_k outward and
    the depth that overlap: continuous with the closest-point contact of a link just outside
    the edge (`_closest_on_edges_to_box`), whose normal is the same d x e_k. Where a face
    axis wins (or the link is outside) the face contact stands."""
    inverse = np.linalg.inv(M) if Minv is None else Minv
    ua = np.einsum("jk,ek->ej", inverse[:3, :3], xa) + inverse[:3, 3]
    d = np.einsum("jk,ek->ej", inverse[:3, :3], xb - xa)
    E = ua.shape[0]
    centre, half_d = ua + 0.5 * d, 0.5 * d
    eye = np.eye(3)
    axes = np.concatenate([np.broadcast_to(eye, (E, 3, 3)), np.cross(d[:, None, :], eye)], 1)
    size = np.sqrt(np.einsum("eak,eak->ea", axes, axes))
    # A link along a box axis has no edge axis for it (d x e_k = 0).
    usable = size > 1e-9 * np.sqrt(np.einsum("ek,ek->e", d, d))[:, None]
    axes = axes / np.where(usable, size, 1.0)[..., None]
    along = np.einsum("eak,ek->ea", axes, centre)
    overlap = (half * np.abs(axes).sum(axis=2)
               + np.abs(np.einsum("eak,ek->ea", axes, half_d)) - np.abs(along))
    overlap = np.where(usable, overlap, np.inf)
    best = np.argmin(overlap, axis=1)
    rows = np.arange(E)
    depth = overlap[rows, best]
    edge = (best >= 3) & (depth > 0.0)
    if not edge.any():
        return edge, depth[:0], xa[:0], depth[:0]
    rows, best, depth = rows[edge], best[edge] - 3, depth[edge]
    normal = axes[rows, best + 3] * np.where(along[rows, best + 3] < 0.0, -1.0, 1.0)[:, None]
    # The box edge along e_k on the normal's side; in the projection along e_k it is a point.
    corner = half * np.sign(normal)
    offset = ua[rows] - corner
    flat_d = d[rows].copy()
    offset[np.arange(rows.size), best] = 0.0
    flat_d[np.arange(rows.size), best] = 0.0
    s = np.clip(-np.einsum("ek,ek->e", offset, flat_d)
                / np.maximum(np.einsum("ek,ek->e", flat_d, flat_d), 1e-300), 0.0, 1.0)
    # World normal: the plane's normal maps by the inverse transpose; a local distance
    # becomes this much shorter (exact for a similarity).
    world = np.einsum("jk,ej->ek", inverse[:3, :3], normal)
    length = np.sqrt(np.einsum("ek,ek->e", world, world))
    return edge, s, world / length[:, None], -depth / length


def collide_edges(x: np.ndarray, a: np.ndarray, b: np.ndarray, inv_mass: np.ndarray,
                  radius: np.ndarray, kind: int, M: np.ndarray, Minv: np.ndarray | None,
                  colliders, k: int, similar: bool, contact: np.ndarray) -> None:
    """Push links (a, b) out of collider `k` where they cross it between their ends (see
    above); `radius` (N,) per vertex, interpolated along the link; flags `contact`."""
    crossing = _crossing(x, a, b, radius, kind, M, Minv, colliders, k, similar)
    if crossing is None:
        return
    interior, s, _, _, _, n, sd = crossing
    a, b = a[interior], b[interior]
    penetration = (1.0 - s) * radius[a] + s * radius[b] - sd
    hit = penetration > 0.0
    if hit.any():
        _push_link_points(x, a[hit], b[hit], s[hit], n[hit], penetration[hit], inv_mass, contact)


def _relative_normal(p: np.ndarray, p_prev: np.ndarray, n: np.ndarray,
                     surface: np.ndarray | None) -> np.ndarray:
    """Normal displacement (n,) over the substep of points now at `p` (n, 3), at `p_prev` at its
    start, relative to the collider's surface (`surface`: `core.colliders.surface_motion`, the
    map taking a point of the collider at the end back to its start; None: it did not move)."""
    if surface is not None:
        R, t = surface[:3, :3], surface[:3, 3]
        p = p[:, 0:1] * R[:, 0] + p[:, 1:2] * R[:, 1] + p[:, 2:3] * R[:, 2] + t
    return dot3(p - p_prev, n)


def stop_normal_velocity(x: np.ndarray, x_prev: np.ndarray, index: np.ndarray, kind: int,
                         M: np.ndarray, Minv: np.ndarray | None, colliders, k: int,
                         similar: bool, surface: np.ndarray | None) -> None:
    """The contacts' velocity pass for vertices `index` that touched collider `k` in the substep
    (restitution 0, `solver._Bake._contact_velocity`): each ends with no velocity along the
    collider's normal relative to its surface; `x_prev` moves, `x` stays. No distance gate: a
    push averaged over several links, or a turn about a parent, leaves a vertex off the surface
    by more than it moved, and gated at its move the capsule drop bounced again (2-5 %)."""
    xs = x.take(index, axis=0)
    n, _ = shape_normal(kind, xs, M, Minv, colliders, k, similarity=similar)
    along = _relative_normal(xs, x_prev.take(index, axis=0), n, surface)
    x_prev[index] += n * along[:, None]


def stop_link_normal_velocity(x: np.ndarray, x_prev: np.ndarray, a: np.ndarray, b: np.ndarray,
                              inv_mass: np.ndarray, radius: np.ndarray, kind: int, M: np.ndarray,
                              Minv: np.ndarray | None, colliders, k: int, similar: bool,
                              surface: np.ndarray | None) -> None:
    """As `stop_normal_velocity` for links (a, b) crossing collider `k` between their ends: the
    point of each at its contact parameter ends with no normal velocity relative to the
    surface, its ends' velocities changed by their barycentric share and inverse mass (the
    impulse of the PBD point-on-edge contact, `_push_link_points` on `x_prev`; several links
    on one vertex averaged)."""
    crossing = _crossing(x, a, b, radius, kind, M, Minv, colliders, k, similar)
    if crossing is None:
        return
    interior, s, _, _, p, n, _ = crossing
    a, b = a[interior], b[interior]
    pa, pb = x_prev.take(a, axis=0), x_prev.take(b, axis=0)
    along = _relative_normal(p, pa + s[:, None] * (pb - pa), n, surface)
    _push_link_points(x_prev, a, b, s, n, along, inv_mass, np.zeros(x.shape[0], dtype=bool))


def turn_vertices_out(x: np.ndarray, parent: np.ndarray, child: np.ndarray, n: np.ndarray,
                      penetration: np.ndarray, rest: np.ndarray, contact: np.ndarray) -> None:
    """Move children out of a collider they are inside by `penetration` (n,) along its normal
    `n` (n, 3) with their parents held (the contact sweep, `contact_sweep`), to the nearest
    point of its rest-length sphere about the parent on the outer side of the contact's tangent
    plane (the nearest point of that cap to the push along the normal, `pushed`): the sphere's
    point on the line from the parent through `pushed` where it is outside the plane (the
    parent behind the plane, or `pushed` beyond rest), else the nearest point of the circle
    where the plane cuts the sphere (`turn_about`, the child turned about its parent to the
    plane). The tangent plane is outside a convex collider, so the child ends outside at its
    link's length (exact for a flat collider; a curved one leaves it further out). Pushed along
    the normal and left there where that was within rest (a link pointing into the collider),
    the child ended short: the sweep's settle put it back at rest along the link and into the
    collider, round after round, and the last push stayed (a cape's hem link on a moving
    capsule body 1.9 % short, its parent 0.91 of the link above the plane;
    tests/core/cloth/test_cloth_box_audit.py). Where the plane leaves no room on the sphere
    the child points along the normal. Flags `contact`."""
    xc = x.take(child, axis=0)
    top = x.take(parent, axis=0)
    pushed = xc + penetration[:, None] * n
    d = pushed - top
    radial = top + d * (rest / np.maximum(norm3(d), EPS))[:, None]
    outside = dot3(radial - pushed, n) >= 0.0
    x[child] = np.where(outside[:, None], radial, turn_about(top, xc, n, penetration, rest))
    contact[child] = True


def turn_about(top: np.ndarray, xc: np.ndarray, n: np.ndarray, rise: np.ndarray,
               rest: np.ndarray) -> np.ndarray:
    """Children `xc` (n, 3) turned about their parents `top` onto their rest-length spheres,
    `rise` (n,) further along the unit normals `n` than now (relative to `rest`: their height
    above the parent along n becomes (u . n) |xc - top| + rise), keeping the direction of their
    tangential part: u' = beta n + sqrt(1 - beta^2) t, the nearest such point of the sphere.
    Where the height is out of reach the child points along (or against) the normal."""
    u = xc - top
    length = np.maximum(norm3(u), EPS)
    u /= length[:, None]
    along = dot3(u, n)
    beta = np.clip((along * length + rise) / rest, -1.0, 1.0)
    t = u - along[:, None] * n
    t /= np.maximum(norm3(t), EPS)[:, None]
    return top + rest[:, None] * (beta[:, None] * n + np.sqrt(1.0 - beta * beta)[:, None] * t)


def turn_links_out(x: np.ndarray, parent: np.ndarray, child: np.ndarray, rest: np.ndarray,
                   radius: np.ndarray, parent_depth: np.ndarray, kind: int, M: np.ndarray,
                   Minv: np.ndarray | None, colliders, k: int, similar: bool,
                   contact: np.ndarray) -> None:
    """Turn links (parent, child) about their parents, which stay, until the point where each
    crosses collider `k` between its ends is out (the contact sweep, `contact_sweep`): the child
    turns on its `rest`-length sphere (`turn_about`) until it is `penetration / s` higher along
    the contact normal, which lifts the contact point at parameter `s` by the penetration
    (exact for a flat face; the next round takes what a curved one leaves). Moved straight
    along the normal instead, a link crossing a box's edge at a slant was shortened: an 8 x 8
    cage draped over a box ended substeps with hard vertical links 12.5 % short and gained
    66 % of its fall in 1 s. A parent inside its own radius of the surface (by rounding, or a
    conflict with its max distance) is not the link's to fix: that part of the penetration is
    left out, or a link leaving such a parent nearly along the surface, touching at s -> 0, sent
    its child flying (29 % horizontal stretch on a grid over a thin capsule); `parent_depth`
    (n,) is how far each parent is inside its radius (0 outside). At most the link turns to
    point along the normal. Flags `contact`."""
    crossing = _crossing(x, parent, child, radius, kind, M, Minv, colliders, k, similar)
    if crossing is None:
        return
    interior, s, xa, xb, _, n, sd = crossing
    child = child[interior]
    r_a, r_b = radius.take(parent[interior]), radius.take(child)
    penetration = (1.0 - s) * (r_a - parent_depth[interior]) + s * r_b - sd
    hit = penetration > 0.0
    if not hit.any():
        return
    x[child[hit]] = turn_about(xa[hit], xb[hit], n[hit], penetration[hit] / s[hit],
                               rest[interior][hit])
    contact[child[hit]] = True


def _push_link_points(x: np.ndarray, a: np.ndarray, b: np.ndarray, s: np.ndarray,
                      n: np.ndarray, penetration: np.ndarray, inv_mass: np.ndarray,
                      contact: np.ndarray) -> None:
    """Move the point at parameter `s` of each link (a, b) by `penetration` along `n`: the ends
    by their barycentric share and inverse mass (PBD point on an edge, Müller et al. 2007);
    several links on one vertex averaged (Jacobi). Flags the ends in `contact`."""
    wa, wb = inv_mass[a], inv_mass[b]
    weight = (1.0 - s) ** 2 * wa + s * s * wb
    ok = weight > 0.0
    if not ok.any():
        return
    a, b, s, n, wa, wb = a[ok], b[ok], s[ok], n[ok], wa[ok], wb[ok]
    step = penetration[ok] / weight[ok]
    N = x.shape[0]
    ends = np.concatenate([a, b])
    share = np.concatenate([(1.0 - s) * wa * step, s * wb * step])
    normals = np.concatenate([n, n])
    count = np.bincount(ends, weights=np.concatenate([wa, wb]) > 0.0, minlength=N)
    moved = np.flatnonzero(count)
    for axis in range(3):  # bincount sums repeated indices (np.add.at is far slower)
        total = np.bincount(ends, weights=share * normals[:, axis], minlength=N)
        x[moved, axis] += total[moved] / count[moved]
    contact[a] = True
    contact[b] = True


# Links against body meshes. A mesh has no centre or axis to find a link's closest point from,
# so each link is sampled at evenly spaced interior points and pushed out at its deepest
# sample, as `collide_edges` does (PBD point on an edge, Müller et al. 2007; several links on
# one vertex averaged). Between two samples Δ apart a link can sag Δ² / (8 r) into a body part
# of half-thickness r; the spacing keeps that under the cloth radius for parts down to
# THINNEST_PART (a 6 cm limb), so a dense cage, whose links are shorter than the spacing, gets
# no samples and pays nothing.
THINNEST_PART = 0.03  # m: half-thickness of the thinnest body part a link must not slip over
MAX_EDGE_SAMPLES = 16  # per link


def mesh_edge_samples(rest: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """Interior samples per link (E,) from its rest length and radius (metres)."""
    spacing = np.sqrt(8.0 * THINNEST_PART * np.maximum(radius, 1e-3))
    count = np.ceil(rest / spacing - 1e-9).astype(np.int64) - 1
    return np.clip(count, 0, MAX_EDGE_SAMPLES)


def collide_mesh_edges(field, x: np.ndarray, a: np.ndarray, b: np.ndarray,
                       inv_mass: np.ndarray, radius: np.ndarray, rest: np.ndarray,
                       t_start: float, t_end: float, mask: np.ndarray | None,
                       contact: np.ndarray) -> None:
    """Push links (a, b) of rest length `rest` out of every mesh of `field`
    (`core.mesh_colliders.MeshField`) where they cross it between their ends; `mask` (M, E):
    which link meets which mesh (None: all); `radius` (N,) per vertex (-inf where pinned),
    interpolated along the link; flags `contact`."""
    if a.size == 0:
        return
    count = mesh_edge_samples(rest, np.maximum(radius[a], radius[b]))
    sampled = count > 0
    if not sampled.any():
        return
    for m in range(field.meshes.count):
        on = sampled if mask is None else sampled & mask[m]
        links = np.flatnonzero(on)
        if len(links) == 0:
            continue
        n_l = count[links]
        link = np.repeat(np.arange(len(links)), n_l)
        first = np.cumsum(n_l) - n_l
        k = np.arange(len(link)) - np.repeat(first, n_l)
        s = (k + 1.0) / (n_l[link] + 1.0)
        la, lb = a[links], b[links]
        xa, xb = x.take(la, axis=0), x.take(lb, axis=0)
        points = xa[link] + s[:, None] * (xb - xa)[link]
        c = field.contacts(m, points, t_start, t_end)
        if len(c.index) == 0:
            continue
        hit_link, sc = link[c.index], s[c.index]
        penetration = (1.0 - sc) * radius[la[hit_link]] + sc * radius[lb[hit_link]] - c.distance
        hit = penetration > 0.0
        if not hit.any():
            continue
        hit_link, sc, n, penetration = hit_link[hit], sc[hit], c.normal[hit], penetration[hit]
        # The deepest sample of each link.
        order = np.lexsort((-penetration, hit_link))
        keep = np.ones(len(order), dtype=bool)
        keep[1:] = hit_link[order][1:] != hit_link[order][:-1]
        pick = order[keep]
        _push_link_points(x, la[hit_link[pick]], lb[hit_link[pick]], sc[pick], n[pick],
                          penetration[pick], inv_mass, contact)
