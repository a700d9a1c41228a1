"""Rigid-body state and the two XPBD correction primitives of Müller et al. 2020.

State per body: centre of mass `x`, orientation `q` (w, x, y, z) and its matrix `R`, linear and
angular (world) velocities. One extra body at the end of every array is the static world (zero
inverse mass and inertia): constraints toward the world or toward an animation target use it as
their second body, so every constraint is solved by the same vectorised code.

Corrections follow the paper's section 3.3 / 3.4: a positional correction at body-local offsets
with generalised inverse masses `w = 1/m + (r × n)ᵀ I⁻¹ (r × n)`, and an angular correction with
`w = nᵀ I⁻¹ n`, both with XPBD compliance `α̃ = α / h²`. Body rotations are updated with the exact
exponential map (the paper's linearised `q += ½ [Δθ, 0] q` under-rotates large motor corrections).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import transcendental
from ..numpy_calls import dot_2d, einsum, where  # (re-exported for the ragdoll's modules)
from ..rotations import HAMILTON, bilinear, quat_product

_EPS = 1e-12


_CONJ = np.array([1.0, -1.0, -1.0, -1.0])


# ½ [v, 0] ⊗ q for a 3-vector v: the rows of HAMILTON whose first factor is a vector part.
_HALF_VQMUL = 0.5 * HAMILTON.reshape(4, 4, 4)[1:].reshape(12, 4)
_CROSS = bilinear([(1, 2, 0, 1), (2, 1, 0, -1), (2, 0, 1, 1), (0, 2, 1, -1),
                   (0, 1, 2, 1), (1, 0, 2, -1)], 3, 3)
# Rotation matrix entries (row-major) of a unit quaternion as quadratic forms q_j q_k.
_Q2M = bilinear([(0, 0, 0, 1), (1, 1, 0, 1), (2, 2, 0, -1), (3, 3, 0, -1),
                 (1, 2, 1, 2), (0, 3, 1, -2), (1, 3, 2, 2), (0, 2, 2, 2),
                 (1, 2, 3, 2), (0, 3, 3, 2), (0, 0, 4, 1), (1, 1, 4, -1), (2, 2, 4, 1),
                 (3, 3, 4, -1), (2, 3, 5, 2), (0, 1, 5, -2), (1, 3, 6, 2), (0, 2, 6, -2),
                 (2, 3, 7, 2), (0, 1, 7, 2), (0, 0, 8, 1), (1, 1, 8, -1), (2, 2, 8, -1),
                 (3, 3, 8, 1)], 4, 9)


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of (n, 3) stacks."""
    return dot_2d((a[:, :, None] * b[:, None, :]).reshape(a.shape[0], 9), _CROSS)


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return einsum("nk,nk->n", a, b)


