"""Exact inextensibility for rigid segments: Follow-The-Leader with the DFTL velocity correction.

Mueller, Kim, Chentanez 2012, "Fast Simulation of Inextensible Hair and Fur": one sweep root to
tip, `p_i <- p_{i-1} + l_{i-1} * normalize(p_i - p_{i-1})`, leaves every swept segment at its
rest length up to rounding, whatever the root does (one Gauss-Seidel XPBD pass per substep
leaves several percent of stretch under a whipping root). FTL treats each parent as infinitely
heavy; DFTL hands the child's correction `d_{i+1}` back to the parent as velocity,
`v_i += -s_damping * d_{i+1} / h`, which in the velocity-less Verlet form is
`x_prev_i += s_damping * d_{i+1}`.

The sweep is sequential along the chain index (P - 1 iterations) and vectorised across strands.
It runs on a particle-major copy `(P, 3, S)` of the positions so each iteration works on one
contiguous `(3, S)` block: at bench sizes the cost is the number of ufunc calls, and contiguous
operands make each call about a third cheaper than strided (3, S) columns of the (3, S, P) state.

Particles that are not swept (kinematic, padding, or whose segment is compliant and left to
XPBD) get the factor 1, so the sweep "resets" at them: the next particle follows them.
"""

from __future__ import annotations

import math

import numpy as np

from ...sweep_limits import (
    SWEEP_ROUNDS,
    clamp_in_sweep,
    clamp_in_sweep_on_contacts,
    clamp_into_ball,
    into_ball_and_half_space,
    outside_by,
    pull_parent,
)
from ...triangles import row_dot

# Squared-length floor: a zero segment keeps its (undefined) direction instead of making NaN.
_TINY_SQUARED = 1e-300
# Up to this many strands the sweep runs on Python floats (`_sweep_scalar`): a row's nine ufunc
# calls cost about 5 us however few strands there are, a segment in Python well under one. The
# arithmetic is the vectorised sweep's, operation for operation, so the bits are the same
# (tests/core/test_scalar_passes.py).
SCALAR_STRANDS = 4


class FtlCoefficients:
    """Per-frame sweep data (built once per frame, read every substep).

    `mask` (S, Ps) bool: particle i (>= 1) is placed at rest length from particle i-1.
    `rest_squared` (Ps, S): squared rest length of segment i-1 -> i, particle-major.
    `damping` (Ps, 1, S): s_damping for the parent of each swept particle (0 where none).
    """

    def __init__(self, mask: np.ndarray, rest: np.ndarray, damping: np.ndarray, particles: int):
        S, Ps = mask.shape
        self.mask = mask
        rest_sq = np.zeros((Ps, S))
        rest_sq[1:] = (np.where(mask[:, 1:], rest, 0.0) ** 2).T
        self.rest_squared = rest_sq
        # Rows that are swept everywhere use a plain divide; mixed rows a masked one.
        swept, everywhere = mask.any(axis=0).tolist(), mask.all(axis=0).tolist()
        self.rows = [(i, everywhere[i]) for i in range(1, particles) if swept[i]]
        self.mask_t = np.ascontiguousarray(mask.T)  # (Ps, S)
        # Parent i receives s * d_{i+1}: the damping of the strand where i+1 is swept.
        parent = np.zeros((Ps, 1, S))
        parent[:-1, 0, :] = np.where(mask[:, 1:], damping[:, None], 0.0).T
        self.damping = parent
        self.any_damping = bool(np.any(parent))
        # The same factors for the flat view x_prev.reshape(3, -1): entry s * Ps + i is parent i
        # of strand s (child i + 1 at the next flat index); 0 at each strand's last particle.
        self.damping_flat = np.ascontiguousarray(parent[:, 0, :].T).reshape(-1)[:-1].copy()
        self.last = max((i for i, _ in self.rows), default=0) + 1  # particles touched: 0..last-1
        self.plan: tuple | None = None  # see `_plan`
        # The scalar sweep's particles in its order (row after row, strand after strand), each
        # (flat index s * Ps + i, its parent's, squared rest length, swept, the parent's DFTL
        # factor) as Python values: one tuple unpacked per particle instead of the index
        # arithmetic and list reads. `scalar_still`: (j, factor) of the other flat entries
        # j < S Ps - 1, whose child j + 1 the sweep leaves as it is.
        self.scalar = self.scalar_still = None
        if S <= SCALAR_STRANDS:
            damping_flat = self.damping_flat.tolist()
            self.scalar = [(s * Ps + i, s * Ps + i - 1, rest2, full or bool(m),
                            damping_flat[s * Ps + i - 1])
                           for i, full in self.rows
                           for s, (rest2, m) in enumerate(zip(rest_sq[i].tolist(),
                                                              self.mask_t[i].tolist(),
                                                              strict=True))]
            swept = {k for k, *_ in self.scalar}
            self.scalar_still = [(j, f) for j, f in enumerate(damping_flat)
                                 if j + 1 not in swept]


