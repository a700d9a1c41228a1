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
- **Nearest surface.** A point found inside goes to the nearest point of the parts it is
  inside through which it leaves the body (branch and bound down a tree of spheres and normal
  slabs over their triangles, Ericson's closest point, the angle-weighted pseudo-normal:
  `nearest_contacts`), looked for within the nearest crossing its ray found (a surface point
  that far away exists). Between two guides on a head the strand is a chord, and its points
  go out radially onto the arc.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .mesh_colliders import (
    MAX_CELLS,
    _Topology,
    _topology,
    cell_order,
    closed_parts,
    nearest_pairs,
    pseudo_normals,
)
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


@dataclass(frozen=True)
class Within:
    """The closed parts points are inside, one row per (point, part), by point then part: the
    point's index, the part, and the distance to the nearest crossing of the point's vertical
    line with that part (a point of the part's surface that far)."""

    point: np.ndarray
    part: np.ndarray
    bound: np.ndarray


def ray_parity(vertices: np.ndarray, shells: ClosedShells, points: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """(inside (n,) bool, bound (n,)): whether each of `points` (n, 3) is inside a closed part
    (an odd count of crossings of the ray up from it, in some part), and the distance to the
    nearest crossing of its vertical line (a surface point that far; inf when none)."""
    inside, bound, _ = _rays(vertices, shells, points)
    return inside, bound


def ray_within(vertices: np.ndarray, shells: ClosedShells, points: np.ndarray) -> Within:
    """The closed parts each of `points` (n, 3) is inside (ray parity, each part counted
    apart: an eyeball inside a head is inside both)."""
    return _rays(vertices, shells, points)[2]


def _rays(vertices: np.ndarray, shells: ClosedShells, points: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, Within]:
    """`ray_parity` and `ray_within` in one pass."""
    n = len(points)
    inside = np.zeros(n, dtype=bool)
    bound = np.full(n, np.inf)
    members: list = []
    if not n:
        return inside, bound, _within(members, shells.parts)
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
    order = cell_order(key, int(dims.prod()))
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
               shells, inside, bound, members)
        done = stop
    return inside, bound, _within(members, shells.parts)


