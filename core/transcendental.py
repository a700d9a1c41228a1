"""Transcendental functions that give the same bits wherever NumPy puts the memory.

On CPUs with AVX-512, NumPy (1.2x, the version Blender ships) evaluates ``exp``, ``expm1``,
``tan``, ``arcsin``, ``arctan2``, ``power``, ``cbrt``… with SVML vector kernels, but falls back to
the C library's scalar functions when it thinks the input and output memory overlap
(``nomemoverlap`` in ``loops_utils.h``). Its test counts an input that *ends exactly where the
output starts* as overlapping, so whether a call takes the vector or the scalar path depends on
where the allocator happened to place a fresh result array: heap history. The two paths differ by
one unit in the last place on a large share of inputs (measured: ``arctan2`` 32 %, ``tan`` 40 %,
``exp`` 25 %), and a ragdoll's Gauss-Seidel solve amplifies one ulp into different keys, so
repeated bakes in one process disagreed.

Each function here writes into a fresh buffer with one guard element on each side: no other
allocation can end at the output's first byte or start right after its last, so NumPy always
takes the same path for the same shapes and strides. Use these, not ``np.exp`` & co., in every
solver path whose result reaches a bake.
"""

from __future__ import annotations

import math

import numpy as np


def _guarded(ufunc: np.ufunc, a, b=None) -> np.ndarray:
    # (one or two operands spelled out: the list and generators of a *args version were 11
    # Python-level calls per use, a ragdoll substep makes 22 uses on 17 bodies)
    a = np.asarray(a, dtype=np.float64)
    shape, n = a.shape, a.size
    if b is None:
        arrays = (a,)
    else:
        b = np.asarray(b, dtype=np.float64)
        arrays = (a, b)
        if b.shape != shape:
            # (np.broadcast_shapes costs ~6 us, several times the ufunc on a ragdoll's 17 bodies)
            shape = np.broadcast_shapes(shape, b.shape)
            n = math.prod(shape)
    buffer = np.empty(n + 2)
    out = buffer[1:n + 1]
    if len(shape) != 1:  # (the slice already is the (n,) result)
        out = out.reshape(shape)
    ufunc(*arrays, out=out)
    return out[()] if not shape else out


def exp(x) -> np.ndarray:
    return _guarded(np.exp, x)


def expm1(x) -> np.ndarray:
    return _guarded(np.expm1, x)


def tan(x) -> np.ndarray:
    return _guarded(np.tan, x)


def arcsin(x) -> np.ndarray:
    return _guarded(np.arcsin, x)


def arctan2(y, x) -> np.ndarray:
    return _guarded(np.arctan2, y, x)


def power(base, exponent) -> np.ndarray:
    return _guarded(np.power, base, exponent)


def cbrt(x) -> np.ndarray:
    return _guarded(np.cbrt, x)
