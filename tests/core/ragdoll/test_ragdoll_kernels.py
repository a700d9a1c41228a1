"""The ragdoll's shortcuts past NumPy's Python wrappers compute what the wrapped functions
compute, bit for bit: `bodies.einsum` (NumPy's C einsum), `bodies.where` (np.where's own
implementation) and `bodies.norm` (np.linalg.norm over the last axis), so the solver's
results do not depend on which path a NumPy offers."""

from __future__ import annotations

import numpy as np

from waft.core.ragdoll.bodies import einsum, norm, where


def test_the_shortcuts_give_the_wrapped_functions_bits():
    rng = np.random.default_rng(11)
    for n in (1, 17, 68):
        a, b = rng.normal(size=(n, 3)) * 1e3, rng.normal(size=(n, 3))
        m = rng.normal(size=(n, 3, 3))
        assert np.array_equal(einsum("nk,nk->n", a, b), np.einsum("nk,nk->n", a, b))
        assert np.array_equal(einsum("nij,nj->ni", m, b), np.einsum("nij,nj->ni", m, b))
        assert np.array_equal(norm(a), np.linalg.norm(a, axis=-1))
        assert np.array_equal(norm(a, keepdims=True), np.linalg.norm(a, axis=-1, keepdims=True))
        mask = a[:, :1] < 0.0
        assert np.array_equal(where(mask, a, 0.0), np.where(mask, a, 0.0))
