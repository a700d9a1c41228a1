"""Exact lengths and stiff bending projected together by one direct solve per Newton step.

Why: stiff bending (compliance near 0, "rigid") solved Gauss-Seidel, alternating with the
exact lengths and then with colliders and limits, converges a few particles per pass, so every
substep ended with the chain still bent where a collider or the max distance had pushed it, and
the next substep's bending straightened it as velocity. Undamped chains with rigid bending
gained up to 74 % of the energy they released falling on a sphere, capsule or box (median 31 %,
12 random scenes at 240 Hz) and 44-54 % on their max distance, with stiff bending (1e-6 m/N,
its spring energy counted) up to 509 %, whatever the number of passes (with the direct solve:
13 % worst, 0.5 % median; 0.04 %; 6 %; solver.DIRECT_CONTACT_ROUNDS, test_energy.py).
The direct position-based solver for stiff rods (Deul, Kugelstadt, Weiler, Bender 2018)
solves every constraint of a chain at once instead: one linear system per Newton step, so a
push at one particle moves the whole rigid chain, and the contacts, limits and this solve can
agree within a substep.

Rows of one strand (padding and pinned ends are inactive rows, the identity):

- length of segment j:  C = |x_{j+1} - x_j| - l_j, gradient u_j on x_{j+1}, -u_j on x_j;
- bending at centre i, m_i = x_i - (x_{i-1} + x_{i+1}) / 2 (the constraint of bending.py):
  C = |m_i| - |m_i^rest|, gradient n on x_i and -n / 2 on both neighbours, n = m_i / |m_i|.
  A straight rest (|m_i^rest| = 0) has no gradient at its solution and Newton stalls there, so
  it takes two rows instead, the components of m_i across the chord x_{i+1} - x_{i-1}
  (m_i . p_1 = m_i . p_2 = 0): smooth, and with exact lengths they hold the joint straight.

Each row's moves have a fixed pattern, coefficient c_{a,p} on particle p times one vector v_a
(the unit gradient above), so the Newton matrix is  A_ab = K_ab (v_a . v0_b) + alpha~_a delta_ab
with K = C W C^T fixed per frame: a batched 3-wide product per step, then a dense solve per
strand (Gaussian elimination vectorised across strands, `_eliminate`; a chain has three rows
per particle). Whole heads of hair with stiff bending stay with the Gauss-Seidel passes
(MAX_ENTRIES). As SHAKE (core/shake.py), the moves go
along the gradients at the start of the substep (v0), which keeps a free rigid pendulum's
energy (projecting along the current gradients damped it away); a step that is not a small
correction (or not finite) is rejected per strand, and the caller retries along the current
gradients, then falls back to the Gauss-Seidel passes. Compliant rows are XPBD (Macklin et al.
2016): C + alpha~ lambda = 0 with the multipliers summed over the substep's calls.

Contacts: after a collider, the tether or the max distance moved a particle, the solve in the
rounds that follow (solver._contact_rounds) holds it where it was put along that move's
direction n by one more row, C = n . x_p - n . x_pushed, gradient n on p alone (the main
pass's limit moves are taken back first, so the solve turns the straight chain onto them).
Without it the solve pulled the particle back in by all but its share of the chain's inertia
and the rounds crept (a rigid rod struck a capsule and gained 13 % of its fall's energy from
what 12 rounds left; a rod rooted on a head and held by its max distance, 106 %). A row that would
have to pull (a negative multiplier) is let go and the step solved again, the one pulling
hardest first (an active set); a step still too large is solved without contacts. The
contact rows come after the chain's rows, so the matrix is banded with a dense border
(`_eliminate`), padded to the strand with the most contacts (`_Held`).
"""

from __future__ import annotations

import numpy as np

from .direct_scalar import ScalarStrand, solve_strands

