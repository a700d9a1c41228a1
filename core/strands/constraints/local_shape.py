"""Local shape: each segment keeps its rest direction in its parent segment's frame.

TressFX's local shape constraint pulls particle j+1 toward `x_j + F (rest_{j+1} - rest_j)`,
`F` the frame of the parent segment, so curls and bangs keep their shape without being pulled
back to absolute positions (that is global shape's job). In a segment's own frame (built from it
and its parent), the rest direction of the next segment is fixed by three distances among four
consecutive particles: i<->i+2 on both sides (the two bend angles) and i<->i+3 (the dihedral
angle, the torsion that makes a helix a helix). Keeping those distances keeps every segment's
rest direction in its parent's frame, up to a mirror image of the dihedral.

We solve it in that distance form (XPBD, Macklin et al. 2016) because the frame-target form is
not a conservative force: measured here, a hanging helix with a weak frame-target pull
(Jacobi or root-to-tip sweep, TressFX's shortest-arc frames or two-segment material frames)
fluttered and gained energy at stiffness < 0.6 even with damping. Distance constraints derive
from an energy, so any stiffness is stable, and they are invariant to rigid motion of the strand.

Each pair moves both ends by the XPBD split `w_a / (w_a + w_b)` of the per-substep fraction
`s` (from the rate-normalised stiffness of the outer particle); all pairs of both offsets are
solved together (Jacobi), each particle's corrections scaled by `1 / max(1, sum of its
coefficients)` (constraint averaging, Macklin et al. 2014) so stiff settings never overshoot.
The multipliers are kept over the substep's passes (XPBD, compliance alpha~ = (w_a + w_b)(1 -
s) / s, so the first pass takes `s` of an isolated pair's error and the others converge the
coupled pairs to that compliance). With them reset each pass (PBD), the passes went on past the
compliance toward a rigid shape, and the shape's pushes came back as velocity: an undamped chain
released level gained up to 156 % of its fall (local stiffness 0.8 at 480 Hz), a curved one
5-15 %. The rest of that gain came from the exact lengths after the shape: the pulls act along
chords, nearly along the segments, and SHAKE along the start-of-substep segments returned them
as velocity; the solver now projects the lengths of these strands along their current segments
(`solver.step`), and no case gains (0.00 %, soft or stiff, level or curved, 240-480 Hz).
"""

from __future__ import annotations

import numpy as np

from ...numpy_calls import filled
from .distance import flat_pairs

OFFSETS = (2, 3)
_EPS = 1e-12


class LocalShapeCoefficients:
    """Per-frame factors for the skip-2 and skip-3 pairs: one (coef_a, coef_b, rest) per offset,
    each (S, Ps - k), already relaxed; `flat` holds them in the flat layout the solve reads
    (`distance.flat_pairs`: contiguous pair ends, zero for pairs straddling two strands)."""

    def __init__(self, pairs: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]],
                 keep: list[np.ndarray]):
        self.pairs = pairs
        self.flat = [(k, flat_pairs(ca, k), flat_pairs(cb, k), flat_pairs(rest, k))
                     for k, ca, cb, rest in pairs]
        # Per offset, 1 - s of each pair (flat): the share of its summed correction an XPBD
        # multiplier keeps between the substep's passes.
        self.keep = [flat_pairs(q, k) for (k, *_), q in zip(pairs, keep, strict=True)]
        # (S,) the strands with a pair pulled: their exact lengths then project along the
        # current segments (solver.step).
        self.strands = np.zeros(pairs[0][1].shape[0] if pairs else 0, dtype=bool)
        for _, ca, cb, _ in pairs:
            self.strands |= np.any((ca != 0.0) | (cb != 0.0), axis=1)


def local_shape_coefficients(*, fraction: np.ndarray, w: np.ndarray,
                             rest: dict[int, np.ndarray]) -> LocalShapeCoefficients | None:
    """`fraction` (S, Ps) per-substep strength on each particle (its pairs toward the root read
    it), `w` (S, Ps) inverse masses of movable particles (0 otherwise), `rest` {offset: (S,
    Ps - offset) rest distance, 0 = no pair}. None when nothing is pulled."""
    S, Ps = w.shape
    raw = []
    total = np.zeros((S, Ps))
    for k in OFFSETS:
        if Ps <= k:
            continue
        r = rest[k]
        wa, wb = w[:, :-k], w[:, k:]
        denominator = wa + wb
        # The substep's fraction: what PASSES passes with their multipliers reset took off an
        # isolated pair (the strength users tuned), taken by the first pass (see below).
        s = 1.0 - (1.0 - np.clip(fraction[:, k:], 0.0, 1.0)) ** PASSES
        usable = (r > 0) & (denominator > 0) & (s > 0)
        safe = np.where(usable, denominator, 1.0)
        ca = np.where(usable, s * wa / safe, 0.0)
        cb = np.where(usable, s * wb / safe, 0.0)
        total[:, :-k] += ca
        total[:, k:] += cb
        raw.append((k, ca, cb, r))
    if not any(ca.any() or cb.any() for _, ca, cb, _ in raw):
        return None
    relax = 1.0 / np.maximum(1.0, total)
    pairs = [(k, ca * relax[:, :-k], cb * relax[:, k:], r) for k, ca, cb, r in raw]
    keep = [1.0 - (ca + cb) for _, ca, cb, _ in raw]
    return LocalShapeCoefficients(pairs, keep)


