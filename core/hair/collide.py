"""Render strands pushed out of the colliders their guides collide with.

Render strands are interpolated from the simulated guides (`interpolate.py`), so between two
guides that hug a head a strand can cut through it: in the head-turn sample 1,906 of 20,000
strands went up to 10.4 cm inside the head while every guide stayed outside. After
interpolation, each strand point (the root excepted: it sits on the scalp) is projected out of
every collider to its own radius, with the same shapes and signed distances the solvers use
(`core/colliders.py`). It is a position projection of the drawn curve only, no dynamics: the
guides carry the motion.

Cost: 50,000 strands x 16 points is 800,000 points per frame. A per-strand bounding box, tested
against each collider's bounding sphere, keeps the exact distance to the strands near it (a
broad phase like the guides' sphere blocks in `strands/constraints/spheres.py`); planes test
every point.

Body-mesh colliders (`core/mesh_colliders.py`) come after the shapes, once per frame
(`collide_strands_meshes`): each strand near a mesh's bounding box has its points queried
against the exact triangles of that frame (per-frame triangle grid, Ericson's closest point,
the angle-weighted pseudo-normal for inside/outside), and a point inside is moved out along the
normal to its radius. The body's surface is what the viewer sees, so it goes last; a point it
pushes into a shape collider stays there (a crease between the body and a shape collider).
A point deeper than the mesh's Depth beyond its radius finds no triangle and stays, as for the
guides.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from ..colliders import ColliderKind, ColliderSet, is_similarity, shape_normal
from ..mesh_colliders import Contacts, MeshColliders, MeshField


def bounding_sphere(kind: int, M: np.ndarray, size: float, radius_a: float, radius_b: float
                     ) -> tuple[np.ndarray, float]:
    """World centre and radius of a sphere holding collider `kind` (inf for a plane)."""
    if kind == ColliderKind.PLANE:
        return M[:3, 3], np.inf
    if kind == ColliderKind.CAPSULE:
        A = M[:3, :3] @ (0.0, 0.0, -size) + M[:3, 3]
        B = M[:3, :3] @ (0.0, 0.0, size) + M[:3, 3]
        radial = 0.5 * (np.linalg.norm(M[:3, 0]) + np.linalg.norm(M[:3, 1]))
        return 0.5 * (A + B), 0.5 * float(np.linalg.norm(B - A)) + radial * max(radius_a,
                                                                                 radius_b)
    if kind == ColliderKind.BOX:
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
        return M[:3, 3], float(np.linalg.norm(size * corners @ M[:3, :3].T, axis=1).max())
    return M[:3, 3], size * float(np.linalg.norm(M[:3, :3], axis=0).max())


# Passes over the colliders: bodies overlap (head and neck, neck and shoulders), and a point
# pushed out of one can land in the next; each later pass revisits only the strands the last one
# moved by more than SETTLED_DEPTH (alternating projections creep along the crease between two
# shapes: without the threshold every pass found sub-micron moves and all 8 ran).
MAX_PASSES = 8
SETTLED_DEPTH = 1e-4  # m


def _boxes(points: np.ndarray, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-strand bounding boxes (N, 3) of points (N, P, 3), grown by `reach`: one
    minimum/maximum per point index (a reduction over the middle axis is 3x slower)."""
    lo = points[:, 0].copy()
    hi = lo.copy()
    for p in range(1, points.shape[1]):
        np.minimum(lo, points[:, p], out=lo)
        np.maximum(hi, points[:, p], out=hi)
    return lo - np.float32(reach), hi + np.float32(reach)


class Projections(NamedTuple):
    moved: int  # point projections made
    passes: int  # passes over the colliders made (a compact bake replays as many)


