"""What a baked render-strand file stores per frame so geometry nodes rebuild the strands.

Storing every render-strand point of every frame makes big files: 20,000 strands × 12 points ×
48 frames is 138 MB. The strands are a fixed function of a few inputs per frame (the guides at
the LOD resolution, the scalp's matrix, Clump, Randomness and the colliders' shapes), and of a
binding made once. So the compact bake stores those inputs as the points of one small Curves
"carrier" per frame, and a geometry-nodes tree (``addon/hair/rebuild_nodes.py``) evaluates the
interpolation of ``interpolate.py`` and the collider projection of ``collide.py`` at playback:
the file plays and renders without Waft, at a few MB.

Everything is a point position (float32 triples), so the carrier needs no attributes. Layout, in
point indices:

- ``0 .. HEADER-1``: the header. Points 0-3: the scalp's world matrix columns (x, y, z,
  translation); 4: (clump, randomness, K colliders); 5: (G guides, P points, passes);
  6: (root radius, tip radius, C corrections); 7: (S correction slots, 0, 0).
- ``HEADER + g·P + k``: point k of guide g at the LOD resolution (world).
- ``HEADER + G·P + 2g``: guide g's home-triangle corners (b, c) and its flat flag; ``+1``: the
  fixed world axis of its flat frame (``StrandBinding.corners``, ``flat``, ``helper``).
- ``HEADER + G·P + 2G + COLLIDER_POINTS·i + j``: record j of collider i (``collider_records``).
- then S correction keys, then S correction values: the points a body-mesh collider moved
  (``collide.collide_strands_meshes``) and where it put them. Key j is the point as
  ``(strand, point index, 0)``, exact in float32 for any count the settings allow (a flat index
  strand × P + point is not, past 2^24 points); value j its final world position. Slots past
  C are padding keys that match no point.
  A body mesh's surface is not a shape the tree can rebuild (its exact closest triangle and
  pseudo-normal), so the bake stores the few points it moved instead; the tree finds each
  point's key with Sample Nearest.

Each collider becomes one of five exact shapes in world space (the signed distances of
``core/colliders.py``): a similarity-scaled ellipsoid and a capsule whose one end sphere holds the
other are spheres, as the solvers treat them.
"""

from __future__ import annotations

import numpy as np

from ..colliders import ColliderKind, ColliderSet, is_similarity
from .collide import bounding_sphere
from .interpolate import StrandBinding

HEADER = 8
COLLIDER_POINTS = 16
# Shape codes of the rebuild tree (record 0, x).
SPHERE, ELLIPSOID, CAPSULE, BOX, PLANE = range(5)
# A plane has no bounding sphere: this radius stands for infinity (its float32 square overflows
# to inf, and every point compares inside it).
UNBOUNDED = 1e30
_EPS = 1e-12
PADDING_KEY = (-8.0, -8.0, 0.0)  # a correction slot that matches no point


def _record(kind: int, centre, bound: float, vectors=(), floats=()) -> np.ndarray:
    """One collider as COLLIDER_POINTS points: (kind, bound, f0), centre, v0..v11, (f1, f2, f3),
    (f4, 0, 0)."""
    out = np.zeros((COLLIDER_POINTS, 3))
    f = list(floats) + [0.0] * (5 - len(floats))
    out[0] = (kind, bound, f[0])
    out[1] = centre
    for j, v in enumerate(vectors):
        out[2 + j] = v
    out[14] = f[1:4]
    out[15, 0] = f[4]
    return out


def collider_record(kind: int, M: np.ndarray, *, size: float, radius_a: float,
                    radius_b: float) -> np.ndarray:
    """(COLLIDER_POINTS, 3) record of one collider with world matrix ``M`` (see module doc)."""
    M = np.asarray(M, dtype=np.float64)
    centre, bound = bounding_sphere(kind, M, size, radius_a, radius_b)
    bound = min(bound, UNBOUNDED)
    Minv = np.linalg.inv(M)
    if kind == ColliderKind.ELLIPSOID:
        if is_similarity(M):
            radius = size * float(np.linalg.norm(M[:3, 0]))
            return _record(SPHERE, centre, bound, (M[:3, 3],), (radius,))
        vectors = (*M[:3, :3].T, M[:3, 3], *Minv[:3, :3], Minv[:3, 3])
        return _record(ELLIPSOID, centre, bound, vectors, (size,))
    if kind == ColliderKind.CAPSULE:
        A = M[:3, :3] @ np.array([0.0, 0.0, -size]) + M[:3, 3]
        B = M[:3, :3] @ np.array([0.0, 0.0, size]) + M[:3, 3]
        radial = 0.5 * (np.linalg.norm(M[:3, 0]) + np.linalg.norm(M[:3, 1]))
        ra, rb = radius_a * radial, radius_b * radial
        L = float(np.linalg.norm(B - A))
        if L < _EPS or abs(ra - rb) >= L:  # one end sphere holds the other (capsule_normal)
            c, r = (A, ra) if ra >= rb else (B, rb)
            return _record(SPHERE, centre, bound, (c,), (r,))
        b = (ra - rb) / L
        return _record(CAPSULE, centre, bound, (A, (B - A) / L, B),
                       (ra, rb, L, float(np.sqrt(1.0 - b * b)), b))
    if kind == ColliderKind.BOX:
        rows = Minv[:3, :3]
        vectors = (*M[:3, :3].T, M[:3, 3], *rows, Minv[:3, 3],
                   np.linalg.norm(M[:3, :3], axis=0),
                   *(rows / np.linalg.norm(rows, axis=1)[:, None]))
        return _record(BOX, centre, bound, vectors, (size,))
    n = Minv[2, :3] / np.linalg.norm(Minv[2, :3])
    return _record(PLANE, centre, bound, (n,), (float(n @ M[:3, 3]),))


