"""Capsule bodies against the collider set (sphere/ellipsoid, capsule, box, plane).

For every collider the deepest point of each body's segment is found (exactly for planes: one of
the ends; spheres: the segment point closest to the centre; capsules: the closest points of the
two segments; boxes and non-uniformly scaled ellipsoids: the deepest of SAMPLES points along the
segment), and `core.colliders` gives the outward normal `n` and signed distance `sd` there; for
planes, boxes and ellipsoids the push acts at the penetration-weighted centre of the penetrating
points (a flat capsule gets no spurious torque). A penetration `radius - sd > 0` is removed by a
hard positional correction at that point with the body's generalised inverse mass (Müller et
al. 2020 §3.5, the collider is static), so contacts also rotate bodies; after the substep's
final pass a translation-only projection leaves no body inside a collider. The velocity pass
then applies the body's restitution (0 by default) and Coulomb friction with the summed normal
impulse (Müller 2020 §3.6; the body's `friction` is the coefficient, the colliders' own friction
is not used), less what static friction gave in the iterations: there the contact point is
held where it was on the collider while the substep's summed tangential impulse stays within
friction × the normal one (Müller 2020 §3.5, `Contacts._hold`). A substep sweep
(`Contacts.sweep`) keeps fast bodies from tunnelling.

Bodies of one ragdoll do not collide with each other (joint neighbours never do; other pairs
are not handled yet).
"""

from __future__ import annotations

import numpy as np

from .. import transcendental
from ..colliders import (
    ColliderKind,
    capsule_normal,
    is_similarity,
    shape_normal,
    sphere_normal,
)
from .bodies import Bodies, Pairs, cross, einsum, inverse3, positional, rotate, rotate_inv, where

SAMPLES = 9  # points along the segment for boxes and scaled ellipsoids
# m: points of the segment this close to the surface count as touching when the contact point
# is placed. A capsule lying on the ground has both ends there, one a little deeper from
# iteration to iteration; without the band the push and the friction jumped to whichever end
# was deeper and a capsule sliding sideways was spun about the vertical (85° over its slide).
CONTACT_BAND = 0.005
# The substep sweep (`Contacts.sweep`) leaves a body alone against a collider it already touches
# at the start of its path (within this share of its radius beyond contact) while the path
# goes into that collider by less than SLIDE_INTO of its radius: a slide, not an impact.
SLIDE_CONTACT = 0.1
SLIDE_INTO = 0.5
# m: the contact passes skip a collider only where `ColliderFrame.lower_bound` puts every body
# beyond reach by more than this, far above the rounding of either distance (1e-12 m at 1 km),
# so a skipped collider is one whose exact test would have found nothing.
BOUND_TOLERANCE = 1e-6
# The velocity pass sets a touched contact's normal velocity to its target (Müller 2020 eq.
# 34: max(-e ṽn, 0)) from either side, approach included. Removing only separation left a
# body that the final projections lift off the ground every substep its approach speed into
# the ground for ever (a limp humanoid's foot at -1.2 m/s at 60 Hz, 1 iteration); with the
# joints' stop (level.STOP_OPENED_JOINTS) the crawl it fed stops. False: separation only.
STOP_APPROACH = True


