"""Capsule bodies against the collider set (sphere/ellipsoid, capsule, box, plane).

For every collider the deepest point of each body's segment is found (exactly for planes: one of
the ends; spheres: the segment point closest to the centre; capsules: the closest points of the
two segments; boxes and non-uniformly scaled ellipsoids: the deepest of SAMPLES points along the
segment), and `core.colliders` gives the outward normal `n` and signed distance `sd` there. A
penetration `radius - sd > 0` is removed by a hard positional correction at that point with the
body's generalised inverse mass (Müller et al. 2020 §3.5, the collider is static), so contacts
also rotate bodies. Friction is position based: the tangential displacement of the contact point
during the substep is undone up to `friction · penetration` (Coulomb's cone in position form,
static below it), as in `core.colliders.apply_friction`.

Bodies of one ragdoll do not collide with each other (joint neighbours never do; other pairs
are not handled yet).
"""

from __future__ import annotations

import numpy as np

from ..bone_frames import inverse3
from ..colliders import (
    ColliderKind,
    capsule_normal,
    is_similarity,
    plane_normal,
    shape_normal,
    sphere_normal,
)
from .bodies import Bodies, Pairs, cross, positional, rotate, rotate_inv

SAMPLES = 9  # points along the segment for boxes and scaled ellipsoids


def affine_inverse(M: np.ndarray) -> np.ndarray:
    """Inverse of one 4x4 affine matrix without LAPACK (its per-call overhead dominates here)."""
    inv = np.zeros((4, 4))
    inv[:3, :3] = inverse3(M[:3, :3])
    inv[:3, 3] = -inv[:3, :3] @ M[:3, 3]
    inv[3, 3] = 1.0
    return inv