# Newton steps per call in the substep's main pass (each about squares the relative violation:
# 1e-3 of a segment goes to below 1e-10 in two); the rounds after a contact take one each.
DIRECT_ITERATIONS = 2
# A step turning a segment by more than this share of the strand's longest segment (its ends'
# moves differ by more) is not a small correction: the strand is left to the fallback for this
# call. Measured on the segment, not on the particle: a rigid rod pushed near its pinned root
# turns as a whole, its tip moving the push times the lever (a 40 cm rod struck 2.5 cm from
# its root on a head moved its tip 13 mm, half a segment, for a 0.85 mm push; rejected by a
# bound on the particles' moves, the contact was dropped every round and the rod bent around
# the head, gaining 23 % of its fall).
MAX_MOVE = 0.25
# Rest offsets below this share of the strand's longest segment are straight (two rows).
STRAIGHT = 1e-5
# Relative diagonal regularisation: a bend row is linearly dependent on its two length rows
# when the offset lies along the chord (unequal segments held straight); the solve then needs
# a nonsingular matrix, and the rows' consistent right-hand sides make the shift harmless.
REGULARISATION = 1e-9
# Up to this many (strand x row^2) entries the direct solve runs; beyond it (stiff bending on a
# whole head of hair) the Gauss-Seidel passes take the chain, as before.
MAX_ENTRIES = 4_000_000
# A Newton step moving no particle further than this (m) has converged: the rounds after a
# contact end when their solve finds the colliders' last pushes already agree with it.
CONVERGED = 1e-9
# Up to this many strands the solve runs on Python floats (`direct_scalar.py`): the vectorised
# step's NumPy calls (about 5 per row) cost the same for one strand as for dozens, a strand's
# row on floats costs a few times one call. Measured, stiff chains over a sphere at 240 Hz, per
# 100 frames, vectorised -> floats: 1 x 5 particles 0.79 -> 0.29 s, 2 x 5 1.37 -> 0.67 s,
# 2 x 10 2.7 -> 2.4 s, 4 x 5 2.0 -> 1.9 s, 4 x 10 2.5 -> 3.8 s, 8 x 5 3.3 -> 7.1 s; the 12 rigid
# drops of tests/core/test_energy.py (one chain of 5-20 particles each) 54 -> 29 s.
SCALAR_STRANDS = 3
_EPS = 1e-12


