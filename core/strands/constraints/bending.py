"""Bending: each particle's offset from the midpoint of its two neighbours (XPBD).

    m_i = x_i - (x_{i-1} + x_{i+1}) / 2,   C_i = |m_i| - |m_i^rest|

Why not the skip-one distance |x_{i+1} - x_{i-1}| of seed 000's Alice hair: near a straight
chain that distance changes only with the square of the bend angle, so it gives no stiffness
where a chain usually rests. Its compliance scale had no middle (the default drooped as far as
no bending at all) and rigid skip-one links on a straight chain are singular (the three points
are collinear: the links cannot push sideways), so the projections fought the exact lengths and
a damped chain gained energy until it stood up above its root. The midpoint offset is first
order in the bend angle (|m| = l sin(theta / 2) for two segments of length l meeting at an
angle theta), so the energy |m|^2 / (2 alpha) is a proper bending spring of stiffness about
l^2 / (4 alpha) per joint, and compliance 0 holds a straight chain straight.
The offset's length is compared with the rest, so a curl keeps its curvature; which side it
curls to is local shape's job (`local_shape.py`).

Solved Gauss-Seidel in three colours (centres i mod 3 on the flat layout of the positions, so
each colour is one strided view of all strands at once), XPBD (Macklin et al. 2016) with the
multipliers reset every substep ("Small Steps", Macklin et al. 2019) and accumulated over the
passes of that substep, so extra passes (stiff bending, solver.RIGID_BEND_PASSES) converge to the
same compliance instead of stiffening it. The gradient of C_i is n on x_i and -n / 2 on both
neighbours: dlambda = (-C - alpha~ lambda) / (w_i + (w_{i-1} + w_{i+1}) / 4 + alpha~),
alpha~ = alpha / h^2.

Measured (session 47, tests/core/test_chains_audit.py): a curled chain falling undamped still
gains energy (bending counted as C^2 / (2 alpha)) in the frame its joints snap through straight
to the mirror curl, 4.2 % of its fall (10 segments, curl 0.4 rad, 5e-5 m/N, 240 Hz; strict
xfail). A signed offset that keeps each curl on its side (no double well; the curl plane's
normal given, so not a general frame) did not remove it: 4.5 %, and 27.0 % with one pass.
"""

from __future__ import annotations

import math

import numpy as np

from .distance import EPS_LENGTH

COLOURS = 3
# Up to this many particles (S x Ps) a pass runs on Python floats (`_solve_bending_scalar`): a
# colour's ~25 ufunc calls cost about 20 us however few constraints it holds, a constraint in
# Python about 1 us, and a tail or a pair of ears has a handful. The arithmetic is the
# vectorised pass's, operation for operation in the same order, and IEEE 754 rounds each
# operation the same in NumPy and in Python, so both give the same bits
# (tests/core/test_scalar_passes.py).
SCALAR_PARTICLES = 40
# Bending that removes at least this fraction of its error per step (compliance below ~3e-5 m/N
# at 240 Hz with unit masses) is "stiff" for the solver, which then alternates it with the exact
# lengths a few more times per substep (solver.RIGID_BEND_PASSES): one pass left a rigid chain
# drooping far more than its compliance says.
STIFF_FACTOR = 0.5
# Bending that removes at least this fraction (compliance below ~1e-4 m/N at 240 Hz, ~2.6e-5 at
# 480 Hz) is "firm": it takes a pass in each of the solver's contact rounds, with SHAKE, the
# limits and the colliders (solver._contact_rounds). Left out of them, a collider's push bent the
# chain and the next substep's bending straightened it as velocity: a strand of 8 segments
# rooted on a head, undamped, gained 8.8-9.2 % of its fall at 1e-5 m/N and 480 Hz, 1.4 % at
# 4e-5 and 240 Hz (0.7 % and 0.3 % with the pass). Softer bending (hair's presets) gains
# nothing from it: there the pass only costs time.
FIRM_FACTOR = 0.2
# Firm bending that is not stiff takes this many more passes after the first, its multipliers
# carried (XPBD's iterations converging on the compliance) before the exact lengths. With one
# pass the coupled joints (each shares two particles with its neighbours) ended every substep
# short of their compliance, and the energy counted with it rose as a curled chain fell and its
# joints opened: 8 segments curled 0.3 rad, 4e-5 m/N at 240 Hz, undamped, 9.4 % of its fall
# (tests/core/test_chains_audit.py); 0.80 % with one more pass, 0.00 % with two (as with the
# direct solve of lengths and bending). Cost: a small rig on floats 2.1x the solve time of one
# pass (3 curled chains of 10 segments); softer bending (hair's presets) keeps its one pass.
FIRM_PASSES = 2


