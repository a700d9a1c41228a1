"""Motors solved through the ball-jointed tree (articulated response), every motor at once.

A motor pulls a child toward its parent ⊗ the animation's local rotation. Solved as a two-body
constraint it turns the child alone, and what hangs from the child follows only through its
ball joints an iteration later: a thin chest carrying its arms converged very slowly (30° off an
8 Hz target after 4 iterations). Turning the child's whole subtree rigidly about the joint
instead (the default, ``motors.solve_motor_subtree``) converges, but it holds the joints
inside the subtree rigid while they are springs: the correction is not a projection in the
bodies' mass metric, and it makes energy (a free chain of three in zero gravity with undamped
motors gains 25 % of its energy at 960 Hz; a humanoid standing on strength-0.9 motors gains
kilojoules and flails at 20 m/s).

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

Experimental (``level.ARTICULATED_MOTORS``, with the ball joints solved the same way by
``TreeJoints``: ``level.ARTICULATED_JOINTS``; both off). Measured against the default (subtree
motors, Jacobi joints), same scenes: a free chain of three in zero gravity with undamped motors
gains 0.07 J of 69 at 960 Hz (subtree: 20 J); a chain pressing its end into the ground 0 J of
126 (11 J), four bodies 0.14 J of 447 (66 J); the fall sample's mannequin standing on
strength-0.9 motors without a lock 1 J over its 588 J (11.7 kJ, flailing at 20 m/s). With the
motors alone (Jacobi joints) a 5 g shake sampled at 24 and 30 fps (targets within 5e-7 m of
each other) parted by 3 mm, the Jacobi joints' flip-flop (``TreeJoints``) amplifying the
difference; with both it ends within 4e-7 m (default: 2e-6 m). What keeps them off: a limp
humanoid crumpling over a box gains 3 J of 686 at 16 iterations, and a substep costs about
16 % more (docs/ragdoll-solver.md, "Experimental: the articulated solve").

The matrices are evaluated once per substep (inertias are frozen for the substep too,
``Bodies.freeze_inertia``) and batched over the ragdolls of one shape (same bodies and tree):
a crowd of one character is one stack of small dense systems.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bodies import Bodies, bounded_step, cross_matrix, einsum, qmul, quat_conj, quat_log, where

OFF = 1e12  # XPBD α̃ of a motor that is off: it takes no impulse
_EPS = 1e-10  # relative regularisation of the joints' and motors' blocks


def _regularised(A: np.ndarray) -> np.ndarray:
    """A + ε (1 + max diag) I per stacked matrix: joints between two bodies that cannot move
    (kinematic on both sides) give zero rows."""
    out = A.copy()
    d = einsum("rii->ri", out)
    d += _EPS * (1.0 + np.abs(d).max(axis=1, keepdims=True))
    return out


def inverse_mass_blocks(s: Bodies, shape: TreeShape, pinned: np.ndarray) -> np.ndarray:
    """(R, k, 6, 6) the diagonal blocks of M⁻¹ for each ragdoll's bodies (inverse mass, world
    inverse inertia frozen for the substep); `pinned` (R, k) bodies take nothing (zero)."""
    bodies = shape.bodies
    blocks = np.zeros(bodies.shape + (6, 6))
    inv_mass = where(pinned, 0.0, s.inv_mass[bodies])
    blocks[..., 0, 0] = blocks[..., 1, 1] = blocks[..., 2, 2] = inv_mass
    blocks[..., 3:, 3:] = where(pinned[..., None, None], 0.0, s.Iw_inv[bodies])
    return blocks


def _times(blocks: np.ndarray, X: np.ndarray) -> np.ndarray:
    """M⁻¹ X for X (R, 6k, m) (or (6k, m)) and M⁻¹'s blocks (R, k, 6, 6): one 6 × 6 product per
    body instead of the dense (6k)² matrix (a third of the time at 17 bodies)."""
    R, k = blocks.shape[:2]
    return (blocks @ X.reshape(-1, k, 6, X.shape[-1])).reshape(R, 6 * k, X.shape[-1])


def joint_jacobian(s: Bodies, shape: TreeShape, anchor_a: np.ndarray, anchor_b: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(G (R, 3j, 6k), C (R, j, 3)): the ball joints' Jacobian (the velocity of the child's
    anchor minus the parent's) and their gaps (child's anchor − parent's) at the bodies' current
    pose; anchors (R, j, 3) in the child's and parent's body frames from their centres."""
    bodies = shape.bodies
    R, k = bodies.shape
    j = len(shape.child)
    child, parent = bodies[:, shape.child], bodies[:, shape.parent]
    ra = einsum("rjik,rjk->rji", s.R[child], anchor_a)
    rb = einsum("rjik,rjk->rji", s.R[parent], anchor_b)
    G = np.zeros((R, j, 3, k, 6))
    rows = np.arange(j)
    G[:, rows, :, shape.child, :3] = np.eye(3)
    G[:, rows, :, shape.child, 3:] = np.swapaxes(-cross_matrix(ra), 0, 1)
    G[:, rows, :, shape.parent, :3] = -np.eye(3)
    G[:, rows, :, shape.parent, 3:] = np.swapaxes(cross_matrix(rb), 0, 1)
    gap = (s.x[child] + ra) - (s.x[parent] + rb)
    return G.reshape(R, 3 * j, 6 * k), gap


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
            local = where(parent[bodies] >= n, -1, parent[bodies] - bodies[0])
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
class TreeFactor:
    """One substep's ball-joint system of one ``TreeShape``: M⁻¹'s blocks, the joints'
    Jacobian G, M⁻¹ Gᵀ and (G M⁻¹ Gᵀ)⁻¹, shared by the joints (``TreeJoints``) and the
    articulated response of the motors and limits (``TreeResponse``) when they pin the same
    bodies."""

    shape: TreeShape
    blocks: np.ndarray  # (R, k, 6, 6)
    G: np.ndarray  # (R, 3j, 6k)
    MG: np.ndarray  # (R, 6k, 3j) M⁻¹ Gᵀ
    A_inv: np.ndarray  # (R, 3j, 3j) (G M⁻¹ Gᵀ)⁻¹
    pinned: np.ndarray  # (R, k)

    @classmethod
    def of(cls, s: Bodies, shape: TreeShape, *, anchor_a: np.ndarray, anchor_b: np.ndarray,
           pinned: np.ndarray) -> TreeFactor:
        """`anchor_a`, `anchor_b` (R, j, 3): each joint's anchor in its child's and parent's
        body frame from their centres; `pinned` (R, k) the bodies that do not move."""
        blocks = inverse_mass_blocks(s, shape, pinned)
        G, _ = joint_jacobian(s, shape, anchor_a, anchor_b)
        MG = _times(blocks, np.swapaxes(G, 1, 2))
        return cls(shape=shape, blocks=blocks, G=G, MG=MG,
                   A_inv=np.linalg.inv(_regularised(G @ MG)), pinned=pinned)


