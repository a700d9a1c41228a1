"""Momentum of a ragdoll alone in the air, kept exactly (projection onto the invariants).

A ragdoll that touches nothing (no collider or other ragdoll near it, no root lock, no
kinematic body, no velocity drive, distance limit or air drag) feels only internal forces and
uniform gravity, so its linear momentum grows by M g h per substep and its angular momentum about
its centre of mass does not change at all. The substep's parts do not keep that exactly: the
final projections move positions without velocities, the gyroscopic term is explicit (and the
subtree motors, which used to turn a limb about its joint with a net force, still do it exactly
only to first order in the turn). Measured on a humanoid
tumbling in zero gravity over 5 s, the angular momentum drifted by 10 % limp and by 99 % with
its motors on; a character thrown off a ledge turned in the air on its own.

After such a substep the velocities are projected back onto the invariant manifold (the standard
projection method of Hairer, Lubich & Wanner, Geometric Numerical Integration, IV.4): the
smallest change in the kinetic-energy metric that restores the momenta is a rigid motion of the
whole ragdoll, a common velocity plus a rotation Δω = I_sys⁻¹ (L₀ − L) about the centre of
mass with the system's inertia tensor I_sys. The centre of mass is put back on its ballistic
path, c₀ + h P/M, by a common translation (joints, limits and self-contacts are unaffected by
it).

A passive ragdoll (no motor, nothing external driving it) that touches only colliders that do
not move cannot gain energy either: static contacts do no work and friction, damping and the
inelastic parts only take energy away. The substep can still add some: when the iterations leave
a conflict between joints, limits and contacts unresolved, the final projections separate a
joint that the next substep's solve pulls together, and that closing speed is energy from
nowhere (a limp Rigify human curled over a box was thrown up 1 m). `cap_energy` projects the
velocities of such a ragdoll back onto its energy budget (kinetic plus gravitational at the
substep's start), the closest velocities in the mass metric with that energy: all of them scaled
by one factor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bodies import Bodies, cross, einsum, inverse3, q2m, rotate, rotate_inv, where


@dataclass(frozen=True)
class Momenta:
    """Per ragdoll of a level: mass (R,), centre of mass (R, 3), linear momentum (R, 3) and
    angular momentum about the centre of mass (R, 3)."""

    mass: np.ndarray
    centre: np.ndarray
    linear: np.ndarray
    angular: np.ndarray
    internal: np.ndarray  # (R,) kinetic energy of the motion relative to the centre of mass


def momenta(s: Bodies, member: np.ndarray, mass: np.ndarray, inertia: np.ndarray) -> Momenta:
    """The momenta of each ragdoll; member (R, n) is 1 where body k belongs to ragdoll r."""
    n = len(mass)
    x, v = s.x[:n], s.v[:n]
    total = member @ mass
    centre = (member @ (mass[:, None] * x)) / total[:, None]
    linear = member @ (mass[:, None] * v)
    wb = rotate_inv(s.R[:n], s.w[:n])
    spin = rotate(s.R[:n], inertia * wb)
    # Σ m x × v − c × P is the angular momentum about the centre of mass (Σ m (x − c) = 0).
    angular = member @ (mass[:, None] * cross(x, v) + spin) - cross(centre, linear)
    kinetic = member @ (mass * einsum("nk,nk->n", v, v) + einsum("nk,nk->n", inertia * wb,
                                                                       wb))
    internal = 0.5 * (kinetic - einsum("rk,rk->r", linear, linear) / total)
    return Momenta(mass=total, centre=centre, linear=linear, angular=angular, internal=internal)


def merge_momenta(m: Momenta, groups: np.ndarray) -> Momenta:
    """The momenta of groups of ragdolls taken as one system each; groups (G, R) is 1 where
    ragdoll r belongs to group g. Mass and linear momentum add; the angular momenta about the
    ragdolls' centres are carried to the group's centre (L = Σ (L_r + c_r × P_r) − c × P), and
    the internal energy gains the ragdolls' motion relative to the group's centre."""
    total = groups @ m.mass
    centre = (groups @ (m.mass[:, None] * m.centre)) / total[:, None]
    linear = groups @ m.linear
    angular = groups @ (m.angular + cross(m.centre, m.linear)) - cross(centre, linear)
    own = einsum("rk,rk->r", m.linear, m.linear) / m.mass
    internal = groups @ (m.internal + 0.5 * own) - 0.5 * einsum("gk,gk->g", linear,
                                                                  linear) / total
    # A group of one is that ragdoll exactly (the sums above round)
    single = groups.sum(axis=1) == 1.0
    if single.any():
        one = groups[single]
        total[single], centre[single] = one @ m.mass, one @ m.centre
        linear[single], angular[single] = one @ m.linear, one @ m.angular
        internal[single] = one @ m.internal
    return Momenta(mass=total, centre=centre, linear=linear, angular=angular, internal=internal)


def restore_momenta(s: Bodies, member: np.ndarray, mass: np.ndarray, inertia: np.ndarray,
                    start: Momenta, impulse: np.ndarray, h: float, which: np.ndarray,
                    passive: np.ndarray) -> None:
    """Give each ragdoll r with which[r] the momenta it had at the substep's start plus the
    external linear impulse (R, 3) (gravity: M g h), and put its centre of mass where that
    momentum carries it, by a rigid change of its bodies' velocities and positions.

    A passive ragdoll (passive[r]: no motor) cannot gain kinetic energy relative to its centre
    of mass either (uniform gravity does no work on that motion): if the substep left more than
    it started with, the velocities relative to the rigid motion that carries the angular
    momentum, which are orthogonal to it in the mass metric, are scaled down to the budget."""
    n = len(mass)
    now = momenta(s, member, mass, inertia)
    linear = start.linear + impulse
    rows = np.flatnonzero(which)
    sel = member[rows]
    body = sel.T  # (n, k): 1 in the column of the body's ragdoll (0 for the others)
    d = s.x[:n] - body @ now.centre[rows]
    # I_sys = Σ m (|d|² E − d dᵀ) + R diag(I) Rᵀ, per ragdoll
    R = s.R[:n]
    Iw = (R * inertia[:, None, :]) @ np.swapaxes(R, 1, 2)
    dd = einsum("nk,nk->n", d, d)
    orbit = -einsum("n,ni,nj->nij", mass, d, d)
    orbit[:, [0, 1, 2], [0, 1, 2]] += (mass * dd)[:, None]
    I_sys = einsum("rn,nij->rij", sel, orbit + Iw)
    dw = einsum("rij,rj->ri", inverse3(I_sys), start.angular[rows] - now.angular[rows])
    dv = (linear[rows] - now.linear[rows]) / now.mass[rows, None]
    w_body = body @ dw
    s.v[:n] += body @ dv + cross(w_body, d)
    s.w[:n] += w_body
    centre = start.centre[rows] + h * linear[rows] / start.mass[rows, None]
    if passive[rows].any():
        _cap_internal_energy(s, mass, Iw, body, d, I_sys, linear[rows] / start.mass[rows, None],
                             start, rows, passive)
    s.x[:n] += body @ (centre - now.centre[rows])


def _cap_internal_energy(s: Bodies, mass: np.ndarray, Iw: np.ndarray, body: np.ndarray,
                         d: np.ndarray, I_sys: np.ndarray, vc: np.ndarray, start: Momenta,
                         rows: np.ndarray, passive: np.ndarray) -> None:
    """Scale the deformation velocities of passive ragdolls so that their kinetic energy
    relative to the centre of mass is at most start.internal (see restore_momenta, which has
    just given them the centre velocity vc and the angular momentum start.angular).

    When the rigid rotation that carries the angular momentum L alone, L·I_sys⁻¹L / 2, is
    already above what the ragdoll had, no velocity can mend it: in a given pose that rotation
    is the smallest kinetic energy with momentum L. The substep has then drawn the pose in
    (the final projections pull stretched joints back without a velocity; the positions' own
    update x += h v moves a rotating body along its tangent, off its circle), and the pose is
    spread back (`_spread_toward_budget`) before the velocities are capped."""
    n = len(mass)
    angular = start.angular[rows]
    rotation = 0.5 * einsum("ri,rij,rj->r", angular, inverse3(I_sys), angular)
    # Rounding is not an excess: a ragdoll falling without a turn has L and its internal
    # energy at rounding level, where a spread would move it for nothing.
    scale = start.internal[rows] + 0.5 * start.mass[rows] * einsum("rk,rk->r", vc, vc)
    spread = passive[rows] & (rotation - start.internal[rows] > np.maximum(
        ROUNDING * scale, ENERGY_FLOOR))
    if spread.any():
        d, I_sys = _spread_toward_budget(s, mass, Iw, body, d, I_sys, angular,
                                         start.internal[rows], spread)
        # The velocities' angular momentum about the centre in the spread pose, put back to L
        # by a rigid rotation (as restore_momenta does).
        now = body.T @ (mass[:, None] * cross(d, s.v[:n] - body @ vc)
                        + einsum("nij,nj->ni", Iw, s.w[:n]))
        dw = body @ einsum("rij,rj->ri", inverse3(I_sys), angular - now)
        s.v[:n] += cross(dw, d)
        s.w[:n] += dw
    v, w = s.v[:n], s.w[:n]
    omega = einsum("rij,rj->ri", inverse3(I_sys), angular)
    rigid_w = body @ omega
    u = v - body @ vc - cross(rigid_w, d)
    uw = w - rigid_w
    deform = 0.5 * (body.T @ (mass * einsum("nk,nk->n", u, u)
                              + einsum("nk,nk->n", einsum("nij,nj->ni", Iw, uw), uw)))
    rotation = 0.5 * einsum("rk,rk->r", angular, omega)
    budget = np.maximum(start.internal[rows] - rotation, 0.0)
    over = passive[rows] & (deform > budget)
    if over.any():
        scale = where(over, np.sqrt(budget / np.maximum(deform, 1e-300)), 1.0)
        keep = body @ scale + (1.0 - body.sum(axis=1))  # 1 outside the restored rows
        s.v[:n] = v + (keep - 1.0)[:, None] * u
        s.w[:n] = w + (keep - 1.0)[:, None] * uw


# The largest spread per substep (`_spread_toward_budget`), relative to each body's distance
# from the rotation axis. What it mends is small: 6-body chains tumbling against tight limits
# at 6-15 rad/s had at most 1.5e-3 of the rotation's energy to take back in a substep (median
# 8e-4), by spreads of at most 0.7 mm; the bound keeps a pose that cannot be mended from being
# blown up.
MAX_SPREAD = 2e-3
# Below these (relative to the ragdoll's kinetic energy, and in joules) an excess is rounding.
ROUNDING = 1e-9
ENERGY_FLOOR = 1e-12


def _spread_toward_budget(s: Bodies, mass: np.ndarray, Iw: np.ndarray, body: np.ndarray,
                          d: np.ndarray, I_sys: np.ndarray, angular: np.ndarray,
                          target: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Move the bodies of the ragdolls `which` (rows of `body`) so that their rotational energy
    at angular momentum L, f = L·I_sys⁻¹L / 2, comes down to `target`: along the gradient of f
    in the positions' mass metric (the projection onto the invariants, Hairer, Lubich & Wanner
    IV.4, with the positions taking part), which moves each body away from the rotation axis,
    d_i += λ |ω|² d⊥_i; the centre of mass stays, the orientations too (their share of the
    gradient is small for limbs: a turn about a capsule's thin axis barely changes f). λ by the
    secant method from the slope at 0, df/dλ = -Σ m |ω|⁴ |d⊥|²; λ |ω|² at most MAX_SPREAD.
    Iw (n, 3, 3): the bodies' world inertias. Returns the new offsets d and system inertias
    I_sys; writes s.x."""
    n = len(mass)
    omega = einsum("rij,rj->ri", inverse3(I_sys), angular)
    wb = body @ where(which[:, None], omega, 0.0)  # each body's ragdoll's ω (0: not moved)
    w2 = einsum("nk,nk->n", wb, wb)
    along = einsum("nk,nk->n", d, wb) / np.maximum(w2, 1e-300)
    radial = w2[:, None] * (d - along[:, None] * wb)  # |ω|² d⊥
    slope = -(body.T @ (mass * einsum("nk,nk->n", radial, radial)))
    lam_max = MAX_SPREAD / np.maximum(np.max(body.T * w2, axis=1), 1e-300)
    spin = einsum("rn,nij->rij", body.T, Iw)
    f0 = 0.5 * einsum("ri,rij,rj->r", angular, inverse3(I_sys), angular)
    excess0 = f0 - target

    def spread(lam: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        dn = d + (body @ lam)[:, None] * radial
        orbit = -einsum("rn,n,ni,nj->rij", body.T, mass, dn, dn)
        orbit[:, [0, 1, 2], [0, 1, 2]] += (body.T @ (mass * einsum("nk,nk->n", dn, dn))
                                          )[:, None]
        I_new = orbit + spin
        return dn, I_new, 0.5 * einsum("ri,rij,rj->r", angular, inverse3(I_new), angular)

    ok = which & (slope < 0.0) & (excess0 > 0.0)
    lam = where(ok, np.minimum(excess0 / -np.minimum(slope, -1e-300), lam_max), 0.0)
    dn, I_new, f = spread(lam)
    for _ in range(2):  # secant steps through (0, f0) and (λ, f)
        fall = f0 - f
        step = ok & (fall > 0.0) & ((f > target) & (lam < lam_max) | (fall > excess0))
        if not step.any():
            break
        lam = where(step, np.minimum(lam * excess0 / np.maximum(fall, 1e-300), lam_max), lam)
        dn, I_new, f = spread(lam)
    s.x[:n] += dn - d
    return dn, where(ok[:, None, None], I_new, I_sys)


def energies(s: Bodies, member: np.ndarray, mass: np.ndarray, inertia: np.ndarray,
             gravity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(kinetic (R,), gravitational potential (R,)) of each ragdoll; gravity (n, 3)."""
    n = len(mass)
    v = s.v[:n]
    wb = rotate_inv(s.R[:n], s.w[:n])
    kinetic = 0.5 * (member @ (mass * einsum("nk,nk->n", v, v)
                               + einsum("nk,nk->n", inertia * wb, wb)))
    potential = -(member @ (mass * einsum("nk,nk->n", gravity, s.x[:n])))
    return kinetic, potential


def cap_energy(s: Bodies, member: np.ndarray, mass: np.ndarray, inertia: np.ndarray,
               gravity: np.ndarray, budget: np.ndarray, which: np.ndarray,
               lift: np.ndarray | None = None) -> None:
    """Scale the velocities of each ragdoll r with which[r] so that its kinetic plus
    gravitational energy is at most budget[r] (its total at the substep's start).

    Where the positions alone are above the budget the ragdoll stops, and with lift[r] its
    bodies also go back along their substep's path (from x_prev, q_prev) to where the potential
    energy is the budget (`_undo_lift`); without, the positions are left as they are."""
    n = len(mass)
    kinetic, potential = energies(s, member, mass, inertia, gravity)
    over = which & (kinetic + potential > budget)
    if not over.any():
        return
    allowed = np.maximum(budget - potential, 0.0)
    scale = where(over, np.sqrt(allowed / np.maximum(kinetic, 1e-300)), 1.0)
    keep = member.T @ scale  # every body belongs to exactly one ragdoll of the level
    s.v[:n] *= keep[:, None]
    s.w[:n] *= keep[:, None]
    if lift is not None:
        raised = over & lift & (potential > budget)
        if raised.any():
            _undo_lift(s, member, mass, gravity, budget, potential, raised)


def _undo_lift(s: Bodies, member: np.ndarray, mass: np.ndarray, gravity: np.ndarray,
               budget: np.ndarray, potential: np.ndarray, raised: np.ndarray) -> None:
    """Move the bodies of the ragdolls `raised` back along their substep's path, x_prev + α
    (x - x_prev) and the normalised q_prev + α (q - q_prev) (nlerp), with α per ragdoll such
    that the potential energy (linear in x) is the budget.

    The projections after the iterations (the final pass's limits and joints, the contacts'
    push-out) move positions without velocity. Where they fight (a knee clamped to its limit
    into a box, pushed back out of it by the contact projection, substep after substep) the
    fight can lift a ragdoll that has no motion left: a limp humanoid crumpled over a box rose
    0.56 J in 60 substeps with all its velocities already zero, and limp Rigify falls rose up
    to 6.5 J. A passive ragdoll gets no energy from anywhere, so it stays where the budget
    allows; at rest that is where it was."""
    n = len(mass)
    start = -(member @ (mass * einsum("nk,nk->n", gravity, s.x_prev[:n])))
    gain = potential - start
    alpha = where(raised & (gain > 0.0),
                     np.clip((budget - start) / np.maximum(gain, 1e-300), 0.0, 1.0), 1.0)
    a = (member.T @ alpha)[:, None]  # per body
    back = (member.T @ raised.astype(np.float64)) > 0.0
    x = s.x_prev[:n] + a * (s.x[:n] - s.x_prev[:n])
    q0, q1 = s.q_prev[:n], s.q[:n]
    q1 = where(einsum("nk,nk->n", q0, q1)[:, None] < 0.0, -q1, q1)
    q = q0 + a * (q1 - q0)
    q /= np.sqrt(einsum("nk,nk->n", q, q))[:, None]
    idx = np.flatnonzero(back)
    s.x[idx], s.q[idx] = x[idx], q[idx]
    s.R[idx] = q2m(q[idx])
