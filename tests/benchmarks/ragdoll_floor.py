"""The NumPy floor of a ragdoll substep, for bench_ragdoll.py (issue 14: "where the limit of NumPy
is reached, show it with a profile").

The least a NumPy ragdoll solver must do per substep, and nothing else: the bodies of a tree
(bench_ragdoll's 17-body humanoid) predicted under gravity, then every ball joint of the tree
solved at once per iteration (XPBD, Müller et al. 2020 §3.3.1, one Jacobi batch: positional
corrections summed per body with ``np.add.at``), then velocities from the position change. No
limits, motors, contacts, damping or energy bookkeeping, which Waft's solver also runs. Every
pass is the fewest array operations we know for it (cross products and quaternion products as
one matrix product of outer products, as `core/ragdoll/bodies.py` does), so its time per
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

# (j, k, i, sign): out_i += sign a_j b_k, for the cross and Hamilton products as matrices.
_CROSS_TERMS = ((1, 2, 0, 1), (2, 1, 0, -1), (2, 0, 1, 1), (0, 2, 1, -1), (0, 1, 2, 1),
                (1, 0, 2, -1))
_HAMILTON_TERMS = ((0, 0, 0, 1), (1, 1, 0, -1), (2, 2, 0, -1), (3, 3, 0, -1), (0, 1, 1, 1),
                   (1, 0, 1, 1), (2, 3, 1, 1), (3, 2, 1, -1), (0, 2, 2, 1), (1, 3, 2, -1),
                   (2, 0, 2, 1), (3, 1, 2, 1), (0, 3, 3, 1), (1, 2, 3, 1), (2, 1, 3, -1),
                   (3, 0, 3, 1))


def _bilinear(terms, n: int, m: int) -> np.ndarray:
    out = np.zeros((n * n, m))
    for j, k, i, sign in terms:
        out[j * n + k, i] = sign
    return out


CROSS, HAMILTON = _bilinear(_CROSS_TERMS, 3, 3), _bilinear(_HAMILTON_TERMS, 4, 4)
CONJUGATE = np.array([1.0, -1.0, -1.0, -1.0])


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a[:, :, None] * b[:, None, :]).reshape(len(a), 9) @ CROSS


def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a[:, :, None] * b[:, None, :]).reshape(len(a), 16) @ HAMILTON


def _matrices(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q.T
    return np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                     2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                     2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
                    axis=-1).reshape(-1, 3, 3)


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
        q += _qmul(spin, q)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        a, b, wa, wb = self.parent, self.child, self.inv_mass[self.parent], self.inv_mass[
            self.child]
        Ia, Ib = self.inv_inertia[a], self.inv_inertia[b]
        for _ in range(self.iterations):
            R = _matrices(q)
            ra = np.einsum("nij,nj->ni", R[a], self.anchor_parent)
            rb = np.einsum("nij,nj->ni", R[b], self.anchor_child)
            gap = (x[b] + rb) - (x[a] + ra)
            distance = np.sqrt(np.einsum("nk,nk->n", gap, gap))
            normal = gap / np.maximum(distance, 1e-12)[:, None]
            ca, cb = _cross(ra, normal), _cross(rb, normal)
            weight = (wa + wb + np.einsum("nk,nk->n", ca * Ia, ca)
                      + np.einsum("nk,nk->n", cb * Ib, cb))
            impulse = (-distance / weight)[:, None] * normal
            dx = np.zeros_like(x)
            np.add.at(dx, a, -wa[:, None] * impulse)
            np.add.at(dx, b, wb[:, None] * impulse)
            dtheta = np.zeros_like(x)
            np.add.at(dtheta, a, -Ia * _cross(ra, impulse))
            np.add.at(dtheta, b, Ib * _cross(rb, impulse))
            dx *= self.share
            dtheta *= self.share
            x += dx
            spin[:, 1:] = 0.5 * dtheta
            q += _qmul(spin, q)
            q /= np.linalg.norm(q, axis=1, keepdims=True)
        self.v[:] = (x - x_start) / h
        turn = _qmul(q, q_start * CONJUGATE)
        self.w[:] = 2.0 * turn[:, 1:] * np.sign(turn[:, :1]) / h

    def widest_gap(self) -> float:
        R = _matrices(self.q)
        ra = np.einsum("nij,nj->ni", R[self.parent], self.anchor_parent)
        rb = np.einsum("nij,nj->ni", R[self.child], self.anchor_child)
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