@dataclass(frozen=True)
class TreeResponse:
    """One substep's articulated response of one ``TreeShape``: M_c⁻¹ Jᵀ (how the bodies move
    for impulses on the joints' relative rotations, ball joints held) and W = J M_c⁻¹ Jᵀ, for
    the motors (``ArticulatedMotors``)."""

    shape: TreeShape
    response: np.ndarray  # (R, 6k, 3j) M_c⁻¹ Jᵀ
    W: np.ndarray  # (R, 3j, 3j) J M_c⁻¹ Jᵀ

    @classmethod
    def of(cls, factor: TreeFactor) -> TreeResponse:
        shape = factor.shape
        MJ = _times(factor.blocks, shape.J.T)
        # M_c⁻¹ Jᵀ = M⁻¹ Jᵀ − M⁻¹ Gᵀ (G M⁻¹ Gᵀ)⁻¹ G M⁻¹ Jᵀ, without forming M_c⁻¹
        response = MJ - factor.MG @ (factor.A_inv @ (factor.G @ MJ))
        return cls(shape=shape, response=response, W=shape.J @ response)

    def apply(self, d: np.ndarray, x: np.ndarray, theta: np.ndarray) -> None:
        """Add the bodies' response to the impulses d (R, 3j) to x and theta (n + 1, 3)."""
        u = einsum("rab,rb->ra", self.response, d).reshape(len(d), -1, 6)
        x[self.shape.bodies] += u[..., :3]
        theta[self.shape.bodies] += u[..., 3:]