def closest_on_segment(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    d = b - a
    t = einsum("nk,nk->n", c - a, d) / np.maximum(einsum("nk,nk->n", d, d), 1e-300)
    return a + np.clip(t, 0.0, 1.0)[:, None] * d


def closest_between_segments(p1: np.ndarray, q1: np.ndarray, p2: np.ndarray, q2: np.ndarray
                             ) -> np.ndarray:
    """Point on segments p1q1 (n, 3) closest to the segment p2q2 (3,) (Ericson 2005, 5.1.9)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a = einsum("nk,nk->n", d1, d1)
    e = float(d2 @ d2)
    f = r @ d2
    c = einsum("nk,nk->n", d1, r)
    b = d1 @ d2
    denom = a * e - b * b
    s = where(denom > 1e-14, np.clip((b * f - c * e) / np.maximum(denom, 1e-300), 0, 1), 0.0)
    if e > 1e-14:
        t = (b * s + f) / e
        s = where(t < 0.0, np.clip(-c / np.maximum(a, 1e-300), 0, 1), s)
        s = where(t > 1.0, np.clip((b - c) / np.maximum(a, 1e-300), 0, 1), s)
    else:
        s = np.clip(-c / np.maximum(a, 1e-300), 0, 1)
    return p1 + s[:, None] * d1


# Steepest lever (sine of its angle to the surface) a body is turned out of a collider by: at
# 50° the turn is at most 1.6 × the penetration over the lever; steeper bodies are translated.
PIVOT_SLOPE = 0.766
# Colliders whose deepest point on a segment `deepest` gives exactly (a plane's: an end).
_EXACT_DEEPEST = (ColliderKind.PLANE, ColliderKind.CAPSULE)


def _centre_of_depth(points: np.ndarray, sd: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """Contact point (n, 3) of candidate points (m, n, 3) with signed distances (m, n): the
    depth-weighted mean of the touching ones (within CONTACT_BAND of the surface: a capsule
    lying flat is pushed, and rubbed, at its middle, without a torque that would tip or spin
    it), else the deepest."""
    depth = np.maximum(radius[None, :] + CONTACT_BAND - sd, 0.0)
    total = np.add.reduce(depth, axis=0)  # (what depth.sum calls)
    deepest = points[sd.argmin(axis=0), np.arange(points.shape[1])]
    mean = einsum("mn,mnk->nk", depth, points) / np.maximum(total, 1e-300)[:, None]
    return where((total > 0.0)[:, None], mean, deepest)


class ColliderFrame:
    """The colliders at one substep: matrices, inverses, plane (normal, offset), sphere flags."""

    def __init__(self, M: np.ndarray, colliders):
        self.M = M
        K = len(M)
        self.Minv = np.zeros_like(M)
        if K:
            self.Minv[:, :3, :3] = inverse3(M[:, :3, :3])
            self.Minv[:, :3, 3] = -einsum("kij,kj->ki", self.Minv[:, :3, :3], M[:, :3, 3])
            self.Minv[:, 3, 3] = 1.0
        self.plane: dict[int, tuple[np.ndarray, float]] = {}
        self.sphere = np.zeros(K, dtype=bool)
        # The slabs of `lower_bound`: three unit normals per collider (rows), their offsets
        # and half-widths, and whether the slab is one-sided (a plane's half-space).
        self.slab_normal = np.zeros((3 * K, 3))
        self.slab_offset = np.zeros(3 * K)
        self.slab_width = np.full(3 * K, np.inf)  # no bound (-inf) unless set below
        self.slab_one_sided = np.zeros(3 * K, dtype=bool)
        for k in range(K):  # a handful of colliders
            kind = int(colliders.kind[k])
            rows = slice(3 * k, 3 * k + 3)
            if kind == ColliderKind.PLANE:
                n = self.Minv[k, 2, :3] / np.linalg.norm(self.Minv[k, 2, :3])
                self.plane[k] = (n, float(n @ M[k, :3, 3]))
                self.slab_normal[rows] = n
                self.slab_offset[rows] = self.plane[k][1]
                self.slab_width[rows] = 0.0
                self.slab_one_sided[rows] = True
                continue
            if kind == ColliderKind.ELLIPSOID:
                self.sphere[k] = is_similarity(M[k])
            if kind == ColliderKind.BOX or self.sphere[k]:
                # The box between the planes of its faces: rows of Minv are the face normals,
                # a face |u_i| = size is size / |Minv_i| from the centre along its unit
                # normal; a sphere (`deepest`'s radius) lies between any two planes that far.
                B = self.Minv[k, :3, :3]
                length = np.sqrt(np.add.reduce(B * B, axis=1))
                self.slab_normal[rows] = B / length[:, None]
                self.slab_offset[rows] = self.slab_normal[rows] @ M[k, :3, 3]
                self.slab_width[rows] = (float(colliders.size[k]) / length if not self.sphere[k]
                                         else float(colliders.size[k])
                                         * float(np.linalg.norm(M[k, :3, 0])))

    def lower_bound(self, x: np.ndarray, axis: np.ndarray) -> np.ndarray:
        """(K, m) a lower bound of the distance outside (0 inside) of the deepest point
        `Contacts.deepest` finds on the segments x ∓ axis (m, 3) for each collider (-inf where
        there is none: capsules, scaled ellipsoids): where it is positive, that signed distance
        is at least as large.

        A box (a sphere: the box about it) lies between the planes of its three pairs of faces,
        so a point's distance from it is at least its distance beyond the farthest of those
        slabs (the separating-axis test on the face normals, Ericson 2005, 4.4), and
        `box_normal`'s distance outside is the one to a point of the box, so no less. Over the
        segment a slab's distance is least where |n·(x - c)| is: |n·(x - c)| - |n·axis| at the
        nearest. A plane's is exact up to rounding. Two matrix products for every collider at
        once, where the exact test of one box costs some fifty calls: the contact passes skip
        the colliders this puts beyond reach (`Contacts._within`)."""
        G = self.slab_normal
        d = x @ G.T - self.slab_offset
        e = where(self.slab_one_sided, d, np.abs(d)) - np.abs(axis @ G.T)
        gap = np.maximum(e, 0.0) - self.slab_width
        return np.maximum.reduce(gap.reshape(len(x), -1, 3), axis=2).T


class Contacts:
    """Contact solver of one level's bodies against the model's colliders."""

    def __init__(self, model, bodies: np.ndarray, half: np.ndarray, radius: np.ndarray):
        self.colliders = model.colliders
        self.mask = model.collider_mask[bodies]  # (n, K)
        self.half, self.radius = half, radius
        n = len(bodies)
        self.pairs = Pairs.create(np.arange(n), np.full(n, n))
        self.t = np.linspace(0.0, 1.0, SAMPLES)
        # (K, n) penetration a body already had when the substep began (a pose that starts
        # inside a collider, or what the last projection could not clear), or None: the
        # iterations leave it alone and the final projection, after the velocities are taken,
        # removes it (see `solve`).
        self.allowance: np.ndarray | None = None
        # (x, R) of the bodies before and after the last substep's contact projection, or
        # None: static friction holds a contact point where the iterations left it (`_hold`)
        self.undone: tuple[np.ndarray, ...] | None = None
        self.begin()

    def frame(self, M: np.ndarray) -> ColliderFrame:
        """Per-substep collider data (inverses, plane normals, sphere test) computed once."""
        return ColliderFrame(M, self.colliders)

    def deepest(self, k: int, a: np.ndarray, b: np.ndarray, frame: ColliderFrame,
                radius: np.ndarray | None = None, point: bool = True
                ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """(point on the segment, normal, signed distance) of the deepest point per body
        (segments a-b with `radius`, default: every body of the level). Without `point` the
        contact point of planes, boxes and ellipsoids is not computed (None): the broad phase
        and the projection only need the normal and the distance."""
        radius = self.radius if radius is None else radius
        cs = self.colliders
        kind = int(cs.kind[k])
        M = frame.M[k]
        if kind == ColliderKind.PLANE:
            nrm, offset = frame.plane[k]
            sd = np.array((a @ nrm, b @ nrm)) - offset
            return (_centre_of_depth(np.stack((a, b)), sd, radius) if point else None,
                    np.broadcast_to(nrm, a.shape), sd.min(0))
        if kind == ColliderKind.ELLIPSOID and frame.sphere[k]:
            radius = float(cs.size[k]) * float(np.linalg.norm(M[:3, 0]))
            p = closest_on_segment(a, b, M[:3, 3])
            nrm, sd = sphere_normal(p, M[:3, 3], radius)
            return p, nrm, sd
        if kind == ColliderKind.CAPSULE:
            hl = float(cs.size[k])
            ca = M[:3, :3] @ np.array([0.0, 0.0, -hl]) + M[:3, 3]
            cb = M[:3, :3] @ np.array([0.0, 0.0, hl]) + M[:3, 3]
            p = closest_between_segments(a, b, ca, cb)
            nrm, sd = capsule_normal(p, M, hl, float(cs.radius_a[k]), float(cs.radius_b[k]))
            return p, nrm, sd
        pts = a[:, None] + self.t[None, :, None] * (b - a)[:, None]
        nrm, sd = shape_normal(kind, pts, M, frame.Minv[k], cs, k)
        j = sd.argmin(axis=1)
        rows = np.arange(len(a))
        p = _centre_of_depth(pts.swapaxes(0, 1), sd.T, radius) if point else None
        return p, nrm[rows, j], sd[rows, j]

    def near(self, s: Bodies, M: ColliderFrame, movable: np.ndarray, margin: float
             ) -> np.ndarray:
        """Colliders (indices) some movable body is within margin of (a broad phase once per
        substep; the others are skipped by `solve`)."""
        return self.near_each(s, M, (movable,), margin)[0]

    def near_each(self, s: Bodies, M: ColliderFrame, masks: tuple[np.ndarray, ...],
                  margin: float, touched: np.ndarray | None = None) -> list[np.ndarray]:
        """`near` for several body masks at once (one distance test per collider); touched
        (n,) bool, if given, is set where a body of the first mask is near a collider."""
        if not self.colliders.count:  # (no collider: nothing near, without the bound's ~20
            return [np.zeros(0, dtype=np.int64) for _ in masks]  # calls)
        n = len(self.half)
        x = s.x[:n]
        axis = s.R[:n, :, 1] * self.half[:, None]
        near = [[] for _ in masks]
        anyone = masks[0]
        for m in masks[1:]:
            anyone = anyone | m
        reach = self._within(M, x, axis, self.mask.T & anyone, self.radius + margin)
        for k in range(self.colliders.count):
            if not reach[k]:  # (no body of any mask is within margin of it)
                continue
            allowed = [self.mask[:, k] & m for m in masks]
            if not any(a.any() for a in allowed):
                continue
            _, _, sd = self.deepest(k, x - axis, x + axis, M, point=False)
            close = sd < self.radius + margin
            if touched is not None:
                touched |= allowed[0] & close
            for out, a in zip(near, allowed, strict=True):
                if np.any(a & close):
                    out.append(k)
        return [np.array(k, dtype=np.int64) for k in near]

    def sweep(self, s: Bodies, M: ColliderFrame, movable: np.ndarray) -> None:
        """Continuous collision as a substep sweep (conservative advancement, sampled): a body
        that moved further than its radius within the substep is tested at points of its path
        spaced at most a radius apart; if one of them touches a collider, the body is put back
        at the first such point, where the contact solve then meets it from the side it came
        from. Without it a body at 30 m/s (12.5 cm per 240 Hz substep) passed through a 2 cm
        wall. Orientation is kept at its end-of-step value (the path is a translation).

        A body already touching a collider at the start of its path and not driving into it
        (sliding along the ground) is not stopped by that collider: every point of a slide
        touches it, and a capsule sliding at 6-8 m/s was put back to its first point each
        substep, its speed clipped to about radius / (2 h) (it slid a quarter of Coulomb's
        v^2 / (2 mu g)). The contact solve holds it as it does any resting contact."""
        if not self.colliders.count:
            return
        n = len(self.half)
        dx = s.x[:n] - s.x_prev[:n]
        dist = np.sqrt(einsum("nk,nk->n", dx, dx))
        idx = np.flatnonzero(movable & (dist > self.radius))
        if not len(idx):
            return
        radius = self.radius[idx]
        steps = int(min(np.ceil(np.max(dist[idx] / radius)), 64))
        axis = s.R[idx, :, 1] * self.half[idx, None]
        start, path = s.x_prev[idx], dx[idx]
        sliding = np.zeros((self.colliders.count, len(idx)), dtype=bool)
        for k in range(self.colliders.count):
            if not self.mask[idx, k].any():
                continue
            _, nrm, sd = self.deepest(k, start - axis, start + axis, M, radius, point=False)
            into = -einsum("nk,nk->n", path, nrm)
            sliding[k] = (sd < radius * (1.0 + SLIDE_CONTACT)) & (into < SLIDE_INTO * radius)
        first = np.ones(len(idx))
        for j in range(1, steps):  # a few points of the path, earliest first
            t = j / steps
            x = start + t * path
            for k in range(self.colliders.count):  # a handful of colliders
                allowed = self.mask[idx, k] & (first > t) & ~sliding[k]
                if not allowed.any():
                    continue
                _, _, sd = self.deepest(k, x - axis, x + axis, M, radius, point=False)
                first = where(allowed & (sd < radius), t, first)
        hit = first < 1.0
        if hit.any():
            s.x[idx[hit]] = start[hit] + first[hit, None] * path[hit]

    def project(self, s: Bodies, M: ColliderFrame, movable: np.ndarray, count: bool = True,
                only: np.ndarray | None = None, colliders: np.ndarray | None = None,
                pivot: np.ndarray | None = None) -> None:
        """Move movable bodies out of every collider (after the final pass: whatever the
        iterations and the target constraints left, no body ends a substep inside). `count`:
        add the push to the substep's normal impulses (friction). `only`: body indices to
        consider (default all); `colliders`: the ones to test (default all).

        `pivot` (bool, per body of `only`): bodies hanging from a joint. Such a body whose head
        is clear of the collider turns about its head until its deepest point is out, instead
        of being translated: a foot lying on the ground then stays on its ankle (translated,
        it left a joint gap of 4–5 cm that the next substep's joints pulled back into the
        ground). A body whose head itself is inside, less deep than its deepest point, is
        translated by its head's depth and turned for the rest: a toe as thick as its foot
        has its head on the ground whenever the ankle's joint tolerance lets the foot's tail
        sink a millimetre, and translated by the depth of its tip, the toe left its foot by up
        to 5 cm on a limp Rigify human at rest."""
        n = len(self.half)
        idx = np.arange(n) if only is None else only
        radius = self.radius[idx]
        free = self.mask[idx].T & movable[idx]  # (K, m)
        reach = None  # the colliders within reach where the bodies are now
        for k in (range(self.colliders.count) if colliders is None else colliders):
            if reach is None:
                x = s.x[idx]
                axis = s.R[idx, :, 1] * self.half[idx, None]
                reach = self._within(M, x, axis, free, radius)
            if not reach[k]:
                continue
            allowed = free[k]
            # (no contact point: the turn's lever reaches a plane's tail or a capsule's
            # closest point, which `deepest` gives anyway)
            p, nrm, sd = self.deepest(k, x - axis, x + axis, M, radius, point=False)
            pen = np.maximum(where(allowed, radius - sd, 0.0), 0.0)
            if not np.any(pen > 0.0):
                continue
            turned = np.zeros(len(idx), dtype=bool)
            head_depth = np.zeros(len(idx))
            kind = int(self.colliders.kind[k])
            if pivot is not None and np.any(pivot & (pen > 0.0)) and kind in _EXACT_DEEPEST:
                # The lever must reach the deepest point itself (a plane's: the tail, the head
                # being clear); a depth-weighted contact point nearer the head would turn the
                # body too far and lift it (energy from nowhere).
                deepest = x + axis if kind == ColliderKind.PLANE else p
                turned, head_depth = self._turn_out(s, k, M, idx, pivot & (pen > 0.0),
                                                    x - axis, deepest, nrm, pen,
                                                    head_inside=True)
            push = where(turned, head_depth, pen)  # a turned body: by its head's depth
            s.x[idx] = s.x[idx] + nrm * push[:, None]
            reach = None  # (the bodies moved)
            if count:  # it counts for friction too
                inv = s.inv_mass[idx]
                self.normal_total[k, idx] += pen * where(inv > 0, 1.0 / np.maximum(
                    inv, 1e-300), 0.0)

    def lift_joints(self, s: Bodies, M: ColliderFrame, movable: np.ndarray, child: np.ndarray,
                    parent: np.ndarray, anchor: np.ndarray, tolerance: float) -> bool:
        """Turn parents about their own heads so that their children's joints clear every
        collider by the child's radius (before the children are re-attached and projected,
        `Level.project_contacts`). `anchor` (m, 3): each child's joint in its parent's body
        frame from the parent's centre.

        A child whose joint is inside a collider cannot be turned out about it (`project`) and
        was translated out, away from its parent: a chest turned against a wall put its shoulder
        joint inside it, and the final projection opened the shoulder by 5–8 cm, which the
        written rotations then showed as an arm 8 cm inside the wall. The wall's push on the
        joint is the parent's to take: it turns about its head (as `project` turns a body about
        its head), one turn per parent for its deepest joint, with the same reach and slope
        rules; a joint it cannot lift (a root's, a steep lever) is left to the translation.
        Only the depth beyond `tolerance` (the joints' own, `level.JOINT_TOLERANCE`) is lifted:
        the child's translation may open its joint that much, as the final pass allows (lifting
        every millimetre, a limp body lying in a pile at the foot of a wall was raised 10 cm
        over a third of a second, projection by projection). Returns whether any parent turned."""
        m = len(child)
        turned = False
        radius = self.radius[child]
        free = self.mask[child].T & (movable[child] & movable[parent])  # (K, m)
        reach = None  # the colliders within reach where the joints are now
        for k in range(self.colliders.count):
            if reach is None:
                joint = s.x[parent] + rotate(s.R[parent], anchor)
                reach = self._within(M, joint, np.zeros_like(joint), free,
                                     np.maximum(radius - tolerance, 0.0))
            if not reach[k]:
                continue
            allowed = free[k]
            _, nrm, sd = self.deepest(k, joint, joint, M, radius, point=False)
            pen = where(allowed, radius - sd - tolerance, 0.0)
            if not np.any(pen > 0.0):
                continue
            # the deepest joint of each parent (a chest with both arms against the wall)
            order = np.lexsort((-pen, parent))
            first = np.ones(m, dtype=bool)
            first[1:] = parent[order][1:] != parent[order][:-1]
            pick = order[first]
            pick = pick[pen[pick] > 0.0]
            bodies = parent[pick]
            head = s.x[bodies] - s.R[bodies, :, 1] * self.half[bodies, None]
            depth = self._depth(s, M, bodies)
            kept = s.x[bodies].copy(), s.q[bodies].copy(), s.R[bodies].copy()
            reach = None  # (the parents turn)
            self._turn_out(s, k, M, bodies, np.ones(len(pick), dtype=bool), head, joint[pick],
                           nrm[pick], pen[pick])
            # A parent the turn pushes deeper into some collider (a limb in a pile against a
            # wall and the floor) is turned back: projected again every substep, such turns
            # lifted a limp body lying at the foot of a wall by 10 cm, position by position.
            back = self._depth(s, M, bodies) > depth + 1e-6
            if back.any():
                s.x[bodies[back]] = kept[0][back]
                s.q[bodies[back]] = kept[1][back]
                s.R[bodies[back]] = kept[2][back]
            turned = turned or bool(np.any(s.x[bodies] != kept[0]))
        return turned

    def _depth(self, s: Bodies, M: ColliderFrame, bodies: np.ndarray) -> np.ndarray:
        """(m,) the deepest penetration of each of `bodies` into any collider (0 outside)."""
        return self.depths(s, M, bodies).max(axis=0, initial=0.0)

    def depths(self, s: Bodies, M: ColliderFrame, bodies: np.ndarray) -> np.ndarray:
        """(K, m) the penetration of each of `bodies` into each collider (0 outside)."""
        if not self.colliders.count:  # (a scene without colliders: every contact pass)
            return np.zeros((0, len(bodies)))
        axis = s.R[bodies, :, 1] * self.half[bodies, None]
        x = s.x[bodies]
        radius = self.radius[bodies]
        depth = np.zeros((self.colliders.count, len(bodies)))
        free = self.mask[bodies].T
        reach = self._within(M, x, axis, free, radius)
        for k in range(self.colliders.count):
            if reach[k]:
                _, _, sd = self.deepest(k, x - axis, x + axis, M, radius, point=False)
                depth[k] = np.maximum(where(free[k], radius - sd, 0.0), 0.0)
        return depth

    def _within(self, M: ColliderFrame, x: np.ndarray, axis: np.ndarray, allowed: np.ndarray,
                threshold: np.ndarray) -> list[bool]:
        """(K,) whether `deepest` may find some `allowed` ((K, m) bool) segment x ∓ axis
        (m, 3) closer to collider k than its `threshold` (m,), which must not be negative (the
        bound is one of the distance outside); False only where `ColliderFrame.lower_bound`
        puts each of them beyond it by more than BOUND_TOLERANCE. The contact passes run
        `deepest` on the others only: ragdoll_fall's three boxes and ground were each tested
        by every pass, though a body touches one or two of them at a time."""
        if not len(x):
            return [False] * self.colliders.count
        close = ~(M.lower_bound(x, axis) > threshold + BOUND_TOLERANCE)  # (NaN: tested)
        return np.logical_or.reduce(allowed & close, axis=1).tolist()

    def penetrating(self, s: Bodies, M: ColliderFrame, movable: np.ndarray) -> np.ndarray:
        """(n,) bool: movable bodies inside some collider (by more than nothing)."""
        return movable & (self._depth(s, M, np.arange(len(self.half))) > 0.0)

    def _turn_out(self, s: Bodies, k: int, M: ColliderFrame, idx: np.ndarray,
                  candidate: np.ndarray, head: np.ndarray, p: np.ndarray, nrm: np.ndarray,
                  pen: np.ndarray, head_inside: bool = False
                  ) -> tuple[np.ndarray, np.ndarray]:
        """Turn the `candidate` bodies (over idx) about their heads so the deepest point `p`
        rises by `pen` along the normal: the lever r = p − head keeps its length, its normal
        component goes from r·n to r·n + pen (rotation about r × n). Returns which turned
        (head clear of the collider, the rise reachable by the lever) and the heads' depths
        in the collider (over idx).

        `head_inside`: a head inside the collider too, less deep than `p`, is allowed; the
        turn then raises `p` by its depth beyond the head's, and the caller translates the
        body by the head's depth."""
        radius = self.radius[idx]
        _, _, sd_head = self.deepest(k, head, head, M, radius, point=False)
        head_depth = np.maximum(radius - sd_head, 0.0)
        if head_inside:
            clear = head_depth < pen
            pen = pen - head_depth
        else:
            clear = sd_head >= radius
        r = p - head
        length = np.sqrt(einsum("nk,nk->n", r, r))
        rn = einsum("nk,nk->n", r, nrm)
        axis = cross(r, nrm)
        axis_length = np.sqrt(einsum("nk,nk->n", axis, axis))
        # Only bodies lying within PIVOT_SLOPE of the surface: turning a steep one lifts its
        # tip by a large swing (a foot pointing down would be turned flat), moving its whole
        # subtree; those are translated.
        ok = (candidate & clear & (np.abs(rn + pen) <= PIVOT_SLOPE * length)
              & (axis_length > 1e-6 * np.maximum(length, 1e-300)))
        if not ok.any():
            return ok, head_depth
        safe = np.maximum(length, 1e-300)
        angle = (transcendental.arcsin(np.clip((rn + pen) / safe, -1.0, 1.0))
                 - transcendental.arcsin(np.clip(rn / safe, -1.0, 1.0)))
        dtheta = axis / np.maximum(axis_length, 1e-300)[:, None] * angle[:, None]
        bodies = idx[ok]
        s.rotate_bodies(bodies, dtheta[ok])
        # the centre follows the turn about the head (the head stays where it is)
        s.x[bodies] = head[ok] + s.R[bodies, :, 1] * self.half[bodies, None]
        return ok, head_depth

    def begin(self) -> None:
        """Zero the substep's summed normal impulses, before its iterations: every push of the
        substep counts for friction, the locked roots' own projections too (`project`)."""
        self.normal_total = np.zeros((self.colliders.count, len(self.half)))
        # static friction's summed tangential impulse vectors and the holds that let go
        self.tangent_total = np.zeros((self.colliders.count, len(self.half), 3))
        self.released = np.zeros((self.colliders.count, len(self.half)), dtype=bool)

    def solve(self, s: Bodies, M: ColliderFrame, movable: np.ndarray, last: bool = True,
              translate: np.ndarray | None = None,
              colliders: np.ndarray | None = None, friction: np.ndarray | None = None,
              previous: ColliderFrame | None = None) -> None:
        """Push every movable body out of every collider it may touch. The normal impulses of
        all iterations of a substep (since `begin`) are summed; the `last` iteration
        remembers the contacts for the velocity pass (friction and no de-penetration pop).
        Bodies flagged in `translate` (locked roots) are pushed without rotation: their
        orientation belongs to the lock, and a contact turning them every iteration against it
        would leave a spurious spin in the velocities.

        Only the penetration beyond `allowance` is pushed out here. What a body had before the
        substep moved it (an animation that starts with a limb through the floor) is not a
        collision: pushed out inside the iterations, it became velocity (Δx / h), and the
        joints handed it to bodies the velocity pass does not touch; a chain starting 34 cm
        into the ground was thrown up with 5 kJ. The final projection removes it as a position
        change only (split-impulse style depenetration: Catto, "Modeling and Solving
        Constraints", GDC 2009).

        `friction` (n,): static friction in the position solve (Müller 2020 §3.5), see
        `_hold`; `previous`: the colliders at the substep's start (a moving collider carries
        what rests on it), None when they do not move."""
        n = len(self.half)
        K = self.colliders.count
        if last:
            self.recorded = []
        for k in (range(K) if colliders is None else colliders):
            allowed = self.mask[:, k] & movable
            if not allowed.any():
                continue
            x, R = s.x[:n], s.R[:n]
            axis = R[:, :, 1] * self.half[:, None]
            p, nrm, sd = self.deepest(k, x - axis, x + axis, M)
            pen = self.radius - sd
            if self.allowance is not None:
                pen = pen - self.allowance[k]
            active = allowed & (pen > 0.0)
            if active.any():
                r = p - x if translate is None else where(translate[:, None], 0.0, p - x)
                lam = positional(s, self.pairs, r, np.zeros((n, 3)), -nrm * pen[:, None],
                                 active=active)
                self.normal_total[k] += lam
            if friction is not None:
                touching = allowed & (pen > -CONTACT_BAND) & (self.normal_total[k] > 0.0)
                if touching.any():
                    # held at the contact point of the axis, as the velocity pass rubs it
                    # (held at the capsule's surface instead, limbs lying on the ground
                    # rolled: 2 of the first 10 replayed Rigify falls still crept at 8 s)
                    local = rotate_inv(R, p - x)
                    if translate is not None:
                        local = where(translate[:, None], 0.0, local)
                    self._hold(s, k, M, previous, touching, local, nrm,
                               friction * self.normal_total[k])
            if last:
                touched = self.normal_total[k] > 0.0
                if touched.any():
                    local = rotate_inv(R, p - x)
                    if translate is not None:
                        local = where(translate[:, None], 0.0, local)
                    self.recorded.append((k, touched, nrm, local))

    def _hold(self, s: Bodies, k: int, M: ColliderFrame, previous: ColliderFrame | None,
              touching: np.ndarray, local: np.ndarray, nrm: np.ndarray, bound: np.ndarray
              ) -> None:
        """Static friction in the position solve (Müller et al. 2020 §3.5): the contact point
        (`local`, in the body frame) of each `touching` body is put back, along the surface,
        where it was on the collider when the substep began, while the tangential positional
        impulses summed over the substep's iterations stay within Coulomb's cone,
        |Σλ_t| ≤ friction × Σλ_n (`bound`). Once a correction would leave the cone the hold
        lets go for the rest of the substep (`released`) and the velocity pass rubs with what
        is left of the bound (kinetic friction, Müller §3.6).

        With friction in the velocity pass alone a body at rest slid by the tangential part of
        g h² in every substep's positions before its velocity was stopped: a capsule on a 15°
        slope with friction 0.5 (tan 15° = 0.27) crept at g sin 15° h = 10.6 mm/s for ever, and
        limp ragdolls lying on the ground crawled at 10–100 mm/s. Held in the positions, the
        velocities taken from them carry no slip either.

        Why the cone is on the sums: each iteration's λ_t checked against Σλ_n alone let the
        hold give back, iteration after iteration, what the joints, motors and self-collision
        pulled, up to `iterations` times what friction can. Why it lets go rather than clamps
        at the cone (position-level kinetic friction): clamped, a foot a 0.97 motor pressed
        into the corner of a wall and the ground went from 2.1 to 10.3 m/s in 6 substeps with
        both holds at the cone's bound.

        The point's place at the substep's start is where the last substep's iterations left
        it (`undone`): the contact projection after them turns bodies out of colliders about
        their heads, which slides contact points along the surface, and that slide, unheld,
        crept a motor-bent chain pressed into the ground along it at 1 mm/s (0.25 mm in 10
        frames at 960 Hz); it is now taken back while the hold holds."""
        n = len(self.half)
        x, R = s.x[:n], s.R[:n]
        r = rotate(R, local)
        point = x + r
        before = s.x_prev[:n] + rotate(s.R_prev[:n], local)
        if self.undone is not None:  # (less what the contact projection moved it)
            xa, Ra, xb, Rb = self.undone
            before -= (xb + rotate(Rb, local)) - (xa + rotate(Ra, local))
        if previous is not None and previous is not M:
            # where the collider carried the point's previous position during the substep
            step = M.M[k] @ previous.Minv[k]
            before = before @ step[:3, :3].T + step[:3, 3]
        slip = point - before
        slip -= nrm * einsum("nk,nk->n", slip, nrm)[:, None]
        size = np.sqrt(einsum("nk,nk->n", slip, slip))
        t = slip / np.maximum(size, 1e-300)[:, None]
        rt = cross(r, t)
        w = s.inv_mass[:n] + einsum("nk,nk->n", rt, s.inv_inertia_times(np.arange(n), rt))
        lam = size / np.maximum(w, 1e-300)  # the positional impulse removing the slip
        total = self.tangent_total[k] - lam[:, None] * t
        within = einsum("nk,nk->n", total, total) <= bound * bound
        self.released[k] |= touching & ~within
        held = touching & ~self.released[k] & (size > 0.0) & (w > 1e-12)
        if held.any():
            positional(s, self.pairs, r, np.zeros((n, 3)), slip, active=held)
            self.tangent_total[k] = where(held[:, None], total, self.tangent_total[k])

    def velocity_pass(self, s: Bodies, friction: np.ndarray, h: float, *,
                      restitution: np.ndarray | None = None, v_before: np.ndarray | None = None,
                      w_before: np.ndarray | None = None, gravity: float = 0.0,
                      normal_only: bool = False) -> None:
        """Velocity pass of the substep's contacts (Müller 2020 §3.6): the normal velocity at
        the contact point becomes max(-e ṽn, 0), ṽn the approach speed before the substep's
        solve and e the body's `restitution` (0: a point pushed out must not keep the
        separating velocity the push created, no "pop"; below 2 |g| h of approach no bounce,
        as in the paper, so resting bodies do not jitter), and Coulomb friction, the
        tangential impulse at the contact point limited by friction · normal impulse (the
        summed λ_n / h) less what static friction's hold gave in the iterations (`_hold`),
        static when that suffices to stop it. `normal_only`: the normal part alone (the level
        alternates it with the joints' stop before the full pass)."""
        n = len(self.half)
        every = np.arange(n)
        bouncy = restitution is not None and bool(np.any(restitution > 0.0))
        for k, touched, nrm, local in getattr(self, "recorded", ()):
            lam_n = self.normal_total[k]
            r = rotate(s.R[:n], local)
            vp = s.v[:n] + cross(s.w[:n], r)
            vn = einsum("nk,nk->n", vp, nrm)
            rn = cross(r, nrm)
            Irn = s.inv_inertia_times(every, rn)
            w = s.inv_mass[:n] + einsum("nk,nk->n", rn, Irn)
            if bouncy:
                approach = einsum("nk,nk->n", v_before + cross(w_before, r), nrm)
                target = where(approach < -2.0 * gravity * h, -restitution * approach, 0.0)
                change = touched & ((vn > target) | ((restitution > 0.0) & (vn < target)))
            else:  # normal: remove separation
                target = 0.0
                change = touched & (vn > 0.0)
            if STOP_APPROACH:
                change |= touched & (vn < target)
            lam = where(change & (w > 1e-12), (target - vn) / np.maximum(w, 1e-12), 0.0)
            s.v[:n] += (lam * s.inv_mass[:n])[:, None] * nrm
            s.w[:n] += lam[:, None] * Irn
            if normal_only:
                continue
            # tangential: Coulomb
            vp = s.v[:n] + cross(s.w[:n], r)
            vt = vp - nrm * einsum("nk,nk->n", vp, nrm)[:, None]
            speed = np.sqrt(einsum("nk,nk->n", vt, vt))
            t = vt / np.maximum(speed, 1e-300)[:, None]
            rt = cross(r, t)
            Irt = s.inv_inertia_times(every, rt)
            wt = s.inv_mass[:n] + einsum("nk,nk->n", rt, Irt)
            stop = speed / np.maximum(wt, 1e-12)
            # the cone's part static friction's hold has not used in the positions
            held = self.tangent_total[k]
            budget = np.maximum(friction * lam_n - np.sqrt(einsum("nk,nk->n", held, held)),
                                0.0)
            J = where(touched & (speed > 1e-12) & (wt > 1e-12),
                         np.minimum(budget / h, stop), 0.0)
            s.v[:n] -= (J * s.inv_mass[:n])[:, None] * t
            s.w[:n] -= J[:, None] * Irt
