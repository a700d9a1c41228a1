"""Sphere colliders against many strands: block broad phase, then the exact push on candidates.

Most particles of a head of hair touch no collider in a given substep, yet the plain projection
(`solver.push_out_of_sphere`) computes a distance for every particle and every sphere: 8 spheres
x 32,000 particles was half the substep. Here each strand is cut into blocks of consecutive
particles; a block's axis-aligned bounding box (from a particle-major copy of the positions,
where the box is a reduction over contiguous slabs) is tested against every sphere inflated by
the largest particle radius, and only the particles of blocks that can touch a sphere are
gathered (`take`), projected and, where they penetrate, written back (the usual bounding-volume
broad phase; Ericson, "Real-Time Collision Detection" ch. 4-6).

The result is the same projection, particle for particle, as the full pass: spheres are still
applied one after the other, and a particle moved by an earlier sphere (by at most that
sphere's largest penetration times `1 + friction`, summed per block as its `slack`) is still
found by the later ones because their test distance to that block grows by its slack. Every
operation is elementwise, so a gathered subset gives the values the full pass gives.
"""

from __future__ import annotations

import math
from itertools import accumulate

import numpy as np

from ...numpy_calls import filled

EPS_LENGTH = 1e-12
BLOCK = 16  # particles per block: small enough to cull, large enough to keep the test cheap
# Below this many particles the whole-array pass is cheaper than the broad phase's extra calls.
MIN_PARTICLES = 4096


class SphereBlocks:
    """Per-frame broad-phase data for a (3, S, Ps) state with `particles` real particles.

    `radius` (S, Ps) collision radius, -inf where the particle must not move.
    """

    def __init__(self, radius: np.ndarray, particles: int):
        S, Ps = radius.shape
        P = particles
        self.shape = (S, Ps)
        # Leading particles that never move in any strand (the roots) are left out of the
        # blocks: a root sits on the scalp, and in a block it would make that block a candidate
        # of the head sphere in every substep.
        movable = np.isfinite(radius[:, :P]).any(axis=0)
        first = int(np.argmax(movable)) if movable.any() else P
        self.blocks = [(a, min(a + BLOCK, P)) for a in range(first, P, BLOCK)]
        nb = len(self.blocks)
        # Flat particle ids of each (block, strand) cell, a short last block padded by repeating
        # its last particle (a duplicate computes and writes the same value twice).
        p = np.minimum(first + np.arange(nb)[:, None] * BLOCK + np.arange(BLOCK)[None], P - 1)
        self.table = (np.arange(S)[None, :, None] * Ps + p[:, None, :]).reshape(nb * S, BLOCK)
        self.radius = np.ascontiguousarray(radius, dtype=np.float64).reshape(-1)
        finite = radius[np.isfinite(radius)]
        self.max_radius = float(finite.max()) if finite.size else -np.inf
        self.lo = np.empty((nb, 3, S))
        self.hi = np.empty((nb, 3, S))
        self.scratch = np.empty((Ps, 3, S))
        # `box_distance2`'s result (K, nb, S) and temporaries (K, nb, 3, S), made on first use.
        self.distance2: np.ndarray | None = None
        self.box_scratch: tuple[np.ndarray, np.ndarray] | None = None
        self.gather = np.empty(3 * self.table.size)  # candidate positions, (3, n) views of it
        self.offset = np.empty(3 * self.table.size)  # their offsets from the sphere's centre
        self.square = np.empty(3 * self.table.size)
        self.length = np.empty(self.table.size)
        self.inside = np.empty(self.table.size, dtype=bool)

    def any(self) -> bool:
        return self.max_radius > -np.inf and bool(self.blocks)

    def reserve(self, count: int) -> None:
        """Room for `count` candidates (spheres pushed together may share a block)."""
        if len(self.length) < count:
            self.gather = np.empty(3 * count)
            self.offset = np.empty(3 * count)
            self.square = np.empty(3 * count)
            self.length = np.empty(count)
            self.inside = np.empty(count, dtype=bool)