class DirectCoefficients:
    """Per-frame rows of the direct solve of the strands (S, Ps) whose stiff bending it takes.

    `w` (S, Ps) inverse masses (0 where pinned); `length_active` (S, Ps - 1) the exact-length
    segments; `rest` their lengths; `bend_active` (S, Ps - 2) the bending centres 1..Ps-2,
    `bend_rest` their rest offsets and `bend_alpha` their compliance / h^2.
    """

    def __init__(self, *, w: np.ndarray, length_active: np.ndarray, rest: np.ndarray,
                 bend_active: np.ndarray, bend_rest: np.ndarray, bend_alpha: np.ndarray):
        S = w.shape[0]
        used = np.flatnonzero(length_active.any(axis=0) | np.pad(bend_active.any(axis=0), (1, 0)))
        P = int(used[-1]) + 2 if used.size else 0  # particles 0..P-1 take part
        self.P = P
        self.scalar = None
        if P <= 2:
            return  # no bending centre takes part: nothing for this solve (the caller drops it)
        n, B = P - 1, P - 2
        length_active = length_active[:, :n]
        bend_active = bend_active[:, :B]
        self.rest = np.where(length_active, rest[:, :n], 0.0)
        longest = np.max(self.rest, axis=1, initial=0.0)[:, None]
        self.max_move = MAX_MOVE * longest
        self.bend_rest = np.where(bend_active, bend_rest[:, :B], 0.0)
        self.straight = bend_active & (self.bend_rest <= STRAIGHT * longest)
        # Rows interleaved along the chain, 3 j: length of segment j, 3 j + 1 and 3 j + 2: the
        # bending centred on particle j + 1 (its second row only where straight), so the matrix
        # is banded (`band`) and the elimination stays inside the band.
        M = n + 2 * B
        active = np.zeros((S, M), dtype=bool)
        active[:, 0::3], active[:, 1::3] = length_active, bend_active
        active[:, 2::3] = self.straight
        self.active = active
        self.rigid = active.any(axis=1)  # (S,) the strands this solve takes
        alpha = np.where(bend_active, bend_alpha[:, :B], 0.0)
        self.alpha = np.zeros((S, M))
        self.alpha[:, 1::3], self.alpha[:, 2::3] = alpha, alpha
        self.inactive = np.where(active, 0.0, 1.0)
        # Row pattern C (S, M, P): coefficient of each particle in each row's move.
        pattern = np.zeros((M, P))
        j = np.arange(n)
        pattern[3 * j, j], pattern[3 * j, j + 1] = -1.0, 1.0
        i = np.arange(B)
        for row in (3 * i + 1, 3 * i + 2):
            pattern[row, i], pattern[row, i + 1], pattern[row, i + 2] = -0.5, 1.0, -0.5
        coupled = np.argwhere(pattern @ pattern.T != 0.0)
        self.band = int(np.max(np.abs(coupled[:, 0] - coupled[:, 1])))
        C = np.where(active[:, :, None], pattern[None], 0.0)
        # The particles some active row takes in, and the segments between two of them: a
        # step turns those (a segment into a pin too; not one past the tip into padding).
        member = np.any(C != 0.0, axis=1)  # (S, P)
        self.first = member[:, 0]
        self.pairs = member[:, 1:] & member[:, :-1]  # (S, P - 1): segment j = (j, j + 1)
        wP = w[:, :P]
        self.K = np.einsum("smp,sp,snp->smn", C, wP, C)  # C W C^T
        self.moves = np.ascontiguousarray(np.swapaxes(C * wP[:, None, :], 1, 2))  # (S, P, M)
        self.lam = np.zeros((S, M))
        self.largest_move = 0.0  # m, of any particle in the last Newton step
        # The straight rows' first vectors across their chords (S, B, 3) from the substep's
        # last call (None at its start): the rows keep their identity over all the substep's
        # calls, as their summed multipliers need. Taken anew from a world axis at every call
        # along the current gradients, the rows of a strand whose chord crossed that axis's
        # switch (|t_x| = 0.9) turned by up to 90 degrees about the chord between the main pass
        # and the contact rounds, and the multipliers of compliant rows, summed along the old
        # rows, pushed along the new ones: a strand with bending 1e-5 m/N at 240 Hz falling
        # onto its max distance on a head rose by 1.71 % of its fall.
        self.across = None
        self.diagonal = np.arange(M)
        self.w = wP
        # A small rig's strands on Python floats (None without an active row).
        self.scalar = ([ScalarStrand(active=active[s], K=self.K[s], moves=self.moves[s],
                                     rest=self.rest[s], bend_rest=self.bend_rest[s],
                                     straight=self.straight[s], alpha=self.alpha[s],
                                     max_move=self.max_move[s, 0], w=wP[s],
                                     pairs=self.pairs[s], first=bool(self.first[s]))
                        if active[s].any() else None for s in range(S)]
                       if S <= SCALAR_STRANDS else None)

    def begin(self) -> None:
        """A new substep: the multipliers start at 0, the straight rows take new vectors
        across their chords."""
        if self.scalar is not None:
            for strand in self.scalar:
                if strand is not None:
                    strand.lam[:] = [0.0] * len(strand.lam)
                    strand.across = None
        self.lam[...] = 0.0
        self.across = None


