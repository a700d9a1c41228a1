"""The direct solve of lengths and stiff bending (`direct.py`) on Python floats, strand by strand.

Why: the vectorised solve spends about 150 NumPy calls per Newton step whatever the number of
strands, and a tail or a pair of ears with the Tail or Stiff preset (stiff bending) has one or
two chains of a handful of particles: a 4-bone tail over a sphere took 0.8 s per 100 frames at
240 Hz, eight times its time with soft bending, almost all of it in that per-call overhead. On
floats a strand's step is a few hundred multiply-adds.

The same Newton step as `direct.solve_direct` (Deul et al. 2018, XPBD multipliers, moves along
the start-of-substep gradients, the same rejection of a step that is not a small correction),
restricted to the strand's active rows: an inactive row is the identity with no coupling in the
vectorised matrix, so leaving it out changes nothing in the others. The products are summed in
another order than NumPy's `matmul` and `einsum` do, so the two agree to rounding
(tests/core/test_direct_scalar.py), not bit for bit; which one runs depends only on the rig's
size (`direct.SCALAR_STRANDS`), so a bake repeats bit for bit. The contact rows (`direct.py`)
come after the strand's rows: the matrix is banded in those and dense in the few contact rows
and columns (`_solve`).
"""

from __future__ import annotations

import math
from itertools import repeat
from operator import mul, sub

import numpy as np

_EPS = 1e-12


class ScalarStrand:
    """One strand's active rows as Python floats (built once per frame from the vectorised
    coefficients of `direct.DirectCoefficients`)."""

    __slots__ = ("kinds", "index", "rest", "straight", "alpha", "band",
                 "moves", "max_move2", "segments", "centres", "straight_centres", "lam",
                 "across", "coupling", "w", "moves_of", "pairs", "first")

    def __init__(self, *, active: np.ndarray, K: np.ndarray, moves: np.ndarray, rest: np.ndarray,
                 bend_rest: np.ndarray, straight: np.ndarray, alpha: np.ndarray,
                 max_move: float, w: np.ndarray, pairs: np.ndarray, first: bool):
        rows = np.flatnonzero(active)
        kinds, index = rows % 3, rows // 3  # 0: length of segment j; 1, 2: bending at j + 1
        self.kinds = kinds.tolist()
        self.index = index.tolist()
        # Per row: the rest length (length rows) or rest offset (bend rows), whether the bend
        # is held straight (two rows across the chord), the compliance / h^2.
        self.rest = [float(rest[j]) if k == 0 else float(bend_rest[j])
                     for k, j in zip(self.kinds, self.index, strict=True)]
        self.straight = [k > 0 and bool(straight[j])
                         for k, j in zip(self.kinds, self.index, strict=True)]
        self.alpha = alpha[rows].tolist()
        Kc = K[np.ix_(rows, rows)]
        # K's nonzero entries (row, column, K): the couplings of the Newton matrix, and its band
        r, q = np.nonzero(Kc)
        self.band = int(np.max(q - r, initial=0))
        # Per movable particle: (particle, [(row, coefficient)]) of its move.
        mc = moves[:, rows]
        self.moves = [(p, [(a, float(mc[p, a])) for a in np.flatnonzero(mc[p]).tolist()])
                      for p in range(mc.shape[0]) if np.any(mc[p])]
        self.moves_of = dict(self.moves)  # a contact row's couplings, by particle
        self.max_move2 = float(max_move) ** 2
        self.segments = sorted({j for k, j in zip(self.kinds, self.index, strict=True) if k == 0})
        self.centres = sorted({j for k, j in zip(self.kinds, self.index, strict=True) if k > 0})
        self.straight_centres = {j for j, y in zip(self.index, self.straight, strict=True) if y}
        self.coupling = list(zip(r.tolist(), q.tolist(), Kc[r, q].tolist(), strict=True))
        self.lam = [0.0] * rows.size
        self.across = None  # the straight rows' first vectors across, kept over a substep
        self.w = w.tolist()  # inverse masses of the particles (a contact row's own coupling)
        # The segments (j, j + 1) a step may turn only a little (`direct._too_far`) and
        # whether particle 0's own move counts (its segment to a pinned parent).
        self.pairs = np.flatnonzero(pairs).tolist()
        self.first = first