def _within(members: list, parts: int) -> Within:
    """`Within` from the chunks' (point * parts + part, bound) rows (each chunk's in order,
    the chunks in the points' order)."""
    if not members:
        empty = np.zeros(0, dtype=np.int64)
        return Within(empty, empty, np.zeros(0))
    key = np.concatenate([k for k, _ in members])
    return Within(key // parts, key % parts, np.concatenate([b for _, b in members]))


def _edges(shells: ClosedShells) -> np.ndarray:
    """(C, 3) bool: whether each triangle's edge (a, b), (b, c), (c, a) runs from its lower
    vertex index to its higher one."""
    t = shells.triangles
    return t < np.roll(t, -1, axis=1)


def _chunk(points, done, stop, count, start, pkey, entries, corners, low, high, t, forward,
           shells, inside, bound, members) -> None:
    """`_rays` for the points done..stop (in place; their `Within` rows appended to
    `members`)."""
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
    # Per (point, part): the crossings above (their parity) and the nearest crossing.
    keys, which = np.unique(point * shells.parts + shells.part[tri], return_inverse=True)
    which = which.reshape(-1)
    crossings = np.bincount(which, weights=gap > 0.0, minlength=len(keys))
    nearest = np.full(len(keys), np.inf)
    np.minimum.at(nearest, which, np.abs(gap))
    odd = crossings % 2 == 1
    inside[keys[odd] // shells.parts] = True
    members.append((keys[odd], nearest[odd]))


# Rounds of `nearest_contacts` for a point whose nearest exit lies inside another part.
EXIT_ROUNDS = 3


def nearest_contacts(vertices: np.ndarray, shells: ClosedShells, points: np.ndarray,
                     within: Within) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index, outward normal, signed distance) of `points` (n, 3) inside closed parts
    (`within`, from `ray_within`) to the nearest surface they leave the body through
    (`vertices` (V, 3) float64).

    Each point looks only at the parts it is inside: a point in a head beside an eyeball is
    nearer the eyeball's surface but outside it, and that surface would leave it in the head.
    A point inside several parts (the eyeball and the head; a nose box that overlaps a head)
    takes the nearest of their surface points that is outside every part (on the union's
    surface: the head's, not the eyeball's, which lies inside the head), or the nearest of them
    all when none is. A surface point still inside another part (the head's surface under an
    overlapping nose) is searched on from there, up to `EXIT_ROUNDS` times; the contact is then
    the whole way out (its direction, minus its length). The search is a branch and bound down
    a tree of bounding volumes per part (`_SphereTree`), each point within its part's `bound`
    of a surface point, and Ericson's closest point on the few triangles left; the side is the
    angle-weighted pseudo-normal's, as in every mesh contact (`mesh_colliders`), exact on a
    closed part; ties go to the lowest triangle index."""
    if not len(within.point):
        return np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0)
    centre = vertices[shells.used].mean(axis=0)
    corners = vertices[shells.triangles] - centre  # (C, 3, 3)
    normals = pseudo_normals(shells.topology, vertices)
    trees: dict = {}
    hair = 1e-7 * float(np.ptp(corners.reshape(-1, 3), axis=0).max()) + 1e-9
    index, normal, distance, surface = _nearest_once(
        vertices, shells, points - centre, within, corners, normals, trees, centre, hair)
    if shells.parts == 1:
        return index, normal, distance
    start, probe = points[index], surface + centre + normal * hair
    moved = np.zeros(len(index), dtype=bool)
    for _ in range(EXIT_ROUNDS):
        further = ray_within(vertices, shells, probe)
        if not len(further.point):
            break
        at, n2, _, s2 = _nearest_once(vertices, shells, probe - centre, further, corners,
                                      normals, trees, centre, hair)
        surface[at], normal[at], moved[at] = s2, n2, True
        probe = surface + centre + normal * hair
    if moved.any():  # the whole way out from the point: its direction and length
        way = surface[moved] + centre - start[moved]
        length = np.sqrt(np.einsum("ij,ij->i", way, way))
        normal[moved] = way / np.maximum(length, 1e-12)[:, None]
        distance[moved] = -length
    return index, normal, distance


def _nearest_once(vertices, shells, x, within, corners, normals, trees, centre, hair):
    """One round of `nearest_contacts` for the points `x` (n, 3) about `centre`: (index,
    normal, signed distance, surface point about `centre`), one per point of `within`."""
    rows = []  # per part: (row of `within`, normal, signed distance, surface point)
    for part in np.unique(within.part):
        row = np.flatnonzero(within.part == part)
        triangles = np.flatnonzero(shells.part == part)
        if part not in trees:
            trees[part] = _SphereTree.build(corners[triangles])
        for first in range(0, len(row), NEAREST_POINTS):
            chunk = row[first:first + NEAREST_POINTS]
            p = x[within.point[chunk]]
            point, local = trees[part].candidates(p, within.bound[chunk])
            found, normal, distance, surface = _closest(p, point, triangles[local], corners,
                                                        shells, normals)
            rows.append((chunk[found], normal, distance, surface))
    row, normal, distance, surface = (np.concatenate(a) for a in zip(*rows, strict=True))
    order = np.argsort(row, kind="stable")
    row, normal, distance, surface = row[order], normal[order], distance[order], surface[order]
    index = within.point[row]
    first = np.r_[True, index[1:] != index[:-1]]
    if first.all():
        return index, normal, distance, surface
    # Points in several parts: the nearest surface point outside every part (moved off its
    # own part by a hair, so that part's parity says outside), else the nearest of all.
    several = np.isin(index, index[~first])
    free = np.ones(len(index), dtype=bool)
    free[several] = ~ray_parity(vertices, shells,
                                surface[several] + centre + normal[several] * hair)[0]
    order = np.lexsort((np.abs(distance), ~free, index))  # by point, free first, nearest
    pick = order[np.r_[True, index[order][1:] != index[order][:-1]]]
    return index[pick], normal[pick], distance[pick], surface[pick]


def _closest(p, point, tri, corners, shells, normals):
    """Of the (point, triangle) pairs (grouped by point), each point's nearest triangle (ties
    to the lowest index): (its rows in `p`, the outward normal, the signed distance and the
    surface point)."""
    face, edge, vertex = normals
    P = np.ascontiguousarray(p[point].T)
    A, B, C = (np.ascontiguousarray(corners[tri, j].T) for j in range(3))
    closest, _, _, region = closest_on_triangle_rows(P, A, B, C)
    offset = P - closest
    dist2 = row_dot(offset, offset)
    chosen = nearest_pairs(point, dist2, tri)[0]
    tri, region = tri[chosen], region[chosen]
    offset = np.ascontiguousarray(offset[:, chosen].T)
    distance = np.sqrt(dist2[chosen])
    feature = face[tri]
    for r, slot in ((REGION_AB, 0), (REGION_BC, 1), (REGION_CA, 2)):
        on = region == r
        feature[on] = edge[tri[on], slot]
    for r, corner in ((REGION_A, 0), (REGION_B, 1), (REGION_C, 2)):
        on = region == r
        feature[on] = vertex[shells.triangles[tri[on], corner]]
    sign = np.where(np.einsum("ij,ij->i", offset, feature) < 0.0, -1.0, 1.0)
    normal = offset * (sign / np.maximum(distance, 1e-12))[:, None]
    return point[chosen], normal, sign * distance, np.ascontiguousarray(closest[:, chosen].T)


# Children per node of the bounding-sphere tree, and points searched at once (their surviving
# (point, node) pairs are a few hundred each for points centimetres deep).
TREE_BRANCHING = 4
NEAREST_POINTS = 4096


@dataclass(frozen=True)
class _SphereTree:
    """Bounding volumes over triangles in a median-split order (`_median_order`: a node's
    triangles are near each other). Level 0 is the triangles; each level above groups
    `TREE_BRANCHING` consecutive nodes of the one below.

    A node bounds its triangles twice, and a point's distance to them is at least the larger of
    the two: a sphere (centre, radius) and a slab between two planes across its area-weighted
    normal (for a patch of a curved surface the slab is as thin as the patch's sagitta, so a
    point in front of it is bounded by nearly its true distance, where the sphere's bound is a
    radius short: deep in a head, hundreds of triangles fit within a radius of the nearest).
    The upper bound is the distance to a point on one of its triangles."""

    # Per node, as coordinate rows (`candidates` gathers them by node with np.take: its (point,
    # node) pairs are hundreds per point, and gathers of (nodes, 3) rows by fancy index took
    # 2.5x as long).
    order: np.ndarray  # (C,) the triangle at each level-0 position
    centres: tuple  # per level, (3, nodes)
    radii: tuple  # per level, (nodes,)
    surface: tuple  # per level, (3, nodes): a point on a triangle of the node
    axes: tuple  # per level, (3, nodes) unit normals of the slabs
    slabs: tuple  # per level, (2, nodes): the slab's low and high offsets along its axis

    @staticmethod
    def build(corners: np.ndarray) -> _SphereTree:
        centroid = corners.mean(axis=1)
        order = _median_order(centroid)
        corners, centroid = corners[order], centroid[order]
        offset = corners - centroid[:, None]
        spread = np.einsum("tkj,tkj->tk", offset, offset)
        radius = np.sqrt(np.maximum(np.maximum(spread[:, 0], spread[:, 1]), spread[:, 2]))
        area = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        # A bound, never a hair short (and the rounding of the distances it is compared with).
        centres, radii = [centroid], [radius * (1.0 + 1e-9) + 1e-9]
        # A triangle's centroid is on it; a node's surface point is its children's one nearest
        # its centre, so the distance to it is an upper bound that tightens level by level.
        surface = [centroid]
        axes, slabs = [], []
        size = 1
        while True:
            starts = np.arange(0, len(corners), size)
            member = np.arange(len(corners)) // size
            normal = np.add.reduceat(area, starts) if size > 1 else area.copy()
            length = np.sqrt(np.einsum("ij,ij->i", normal, normal))
            flat = length <= 1e-30  # no area (or opposite faces): any axis is a true bound
            normal[flat] = (0.0, 0.0, 1.0)
            normal /= np.where(flat, 1.0, length)[:, None]
            height = np.einsum("tkj,tj->tk", corners, normal[member])
            lowest = np.minimum(np.minimum(height[:, 0], height[:, 1]), height[:, 2])
            highest = np.maximum(np.maximum(height[:, 0], height[:, 1]), height[:, 2])
            slab = np.stack([np.minimum.reduceat(lowest, starts),
                             np.maximum.reduceat(highest, starts)], axis=1)
            slack = 1e-9 * (1.0 + np.abs(slab))  # the rounding of the projections
            axes.append(normal)
            slabs.append(slab + np.stack([-slack[:, 0], slack[:, 1]], axis=1))
            if len(centres[-1]) <= TREE_BRANCHING:
                break
            c, r, on = centres[-1], radii[-1], surface[-1]
            up = np.arange(0, len(c), TREE_BRANCHING)
            box_low = np.minimum.reduceat(c - r[:, None], up)
            box_high = np.maximum.reduceat(c + r[:, None], up)
            parent = 0.5 * (box_low + box_high)
            child = np.arange(len(c)) // TREE_BRANCHING
            reach = np.sqrt(np.einsum("ij,ij->i", c - parent[child], c - parent[child])) + r
            centres.append(parent)
            radii.append(np.maximum.reduceat(reach, up) * (1.0 + 1e-9) + 1e-9)
            near = np.einsum("ij,ij->i", on - parent[child], on - parent[child])
            first = np.flatnonzero(near == np.minimum.reduceat(near, up)[child])
            surface.append(on[first[np.r_[True, np.diff(child[first]) != 0]]])
            size *= TREE_BRANCHING
        rows = [tuple(np.ascontiguousarray(a.T) for a in level)
                for level in (centres, surface, axes, slabs)]
        return _SphereTree(order, rows[0], tuple(radii), rows[1], rows[2], rows[3])

    def candidates(self, p: np.ndarray, bound: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(point, triangle) pairs, grouped by point in order: every triangle that may hold
        the nearest surface point of each of `p` (n, 3), each within `bound` (n,) of one."""
        upper = bound * (1.0 + 1e-9) + 1e-9
        top = self.centres[-1].shape[1]
        rows = np.ascontiguousarray(p.T)  # (3, n)
        point = np.repeat(np.arange(len(p)), top)
        node = np.tile(np.arange(top), len(p))
        for level in range(len(self.centres) - 1, -1, -1):
            if level < len(self.centres) - 1:  # the children of the nodes kept
                count = np.minimum(TREE_BRANCHING,
                                   self.centres[level].shape[1] - node * TREE_BRANCHING)
                point = np.repeat(point, count)
                node = (np.repeat(node * TREE_BRANCHING - (np.cumsum(count) - count), count)
                        + np.arange(int(count.sum())))
            # row_dot sums as einsum over rows of 3 did: the same bounds, bit for bit.
            q = np.take(rows, point, axis=1)
            d = q - np.take(self.centres[level], node, axis=1)
            d = np.sqrt(row_dot(d, d))
            if level:
                e = q - np.take(self.surface[level], node, axis=1)
                e = np.sqrt(row_dot(e, e))
            else:
                e = d  # a triangle's centre is its centroid, a point on it
            starts = np.flatnonzero(np.r_[True, point[1:] != point[:-1]])
            np.minimum(upper, np.minimum.reduceat(e, starts) * (1.0 + 1e-9) + 1e-9, out=upper)
            h = row_dot(q, np.take(self.axes[level], node, axis=1))
            slab = np.take(self.slabs[level], node, axis=1)
            lower = np.maximum(np.maximum(d - self.radii[level].take(node), slab[0] - h),
                               h - slab[1])
            keep = lower <= upper.take(point) + 1e-9
            point, node = point[keep], node[keep]
        return point, self.order[node]


def _median_order(centroid: np.ndarray) -> np.ndarray:
    """(C,) an order of the triangles (by their centroids (C, 3)) in which every aligned block
    of `TREE_BRANCHING`**k is a compact cluster: top down, each block is sorted along the
    widest axis of its centroids' box and cut into `TREE_BRANCHING` blocks (a median-split
    BVH's partition, all blocks of a level in one sort: the block's number plus the
    coordinate scaled into [0, 0.5] of its box)."""
    count = len(centroid)
    size = 1
    while size * TREE_BRANCHING < count:
        size *= TREE_BRANCHING
    order = np.arange(count)
    position = np.arange(count)
    while size >= 1:
        block = position // (size * TREE_BRANCHING)
        starts = np.flatnonzero(np.r_[True, block[1:] != block[:-1]])
        c = centroid[order]
        low = np.minimum.reduceat(c, starts)
        extent = np.maximum.reduceat(c, starts) - low
        axis = np.argmax(extent, axis=1)
        each = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, count]))
        pick = axis[each]
        scaled = (c[position, pick] - low[each, pick]) / np.maximum(extent[each, pick],
                                                                         1e-300)
        order = order[np.argsort(block + 0.5 * scaled, kind="stable")]
        size //= TREE_BRANCHING
    return order
