"""Swing (elliptical cone) and twist limits of the ball joints (Müller 2020 §3.4.2, Alg. 3).

The joint rotation is the child's orientation in its parent's frame relative to bind,
d = rest⁻¹ ⊗ parent⁻¹ ⊗ child, split as d = swing ⊗ twist with the twist about the bone axis
(local +Y) and the swing about an axis in the local XZ plane. The twist angle is clamped to
[min, max]; the swing rotation vector (sx, sz) to the ellipse ((sx-cx)/ax)² + ((sz-cz)/az)² <= 1
(its closest point). The centre (cx, cz) is zero for a ball joint; a hinge that bends one way
(a knee: 145° of flexion, 10° past straight) has its centre moved towards the flexion, so the
same ellipse is one-sided, like the offset cone frames of PhysX's and Bullet's cone-twist joints.
Both corrections are rotations of the child relative to its parent, solved as one hard angular
constraint.
"""

from __future__ import annotations

import math

import numpy as np

from .. import transcendental
from .bodies import (
    Bodies,
    FrozenPairs,
    Pairs,
    angular,
    block_impulse,
    block_inverse,
    einsum,
    norm,
    q2m,
    qmul,
    quat_conj,
    quat_exp,
    quat_log,
    rotate,
    where,
)
from .joints import JointColour

_TINY_LIMIT = 1e-6
_ELLIPSE_NEWTON_STEPS = 12  # quadratic from a lower bound: 12 reach rounding for a 1e-6 axis
# Up to this many points the closest points are found on Python floats (same bits).
SCALAR_POINTS = 8
# rad: what `inside_bound` keeps from the limits, far above the rounding of the swing-twist
# split (~1e-15 rad), so its early answer is always the full test's.
_INSIDE_MARGIN = 1e-6


def inside_bound(swing_limit: np.ndarray, twist_limit: np.ndarray,
                 swing_center: np.ndarray | None = None) -> np.ndarray:
    """(n,) for each joint a bound b such that a joint rotation d (w >= 0) with d_w > b is
    inside its swing ellipse and twist range, whatever its axis (2.0: no such bound).

    With d = swing ⊗ twist and the swing's axis ⊥ Y, d_w = swing_w twist_w, so
    cos(θ_d / 2) <= cos(θ_swing / 2) and cos(θ_twist / 2): neither angle exceeds d's whole
    angle θ_d. The swing is inside its ellipse when |swing| + |centre| < min(a_x, a_z) (the
    disk of that radius about the centre lies inside it), the twist inside its range when
    |twist| < min(-min, max). So θ_d below the smaller of the two radii (less _INSIDE_MARGIN)
    is inside both, and `limit_rotation` answers None without the split (its ~40 NumPy calls):
    every iteration of a walk whose joints keep clear of their limits."""
    ax = np.maximum(swing_limit[:, 0], _TINY_LIMIT)
    az = np.maximum(swing_limit[:, 1], _TINY_LIMIT)
    off = (0.0 if swing_center is None
           else np.sqrt(swing_center[:, 0] ** 2 + swing_center[:, 1] ** 2))
    with np.errstate(invalid="ignore"):  # (inf - inf never arises: the centre is finite)
        radius = np.minimum(np.minimum(ax, az) - off,
                            np.minimum(-twist_limit[:, 0], twist_limit[:, 1])) - _INSIDE_MARGIN
    # θ_d <= π always: a radius beyond it bounds nothing (-1 < every d_w >= 0)
    bound = np.cos(0.5 * np.minimum(radius, np.pi))
    return np.where(radius >= np.pi, -1.0, np.where(radius > 0.0, bound, 2.0))


def joint_rotation(q_child: np.ndarray, q_parent: np.ndarray, rest_relative: np.ndarray
                   ) -> np.ndarray:
    """d = rest⁻¹ ⊗ parent⁻¹ ⊗ child with w >= 0, (n, 4)."""
    d = qmul(quat_conj(rest_relative), qmul(quat_conj(q_parent), q_child))
    return d * where(d[:, :1] < 0, -1.0, 1.0)