def block_bounds(c: SphereBlocks, particle_major: np.ndarray) -> None:
    """Fill `c.lo`, `c.hi` (nb, 3, S) from positions laid out (>= P, 3, S)."""
    for b, (start, stop) in enumerate(c.blocks):
        rows = particle_major[start:stop]
        np.minimum.reduce(rows, axis=0, out=c.lo[b])
        np.maximum.reduce(rows, axis=0, out=c.hi[b])


def transpose_bounds(c: SphereBlocks, x: np.ndarray) -> None:
    """`block_bounds` from the component-major state `x` (3, S, Ps) (one transposed copy)."""
    np.copyto(c.scratch, x.transpose(2, 0, 1))
    block_bounds(c, c.scratch)


def box_distance2(c: SphereBlocks, centres: np.ndarray) -> np.ndarray:
    """Squared distance (K, nb * S) from each sphere centre (K, 3) to each block's box.

    Into buffers kept for the next call: fresh (K, nb, 3, S) temporaries (three a call, 384 kB
    each for 8 spheres at 1,000 x 32) were new pages every time, 470 us against 130 us."""
    K = len(centres)
    nb, _, S = c.lo.shape
    if c.distance2 is None or c.distance2.shape[0] != K:
        c.distance2 = np.empty((K, nb, S))
        c.box_scratch = (np.empty((K, nb, 3, S)), np.empty((K, nb, 3, S)),
                         np.zeros((K, nb, 3, S)))
    out = c.distance2
    below, above, zero = c.box_scratch
    centre = centres[:, None, :, None]  # (K, 1, 3, 1)
    np.subtract(c.lo[None], centre, below)
    np.subtract(centre, c.hi[None], above)
    np.maximum(below, above, below)
    # Against an array of zeros, not the scalar 0.0: np.maximum's SIMD loop (the same values;
    # core/numpy_calls.filled), 3-4x faster on these 48,000 numbers.
    np.maximum(below, zero, below)
    np.multiply(below, below, below)
    np.add(below[:, :, 0], below[:, :, 1], out)
    np.add(out, below[:, :, 2], out)
    return out.reshape(K, -1)


def push_out_candidates(x: np.ndarray, x_prev: np.ndarray, c: SphereBlocks, near: np.ndarray,
                        centre: np.ndarray, sphere_radius: float, friction: float,
                        surface: np.ndarray | None = None, pushed: list | None = None
                        ) -> tuple[float, np.ndarray | None]:
    """Project the particles of the blocks `near` (flat (block, strand) ids) out of one sphere
    and apply its friction, exactly as the full pass does; returns the largest penetration
    (0 when nothing touched) and the blocks whose particles moved (None when none did). The
    flat ids of the particles it moved are appended to `pushed` when given."""
    if not c.max_radius + sphere_radius > 0.0:
        return 0.0, None
    lists = None if pushed is None else [pushed]
    return push_out_spheres(x, x_prev, c, [(near, centre, sphere_radius)], friction, surface,
                            lists)


