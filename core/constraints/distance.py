"""XPBD distance constraint between particle pairs (stretch, and skip-one bending).

For C = |b - a| - rest with compliance alpha and alpha~ = alpha / h^2, one XPBD step with lambda
reset to 0 gives dlambda = -C / (w_a + w_b + alpha~) and moves a by +w_a * C/(...) along the unit
direction a->b and b by -w_b * C/(...). Pairs are solved by colour (Gauss-Seidel per colour):
inside one colour no particle appears twice, so a whole colour is one strided slice.
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


def solve_distance_pairs(a: np.ndarray, b: np.ndarray, rest: np.ndarray, coef_a: np.ndarray,
                         coef_b: np.ndarray, scratch: DistanceScratch) -> None:
    """Project the pairs (a[i], b[i]) in place; `a`, `b` are (..., 3) views of the positions."""
    d, d2, length, fa, fb = scratch.d, scratch.d2, scratch.length, scratch.fa, scratch.fb
    np.subtract(b, a, out=d)
    np.multiply(d, d, out=d2)
    np.sum(d2, axis=-1, out=length)
    np.sqrt(length, out=length)
    np.maximum(length, EPS_LENGTH, out=length)
    # C / |d| = 1 - rest / |d|; the correction along d is then d * C/|d| * coef.
    np.divide(rest, length, out=fa)
    np.subtract(1.0, fa, out=fa)
    np.multiply(fa, coef_b, out=fb)
    np.multiply(fa, coef_a, out=fa)
    np.multiply(d, scratch.fa3, out=d2)
    np.add(a, d2, out=a)
    np.multiply(d, scratch.fb3, out=d2)
    np.subtract(b, d2, out=b)


class DistanceScratch:
    """Preallocated temporaries for `solve_distance_pairs` on pairs of shape `shape` (..., 3)."""

    def __init__(self, shape: tuple[int, ...]):
        self.d = np.empty(shape)
        self.d2 = np.empty(shape)
        self.length = np.empty(shape[:-1])
        self.fa = np.empty(shape[:-1])
        self.fb = np.empty(shape[:-1])
        self.fa3 = self.fa[..., None]
        self.fb3 = self.fb[..., None]


def project_pair(x_a: np.ndarray, x_b: np.ndarray, *, rest: float, w_a: float, w_b: float,
                 compliance: float = 0.0, h: float = 1 / 240) -> tuple[np.ndarray, np.ndarray]:
    """One XPBD projection of a single pair (positions (3,)); returns the new positions."""
    a = np.array(x_a, dtype=np.float64).reshape(1, 3)
    b = np.array(x_b, dtype=np.float64).reshape(1, 3)
    rest_a = np.array([float(rest)])
    coef_a, coef_b = distance_coefficients(w_a=np.array([w_a]), w_b=np.array([w_b]), rest=rest_a,
                                           compliance=np.array([compliance]), h=h)
    solve_distance_pairs(a, b, rest_a, coef_a, coef_b, DistanceScratch((1, 3)))
    return a[0], b[0]