def limit_rotation(q_child: np.ndarray, q_parent: np.ndarray, rest_relative: np.ndarray,
                   swing_limit: np.ndarray, twist_limit: np.ndarray,
                   swing_center: np.ndarray | None = None, inside: np.ndarray | None = None
                   ) -> np.ndarray | None:
    """World rotation vector (n, 3) of the child (relative to its parent) that brings the joint
    back inside its swing ellipse and twist range (zero where it is inside); None when every
    joint is inside.

    The vector is the exact rotation from the child's orientation J ⊗ d to J ⊗ d', with J the
    joint frame (parent ⊗ rest) and d' the clamped joint rotation: Δ = J ⊗ (d' ⊗ d⁻¹) ⊗ J⁻¹.
    Adding the swing and twist corrections as rotation vectors is exact only for a swing
    fixed along its own direction; at a deep knee bend (140°) a sideways fix taken as
    exp(J fix) turned the knee further out each iteration and the solve diverged.

    `inside`: `inside_bound` of these limits, if known (every joint clear of it: None at once,
    as the full test would answer)."""
    d = joint_rotation(q_child, q_parent, rest_relative)
    if inside is not None and (d[:, 0] > inside).all():
        return None
    swing, twist = swing_twist(d)
    swing_fix, twist_fix = limit_correction(swing, twist, swing_limit, twist_limit,
                                            swing_center)
    over = (twist_fix != 0.0) | (swing_fix != 0.0).any(axis=1)
    if not over.any():
        return None  # every joint inside its limits (the usual case)
    clamped = clamped_rotation(swing + swing_fix, twist + twist_fix)
    local = quat_log(qmul(clamped, quat_conj(d)))
    joint_frame = qmul(q_parent, rest_relative)
    return where(over[:, None], rotate(q2m(joint_frame), local), 0.0)


def clamped_rotation(swing: np.ndarray, twist: np.ndarray) -> np.ndarray:
    """The joint rotation exp(swing) ⊗ exp(twist Y) (n, 4) of a swing vector and twist angle.

    The twist's quaternion is written out, (cos(τ/2), 0, sin(τ/2), 0), not taken by
    `quat_exp` of (0, τ, 0) (its length, sin(|τ|/2) / |τ| and the guard for small angles:
    4 NumPy calls instead of 13; the same rotation within rounding). The limits split ~10
    times a substep of a limp body on its limits (each iteration, the velocity stop, each
    depth of the final pass)."""
    half = 0.5 * twist
    twist_q = np.zeros((len(twist), 4))
    twist_q[:, 0] = np.cos(half)
    twist_q[:, 2] = np.sin(half)
    return qmul(quat_exp(swing), twist_q)