def direct_size(S: int, Ps: int) -> int:
    """The (strand x row^2) entries of the Newton matrices of S strands of Ps particles."""
    return S * (3 * Ps) ** 2


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b over the last axis (np.cross spends most of its time moving axes)."""
    out = np.empty_like(a)
    for k, (i, j) in enumerate(((1, 2), (2, 0), (0, 1))):
        np.multiply(a[..., i], b[..., j], out=out[..., k])
        out[..., k] -= a[..., j] * b[..., i]
    return out


def _unit(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    length = np.sqrt(np.einsum("...k,...k->...", v, v))
    return v / np.maximum(length, _EPS)[..., None], length


def _rows(X: np.ndarray, c: DirectCoefficients, across=None):
    """(V (S, M, 3) unit row vectors, C (S, M) violations, across) at positions X (S, P, 3):
    `across` (S, B, 3) is the first of the two vectors across each chord of the straight rows,
    given to keep their identity from the start of the substep, else None."""
    e = X[:, 1:] - X[:, :-1]
    u, length = _unit(e)
    m = X[:, 1:-1] - 0.5 * (X[:, :-2] + X[:, 2:])
    n_bend, offset = _unit(m)
    t, _ = _unit(X[:, 2:] - X[:, :-2])
    t = np.where(np.any(t != 0.0, axis=-1, keepdims=True), t, (0.0, 0.0, 1.0))
    # The first vector across: the given one (the rows keep their identity within a
    # substep), else the axis least along the chord, turned onto the plane across the chord
    # (Gram-Schmidt).
    if across is None:
        helper = np.zeros_like(t)
        x_like = np.abs(t[..., 0]) >= 0.9
        helper[..., 0] = ~x_like
        helper[..., 1] = x_like
    else:
        helper = across
    p1, _ = _unit(helper - np.einsum("...k,...k->...", helper, t)[..., None] * t)
    p2 = _cross(t, p1)
    S, M = c.active.shape
    V = np.empty((S, M, 3))
    V[:, 0::3], V[:, 1::3], V[:, 2::3] = u, np.where(c.straight[..., None], p1, n_bend), p2
    violation = np.empty((S, M))
    np.subtract(length, c.rest, out=violation[:, 0::3])
    violation[:, 1::3] = np.where(c.straight, np.einsum("...k,...k->...", m, p1),
                                  offset - c.bend_rest)
    violation[:, 2::3] = np.einsum("...k,...k->...", m, p2)
    return V, violation, p1


def _eliminate(A: np.ndarray, b: np.ndarray, band: int, banded: int | None = None) -> np.ndarray:
    """Solve A y = b for every strand ((S, M, M) with nothing beyond `band` off the diagonal
    in the first `banded` rows and columns (default all; the rest, the contact rows, dense),
    (S, M); both overwritten, y returned in b) by banded Gaussian elimination without pivoting,
    vectorised across strands. Why not np.linalg.solve: LAPACK hands even a 10 x 10 system to
    OpenBLAS, whose threads then spin against the host's (a 4-bone tail: 0.1 ms of CPU but 5 ms
    of wall time per call on a busy 2-core machine). No pivoting: A is J W J^T plus a positive
    diagonal along the current gradients (symmetric positive definite), and close to it along
    the start-of-substep ones; a step that is not finite is rejected by the caller."""
    M = A.shape[1]
    banded = M if banded is None else banded
    border = np.arange(banded, M)
    for k in range(M - 1):
        if k < banded and border.size:
            # The band's rows and columns below and right of k, and the border's.
            idx = np.concatenate((np.arange(k + 1, min(k + band + 1, banded)), border))
            factor = A[:, idx, k] / A[:, k, k, None]
            A[:, idx[:, None], idx] -= factor[:, :, None] * A[:, None, k, idx]
            b[:, idx] -= factor * b[:, k, None]
            continue
        end = min(k + band + 1, M) if k < banded else M  # no fill outside the band
        factor = A[:, k + 1 : end, k] / A[:, k, k, None]
        A[:, k + 1 : end, k + 1 : end] -= factor[:, :, None] * A[:, None, k, k + 1 : end]
        b[:, k + 1 : end] -= factor * b[:, k, None]
    for k in range(M - 1, -1, -1):
        if k < banded and border.size:
            idx = np.concatenate((np.arange(k + 1, min(k + band + 1, banded)), border))
            b[:, k] -= np.einsum("sj,sj->s", A[:, k, idx], b[:, idx])
        else:
            end = min(k + band + 1, M) if k < banded else M
            if end > k + 1:
                b[:, k] -= np.einsum("sj,sj->s", A[:, k, k + 1 : end], b[:, k + 1 : end])
        b[:, k] /= A[:, k, k]
    return b


def solve_direct(x: np.ndarray, c: DirectCoefficients, x_start: np.ndarray | None, *,
                 iterations: int = DIRECT_ITERATIONS, contacts: dict | None = None) -> bool:
    """Project `x` (3, S, Ps) in place, moving along the gradients at `x_start` (the start of
    the substep) or, None, along the current ones. False when a strand's step was rejected
    (that strand then kept its last accepted step). `contacts` {strand: [(particle, nx, ny,
    nz, n . x held)]}: the particles the colliders pushed, held by contact rows; the ones let
    go are removed from it."""
    P = c.P
    if c.scalar is not None:
        accepted, c.largest_move = solve_strands(x, c.scalar, P, x_start, iterations,
                                                 REGULARISATION, contacts)
        return accepted
    if not contacts or not any(contacts.values()):
        return _solve_vectorised(x, c, x_start, iterations, None)
    held = _Held.of(contacts, c)
    accepted = _solve_vectorised(x, c, x_start, iterations, held)
    held.update(contacts)
    return accepted


class _Held:
    """The contact rows of the vectorised solve: per strand up to m contacts (particle `p`
    (S, m), push direction `n` (S, m, 3), held value `target` (S, m) of n . x_p), `on` (S, m)
    where a row takes part (padding and the contacts let go are off)."""

    def __init__(self, p, n, target, on, w):
        self.p, self.n, self.target, self.on, self.w = p, n, target, on, w

    @classmethod
    def of(cls, contacts: dict, c: DirectCoefficients) -> _Held:
        S = c.active.shape[0]
        m = max(len(rows) for rows in contacts.values())
        p, n = np.zeros((S, m), dtype=np.int64), np.zeros((S, m, 3))
        target, on = np.zeros((S, m)), np.zeros((S, m), dtype=bool)
        for s, rows in contacts.items():
            for i, (particle, nx, ny, nz, held) in enumerate(rows):
                p[s, i], n[s, i], target[s, i] = particle, (nx, ny, nz), held
                on[s, i] = c.w[s, particle] > 0.0
        return cls(p, n, target, on, np.take_along_axis(c.w, p, axis=1))

    def update(self, contacts: dict) -> None:
        """Remove from `contacts` the rows this solve let go."""
        for s, rows in contacts.items():
            contacts[s] = [row for i, row in enumerate(rows) if self.on[s, i]]

    def matrix(self, A: np.ndarray, rhs: np.ndarray, c: DirectCoefficients, V: np.ndarray,
               V0: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The Newton matrix and right-hand side bordered by the contact rows: a contact at
        particle p couples to each row a moving p by K_ca = C_ap w_p (`c.moves`), to a contact
        on the same particle by w_p; rows that are off are the identity."""
        S, M = rhs.shape
        m = self.p.shape[1]
        N = M + m
        on = self.on
        B = np.zeros((S, N, N))
        B[:, :M, :M] = A
        K = np.take_along_axis(c.moves, self.p[:, :, None], axis=1) * on[:, :, None]  # (S,m,M)
        B[:, M:, :M] = K * np.einsum("sik,sak->sia", self.n, V0)
        B[:, :M, M:] = np.swapaxes(K * np.einsum("sak,sik->sia", V, self.n), 1, 2)
        same = (self.p[:, :, None] == self.p[:, None, :]) & on[:, :, None] & on[:, None, :]
        B[:, M:, M:] = np.where(same, self.w[:, :, None] * np.einsum("sik,sjk->sij", self.n,
                                                                     self.n), 0.0)
        d = np.arange(M, N)
        B[:, d, d] = np.where(on, B[:, d, d] * (1.0 + REGULARISATION), 1.0)
        x_p = np.take_along_axis(X, self.p[:, :, None], axis=1)
        b = np.concatenate((rhs, np.where(on, self.target - np.einsum("sik,sik->si", self.n,
                                                                       x_p), 0.0)), axis=1)
        return B, b

    def moves(self, move: np.ndarray, step: np.ndarray, M: int) -> None:
        """Add the contact rows' moves w_p lambda n to `move` (S, P, 3)."""
        push = (self.w * np.where(self.on, step[:, M:], 0.0))[:, :, None] * self.n
        S = move.shape[0]
        np.add.at(move, (np.repeat(np.arange(S), self.p.shape[1]), self.p.ravel()),
                  push.reshape(-1, 3))