def norm(a: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """Lengths over the last axis: np.linalg.norm(a, axis=-1)'s own arithmetic for real
    arrays (the squares summed by np.add.reduce, then sqrt: the same bits), without its seven
    Python-level calls of argument handling."""
    return np.sqrt(np.add.reduce(a * a, axis=-1, keepdims=keepdims))


def quat_conj(q: np.ndarray) -> np.ndarray:
    return q * _CONJ


def qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products a ⊗ b of (n, 4) stacks (as rotations.quat_multiply)."""
    if a.shape != b.shape:
        a, b = np.broadcast_arrays(a, b)
    if a.ndim != 2:
        return quat_product(a, b)
    # rotations.quat_product's outer product and (16, 4) matrix, through dot_2d (not @:
    # the same dgemm, less dispatch; numpy_calls)
    return dot_2d((a[:, :, None] * b[:, None, :]).reshape(a.shape[0], 16), HAMILTON)


def q2m(q: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Rotation matrices (n, 3, 3) of unit quaternions (n, 4); `out` (contiguous) is filled
    in place."""
    n = q.shape[0]
    qq = (q[:, :, None] * q[:, None, :]).reshape(n, 16)
    if out is None:
        return dot_2d(qq, _Q2M).reshape(n, 3, 3)
    if out.flags.c_contiguous:  # (its (n, 9) reshape is a view)
        dot_2d(qq, _Q2M, out=out.reshape(n, 9))
    else:
        out[...] = dot_2d(qq, _Q2M).reshape(n, 3, 3)
    return out


def cross_matrix(r: np.ndarray) -> np.ndarray:
    """(..., 3, 3) cross-product matrices: cross_matrix(r) @ v == r × v."""
    m = np.zeros(r.shape[:-1] + (3, 3))
    m[..., 0, 1], m[..., 0, 2] = -r[..., 2], r[..., 1]
    m[..., 1, 0], m[..., 1, 2] = r[..., 2], -r[..., 0]
    m[..., 2, 0], m[..., 2, 1] = -r[..., 1], r[..., 0]
    return m


def inverse3(m: np.ndarray) -> np.ndarray:
    """Inverses of (n, 3, 3) matrices: rows of the adjugate are cross products of rows."""
    n = len(m)
    a, b = m[:, [1, 2, 0]], m[:, [2, 0, 1]]
    adj = dot_2d((a[:, :, :, None] * b[:, :, None, :]).reshape(n * 3, 9),
                 _CROSS).reshape(n, 3, 3)
    det = einsum("nk,nk->n", m[:, 0], adj[:, 0])
    return adj.swapaxes(1, 2) / det[:, None, None]


def quat_exp(v: np.ndarray) -> np.ndarray:
    """Unit quaternion of the rotation vector `v` (..., 3)."""
    angle = np.sqrt(einsum("...k,...k->...", v, v))
    half = 0.5 * angle
    # sin(half)/angle -> 1/2 as angle -> 0
    scale = where(angle > 1e-9, np.sin(half) / np.maximum(angle, 1e-300), 0.5)
    return np.concatenate((np.cos(half)[..., None], v * scale[..., None]), axis=-1)


def quat_log(q: np.ndarray) -> np.ndarray:
    """Rotation vector (..., 3) of the shortest rotation represented by `q` (q ≡ -q)."""
    w = q[..., 0]
    v = q[..., 1:] * where(w < 0, -1.0, 1.0)[..., None]
    s = np.sqrt(einsum("...k,...k->...", v, v))
    angle = 2.0 * transcendental.arctan2(s, np.abs(w))
    scale = where(s > 1e-12, angle / np.maximum(s, 1e-300), 2.0)
    return v * scale[..., None]


def rotate(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R v for stacks (n, 3, 3), (n, 3)."""
    return einsum("nij,nj->ni", R, v)


def rotate_inv(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rᵀ v for stacks (n, 3, 3), (n, 3)."""
    return einsum("nji,nj->ni", R, v)


def nlerp(a: np.ndarray, b: np.ndarray, t) -> np.ndarray:
    """Normalised linear interpolation of quaternions (sign of b aligned with a)."""
    sign = where(einsum("...k,...k->...", a, b) < 0, -1.0, 1.0)[..., None]
    q = a + np.asarray(t)[..., None] * (b * sign - a) if np.ndim(t) else a + t * (b * sign - a)
    return q / norm(q, keepdims=True)


@dataclass
class Bodies:
    """State of n bodies plus the static world at index n (see the module docstring)."""

    x: np.ndarray  # (n+1, 3)
    q: np.ndarray  # (n+1, 4)
    R: np.ndarray  # (n+1, 3, 3)
    v: np.ndarray  # (n+1, 3)
    w: np.ndarray  # (n+1, 3) world angular velocity
    x_prev: np.ndarray
    q_prev: np.ndarray
    R_prev: np.ndarray
    inv_mass: np.ndarray  # (n+1,) 0 for kinematic bodies and the world
    inv_inertia: np.ndarray  # (n+1, 3) principal, body frame; 0 for kinematic and the world
    Iw_inv: np.ndarray | None = None  # (n+1, 3, 3) world inverse inertia, see freeze_inertia

    @classmethod
    def at(cls, x: np.ndarray, q: np.ndarray) -> Bodies:
        n = len(x)
        xs = np.concatenate((x, np.zeros((1, 3))))
        qs = np.concatenate((q, [[1.0, 0.0, 0.0, 0.0]]))
        qs /= np.linalg.norm(qs, axis=-1, keepdims=True)
        R = q2m(qs)
        return cls(x=xs, q=qs, R=R, v=np.zeros((n + 1, 3)), w=np.zeros((n + 1, 3)),
                   x_prev=xs.copy(), q_prev=qs.copy(), R_prev=R.copy(),
                   inv_mass=np.zeros(n + 1), inv_inertia=np.zeros((n + 1, 3)))

    def inv_inertia_times(self, idx: np.ndarray, v: np.ndarray) -> np.ndarray:
        """World inverse inertia of bodies `idx` times world vectors v (see `freeze_inertia`)."""
        return einsum("nij,nj->ni", self.Iw_inv[idx], v)

    def freeze_inertia(self) -> None:
        """World inverse inertia tensors R diag(I⁻¹) Rᵀ of every body, evaluated once per
        substep: the bodies turn little within one, and the corrections only use them to
        share a correction between two bodies (the constraint itself is re-evaluated)."""
        R = self.R
        self.Iw_inv = (R * self.inv_inertia[:, None, :]) @ R.swapaxes(1, 2)

    def rotate_bodies(self, idx: np.ndarray, dtheta: np.ndarray) -> None:
        """Rotate bodies `idx` (unique) by world rotation vectors dtheta (exponential map)."""
        q = _unit_rows(qmul(quat_exp(dtheta), self.q[idx]))
        self.q[idx] = q
        self.R[idx] = q2m(q)

    def turn(self, idx: np.ndarray, dtheta: np.ndarray) -> None:
        """`move` with rotations only, for the bodies `idx` (unique) alone: the same linearised
        update, without touching (and paying for) every other body."""
        q = _turned(self.q[idx], dtheta)
        self.q[idx] = q
        self.R[idx] = q2m(q)

    def move(self, dx: np.ndarray, dtheta: np.ndarray) -> None:
        """Translate and rotate every body by world rotation vectors (`_turned`)."""
        self.x += dx
        q = _turned(self.q, dtheta)
        self.q = q
        q2m(q, out=self.R)


def _turned(q: np.ndarray, dtheta: np.ndarray) -> np.ndarray:
    """q += ½ [Δθ, 0] ⊗ q, then normalised (Müller 2020 eq. 8–9); [Δθ, 0] ⊗ q as one outer
    product and a (12, 4) matmul (_HALF_VQMUL)."""
    q = q + dot_2d((dtheta[:, :, None] * q[:, None, :]).reshape(q.shape[0], 12), _HALF_VQMUL)
    return _unit_rows(q)


def _unit_rows(q: np.ndarray) -> np.ndarray:
    """The rows of q divided by their lengths, in place (the quaternions' normalisation of
    every body update: the same operations, so the same bits, wherever it is done)."""
    q /= np.sqrt(dot(q, q))[:, None]
    return q


@dataclass(frozen=True)
class Pairs:
    """A batch of constraints between bodies `a` (unique within the batch) and `b` (may repeat:
    a parent with several children, or the world). Corrections on `b` are summed through the
    dense scatter matrix `scatter` (unique b × batch); a body may also be the a of one
    constraint and the b of others (all joints of a tree in one batch). Each constraint sees a's
    and b's inverse masses multiplied by how many constraints of the batch use that body
    (`split_a`, `split`), which is mass splitting (Tonge et al. 2012): the summed correction
    then equals the average of the split copies'."""

    a: np.ndarray
    b: np.ndarray
    b_unique: np.ndarray
    scatter: np.ndarray  # (len(b_unique), len(a))
    split: np.ndarray  # (len(a),) constraints of the batch using b
    split_a: np.ndarray  # (len(a),) constraints of the batch using a

    @classmethod
    def create(cls, a: np.ndarray, b: np.ndarray) -> Pairs:
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        b_unique, inverse, counts = np.unique(b, return_inverse=True, return_counts=True)
        scatter = np.zeros((len(b_unique), len(a)))
        scatter[inverse, np.arange(len(a))] = 1.0
        uses = np.zeros(max(int(a.max(initial=-1)), int(b.max(initial=-1))) + 1)
        np.add.at(uses, a, 1.0)
        np.add.at(uses, b, 1.0)
        return cls(a=a, b=b, b_unique=b_unique, scatter=scatter,
                   split=uses[b], split_a=uses[a])


@dataclass(frozen=True)
class FrozenPairs:
    """What the corrections of a `Pairs` batch read from the bodies and that does not change
    within a substep's iterations (inverse masses are set per frame, world inverse inertias
    frozen per substep, `Bodies.freeze_inertia`): gathered once per substep instead of at
    every iteration (NumPy's per-call overhead dominates at ~20 bodies)."""

    Ia: np.ndarray  # (n, 3, 3) world inverse inertia of a
    Ib: np.ndarray  # (n, 3, 3) of b
    inv_mass_a: np.ndarray  # (n,)
    inv_mass_b: np.ndarray  # (n,)

    @classmethod
    def of(cls, s: Bodies, p: Pairs) -> FrozenPairs:
        return cls(Ia=s.Iw_inv[p.a], Ib=s.Iw_inv[p.b], inv_mass_a=s.inv_mass[p.a],
                   inv_mass_b=s.inv_mass[p.b])


def positional(s: Bodies, p: Pairs, ra: np.ndarray, rb: np.ndarray, delta: np.ndarray,
               alpha_tilde: float | np.ndarray = 0.0, active: np.ndarray | None = None,
               frozen: FrozenPairs | None = None, lam_total: np.ndarray | None = None,
               lam_max: np.ndarray | None = None) -> np.ndarray:
    """Drive the world vector `delta` = (anchor on a) - (anchor on b) to zero (Müller 2020 §3.3).

    ra, rb: world offsets of the anchors from the centres of a and b. Hard when alpha_tilde = 0.
    `frozen`: the pairs' inverse masses and inertias of this substep, if already gathered.
    `lam_total` (n, 3) and `lam_max` (n,): the positional impulse vectors summed over the
    substep's iterations and their bound (a maximum force F as F h²): the correction is cut so
    the sum never exceeds it (a force-limited constraint; see joints.solve_ball's root lock).
    Returns the magnitude of the positional impulse |λ| (kg m) per constraint.
    """
    fz = FrozenPairs.of(s, p) if frozen is None else frozen
    c = np.sqrt(einsum("nk,nk->n", delta, delta))
    n = delta / np.maximum(c, _EPS)[:, None]
    ca, cb = cross(ra, n), cross(rb, n)
    ia = einsum("nij,nj->ni", fz.Ia, ca)
    ib = einsum("nij,nj->ni", fz.Ib, cb)
    wa = (fz.inv_mass_a + einsum("nk,nk->n", ca, ia)) * p.split_a
    wb = (fz.inv_mass_b + einsum("nk,nk->n", cb, ib)) * p.split
    denom = wa + wb + alpha_tilde
    lam = where(denom > _EPS, -c / np.maximum(denom, _EPS), 0.0)
    if active is not None:
        lam = where(active, lam, 0.0)
    if lam_total is not None:
        return _positional_bounded(s, p, ra, rb, lam[:, None] * n, lam_total, lam_max, fz)
    # impulse on a is lam * n; b receives the opposite one
    dx = np.zeros(s.x.shape)
    dth = np.zeros(s.x.shape)
    dx[p.a] = (lam * fz.inv_mass_a)[:, None] * n
    dx[p.b_unique] -= dot_2d(p.scatter, (lam * fz.inv_mass_b)[:, None] * n)
    dth[p.a] = lam[:, None] * ia
    dth[p.b_unique] -= dot_2d(p.scatter, lam[:, None] * ib)
    s.move(dx, dth)
    return -lam


def _positional_bounded(s: Bodies, p: Pairs, ra: np.ndarray, rb: np.ndarray, P: np.ndarray,
                        lam_total: np.ndarray, lam_max: np.ndarray, fz: FrozenPairs
                        ) -> np.ndarray:
    """Apply the positional impulses P (n, 3) with their running sum clamped to |lam_max|."""
    P = bounded_step(lam_total, P, lam_max)
    lam_total += P
    dx = np.zeros(s.x.shape)
    dth = np.zeros(s.x.shape)
    dx[p.a] = fz.inv_mass_a[:, None] * P
    dx[p.b_unique] -= dot_2d(p.scatter, fz.inv_mass_b[:, None] * P)
    dth[p.a] = einsum("nij,nj->ni", fz.Ia, cross(ra, P))
    dth[p.b_unique] -= dot_2d(p.scatter, einsum("nij,nj->ni", fz.Ib, cross(rb, P)))
    s.move(dx, dth)
    return np.sqrt(einsum("nk,nk->n", P, P))


def bounded_step(lam: np.ndarray, P: np.ndarray, lam_max: np.ndarray) -> np.ndarray:
    """The part of the impulses P (n, 3) that keeps each running sum |lam + P| within lam_max
    (n,): a force- or torque-limited constraint's impulse this iteration."""
    total = lam + P
    size = np.sqrt(einsum("nk,nk->n", total, total))
    total *= np.minimum(1.0, lam_max / np.maximum(size, _EPS))[:, None]
    return total - lam


def block_impulse(Ia: np.ndarray, Ib: np.ndarray, share_a: np.ndarray, share_b: np.ndarray,
                  rhs: np.ndarray, alpha_tilde=0.0) -> np.ndarray:
    """Solve (share_a I_a⁻¹ + share_b I_b⁻¹ + α̃) P = rhs for the angular impulses P (n, 3):
    one 3-DOF orientation block, each side's inverse inertia scaled by how many constraints
    of the batch share the body (mass splitting, Tonge et al. 2012)."""
    return einsum("nij,nj->ni", block_inverse(Ia, Ib, share_a, share_b, alpha_tilde), rhs)


def block_inverse(Ia: np.ndarray, Ib: np.ndarray, share_a: np.ndarray, share_b: np.ndarray,
                  alpha_tilde=0.0) -> np.ndarray:
    """(share_a I_a⁻¹ + share_b I_b⁻¹ + α̃)⁻¹ (n, 3, 3), `block_impulse`'s matrix: with the
    inertias frozen for the substep, the same for all its iterations."""
    K = Ia * share_a[:, None, None] + Ib * share_b[:, None, None]
    diag = np.asarray(alpha_tilde, dtype=np.float64) + 1e-12
    K[:, 0, 0] += diag
    K[:, 1, 1] += diag
    K[:, 2, 2] += diag
    return inverse3(K)


def world_inv_inertia(s: Bodies, idx: np.ndarray) -> np.ndarray:
    """World inverse inertia tensors (n, 3, 3) of bodies idx (frozen for the substep)."""
    return s.Iw_inv[idx]


def _relative_solve(s: Bodies, p: Pairs, rhs: np.ndarray, alpha_tilde) -> tuple:
    """Solve (I_a⁻¹ + k I_b⁻¹ + α̃) P = rhs for the angular impulses P (n, 3).

    The 3-DOF block of an orientation constraint: the relative rotation (or angular velocity)
    of a w.r.t. b changes by exactly rhs - α̃ P. Müller 2020 solve each angular constraint as a
    scalar along its axis, which converges slowly for thin capsules (an impulse across a capsule
    mostly spins it about its own axis); the 3x3 solve removes that coupling per constraint.
    """
    Ia, Ib = world_inv_inertia(s, p.a), world_inv_inertia(s, p.b)
    return block_impulse(Ia, Ib, p.split_a, p.split, rhs, alpha_tilde), Ia, Ib


def angular(s: Bodies, p: Pairs, dtheta: np.ndarray, *, alpha_tilde: np.ndarray | None = None,
            lam_total: np.ndarray | None = None, active: np.ndarray | None = None,
            lam_max: np.ndarray | None = None,
            frozen: tuple[FrozenPairs, np.ndarray] | None = None) -> None:
    """Rotate a relative to b by the world rotation vector `dtheta` (Müller 2020 §3.3.2, solved
    as a 3-DOF block, see `_relative_solve`).

    Hard without `alpha_tilde`. With it (α / h² per constraint) the constraint is an XPBD spring
    and `lam_total` (n, 3) (reset every substep) carries the multiplier between iterations:
    ΔP = (K + α̃)⁻¹ (θ - α̃ λ); `lam_max` (n,) bounds |λ| (a torque-limited spring).
    `frozen`: (the pairs' `FrozenPairs`, their hard `block_inverse`) of this substep, if
    known (hard constraints only).
    """
    if frozen is not None and alpha_tilde is None:
        fz, K_inv = frozen
        P, Ia, Ib = einsum("nij,nj->ni", K_inv, dtheta), fz.Ia, fz.Ib
    elif alpha_tilde is None:
        P, Ia, Ib = _relative_solve(s, p, dtheta, 0.0)
    else:
        rhs = dtheta - alpha_tilde[:, None] * lam_total
        P, Ia, Ib = _relative_solve(s, p, rhs, alpha_tilde)
    if active is not None:
        P = where(active[:, None], P, 0.0)
    if lam_max is not None:
        P = bounded_step(lam_total, P, lam_max)
    if lam_total is not None:
        lam_total += P
    dth = np.zeros(s.x.shape)
    dth[p.a] = einsum("nij,nj->ni", Ia, P)
    dth[p.b_unique] -= dot_2d(p.scatter, einsum("nij,nj->ni", Ib, P))
    s.move(0.0, dth)


def angular_velocity_impulse(s: Bodies, p: Pairs, dw: np.ndarray) -> None:
    """Change the relative angular velocity w_a - w_b by -dw (Müller 2020 §3.6 joint damping,
    as a 3-DOF block)."""
    P, Ia, Ib = _relative_solve(s, p, dw, 0.0)
    s.w[p.a] -= einsum("nij,nj->ni", Ia, P)
    s.w[p.b_unique] += dot_2d(p.scatter, einsum("nij,nj->ni", Ib, P))
