"""Exact segment lengths by a mass-weighted projection along the start-of-substep directions
(SHAKE: Ryckaert, Ciccotti, Berendsen 1977), solved for a whole chain at once.

Why not follow-the-leader alone: FTL (Mueller, Kim, Chentanez 2012) moves each child onto the
sphere around its parent along the *current* direction, with the parent infinitely heavy. Both
choices cost energy accounting: projecting along the current direction is an implicit step that
damps (a rigid pendulum with no damping kept 70 % of its amplitude over ten periods at 240 Hz),
and the infinitely heavy parent injects energy that DFTL's velocity correction then removes by
damping (a 4-segment chain kept 40 %). SHAKE moves both ends of every segment, by their inverse
masses, along the segment as it was at the start of the substep:

    x_i <- x_i + w_i (lambda_{i-1} r_{i-1} - lambda_i r_i),   r_j = x_{j+1}(t) - x_j(t),

with one multiplier per segment such that every length is exact at the end of the substep. The
Verlet update plus this projection is symplectic (it is the position form of RATTLE), so an
undamped pendulum or chain keeps its energy over any number of periods: the damping left is the
user's damping.

The constraints C_j = (|x_{j+1} - x_j|^2 - l_j^2) / 2 of one chain couple only neighbours, so each
Newton step on the multipliers is a tridiagonal solve (the Thomas algorithm, sequential along the
chain and vectorised across strands, as the FTL sweep is). The corrections per substep are small
against the segment, so Newton converges quadratically: one step (SHAKE_ITERATIONS) squares the
relative length error (about 1e-3 -> 1e-6 for a fast substep); the FTL sweep that follows
removes the rest to rounding and catches the rare strand whose step is rejected (a singular row,
a segment turning by 45 degrees or more in one substep, a teleport), which then gets plain FTL
for that substep. A second step doubled
the solve's cost (512 bones: 5.3 -> 7.1 us per bone-frame) for no measurable energy difference.

The solver passes the segments the FTL sweep takes (rigid, into a movable particle), so every
run of them hangs from one pinned particle and ends free: its tridiagonal matrix is a weighted
chain Laplacian, whose Thomas pivots stay above half their diagonal (no pivoting needed). A
segment into a pin stays with XPBD: between two pins a taut chain is collinear and singular.
"""

from __future__ import annotations

import math

import numpy as np

SHAKE_ITERATIONS = 1
# Up to this many strands the projection runs on Python floats (`_solve_shake_scalar`): its
# ~40 ufunc calls (six per column in the Thomas sweep) cost the same for one strand as for a
# hundred. Same operations in the same order, so the same bits (tests/core/test_scalar_passes.py).
SCALAR_STRANDS = 4
# A multiplier step larger than this (times the larger inverse mass) would move a particle by
# more than its whole segment in one substep: the strand falls back to FTL for that substep.
# Why a whole segment: a segment that turns by theta in a substep is predicted L / cos(theta)
# long, and the projection along its start direction has a solution only while tan(theta) < 1,
# where the step is 1 - sqrt(1 - tan^2 theta) < 1; past that (a turn of 45 deg per substep, or a
# singular row, or a teleport) there is nothing to converge to. The bound was a fifth (a
# 35 deg turn), and hair falling from its groom with the default damping handed its fast tips
# to FTL, whose infinitely heavy parents made energy: up to 13 % of the fall's energy came back
# (tests/core/test_energy.py, random grooms, no bending); with the whole segment at most 0.6 %.
MAX_STEP = 1.0