def _solve_vectorised(x: np.ndarray, c: DirectCoefficients, x_start: np.ndarray | None,
                      iterations: int, held: _Held | None) -> bool:
    """`solve_direct` of every strand at once, with the contact rows `held` if given."""
    P = c.P
    X = x[:, :, :P].transpose(1, 2, 0)  # (S, P, 3) view
    across = c.across
    if x_start is not None:
        V0, _, across = _rows(np.ascontiguousarray(x_start[:, :, :P].transpose(1, 2, 0)), c,
                              across)
    accepted = True
    d = c.diagonal
    for _ in range(iterations):
        V, violation, across_now = _rows(np.ascontiguousarray(X), c, across)
        if x_start is None:
            V0 = V
        A = np.matmul(V, np.swapaxes(V0, 1, 2))
        A *= c.K
        A[:, d, d] *= 1.0 + REGULARISATION
        A[:, d, d] += c.alpha + c.inactive
        rhs = violation + c.alpha * c.lam
        rhs *= -1.0 + c.inactive  # inactive rows: 0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if held is None:
                step = _eliminate(A, rhs, c.band)
                move = np.matmul(c.moves, V0 * step[..., None])  # (S, P, 3)
            else:
                step, move = _held_step(A, rhs, c, V, V0, X, held)
            squared = np.einsum("spk,spk->sp", move, move)
            too_far = _too_far(move, c)
        if too_far.any():
            accepted = False
            step[too_far] = 0.0
            move[too_far] = 0.0
        c.lam += step[:, : c.lam.shape[1]]
        X += move
        c.largest_move = float(np.sqrt(np.max(squared, where=~too_far[:, None], initial=0.0)))
        if across is None and x_start is None:
            across = across_now
    c.across = across_now
    return accepted


