"""Capsule-capsule collisions between the bodies of one ragdoll, and between ragdolls.

Candidate pairs are fixed at setup: bodies of the same ragdoll that are not joined by a joint and
do not already overlap at bind pose (a character's capsules usually overlap around the hips and
shoulders; those pairs would push each other apart forever, so physics engines disable them,
e.g. PhysX articulations' and UE physics assets' default). Per iteration the closest points of
every pair's segments are found at once (Ericson 2005, 5.1.9, vectorised over pairs), and a
penetration `r_a + r_b - distance` is removed by a positional correction at those points with
both bodies' generalised inverse masses (Müller et al. 2020 §3.3). A body in several pairs gets
its inverse mass multiplied by the count of pairs acting on it in that pass (mass splitting,
Tonge et al. 2012), so the summed corrections of one Jacobi pass stay bounded. Static friction
holds the pair's contact point in the position solve (Müller 2020 §3.5, `SelfCollision.hold`)
while the substep's summed tangential impulse stays within friction × the normal one; the
velocity pass stops the pairs' normal motion and applies Coulomb friction (Müller 2020 §3.6)
with what is left of that bound: a limb lying on another does not slide off it for as long as
the friction holds.

Bodies of two different ragdolls of one solve level collide when both ragdolls opt in
(`RagdollRest.collide_with_others`): two characters falling onto each other. The same
candidate-pair machinery solves them; pairs already overlapping at bind pose are left out as
for one ragdoll (two characters placed into each other would push apart forever).
"""

from __future__ import annotations

import numpy as np

from .bodies import Bodies, cross, dot_2d, einsum, rotate, rotate_inv, where

REST_MARGIN = 0.005  # m: pairs closer than this at bind pose never collide
CONTACT_SLOP = 0.001  # m: a pair this far apart after the iterations still touches
# `SelfCollision._clear`'s allowance for what `segment_pairs_closest` may overstate of a
# distance, per metre of the two segments' lengths: nearly parallel segments (sin θ below
# sqrt(1e-9) ≈ 3.2e-5) get the middle of their overlap, within L sin θ of the closest pair.
# Three times that, plus rounding.
CLEAR_PER_LENGTH = 1e-4
CLEAR_ABSOLUTE = 1e-9  # m


def _unit(x: np.ndarray) -> np.ndarray:
    """x clamped to [0, 1]: two ufunc calls (np.clip's Python wrapper costs more than the
    clamp itself on a few dozen pairs, and this runs several times per substep)."""
    return np.minimum(np.maximum(x, 0.0), 1.0)


def segment_pairs_closest(p1, q1, p2, q2) -> tuple[np.ndarray, np.ndarray]:
    """Closest points (P, 3) on segments p1q1 and p2q2 (all (P, 3))."""
    # All dot products in one call: G[i, j] = v_i . v_j for v = (d1, d2, r), the differences
    # written straight into v (np.stack's Python wrapper made 13 calls)
    v = np.empty((3,) + p1.shape)
    d1, d2 = np.subtract(q1, p1, out=v[0]), np.subtract(q2, p2, out=v[1])
    np.subtract(p1, p2, out=v[2])  # r
    G = einsum("ipk,jpk->ijp", v, v)
    a, e, b, c, f = G[0, 0], G[1, 1], G[0, 1], G[0, 2], G[1, 2]
    denom = a * e - b * b
    inv_a, inv_e = 1.0 / np.maximum(a, 1e-300), 1.0 / np.maximum(e, 1e-300)
    # (Nearly) parallel segments: the middle of the overlap of their projections, so a
    # correction there does not turn them (Ericson's s = 0 would pick an end).
    t0, t1 = -c * inv_a, (b - c) * inv_a
    parallel_s = 0.5 * (_unit(np.minimum(t0, t1)) + _unit(np.maximum(t0, t1)))
    general = denom > 1e-9 * np.maximum(a * e, 1e-300)
    s = where(general, _unit((b * f - c * e) / where(general, denom, 1.0)),
                 parallel_s)
    t = (b * s + f) * inv_e
    s = where(t < 0.0, _unit(-c * inv_a),
                 where(t > 1.0, _unit((b - c) * inv_a), s))
    t = _unit(t)
    return p1 + s[:, None] * d1, p2 + t[:, None] * d2