class ShakeCoefficients:
    """Per-frame data of the projection.

    `active` (S, Ps - 1) bool: segment j (particles j, j + 1) has an exact length;
    `rest` (S, Ps - 1) rest lengths; `w` (S, Ps) inverse masses (0 where pinned or padding).
    """

    def __init__(self, *, active: np.ndarray, rest: np.ndarray, w: np.ndarray):
        S = active.shape[0]
        touched = np.flatnonzero(active.any(axis=0))
        self.n = n = int(touched[-1]) + 1 if touched.size else 0  # segments 0..n-1 take part
        active = active[:, :n]
        self.half_rest2 = np.where(active, 0.5 * np.square(rest[:, :n]), 0.0)
        self.w_lo = np.where(active, w[:, :n], 0.0)  # particle j of segment j
        self.w_hi = np.where(active, w[:, 1 : n + 1], 0.0)  # particle j + 1
        self.inactive_one = np.where(active, 0.0, 1.0)
        # Coupling to the neighbour segments, zero across an inactive segment (its multiplier is
        # 0 anyway; zeroing keeps each inactive row the identity).
        # (Negated: the off-diagonal Jacobian terms are -w e.r.)
        self.w_lower = np.zeros((S, n))
        self.w_lower[:, 1:] = np.where(active[:, 1:] & active[:, :-1], -self.w_lo[:, 1:], 0.0)
        self.w_upper = np.zeros((S, n))
        self.w_upper[:, :-1] = np.where(active[:, :-1] & active[:, 1:], -self.w_hi[:, :-1], 0.0)
        self.w_sum = self.w_lo + self.w_hi
        self.w_max = np.maximum(self.w_lo, self.w_hi)
        self._lists: tuple | None = None  # the factors as Python floats (`lists`)
        self._rows: tuple | None = None  # the same per strand and segment (`rows`)
        self._padded: dict[int, tuple] = {}  # the factors over a padded flat layout (`padded`)

    def lists(self) -> tuple:
        """The per-frame factors as nested Python lists, made once (for the scalar solve)."""
        if self._lists is None:
            self._lists = tuple(a.tolist() for a in (
                self.half_rest2, self.w_sum, self.inactive_one, self.w_lower, self.w_upper,
                self.w_lo, self.w_hi, self.w_max))
        return self._lists

    def rows(self) -> tuple:
        """`lists` regrouped per strand and segment for `shake_floats`, made once: per strand,
        (half_rest2, w_sum, inactive_one, w_lower, w_upper) and (w_lo, w_hi) per segment, and
        w_max (one tuple unpacked per segment instead of five or two list reads)."""
        if self._rows is None:
            half, w_sum, off, w_lower, w_upper, w_lo, w_hi, w_max = self.lists()
            self._rows = ([list(zip(*r, strict=True))
                           for r in zip(half, w_sum, off, w_lower, w_upper, strict=True)],
                          [list(zip(lo, hi, strict=True)) for lo, hi in zip(w_lo, w_hi,
                                                                              strict=True)],
                          w_max)
        return self._rows

    def padded(self, Ps: int) -> tuple:
        """The per-frame factors over the flat layout of a (3, S, Ps) state (see `solve_shake`),
        made once per width: entry s * Ps + j is segment j of strand s. The entries past the
        chain's n segments (padding, and the pair that straddles two strands) take no part: a
        zero multiplier there moves nothing, and their inverse masses are the signed zeros that
        leave every coordinate's bits as they are (x + (-0.0) and x - (+0.0) are x, -0.0
        included)."""
        cached = self._padded.get(Ps)
        if cached is None:
            S, n = self.half_rest2.shape
            negative_zero = np.full((S, Ps), -0.0)

            def flat(values: np.ndarray, fill: float | np.ndarray) -> np.ndarray:
                out = np.array(np.broadcast_to(fill, (S, Ps)), dtype=np.float64)
                out[:, :n] = values
                return out.reshape(-1)

            cached = self._padded[Ps] = (
                flat(self.half_rest2, 0.0), flat(self.w_sum, 0.0), flat(self.inactive_one, 1.0),
                flat(self.w_lower, 0.0), flat(self.w_upper, 0.0), flat(self.w_lo, 0.0),
                flat(self.w_hi, negative_zero), flat(self.w_max, 0.0).reshape(S, Ps))
        return cached

    def __bool__(self) -> bool:
        return self.n > 0


