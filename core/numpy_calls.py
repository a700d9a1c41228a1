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

__all__ = ["einsum", "where"]