class FtlScratch:
    """Preallocated buffers for the sweep of a (3, S, Ps) state."""

    def __init__(self, S: int, Ps: int):
        self.xb = np.empty((Ps, 3, S))
        self.before = np.empty((Ps, 3, S))
        self.d = np.empty((3, S))
        self.d2 = np.empty((3, S))
        self.length2 = np.empty(S)
        self.before_cm = np.empty((3, S, Ps))  # the predicted state, for the DFTL correction
        self.factor = np.ones((Ps, S))  # stays 1 where a masked row is not swept
        self.rows_xb = [self.xb[i] for i in range(Ps)]
        # The floor as a full row: a scalar operand costs a conversion on every call (~0.4 us of
        # a 0.3-1 us call at these sizes).
        self.tiny = np.full(S, _TINY_SQUARED)


def _plan(c: FtlCoefficients, scratch: FtlScratch) -> list[tuple]:
    """Per swept row: (row i, row i - 1, factor row, squared rest row, mask row or None for a
    row swept everywhere), cached on `c` for `scratch` (at bench_core sizes the per-row
    indexing was a tenth of the sweep)."""
    cached = c.plan
    if cached is None or cached[0] is not scratch:
        rows, factor = scratch.rows_xb, scratch.factor
        plan = [(rows[i], rows[i - 1], factor[i], c.rest_squared[i], None if full else c.mask_t[i])
                for i, full in c.rows]
        c.plan = cached = (scratch, plan)
    return cached[1]


def solve_ftl(x: np.ndarray, x_prev: np.ndarray | None, c: FtlCoefficients,
              scratch: FtlScratch) -> None:
    """FTL sweep of `x` (3, S, Ps) in place, then the DFTL correction of `x_prev` (skipped when
    None: a pure length projection, e.g. of an output frame blended between two substeps)."""
    n = c.last
    dftl = x_prev is not None and c.any_damping
    flat = dftl and x.flags.c_contiguous and x_prev.flags.c_contiguous
    if c.scalar is not None and x.flags.c_contiguous and (flat or not dftl):
        _solve_ftl_scalar(x, x_prev if dftl else None, c)
        return
    xb, before, d, d2, length2 = scratch.xb, scratch.before, scratch.d, scratch.d2, scratch.length2
    xt = x.transpose(2, 0, 1)
    np.copyto(xb[:n], xt[:n])
    # DFTL needs the predicted positions: a plain copy of the (contiguous) state when both
    # buffers allow the flat correction below, else the particle-major rows.
    if flat:
        np.copyto(scratch.before_cm, x)
    elif dftl:
        np.copyto(before[:n], xb[:n])
    d0, d1, d2z = d2[0], d2[1], d2[2]
    # The loop cost is ufunc call overhead (72 calls at bench sizes): local names and positional
    # `out` arguments shave ~10 % off each call.
    subtract, multiply, add, maximum, divide, sqrt = (np.subtract, np.multiply, np.add,
                                                      np.maximum, np.divide, np.sqrt)
    tiny = scratch.tiny
    for a, b, f, rest2, mask in _plan(c, scratch):  # row views built once per (frame, buffers)
        subtract(a, b, d)
        multiply(d, d, d2)
        add(d0, d1, length2)
        add(length2, d2z, length2)
        maximum(length2, tiny, length2)
        if mask is None:
            divide(rest2, length2, f)
        else:
            divide(rest2, length2, out=f, where=mask)
        sqrt(f, f)  # l / |p_i - p_{i-1}| (1 where not swept)
        multiply(d, f, d)
        add(b, d, a)
    np.copyto(xt[:n], xb[:n])
    if flat:
        # d_i = swept minus predicted; parent i gets x_prev_i += s * d_{i+1}, on flat contiguous
        # views (rows past the swept ones have d = 0).
        corr = scratch.before_cm
        np.subtract(x, corr, out=corr)
        child = corr.reshape(3, -1)[:, 1:]
        np.multiply(child, c.damping_flat, out=child)
        parent = x_prev.reshape(3, -1)[:, :-1]
        np.add(parent, child, out=parent)
    elif dftl:
        # d_i = swept minus predicted; parent i gets x_prev_i += s * d_{i+1}.
        corr = before[:n]
        np.subtract(xb[:n], corr, out=corr)
        np.multiply(corr[1:], c.damping[: n - 1], out=corr[1:])
        x_prev_t = x_prev.transpose(2, 0, 1)
        np.add(x_prev_t[: n - 1], corr[1:], out=x_prev_t[: n - 1])


