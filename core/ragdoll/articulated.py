"""Motors solved through the ball-jointed tree (articulated response), every motor at once.

A motor pulls a child toward its parent ⊗ the animation's local rotation. Solved as a two-body
constraint it turns the child alone, and what hangs from the child follows only through its
ball joints an iteration later: a thin chest carrying its arms converged very slowly (30° off an
8 Hz target after 4 iterations). Turning the child's whole subtree rigidly about the joint
instead (the previous solver) converged, but it held the joints inside the subtree rigid while
they are springs: the correction was not a projection in the bodies' mass metric, and it made
energy (a free chain of three in zero gravity with undamped motors gained 25 % of its energy at
960 Hz; a humanoid standing on strength-0.9 motors gained kilojoules and flailed at 20 m/s).

Here the motors are solved in the mobility of the tree with its ball joints held (Lagrange
multipliers on a tree, Baraff, "Linear-time dynamics using Lagrange multipliers", 1996, in
dense form per ragdoll). With the bodies' inverse masses and world inverse inertias M⁻¹ (6n ×
6n, block diagonal), the ball joints' Jacobian G (pivot velocities, 3 rows per joint) and the
motors' Jacobian J (relative angular velocities, 3 rows per joint):

    M_c⁻¹ = M⁻¹ − M⁻¹ Gᵀ (G M⁻¹ Gᵀ)⁻¹ G M⁻¹          the bodies' response, joints held
    Δλ = (J M_c⁻¹ Jᵀ + α̃)⁻¹ (Δθ − α̃ λ)             every motor's XPBD update at once
    Δ(x, θ) = M_c⁻¹ Jᵀ Δλ                             (Macklin et al. 2016)

so a motor moves the child, what hangs from it and the parent side each as the joints let it,
in the mass metric: its corrections conserve momentum and make no energy, and being solved
together the motors converge in one iteration (the joints' second-order drift is left to the
ball joints). Bodies that are kinematic or a locked root take no motor reaction (a locked root
stands for the animation carrying the hips: a kinematic pelvis, as in UE's Physical
Animation; its lock turns it, ``motors.solve_root_lock``). A motor that is off is a row of
infinite compliance (``OFF``): it takes no impulse and constrains nothing.

Experimental (``level.ARTICULATED_MOTORS``, off by default). Measured against the subtree
motors, same scenes: a free chain of three in zero gravity with undamped motors gains 0.07 J
of 69 at 960 Hz (subtree: 20 J); a chain pressing its end into the ground 0 J of 126 (11 J),
four bodies 0.14 J of 447 (66 J); the fall sample's mannequin standing on strength-0.9 motors
without a lock at most 38 J over its 588 J (28 kJ, flailing at 28 m/s), toppling at under
5 m/s. Every ragdoll test passes with it. Not the default yet because it amplifies tiny
differences of its input: the same 5 g shake sampled at 24 and 30 fps (targets within 5e-7 m
of each other) parts by 3 mm within a quarter second, where the subtree motors stay within
1e-6 m; and a substep costs about 40 % more (17-body benchmark, one BLAS thread: 37.6 against
27 ms per frame).

The matrices are evaluated once per substep (inertias are frozen for the substep too,
``Bodies.freeze_inertia``) and batched over the ragdolls of one shape (same bodies and tree):
a crowd of one character is one stack of small dense systems.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bodies import Bodies, qmul, quat_conj, quat_log

OFF = 1e12  # XPBD α̃ of a motor that is off: it takes no impulse
_EPS = 1e-10  # relative regularisation of the joints' and motors' blocks


def _skew(r: np.ndarray) -> np.ndarray:
    """(..., 3, 3) cross-product matrices: _skew(r) @ v == r × v."""
    m = np.zeros(r.shape[:-1] + (3, 3))
    m[..., 0, 1], m[..., 0, 2] = -r[..., 2], r[..., 1]
    m[..., 1, 0], m[..., 1, 2] = r[..., 2], -r[..., 0]
    m[..., 2, 0], m[..., 2, 1] = -r[..., 1], r[..., 0]
    return m


def _regularised(A: np.ndarray) -> np.ndarray:
    """A + ε (1 + max diag) I per stacked matrix: joints between two bodies that cannot move
    (kinematic on both sides) give zero rows."""
    out = A.copy()
    d = np.einsum("rii->ri", out)
    d += _EPS * (1.0 + np.abs(d).max(axis=1, keepdims=True))
    return out


@dataclass(frozen=True)
class TreeShape:
    """The ragdolls of one level that share a tree: their bodies and the joints (local)."""

    bodies: np.ndarray  # (R, k) the level's body indices of each ragdoll
    child: np.ndarray  # (j,) local child of each joint (every body but the root)
    parent: np.ndarray  # (j,) local parent
    J: np.ndarray  # (3j, 6k) motors' Jacobian: relative angular velocity child − parent

    @classmethod
    def groups(cls, ragdoll_local: np.ndarray, parent: np.ndarray) -> list[TreeShape]:
        """One shape per distinct tree among the level's ragdolls (bodies contiguous per
        ragdoll; ``parent`` the level's parent index, n = the world)."""
        n = len(parent)
        shapes: dict[tuple, list[np.ndarray]] = {}
        for r in range(int(ragdoll_local.max(initial=-1)) + 1):
            bodies = np.flatnonzero(ragdoll_local == r)
            local = np.where(parent[bodies] >= n, -1, parent[bodies] - bodies[0])
            shapes.setdefault((len(bodies), *local.tolist()), []).append(bodies)
        out = []
        for key, members in shapes.items():
            k, local = key[0], np.array(key[1:], dtype=np.int64)
            child = np.flatnonzero(local >= 0)
            par = local[child]
            j = len(child)
            J = np.zeros((j, 3, k, 6))
            rows = np.arange(j)
            J[rows, :, child, 3:] = np.eye(3)
            J[rows, :, par, 3:] = -np.eye(3)
            out.append(cls(bodies=np.stack(members), child=child, parent=par,
                           J=J.reshape(3 * j, 6 * k)))
        return out