def bend_centres(*, w: np.ndarray, active: np.ndarray, compliance: np.ndarray, h: float):
    """(mass term w_i + (w_{i-1} + w_{i+1}) / 4, alpha~ = compliance / h^2, usable) of the
    centres 1..Ps-2 of (S, Ps) inverse masses: usable where something moves, the compliance is
    finite and all three particles are real."""
    alpha = np.asarray(compliance, dtype=np.float64) / (h * h)
    mass = w[:, 1:-1] + 0.25 * (w[:, :-2] + w[:, 2:])
    usable = ((mass > 0) & np.isfinite(mass + alpha)
              & active[:, 1:-1] & active[:, :-2] & active[:, 2:])
    return mass, alpha, usable


class BendCoefficients:
    """Per-frame factors of every colour, each (n_c,) over the flat layout of a (3, S, Ps)
    state: centre flat index k has neighbours k - 1 and k + 1; centres at a strand's first or
    last particle (whose neighbours straddle two strands), at padding or with nothing movable
    have zero factors."""

    def __init__(self, *, w: np.ndarray, active: np.ndarray, rest_offset: np.ndarray,
                 compliance: np.ndarray, h: float):
        S, Ps = w.shape
        wc, wl, wr = w[:, 1:-1], w[:, :-2], w[:, 2:]
        mass, alpha, usable = bend_centres(w=w, active=active, compliance=compliance, h=h)
        denominator = mass + alpha
        inverse = np.where(usable, 1.0 / np.where(usable, denominator, 1.0), 0.0)
        # Fraction of the bend error one step removes: 1 at compliance 0.
        self.stiff = bool(np.any(mass * inverse >= STIFF_FACTOR))
        self.firm = bool(np.any(mass * inverse >= FIRM_FACTOR))

        def flat(values: np.ndarray) -> np.ndarray:
            full = np.zeros((S, Ps))
            full[:, 1:-1] = np.where(usable, values, 0.0)
            return full.reshape(-1)

        terms = {"rest": flat(rest_offset), "alpha": flat(alpha), "inverse": flat(inverse),
                 "centre": flat(wc), "left": flat(0.5 * wl), "right": flat(0.5 * wr)}
        self.total = S * Ps
        self.colours = []
        for c in range(COLOURS):
            centres = slice(c + 1, self.total - 1, COLOURS)
            count = len(range(*centres.indices(self.total)))
            factors = {k: np.ascontiguousarray(v[centres]) for k, v in terms.items()}
            factors["weights"] = np.stack([factors["centre"], factors["left"], factors["right"]])
            if count and np.any(factors["inverse"]):
                self.colours.append((c, count, factors))
        # Firm bending's passes of a substep, the first included (`FIRM_PASSES`).
        self.firm_sweep = firm_sweep(len(self.colours))
        # The factors as Python floats, for the scalar pass: per colour, (colour, constraints),
        # each constraint one tuple (k, left, centre, right flat indices, rest, alpha, inverse,
        # centre, left, right weights) that the loop unpacks at once (six list reads and the
        # index arithmetic per constraint cost about as much as its arithmetic).
        self.scalar = ([(c, [(k, c + COLOURS * k, c + COLOURS * k + 1, c + COLOURS * k + 2,
                              *row)
                             for k, row in enumerate(zip(*(f[key].tolist() for key in (
                                 "rest", "alpha", "inverse", "centre", "left", "right")),
                                 strict=True))])
                        for c, _, f in self.colours]
                       if self.total <= SCALAR_PARTICLES else None)

    def __bool__(self) -> bool:
        return bool(self.colours)


