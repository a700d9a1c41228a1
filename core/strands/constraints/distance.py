"""XPBD distance constraint between particle pairs (compliant stretch; local shape's pairs).

For C = |b - a| - rest with compliance alpha and alpha~ = alpha / h^2, one XPBD step with lambda
reset to 0 gives dlambda = -C / (w_a + w_b + alpha~) and moves a by +w_a * C/(...) along the unit
direction a->b and b by -w_b * C/(...). Pairs are solved by colour (Gauss-Seidel per colour):
inside one colour no particle appears twice, so a whole colour is one strided slice.

Positions are component-major ("structure of arrays", shape (3, ...)): every operation below is
one ufunc over all pairs of a colour with the component as the outermost axis, which NumPy runs
several times faster than (..., 3) rows.
"""

from __future__ import annotations

import numpy as np

EPS_LENGTH = 1e-12


def distance_coefficients(*, w_a: np.ndarray, w_b: np.ndarray, rest: np.ndarray,
                          compliance: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-pair step factors `(w_a, w_b) / (w_a + w_b + alpha / h^2)`.

    Zero where the pair is inactive (rest 0 = padding, both masses 0, or compliance inf), so
    padding never divides by zero.
    """
    alpha_tilde = np.asarray(compliance, dtype=np.float64) / (h * h)
    denominator = w_a + w_b + alpha_tilde
    usable = (rest > 0) & np.isfinite(denominator) & (denominator > 0)
    safe = np.where(usable, denominator, 1.0)
    coef_a = np.where(usable, w_a / safe, 0.0)
    coef_b = np.where(usable, w_b / safe, 0.0)
    return coef_a, coef_b


class PairCoefficients:
    """Per-colour factors: `coef` and `coef * rest` for both ends (contiguous copies)."""

    def __init__(self, coef_a: np.ndarray, coef_b: np.ndarray, rest: np.ndarray):
        self.coef_a = np.ascontiguousarray(coef_a)
        self.coef_b = np.ascontiguousarray(coef_b)
        self.coef_rest_a = np.ascontiguousarray(coef_a * rest)
        self.coef_rest_b = np.ascontiguousarray(coef_b * rest)

    def any(self) -> bool:
        return bool(np.any(self.coef_a) or np.any(self.coef_b))


class DistanceScratch:
    """Preallocated temporaries for pairs of shape (3, ...)."""

    def __init__(self, shape: tuple[int, ...]):
        self.d = np.empty(shape)
        self.d2 = np.empty(shape)
        self.d2_parts = (self.d2[0], self.d2[1], self.d2[2])
        self.length = np.empty(shape[1:])
        # The length's floor as an array: np.maximum's SIMD loop, 3-4x its loop with a scalar
        # (the same values; core/numpy_calls.filled).
        self.floor = np.full(shape[1:], EPS_LENGTH)
        self.fa = np.empty(shape[1:])
        self.fb = np.empty(shape[1:])


def solve_distance_pairs(a: np.ndarray, b: np.ndarray, c: PairCoefficients,
                         scratch: DistanceScratch) -> None:
    """Project the pairs (a, b) in place; `a`, `b` are (3, ...) views of the positions."""
    d, d2, length, fa, fb = scratch.d, scratch.d2, scratch.length, scratch.fa, scratch.fb
    dx, dy, dz = scratch.d2_parts
    np.subtract(b, a, out=d)
    np.multiply(d, d, out=d2)
    np.add(dx, dy, out=length)
    np.add(length, dz, out=length)
    np.sqrt(length, out=length)
    np.maximum(length, scratch.floor, out=length)
    # Correction along d: coef * C / |d| = coef - coef * rest / |d|.
    np.divide(c.coef_rest_a, length, out=fa)
    np.subtract(c.coef_a, fa, out=fa)
    np.divide(c.coef_rest_b, length, out=fb)
    np.subtract(c.coef_b, fb, out=fb)
    np.multiply(d, fa, out=d2)
    np.add(a, d2, out=a)
    np.multiply(d, fb, out=d2)
    np.subtract(b, d2, out=b)


def project_pair(x_a: np.ndarray, x_b: np.ndarray, *, rest: float, w_a: float, w_b: float,
                 compliance: float = 0.0, h: float = 1 / 240) -> tuple[np.ndarray, np.ndarray]:
    """One XPBD projection of a single pair (positions (3,)); returns the new positions."""
    a = np.array(x_a, dtype=np.float64).reshape(3, 1)
    b = np.array(x_b, dtype=np.float64).reshape(3, 1)
    rest_a = np.array([float(rest)])
    coef_a, coef_b = distance_coefficients(w_a=np.array([w_a]), w_b=np.array([w_b]), rest=rest_a,
                                           compliance=np.array([compliance]), h=h)
    solve_distance_pairs(a, b, PairCoefficients(coef_a, coef_b, rest_a), DistanceScratch((3, 1)))
    return a[:, 0], b[:, 0]


def flat_pairs(values: np.ndarray, offset: int) -> np.ndarray:
    """Per-pair values (S, Ps - offset) of pairs (i, i + offset) laid out for the flat view
    `x.reshape(3, -1)` of a (3, S, Ps) state: (S * Ps - offset,), pair i of strand s at
    s * Ps + i, and 0 for the `offset` pairs that straddle two strands.

    On the flat view the pair ends `x[:, :-offset]`, `x[:, offset:]` are contiguous, which makes
    each ufunc over them about 3x faster than on the (3, S, Ps - offset) slices (short rows);
    the straddling pairs have zero coefficients, so they move nothing.
    """
    S, n = values.shape
    Ps = n + offset
    flat = np.zeros((S, Ps))
    flat[:, :n] = values
    return flat.reshape(-1)[: S * Ps - offset].copy()