def closest_on_segment(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    d = b - a
    t = np.einsum("nk,nk->n", c - a, d) / np.maximum(np.einsum("nk,nk->n", d, d), 1e-300)
    return a + np.clip(t, 0.0, 1.0)[:, None] * d


def closest_between_segments(p1: np.ndarray, q1: np.ndarray, p2: np.ndarray, q2: np.ndarray
                             ) -> np.ndarray:
    """Point on segments p1q1 (n, 3) closest to the segment p2q2 (3,) (Ericson 2005, 5.1.9)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a = np.einsum("nk,nk->n", d1, d1)
    e = float(d2 @ d2)
    f = r @ d2
    c = np.einsum("nk,nk->n", d1, r)
    b = d1 @ d2
    denom = a * e - b * b
    s = np.where(denom > 1e-14, np.clip((b * f - c * e) / np.maximum(denom, 1e-300), 0, 1), 0.0)
    if e > 1e-14:
        t = (b * s + f) / e
        s = np.where(t < 0.0, np.clip(-c / np.maximum(a, 1e-300), 0, 1), s)
        s = np.where(t > 1.0, np.clip((b - c) / np.maximum(a, 1e-300), 0, 1), s)
    else:
        s = np.clip(-c / np.maximum(a, 1e-300), 0, 1)
    return p1 + s[:, None] * d1


class Contacts:
    """Contact solver of one level's bodies against the model's colliders."""

    def __init__(self, model, bodies: np.ndarray, half: np.ndarray, radius: np.ndarray):
        self.colliders = model.colliders
        self.mask = model.collider_mask[bodies]  # (n, K)
        self.half, self.radius = half, radius
        n = len(bodies)
        self.pairs = Pairs.create(np.arange(n), np.full(n, n))
        self.t = np.linspace(0.0, 1.0, SAMPLES)

    def deepest(self, k: int, a: np.ndarray, b: np.ndarray, M: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(point on the segment, normal, signed distance) of the deepest point per body."""
        cs = self.colliders
        kind = int(cs.kind[k])
        if kind == ColliderKind.PLANE:
            Minv = affine_inverse(M)
            both = np.stack((a, b))
            nrm, sd = plane_normal(both, M, Minv)
            pick = sd[1] < sd[0]
            return np.where(pick[:, None], b, a), np.broadcast_to(nrm[0], a.shape), sd.min(0)
        if kind == ColliderKind.ELLIPSOID and is_similarity(M):
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
        Minv = affine_inverse(M)
        pts = a[:, None] + self.t[None, :, None] * (b - a)[:, None]
        nrm, sd = shape_normal(kind, pts, M, Minv, cs, k)
        j = np.argmin(sd, axis=1)
        rows = np.arange(len(a))
        return pts[rows, j], nrm[rows, j], sd[rows, j]

    def project(self, s: Bodies, M: np.ndarray, movable: np.ndarray) -> None:
        """Translate movable bodies out of every collider (after the final pass: whatever the
        iterations and the target constraints left, no body ends a substep inside)."""
        n = len(self.half)
        for k in range(self.colliders.count):
            allowed = self.mask[:, k] & movable
            if not allowed.any():
                continue
            x = s.x[:n]
            axis = s.R[:n, :, 1] * self.half[:, None]
            _, nrm, sd = self.deepest(k, x - axis, x + axis, M[k])
            pen = np.where(allowed, self.radius - sd, 0.0)
            if np.any(pen > 0.0):
                x += nrm * np.maximum(pen, 0.0)[:, None]

    def solve(self, s: Bodies, M: np.ndarray, friction: np.ndarray, movable: np.ndarray,
              record: bool = False) -> None:
        """Push every movable body out of every collider it may touch, with friction.
        `record`: remember the contacts (last iteration) for `remove_separation`."""
        n = len(self.half)
        if record:
            self.recorded = []
        for k in range(self.colliders.count):
            allowed = self.mask[:, k] & movable
            if not allowed.any():
                continue
            x, R = s.x[:n], s.R[:n]
            axis = R[:, :, 1] * self.half[:, None]
            p, nrm, sd = self.deepest(k, x - axis, x + axis, M[k])
            pen = self.radius - sd
            active = allowed & (pen > 0.0)
            if not active.any():
                continue
            local = rotate_inv(R, p - x)
            r = p - x
            zero = np.zeros_like(r)
            positional(s, self.pairs, r, zero, -nrm * pen[:, None], active=active)
            if record:
                self.recorded.append((active, nrm, local))
            mu = friction * active
            if not np.any(mu > 0):
                continue
            x, R = s.x[:n], s.R[:n]
            r = rotate(R, local)
            disp = (x + r) - (s.x_prev[:n] + rotate(s.R_prev[:n], local))
            tangential = disp - nrm * np.einsum("nk,nk->n", disp, nrm)[:, None]
            t_len = np.sqrt(np.einsum("nk,nk->n", tangential, tangential))
            fraction = np.minimum(mu * pen / np.maximum(t_len, 1e-300), 1.0)
            positional(s, self.pairs, r, zero, tangential * fraction[:, None],
                       active=active & (t_len > 1e-12))

    def remove_separation(self, s: Bodies) -> None:
        """Velocity pass (Müller 2020 §3.6, restitution 0): a contact point must not leave its
        collider faster than it approached, so the separating normal velocity the position
        solve created while pushing the body out (the de-penetration "pop") is removed with an
        impulse at the contact point."""
        n = len(self.half)
        for active, nrm, local in getattr(self, "recorded", ()):
            r = rotate(s.R[:n], local)
            vp = s.v[:n] + cross(s.w[:n], r)
            vn = np.einsum("nk,nk->n", vp, nrm)
            sep = active & (vn > 0.0)
            if not sep.any():
                continue
            rn = cross(r, nrm)
            Irn = s.inv_inertia_times(np.arange(n), rn)
            w = s.inv_mass[:n] + np.einsum("nk,nk->n", rn, Irn)
            lam = np.where(sep & (w > 1e-12), -vn / np.maximum(w, 1e-12), 0.0)
            s.v[:n] += (lam * s.inv_mass[:n])[:, None] * nrm
            s.w[:n] += lam[:, None] * Irn