class ShakeScratch:
    """Preallocated buffers for chains of `n` segments across `S` strands.

    The projection works on the flat, padded layout of the (3, S, Ps) state (`_flat`): one
    buffer set per padded width Ps, made on first use."""

    def __init__(self, S: int, n: int):
        self.S, self.n = S, n
        self._flat: dict[int, _FlatScratch] = {}
        # The width Ps whose buffers hold the directions of the last `x_start` (None: none), for
        # `solve_shake(..., same_directions=True)`.
        self.directions: int | None = None

    def flat(self, Ps: int) -> _FlatScratch:
        scratch = self._flat.get(Ps)
        if scratch is None:
            scratch = self._flat[Ps] = _FlatScratch(self.S, Ps)
        return scratch


class _FlatScratch:
    """The buffers of `solve_shake` for a (3, S, Ps) state: segment arrays over the flat
    particle index (entry s * Ps + j is segment j of strand s, particles j and j + 1), the
    tridiagonal rows as (S, Ps) whose first n columns are the system."""

    def __init__(self, S: int, Ps: int):
        N = S * Ps
        self.r = np.zeros((3, N))  # the last entry (no particle after it) stays 0
        self.e = np.zeros((3, N))
        self.tmp = np.empty((3, N))
        self.lower = np.zeros((S, Ps))
        self.diag = np.empty((S, Ps))
        self.upper = np.zeros((S, Ps))
        self.rhs = np.empty((S, Ps))
        self.pivot = np.empty(S)
        self.factor = np.empty(S)
        self.step = np.empty((S, Ps))
        # Particle-major copies of the rows for the sweep, and their per-column views.
        self.rows = [np.empty((Ps, S)) for _ in range(4)]  # lower, diag, upper, rhs
        self.row_views = [list(a) for a in self.rows]