def _too_far(move: np.ndarray, c: DirectCoefficients) -> np.ndarray:
    """(S,) strands whose step (moves (S, P, 3)) turns a segment by more than `c.max_move`
    (S, 1): the ends' moves differ by more (MAX_MOVE), or is not finite. Particle 0's own move
    counts as its segment to a pinned parent; a segment into a pinned particle counts too (a
    free run between two pins turned its last segment by 3.9 cm in a step the float solve
    took), one past the tip does not."""
    limit = c.max_move**2
    turn = move[:, 1:] - move[:, :-1]
    small = np.einsum("spk,spk->sp", turn, turn) <= limit  # NaN fails it too
    first = np.einsum("sk,sk->s", move[:, 0], move[:, 0]) <= limit[:, 0]
    return ~(np.all(small | ~c.pairs, axis=1) & (first | ~c.first))


def _held_step(A: np.ndarray, rhs: np.ndarray, c: DirectCoefficients, V: np.ndarray,
               V0: np.ndarray, X: np.ndarray, held: _Held) -> tuple[np.ndarray, np.ndarray]:
    """(multipliers, moves) of a Newton step with the contact rows, as the float solve's
    `direct_scalar._held_step`: a strand whose contact would have to pull lets the one pulling
    hardest go and is solved again; a strand whose step is still not a small correction is
    solved with no contact."""
    M = rhs.shape[1]
    for fallback in (False, True):
        while True:
            B, b = held.matrix(A, rhs, c, V, V0, X)
            step = _eliminate(B, b, c.band, M)
            pull = np.where(held.on, step[:, M:], np.inf)
            weakest = np.argmin(pull, axis=1)
            pulling = np.take_along_axis(pull, weakest[:, None], axis=1)[:, 0] < 0.0
            if not pulling.any():
                break
            held.on[np.flatnonzero(pulling), weakest[pulling]] = False
        move = np.matmul(c.moves, V0 * step[:, :M, None])
        held.moves(move, step, M)
        if fallback:
            break
        too_far = _too_far(move, c) & held.on.any(axis=1)
        if not too_far.any():
            break
        held.on[too_far] = False
    return step, move
