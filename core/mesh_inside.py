"""Inside a closed body mesh beyond its reach: ray parity, then the nearest surface.

The mesh query (`mesh_colliders`) knows the side of a point only within the mesh's reach (Depth +
radius): a point deeper inside finds no triangle, and far outside it finds none either. Render
strands interpolated between guides round a head cut chords through it, up to 9 cm deep, so those
points stayed inside (`hair.collide`). Their side is decided here without a distance:

- **Closed parts only.** A part of the mesh (its triangles joined through shared vertices) is
  closed when each of its edges belongs to exactly two triangles (`mesh_colliders.closed_parts`).
  Only there is "inside" defined away from the surface: behind an open border or a thin open
  sheet a point far from it is on neither side, so open parts keep the query's behaviour (a
  point beyond the reach is left alone).
- **Ray parity** (Jordan's theorem; the crossing-number test of point-in-polygon, in 3D): a
  point is inside a closed part when a ray from it crosses that part an odd number of times.
  The ray goes straight up (+z), so its candidates are the triangles whose xy bounding box holds
  the point (a 2D grid of them). A ray through an edge or a vertex is decided by simulation of
  simplicity (Edelsbrunner & Mücke 1990): the point is taken as moved by (ε, ε²) in xy, and each
  edge's side is computed once, in a fixed orientation, for every triangle sharing it, so a ray
  through a shared edge counts exactly one of its two triangles where the surface crosses and
  none or both at a fold. Parts are counted apart (an eyeball inside a head is inside both; the
  total's parity would say outside).
- **Cheap first.** Only points the query did not find and that lie in a closed part's
  bounding 26-DOP (the slabs of the 13 directions of the axes, face and body diagonals over its
  vertices: nothing outside the vertices' convex hull is inside) are tested. Hair hanging past a
  head is outside it; the test runs on the few points left.
- **Nearest surface.** A point found inside goes to the nearest point of the closed parts
  (branch and bound over their triangles, Ericson's closest point, the angle-weighted
  pseudo-normal: `nearest_contacts`), looked for within the nearest crossing its ray found (a
  surface point that far away exists). Between two guides on a head the strand is a chord,
  and its points go out radially onto the arc.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .mesh_colliders import MAX_CELLS, _Topology, _topology, closed_parts, pseudo_normals
from .triangles import (
    REGION_A,
    REGION_AB,
    REGION_B,
    REGION_BC,
    REGION_C,
    REGION_CA,
    closest_on_triangle_rows,
    row_dot,
)

# The 13 directions of a 26-DOP: the axes, the face diagonals and the body diagonals (not
# normalised: a slab test needs none).
DOP_DIRECTIONS = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1],
                           [1, 1, 0], [1, -1, 0], [1, 0, 1], [1, 0, -1], [0, 1, 1], [0, 1, -1],
                           [1, 1, 1], [1, 1, -1], [1, -1, 1], [1, -1, -1]], dtype=np.float64).T
# Points tested against triangles at once (memory: ~150 bytes per pair).
MAX_RAY_PAIRS = 1 << 20
# Point-centroid distances of `nearest_contacts` at once (memory: 8 bytes each, a few arrays).
NEAREST_PAIRS = 1 << 22


@dataclass(frozen=True)
class ClosedShells:
    """The closed parts of one mesh: their triangles (C, 3), the part of each (C,) numbered
    0..parts-1, their topology (for the nearest-surface query) and their vertices."""

    triangles: np.ndarray
    part: np.ndarray
    parts: int
    topology: _Topology
    used: np.ndarray  # the vertices of the closed parts (their 26-DOP's)


_SHELLS: list = []  # [(the triangles array, its vertex count, ClosedShells or None)]


def closed_shells(triangles: np.ndarray, topology: _Topology) -> ClosedShells | None:
    """The closed parts of a mesh of `triangles` (None: it has none). Kept for the last few
    meshes, by the triangles array itself (the same object every frame; the parts take 9 ms on
    a 50k-triangle body)."""
    for t, count, shells in _SHELLS:
        if t is triangles and count == topology.vertex_count:
            return shells
    part, closed = closed_parts(triangles, topology)
    shells = None
    if closed.any():
        tris = triangles[closed]
        numbered = np.unique(part[closed], return_inverse=True)[1].reshape(-1)
        shells = ClosedShells(tris, numbered, int(numbered.max()) + 1,
                              _topology(tris, topology.vertex_count), np.unique(tris))
    _SHELLS[:] = [(triangles, topology.vertex_count, shells)] + _SHELLS[:3]
    return shells


def in_hull(vertices: np.ndarray, shells: ClosedShells, points: np.ndarray) -> np.ndarray:
    """(n,) bool: which `points` (n, 3) lie in the 26-DOP of the closed parts' vertices (the
    others are surely outside every closed part)."""
    projected = vertices[shells.used] @ DOP_DIRECTIONS  # (V, 13)
    # A margin for the rounding of the projections: keeping a point more is harmless.
    low, high = projected.min(axis=0) - 1e-9, projected.max(axis=0) + 1e-9
    p = points @ DOP_DIRECTIONS
    return np.all((p >= low) & (p <= high), axis=1)


def ray_parity(vertices: np.ndarray, shells: ClosedShells, points: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """(inside (n,) bool, bound (n,)): whether each of `points` (n, 3) is inside a closed part
    (an odd count of crossings of the ray up from it, in some part), and the distance to the
    nearest crossing of its vertical line (a surface point that far; inf when none)."""
    n = len(points)
    inside = np.zeros(n, dtype=bool)
    bound = np.full(n, np.inf)
    if not n:
        return inside, bound
    t = shells.triangles
    corners = vertices[t]  # (C, 3, 3)
    low, high = corners[..., :2].min(axis=1), corners[..., :2].max(axis=1)
    # The 2D grid: cells about as big as a triangle's box (each in 1-4 cells).
    extent = high - low
    cell = float(max(np.median(extent.max(axis=1)), 1e-6))
    origin = low.min(axis=0)
    span = high.max(axis=0) - origin
    while np.prod(np.floor(span / cell) + 1.0) > MAX_CELLS:  # a wide mesh: bigger cells
        cell *= 2.0
    dims = np.floor(span / cell).astype(np.int64) + 1
    first = np.floor((low - origin) / cell).astype(np.int64)
    last = np.minimum(np.floor((high - origin) / cell).astype(np.int64), dims - 1)
    counts = last - first + 1
    per = counts[:, 0] * counts[:, 1]
    triangle = np.repeat(np.arange(len(t)), per)
    local = np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per)
    ny = counts[triangle, 1]
    key = (first[triangle, 0] + local // ny) * dims[1] + first[triangle, 1] + local % ny
    order = np.argsort(key, kind="stable")
    entries = triangle[order]
    start = np.zeros(int(dims.prod()) + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=int(dims.prod())), out=start[1:])
    # The points' cells (outside the grid: no candidate).
    c = np.floor((points[:, :2] - origin) / cell)
    on = np.all((c >= 0) & (c < dims), axis=1)
    ci = np.where(on[:, None], c, 0).astype(np.int64)
    pkey = ci[:, 0] * dims[1] + ci[:, 1]
    count = np.where(on, start[pkey + 1] - start[pkey], 0)
    # Each edge's side of a point, once per edge in the orientation of its lower vertex index:
    # the same bits for both triangles that share it.
    edge_of = _edges(shells)
    ends = np.cumsum(count)
    done = 0
    while done < n:  # bounded memory: MAX_RAY_PAIRS pairs at a time
        stop = max(int(np.searchsorted(ends, (ends[done - 1] if done else 0) + MAX_RAY_PAIRS,
                                       side="right")), done + 1)
        _chunk(points, done, stop, count, start, pkey, entries, corners, low, high, t, edge_of,
               shells, inside, bound)
        done = stop
    return inside, bound


def _edges(shells: ClosedShells) -> np.ndarray:
    """(C, 3) bool: whether each triangle's edge (a, b), (b, c), (c, a) runs from its lower
    vertex index to its higher one."""
    t = shells.triangles
    return t < np.roll(t, -1, axis=1)


def _chunk(points, done, stop, count, start, pkey, entries, corners, low, high, t, forward,
           shells, inside, bound) -> None:
    """`ray_parity` for the points done..stop (in place)."""
    cnt = count[done:stop]
    point = np.repeat(np.arange(done, stop), cnt)
    entry = np.arange(int(cnt.sum())) + np.repeat(start[pkey[done:stop]] - (np.cumsum(cnt) - cnt),
                                                  cnt)
    tri = entries[entry]
    p = points[point]
    holds = np.all((low[tri] <= p[:, :2]) & (p[:, :2] <= high[tri]), axis=1)
    point, tri, p = point[holds], tri[holds], p[holds]
    if not len(point):
        return
    # Signed areas of (edge, point) in xy, each edge from its lower vertex index, then turned
    # to the triangle's own direction.
    side = np.empty((len(point), 3))
    sign = np.empty((len(point), 3))
    for k in range(3):
        a = corners[tri, k, :2]
        b = corners[tri, (k + 1) % 3, :2]
        fwd = forward[tri, k]
        lo, hi = np.where(fwd[:, None], a, b), np.where(fwd[:, None], b, a)
        d = hi - lo
        o = d[:, 0] * (p[:, 1] - lo[:, 1]) - d[:, 1] * (p[:, 0] - lo[:, 0])
        # On the edge's line: the point moved by (ε, ε²) decides (simulation of simplicity).
        tie = np.where(d[:, 1] != 0.0, -d[:, 1], d[:, 0])
        s = np.sign(np.where(o != 0.0, o, tie))
        side[:, k] = np.where(fwd, o, -o)
        sign[:, k] = np.where(fwd, s, -s)
    crosses = np.all(sign > 0.0, axis=1) | np.all(sign < 0.0, axis=1)
    point, tri, side = point[crosses], tri[crosses], side[crosses]
    if not len(point):
        return
    # Where the vertical line meets the triangle: its corners' heights weighted by the areas
    # opposite them (side k is edge k, opposite corner k + 2).
    area = side.sum(axis=1)
    z = corners[tri, :, 2]
    height = (side[:, 1] * z[:, 0] + side[:, 2] * z[:, 1] + side[:, 0] * z[:, 2]) / area
    gap = height - points[point, 2]
    np.minimum.at(bound, point, np.abs(gap))
    above = gap > 0.0
    key = point[above] * shells.parts + shells.part[tri[above]]
    keys, crossings = np.unique(key, return_counts=True)
    inside[keys[crossings % 2 == 1] // shells.parts] = True


def nearest_contacts(vertices: np.ndarray, shells: ClosedShells, points: np.ndarray,
                     bound: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index, outward normal, signed distance) of `points` (n, 3), each within `bound` (n,)
    of a surface point, to the nearest surface of the closed parts (`vertices` (V, 3) float64).

    The grid query's cells grow with its reach, and a point 4 cm deep in a head needs a reach
    that takes in nearly the whole head per point (0.8 s for 6,000 points). So branch and bound
    over all triangles instead, a chunk of points at a time: the distances to the triangles'
    centroids in one matrix product (|p|² - 2 p·c + |c|², about the mesh's centre), each
    triangle within its spread of its centroid, so a triangle whose lower bound (distance -
    spread) is above the point's least upper bound (distance + spread) cannot be nearest. The
    few left take Ericson's closest point; the side is the angle-weighted pseudo-normal's, as
    in every mesh contact (`mesh_colliders`), exact on a closed part; ties go to the lowest
    triangle index."""
    index = np.flatnonzero(np.isfinite(bound))
    if not len(index):
        return np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0)
    t = shells.triangles
    centre = vertices[shells.used].mean(axis=0)
    corners = vertices[t] - centre  # (C, 3, 3)
    centroid = corners.mean(axis=1)
    spread = np.sqrt(np.max(np.einsum("tkj,tkj->tk", corners - centroid[:, None],
                                      corners - centroid[:, None]), axis=1))
    spread = spread * (1.0 + 1e-9) + 1e-9  # a bound, never a hair short (and the rounding)
    cc = np.einsum("ij,ij->i", centroid, centroid)
    face, edge, vertex = pseudo_normals(shells.topology, vertices)
    x = points[index] - centre
    chunk = max(1, NEAREST_PAIRS // len(t))
    out_index, out_normal, out_distance = [], [], []
    for first in range(0, len(x), chunk):
        p = x[first:first + chunk]
        # Triangles near the chunk's points at all: within their bounds of the chunk's box.
        reach = float(bound[index[first:first + chunk]].max())
        low, high = p.min(axis=0) - reach, p.max(axis=0) + reach
        near = np.flatnonzero(np.all((centroid + spread[:, None] >= low)
                                     & (centroid - spread[:, None] <= high), axis=1))
        d2 = np.einsum("ij,ij->i", p, p)[:, None] - 2.0 * (p @ centroid[near].T) + cc[near]
        d = np.sqrt(np.maximum(d2, 0.0))
        upper = np.min(d + spread[near], axis=1)
        point, k = np.nonzero(d - spread[near] <= upper[:, None] + 1e-9)
        tri = near[k]
        P = np.ascontiguousarray(p[point].T)
        A, B, C = (np.ascontiguousarray(corners[tri, j].T) for j in range(3))
        closest, _, _, region = closest_on_triangle_rows(P, A, B, C)
        offset = P - closest
        dist2 = row_dot(offset, offset)
        starts = np.flatnonzero(np.r_[True, point[1:] != point[:-1]])
        least = np.minimum.reduceat(dist2, starts)
        group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(point)]))
        is_least = dist2 == least[group]
        lowest = np.minimum.reduceat(np.where(is_least, tri, np.iinfo(np.int64).max), starts)
        chosen = np.flatnonzero(is_least & (tri == lowest[group]))
        tri, region = tri[chosen], region[chosen]
        offset = np.ascontiguousarray(offset[:, chosen].T)
        distance = np.sqrt(dist2[chosen])
        feature = face[tri]
        for r, slot in ((REGION_AB, 0), (REGION_BC, 1), (REGION_CA, 2)):
            on = region == r
            feature[on] = edge[tri[on], slot]
        for r, corner in ((REGION_A, 0), (REGION_B, 1), (REGION_C, 2)):
            on = region == r
            feature[on] = vertex[t[tri[on], corner]]
        sign = np.where(np.einsum("ij,ij->i", offset, feature) < 0.0, -1.0, 1.0)
        normal = offset * (sign / np.maximum(distance, 1e-12))[:, None]
        out_index.append(index[first + point[chosen]])
        out_normal.append(normal)
        out_distance.append(sign * distance)
    return np.concatenate(out_index), np.concatenate(out_normal), np.concatenate(out_distance)