def collide_strands(points: np.ndarray, radius: np.ndarray, colliders: ColliderSet,
                    matrices: np.ndarray, *, first: int = 1) -> Projections:
    """Push the points (N, P, 3) of render strands out of every collider (world `matrices`
    (K, 4, 4)) to their `radius` (P,), in place; points before `first` (the roots) stay."""
    body = points[:, first:]
    r = np.asarray(radius, dtype=np.float64)[first:]
    if not (r.size and colliders.count):
        return Projections(0, 0)
    reach = float(r.max())
    shapes = []
    for k in range(colliders.count):
        M = np.asarray(matrices[k], dtype=np.float64)
        kind = int(colliders.kind[k])
        centre, bound = bounding_sphere(kind, M, float(colliders.size[k]),
                                         float(colliders.radius_a[k]),
                                         float(colliders.radius_b[k]))
        similar = kind == ColliderKind.ELLIPSOID and is_similarity(M)
        shapes.append((k, kind, M, np.linalg.inv(M), centre, bound, similar))
    active = np.arange(body.shape[0])  # strands this pass looks at
    moved = passes = 0
    lo, hi = _boxes(body, reach)
    for _ in range(MAX_PASSES):
        touched = np.zeros(body.shape[0], dtype=bool)
        for k, kind, M, Minv, centre, bound, similar in shapes:
            if np.isfinite(bound):
                box_lo, box_hi = (lo, hi) if active.size == body.shape[0] else \
                    (lo[active], hi[active])
                gap = np.maximum(box_lo - centre, 0.0) + np.maximum(centre - box_hi, 0.0)
                near = active[np.einsum("nk,nk->n", gap, gap) <= bound * bound]
            else:
                near = active
            if not near.size:
                continue
            # Narrow phase on the points of those strands inside the bounding sphere (float32,
            # as stored), then the exact signed distance on those alone.
            candidates = body[near]
            if np.isfinite(bound):
                offset = candidates - centre.astype(np.float32)
                limit = np.float32(bound + reach)
                close = np.einsum("npk,npk->np", offset, offset) <= limit * limit
            else:  # a plane: every point
                close = np.ones(candidates.shape[:2], dtype=bool)
            strand, point = np.nonzero(close)
            if not strand.size:
                continue
            x = candidates[strand, point].astype(np.float64)
            n, sd = shape_normal(kind, x, M, Minv, colliders, k, similarity=similar)
            depth = r[point] - sd
            inside = depth > 0.0
            if not inside.any():
                continue
            x[inside] += n[inside] * depth[inside, None]
            hit = near[strand[inside]]
            body[hit, point[inside]] = x[inside]
            # The moved strands' boxes grow by the deepest move, so they still hold their points
            # and the next collider's broad phase sees where they are now (a stale box missed
            # contacts; the compact bake's geometry nodes test every point where it is).
            grown = np.zeros(body.shape[0], dtype=bool)
            grown[hit] = True
            step = np.float32(depth[inside].max())
            lo[grown] -= step
            hi[grown] += step
            touched[hit[depth[inside] > SETTLED_DEPTH]] = True
            moved += int(inside.sum())
        passes += 1
        if not touched.any():
            break
        active = np.flatnonzero(touched)
    return Projections(moved, passes)


# The near query's reach past the largest radius, as a fraction of the mesh's Depth.
NEAR_FRACTION = 0.125