def solve_ftl_within(x: np.ndarray, c: FtlCoefficients, reference: np.ndarray,
                     limit: np.ndarray, fixed: np.ndarray, contacts=None) -> None:
    """A positions-only FTL sweep of `x` (3, S, Ps) in place that keeps every swept particle
    within its max distance `limit` (S, Ps, inf = none) of `reference` (3, S, Ps) too, with
    rounds (`core.sweep_limits`) where the two conflict; `fixed` (S, Ps) particles (pins) do
    not move. The sweep then the max-distance clamp left the clamp's pull in the segments: a
    strand whose max distance holds it while gravity or a shaken head pulls it away stretched
    by 5-25 % at the end of every frame.

    `contacts`: (normal (3, S, Ps), offset (S, Ps)) or None, the colliders' last pushes as
    half-spaces `normal . x >= offset` (their tangent planes where they put the particle;
    offset -inf where none): a particle the sweep places is kept on their outer side as well
    (`clamp_in_sweep_on_contacts`), and the bottom-up rounds move the parents where its
    rest-length sphere, ball and half-space do not meet. Without, a strand pressed against a
    shoulder capsule by its max distance was swept along its balls' rims into the capsule,
    and the capsule's push after the sweep left its balls or its lengths: 0.59 mm beyond the
    max distance and a segment 5.4 % long at a substep end (tests/core/test_slide_audit.py)."""
    n = c.last
    xb = np.ascontiguousarray(x.transpose(2, 0, 1)[:n])  # (n, 3, S): one row per particle
    ref = np.ascontiguousarray(reference.transpose(2, 0, 1)[:n])
    limit_t = np.ascontiguousarray(limit.T[:n])
    # Only the swept particles are placed on their parents' spheres; the others (compliant
    # segments) keep the plain clamp that follows the sweep.
    limit_swept = np.where(c.mask_t[:n], limit_t, np.inf)
    rest = np.sqrt(c.rest_squared[:n])
    rest[rest == 0.0] = 1.0  # (rows not swept; masked out below)
    stays = np.ascontiguousarray(fixed.T[:n])
    limit2 = np.square(limit_swept)
    touching = None
    if contacts is not None:
        normal = np.ascontiguousarray(contacts[0].transpose(2, 0, 1)[:n])
        offset = np.ascontiguousarray(contacts[1].T[:n])
        touching = np.isfinite(offset).any(axis=1).tolist()
    rows = [(i, None if full else c.mask_t[i], bool(np.isfinite(limit_swept[i]).any()))
            for i, full in c.rows]

    def down() -> bool:
        conflict = False
        for i, mask, limited in rows:
            parent = xb[i - 1]
            d = xb[i] - parent
            square = np.square(d)
            length2 = np.maximum(square[0] + square[1] + square[2], _TINY_SQUARED)
            f = np.sqrt(c.rest_squared[i] / length2)
            placed = parent + d * (f if mask is None else np.where(mask, f, 1.0))
            if limited and touching is not None and touching[i]:
                e = np.square(placed - ref[i])
                a = normal[i]
                below = row_dot(a, placed) < offset[i]
                if below.any() or np.any(e[0] + e[1] + e[2] > limit2[i]):
                    placed, met = clamp_in_sweep_on_contacts(placed, parent, ref[i],
                                                             limit_swept[i], rest[i], a,
                                                             offset[i])
                    conflict = conflict or not met.all() or outside_by(
                        placed, ref[i], limit_swept[i], rest[i])
            elif limited:
                e = np.square(placed - ref[i])
                if np.any(e[0] + e[1] + e[2] > limit2[i]):  # (most rows: none outside)
                    placed = clamp_in_sweep(placed, parent, ref[i], limit_swept[i], rest[i])
                    conflict = conflict or outside_by(placed, ref[i], limit_swept[i], rest[i])
            xb[i] = placed
        return conflict

    conflict = down()
    rounds = 1
    while conflict and rounds < SWEEP_ROUNDS:
        for i, mask, _ in reversed(rows):
            if touching is not None and touching[i]:
                child = into_ball_and_half_space(xb[i], ref[i], limit_swept[i], normal[i],
                                                 offset[i])
            else:
                child = clamp_into_ball(xb[i], ref[i], limit_swept[i])
            xb[i] = child
            parent = xb[i - 1]
            moved = pull_parent(parent, child, rest[i], over_relaxation=1.0)
            if touching is not None and touching[i - 1]:
                moved = into_ball_and_half_space(moved, ref[i - 1], limit_t[i - 1],
                                                 normal[i - 1], offset[i - 1])
            else:
                moved = clamp_into_ball(moved, ref[i - 1], limit_t[i - 1])
            keep = stays[i - 1] if mask is None else stays[i - 1] | ~mask
            xb[i - 1] = np.where(keep, parent, moved)
        conflict = down()
        rounds += 1
    x.transpose(2, 0, 1)[:n] = xb