class BendScratch:
    """Buffers of the passes, and per colour the views of the positions they read and write
    (built once per position buffer: slicing costs as much as a small ufunc, and a firm chain
    runs three passes of three colours every substep)."""

    def __init__(self, total: int):
        n = total // COLOURS + 1
        self.m = np.empty((3, n))
        self.m2 = np.empty((3, n))
        self.length = np.empty(n)
        self.dl = np.empty(n)
        self.g = np.empty(n)
        self.weights = np.empty((3, n))
        self.moves = np.empty((3, 3, n))
        self.multipliers = [np.zeros(n) for _ in range(COLOURS)]
        self.scalar_multipliers = [[0.0] * n for _ in range(COLOURS)]
        # The offset's floor as a row (numpy_calls.filled: np.maximum's SIMD loop).
        self.floor = np.full(n, EPS_LENGTH)
        self._x: np.ndarray | None = None
        self._colour_views: dict[tuple[int, int], tuple] = {}
        # The positions split by flat index mod 3 (`load_planes`): plane q holds the particles
        # q, q + 3, q + 6, ... of the flat (3, S * Ps) layout, each component's row contiguous.
        self.total = total
        self.planes = np.empty((COLOURS, 3, -(-total // COLOURS)))
        self._plane_views: dict[tuple[int, int], tuple] = {}

    def _roles(self, m2: np.ndarray, moves: np.ndarray, colour: int, n: int) -> tuple:
        """The views after (left, centre, right) in `views`' tuple, for `n` constraints."""
        return (self.m[:, :n], m2, m2[0], m2[1], m2[2], self.length[:n], self.dl[:n],
                self.g[:n], self.multipliers[colour][:n], self.weights[:, :n],
                self.m[:, None, :n], moves, moves[:, 0], moves[:, 1], moves[:, 2],
                self.floor[:n])

    def load_planes(self, x: np.ndarray) -> None:
        """Copy the (3, S, Ps) C-contiguous `x` into the planes (three strided copies)."""
        flat = x.reshape(3, -1)
        if not np.shares_memory(flat, x):  # pragma: no cover - layout assumption
            raise AssertionError("bending needs a C-contiguous state")
        for q in range(COLOURS):
            np.copyto(self.planes[q, :, : len(range(q, self.total, COLOURS))], flat[:, q::COLOURS])

    def store_planes(self, x: np.ndarray) -> None:
        """Copy the planes back into `x` (`load_planes`' inverse)."""
        flat = x.reshape(3, -1)
        for q in range(COLOURS):
            np.copyto(flat[:, q::COLOURS], self.planes[q, :, : len(range(q, self.total, COLOURS))])

    def plane_views(self, colour: int, n: int) -> tuple:
        """`views` of the planes instead of the state: the constraint k of `colour` has its left,
        centre and right particles at flat indices colour + 3k + (0, 1, 2), i.e. entry
        (colour + r) // 3 + k of plane (colour + r) % 3 for role r, so each role of the colour
        is one contiguous run of every plane row (no stride-3 access)."""
        views = self._plane_views.get((colour, n))
        if views is None:
            roles = []
            for r in range(COLOURS):
                q = colour + r
                roles.append(self.planes[q % COLOURS, :, q // COLOURS : q // COLOURS + n])
            views = self._plane_views[(colour, n)] = (
                *roles, *self._roles(self.m2[:, :n], self.moves[:, :, :n], colour, n))
        return views

    def views(self, x: np.ndarray, colour: int, n: int) -> tuple:
        """(left, centre, right, m, m2, its three rows, length, dl, g, multipliers, weights,
        m as (3, 1, n), moves (3, 3 roles, n), its three roles and the floor row) of
        `colour`'s n constraints on the (3, S, Ps) `x`: the particles colour, colour + 1, ...
        colour + 3n - 1 viewed as (3, n, 3), each constraint's (left, centre, right) one row of
        it."""
        if self._x is not x:
            self._x, self._colour_views = x, {}
        views = self._colour_views.get((colour, n))
        if views is None:
            triples = x.reshape(3, -1)[:, colour : colour + COLOURS * n].reshape(3, n, COLOURS)
            if not np.shares_memory(triples, x):  # pragma: no cover - layout assumption
                raise AssertionError("bending colour view is a copy")
            views = self._colour_views[(colour, n)] = (
                triples[..., 0], triples[..., 1], triples[..., 2],
                *self._roles(self.m2[:, :n], self.moves[:, :, :n], colour, n))
        return views


def rest_offsets(rest_length: np.ndarray, skip_one_length: np.ndarray) -> np.ndarray:
    """|x_i - (x_{i-1} + x_{i+1}) / 2| at rest, from the segment lengths (..., n) and the
    skip-one distances (..., n - 1): the median of the triangle, sqrt(2a^2 + 2b^2 - c^2) / 2."""
    a, b = rest_length[..., :-1], rest_length[..., 1:]
    square = 2.0 * a * a + 2.0 * b * b - skip_one_length * skip_one_length
    return 0.5 * np.sqrt(np.maximum(square, 0.0))


def firm_sweep(colours: int) -> tuple[tuple[int, bool], ...]:
    """(colour position, first visit) of firm bending's 1 + FIRM_PASSES passes over `colours`
    colours, run in one call."""
    return tuple((k, p == 0) for p in range(1 + FIRM_PASSES) for k in range(colours))


def solve_bending(x: np.ndarray, c: BendCoefficients, scratch: BendScratch, *,
                  first: bool = True,
                  sweep: tuple[tuple[int, bool], ...] | None = None) -> None:
    """One Gauss-Seidel pass over the colours, in place on the (3, S, Ps) C-contiguous `x`.
    `first`: the substep's first pass (multipliers start at 0); later passes continue them.
    `sweep`: (colour position, first visit) pairs to run instead, in one call
    (`BendCoefficients.firm_sweep`)."""
    if sweep is None:
        sweep = tuple((k, first) for k in range(len(c.colours)))
    if c.scalar is not None:
        _solve_bending_scalar(x, c, scratch, sweep)
        return
    # A sweep that visits each colour more than once (firm bending's passes) runs on the
    # positions split by flat index mod 3 (`BendScratch.plane_views`): every role of a colour is
    # then a contiguous run instead of a stride-3 view, for one copy in and one out. Same
    # operations on the same numbers, so the same bits. Measured on the hair benchmark's state
    # (1,000 x 34, process CPU, best of 6 alternated, load 6): the firm sweep (9 colour
    # visits) 2,098 -> 1,660 us; a single pass (3 visits) 667 -> 647 us, within the noise (the
    # copies cost what the contiguous runs save), so it keeps the strided views.
    planes = len(sweep) > COLOURS
    if planes:
        scratch.load_planes(x)
    for k, first in sweep:
        colour, n, f = c.colours[k]
        (left, centre, right, m, m2, m2x, m2y, m2z, length, dl, g, lam, weights, m_roles, moves,
         centre_move, left_move, right_move, floor) = (
            scratch.plane_views(colour, n) if planes else scratch.views(x, colour, n))
        # Outputs passed by position and the three moves written out: each ufunc call here
        # works on a few hundred numbers, so its keyword and loop overhead is a share of it.
        add, multiply, subtract = np.add, np.multiply, np.subtract
        add(left, right, m)
        m *= -0.5
        m += centre
        multiply(m, m, m2)
        add(m2x, m2y, length)
        length += m2z
        np.sqrt(length, length)
        np.maximum(length, floor, length)  # (an array floor: the SIMD loop, 3x a scalar's)
        # dlambda = (|m_rest| - |m| - alpha~ lambda) / (mass term + alpha~)
        subtract(f["rest"], length, dl)
        if first:
            lam.fill(0.0)
        else:
            multiply(f["alpha"], lam, g)
            dl -= g
        dl *= f["inverse"]
        lam += dl
        dl /= length  # along the unit offset: moves are w * dlambda * m / |m|
        # The moves of (centre, left, right) in one (3 roles, n) and one (3, 3 roles, n) call:
        # m (dl w) per role, each product rounded as one at a time.
        multiply(dl, f["weights"], weights)
        multiply(m_roles, weights, moves)
        centre += centre_move
        left -= left_move
        right -= right_move
    if planes:
        scratch.store_planes(x)


def _solve_bending_scalar(x: np.ndarray, c: BendCoefficients, scratch: BendScratch,
                          sweep: tuple[tuple[int, bool], ...]) -> None:
    """`solve_bending` on Python floats (`bend_floats`)."""
    flat = x.reshape(3, -1)
    X, Y, Z = flat.tolist()
    bend_floats(X, Y, Z, c, scratch, sweep=sweep)
    flat[...] = (X, Y, Z)


def bend_plan(c: BendCoefficients, scratch: BendScratch, *,
              sweep: tuple[tuple[int, bool], ...] | None = None) -> tuple:
    """`bend_floats`' visits resolved once per frame's coefficients (`float_step.FloatPlan`):
    one flat tuple per constraint visit of the sweep, its constraint's tuple followed by its
    colour's multiplier row and whether the visit is the substep's first. A firm tail's sweep
    is nine colour visits of one or two constraints each: looking up each colour, its
    multipliers and its flag every substep cost about as much as a constraint's arithmetic."""
    multipliers = scratch.scalar_multipliers
    if sweep is None:
        sweep = tuple((k, True) for k in range(len(c.scalar)))
    return tuple((*constraint, multipliers[colour], first)
                 for position, first in sweep
                 for colour, constraints in (c.scalar[position],)
                 for constraint in constraints)


def bend_planned(X: list, Y: list, Z: list, plan: tuple) -> None:
    """`bend_floats` over a `bend_plan`: the same operations on the same values in the same
    order (the same bits), one loop over the flat visits."""
    sqrt = math.sqrt
    for k, i, j, r, rest, alpha, inverse, w_centre, w_left, w_right, lam, first in plan:
        xi, xj, xr = X[i], X[j], X[r]
        yi, yj, yr = Y[i], Y[j], Y[r]
        zi, zj, zr = Z[i], Z[j], Z[r]
        mx = (xi + xr) * -0.5 + xj
        my = (yi + yr) * -0.5 + yj
        mz = (zi + zr) * -0.5 + zj
        length = sqrt(mx * mx + my * my + mz * mz)
        if length < EPS_LENGTH:  # np.maximum's floor (NaN kept), without max
            length = EPS_LENGTH
        dl = rest - length
        if first:
            multiplier = 0.0
        else:
            multiplier = lam[k]
            dl -= alpha * multiplier
        dl *= inverse
        lam[k] = multiplier + dl
        dl /= length
        g = dl * w_centre
        X[j] = xj + mx * g
        Y[j] = yj + my * g
        Z[j] = zj + mz * g
        g = dl * w_left
        X[i] = xi - mx * g
        Y[i] = yi - my * g
        Z[i] = zi - mz * g
        g = dl * w_right
        X[r] = xr - mx * g
        Y[r] = yr - my * g
        Z[r] = zr - mz * g


def bend_floats(X: list, Y: list, Z: list, c: BendCoefficients, scratch: BendScratch,
                first: bool = True, *,
                sweep: tuple[tuple[int, bool], ...] | None = None) -> None:
    """`solve_bending` on the flat Python-float rows of the (3, S, Ps) state, in place,
    constraint after constraint: the same operations in the same order as the vectorised pass
    (the constraints of one colour share no particle, so taking them one at a time changes
    nothing)."""
    sqrt = math.sqrt
    multipliers = scratch.scalar_multipliers
    if sweep is None:
        sweep = tuple((k, first) for k in range(len(c.scalar)))
    for position, first in sweep:
        colour, constraints = c.scalar[position]
        lam = multipliers[colour]
        # i: left neighbour, j: centre, r: right; three distinct particles, so each coordinate
        # read once serves the offset and its own update.
        for k, i, j, r, rest, alpha, inverse, w_centre, w_left, w_right in constraints:
            xi, xj, xr = X[i], X[j], X[r]
            yi, yj, yr = Y[i], Y[j], Y[r]
            zi, zj, zr = Z[i], Z[j], Z[r]
            mx = (xi + xr) * -0.5 + xj
            my = (yi + yr) * -0.5 + yj
            mz = (zi + zr) * -0.5 + zj
            length = sqrt(mx * mx + my * my + mz * mz)
            if length < EPS_LENGTH:  # np.maximum's floor (NaN kept), without max
                length = EPS_LENGTH
            dl = rest - length
            if first:
                multiplier = 0.0
            else:
                multiplier = lam[k]
                dl -= alpha * multiplier
            dl *= inverse
            lam[k] = multiplier + dl
            dl /= length
            g = dl * w_centre
            X[j] = xj + mx * g
            Y[j] = yj + my * g
            Z[j] = zj + mz * g
            g = dl * w_left
            X[i] = xi - mx * g
            Y[i] = yi - my * g
            Z[i] = zi - mz * g
            g = dl * w_right
            X[r] = xr - mx * g
            Y[r] = yr - my * g
            Z[r] = zr - mz * g
