"""Ball joints at bone heads, solved all at once (Jacobi) or in two colours, and joint damping
(Müller et al. 2020).

Every body has one joint: to its parent body, or for a root to the static world (that one is the
root target constraint and is only active while the root is locked).

By default (TWO_COLOURS = False) all joints of the tree are one batch, solved as a Jacobi pass
with mass splitting (Tonge et al. 2012; bodies.Pairs): a body is the child of one joint and the
parent of its children's, and each constraint sees its inverse mass times that count, so the
summed corrections are their average. At ~20 bodies the cost of a pass is NumPy's per-call
overhead, not its size: one pass instead of two halves the joint work per iteration (17-body
benchmark 24.3 -> 17.0 CPU ms per frame). It converges more slowly than Gauss-Seidel: the thin-chest
test ends 0.52° off its motor target instead of 0.12° (limit 1°), the swinging arms 4.3° instead
of 3.0° (limit 5°); 6 Jacobi iterations match 4 coloured ones. The final top-down pass
(level.Level.final_pass) still makes limits, rigid motors and joint drift exact.

With TWO_COLOURS the tree is coloured by depth parity: a joint whose child is at even depth never
shares a body with another joint of its colour except the parent, which several children may
share; each iteration solves colour 0 then colour 1 (Gauss-Seidel along chains). Either way the
joints of a batch are vectorised (no Python loop per body).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bodies import (
    Bodies,
    FrozenPairs,
    Pairs,
    angular_velocity_impulse,
    cross,
    dot_2d,
    einsum,
    inverse3,
    positional,
    rotate,
    where,
)

TWO_COLOURS = False  # see the module docstring: one Jacobi batch of every joint by default


@dataclass(frozen=True)
class JointColour:
    """The joints of one colour (child a, parent or world b) and their static data."""

    pairs: Pairs
    index: np.ndarray  # (n_c,) position of each child in the level's body order (== pairs.a)
    is_root: np.ndarray  # (n_c,) bool: b is the world (root target constraint)
    anchor_a: np.ndarray  # (n_c, 3) child's joint anchor (its head) from its centre, body frame
    rest_relative: np.ndarray  # (n_c, 4) child orientation in its parent's frame at bind
    swing_limit: np.ndarray  # (n_c, 2)
    twist_limit: np.ndarray  # (n_c, 2)
    swing_center: np.ndarray  # (n_c, 2) centre of the swing ellipse (limits.py)
    has_limit: np.ndarray  # (n_c,) bool: any finite limit
    inside: np.ndarray  # (n_c,) limits.inside_bound: joints clear of it skip the limit test


def colour_joints(*, parent: np.ndarray, depth: np.ndarray, half_length: np.ndarray,
                  rest_relative: np.ndarray, swing_limit: np.ndarray, twist_limit: np.ndarray,
                  swing_center: np.ndarray) -> tuple[JointColour, ...]:
    """A level's joints as one batch, or split into the two depth-parity colours with
    TWO_COLOURS (parent == n marks the world)."""
    from .limits import inside_bound  # (limits.py builds on this module's JointColour)

    n = len(parent)
    colour = depth % 2 if TWO_COLOURS else np.zeros_like(depth)
    colours = []
    for c in range(int(colour.max()) + 1 if n else 0):
        a = np.flatnonzero(colour == c)
        if not len(a):
            continue
        b = parent[a]
        is_root = b == n
        swing = where(is_root[:, None], np.inf, swing_limit[a])
        twist = where(is_root[:, None], [-np.inf, np.inf], twist_limit[a])
        has_limit = np.isfinite(swing).any(axis=1) | np.isfinite(twist).any(axis=1)
        anchor = np.zeros((len(a), 3))
        anchor[:, 1] = -half_length[a]
        centre = where(is_root[:, None], 0.0, swing_center[a])
        colours.append(JointColour(
            pairs=Pairs.create(a, b), index=a, is_root=is_root, anchor_a=anchor,
            rest_relative=rest_relative[a], swing_limit=swing, twist_limit=twist,
            swing_center=centre, has_limit=has_limit,
            inside=inside_bound(swing, twist, centre)))
    return tuple(colours)


def solve_ball(s: Bodies, col: JointColour, anchor_b: np.ndarray, active: np.ndarray,
               frozen: FrozenPairs | None = None, lam_total: np.ndarray | None = None,
               lam_max: np.ndarray | None = None) -> None:
    """Hard positional constraint joining the child's head to the parent's anchor.

    anchor_b: (n_c, 3) the anchor in the parent's body frame from its centre (for the world:
    the root's target head position in world). Müller 2020 eq. (2)-(9) with α = 0.
    `frozen`: `FrozenPairs.of(s, col.pairs)` of this substep, if already gathered.
    `lam_total`, `lam_max`: the substep's summed impulses and their bound (inf = hard); a
    locked root's joint to the world is force-limited so that an obstacle between the root and
    its target wins (the lock cannot push the body into a wall and store energy there) and the
    fall threshold, not the solver, decides when the character lets go.
    """
    p = col.pairs
    ra = rotate(s.R[p.a], col.anchor_a)
    rb = rotate(s.R[p.b], anchor_b)
    delta = (s.x[p.a] + ra) - (s.x[p.b] + rb)
    positional(s, p, ra, rb, delta, active=active, frozen=frozen, lam_total=lam_total,
               lam_max=lam_max)


def damp_joints(s: Bodies, col: JointColour, damping_fraction: np.ndarray,
                target_velocity: np.ndarray | None = None,
                motor_fraction: np.ndarray | None = None) -> None:
    """Velocity pass: remove `damping_fraction` of the relative angular velocity (joint damping,
    Müller 2020 §3.6, with the exact per-substep fraction 1 - exp(-μ h)), and `motor_fraction`
    of its difference from the animation's relative angular velocity (the motor's damper)."""
    p = col.pairs
    relative = s.w[p.a] - s.w[p.b]
    dw = relative * damping_fraction[:, None]
    if motor_fraction is not None:
        dw += (relative - target_velocity) * motor_fraction[:, None]
    angular_velocity_impulse(s, p, dw)


def subtree_masses(inv_mass: np.ndarray, carry: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the bodies' masses (n,), 0 for kinematic ones; the mass each joint's subtree carries
    (n_c,)) from their inverse masses (n,): what `subtree_recoil` reads of the bodies that
    changes only with the frame's settings (computed once per substep, not per iteration)."""
    mass = where(inv_mass > 0.0, 1.0 / np.maximum(inv_mass, 1e-300), 0.0)
    return mass, carry.T @ mass