PASSES = 4  # Jacobi passes per substep (TressFX runs 2-3 local shape iterations per step)


class LocalShapeScratch:
    """Preallocated temporaries for a (3, S, Ps) state, flat layout: per offset k the pair
    vectors and a product buffer (3, S * Ps - k), per-pair scalars (S * Ps - k,)."""

    def __init__(self, S: int, Ps: int):
        sizes = {k: S * Ps - k for k in OFFSETS if Ps > k}
        self.d = {k: np.empty((3, n)) for k, n in sizes.items()}
        self.product = {k: np.empty((3, n)) for k, n in sizes.items()}
        self.length = {k: np.empty(n) for k, n in sizes.items()}
        self.error = {k: np.empty(n) for k, n in sizes.items()}
        self.mu = {k: np.zeros(n) for k, n in sizes.items()}
        self.shape = (S, Ps)


def solve_local_shape(x: np.ndarray, c: LocalShapeCoefficients,
                      scratch: LocalShapeScratch | None = None) -> None:
    """`PASSES` Jacobi passes over every skip-2 and skip-3 pair of `x` (3, S, Ps), in place."""
    if scratch is None or scratch.shape != x.shape[1:]:
        scratch = LocalShapeScratch(*x.shape[1:])
    if not x.flags.c_contiguous:  # the solver's state always is; anything else via a copy
        work = np.ascontiguousarray(x)
        solve_local_shape(work, c, scratch)
        x[...] = work
        return
    flat = x.reshape(3, -1)
    for mu in scratch.mu.values():  # the multipliers start at 0 each substep
        mu.fill(0.0)
    for _ in range(PASSES):
        _pass(flat, c, scratch)


def _pass(x: np.ndarray, c: LocalShapeCoefficients, scratch: LocalShapeScratch) -> None:
    """One Jacobi pass on the flat view `x` (3, S * Ps): every pair vector is taken from the same
    positions first, then each offset's corrections are applied (in-place ufuncs on
    preallocated contiguous buffers, no temporaries)."""
    for k, _, _, _ in c.flat:
        np.subtract(x[:, k:], x[:, :-k], out=scratch.d[k])
    for i, (k, ca, cb, rest) in enumerate(c.flat):
        d, product = scratch.d[k], scratch.product[k]
        length, error = scratch.length[k], scratch.error[k]
        np.multiply(d, d, out=product)
        np.add(product[0], product[1], out=length)
        np.add(length, product[2], out=length)
        np.sqrt(length, out=length)
        # XPBD step: each end moves along d by its share of (|d| - rest + alpha~ lambda).
        np.subtract(length, rest, out=error)
        mu = scratch.mu[k]
        error += mu
        mu -= c.keep[i] * error
        np.maximum(length, filled(_EPS, len(length)), out=length)  # (SIMD: numpy_calls)
        np.divide(error, length, out=error)
        np.multiply(ca, error, out=length)  # length is free now: the a-end factor
        np.multiply(d, length, out=product)
        np.add(x[:, :-k], product, out=x[:, :-k])
        np.multiply(cb, error, out=length)
        np.multiply(d, length, out=product)
        np.subtract(x[:, k:], product, out=x[:, k:])


def curl_shape_error(x: np.ndarray, reference: np.ndarray, active: np.ndarray,
                     *, skip: int = 3) -> np.ndarray:
    """Per-strand RMS relative change of the distance between particles i and i + `skip`
    against the reference, a rigid-motion-invariant measure of how much a curl has lost its
    shape (a helix pulled straight lengthens every skip distance). `x`, `reference`
    (..., S, P, 3), `active` (S, P); returns (..., S)."""
    d = np.linalg.norm(x[..., skip:, :] - x[..., :-skip, :], axis=-1)
    r = np.linalg.norm(reference[..., skip:, :] - reference[..., :-skip, :], axis=-1)
    mask = active[:, skip:] & active[:, :-skip]
    rel = np.where(mask, (d - r) / np.maximum(r, _EPS), 0.0)
    return np.sqrt(np.sum(rel**2, axis=-1) / np.maximum(mask.sum(axis=-1), 1))
