"""Orientation motors toward the animation's local rotation (XPBD angular spring).

The target of a child body is its parent's current (simulated) orientation times the
animation's local rotation, as in UE's Physical Animation local mode (the target follows the
simulated parent). The constraint is Müller 2020's angular correction toward that orientation
with an XPBD compliance normalised by the inertia the joint carries (the whole subtree below it
about the joint, `RagdollModel.joint_inertia`): like seed 004's eACCELERATION drives the setting
does not depend on the bodies' masses, and unlike a per-body normalisation a shoulder carrying
the whole arm is as stiff, in frequency, as a wrist.

Strength s in [0, 1] maps to the spring's natural frequency f = MOTOR_FREQUENCY · s / (1 - s)
(2 Hz at s = 0.5, 8 Hz at 0.8, 18 Hz at 0.9, rigid at 1; a head on a neck is an inverted
pendulum that needs about 1.3 Hz to stand, so half strength keeps a posture) with the XPBD
compliance α = 1 / (ω² I_joint); XPBD (Macklin et al. 2016) makes that stiffness independent of
the substep and iteration count. The damper (joints.damp_joints) uses the ratio
ζ = motor_damping: μ = 2 ζ ω per second, applied as the exact fraction 1 - exp(-μ h) per
substep.
"""

from __future__ import annotations

import numpy as np

from .bodies import (
    Bodies,
    angular,
    bounded_step,
    cross,
    dot_2d,
    einsum,
    inverse3,
    q2m,
    qmul,
    quat_conj,
    quat_log,
    where,
    world_inv_inertia,
)
from .joints import JointColour, subtree_recoil

MOTOR_FREQUENCY = 2.0  # Hz at strength 0.5