def _unit(x: float, y: float, z: float) -> tuple[float, float, float, float]:
    length = math.sqrt(x * x + y * y + z * z)
    d = length if length > _EPS else _EPS
    return x / d, y / d, z / d, length


def _rows(px: list, py: list, pz: list, st: ScalarStrand, across: dict | None):
    """(unit row vectors as three component lists, violations, the first vectors across the
    straight centres' chords) at positions px, py, pz: `direct._rows` for the active rows."""
    seg = {}
    for j in st.segments:
        seg[j] = _unit(px[j + 1] - px[j], py[j + 1] - py[j], pz[j + 1] - pz[j])
    cen = {}
    first = {}
    for i in st.centres:
        mx = px[i + 1] - 0.5 * (px[i] + px[i + 2])
        my = py[i + 1] - 0.5 * (py[i] + py[i + 2])
        mz = pz[i + 1] - 0.5 * (pz[i] + pz[i + 2])
        nx, ny, nz, offset = _unit(mx, my, mz)
        if i not in st.straight_centres:
            cen[i] = ((mx, my, mz), (nx, ny, nz), offset, None, None)
            continue
        tx, ty, tz, _ = _unit(px[i + 2] - px[i], py[i + 2] - py[i], pz[i + 2] - pz[i])
        if tx == 0.0 and ty == 0.0 and tz == 0.0:
            tz = 1.0
        if across is None:
            hx, hy, hz = (0.0, 1.0, 0.0) if abs(tx) >= 0.9 else (1.0, 0.0, 0.0)
        else:
            hx, hy, hz = across[i]
        d = hx * tx + hy * ty + hz * tz
        ax, ay, az, _ = _unit(hx - d * tx, hy - d * ty, hz - d * tz)
        first[i] = (ax, ay, az)
        bx, by, bz = ty * az - tz * ay, tz * ax - tx * az, tx * ay - ty * ax
        cen[i] = ((mx, my, mz), (nx, ny, nz), offset, (ax, ay, az), (bx, by, bz))
    Vx, Vy, Vz, violation = [], [], [], []
    for kind, j, rest, straight in zip(st.kinds, st.index, st.rest, st.straight, strict=True):
        if kind == 0:
            vx, vy, vz, length = seg[j]
            c = length - rest
        else:
            m, n, offset, a, b = cen[j]
            if kind == 1 and not straight:
                (vx, vy, vz), c = n, offset - rest
            else:
                vx, vy, vz = a if kind == 1 else b
                c = m[0] * vx + m[1] * vy + m[2] * vz
        Vx.append(vx)
        Vy.append(vy)
        Vz.append(vz)
        violation.append(c)
    return (Vx, Vy, Vz), violation, first


def _solve(A: list, b: list, band: int, banded: int) -> None:
    """`direct._eliminate` for one strand: Gaussian elimination without pivoting of a matrix
    banded in its first `banded` rows and columns and dense in the rest (the contact rows,
    `_contact_rows`), the solution left in `b`. Raises ZeroDivisionError on a zero pivot (NumPy
    gives inf or NaN)."""
    M = len(b)
    for k in range(M - 1):
        Ak, bk, pivot = A[k], b[k], A[k][k]
        end = min(k + band + 1, banded) if k < banded else M
        rows = range(k + 1, end) if end == M or banded == M else (
            *range(k + 1, end), *range(banded, M))
        tail, border = Ak[k + 1 : end], Ak[max(end, banded) :]
        for i in rows:
            Ai = A[i]
            f = Ai[k]
            if f != 0.0:  # a row that does not couple to k is left as it is
                f /= pivot
                # map over C-level operators: a comprehension costs twice as much per entry
                Ai[k + 1 : end] = map(sub, Ai[k + 1 : end], map(mul, repeat(f), tail))
                if border:
                    Ai[banded:] = map(sub, Ai[banded:], map(mul, repeat(f), border))
                b[i] -= f * bk
    for k in range(M - 1, -1, -1):
        end = min(k + band + 1, banded) if k < banded else M
        total = b[k] - sum(map(mul, A[k][k + 1 : end], b[k + 1 : end]))
        if end < M and k < banded:
            total -= sum(map(mul, A[k][banded:], b[banded:]))
        b[k] = total / A[k][k]