def _dot(a: np.ndarray, b: np.ndarray, out: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    np.multiply(a, b, out=tmp)
    np.add(tmp[0], tmp[1], out=out)
    np.add(out, tmp[2], out=out)
    return out


def solve_shake(x: np.ndarray, x_start: np.ndarray, c: ShakeCoefficients,
                scratch: ShakeScratch, *, same_directions: bool = False) -> float:
    """Project `x` (3, S, Ps) in place so that every active segment has its rest length, moving
    both ends by their inverse masses along the segment of `x_start` (the start of the substep).
    Returns the last Newton step's largest multiplier step (|lambda| times the larger inverse
    mass: a particle's move as a share of its segment), inf where a strand was rejected: the
    length error it leaves is of the order of its square (Newton's quadratic convergence), so
    a caller with no FTL sweep after it can tell whether the lengths are exact
    (solver._contact_rounds).

    `same_directions`: the caller's promise that `x_start` holds what it held at the last call
    with this scratch (the solver's contact rounds: nothing writes `x_prev` between them), so
    the segment directions the scratch kept from that call are used again instead of taken
    anew (a pass over both states and a strided fill of the padding, ~90 us at 1,000 x 34).

    Every elementwise step runs on the flat (3, S * Ps) views of the two states: the segment
    slices x[:, :, 1 : n + 1] - x[:, :, :n] are 3 * S short rows, and NumPy's per-row overhead
    made each such call about five times a contiguous one (150 against 23 us at 1,000 x 34).
    The flat differences include the pair that straddles two strands and the padding, which
    `padded` gives no part (their multipliers are set to 0, their directions to 0, so nothing
    non-finite can leak from one strand into the next); each real segment sees the same
    operations in the same order, so the result is the same bits."""
    n = c.n
    if not same_directions:
        scratch.directions = None  # whatever the scratch holds is not `x_start`'s
    if n == 0:
        return 0.0
    if x.shape[1] <= SCALAR_STRANDS:
        largest = _solve_shake_scalar(x, x_start, c)
        if largest is not None:
            return largest
    if not (x.flags.c_contiguous and x_start.flags.c_contiguous):
        xc = np.ascontiguousarray(x)
        largest = solve_shake(xc, np.ascontiguousarray(x_start), c, scratch)
        x[...] = xc
        return largest
    _, S, Ps = x.shape
    half_rest2, w_sum, inactive_one, w_lower, w_upper, w_lo, w_hi, w_max = c.padded(Ps)
    f = scratch.flat(Ps)
    reuse = same_directions and scratch.directions == Ps
    r, e, tmp = f.r, f.e, f.tmp
    rhs, diag, lower, upper = f.rhs, f.diag, f.lower, f.upper
    rhs_f, diag_f, lower_f, upper_f = (a.reshape(-1) for a in (rhs, diag, lower, upper))
    xf, sf = x.reshape(3, -1), x_start.reshape(3, -1)
    # One errstate for the whole solve: a singular row gives inf/NaN, which the rejection below
    # catches per strand (and a strand gone non-finite, inf - inf, from its directions on).
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if not reuse:
            np.subtract(sf[:, 1:], sf[:, :-1], out=r[:, :-1])
            r.reshape(3, S, Ps)[:, :, n:] = 0.0  # no direction where no segment takes part
            scratch.directions = Ps
        for _ in range(SHAKE_ITERATIONS):
            np.subtract(xf[:, 1:], xf[:, :-1], out=e[:, :-1])
            # Right-hand side -C_j and the Jacobian of C_j in the multipliers: d C_j / d lambda_j
            # = (w_j + w_{j+1}) e_j.r_j, d C_j / d lambda_{j-1} = -w_j e_j.r_{j-1},
            # d C_j / d lambda_{j+1} = -w_{j+1} e_j.r_{j+1} (the signs are in w_lower/w_upper).
            # Only columns 0..n-1 of the rows are read: lower from column 1, upper up to n-2.
            _dot(e, e, rhs_f, tmp)
            np.multiply(rhs_f, -0.5, out=rhs_f)
            rhs_f += half_rest2
            _dot(e, r, diag_f, tmp)
            np.multiply(diag_f, w_sum, out=diag_f)
            diag_f += inactive_one  # inactive rows: the identity (w_sum is 0 there)
            if n > 1:
                _dot(e[:, 1:], r[:, :-1], lower_f[1:], tmp[:, 1:])
                np.multiply(lower_f[1:], w_lower[1:], out=lower_f[1:])
                _dot(e[:, :-1], r[:, 1:], upper_f[:-1], tmp[:, :-1])
                np.multiply(upper_f[:-1], w_upper[:-1], out=upper_f[:-1])
            for flat_rows, rows in zip((lower, diag, upper, rhs), f.rows, strict=True):
                np.copyto(rows[:n], flat_rows.T[:n])
            _eliminate_rows(*f.row_views, f.pivot, f.factor, n)
            lam = rhs
            np.copyto(lam[:, :n], f.rows[3][:n].T)
            lam[:, n:] = 0.0
            # Reject a strand whose step is not a small correction (or not finite); FTL with its
            # DFTL velocity correction takes it this substep.
            step = f.step
            np.abs(lam, out=step)
            step *= w_max
            # The largest step first, one contiguous reduction (4 us against the per-strand
            # test's 50 at 1,000 x 34; a NaN makes it NaN, which fails the comparison too); the
            # strands only when one is over, which is rare.
            largest = float(step.max())
            if not largest <= MAX_STEP:
                bad = ~np.all(step <= MAX_STEP, axis=1)  # NaN fails the comparison too
                lam[bad] = 0.0
                largest = math.inf
            np.multiply(r, lam.reshape(-1), out=e)
            np.multiply(e, w_hi, out=tmp)
            xf[:, 1:] += tmp[:, :-1]
            np.multiply(e, w_lo, out=tmp)
            xf[:, :-1] -= tmp[:, :-1]
    return largest


def _eliminate(lower, diag, upper, rhs, pivot, factor, n: int) -> None:
    """The Thomas algorithm on the (S, n) rows, column by column (vectorised across strands):
    forward elimination then back substitution, the solution left in `rhs`, `upper` overwritten
    with the eliminated super-diagonal."""
    _eliminate_rows(*([a[:, j] for j in range(n)] for a in (lower, diag, upper, rhs)),
                    pivot, factor, n)


def _eliminate_rows(lower: list, diag: list, upper: list, rhs: list, pivot: np.ndarray,
                    factor: np.ndarray, n: int) -> None:
    """`_eliminate` on lists of per-column (S,) arrays (views made once): `solve_shake` passes
    the rows of particle-major (Ps, S) copies, each contiguous. The sweep is ~250 calls on
    1,000-wide rows, so its cost is per call: views made per call, `out=` by keyword and
    strided columns made it 460-720 us, cached contiguous rows with positional `out` 140 us
    (same operations, same bits)."""
    multiply, subtract, divide = np.multiply, np.subtract, np.divide
    divide(upper[0], diag[0], upper[0])
    divide(rhs[0], diag[0], rhs[0])
    for j in range(1, n):
        low, up, right = lower[j], upper[j], rhs[j]
        multiply(low, upper[j - 1], pivot)
        subtract(diag[j], pivot, pivot)
        divide(up, pivot, up)
        multiply(low, rhs[j - 1], factor)
        subtract(right, factor, right)
        divide(right, pivot, right)
    for j in range(n - 2, -1, -1):
        multiply(upper[j], rhs[j + 1], factor)
        subtract(rhs[j], factor, rhs[j])


def _solve_shake_scalar(x: np.ndarray, x_start: np.ndarray,
                        c: ShakeCoefficients) -> float | None:
    """`solve_shake` on Python floats (`shake_floats`) for a C-contiguous `x`: its largest
    step, or None (nothing written) where `shake_floats` declines, or for a strided `x`: the
    vectorised solve then takes the call."""
    if not x.flags.c_contiguous:
        return None
    flat = x.reshape(3, -1)
    X, Y, Z = flat.tolist()
    X0, Y0, Z0 = x_start.reshape(3, -1).tolist()
    largest = [0.0]
    if not shake_floats(X, Y, Z, X0, Y0, Z0, x.shape[2], c, largest):
        return None
    flat[...] = (X, Y, Z)
    return largest[0]


def shake_floats(X: list, Y: list, Z: list, X0: list, Y0: list, Z0: list, Ps: int,
                 c: ShakeCoefficients, largest: list | None = None) -> bool:
    """`solve_shake` on the flat Python-float rows of a (3, S, Ps) state (entry s * Ps + i is
    particle i of strand s), in place, strand by strand: every array operation of the
    vectorised solve, in its order, each segment's in one pass (a tail's substep paid for a
    dozen list comprehensions). `X0, Y0, Z0`: the start-of-substep state alike. False (nothing
    written) when a pivot is zero, where Python raises instead of giving NumPy's inf or NaN.
    `largest`: a one-item list that gets `solve_shake`'s largest step (inf: a strand rejected).

    Each value gets the vectorised solve's operations in their order, but the passes are fused
    (a tail's substep spent as long walking lists as computing): the Thomas forward elimination
    of segment k (`_eliminate`'s, on one strand) runs as soon as its row is assembled, the back
    substitution checks each multiplier's step as it comes (the largest of the same steps, in
    another order), and the neighbours' values ride along in locals instead of being read back
    from lists."""
    n = c.n
    if n == 0:
        return True
    biggest = 0.0
    rows, apply, top_rows = c.rows()
    last = n - 1
    solved = []
    upper, lam = [0.0] * n, [0.0] * n  # (every entry written before it is read)
    for s in range(len(rows)):
        o = s * Ps
        row, sides, top = rows[s], apply[s], top_rows[s]
        # (Plain loops: a comprehension is a function call of its own in Python 3.11; and
        # comparisons, not `max`, a call per segment.)
        # r_k = x_{k+1} - x_k at the start of the substep, one tuple per segment.
        r = [None] * n
        ax, ay, az = X0[o], Y0[o], Z0[o]
        for k in range(n):
            j = o + k + 1
            bx, by, bz = X0[j], Y0[j], Z0[j]
            r[k] = (bx - ax, by - ay, bz - az)
            ax, ay, az = bx, by, bz
        px, py, pz = X[o : o + n + 1], Y[o : o + n + 1], Z[o : o + n + 1]  # (copies)
        for _ in range(SHAKE_ITERATIONS):
            # Row k (rhs, diag, lower, upper as `_eliminate` takes them), then its elimination:
            # pivot = diag - lower upper'_{k-1}, upper'_k = upper / pivot,
            # rhs'_k = (rhs - lower rhs'_{k-1}) / pivot (row 0: divided by its diagonal).
            # upper'_{n-1} is never read, so it is not formed (its pivot divides rhs' anyway).
            ax, ay, az = px[0], py[0], pz[0]
            up = right = qx = qy = qz = 0.0
            try:
                for k in range(n):
                    bx, by, bz = px[k + 1], py[k + 1], pz[k + 1]
                    ex, ey, ez = bx - ax, by - ay, bz - az
                    ax, ay, az = bx, by, bz
                    half, wsum, off, wl, wu = row[k]
                    mx, my, mz = qx, qy, qz  # r_{k-1}
                    qx, qy, qz = r[k]
                    rhs = (ex * ex + ey * ey + ez * ez) * -0.5 + half
                    pivot = (ex * qx + ey * qy + ez * qz) * wsum + off
                    if k:
                        lower = (ex * mx + ey * my + ez * mz) * wl
                        pivot = pivot - lower * up
                        right = (rhs - lower * right) / pivot
                    else:
                        right = rhs / pivot
                    lam[k] = right
                    if k < last:
                        nx, ny, nz = r[k + 1]
                        up = (ex * nx + ey * ny + ez * nz) * wu / pivot
                        upper[k] = up
            except ZeroDivisionError:
                return False
            # Back substitution, each multiplier's step checked as it comes (`not <=`: NaN too).
            strand_step = abs(right) * top[last]
            if strand_step <= MAX_STEP:
                for k in range(last - 1, -1, -1):
                    right = lam[k] - upper[k] * right
                    lam[k] = right
                    move = abs(right) * top[k]
                    if not move <= MAX_STEP:
                        strand_step = math.inf
                        break
                    if move > strand_step:  # max(strand_step, move): move is not NaN here
                        strand_step = move
            else:
                strand_step = math.inf
            if strand_step == math.inf:
                multipliers = [0.0] * n
            else:
                multipliers = lam
                if not strand_step > 0.0:  # a move of -0.0 leaves max's start, +0.0
                    strand_step = 0.0
            # Particle k + 1 gets its lower segment's share before its upper one's, as the
            # vectorised += then -= give it.
            cx, cy, cz = px[0], py[0], pz[0]
            for k in range(n):
                lk = multipliers[k]
                qx, qy, qz = r[k]
                sx, sy, sz = qx * lk, qy * lk, qz * lk
                lo, hi = sides[k]
                px[k] = cx - sx * lo
                py[k] = cy - sy * lo
                pz[k] = cz - sz * lo
                cx = px[k + 1] + sx * hi
                cy = py[k + 1] + sy * hi
                cz = pz[k + 1] + sz * hi
            px[n], py[n], pz[n] = cx, cy, cz
        if strand_step > biggest:  # max(biggest, strand_step): neither is NaN
            biggest = strand_step
        solved.append((o, px, py, pz))
    for o, px, py, pz in solved:
        X[o : o + n + 1], Y[o : o + n + 1], Z[o : o + n + 1] = px, py, pz
    if largest is not None:
        largest[0] = biggest
    return True