def collider_records(colliders: ColliderSet | None, matrices) -> np.ndarray:
    """(K, COLLIDER_POINTS, 3) records of every collider at one frame's world ``matrices``."""
    if colliders is None or not colliders.count:
        return np.zeros((0, COLLIDER_POINTS, 3))
    return np.stack([collider_record(int(colliders.kind[k]), matrices[k],
                                     size=float(colliders.size[k]),
                                     radius_a=float(colliders.radius_a[k]),
                                     radius_b=float(colliders.radius_b[k]))
                     for k in range(colliders.count)])


def carrier_sizes(guides: int, points: int, colliders: int, slots: int = 0) -> list[int]:
    """Point counts of the carrier's curves: header, guides, guide frames, colliders, and the
    correction keys and values when there are ``slots``."""
    return ([HEADER] + [points] * guides + [2 * guides] + [COLLIDER_POINTS] * colliders
            + ([slots, slots] if slots else []))


def carrier_points(binding: StrandBinding, guides: np.ndarray, *, scalp_matrix, clump: float,
                   randomness: float, root_radius: float, tip_radius: float,
                   records: np.ndarray, passes: int, corrections=None) -> np.ndarray:
    """One frame's carrier points (M, 3) float32 with as many correction slots as corrections
    (``with_slots`` pads them); ``guides`` (G, P, 3) world at the LOD; ``passes``: how many
    passes over the colliders the bake made (``collide_strands``); ``corrections``: (flat
    indices (C,), positions (C, 3)) of the points the body meshes moved, or None."""
    G, P, _ = guides.shape
    K = len(records)
    index, moved = corrections if corrections is not None else (np.zeros(0, np.int64),
                                                               np.zeros((0, 3)))
    C = len(index)
    header = np.zeros((HEADER, 3))
    header[0:4] = np.asarray(scalp_matrix, dtype=np.float64)[:3, :4].T
    header[4] = (clump, randomness, K)
    header[5] = (G, P, passes)
    header[6] = (root_radius, tip_radius, C)
    header[7, 0] = C
    frames = np.zeros((G, 2, 3))
    frames[:, 0, :2] = binding.corners[:, 1:]
    frames[:, 0, 2] = binding.flat
    frames[:, 1] = binding.helper
    keys = np.zeros((C, 3))
    keys[:, 0], keys[:, 1] = np.divmod(np.asarray(index, dtype=np.int64), P)
    return np.concatenate([header, guides.reshape(G * P, 3), frames.reshape(2 * G, 3),
                           records.reshape(K * COLLIDER_POINTS, 3), keys,
                           np.asarray(moved, dtype=np.float64).reshape(C, 3)]
                          ).astype(np.float32)


def corrections_in(carrier: np.ndarray) -> int:
    """How many corrections a carrier from ``carrier_points`` holds (its slots)."""
    return int(carrier[7, 0])


def with_slots(carrier: np.ndarray, slots: int) -> np.ndarray:
    """``carrier`` with its corrections padded to ``slots`` key and value slots (every frame of
    a bake has the same point count: the most corrections any frame has)."""
    C = corrections_in(carrier)
    if slots < C:
        raise ValueError(f"{slots} correction slots for {C} corrections")
    base = len(carrier) - 2 * C
    out = np.empty((base + 2 * slots, 3), dtype=np.float32)
    out[:base] = carrier[:base]
    out[7, 0] = slots
    out[base:base + C] = carrier[base:base + C]
    out[base + C:base + slots] = PADDING_KEY
    out[base + slots:base + slots + C] = carrier[base + C:]
    out[base + slots + C:] = 0.0
    return out