class SelfCollision:
    """Collision pairs of one level's bodies and their vectorised solve."""

    def __init__(self, *, ragdoll: np.ndarray, parent: np.ndarray, rest_matrix: np.ndarray,
                 half: np.ndarray, radius: np.ndarray, own: bool = True,
                 others: np.ndarray | None = None):
        """own: pairs within one ragdoll; others (n,) bool: the body's ragdoll collides with
        the other ragdolls that opt in."""
        n = len(half)
        i, j = np.triu_indices(n, k=1)
        same = ragdoll[i] == ragdoll[j]
        joined = (parent[i] == j) | (parent[j] == i)
        keep = same & ~joined if own else np.zeros(len(i), dtype=bool)
        if others is not None:
            keep |= ~same & others[i] & others[j]
        i, j = i[keep], j[keep]
        centre = rest_matrix[:, :3, 3] + rest_matrix[:, :3, 1] * half[:, None]
        axis = rest_matrix[:, :3, 1] * half[:, None]
        if len(i):
            p, q = segment_pairs_closest(centre[i] - axis[i], centre[i] + axis[i],
                                         centre[j] - axis[j], centre[j] + axis[j])
            apart = np.linalg.norm(p - q, axis=1) > radius[i] + radius[j] + REST_MARGIN
            i, j = i[apart], j[apart]
        self.a, self.b = i, j
        self.count = len(i)
        self.half, self.radius = half, radius
        self.sum_radius = radius[i] + radius[j]
        scatter_a = np.zeros((n, len(i)))
        scatter_b = np.zeros((n, len(i)))
        scatter_a[i, np.arange(len(i))] = 1.0
        scatter_b[j, np.arange(len(i))] = 1.0
        self.scatter_a, self.scatter_b = scatter_a, scatter_b  # pair -> body sums
        self.split = (np.ones(len(i)), np.ones(len(i)))  # set by each `_contact`
        self.candidates = self._subset(np.arange(len(i)))  # the pairs `solve` looks at
        self.candidate_index = np.arange(len(i))
        # (`near`'s segments and clearances of the candidates, see `_clear`)
        self.reference: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        # positional normal impulse (kg m) of each candidate pair summed over the substep's
        # passes: the friction's bound in the velocity pass
        self.normal_total = np.zeros(len(i))
        # static friction's summed tangential positional impulse (on a) of each candidate pair
        # over the substep, and the holds that let go (`hold`)
        self.tangent_total = np.zeros((len(i), 3))
        self.released = np.zeros(len(i), dtype=bool)

    def _subset(self, k: np.ndarray) -> tuple[np.ndarray, ...]:
        """(a, b, sum of radii, scatter_a, scatter_b) of pairs k."""
        return (self.a[k], self.b[k], self.sum_radius[k],
                self.scatter_a[:, k], self.scatter_b[:, k])

    def near(self, s: Bodies, margin: float) -> bool:
        """Is any pair closer than its radii + margin (a broad phase once per substep)? The
        following `solve` calls only look at those pairs (with many characters in one bake
        most pairs are far apart, and the dense scatter products shrink with them)."""
        if not self.count:
            return False
        n = len(self.half)
        x, R = s.x[:n], s.R[:n]
        axis = R[:, :, 1] * self.half[:, None]
        i, j = self.a, self.b
        # (each body's segment ends once, then gathered per pair: the same numbers as the
        # ends of the gathered centres and axes, 2 array operations on the bodies instead of
        # 4 and 4 gathers fewer on the pairs)
        lo, hi = x - axis, x + axis
        p, q = segment_pairs_closest(lo[i], hi[i], lo[j], hi[j])
        d = p - q
        reach = self.sum_radius + margin
        squared = einsum("pk,pk->p", d, d)
        close = np.flatnonzero(squared < reach * reach)
        if len(close) == self.count:
            self.candidates = self._subset(np.arange(self.count))
            self.candidate_index = np.arange(self.count)
        elif len(close):
            self.candidate_index = close
            self.candidates = self._subset(close)
        self.normal_total = np.zeros(len(self.candidates[0]))
        self.tangent_total = np.zeros((len(self.candidates[0]), 3))
        self.released = np.zeros(len(self.candidates[0]), dtype=bool)
        self.reference = None
        if not len(close):
            return False
        # Where the segments are now, and how far apart (less what the closest points may
        # overstate): `_clear`'s reference for the rest of the substep.
        i, j = self.candidates[:2]
        dist = np.sqrt(squared[self.candidate_index])
        self.reference = (x.copy(), axis.copy(),
                          dist - CLEAR_PER_LENGTH * 2.0 * (self.half[i] + self.half[j])
                          - CLEAR_ABSOLUTE - self.candidates[2])
        return True

    def _clear(self, s: Bodies, reach: float) -> bool:
        """True when no candidate pair can be within its radii + `reach` (so `_contact` would
        find none) as the bodies are now, judged from `near`'s distances without the closest
        points: a point of a segment has moved by at most |Δx| + |Δaxis| of its body since
        `near` (the segment is x ± axis), and the distance of two segments by at most the sum
        of their two bodies' moves (it is 1-Lipschitz in every point). A Jacobi pass over
        pairs that nothing brought together then costs 12 array operations instead of ~45:
        every iteration of the driven bench's walk."""
        if self.reference is None:  # (no `near` this substep)
            return False
        x_ref, axis_ref, clearance = self.reference
        n = len(self.half)
        dx = s.x[:n] - x_ref
        da = s.R[:n, :, 1] * self.half[:, None] - axis_ref
        move = np.sqrt(einsum("nk,nk->n", dx, dx)) + np.sqrt(einsum("nk,nk->n", da, da))
        i, j = self.candidates[:2]
        return bool((move[i] + move[j] < clearance - reach).all())

    def _contact(self, s: Bodies, movable: np.ndarray, reach: float):
        """The candidate pairs closer than their radii + reach (the mask), with their normal
        (from b to a), lever arms, penetration, world inverse inertia times the levers'
        moments, and generalised inverse masses with the mass splitting; None if none."""
        n = len(self.half)
        x, R = s.x[:n], s.R[:n]
        axis = R[:, :, 1] * self.half[:, None]
        i, j, sum_radius, scatter_a, scatter_b = self.candidates
        lo, hi = x - axis, x + axis  # (as in `near`)
        p, q = segment_pairs_closest(lo[i], hi[i], lo[j], hi[j])
        d = p - q
        dist = np.sqrt(einsum("pk,pk->p", d, d))
        pen = sum_radius - dist
        mask = (pen > -reach) & (movable[i] | movable[j])
        if not mask.any():
            return None
        # Mass splitting by the pairs acting now (Tonge et al. 2012): each body's count of the
        # masked pairs it is in. Split by all its candidate pairs, a pelvis in ten pairs took a
        # tenth of each push, and a head folded onto it stayed 9.7 mm inside over several
        # substeps of a limp fall.
        uses = scatter_a @ mask + scatter_b @ mask
        split_a, split_b = np.maximum(uses[i], 1.0), np.maximum(uses[j], 1.0)
        self.split = split_a, split_b
        nrm = d / np.maximum(dist, 1e-12)[:, None]
        ra, rb = p - x[i], q - x[j]
        ca, cb = cross(ra, nrm), cross(rb, nrm)
        ia = s.inv_inertia_times(i, ca)
        ib = s.inv_inertia_times(j, cb)
        wa = (s.inv_mass[i] + einsum("pk,pk->p", ca, ia)) * split_a
        wb = (s.inv_mass[j] + einsum("pk,pk->p", cb, ib)) * split_b
        return mask, nrm, ra, rb, pen, ia, ib, wa + wb

    def solve(self, s: Bodies, movable: np.ndarray) -> bool:
        """One Jacobi pass over every pair (hard, both bodies move); after `near`, over the
        pairs it found close. False when no pair penetrated (nothing moved, so a further pass
        would find the same)."""
        if not self.count or self._clear(s, 0.0):
            return False
        contact = self._contact(s, movable, 0.0)
        if contact is None:
            return False
        active, nrm, _, _, pen, ia, ib, denom = contact
        n = len(self.half)
        i, j, _, scatter_a, scatter_b = self.candidates
        lam = where(active & (denom > 1e-12), pen / np.maximum(denom, 1e-12), 0.0)
        self.normal_total += lam
        # impulse lam * nrm on a (pushed along +nrm, away from b), the opposite on b
        impulse = lam[:, None] * nrm
        dx = np.zeros(s.x.shape)
        dth = np.zeros(s.x.shape)
        dx[:n] = (dot_2d(scatter_a, impulse * s.inv_mass[i, None])
                  - dot_2d(scatter_b, impulse * s.inv_mass[j, None]))
        dth[:n] = dot_2d(scatter_a, lam[:, None] * ia) - dot_2d(scatter_b, lam[:, None] * ib)
        s.move(dx, dth)
        return True

    def _along(self, s: Bodies, vector: np.ndarray, ra: np.ndarray, rb: np.ndarray
               ) -> tuple[np.ndarray, ...]:
        """(size, unit direction, I_a⁻¹ (r_a × t), I_b⁻¹ (r_b × t), the pair's generalised inverse
        mass along t with the mass splitting) of tangential vectors (P, 3) at levers `ra`, `rb`:
        what the hold and the friction impulses need along a slip or a sliding velocity."""
        i, j = self.candidates[:2]
        split_a, split_b = self.split  # those of the last `_contact`
        size = np.sqrt(einsum("pk,pk->p", vector, vector))
        t = vector / np.maximum(size, 1e-300)[:, None]
        ca, cb = cross(ra, t), cross(rb, t)
        ia = s.inv_inertia_times(i, ca)
        ib = s.inv_inertia_times(j, cb)
        denom = ((s.inv_mass[i] + einsum("pk,pk->p", ca, ia)) * split_a
                 + (s.inv_mass[j] + einsum("pk,pk->p", cb, ib)) * split_b)
        return size, t, ia, ib, denom

    def hold(self, s: Bodies, movable: np.ndarray, friction: np.ndarray) -> None:
        """Static friction in the position solve (Müller et al. 2020 §3.5), as the colliders'
        (`Contacts._hold`): the contact point of each touching pair (the middle of the two
        surfaces, where the velocity pass rubs) is put back where it was on the other body
        when the substep began, by equal and opposite positional impulses on the two bodies
        there (so momentum and angular momentum are kept), while the tangential impulses
        summed over the substep stay within friction × the summed normal one (`friction` (n,)
        per body, a pair uses the mean of its two). Once a correction would leave that cone the
        hold lets go for the rest of the substep (`released`) and the velocity pass rubs with
        what is left of the bound.

        With friction in the velocity pass alone a body resting on another slid by the
        tangential part of g h² in every substep's positions before its velocity was stopped:
        a bar lying along a bar on a 15° slope, friction 1 (tan 15° = 0.27), crept down it at
        13 mm/s for ever while the bar under it stood still on the ground (held there)."""
        # (no pair pushed yet this substep: nothing to hold, and no `_clear` to pay for)
        if not self.count or not self.normal_total.any() or self._clear(s, CONTACT_SLOP):
            return
        contact = self._contact(s, movable, CONTACT_SLOP)
        if contact is None:
            return
        touching, nrm, _, rb, pen, _, _, _ = contact
        touching = touching & (self.normal_total > 0.0) & ~self.released
        if not touching.any():
            return
        n = len(self.half)
        i, j, sum_radius, scatter_a, scatter_b = self.candidates
        x, R = s.x[:n], s.R[:n]
        # the contact point: halfway between a's surface and b's, as `_friction`
        middle = x[j] + rb + nrm * (0.5 * (sum_radius - pen - self.radius[i]
                                           + self.radius[j]))[:, None]
        ra, rb = middle - x[i], middle - x[j]
        # where each body's material point at `middle` was when the substep began
        before_a = s.x_prev[i] + rotate(s.R_prev[i], rotate_inv(R[i], ra))
        before_b = s.x_prev[j] + rotate(s.R_prev[j], rotate_inv(R[j], rb))
        slip = before_b - before_a  # a's point's move less b's
        slip -= nrm * einsum("pk,pk->p", slip, nrm)[:, None]
        size, t, ia, ib, denom = self._along(s, slip, ra, rb)
        lam = size / np.maximum(denom, 1e-300)  # the positional impulse removing the slip
        total = self.tangent_total - lam[:, None] * t
        bound = self.normal_total * (0.5 * (friction[i] + friction[j]))
        within = einsum("pk,pk->p", total, total) <= bound * bound
        self.released |= touching & ~within
        held = touching & ~self.released & (size > 0.0) & (denom > 1e-12)
        if not held.any():
            return
        lam = where(held, lam, 0.0)
        impulse = lam[:, None] * t  # taken from a against its slip, given to b
        dx = np.zeros(s.x.shape)
        dth = np.zeros(s.x.shape)
        dx[:n] = -(dot_2d(scatter_a, impulse * s.inv_mass[i, None])
                   - dot_2d(scatter_b, impulse * s.inv_mass[j, None]))
        dth[:n] = -(dot_2d(scatter_a, lam[:, None] * ia) - dot_2d(scatter_b, lam[:, None] * ib))
        s.move(dx, dth)
        self.tangent_total = where(held[:, None], total, self.tangent_total)

    def stop_normal_motion(self, s: Bodies, movable: np.ndarray, *,
                           friction: np.ndarray | None = None, h: float = 0.0) -> None:
        """The velocity pass of the pairs (Müller et al. 2020 §3.5, restitution 0): a pair in
        contact at the end of the substep keeps no relative normal velocity, neither apart
        (the iterations' pushes taken into the velocities as a speed of separation,
        penetration / h, the PBD "pop") nor together (a limb that kept its approach speed went
        4 cm into the other in the next substep). One Jacobi pass with the same mass splitting
        as `solve`; equal and opposite impulses, so momentum is kept.

        With `friction` (n,) (each body's Coulomb coefficient; a pair uses the mean of its
        two, PhysX's default combine) and the substep `h`: Coulomb friction (§3.6) on the
        relative tangential velocity at the contact point, the impulse at most the pair's
        friction times its normal impulse (the passes' summed λ / h and what this pass took
        out of the approach), static when that suffices. Frictionless, the bodies of a limp
        Rigify human lying on each other slid for seconds (a hand still moving 10 mm a frame
        after 5 s); both bodies' impulses act at one point (the middle of the two surfaces),
        so angular momentum is kept too."""
        if not self.count or self._clear(s, CONTACT_SLOP):
            return
        contact = self._contact(s, movable, CONTACT_SLOP)
        if contact is None:
            return
        touching, nrm, ra, rb, _, ia, ib, denom = contact
        n = len(self.half)
        i, j, _, scatter_a, scatter_b = self.candidates
        v, w = s.v[:n], s.w[:n]
        u = v[i] + cross(w[i], ra) - v[j] - cross(w[j], rb)
        apart = einsum("pk,pk->p", u, nrm)
        lam = where(touching & (denom > 1e-12), apart / np.maximum(denom, 1e-12), 0.0)
        if lam.any():
            impulse = lam[:, None] * nrm  # taken from a along +nrm, given to b
            s.v[:n] -= (dot_2d(scatter_a, impulse * s.inv_mass[i, None])
                        - dot_2d(scatter_b, impulse * s.inv_mass[j, None]))
            s.w[:n] -= dot_2d(scatter_a, lam[:, None] * ia) - dot_2d(scatter_b, lam[:, None] * ib)
        if friction is None or h <= 0.0:
            return
        # the normal impulse of the substep: the passes' pushes and the approach stopped here
        normal = (self.normal_total / h + np.maximum(-lam, 0.0)) * touching
        if not normal.any():
            return
        # less what static friction's hold used of the cone in the positions (`hold`)
        held = np.sqrt(einsum("pk,pk->p", self.tangent_total, self.tangent_total)) / h
        self._friction(s, nrm, ra, rb, np.maximum(
            normal * (0.5 * (friction[i] + friction[j])) - held, 0.0))

    def _friction(self, s: Bodies, nrm: np.ndarray, ra: np.ndarray, rb: np.ndarray,
                  bound: np.ndarray) -> None:
        """Coulomb impulses at most `bound` (P,) against the pairs' relative tangential
        velocity at the middle of their two surfaces (levers `ra`, `rb` from the closest
        points of the segments)."""
        n = len(self.half)
        i, j, _, scatter_a, scatter_b = self.candidates
        x = s.x[:n]
        # the contact point: halfway between a's surface (p - r_a n) and b's (q + r_b n)
        p, q = x[i] + ra, x[j] + rb
        gap = einsum("pk,pk->p", p - q, nrm)
        middle = q + nrm * (0.5 * (gap - self.radius[i] + self.radius[j]))[:, None]
        ra, rb = middle - x[i], middle - x[j]
        v, w = s.v[:n], s.w[:n]
        u = v[i] + cross(w[i], ra) - v[j] - cross(w[j], rb)
        ut = u - nrm * einsum("pk,pk->p", u, nrm)[:, None]
        speed, t, ia, ib, denom = self._along(s, ut, ra, rb)
        J = where((speed > 1e-12) & (denom > 1e-12),
                     np.minimum(bound, speed / np.maximum(denom, 1e-12)), 0.0)
        if not J.any():
            return
        impulse = J[:, None] * t  # taken from a along its sliding direction, given to b
        s.v[:n] -= (dot_2d(scatter_a, impulse * s.inv_mass[i, None])
                    - dot_2d(scatter_b, impulse * s.inv_mass[j, None]))
        s.w[:n] -= dot_2d(scatter_a, J[:, None] * ia) - dot_2d(scatter_b, J[:, None] * ib)

