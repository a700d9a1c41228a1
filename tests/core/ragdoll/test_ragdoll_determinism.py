"""Repeated ragdoll bakes in one process give the same bits, whatever the heap looks like.

The solve used to part by one ulp at some substep depending on where NumPy's allocator placed
temporaries (AVX-512 `arctan2`/`exp`/… switch to the C library when input and output memory
touch; see core/transcendental.py), and Gauss-Seidel amplified that into different keys: 30
bakes of this walk in one process gave 2–3 different results. Heap churn between the bakes and
the garbage collector off make different placements likely.
"""

from __future__ import annotations

import gc
import hashlib

import numpy as np

from waft.core.ragdoll import RagdollSettings, bake_ragdoll

from .conftest import walking_humanoid

BAKES = 30


def test_thirty_bakes_with_heap_churn_are_bitwise_equal():
    digests = set()
    gc.disable()
    try:
        for seed in range(BAKES):
            sizes = np.random.default_rng(seed).integers(1, 999, 50)
            junk = [np.zeros(int(s)) for s in sizes]
            del junk[::3]
            _, model, drive = walking_humanoid(bodies=8, frames=20, motor_strength=0.3)
            result = bake_ragdoll(model, drive, RagdollSettings())
            digests.add(hashlib.sha256(result.physics_matrix.tobytes()).hexdigest())
            del junk
    finally:
        gc.enable()
    assert len(digests) == 1