def swing_twist(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(swing rotation vector (n, 3) with y = 0, twist angle (n,)) of joint rotations d."""
    twist = 2.0 * transcendental.arctan2(d[:, 2], d[:, 0])
    twist = (twist + np.pi) % (2.0 * np.pi) - np.pi
    tq = np.zeros(d.shape)
    tq[:, 0], tq[:, 2] = d[:, 0], d[:, 2]
    length = norm(tq)
    tq = where(length[:, None] > 1e-12, tq / np.maximum(length, 1e-12)[:, None],
                  [1.0, 0.0, 0.0, 0.0])
    swing = quat_log(qmul(d, quat_conj(tq)))
    swing[:, 1] = 0.0
    return swing, twist


def limit_correction(swing: np.ndarray, twist: np.ndarray, swing_limit: np.ndarray,
                     twist_limit: np.ndarray, swing_center: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(swing correction in the joint frame (n, 3), twist correction angle (n,)).

    ``swing_center`` (n, 2): the ellipse's centre (cx, cz), zero when None.

    An outside swing goes to the closest point of its ellipse, not along the ray to the
    origin: for a knee (145° about its bend axis, 10° sideways) a few degrees too far sideways
    at a deep bend would otherwise be fixed by straightening the knee 20-40° at once, a hard
    projection that threw a limp body curled over a box into the air."""
    ax = np.maximum(swing_limit[:, 0], _TINY_LIMIT)
    az = np.maximum(swing_limit[:, 1], _TINY_LIMIT)
    # (x and z of the swing as a strided view, not a gathered copy: the same numbers)
    rel = swing[:, ::2] if swing_center is None else swing[:, ::2] - swing_center
    e = (rel[:, 0] / ax) ** 2 + (rel[:, 1] / az) ** 2
    over = (e > 1.0).nonzero()[0]  # (the method: np.flatnonzero is ~6 Python-level calls)
    swing_fix = np.zeros(swing.shape)
    if len(over):  # (one integer gather of the joints outside, not three boolean ones)
        outside = rel[over]
        swing_fix[over, ::2] = closest_on_ellipse(outside, ax[over], az[over]) - outside
    # (np.clip's own arithmetic, min(max(x, lo), hi), without its Python wrapper)
    twist_fix = np.minimum(np.maximum(twist, twist_limit[:, 0]), twist_limit[:, 1]) - twist
    return swing_fix, twist_fix


def closest_on_ellipse(point: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Closest points (m, 2) on the ellipses (x/a)² + (y/b)² = 1 to the outside points (m, 2).

    Eberly, "Distance from a point to an ellipse" (Geometric Tools, 2011): the closest point is
    (a² x / (t + a²), b² y / (t + b²)) where t >= 0 is the root of
    F(t) = (a x / (t + a²))² + (b y / (t + b²))² - 1, convex and decreasing for t >= 0. Newton
    from a point where F >= 0 (the larger of 0 and max_k a_k |p_k| - a_k², below the root)
    climbs to it monotonically without overshooting; a fixed count keeps bakes deterministic
    and the last radial rescale (by a factor within rounding of 1) puts it exactly on.

    A circle (a == b, a round cone: every limit of the default humanoid table) has the root
    t = a |p| - a² in closed form, so its closest point is the radial one, a p / |p|, with no
    Newton steps: the limp benchmark body hanging on its 45° cones asked for 33 points a
    substep at ~13 µs each on floats (7 % of its substep). The Newton steps reached the
    same point within rounding (the bits of a limp bake on round cones change in the last
    places)."""
    if len(point) <= SCALAR_POINTS:
        return _closest_on_ellipse_scalar(point, a, b)
    x, y = point[:, 0], point[:, 1]
    circle = a == b
    if circle.all():  # (a cone: the radial point, no Newton steps)
        r = np.sqrt(x * x + y * y)
        closest = np.stack((a * x / r, a * y / r), axis=1)
    else:
        a2, b2 = a * a, b * b
        t = np.maximum(np.maximum(a * np.abs(x) - a2, b * np.abs(y) - b2), 0.0)
        for _ in range(_ELLIPSE_NEWTON_STEPS):
            ra, rb = a * x / (t + a2), b * y / (t + b2)
            value = ra * ra + rb * rb - 1.0
            slope = -2.0 * (ra * ra / (t + a2) + rb * rb / (t + b2))
            t = t - value / np.minimum(slope, -1e-300)
        closest = np.stack((a2 * x / (t + a2), b2 * y / (t + b2)), axis=1)
        if circle.any():
            r = np.sqrt(x * x + y * y)
            closest = where(circle[:, None],
                            np.stack((a * x / r, a * y / r), axis=1), closest)
    e = (closest[:, 0] / a) ** 2 + (closest[:, 1] / b) ** 2
    return closest / np.sqrt(np.maximum(e, 1.0))[:, None]


def _closest_on_ellipse_scalar(point: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`closest_on_ellipse` on Python floats, point by point: the same operations in the same
    order (IEEE 754 rounds each alike in NumPy and in Python: the same bits), without the ~100
    ufunc calls of the 12 Newton steps that a joint or two over its limit paid.

    The builtins max / min / abs are written as the conditional expressions they evaluate
    (max(p, q) is q if q > p else p; min(p, q) is q if q < p else p: the same comparisons,
    the same operand kept on ties and NaN): 17 Python calls per point fewer, and a limp
    humanoid on its limits asks for ~40 points per substep. (|x| as -x if x < 0 else x keeps
    the sign of a zero (or NaN) x, where abs clears it; a·x − a² with a² > 0 is the same
    number either way.)"""
    out = []
    for (x, y), ak, bk in zip(point.tolist(), a.tolist(), b.tolist(), strict=True):
        if ak == bk:  # a circle (a round cone): its radial point, as the vectorised steps
            r = math.sqrt(x * x + y * y)
            cx, cy = ak * x / r, ak * y / r
            ex, ey = cx / ak, cy / bk
            e = ex * ex + ey * ey
            scale = math.sqrt(1.0 if e < 1.0 else e)
            out.append((cx / scale, cy / scale))
            continue
        a2, b2 = ak * ak, bk * bk
        tx = ak * (-x if x < 0.0 else x) - a2
        ty = bk * (-y if y < 0.0 else y) - b2
        t = ty if ty > tx else tx
        t = 0.0 if t < 0.0 else t
        for _ in range(_ELLIPSE_NEWTON_STEPS):
            ra, rb = ak * x / (t + a2), bk * y / (t + b2)
            value = ra * ra + rb * rb - 1.0
            slope = -2.0 * (ra * ra / (t + a2) + rb * rb / (t + b2))
            step = t - value / (-1e-300 if slope > -1e-300 else slope)
            if step == t:
                # A fixed point of the Newton map: every later step computes the same
                # number from the same t, so stopping here keeps the fixed count's bits
                # (Newton from below is quadratic: 4-6 of the 12 steps usually reach it).
                break
            t = step
        cx, cy = a2 * x / (t + a2), b2 * y / (t + b2)
        ex, ey = cx / ak, cy / bk
        e = ex * ex + ey * ey
        scale = math.sqrt(1.0 if e < 1.0 else e)
        out.append((cx / scale, cy / scale))
    return np.array(out, dtype=np.float64).reshape(-1, 2)


class LimitBlocks:
    """The limits' 3x3 blocks of one colour for one substep: the inverse masses and frozen
    world inverse inertias do not change within its iterations, so the block is inverted at
    the first iteration with a joint outside its limits and kept for the others."""

    def __init__(self, frozen: FrozenPairs, pairs: Pairs):
        self.frozen, self.pairs, self.K_inv = frozen, pairs, None

    def get(self) -> tuple[FrozenPairs, np.ndarray]:
        if self.K_inv is None:
            fz, p = self.frozen, self.pairs
            self.K_inv = block_inverse(fz.Ia, fz.Ib, p.split_a, p.split)
        return self.frozen, self.K_inv


def solve_limits(s: Bodies, col: JointColour, blocks: LimitBlocks | None = None) -> None:
    """Project violated swing / twist limits (hard, both bodies move). `blocks`: this
    substep's `LimitBlocks` of the colour, if kept."""
    dtheta = limit_directions(s, col)
    if dtheta is not None:  # (a zero rotation would only renormalise the quaternions)
        angular(s, col.pairs, dtheta, active=col.has_limit,
                frozen=None if blocks is None else blocks.get())


def limit_directions(s: Bodies, col: JointColour) -> np.ndarray | None:
    """World rotation vectors (n_c, 3) back inside the limits of this colour's joints as the
    bodies are now (zero inside, None when all are inside or nothing is limited)."""
    if not col.has_limit.any():
        return None
    p = col.pairs
    dtheta = limit_rotation(s.q[p.a], s.q[p.b], col.rest_relative, col.swing_limit,
                            col.twist_limit, col.swing_center, col.inside)
    if dtheta is None:
        return None
    return where(col.has_limit[:, None], dtheta, 0.0)


def stop_at_limits(s: Bodies, col: JointColour, inward: np.ndarray,
                   recoil: np.ndarray | None = None) -> None:
    """The limits' velocity pass: a joint the iterations left outside its limit (``inward``,
    from `limit_directions`, points back in) keeps no relative angular velocity outward.

    The final pass puts such a joint back on its limit by position only, so the outward
    velocity the iterations derived survives it: the next substep drives the joint out again
    by the same angle, the limit and the joints fight over it, and a passive body gained
    energy substep after substep (a limp Rigify knee sideways at 25 rad/s, frame after frame).
    Removing it is the inelastic limit of the velocity level (the contacts' normal velocity
    likewise), as an equal and opposite couple on child and parent, so momentum is kept.

    Each stopped joint's 3-DOF block is split only among the joints that stop (mass splitting,
    Tonge et al. 2012, over the active rows), so the stop is exact where no two stopped joints
    share a body (the usual case) and a locked root (``recoil`` False) takes none of it. Split
    over every joint of the batch, as the position iterations are, it removed a third: a
    thigh the walk's motor pressed into its twist limit while the locked hips stood against a
    wall kept 50 rad/s of twist that never turned it (the final pass took it back each
    substep) and went into the leg when the motor let go: the foot shook at the motor's 18 Hz
    at twice the walk's speed. (Repeating the pass until stopped joints that share a body are
    exact too changed a limp humanoid's slow roll over a box so that the position projections
    lifted it by 0.74 J, which no velocity cap can take back; one pass did not.)"""
    p = col.pairs
    size = np.sqrt(einsum("nk,nk->n", inward, inward))
    unit = inward / np.maximum(size, 1e-300)[:, None]
    w_rel = s.w[p.a] - s.w[p.b]
    along = einsum("nk,nk->n", w_rel, unit)
    stop = (size > 0.0) & (along < 0.0)
    if not stop.any():
        return
    a, b = p.a[stop], p.b[stop]
    Ia, Ib = s.Iw_inv[a], s.Iw_inv[b]
    takes = np.ones(len(a), dtype=bool) if recoil is None else recoil[stop]
    Ib = where(takes[:, None, None], Ib, 0.0)
    uses = (np.bincount(a, minlength=len(s.w)) + np.bincount(b[takes], minlength=len(s.w)))
    P = block_impulse(Ia, Ib, uses[a], uses[b], along[stop, None] * unit[stop])
    np.add.at(s.w, a, -einsum("nij,nj->ni", Ia, P))
    np.add.at(s.w, b, einsum("nij,nj->ni", Ib, P))


def stop_undone_turns(s: Bodies, col: JointColour, turned: np.ndarray, h: float,
                      recoil: np.ndarray | None = None) -> None:
    """Take out of each joint's relative angular velocity what the final projections turned
    back, as far as that slows the joint and no further: an inelastic stop, as an equal and
    opposite couple on child and parent (momentum kept, like `stop_at_limits`).

    ``turned`` (n + 1, 3): each body's world rotation vector by the final pass and the contact
    projection (the world's row zero). The velocities are taken from the iterations' positions,
    before those projections turn bodies without velocity. Where the iterations do not converge
    (a limp body draped over its joint limits: spine, clavicle and arm on their limits at once,
    4 iterations) they end every substep a little past the limits; the final pass turns the
    joints back, but the relative velocity toward the violation stays (`stop_at_limits` stops
    only what points out of a limit still crossed), the next substep drives them out again by
    as much: a replayed limp Rigify fall (static friction on) still crawled at 20–50 mm/s
    after 7 s, and the energy cap took back 159 J in total over its 8 s. The joint's
    turn Δ over the substep, as an angular velocity Δ/h, is what an inelastic constraint would
    have stopped (PBD's velocity update, Müller et al. 2007); it is applied as a scalar impulse
    along Δ only where it opposes the joint's relative angular velocity and at most until that
    component is zero, so it never adds kinetic energy and a projection never launches a body
    (the reason the velocities are not simply taken after the projections). ``recoil`` False:
    the parent (a locked root) takes none of it."""
    p = col.pairs
    rel = turned[p.a] - turned[p.b]
    size = np.sqrt(einsum("nk,nk->n", rel, rel))
    unit = rel / np.maximum(size, 1e-300)[:, None]
    along = einsum("nk,nk->n", s.w[p.a] - s.w[p.b], unit)
    stop = ~col.is_root & (size > 0.0) & (along < 0.0)
    if not stop.any():
        return
    a, b, u = p.a[stop], p.b[stop], unit[stop]
    takes = np.ones(len(a), dtype=bool) if recoil is None else recoil[stop]
    uses = np.bincount(a, minlength=len(s.w)) + np.bincount(b[takes], minlength=len(s.w))
    Iau = einsum("nij,nj->ni", s.Iw_inv[a], u)
    Ibu = where(takes[:, None], einsum("nij,nj->ni", s.Iw_inv[b], u), 0.0)
    k = uses[a] * einsum("nk,nk->n", u, Iau) + uses[b] * einsum("nk,nk->n", u, Ibu)
    change = np.minimum(-along[stop], size[stop] / h)
    lam = change / np.maximum(k, 1e-300)
    np.add.at(s.w, a, lam[:, None] * Iau)
    np.add.at(s.w, b, -lam[:, None] * Ibu)


def project_limits(s: Bodies, idx: np.ndarray, parent: np.ndarray, rest_relative: np.ndarray,
                   swing_limit: np.ndarray, twist_limit: np.ndarray, anchor_a: np.ndarray,
                   swing_center: np.ndarray | None = None) -> None:
    """Rotate bodies idx (one depth level) about their heads back inside their limits, parents
    held fixed: the clamped joint rotation d' = exp(swing') ⊗ exp(twist' Y) is set exactly.
    Run top down after the iterations, it leaves every limit satisfied (the iterations alone
    leave the colour solved first violated under violent motion)."""
    d = joint_rotation(s.q[idx], s.q[parent], rest_relative)
    swing, twist = swing_twist(d)
    swing_fix, twist_fix = limit_correction(swing, twist, swing_limit, twist_limit,
                                            swing_center)
    over = (np.abs(twist_fix) > 0.0) | (swing_fix != 0.0).any(axis=1)
    if not over.any():
        return
    idx, parent = idx[over], parent[over]
    clamped = clamped_rotation((swing + swing_fix)[over], (twist + twist_fix)[over])
    q = qmul(qmul(s.q[parent], rest_relative[over]), clamped)
    q /= np.sqrt(einsum("nk,nk->n", q, q))[:, None]
    a = anchor_a[over]
    head = s.x[idx] + einsum("nij,nj->ni", s.R[idx], a)
    R = q2m(q)
    s.q[idx] = q
    s.R[idx] = R
    s.x[idx] = head - einsum("nij,nj->ni", R, a)


def fit_limits(*, q_child: np.ndarray, q_parent: np.ndarray, rest_relative: np.ndarray,
               swing_limit: np.ndarray, twist_limit: np.ndarray, margin: float,
               swing_center: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Limits (swing (n, 2), twist (n, 2), swing centre (n, 2)) widened so every sampled pose is
    inside them with ``margin`` (rad) to spare: the character's own animation never meets a
    limit.

    ``q_child``, ``q_parent``: (F, n, 4) the bodies' and their joint parents' orientations over
    the animation; ``rest_relative`` (n, 4). Each swing axis's range [c - a, c + a] first grows
    to cover the swings about it plus the margin (a one-sided hinge grows only on the side the
    animation needs: its centre moves); if a pose combining both axes is still outside the
    ellipse shrunk by the margin, both half-axes grow by one factor until it is inside. Twist
    ranges grow to the observed range plus the margin. Free axes (≥ π) stay free; nothing shrinks.
    """
    F, n = q_child.shape[:2]
    center = np.zeros((n, 2)) if swing_center is None else np.asarray(swing_center, float)
    d = joint_rotation(q_child.reshape(-1, 4), q_parent.reshape(-1, 4),
                       np.broadcast_to(rest_relative, (F, n, 4)).reshape(-1, 4))
    swing, twist = swing_twist(d)
    s = swing[:, [0, 2]].reshape(F, n, 2)
    low = np.minimum(center - swing_limit, s.min(axis=0) - margin)
    high = np.maximum(center + swing_limit, s.max(axis=0) + margin)
    free = swing_limit >= np.pi
    half = where(free, swing_limit, (high - low) / 2.0)
    mid = where(free, 0.0, (high + low) / 2.0)
    # Every pose inside the ellipse whose half-axes are `margin` shorter (so inside the range
    # of each axis by the margin, and well inside on the diagonals); pushing a pose out by the
    # margin on both axes at once grew a hinge that was already fitted along its bend by a
    # factor √2, so a knee fitted to a 150° bend could hyperextend 45°.
    # (each axis's range already holds its poses with the margin, so an axis whose range is
    # just the margin wide has every pose at its centre: 0 / 0 counts as 0)
    inner = np.maximum(half - margin, 0.0)
    e = ((np.abs(s - mid) / np.maximum(inner, _TINY_LIMIT)) ** 2).sum(axis=2)
    grow = np.sqrt(np.maximum(e.max(axis=0), 1.0))
    grown = where(grow[:, None] > 1.0, margin + inner * grow[:, None], half)
    fitted_swing = where(free, swing_limit, np.minimum(grown, np.pi))
    fitted_center = where(free, center, mid)
    fitted_twist = np.stack((np.minimum(twist_limit[:, 0], twist.min(axis=0) - margin),
                             np.maximum(twist_limit[:, 1], twist.max(axis=0) + margin)), axis=1)
    return fitted_swing, np.clip(fitted_twist, -np.pi, np.pi), fitted_center