def _contact_rows(st: ScalarStrand, contacts: list, V0: tuple, V: tuple, A: list,
                  scale: float) -> None:
    """Fill the contact rows and columns (after the strand's M rows) of the Newton matrix A:
    a contact at particle p with normal n holds n . x_p at its pushed value, gradient n on p
    alone, so it couples to each row a moving p by K_ca = C_ap w_p (that row's move
    coefficient on p) and to a contact on the same particle by w_p."""
    M = len(st.kinds)
    Vx, Vy, Vz = V
    Wx, Wy, Wz = V0
    for i, (p, nx, ny, nz, _) in enumerate(contacts):
        row = A[M + i]
        for a, k in st.moves_of.get(p, ()):
            row[a] = k * (nx * Wx[a] + ny * Wy[a] + nz * Wz[a])
            A[a][M + i] = k * (Vx[a] * nx + Vy[a] * ny + Vz[a] * nz)
        w = st.w[p]
        for j, (q, mx, my, mz, _) in enumerate(contacts):
            if q == p:
                row[M + j] = w * (nx * mx + ny * my + nz * mz)
        row[M + i] *= scale


def _newton_step(st: ScalarStrand, V: tuple, V0: tuple, violation: list, held: list,
                 px: list, py: list, pz: list, scale: float) -> list | None:
    """One Newton step's multipliers (the strand's rows, then one per held contact), None
    where a pivot is zero."""
    M = len(st.kinds)
    N = M + len(held)
    Vx, Vy, Vz = V
    Wx, Wy, Wz = V0
    A = [[0.0] * N for _ in range(N)]
    for r, q, k in st.coupling:
        A[r][q] = k * (Vx[r] * Wx[q] + Vy[r] * Wy[q] + Vz[r] * Wz[q])
    for r, alpha in enumerate(st.alpha):
        A[r][r] = A[r][r] * scale + alpha
    step = [-(c + alpha * lam_r) for c, alpha, lam_r in zip(violation, st.alpha, st.lam,
                                                            strict=True)]
    if held:
        _contact_rows(st, held, V0, V, A, scale)
        step += [target - (nx * px[p] + ny * py[p] + nz * pz[p])
                 for p, nx, ny, nz, target in held]
    try:
        _solve(A, step, st.band, M)
    except ZeroDivisionError:
        return None
    return step


def _moves(st: ScalarStrand, step: list, V0: tuple, held: list) -> list | None:
    """[(particle, dx, dy, dz)] of a step, None when one is not a small correction."""
    M = len(st.kinds)
    Wx, Wy, Wz = V0
    extra = {}
    for i, (p, nx, ny, nz, _) in enumerate(held):
        sw = st.w[p] * step[M + i]
        ex, ey, ez = extra.get(p, (0.0, 0.0, 0.0))
        extra[p] = (ex + nx * sw, ey + ny * sw, ez + nz * sw)
    moves = []
    for p, rows in st.moves:
        mx = my = mz = 0.0
        for a, coefficient in rows:
            sa = step[a]
            mx += coefficient * (Wx[a] * sa)
            my += coefficient * (Wy[a] * sa)
            mz += coefficient * (Wz[a] * sa)
        if p in extra:
            ex, ey, ez = extra.pop(p)
            mx, my, mz = mx + ex, my + ey, mz + ez
        moves.append((p, mx, my, mz))
    moves += [(p, ex, ey, ez) for p, (ex, ey, ez) in extra.items()]
    # A small correction turns each segment a little (`direct.MAX_MOVE`): the moves of its two
    # ends differ little (a pinned end does not move), as `direct._too_far` judges them.
    by = {p: (mx, my, mz) for p, mx, my, mz in moves}
    still = (0.0, 0.0, 0.0)
    checks = [(j, j + 1) for j in st.pairs]
    if st.first:
        checks.append((-1, 0))
    for a, b in checks:
        ax, ay, az = by.get(a, still)
        bx, by_, bz = by.get(b, still)
        dx, dy, dz = bx - ax, by_ - ay, bz - az
        if not dx * dx + dy * dy + dz * dz <= st.max_move2:  # NaN fails it too
            return None
    return moves