def subtree_recoil(s: Bodies, p: Pairs, carry: np.ndarray, spin: np.ndarray,
                   pivot: np.ndarray, Ib: np.ndarray, recoil: np.ndarray | None = None,
                   masses: tuple[np.ndarray, np.ndarray] | None = None,
                   inv_mass_b: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The parents' share when each joint's subtree turns rigidly about its joint by `spin`
    (n_c, 3): (translation, rotation) of p.b_unique, as positions (a motor's correction) or as
    velocities (its damper) alike.

    Turned about its joint, a subtree's centre of mass moves: by itself the correction has a
    net force, as if the parent were pinned in space. The parent takes the opposite impulse
    J = −spin × Σ m (x − pivot) at the joint, with its own inverse mass and inertia. Then the
    linear impulses sum to zero, and so do the angular ones about the joint: the subtree's
    (P, orbital motion included), the parent's couple (−P) and the moment of J about the
    parent's centre, which the parent's orbital change about the joint cancels. A three-body
    chain pressing its end into the ground gained 11 J on 126 J at the defaults without it
    (3 J with it), a four-body one 66 J on 447 J (19 J with it); the rest is the subtree
    motor's own metric (the subtree is held rigid while its joints are springs), which the
    two-body motor does not have. The joint this opens is closed by the ball joint.

    `recoil` (n_c,) bool: the joints whose parent takes J. A locked root does not: it stands
    for the animation carrying the hips (a kinematic pelvis, as in UE's Physical Animation),
    its lock is force-limited, and the legs' strong motors pushing it back through a foot on a
    step stopped the fall sample's runner 0.7 m short of the wall and threw it back 1.2 m.

    `masses`: `subtree_masses` of the bodies' inverse masses, `inv_mass_b` the parents'
    inverse masses, if already known for the substep."""
    n = carry.shape[0]
    mass, carried = subtree_masses(s.inv_mass[:n], carry) if masses is None else masses
    moment = dot_2d(carry.T, mass[:, None] * s.x[:n]) - carried[:, None] * pivot
    J = -cross(spin, moment)
    if recoil is not None:
        J = where(recoil[:, None], J, 0.0)
    r = pivot - s.x[p.b]
    inv_b = s.inv_mass[p.b] if inv_mass_b is None else inv_mass_b
    return (dot_2d(p.scatter, inv_b[:, None] * J),
            dot_2d(p.scatter, einsum("nij,nj->ni", Ib, cross(r, J))))


def damp_joints_subtree(s: Bodies, col: JointColour, damping_fraction: np.ndarray,
                        target_velocity: np.ndarray, motor_fraction: np.ndarray,
                        carry: np.ndarray, joint_inertia: np.ndarray,
                        recoil: np.ndarray | None = None,
                        masses: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """`damp_joints` with the child side being its whole subtree turned rigidly about the joint
    (as motors.solve_motor_subtree): the relative angular velocity w_child - w_parent is
    reduced by dw with an impulse P = (1 / I_joint + I_parent⁻¹)⁻¹ dw; the subtree's angular
    and linear velocities change by -P / I_joint about the joint, the parent's by I_parent⁻¹ P."""
    p = col.pairs
    relative = s.w[p.a] - s.w[p.b]
    dw = relative * damping_fraction[:, None] + (relative - target_velocity) \
        * motor_fraction[:, None]
    Ib = s.Iw_inv[p.b]
    if recoil is not None:
        # A locked root takes no couple either: the damper's reaction on it would be a spin
        # that nothing resists until the next substep's lock undoes it by position, and the
        # children's dampers then pull the legs along that spin (see limits.stop_at_limits).
        Ib = where(recoil[:, None, None], Ib, 0.0)
    inv_joint = 1.0 / joint_inertia
    K = Ib * p.split[:, None, None]
    diag = inv_joint + 1e-12
    K[:, 0, 0] += diag
    K[:, 1, 1] += diag
    K[:, 2, 2] += diag
    P = einsum("nij,nj->ni", inverse3(K), dw)
    spin = P * inv_joint[:, None]
    pivot = s.x[p.a] + einsum("nij,nj->ni", s.R[p.a], col.anchor_a)
    n = carry.shape[0]
    rot = dot_2d(carry, spin)
    dv, dw = subtree_recoil(s, p, carry, -spin, pivot, Ib, recoil, masses)
    s.w[:n] -= rot
    s.v[:n] -= cross(rot, s.x[:n]) - dot_2d(carry, cross(spin, pivot))
    s.w[p.b_unique] += dot_2d(p.scatter, einsum("nij,nj->ni", Ib, P)) + dw
    s.v[p.b_unique] += dv


def joint_gaps(s: Bodies, col: JointColour, anchor_b: np.ndarray) -> np.ndarray:
    """(n_c, 3) each joint's gap, the child's head minus the parent's anchor (world), as the
    bodies are now (`anchor_b`: the anchors in the parents' body frames, as `solve_ball`)."""
    p = col.pairs
    return (s.x[p.a] + rotate(s.R[p.a], col.anchor_a)) - (s.x[p.b] + rotate(s.R[p.b], anchor_b))


def stop_opened_joints(s: Bodies, col: JointColour, anchor_b: np.ndarray, gap: np.ndarray,
                       opened: np.ndarray, recoil: np.ndarray | None = None) -> None:
    """The joints' velocity pass: a joint the iterations left open (`opened`, its `gap`
    (n_c, 3) after them) keeps no relative velocity of its two anchor points that opens it
    further. The final pass closes the gap by position only (`level.Level.final_pass`), so
    the velocity the iterations derived toward it survives: the next substep opens the joint
    again by as much, the projection closes it again, and the body keeps that velocity for
    ever. A limp humanoid lying on its back at a 60 Hz substep with one iteration dropped a
    shin 22 mm toward the ground every substep (1.3 m/s) that the final pass lifted back, and
    its legs crawled at 0.2–0.8 m/s for seconds.

    Removing it is the inelastic limit of the ball joint at the velocity level (as
    `limits.stop_at_limits` for the limits and the contacts' velocity pass for the normal): a
    scalar impulse along the gap between the two anchor points, equal and opposite on child
    and parent (linear and angular momentum kept), at most until that component of the
    relative velocity is zero, so it never adds kinetic energy. Each stopped joint's effective
    mass is split among the joints that stop (mass splitting, Tonge et al. 2012, as the
    limits' stop). ``recoil`` False: the parent (a locked root) takes none of it."""
    p = col.pairs
    dist = np.sqrt(einsum("nk,nk->n", gap, gap))
    unit = gap / np.maximum(dist, 1e-300)[:, None]
    ra = rotate(s.R[p.a], col.anchor_a)
    rb = rotate(s.R[p.b], anchor_b)
    u = (s.v[p.a] + cross(s.w[p.a], ra)) - (s.v[p.b] + cross(s.w[p.b], rb))
    along = einsum("nk,nk->n", u, unit)
    stop = opened & (along > 0.0)
    if not stop.any():
        return
    a, b, g = p.a[stop], p.b[stop], unit[stop]
    takes = np.ones(len(a), dtype=bool) if recoil is None else recoil[stop]
    ca, cb = cross(ra[stop], g), cross(rb[stop], g)
    ia = einsum("nij,nj->ni", s.Iw_inv[a], ca)
    ib = einsum("nij,nj->ni", s.Iw_inv[b], cb)
    inv_b = where(takes, s.inv_mass[b], 0.0)
    ib = where(takes[:, None], ib, 0.0)
    uses = (np.bincount(a, minlength=len(s.w)) + np.bincount(b[takes], minlength=len(s.w)))
    wa = (s.inv_mass[a] + einsum("nk,nk->n", ca, ia)) * uses[a]
    wb = (inv_b + einsum("nk,nk->n", cb, ib)) * uses[b]
    lam = where(wa + wb > 1e-12, along[stop] / np.maximum(wa + wb, 1e-12), 0.0)
    np.add.at(s.v, a, -(lam * s.inv_mass[a])[:, None] * g)
    np.add.at(s.w, a, -lam[:, None] * ia)
    np.add.at(s.v, b, (lam * inv_b)[:, None] * g)
    np.add.at(s.w, b, lam[:, None] * ib)