@dataclass(frozen=True)
class ArticulatedMotors:
    """One substep's motor solve for one ``TreeShape``."""

    tree: TreeResponse
    K_inv: np.ndarray  # (R, 3j, 3j) (J M_c⁻¹ Jᵀ + α̃)⁻¹
    D_inv: np.ndarray | None  # (R, 3j, 3j) the same without the springs' compliance
    alpha: np.ndarray  # (R, j) α̃, OFF where the motor is off

    @property
    def shape(self) -> TreeShape:
        return self.tree.shape

    @classmethod
    def of(cls, tree: TreeResponse, *, alpha: np.ndarray, damped: bool = True
           ) -> ArticulatedMotors:
        """`alpha` (R, j) each motor's α̃ (OFF: off); `damped`: some motor has a damper (else
        ``damp`` is not available)."""
        springs = np.repeat(alpha, 3, axis=1)
        K = _regularised(tree.W)
        D_inv = None
        if damped:
            D = K.copy()
            einsum("rii->ri", D)[...] += where(springs >= OFF, OFF, 0.0)
            D_inv = np.linalg.inv(D)
        einsum("rii->ri", K)[...] += springs
        return cls(tree=tree, K_inv=np.linalg.inv(K), D_inv=D_inv, alpha=alpha)

    def solve(self, s: Bodies, local_target: np.ndarray, lam: np.ndarray,
              dx: np.ndarray, dtheta: np.ndarray, *, lam_max: np.ndarray | None = None
              ) -> None:
        """One XPBD update of every motor: `local_target` (R, j, 4) each child's target
        rotation in its parent's frame, `lam` (R, j, 3) the summed impulses (updated); the
        moves are added to dx, dtheta (n + 1, 3). `lam_max` (R, j): each motor's torque limit
        as a bound on its summed impulse (τ h²); the clamped part is simply not applied."""
        shape = self.shape
        child, parent = shape.bodies[:, shape.child], shape.bodies[:, shape.parent]
        desired = qmul(s.q[parent].reshape(-1, 4), local_target.reshape(-1, 4))
        error = quat_log(qmul(desired, quat_conj(s.q[child].reshape(-1, 4))))
        error = error.reshape(lam.shape)
        on = self.alpha < OFF
        rhs = where(on[..., None], error - self.alpha[..., None] * lam, 0.0)
        d = einsum("rab,rb->ra", self.K_inv, rhs.reshape(len(rhs), -1))
        if lam_max is not None:
            d = bounded_step(lam.reshape(-1, 3), d.reshape(-1, 3), lam_max.reshape(-1)
                             ).reshape(len(rhs), -1)
        lam += d.reshape(lam.shape)
        self.tree.apply(d, dx, dtheta)

    def damp(self, s: Bodies, dw: np.ndarray) -> None:
        """Remove dw (R, j, 3) from the motors' relative angular velocities (their dampers;
        zero where a motor is off)."""
        d = -einsum("rab,rb->ra", self.D_inv, dw.reshape(len(dw), -1))
        self.tree.apply(d, s.v, s.w)


@dataclass(frozen=True)
class TreeJoints:
    """Every ball joint of the ragdolls of one ``TreeShape`` solved at once: a Newton step of
    the joints' gaps C in the bodies' mass metric, Δ(x, θ) = −M⁻¹ Gᵀ (G M⁻¹ Gᵀ)⁻¹ C (the
    Lagrange multipliers of a tree, Baraff 1996, dense per ragdoll). G and the factor are
    evaluated once per substep (the bodies turn by ω h, a few degrees, within one), the gaps at
    every iteration: each step removes all but the second-order part of the gaps.

    It replaces a Jacobi pass over the joints (mass splitting), which converged so slowly on a
    limp body shaken at 5 g that 40 passes left 2 mm of its 3.5 mm gaps, and whose iterates
    alternated from pass to pass: the velocities taken from them flip-flopped from substep to
    substep, and a 1e-11 m difference of the input grew to 0.2 mm within 10 ms."""

    shape: TreeShape
    response: np.ndarray  # (R, 6k, 3j) M⁻¹ Gᵀ
    A_inv: np.ndarray  # (R, 3j, 3j) (G M⁻¹ Gᵀ)⁻¹
    anchor_a: np.ndarray  # (R, j, 3) in the child's body frame
    anchor_b: np.ndarray  # (R, j, 3) in the parent's body frame

    @classmethod
    def of(cls, factor: TreeFactor, *, anchor_a: np.ndarray, anchor_b: np.ndarray
           ) -> TreeJoints:
        return cls(shape=factor.shape, response=factor.MG, A_inv=factor.A_inv,
                   anchor_a=anchor_a, anchor_b=anchor_b)

    def solve(self, s: Bodies, dx: np.ndarray, dtheta: np.ndarray) -> None:
        """One step of every joint; the moves are added to dx, dtheta (n + 1, 3)."""
        bodies = self.shape.bodies
        child, parent = bodies[:, self.shape.child], bodies[:, self.shape.parent]
        gap = ((s.x[child] + einsum("rjik,rjk->rji", s.R[child], self.anchor_a))
               - (s.x[parent] + einsum("rjik,rjk->rji", s.R[parent], self.anchor_b)))
        lam = einsum("rab,rb->ra", self.A_inv, gap.reshape(len(gap), -1))
        u = -einsum("rab,rb->ra", self.response, lam).reshape(len(gap), -1, 6)
        dx[bodies] += u[..., :3]
        dtheta[bodies] += u[..., 3:]