def push_out_spheres(x: np.ndarray, x_prev: np.ndarray, c: SphereBlocks,
                     parts: list[tuple[np.ndarray, np.ndarray, float]], friction: float,
                     surface: np.ndarray | None = None, pushed: list[list] | None = None
                     ) -> tuple[float, np.ndarray | None]:
    """`push_out_candidates` for several spheres at once, `parts` (near blocks, centre, radius)
    each, with one friction and no surface motion when there are several: spheres that
    `commute` (no particle within reach of one can be pushed into the reach of another), so
    applying them together moves every particle as applying them one after the other does.
    The candidates are gathered part after part and each slice is measured against its own
    sphere with the operations of one sphere's pass, so the bits are the same; what is shared
    is the ~45 NumPy calls a sphere paid per pass, most of its cost (the hair benchmark's eight
    body spheres form four groups). Each part's reach must be positive. The largest penetration
    is over all the parts; `pushed[i]` gets part i's moved particles."""
    none = (0.0, None)
    if len(parts) > 1 and surface is not None:
        raise ValueError("spheres pushed together must be still")
    # Candidates part after part: part i owns candidates bounds[i]:bounds[i + 1].
    near = parts[0][0] if len(parts) == 1 else np.concatenate([part[0] for part in parts])
    # Python ints: np.cumsum of a short list and .tolist() cost ~13 us a call (sixteen calls a
    # substep in the hair benchmark).
    bounds = list(accumulate((len(part[0]) * BLOCK for part in parts), initial=0))
    ids = c.table.take(near, axis=0).reshape(-1)
    xf = x.reshape(3, -1)
    count = len(ids)
    c.reserve(count)
    # Into a preallocated buffer with mode='clip' (ids are valid): `take` with `out` under the
    # default mode='raise' buffers, and without `out` it allocates (~25 % slower either way).
    xs = c.gather[: 3 * count].reshape(3, -1)
    xf.take(ids, axis=1, out=xs, mode="clip")
    # Offsets and squares into preallocated buffers too (the ids of one sphere are up to a
    # quarter of the particles: fresh temporaries of that size were a page-faulting allocation
    # each, eight spheres and six passes a substep).
    d = c.offset[: 3 * count].reshape(3, -1)
    d2 = c.square[: 3 * count].reshape(3, -1)
    length = c.length[:count]
    inside = c.inside[:count]
    for (_, centre, _), a, b in zip(parts, bounds[:-1], bounds[1:], strict=True):
        np.subtract(xs[:, a:b], centre[:, None], d[:, a:b])
    np.multiply(d, d, d2)
    np.add(d2[0], d2[1], length)
    length += d2[2]
    # Squared distances against the largest reach (largest particle radius) widened by 1e-9, so
    # no contact is missed to rounding; the exact penetration, with each particle's own radius,
    # only for those close ones.
    for (_, _, sphere_radius), a, b in zip(parts, bounds[:-1], bounds[1:], strict=True):
        reach = c.max_radius + sphere_radius
        np.less(length[a:b], reach * reach * (1.0 + 1e-9), inside[a:b])
    close = inside.nonzero()[0]  # np.flatnonzero of a 1-D mask, without its wrappers
    if not close.size:
        return none
    ids, length = ids.take(close), length.take(close)
    np.sqrt(length, out=length)
    # Penetration of the particle sphere: radius + R - |d| (radius is -inf where immovable).
    pen = c.radius.take(ids)
    cuts = np.searchsorted(close, bounds).tolist()  # the close candidates of each part
    for (_, _, sphere_radius), a, b in zip(parts, cuts[:-1], cuts[1:], strict=True):
        pen[a:b] += sphere_radius
    pen -= length
    hit = (pen > 0.0).nonzero()[0]
    if not hit.size:
        return none
    # The (3, n) rows are gathered once, for the contacts (not first for the close ones).
    if hit.size == close.size:
        # Every close candidate is in contact (deep contact: the benchmark's later passes, 8,000
        # of 8,000): the takes by `hit` would copy the same values.
        selected = close
    else:
        selected = close.take(hit)
        ids, pen, length = ids.take(hit), pen.take(hit), length.take(hit)
    touched = near.take(selected // BLOCK)  # blocks whose particles move
    n = d.take(selected, axis=1)
    xh = xs.take(selected, axis=1)
    degenerate = length < EPS_LENGTH
    # (Floors and ceilings against rows, not scalars: np.maximum / np.minimum's SIMD loops,
    # core/numpy_calls.filled.)
    np.maximum(length, filled(EPS_LENGTH, len(length)), out=length)
    n /= length  # outward unit normal
    if degenerate.any():
        n[2, degenerate] = 1.0  # as the full pass: a particle at the centre goes out along +Z
    xh += n * pen
    if friction > 0.0:
        # Position-based Coulomb friction, as `colliders.apply_friction`: remove the tangential
        # substep displacement (relative to a moving sphere's surface) up to friction * pen.
        moved = xh if surface is None else surface[:3, :3] @ xh + surface[:3, 3:4]
        disp = x_prev.reshape(3, -1).take(ids, axis=1, mode="clip")
        np.subtract(moved, disp, out=disp)
        product = disp * n
        normal_part = product[0] + product[1]
        normal_part += product[2]
        tangential = n * normal_part
        np.subtract(disp, tangential, out=tangential)
        np.multiply(tangential, tangential, out=product)
        t_len = product[0] + product[1]
        t_len += product[2]
        np.sqrt(t_len, out=t_len)
        np.maximum(t_len, filled(EPS_LENGTH, len(t_len)), out=t_len)
        fraction = friction * pen
        fraction /= t_len
        np.minimum(fraction, filled(1.0, len(fraction)), out=fraction)
        tangential *= fraction
        xh -= tangential
    for k in range(3):  # row by row: about half the time of one 2-D fancy assignment
        xf[k][ids] = xh[k]
    if pushed is not None:
        if len(parts) == 1:
            pushed[0].append(ids)
        else:
            cuts = np.searchsorted(selected, bounds).tolist()
            for out, a, b in zip(pushed, cuts[:-1], cuts[1:], strict=True):
                out.append(ids[a:b])
    return float(pen.max()), touched


def commute(a: tuple[np.ndarray, float], b: tuple[np.ndarray, float], max_radius: float,
            friction: float) -> bool:
    """Whether spheres a and b ((centre, radius) each) can be applied in either order with the
    same result: a particle within reach (radius + max_radius) of one is pushed to at most that
    reach, plus its friction's slide (at most friction times its penetration, itself at most the
    reach), so when the centres are further apart than both reaches and that slide, no particle
    either can push is within reach of the other, before or after (with a margin for
    rounding)."""
    (ca, ra), (cb, rb) = a, b
    reach_a, reach_b = ra + max_radius, rb + max_radius
    if not (reach_a > 0.0 and reach_b > 0.0):
        return True  # one of them pushes nothing
    d = ca - cb
    gap = reach_a + reach_b + max(friction, 0.0) * max(reach_a, reach_b)
    return math.sqrt(float(d @ d)) > gap * (1.0 + 1e-6) + 1e-9


def sphere_groups(spheres: list[tuple[np.ndarray, float, float, bool]],
                  max_radius: float) -> list[list[int]]:
    """Order-preserving groups of `spheres` ((centre, radius, friction, still) in the order
    they are applied): a sphere joins the earliest group after every earlier sphere it does not
    `commute` with, among the groups whose members it commutes with and shares a friction with
    (and only still spheres share a group: friction on a moving surface is per sphere).
    Applying the groups in order, each at once (`push_out_spheres`), is applying the spheres in
    order: only commuting spheres change places. The answer for the last spheres asked about is
    kept (eight spheres take ~125 us of pairwise tests, and the same spheres come back in the
    six collider passes of a substep, and every substep while they are still)."""
    global _groups_cache
    key = (max_radius, [(centre.tobytes(), radius, friction, still)
                        for centre, radius, friction, still in spheres])
    cached = _groups_cache  # one read: a (key, answer) pair is replaced whole
    if cached[0] == key:
        return cached[1]
    group_of: list[int] = []
    groups: list[list[int]] = []
    for j, (cj, rj, fj, still_j) in enumerate(spheres):
        earliest = 0
        for i in range(j):
            ci, ri, fi, _ = spheres[i]
            if not commute((ci, ri), (cj, rj), max_radius, max(fi, fj)):
                earliest = max(earliest, group_of[i] + 1)
        target = None
        if still_j:
            for g in range(earliest, len(groups)):
                if all(spheres[i][3] and spheres[i][2] == fj
                       and commute((spheres[i][0], spheres[i][1]), (cj, rj), max_radius, fj)
                       for i in groups[g]):
                    target = g
                    break
        if target is None:
            target = len(groups)
            groups.append([])
        groups[target].append(j)
        group_of.append(target)
    _groups_cache = (key, groups)
    return groups


_groups_cache: tuple = (None, None)  # `sphere_groups`' last (key, answer)


# Creases. Spheres are applied one after the other, so where two overlap (shoulder and chest,
# chest and back) the later one's push can leave a particle inside the earlier one, and the
# next pass's push undoes the other: alternating projections zigzag into the crease and
# converge slowly, while the length sweep between passes pulls the particle out of it again.
# In the hair benchmark (1,000 guides x 32 on eight overlapping body spheres) the particles in
# those creases ended each substep up to 0.2 mm inside a sphere, with their segments stretched
# 1.45 % at the last frame. The exact projection onto the outside of two spheres is cheap: out
# of the earlier sphere along its normal when that clears the later one, else onto the circle
# where their offset surfaces meet (the nearest point of the crease). Since only a later push
# can leave a particle inside an earlier sphere, only the later sphere's pushed particles are
# tested, against the earlier spheres that overlap it. Measured: 0.26 % stretch at the last
# frame, no measurable cost. On the crease, the point at the particle's rest length from its
# parent (where the circle passes at that length) rather than the nearest: 0.18 %, and a tip
# thrown deep into the lens of chest and shoulder (its nearest crease point 40 % too far from
# its parent) keeps its length.


def resolve_creases(x: np.ndarray, radius: np.ndarray, max_radius: float,
                    applied: list[tuple[np.ndarray, float, np.ndarray]],
                    parent_rest: np.ndarray | None = None) -> bool:
    """Move each particle a sphere's push left inside an earlier, overlapping sphere to the
    nearest point outside both (see above). `applied`: (centre (3,), radius, flat ids it moved)
    per sphere in the order they were applied; `radius` (S * Ps,) each particle's collision
    radius (-inf where immovable), `max_radius` the largest. With `parent_rest` (S * Ps,), the
    rest length from each particle's parent (the flat id before it; 0: none), a particle that
    goes onto the crease goes to the crease point at that length from its parent nearest to
    it, where there is one (`_crease_at_length`). Whether it moved a particle."""
    xf = x.reshape(3, -1)
    moved = False
    overlaps = _overlaps(applied, max_radius)
    for j in range(1, len(applied)):
        cb, rb, ids = applied[j]
        if not len(ids):
            continue
        p = r = None
        changed = False
        for ca, ra, d, dist in overlaps[j]:
            if p is None:
                p, r = xf.take(ids, axis=1), radius.take(ids)
            pa = p - ca[:, None]
            square = pa * pa
            la2 = square[0] + square[1]
            la2 += square[2]
            reach_a = r + ra
            inside = (la2 < reach_a * reach_a).nonzero()[0]
            if not inside.size:
                continue
            changed = True
            pa, reach_a = pa[:, inside], reach_a[inside]
            reach_b = r[inside] + rb
            out_a = ca[:, None] + pa * (reach_a / np.maximum(np.sqrt(la2[inside]), EPS_LENGTH))
            ob = out_a - cb[:, None]
            clear = np.einsum("kn,kn->n", ob, ob) >= reach_b * reach_b
            # The crease circle: centre on the line of centres at a from ca, radius rho.
            u = d / dist
            a = (dist * dist + reach_a * reach_a - reach_b * reach_b) / (2.0 * dist)
            rho = np.sqrt(np.maximum(reach_a * reach_a - a * a, 0.0))
            radial = pa - u[:, None] * (u @ pa)
            rl = np.sqrt(np.einsum("kn,kn->n", radial, radial))
            on_axis = rl < EPS_LENGTH
            if on_axis.any():  # on the line of centres: any point of the circle is nearest
                side = np.cross(u, np.eye(3)[int(np.argmin(np.abs(u)))])
                radial[:, on_axis] = side[:, None]
                rl[on_axis] = math.sqrt(float(side @ side))
            crease = ca[:, None] + u[:, None] * a + radial * (rho / rl)
            if parent_rest is not None and not clear.all():
                _crease_at_length(crease, xf, ids[inside], parent_rest,
                                  ca[:, None] + u[:, None] * a, u, radial / rl, rho, ~clear)
            p[:, inside] = np.where(clear, out_a, crease)
        if changed:
            for k in range(3):
                xf[k][ids] = p[k]
            moved = True
    return moved


# The last `_overlaps` answer: the spheres are the same in every collider pass of a substep
# (six) and, when still, of every substep.
_overlaps_cache: tuple = (None, None)


def _overlaps(applied: list[tuple[np.ndarray, float, np.ndarray]], max_radius: float) -> list:
    """Per sphere j of `applied`, the earlier spheres whose particle shells overlap its own:
    (centre, radius, d = c_j - c_i, |d|) each, |d| computed as the crease needs it. 28 pairs
    for eight spheres, each a few small NumPy calls: a third of a crease pass that finds
    nothing, so the answer is kept for the next pass with the same spheres."""
    global _overlaps_cache
    key = (max_radius, [(centre.tobytes(), radius) for centre, radius, _ in applied])
    cached = _overlaps_cache  # one read: a (key, answer) pair is replaced whole
    if cached[0] == key:
        return cached[1]
    overlaps = []
    for j, (cb, rb, _) in enumerate(applied):
        pairs = []
        for ca, ra, _ in applied[:j]:
            d = cb - ca
            dist = math.sqrt(float(d @ d))
            if 0.0 < dist < ra + rb + 2.0 * max_radius:  # else apart (or the same sphere twice)
                pairs.append((ca.copy(), ra, d, dist))
        overlaps.append(pairs)
    _overlaps_cache = (key, overlaps)
    return overlaps


def cross_columns(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """u x v for one vector u (3,) and the columns of v (3, n): `np.cross(u[None], v.T).T`
    written out, the same products and differences in the same order, so the same bits.
    np.cross's axis moves, type promotion and temporaries were a fifth of `_crease_at_length`
    on the hair benchmark's creases (25 of 120 us a call)."""
    out = np.empty_like(v)
    np.subtract(u[1] * v[2], u[2] * v[1], out=out[0])
    np.subtract(u[2] * v[0], u[0] * v[2], out=out[1])
    np.subtract(u[0] * v[1], u[1] * v[0], out=out[2])
    return out


def _crease_at_length(crease: np.ndarray, xf: np.ndarray, ids: np.ndarray,
                      parent_rest: np.ndarray, centre: np.ndarray, u: np.ndarray,
                      e1: np.ndarray, rho: np.ndarray, rows: np.ndarray) -> None:
    """Where the crease circle (centre (3, n), axis u, in-plane unit e1 toward the particle,
    radius rho (n,)) passes at the rest length L from the particle's parent, put `crease` (3, n)
    at the nearer such point (rows `rows` only): the nearest crease point could be far from the
    parent (a tip thrown into the lens of two spheres was left 40 % long). With e2 = u x e1 and
    v = parent - centre, a circle point centre + rho w (w = (w1, w2) a unit vector in (e1, e2))
    is at L when (v.e1, v.e2).w = kappa = (rho^2 + |v|^2 - L^2) / (2 rho): two unit vectors
    when |kappa| <= m = |(v.e1, v.e2)|, of which the one nearer e1 (larger w1) is taken."""
    L = parent_rest.take(ids)
    rows = rows & (L > 0.0)
    if not rows.any():
        return
    q = xf.take(ids - 1, axis=1)
    e2 = cross_columns(u, e1)
    v = q - centre
    v1 = np.einsum("kn,kn->n", v, e1)
    v2 = np.einsum("kn,kn->n", v, e2)
    m2 = v1 * v1 + v2 * v2
    along = u @ v
    vv = m2 + along * along
    safe_rho = np.maximum(rho, EPS_LENGTH)
    kappa = (rho * rho + vv - L * L) / (2.0 * safe_rho)
    reach = m2 - kappa * kappa
    ok = rows & (reach >= 0.0) & (m2 > EPS_LENGTH) & (rho > EPS_LENGTH)
    if not ok.any():
        return
    safe_m2 = np.maximum(m2, EPS_LENGTH)
    root = np.sqrt(np.maximum(reach, 0.0))
    base1, base2 = kappa * v1 / safe_m2, kappa * v2 / safe_m2
    off1, off2 = -root * v2 / safe_m2, root * v1 / safe_m2
    # The solutions are base +- off; the one nearer e1 (larger w1) takes the sign of off1.
    first = off1 >= 0.0
    w1 = np.where(first, base1 + off1, base1 - off1)
    w2 = np.where(first, base2 + off2, base2 - off2)
    at_length = centre + rho * (w1 * e1 + w2 * e2)
    crease[:, ok] = at_length[:, ok]