@dataclass(frozen=True)
class ArticulatedMotors:
    """One substep's motor solve for one ``TreeShape``."""

    shape: TreeShape
    response: np.ndarray  # (R, 6k, 3j) M_c⁻¹ Jᵀ
    K_inv: np.ndarray  # (R, 3j, 3j) (J M_c⁻¹ Jᵀ + α̃)⁻¹
    D_inv: np.ndarray | None  # (R, 3j, 3j) the same without the springs' compliance
    alpha: np.ndarray  # (R, j) α̃, OFF where the motor is off

    @classmethod
    def of(cls, s: Bodies, shape: TreeShape, *, anchor_a: np.ndarray, anchor_b: np.ndarray,
           alpha: np.ndarray, pinned: np.ndarray, damped: bool = True) -> ArticulatedMotors:
        """`anchor_a`, `anchor_b` (R, j, 3): each joint's anchor in its child's and parent's
        body frame from their centres; `alpha` (R, j) each motor's α̃ (OFF: off); `pinned`
        (R, k) the bodies that take no motor reaction; `damped`: some motor has a damper
        (else ``damp`` is not available)."""
        bodies = shape.bodies
        R, k = bodies.shape
        j = len(shape.child)
        inv_mass = np.where(pinned, 0.0, s.inv_mass[bodies])
        inv_inertia = np.where(pinned[..., None, None], 0.0, s.Iw_inv[bodies])
        Minv = np.zeros((R, k, 6, k, 6))
        b = np.arange(k)
        Minv[:, b, :3, b, :3] = inv_mass.T[..., None, None] * np.eye(3)
        Minv[:, b, 3:, b, 3:] = np.swapaxes(inv_inertia, 0, 1)
        Minv = Minv.reshape(R, 6 * k, 6 * k)
        child, parent = bodies[:, shape.child], bodies[:, shape.parent]
        ra = np.einsum("rjik,rjk->rji", s.R[child], anchor_a)
        rb = np.einsum("rjik,rjk->rji", s.R[parent], anchor_b)
        G = np.zeros((R, j, 3, k, 6))
        rows = np.arange(j)
        G[:, rows, :, shape.child, :3] = np.eye(3)
        G[:, rows, :, shape.child, 3:] = np.swapaxes(-_skew(ra), 0, 1)
        G[:, rows, :, shape.parent, :3] = -np.eye(3)
        G[:, rows, :, shape.parent, 3:] = np.swapaxes(_skew(rb), 0, 1)
        G = G.reshape(R, 3 * j, 6 * k)
        MG = Minv @ np.swapaxes(G, 1, 2)
        MJ = Minv @ shape.J.T
        # M_c⁻¹ Jᵀ = M⁻¹ Jᵀ − M⁻¹ Gᵀ (G M⁻¹ Gᵀ)⁻¹ G M⁻¹ Jᵀ, without forming M_c⁻¹
        response = MJ - MG @ np.linalg.solve(_regularised(G @ MG), G @ MJ)
        W = shape.J @ response
        springs = np.repeat(alpha, 3, axis=1)
        K = _regularised(W)
        D_inv = None
        if damped:
            D = K.copy()
            np.einsum("rii->ri", D)[...] += np.where(springs >= OFF, OFF, 0.0)
            D_inv = np.linalg.inv(D)
        np.einsum("rii->ri", K)[...] += springs
        return cls(shape=shape, response=response, K_inv=np.linalg.inv(K), D_inv=D_inv,
                   alpha=alpha)

    def _apply(self, d: np.ndarray, x: np.ndarray, theta: np.ndarray) -> None:
        """Add the bodies' response to the impulses d (R, 3j) to x and theta (n + 1, 3)."""
        u = np.einsum("rab,rb->ra", self.response, d).reshape(len(d), -1, 6)
        x[self.shape.bodies] += u[..., :3]
        theta[self.shape.bodies] += u[..., 3:]

    def solve(self, s: Bodies, local_target: np.ndarray, lam: np.ndarray,
              dx: np.ndarray, dtheta: np.ndarray) -> None:
        """One XPBD update of every motor: `local_target` (R, j, 4) each child's target
        rotation in its parent's frame, `lam` (R, j, 3) the summed impulses (updated); the
        moves are added to dx, dtheta (n + 1, 3)."""
        shape = self.shape
        child, parent = shape.bodies[:, shape.child], shape.bodies[:, shape.parent]
        desired = qmul(s.q[parent].reshape(-1, 4), local_target.reshape(-1, 4))
        error = quat_log(qmul(desired, quat_conj(s.q[child].reshape(-1, 4))))
        error = error.reshape(lam.shape)
        on = self.alpha < OFF
        rhs = np.where(on[..., None], error - self.alpha[..., None] * lam, 0.0)
        d = np.einsum("rab,rb->ra", self.K_inv, rhs.reshape(len(rhs), -1))
        lam += d.reshape(lam.shape)
        self._apply(d, dx, dtheta)

    def damp(self, s: Bodies, dw: np.ndarray) -> None:
        """Remove dw (R, j, 3) from the motors' relative angular velocities (their dampers;
        zero where a motor is off)."""
        d = -np.einsum("rab,rb->ra", self.D_inv, dw.reshape(len(dw), -1))
        self._apply(d, s.v, s.w)