class _Fields:
    """The contacts a query of reach radius + Depth makes (`MeshField.contacts`), found for the
    points that can be inside or touching at a fraction of its cost. That query tests every
    triangle within the reach of every point, and the pairs grow with the square of the reach,
    while nearly every render-strand point is either close to the surface or outside:

    1. A near query, of reach g = radius + Depth/8, finds the points within g of the surface:
       their closest triangle is the one the full query finds (the same candidates within g,
       the same tie rule), so their contact is the same.
    2. A point it does not find is farther than g from the surface, so every point within g of
       it is on its side. Its nearest corner on a lattice of spacing g is within 0.87 g: the
       corner's side is the point's. The corners (far fewer than the points) are queried with
       the full reach grown by one spacing, so a corner of any point within the full reach is
       found; a corner not found means its points are out of reach.
    3. The points whose corner is inside are queried with the full reach (a strand that cuts
       deep into the body: few points).
    The result is the full query's for every point it would push (distance < radius)."""

    def __init__(self, frame: MeshColliders, radius: float):
        depth = frame.depth
        self.spacing = radius + NEAR_FRACTION * depth  # (M,) the near reach g
        self.near = MeshField(replace(frame, depth=NEAR_FRACTION * depth), fps=1.0,
                              radius=radius)
        self.corner = MeshField(replace(frame, depth=depth + self.spacing), fps=1.0,
                                radius=radius)
        self.far = MeshField(frame, fps=1.0, radius=radius)

    def contacts(self, m: int, x: np.ndarray) -> Contacts:
        near = self.near.contacts(m, x, 0.0, 0.0)
        unresolved = np.ones(len(x), dtype=bool)
        unresolved[near.index] = False
        rest = np.flatnonzero(unresolved)
        if not rest.size:
            return near
        g = float(self.spacing[m])
        lattice = np.rint(x[rest] / g).astype(np.int64)
        lattice -= lattice.min(axis=0)
        span = lattice.max(axis=0) + 1
        key = (lattice[:, 0] * span[1] + lattice[:, 1]) * span[2] + lattice[:, 2]
        keys, which = np.unique(key, return_inverse=True)
        corners = x[rest][np.unique(which, return_index=True)[1]]
        corners = np.rint(corners / g) * g
        c = self.corner.contacts(m, corners, 0.0, 0.0)
        inside = np.zeros(len(keys), dtype=bool)
        inside[c.index[c.distance <= 0.0]] = True
        deep = rest[inside[which]]
        if not deep.size:
            return near
        far = self.far.contacts(m, x[deep], 0.0, 0.0)
        return Contacts(*(np.concatenate([getattr(near, name), value]) for name, value in (
            ("index", deep[far.index]), ("normal", far.normal), ("distance", far.distance),
            ("surface_motion", far.surface_motion))))


def collide_strands_meshes(points: np.ndarray, radius: np.ndarray, meshes: MeshColliders, *,
                           sample: int = 0, first: int = 1) -> np.ndarray:
    """Push the points (N, P, 3) of render strands out of every mesh collider's surface at its
    sample ``sample`` to their `radius` (P,), in place; points before `first` stay. Returns the
    flat indices (into N·P, ascending, once each) of the points moved."""
    N, P, _ = points.shape
    r = np.asarray(radius, dtype=np.float64)
    if meshes is None or not meshes.count or first >= P or not N:
        return np.zeros(0, dtype=np.int64)
    # One sample alone, so the preview (a frame at a time) and the bake query the same grid
    # and normals and agree bit for bit.
    frame = MeshColliders(meshes.names, meshes.triangles,
                          tuple(v[sample:sample + 1] for v in meshes.vertices),
                          meshes.friction, meshes.depth)
    fields = _Fields(frame, float(r[first:].max()))
    moved = []
    for m in range(frame.count):
        body = points[:, first:]
        vertices = frame.vertices[m][0]
        reach = np.float32(fields.far.reach[m])
        low, high = vertices.min(axis=0) - reach, vertices.max(axis=0) + reach
        lo, hi = _boxes(body, 0.0)
        near = np.flatnonzero(np.all((lo <= high) & (hi >= low), axis=1))
        if not near.size:
            continue
        x = body[near].reshape(-1, 3).astype(np.float64)
        c = fields.contacts(m, x)
        k = c.index % (P - first)
        depth = r[first:][k] - c.distance
        inside = depth > 0.0
        if not inside.any():
            continue
        i = c.index[inside]
        x[i] += c.normal[inside] * depth[inside, None]
        strand, point = near[i // (P - first)], i % (P - first) + first
        points[strand, point] = x[i]
        moved.append(strand * P + point)
    if not moved:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.concatenate(moved))