def _solve_ftl_scalar(x: np.ndarray, x_prev: np.ndarray | None, c: FtlCoefficients) -> None:
    """`solve_ftl` on Python floats (`ftl_floats`) for C-contiguous buffers."""
    flat = x.reshape(3, -1)
    X, Y, Z = flat.tolist()
    previous = None if x_prev is None else x_prev.reshape(3, -1)
    rows = None if previous is None else previous.tolist()
    ftl_floats(X, Y, Z, rows, c)
    flat[...] = (X, Y, Z)
    if previous is not None:
        previous[...] = rows


def ftl_floats(X: list, Y: list, Z: list, previous: list | None, c: FtlCoefficients) -> None:
    """`solve_ftl` on the flat Python-float rows of a (3, S, Ps) state, in place: the sweep row
    after row and strand after strand, with the flat DFTL correction of `previous` (the three
    rows of `x_prev` alike; None: none), the vectorised operations in their order. A particle
    that is not swept gets the factor 1, so it is put back at parent + (itself - parent),
    rounded as there."""
    # DFTL: x_prev_j += s_j (swept - predicted)_{j+1} over the flat rows, as vectorised; each
    # swept child's difference is taken as it is placed (the sweep writes every child once and
    # reads no x_prev), the children it leaves contribute their (x - x) * s after it.
    sqrt, tiny = math.sqrt, _TINY_SQUARED
    damped = previous is not None
    if damped:
        PX, PY, PZ = previous
    for k, p, rest, swept, s in c.scalar:
        xp, yp, zp = X[p], Y[p], Z[p]
        xk, yk, zk = X[k], Y[k], Z[k]
        dx, dy, dz = xk - xp, yk - yp, zk - zp
        length2 = dx * dx + dy * dy + dz * dz
        if length2 < tiny:  # np.maximum's floor (NaN kept), without a call to max
            length2 = tiny
        f = sqrt(rest / length2) if swept else 1.0
        nx, ny, nz = xp + dx * f, yp + dy * f, zp + dz * f
        X[k], Y[k], Z[k] = nx, ny, nz
        if damped:
            PX[p] += (nx - xk) * s
            PY[p] += (ny - yk) * s
            PZ[p] += (nz - zk) * s
    if damped:
        for j, s in c.scalar_still:
            k = j + 1
            PX[j] += (X[k] - X[k]) * s
            PY[j] += (Y[k] - Y[k]) * s
            PZ[j] += (Z[k] - Z[k]) * s
