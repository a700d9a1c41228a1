"""A small rig's substeps on Python floats, its state kept as lists from substep to substep.

A 4-bone tail baked over 100 frames takes 990 substeps of a 6-particle state: there NumPy's
per-call overhead (~0.5-1 us a ufunc, ~40 calls a substep) and the list conversions each
scalar pass made of the state (`solve_bending`, `solve_shake`, `solve_ftl` each took the state
to floats and back) were the solve's whole cost, not the arithmetic (41 ms of a 55 ms bake).
Here the state goes to floats once per output frame and every pass of `step` the rig uses works
on the same flat rows (entry s * Ps + i of each axis is particle i of strand s): the fused
Verlet / global shape / kinematic update, the bending pass, SHAKE and the FTL sweep with its
DFTL correction, each the vectorised operation's arithmetic in its order, so the bits are
`step`'s (tests/core/test_float_step.py checks whole bakes against it).

Only substeps whose frame uses nothing else take this path (`FloatCoefficients.of` returns
None otherwise): no colliders or body meshes, no wind noise, stretch compliance, local shape,
shock propagation, space carry, tether, max distance, direct solve or voxel friction, pins only
at the roots, and every pass's own float path available (`SCALAR_STRANDS` strands or fewer).
"""

from __future__ import annotations

import numpy as np

from ..shake import SCALAR_STRANDS, shake_floats, solve_shake
from .constraints.bending import bend_plan, bend_planned
from .constraints.ftl import ftl_floats

# Sample intervals whose source terms (`FloatCoefficients.source_block`) are made at once: a
# 100-frame tail sampled at 120 Hz has 495, so 8 blocks; a block of 64 is 64 x 36 floats
# per particle row, made as the substeps reach it, and a live preview fed a few samples per
# frame makes only the intervals whose samples are read.
SOURCE_BLOCK = 64


class FloatCoefficients:
    """A frame's factors as flat Python floats (the `FrameCoefficients` of a small rig), with
    its per-frame plan: what `step_floats` did the same way in every substep of the frame (each
    pass's presence, the bending sweep's visits with their multiplier rows, the DFTL switch,
    the loop ranges) resolved once when the coefficients change instead of every substep."""

    def __init__(self, c, ws):
        self.verlet_a = c.verlet_a.reshape(-1).tolist()
        self.verlet_b = c.verlet_b.reshape(-1).tolist()
        self.pull = c.pull
        self.base_h2 = c.base_h2
        self.ws = ws  # (SHAKE's vectorised fallback takes its scratch)
        self.Ps = ws.Ps
        self.entries = range(len(self.verlet_a))
        self.iterations = range(ws.iterations)
        self.bend = None if c.bend is None else bend_plan(
            c.bend, ws.bend_scratch, sweep=c.bend.firm_sweep if c.bend.firm else None)
        self.shake = c.shake
        self.ftl = c.ftl
        self.ftl_damped = c.ftl is not None and c.ftl.any_damping

    def source_block(self, reference_soa, first: int, stop: int) -> list:
        """`_Bake._source_terms` of the intervals first..stop-1 as flat float rows, one (A, B)
        pair of (3, S * Ps) lists per interval, from the (F, 3, S, Ps) reference: A = base_h2 +
        pull ref_f, B = pull (ref_g - ref_f) with g = min(f + 1, F - 1), its ufuncs on its
        arrays element by element (the same bits), for `SOURCE_BLOCK` intervals at once. One
        interval at a time was five ufuncs and two `tolist` calls, ~7 us, for 18 numbers:
        495 of them were a tenth of a 4-bone tail's solve."""
        F = len(reference_soa)
        reference_f = reference_soa[first:stop]
        if stop < F:
            reference_g = reference_soa[first + 1 : stop + 1]
        else:  # the last interval's far end is its own sample (`frame_interval` clamps)
            reference_g = reference_soa[np.minimum(np.arange(first + 1, stop + 1), F - 1)]
        A = reference_f * self.pull
        A += self.base_h2
        B = reference_g - reference_f
        B *= self.pull
        n = stop - first
        return list(zip(A.reshape(n, 3, -1).tolist(), B.reshape(n, 3, -1).tolist(), strict=True))

    @staticmethod
    def of(c, ws, meshes) -> FloatCoefficients | None:
        """The float factors of `c`, or None when the frame needs a pass that only runs on
        arrays (see module doc)."""
        if (ws.colliders or meshes is not None or ws.S > SCALAR_STRANDS or c.wind is not None
                or c.stretch is not None or c.local_shape is not None or c.shock is not None
                or c.needs_carry or c.tether_limit is not None or c.max_distance is not None
                or c.direct is not None or c.voxel is not None or not c.roots_only
                or (c.bend is not None and (c.bend.stiff or c.bend.scalar is None))
                or (c.ftl is not None and c.ftl.scalar is None)):
            return None
        return FloatCoefficients(c, ws)


class FloatState:
    """The positions and previous positions of a (3, S, Ps) state as flat Python-float rows."""

    def __init__(self, state):
        self.x = state.x.reshape(3, -1).tolist()
        self.x_prev = state.x_prev.reshape(3, -1).tolist()

    def store(self, state) -> None:
        """Write the rows back into the state's arrays."""
        state.x.reshape(3, -1)[...] = self.x
        state.x_prev.reshape(3, -1)[...] = self.x_prev

    def store_x(self, out) -> None:
        """The positions into `out` (3, S, Ps), C-contiguous."""
        out.reshape(3, -1)[...] = self.x


def step_floats(fs: FloatState, fc: FloatCoefficients, A: list, B: list, alpha: float,
                state) -> None:
    """`step` for one substep of a rig `FloatCoefficients.of` accepts, on `fs` in place; the
    source terms `A`, `B` (flat rows of `_source_terms`) at the blend `alpha`. `state`: the
    arrays `fs` came from, used only when SHAKE must take the vectorised solve (a zero pivot)."""
    a, b, entries = fc.verlet_a, fc.verlet_b, fc.entries
    # x_new = (x a - x_prev b) + (B alpha + A); x_prev = x: `step`'s ufuncs, element by element.
    # x_new goes into the x_prev rows (each entry read before it is written) and the rows swap
    # roles, so x is not copied into x_prev. (A plain loop: a comprehension is a function call
    # of its own in Python 3.11.)
    for X, XP, Aq, Bq in zip(fs.x, fs.x_prev, A, B, strict=True):
        for k in entries:
            XP[k] = (X[k] * a[k] - XP[k] * b[k]) + (Bq[k] * alpha + Aq[k])
    fs.x, fs.x_prev = fs.x_prev, fs.x
    X, Y, Z = fs.x
    bend, shake, ftl = fc.bend, fc.shake, fc.ftl
    for _ in fc.iterations:
        if bend is not None:
            bend_planned(X, Y, Z, bend)
        if shake is not None and not shake_floats(X, Y, Z, *fs.x_prev, fc.Ps, shake):
            fs.store(state)  # a zero pivot: the vectorised projection takes it (inf / NaN)
            solve_shake(state.x, state.x_prev, shake, fc.ws.shake_scratch(shake.n))
            fs.x[:] = state.x.reshape(3, -1).tolist()
            X, Y, Z = fs.x
        if ftl is not None:
            ftl_floats(X, Y, Z, fs.x_prev if fc.ftl_damped else None, ftl)
