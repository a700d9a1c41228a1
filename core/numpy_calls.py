"""NumPy functions called past their Python wrappers: the same C functions, the same bits.

The contact and body kernels make thousands of small-array calls a substep, where the wrappers'
argument handling costs more than the arithmetic. Shared by the ragdoll (`ragdoll.bodies`
re-exports them) and the collider shapes (`colliders`)."""

from __future__ import annotations

import numpy as np

# NumPy's einsum without its Python wrapper. np.einsum with optimize=False (the default, and
# every use here) only forwards its operands to this C function, after an __array_function__
# dispatch and the wrapper's own frame: 7 profiled calls and about 1 µs per use, more than the
# contraction of a ragdoll's 17 bodies itself. The same function: the same bits.
# A private name: a NumPy that moves or drops it gets np.einsum itself (same bits, slower).
try:
    from numpy._core.multiarray import c_einsum as einsum  # NumPy 2 (and 1.26's alias)
except ImportError:
    try:  # NumPy < 1.26
        from numpy.core.multiarray import c_einsum as einsum
    except ImportError:
        einsum = np.einsum
# np.where's C implementation, likewise without the __array_function__ dispatch (NEP 18's
# `_implementation`, the function np.where itself ends in): the same bits, one call not two.
where = getattr(np.where, "_implementation", np.where)

# np.dot's C function, likewise past its dispatcher (a Python-level call of its own). For two
# 2-D float64 operands it hands them to BLAS's dgemm as the @ operator does: the same bits
# (13,000 random products of the ragdoll's kernel and scatter shapes, C and Fortran order,
# compared bytewise), without matmul's generalised-ufunc dispatch: 17 x 9 @ 9 x 3 2.8 us
# with @, 1.9 with np.dot, 1.4 with this. 2-D operands only (np.dot of N-D arrays is not
# matmul).
dot_2d = getattr(np.dot, "_implementation", np.dot)


# np.maximum and np.minimum against a Python scalar take NumPy's plain loop, against an array
# of the same length its SIMD loop (NumPy 1.26, measured: 11,333 elements 5.6 against 1.7 us,
# 48,000 31 against 12; comparisons and arithmetic with a scalar are as fast either way). The
# same values elementwise, so the same bits. Rows per value, grown to the longest asked for;
# keyed by the float's hex so -0.0 and 0.0 stay apart.
_FILLED: dict[str, np.ndarray] = {}


def filled(value: float, n: int) -> np.ndarray:
    """A read-only row (n,) of `value`: the array operand of a floor or ceiling
    (`np.maximum(a, filled(eps, len(a)), out=a)`)."""
    key = float(value).hex()
    row = _FILLED.get(key)
    if row is None or len(row) < n:
        row = np.full(max(n, 2 * len(row) if row is not None else n), float(value))
        row.flags.writeable = False
        _FILLED[key] = row  # (a longer row replaces the shorter one whole)
    return row[:n]


__all__ = ["dot_2d", "einsum", "filled", "where"]