def motor_omega(strength: np.ndarray) -> np.ndarray:
    """Natural angular frequency (rad/s) of the motor spring; inf at strength 1, 0 at 0."""
    s = np.clip(strength, 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return where(s >= 1.0, np.inf, 2.0 * np.pi * MOTOR_FREQUENCY * s / np.maximum(1.0 - s,
                                                                                     1e-300))


def motor_alpha_tilde(strength: np.ndarray, joint_inertia: np.ndarray, h: float) -> np.ndarray:
    """XPBD α̃ = 1 / (ω² I h²): 0 at strength 1 (hard), huge at 0 (callers mask those out)."""
    omega = motor_omega(strength)
    with np.errstate(divide="ignore", over="ignore"):
        stiffness = omega * omega * joint_inertia * h * h
        # A motor of strength 0 is switched off by the solver; cap α̃ so it stays finite.
        return where(np.isinf(omega), 0.0, 1.0 / np.maximum(stiffness, 1e-12))


def solve_motor(s: Bodies, col: JointColour, local_target: np.ndarray, alpha_tilde: np.ndarray,
                lam: np.ndarray, active: np.ndarray, lam_max: np.ndarray | None = None) -> None:
    """Pull each child toward parent ⊗ local_target (for roots: the world target), each
    motor's summed impulse bounded by `lam_max` (its torque limit, τ h²)."""
    p = col.pairs
    desired = qmul(s.q[p.b], local_target)
    dtheta = quat_log(qmul(desired, quat_conj(s.q[p.a])))
    angular(s, p, dtheta, alpha_tilde=alpha_tilde, lam_total=lam, active=active,
            lam_max=lam_max)


def project_rigid(s: Bodies, idx: np.ndarray, parent: np.ndarray, anchor: np.ndarray,
                  anchor_a: np.ndarray, local_target: np.ndarray) -> None:
    """Place full-strength (rigid) motor bodies idx (one depth level) exactly on parent ⊗ local
    target, head on the parent's joint anchor. Run top down after the iterations (a shock
    propagation pass: the iterations already exchanged momentum with the parent; this removes
    their residual error so strength 1 reproduces the animation's local rotation exactly,
    whatever the iteration count)."""
    q = qmul(s.q[parent], local_target)
    q /= np.sqrt(einsum("nk,nk->n", q, q))[:, None]
    R = q2m(q)
    head = s.x[parent] + einsum("nij,nj->ni", s.R[parent], anchor)
    s.q[idx] = q
    s.R[idx] = R
    s.x[idx] = head - einsum("nij,nj->ni", R, anchor_a)


def motor_subtree_inverse(Ib: np.ndarray, split: np.ndarray, alpha_tilde: np.ndarray,
                          joint_inertia: np.ndarray) -> np.ndarray:
    """(1 / I_joint + α̃ + k I_parent⁻¹)⁻¹ (n, 3, 3), the motor's 3-DOF block of
    `solve_motor_subtree`: constant within a substep (inertias frozen), so inverted once."""
    K = Ib * split[:, None, None]
    diag = 1.0 / joint_inertia + alpha_tilde + 1e-12
    K[:, 0, 0] += diag
    K[:, 1, 1] += diag
    K[:, 2, 2] += diag
    return inverse3(K)


def solve_motor_subtree(s: Bodies, col: JointColour, local_target: np.ndarray,
                        alpha_tilde: np.ndarray, lam: np.ndarray, active: np.ndarray,
                        carry: np.ndarray, joint_inertia: np.ndarray, anchor_a: np.ndarray,
                        K_inv: np.ndarray | None = None, Ib: np.ndarray | None = None,
                        recoil: np.ndarray | None = None,
                        lam_max: np.ndarray | None = None,
                        masses: tuple[np.ndarray, np.ndarray] | None = None,
                        inv_mass_b: np.ndarray | None = None) -> None:
    """Motor correction applied to the child's whole subtree, rotated rigidly about the joint.

    A two-body angular correction turns the child about its own centre with its own (small)
    inertia, and the bodies hanging from it (a chest's arms and head) only follow through their
    ball joints, one colour and one iteration later: the Gauss-Seidel sweep then converges very
    slowly (a thin chest ended 30° off its motor target after 4 iterations). Here the child side
    of the constraint is the subtree with its inertia about the joint (`joint_inertia`, the
    same the compliance is normalised by), so one correction moves what the joint carries and
    keeps the joints below it together; the parent takes the reaction with its own inertia,
    the couple and the joint's push (`joints.subtree_recoil`), so the correction conserves
    momentum.

    carry: (n, n_c) 1 where body k is in the subtree of the colour's joint j and may move.
    K_inv, Ib: `motor_subtree_inverse` and the parents' world inverse inertias of this
    substep, if already computed. `lam_max` (n_c,): the bound of each motor's summed impulse
    in the substep, its maximum torque τ h² (`level.MOTOR_MAX_ACCELERATION`): an obstacle
    the animation drives a limb into wins against it. (A locked root is not a subtree motor:
    `solve_root_lock`.) `masses`, `inv_mass_b`: `joints.subtree_recoil`'s per-substep
    constants, if already computed.
    """
    p = col.pairs
    desired = qmul(s.q[p.b], local_target)
    dtheta = quat_log(qmul(desired, quat_conj(s.q[p.a])))
    if Ib is None:
        Ib = s.Iw_inv[p.b]
    inv_joint = 1.0 / joint_inertia
    if K_inv is None:
        K_inv = motor_subtree_inverse(Ib, p.split, alpha_tilde, joint_inertia)
    P = einsum("nij,nj->ni", K_inv, dtheta - alpha_tilde[:, None] * lam)
    P = where(active[:, None], P, 0.0)
    if lam_max is not None:
        P = bounded_step(lam, P, lam_max)
    lam += P
    spin = P * inv_joint[:, None]  # rotation of each child's subtree about its joint
    pivot = s.x[p.a] + einsum("nij,nj->ni", s.R[p.a], anchor_a)
    n = carry.shape[0]
    rot = dot_2d(carry, spin)
    dx = np.zeros(s.x.shape)
    dth = np.zeros(s.x.shape)
    dx[:n] = cross(rot, s.x[:n]) - dot_2d(carry, cross(spin, pivot))
    dth[:n] = rot
    recoil_x, recoil_th = subtree_recoil(s, p, carry, spin, pivot, Ib, recoil, masses,
                                         inv_mass_b)
    dx[p.b_unique] += recoil_x
    dth[p.b_unique] += recoil_th - dot_2d(p.scatter, einsum("nij,nj->ni", Ib, P))
    s.move(dx, dth)


def solve_root_lock(s: Bodies, roots: np.ndarray, target: np.ndarray, lam: np.ndarray,
                    active: np.ndarray, lam_max: np.ndarray, Ia: np.ndarray | None = None,
                    inertia: np.ndarray | None = None) -> None:
    """The root lock's orientation: each locked root alone turned toward its target (a hard
    angular constraint to the static world, Müller 2020 §3.3.2, with the root's own inertia),
    the running sum of its angular impulses bounded by `lam_max` (the lock's maximum torque τ
    as τ h²). The bodies hanging from the root follow through their own joints.

    `roots`: the root bodies' indices; `target` (n, 4) world orientations; `lam` (n, 3) the
    substep's summed impulses; `active` (n,) the roots locked this frame. `Ia`, `inertia`: the
    roots' world inverse inertias and their inverses, if already computed for the substep (they
    do not change within its iterations).

    A motor turns its child's whole subtree (`solve_motor_subtree`); the lock did too, and then
    every correction of the hips, turned by the weight of a falling torso or a swinging leg,
    rotated every limb rigidly back about the hips: each iteration pushed the limbs against
    their own motion. A limp body hanging from a still locked root gained 785 J in 1.6 s (the
    fall sample's legs whirled at 20 m/s and the body was thrown off the wall at 5 m/s)."""
    dtheta = quat_log(qmul(target, quat_conj(s.q[roots])))
    if Ia is None:
        Ia = world_inv_inertia(s, roots)
    if inertia is None:
        inertia = inverse3(Ia)
    P = einsum("nij,nj->ni", inertia, dtheta)
    P = bounded_step(lam, where(active[:, None], P, 0.0), lam_max)
    lam += P
    s.turn(roots, einsum("nij,nj->ni", Ia, P))