def _held_step(st: ScalarStrand, V: tuple, V0: tuple, violation: list, held: list,
               px: list, py: list, pz: list, scale: float) -> tuple[list | None, list, list]:
    """(moves, multipliers, the contacts kept) of a Newton step with the held contacts as
    rows. A contact whose multiplier would pull its particle onto the collider is let go and
    the step solved again (the one pulling hardest first: an active set; contacts that
    over-determine the chain, a rigid rod pushed at three neighbouring particles, pull in
    part); a step that is still not a small correction is solved with no contact at all."""
    M = len(st.kinds)
    attempts = [held, []] if held else [held]
    for kept in attempts:
        while True:
            step = _newton_step(st, V, V0, violation, kept, px, py, pz, scale)
            if step is None or not kept:
                break
            # An active set: the contact pulling hardest is let go first, one at a time.
            pull = min(range(len(kept)), key=lambda i: step[M + i])
            if not step[M + pull] < 0.0:
                break
            kept = kept[:pull] + kept[pull + 1 :]
        moves = _moves(st, step, V0, kept) if step is not None else None
        if moves is not None:
            return moves, step, kept
    return None, [], []


def solve_strands(x: np.ndarray, strands: list, P: int, x_start: np.ndarray | None,
                  iterations: int, regularisation: float, contacts: dict | None = None
                  ) -> tuple[bool, float]:
    """`direct.solve_direct` on floats: (whether no strand's step was rejected, the largest
    particle move of the last Newton step over the strands whose step was accepted).
    `contacts` {strand: [(particle, nx, ny, nz, n . x held)]}: rows holding those
    particles where the colliders pushed them (see `direct.solve_direct`); the ones a step
    lets go are removed."""
    X = x[:, :, :P].tolist()  # [axis][strand][particle]
    X0 = x_start[:, :, :P].tolist() if x_start is not None else None
    accepted, largest2, changed = True, 0.0, False
    scale = 1.0 + regularisation
    for s, st in enumerate(strands):
        if st is None:
            continue
        px, py, pz = X[0][s], X[1][s], X[2][s]
        # The straight rows keep their identity over the substep's calls (`direct._rows`).
        across = st.across
        if X0 is not None:
            V0, _, across = _rows(X0[0][s], X0[1][s], X0[2][s], st, across)
        held = [c for c in contacts.get(s, ()) if st.w[c[0]] > 0.0] if contacts else []
        M, lam = len(st.kinds), st.lam
        last2 = 0.0
        for _ in range(iterations):
            V, violation, across_now = _rows(px, py, pz, st, across)
            if X0 is None:
                V0 = V
            moves, step, held = _held_step(st, V, V0, violation, held, px, py, pz, scale)
            last2 = 0.0
            if moves is None:
                accepted = False
            else:
                for r in range(M):
                    lam[r] += step[r]
                for p, mx, my, mz in moves:
                    px[p] += mx
                    py[p] += my
                    pz[p] += mz
                    last2 = max(last2, mx * mx + my * my + mz * mz)
                changed = True
            if across is None and X0 is None:
                across = across_now
        st.across = across_now
        if contacts and s in contacts:
            contacts[s] = held
        largest2 = max(largest2, last2)
    if changed:
        x[:, :, :P] = X
    return accepted, math.sqrt(largest2)
