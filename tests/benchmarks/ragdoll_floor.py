"""The NumPy floor of a ragdoll substep, for bench_ragdoll.py (issue 14: "where the limit of NumPy
is reached, show it with a profile").

The least a NumPy ragdoll solver must do per substep, and nothing else: the bodies of a tree
(bench_ragdoll's 17-body humanoid) predicted under gravity, then every ball joint of the tree
solved at once per iteration (XPBD, Müller et al. 2020 §3.3.1, one Jacobi batch: positional
corrections summed per body with ``np.add.at``), then velocities from the position change. No
limits, motors, contacts, damping or energy bookkeeping, which Waft's solver also runs. Every
pass is the fewest array operations we know for it (cross products and quaternion products as
one matrix product of outer products: `core/ragdoll/bodies.py`'s own kernels), so its time per
substep is a lower bound for any NumPy solver with these substeps and iterations. Its time per
NumPy call is the interpreter's and NumPy's dispatch cost, not arithmetic: 17 bodies are a
few hundred floats.

Prints nothing; `floor(...)` returns milliseconds per frame, Python calls per substep (cProfile:
every Python and C function entered), and the widest joint gap it leaves (so the measured
kernel is a working solver, not an empty loop).
"""

from __future__ import annotations

import cProfile
import pstats
import time

import numpy as np
from _waft import use_checkout

use_checkout()

# The solver's own kernels (`core/ragdoll/bodies.py`), so the floor pays what Waft pays per call.
from waft.core.ragdoll.bodies import cross, dot, q2m, qmul, quat_conj, rotate  # noqa: E402


class JointsOnly:
    """Capsule bodies on the bones (head, tail, parent index; -1 = the kinematic root) joined
    by ball joints at each child's head; the state is advanced in place by `substep`."""

    def __init__(self, heads: np.ndarray, tails: np.ndarray, parents: np.ndarray, *,
                 radius: float = 0.05, density: float = 985.0, substep: float,
                 iterations: int):
        heads, tails = np.asarray(heads, float), np.asarray(tails, float)
        length = np.linalg.norm(tails - heads, axis=1)
        self.h, self.iterations = substep, iterations
        self.x = 0.5 * (heads + tails)  # capsule centres; every body starts unrotated
        self.q = np.tile([1.0, 0.0, 0.0, 0.0], (len(heads), 1))
        self.v, self.w = np.zeros_like(self.x), np.zeros_like(self.x)
        mass = density * (np.pi * radius**2 * length + 4.0 / 3.0 * np.pi * radius**3)
        free = np.asarray(parents) >= 0
        self.inv_mass = np.where(free, 1.0 / mass, 0.0)
        # A rod's principal inertia about any axis (the floor needs its cost, not its shape).
        inertia = mass * (3.0 * radius**2 + length**2) / 12.0
        self.inv_inertia = np.where(free, 1.0 / inertia, 0.0)[:, None]
        self.child = np.flatnonzero(free)
        self.parent = np.asarray(parents)[self.child]
        joint = heads[self.child]
        self.anchor_parent = joint - self.x[self.parent]  # body-local (bodies start unrotated)
        self.anchor_child = joint - self.x[self.child]
        self.gravity = np.where(free[:, None], [0.0, 0.0, -9.81], 0.0)
        # Jacobi averaging (Macklin et al. 2014, "Unified particle physics", §4.2): a body's
        # summed corrections divided by its joint count, or a chest with three joints
        # overshoots and one iteration diverges.
        joints = np.bincount(np.concatenate([self.child, self.parent]), minlength=len(heads))
        self.share = 1.0 / np.maximum(joints, 1)[:, None]

    def substep(self) -> None:
        h, x, q = self.h, self.x, self.q
        x_start, q_start = x.copy(), q.copy()
        self.v += h * self.gravity
        x += h * self.v
        spin = np.zeros_like(q)
        spin[:, 1:] = 0.5 * h * self.w
        q += qmul(spin, q)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        a, b, wa, wb = self.parent, self.child, self.inv_mass[self.parent], self.inv_mass[
            self.child]
        Ia, Ib = self.inv_inertia[a], self.inv_inertia[b]
        for _ in range(self.iterations):
            R = q2m(q)
            ra = rotate(R[a], self.anchor_parent)
            rb = rotate(R[b], self.anchor_child)
            gap = (x[b] + rb) - (x[a] + ra)
            distance = np.sqrt(dot(gap, gap))
            normal = gap / np.maximum(distance, 1e-12)[:, None]
            ca, cb = cross(ra, normal), cross(rb, normal)
            weight = (wa + wb + dot(ca * Ia, ca)
                      + dot(cb * Ib, cb))
            impulse = (-distance / weight)[:, None] * normal
            dx = np.zeros_like(x)
            np.add.at(dx, a, -wa[:, None] * impulse)
            np.add.at(dx, b, wb[:, None] * impulse)
            dtheta = np.zeros_like(x)
            np.add.at(dtheta, a, -Ia * cross(ra, impulse))
            np.add.at(dtheta, b, Ib * cross(rb, impulse))
            dx *= self.share
            dtheta *= self.share
            x += dx
            spin[:, 1:] = 0.5 * dtheta
            q += qmul(spin, q)
            q /= np.linalg.norm(q, axis=1, keepdims=True)
        self.v[:] = (x - x_start) / h
        turn = qmul(q, quat_conj(q_start))
        self.w[:] = 2.0 * turn[:, 1:] * np.sign(turn[:, :1]) / h

    def widest_gap(self) -> float:
        R = q2m(self.q)
        ra = rotate(R[self.parent], self.anchor_parent)
        rb = rotate(R[self.child], self.anchor_child)
        return float(np.linalg.norm((self.x[self.child] + rb) - (self.x[self.parent] + ra),
                                    axis=1).max())


def floor(heads, tails, parents, *, substep_hz: int, fps: int, iterations: int,
          frames: int = 250, repeat: int = 3) -> dict:
    """Best-of-`repeat` milliseconds per frame of `JointsOnly` over `frames` frames, its Python
    calls per substep, and the widest joint gap at the end (metres)."""
    substeps = frames * substep_hz // fps
    best = np.inf
    for _ in range(repeat):
        solver = JointsOnly(heads, tails, parents, substep=1.0 / substep_hz,
                            iterations=iterations)
        start = time.perf_counter()
        for _ in range(substeps):
            solver.substep()
        best = min(best, time.perf_counter() - start)
    gap = solver.widest_gap()
    profiled = JointsOnly(heads, tails, parents, substep=1.0 / substep_hz, iterations=iterations)
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(substep_hz // fps):
        profiled.substep()
    profile.disable()
    calls = sum(stat[1] for stat in pstats.Stats(profile).stats.values()) / (substep_hz // fps)
    return {"ms_per_frame": 1e3 * best / frames, "calls_per_substep": calls,
            "us_per_call": 1e6 * best / substeps / calls, "widest_joint_gap_m": gap}
