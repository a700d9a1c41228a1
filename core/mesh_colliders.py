"""Body-mesh colliders: particles pushed out of a deforming triangle mesh (a skinned body).

The add-on samples the collider mesh's evaluated (deformed) vertices in world space at every
sample time, with the other inputs; the triangles are fixed for the bake. Between two samples a
vertex moves linearly, like every other input (`timestep.frame_interval`).

Why a per-interval triangle grid and not a signed distance field: a body deformed by skinning
has no rest-space field that stays exact at the joints (the bend folds it), and building a
narrow-band field per sample is as costly as the grid while it blurs thin parts (fingers, ears)
to the voxel size. The grid is exact: the distance is to the real triangles, for open meshes as
well as closed ones.

- **Broad phase.** For a span of `GRID_SPAN` sample intervals every triangle goes into the cells
  of a uniform grid its bounding box over the span, grown by the search reach, overlaps. A
  particle reads the triangles of its one cell: every triangle within `reach` of it is there.
- **Staged** (`MeshField.staged_contacts`): a near query of a small reach finds the particles
  close to the surface; the others go by the side of their nearest corner on a lattice, and only
  those whose corner is inside get the full reach. Corner sides are kept from one query to the
  next while the mesh has moved less than the surface's distance from them.
- **Branch and bound**: a candidate whose distance is surely above another candidate's (by its
  centroid and spread) is dropped before the exact test.
- **Kept candidates** (`MeshField._kept_contacts`): the solver pushes the same particles four to
  six times a substep; each one's candidates within a margin past the reach are kept with
  bounds on their distances, and reused while it has moved less than the margin: only those
  that may still be the nearest are tested again. A point far from the mesh's box, or known
  outside by more than it has moved since, is not asked again, or needs no lattice corner.
- **Closest point** on each candidate triangle: Ericson, *Real-Time Collision Detection* (2005)
  §5.1.5, by Voronoi region, vectorised over the candidate pairs.
- **Inside or outside** from the angle-weighted pseudo-normal of the closest feature (face, edge
  or vertex): Bærentzen & Aanæs, "Signed distance computation using the angle weighted
  pseudonormal" (IEEE TVCG 2005). Exact for closed meshes wherever the closest point is; an
  open mesh's boundary edge uses its one face, so an open mesh is solid on its front side.
- **Push and friction** as for the shape colliders (`colliders.push_out`): the particle goes out
  to its radius along the normal; position-based Coulomb friction (Macklin et al. 2014) acts on
  its motion relative to the surface point, which moves with the mesh's vertices.

A particle deeper inside than `reach` finds no triangle and is left alone (it is not pushed
through to a far surface). Thin parts: the closest surface wins, so a particle pushed past the
middle of a finger leaves on the other side.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .errors import SetupError
from .timestep import frame_interval
from .transcendental import arctan2
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

_EPS = 1e-12
# Sample intervals one triangle grid serves (the triangles' bounds are taken over all of them):
# 4 intervals at the default 120 Hz sampling is a grid per 33 ms of animation.
GRID_SPAN = 4
# The grid's cell count is kept below this by growing its cells (a mesh spread over a large
# area, e.g. a ground plane, would otherwise ask for a huge grid).
MAX_CELLS = 1 << 22
# How far inside a mesh's surface a particle is still found and pushed out, beyond its radius
# (metres). One substep moves a hair tip about a centimetre (3 m/s at 240 Hz). The cost grows
# with it: a point tests the triangles within about this distance.
DEFAULT_DEPTH = 0.02
# Point-triangle pairs tested at once (memory: ~100 bytes each). Small enough that a chunk's
# ~40 arrays of pairs stay in the processor's caches: the 34,000 lattice nodes of 20,000 render
# strands on a 5k-triangle head (2.0M pairs) took 321 ms in one chunk, 209 in chunks of 1 << 17
# (217 at 1 << 19, 257 at 1 << 15: the per-chunk calls start to count); the same contacts.
MAX_PAIRS = 1 << 17
# The near query's reach past the largest radius, as a fraction of the mesh's Depth
# (`MeshField.staged_contacts`).
NEAR_FRACTION = 0.125
# `push_out`'s near query keeps each point's candidate triangles within its reach grown by this
# fraction of it, and reuses them while the point and the mesh have moved less than that margin
# together (`MeshField._kept_contacts`).
KEPT_MARGIN = 0.25
# Candidates kept per point at most (a point with more, e.g. at a UV sphere's pole, is looked up
# in the grid at every query). Measured on issue 13's body (1,000 guides x 32 falling onto a
# 50k-triangle sphere, ~0.8M point queries over 3 frames): with 32 slots, margins of 1/4, 1/2
# and all of the reach looked 0.35M, 0.46M and 0.70M of them up in the grid (a wider margin
# holds more candidates than the slots) and tested 6.3M, 8.2M and 10.6M pairs; 1/4 with 64
# slots 0.23M and 4.1M, with 128 0.22M and 3.8M (twice the memory: 12 bytes a slot).
KEPT_WIDTH = 64


@dataclass(frozen=True)
class MeshColliders:
    """M body-mesh colliders: triangles once, world vertices per sample (see module doc)."""

    names: tuple[str, ...]
    triangles: tuple[np.ndarray, ...]  # per mesh (T, 3) int64 vertex indices
    vertices: tuple[np.ndarray, ...]  # per mesh (F, V, 3) world metres, float32 or float64
    friction: np.ndarray  # (M,) Coulomb coefficients
    depth: np.ndarray  # (M,) how far inside the surface a particle is still pushed out, metres

    @property
    def count(self) -> int:
        return len(self.names)

    @classmethod
    def create(cls, *, names: Sequence[str], triangles: Sequence, vertices: Sequence,
               friction: Sequence[float] | None = None,
               depth: Sequence[float] | None = None) -> MeshColliders:
        """Build and validate; `SetupError` names the collider at fault."""
        names = tuple(str(n) for n in names)
        M = len(names)
        if len(triangles) != M or len(vertices) != M:
            raise SetupError(f"{M} mesh colliders but {len(triangles)} triangle arrays and "
                             f"{len(vertices)} vertex arrays")
        tris, verts = [], []
        frames = None
        for name, t, v in zip(names, triangles, vertices, strict=True):
            t = np.asarray(t)
            if t.ndim != 2 or t.shape[1] != 3 or len(t) == 0:
                raise SetupError(f"collider '{name}': a mesh collider needs faces; this mesh "
                                 f"has none (triangles of shape {t.shape})")
            v = np.asarray(v)
            if v.dtype not in (np.float32, np.float64):
                v = v.astype(np.float64)
            if v.ndim != 3 or v.shape[2] != 3 or v.shape[0] < 1:
                raise SetupError(f"collider '{name}': vertices have shape {v.shape}, expected "
                                 "(frames, vertices, 3)")
            if frames is not None and v.shape[0] != frames:
                raise SetupError(f"collider '{name}': {v.shape[0]} sampled frames, the other "
                                 f"mesh colliders have {frames}")
            frames = v.shape[0]
            if t.min() < 0 or t.max() >= v.shape[1]:
                raise SetupError(f"collider '{name}': a face uses vertex {int(t.max())} of "
                                 f"{v.shape[1]}")
            finite = np.isfinite(v).all(axis=(1, 2))
            if not finite.all():
                raise SetupError(f"collider '{name}': vertex positions at frame index "
                                 f"{int(np.flatnonzero(~finite)[0])} are not finite")
            tris.append(np.ascontiguousarray(t, dtype=np.int64))
            verts.append(v)

        def column(values, default: float, field: str) -> np.ndarray:
            if values is None:
                return np.full(M, default)
            array = np.asarray(values, dtype=np.float64).reshape(-1)
            if array.shape != (M,):
                raise SetupError(f"mesh collider field '{field}' has {array.size} values for "
                                 f"{M} colliders")
            return array.copy()

        friction = column(friction, 0.0, "friction")
        depth = column(depth, DEFAULT_DEPTH, "depth")
        for i, name in enumerate(names):
            if not (np.isfinite(friction[i]) and friction[i] >= 0.0):
                raise SetupError(f"collider '{name}': friction {friction[i]!r} must be finite "
                                 "and not negative")
            if not (np.isfinite(depth[i]) and depth[i] > 0.0):
                raise SetupError(f"collider '{name}': depth {depth[i]!r} must be positive")
        return cls(names, tuple(tris), tuple(verts), friction, depth)

    def frames(self) -> int:
        return int(self.vertices[0].shape[0]) if self.names else 0

    def check_frames(self, frames: int) -> None:
        """`SetupError` when the meshes were sampled at a different count than the drive."""
        if self.names and self.frames() != frames:
            raise SetupError(f"mesh collider '{self.names[0]}' has {self.frames()} sampled "
                             f"frames, the drive {frames}")


def check_meshes(meshes: MeshColliders | None, mask, frames: int, owners: int
                 ) -> tuple[MeshColliders | None, np.ndarray | None]:
    """The mesh colliders (None when there is none) and their (M, owners) bool mask, checked
    against the drive's sample count."""
    if meshes is None or meshes.count == 0:
        return None, None
    meshes.check_frames(frames)
    if mask is None:
        return meshes, np.ones((meshes.count, owners), dtype=bool)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (meshes.count, owners):
        raise SetupError(f"mesh_mask has shape {mask.shape}, expected "
                         f"{(meshes.count, owners)}")
    return meshes, mask


# --------------------------------------------------------------------------------------------
# Topology and normals.


def outward(triangles: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    """`triangles` (T, 3) wound so each closed part of the mesh faces out of it. A part (the
    triangles joined through shared vertices) is closed when each of its edges belongs to
    exactly two triangles; it is turned when its signed volume (divergence theorem, the sum of
    a·(b×c)/6) is negative. A part whose normals were flipped while modelling, or that was built
    inside out, otherwise collides inside out: its outside is taken for its inside, and
    particles are pushed into the body. An open part has no volume and is left as wound (its
    front side is solid)."""
    t = np.asarray(triangles, dtype=np.int64)
    if not len(t):
        return t
    part, closed = closed_parts(t, _topology(t, int(t.max()) + 1))
    parts = int(part.max()) + 1
    v = np.asarray(vertices, dtype=np.float64)
    # About the centroid: the sum does not depend on the origin, its rounding does.
    a, b, c = (v[t[:, i]] - v.mean(axis=0) for i in range(3))
    volume = np.bincount(part, weights=np.einsum("ij,ij->i", a, np.cross(b, c)),
                         minlength=parts)
    turn = closed & (volume < 0.0)[part]
    if not turn.any():
        return t
    out = t.copy()
    out[turn] = t[turn, ::-1]
    return out


def closed_parts(triangles: np.ndarray, topology: _Topology) -> tuple[np.ndarray, np.ndarray]:
    """(part (T,), closed (T,) bool): the connected part of each triangle (`_parts`) and
    whether that part is closed (each of its edges belongs to exactly two triangles: a
    watertight, manifold shell with an inside)."""
    part = _parts(triangles)
    uses = np.bincount(topology.edge_of.reshape(-1), minlength=topology.edges)
    parts = int(part.max()) + 1
    open_edges = np.bincount(np.repeat(part, 3), weights=uses[topology.edge_of.reshape(-1)] != 2,
                             minlength=parts)
    return part, (open_edges == 0)[part]


def _parts(triangles: np.ndarray) -> np.ndarray:
    """The connected part (0, 1, ...) of each triangle, joined through shared vertices
    (`connected_roots` over the triangles' edges)."""
    u = triangles.reshape(-1)
    v = np.roll(triangles, -1, axis=1).reshape(-1)
    parent = connected_roots(int(triangles.max()) + 1, u, v)
    return np.unique(parent[triangles[:, 0]], return_inverse=True)[1].reshape(-1)


def connected_roots(count: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The root (smallest member) of each of `count` nodes' connected part, joined by the edges
    (u, v): each round hooks the root of every edge's larger end under the smaller one, then
    shortcuts every node to its root (pointer jumping; Shiloach & Vishkin 1982), a few rounds
    for any graph."""
    parent = np.arange(count)
    while True:
        pu, pv = parent[u], parent[v]
        joined = pu != pv
        if not joined.any():
            break
        np.minimum.at(parent, np.maximum(pu, pv)[joined], np.minimum(pu, pv)[joined])
        while True:  # every node straight to its root
            root = parent[parent]
            if np.array_equal(root, parent):
                break
            parent = root
    return parent


@dataclass(frozen=True)
class _Topology:
    triangles: np.ndarray  # (T, 3)
    edge_of: np.ndarray  # (T, 3) unique edge index of edge (a,b), (b,c), (c,a)
    edges: int
    vertex_count: int


def _topology(triangles: np.ndarray, vertex_count: int) -> _Topology:
    t = triangles
    pairs = np.stack([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]], axis=1).reshape(-1, 2)
    pairs = np.sort(pairs, axis=1)
    key = pairs[:, 0] * np.int64(vertex_count) + pairs[:, 1]
    unique, inverse = np.unique(key, return_inverse=True)
    return _Topology(t, inverse.reshape(-1, 3), len(unique), vertex_count)


def pseudo_normals(topology: _Topology, vertices: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(face (T, 3), edge (T, 3, 3), vertex (V, 3)) angle-weighted pseudo-normals (Bærentzen &
    Aanæs 2005): the face's unit normal; an edge's the sum of its faces' unit normals; a
    vertex's the sum of its faces' unit normals weighted by the face's angle at the vertex.
    Not normalised except the face's (only their direction is used)."""
    t = topology.triangles
    a, b, c = vertices[t[:, 0]], vertices[t[:, 1]], vertices[t[:, 2]]
    face = np.cross(b - a, c - a)
    length = np.sqrt(np.einsum("ij,ij->i", face, face))
    face /= np.maximum(length, _EPS)[:, None]
    E = topology.edges
    edge_sum = np.empty((E, 3))
    flat_edges = topology.edge_of.reshape(-1)
    for k in range(3):
        edge_sum[:, k] = np.bincount(flat_edges, weights=np.repeat(face[:, k], 3), minlength=E)
    edge = edge_sum[topology.edge_of]
    # Corner angles from atan2(|u x v|, u . v): accurate at every angle.
    V = topology.vertex_count
    vertex = np.zeros((V, 3))
    for corner, (p, q, r) in enumerate(((a, b, c), (b, c, a), (c, a, b))):
        u, v = q - p, r - p
        cross = np.cross(u, v)
        angle = arctan2(np.sqrt(np.einsum("ij,ij->i", cross, cross)),
                        np.einsum("ij,ij->i", u, v))
        for k in range(3):
            vertex[:, k] += np.bincount(t[:, corner], weights=angle * face[:, k], minlength=V)
    return face, edge, vertex


# --------------------------------------------------------------------------------------------
# The broad phase: a uniform grid of the triangles, per span of sample intervals.


@dataclass(frozen=True)
class TriangleGrid:
    """Triangles by cell: cell `i` holds `entries[start[i]:start[i + 1]]`."""

    origin: np.ndarray  # (3,)
    cell: float
    dims: np.ndarray  # (3,) int64
    start: np.ndarray  # (cells + 1,) int64
    entries: np.ndarray  # (n,) triangle indices
    # Spheres holding each triangle over the whole span, grown by the reach (a point outside
    # a triangle's sphere is farther than the reach from it): their centres (3, n) and squared
    # radii (n,) per entry, in the entries' order, so a cell's candidates are read as one
    # contiguous run instead of gathered by triangle.
    entry_centre: np.ndarray
    entry_bound2: np.ndarray
    # The box (2, 3) holding every triangle over the span (not grown): a point d from it is
    # at least d from the mesh.
    bounds: np.ndarray
    # A moving mesh's grid is built in coordinates that move with it (`span_shift`): its
    # shift (S, 3) at each sample of the span from sample `first` on, None for a still mesh.
    shift: np.ndarray | None = None
    first: int = 0


def span_boxes(vertices: np.ndarray, triangles: np.ndarray, shift: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) (T, 3) float64: the box of each triangle (T, 3) over every sample of
    `vertices` (S, V, 3), less each sample's `shift` (S, 3) when given. Unshifted, the same
    numbers as a min and max over the gathered corners (S, T, 3, 3) (a minimum is exact in any
    order), without gathering them: each vertex's box over the samples first (whole (V, 3)
    arrays compared, not a reduction over two strided axes), then the three corners' boxes. On
    a 50k-triangle body over 4 samples the bounds took ~60 ms of gathering and ~90 of strided
    reduction."""
    if shift is not None:
        vertices = vertices - shift[:, None, :]
    v_low = np.minimum.reduce(vertices, axis=0).astype(np.float64)
    v_high = np.maximum.reduce(vertices, axis=0).astype(np.float64)
    corner_low = [v_low.take(triangles[:, k], axis=0) for k in range(3)]
    corner_high = [v_high.take(triangles[:, k], axis=0) for k in range(3)]
    low = np.minimum(np.minimum(corner_low[0], corner_low[1]), corner_low[2])
    high = np.maximum(np.maximum(corner_high[0], corner_high[1]), corner_high[2])
    return low, high


def span_shift(vertices: np.ndarray) -> np.ndarray | None:
    """How far the mean of the vertices (S, V, 3) has moved from the first sample at each
    sample (S, 3), or None when it has not (a still mesh: the same arrays, the same means).

    A span's grid holds each triangle in the cells its box over every sample of the span
    covers: a mesh carried along (a character walking, root motion) sweeps every box over the
    whole way it went, and each point's cell holds the triangles of that whole strip. Built in
    coordinates that move with the mean (each sample's vertices less its shift; a point at
    time t less the shift blended as the vertices are), a box sweeps only the motion relative
    to the mean (deformation, turning). A vertex at time t less the blended shift is the same
    blend of its samples less theirs: inside its box, so every triangle within reach of a
    point is still in its cell. Issue 13's body (1,000 guides x 32 over a 49,500-triangle body)
    carried 1 cm a frame and scaled by 1 % at 24 samples a second: 86 candidate pairs per
    point looked up instead of ~15, the bake 4 times slower than on the still body."""
    if len(vertices) < 2:
        return None
    mean = vertices.mean(axis=1, dtype=np.float64)  # (S, 3)
    shift = mean - mean[0]
    return shift if shift.any() else None


def grid_of_boxes(low: np.ndarray, high: np.ndarray, reach: float) -> TriangleGrid:
    """The grid of triangles given each one's box (low, high) (T, 3) over the span (not grown,
    `span_boxes`): each triangle in every cell its box grown by `reach` overlaps."""
    low, high = low.copy(), high.copy()
    bounds = np.stack([low.min(axis=0), high.max(axis=0)])
    low -= reach
    high += reach
    extent = high - low
    # Cells half as big as the triangles' grown boxes (a box covers 2-3 cells per axis).
    # Measured on a 50k-triangle sphere with 32k points near it: cells as big as the boxes
    # 0.96 s per query (491 candidates per point), half 0.71 s (245), a third 0.58 s but a
    # grid 3x bigger to build per span.
    cell = float(max(0.5 * np.median(extent.max(axis=1)), _EPS))
    origin = low.min(axis=0)
    span = high.max(axis=0) - origin
    while np.prod(np.floor(span / cell) + 1.0) > MAX_CELLS:
        cell *= 2.0
    dims = (np.floor(span / cell) + 1).astype(np.int64)
    first = np.floor((low - origin) / cell).astype(np.int64)
    last = np.minimum(np.floor((high - origin) / cell).astype(np.int64), dims - 1)
    counts = last - first + 1  # (T, 3)
    per_triangle = counts.prod(axis=1)
    triangle = np.repeat(np.arange(len(low)), per_triangle)
    key = _entry_keys(first, counts, per_triangle, dims)
    cells = int(dims.prod())
    order = cell_order(key, cells)
    start = np.zeros(cells + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=cells), out=start[1:])
    centre = 0.5 * (low + high)
    raw = extent - 2.0 * reach  # the swept box before growing
    bound = 0.5 * np.sqrt(np.einsum("ij,ij->i", raw, raw)) + reach
    entries = triangle[order]
    return TriangleGrid(origin=origin, cell=cell, dims=dims, start=start, entries=entries,
                        # (from contiguous rows: gathered along a strided axis, 1.2M
                        # entries of a 50k-triangle body took 78 ms instead of 18)
                        entry_centre=np.take(np.ascontiguousarray(centre.T), entries, axis=1),
                        entry_bound2=np.square(bound).take(entries), bounds=bounds)


def _entry_keys(first: np.ndarray, counts: np.ndarray, per_triangle: np.ndarray,
                dims: np.ndarray) -> np.ndarray:
    """The cell number of every grid entry: triangle after triangle, each one's cells of its
    box (`first` (T, 3) its lowest cell, `counts` (T, 3) cells per axis, `per_triangle` their
    product) x-major, then y, then z. A cell's number is its first cell's plus the offset
    (lx·dims₁ + ly)·dims₂ + lz, which depends only on the box's shape: the offsets are tabled
    once per shape (a few dozen) and gathered, instead of dividing every entry's running
    number by the box's sides (the same integers; a 50k-triangle body's 1.1M entries, ~20
    passes over them before, 6 now)."""
    # The shapes, numbered by marking a dense array of their codes (np.unique over rows sorts
    # them as records: slower than the whole gather).
    side = int(counts.max()) + 1
    code = (counts[:, 0] * side + counts[:, 1]) * side + counts[:, 2]
    present = np.zeros(side ** 3, dtype=bool)
    present[code] = True
    shapes = np.flatnonzero(present)
    number = np.zeros(side ** 3, dtype=np.int64)
    number[shapes] = np.arange(len(shapes))
    shape_of = number.take(code)
    width = int(per_triangle.max())
    table = np.zeros((len(shapes), width), dtype=np.int64)
    for s, shape in enumerate(shapes.tolist()):
        cx, cy, cz = shape // (side * side), shape // side % side, shape % side
        lx, ly, lz = np.meshgrid(np.arange(cx), np.arange(cy), np.arange(cz), indexing="ij")
        table[s, :cx * cy * cz] = ((lx * dims[1] + ly) * dims[2] + lz).reshape(-1)
    base = (first[:, 0] * dims[1] + first[:, 1]) * dims[2] + first[:, 2]
    # Entry i of triangle t reads table row shape_of[t] at column i - (t's first entry).
    runs = np.cumsum(per_triangle) - per_triangle
    at = np.arange(int(per_triangle.sum()), dtype=np.int64)
    at += np.repeat(shape_of * width - runs, per_triangle)
    key = table.reshape(-1).take(at)
    key += np.repeat(base, per_triangle)
    return key


def cell_order(key: np.ndarray, cells: int) -> np.ndarray:
    """np.argsort(key, kind="stable") of cell numbers `key` in 0..cells-1: the same order.
    Up to 2**16 cells the keys are sorted as uint16, for which NumPy's stable sort is a radix
    sort: 150,000 grid entries in 4,096 cells (a render strands' lattice node grid over a head)
    took 2.7 ms instead of 14.7. Up to 2**32 cells, two such passes (least significant digit
    first; each stable, so the second keeps the first's order within its equal digits: a
    stable sort of the whole key): the 1.1M entries of a 50k-triangle body's grid in 97,000
    cells took 46 ms instead of 78 (timsort)."""
    if cells <= 1 << 16:
        return np.argsort(key.astype(np.uint16), kind="stable")
    if cells <= 1 << 32:
        order = np.argsort(key.astype(np.uint16), kind="stable")  # the low 16 bits
        high = (key.take(order) >> 16).astype(np.uint16)
        return order.take(np.argsort(high, kind="stable"))
    return np.argsort(key, kind="stable")


def _cells(grid: TriangleGrid, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each point's cell key (0 outside the grid) and whether it is inside the grid."""
    # On coordinate rows (3, n): the same numbers, without NumPy's slow loops over an axis of
    # 3 (the all(axis=1) took half the time: 220,000 render strand points 23 -> 11 ms).
    index = np.floor((points.T - grid.origin[:, None]) / grid.cell)
    inside = (index[0] >= 0) & (index[0] < grid.dims[0])
    for a in (1, 2):
        inside &= (index[a] >= 0) & (index[a] < grid.dims[a])
    idx = index.astype(np.int64)
    key = np.where(inside, (idx[0] * grid.dims[1] + idx[1]) * grid.dims[2] + idx[2], 0)
    return key, inside


def cell_counts(grid: TriangleGrid, points: np.ndarray) -> np.ndarray:
    """How many candidate triangles each point has (0 outside the grid)."""
    key, inside = _cells(grid, points)
    return np.where(inside, grid.start[key + 1] - grid.start[key], 0)


def candidates(grid: TriangleGrid, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(point index, triangle index) pairs: every triangle in each point's cell."""
    _, point, entry = _candidate_entries(grid, points)
    return point, grid.entries[entry]


def _candidate_entries(grid: TriangleGrid, points: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(count (N,), point (n,), entry (n,)): each point's candidate count, and its candidates
    as positions in the grid's entries, grouped by point in order."""
    key, inside = _cells(grid, points)
    first = grid.start[key]
    count = np.where(inside, grid.start[key + 1] - first, 0)
    total = int(count.sum())
    point = np.repeat(np.arange(len(points)), count)
    entry = np.arange(total) + np.repeat(first - (np.cumsum(count) - count), count)
    return count, point, entry


# --------------------------------------------------------------------------------------------
# The bake-time field: grids and normals per span, contacts per substep.


@dataclass
class Contacts:
    """Particles within reach of a mesh: their index, outward normal, signed distance and the
    motion of their closest surface point over the substep."""

    index: np.ndarray  # (C,) into the queried points
    normal: np.ndarray  # (C, 3)
    distance: np.ndarray  # (C,) signed: negative inside
    surface_motion: np.ndarray  # (C, 3) metres over the substep


@dataclass
class _KeptCandidates:
    """`MeshField._kept_contacts`' candidates, by point id: where each point was when they
    were found (in the mesh's moving frame, `MeshField._origin`), the mesh's `_travel` then,
    whether they are kept (at most `KEPT_WIDTH`), where it was and the `_travel` when their
    bounds were last set, the nearest distance then, the point's odometer (a bound on its
    motion relative to the mesh, summed over its queries since it was fresh), and per candidate
    slot its triangle and a lower bound on its distance plus the odometer when that bound was
    set (NaN: an empty slot). Stored so, a bound set at odometer O_j bounds the distance at
    odometer O by itself less O: a query rewrites only the slots it tests, not the whole
    (KEPT_WIDTH) row."""

    at: np.ndarray  # (N, 3)
    travel: np.ndarray  # (N,)
    seen_at: np.ndarray  # (N, 3)
    seen_travel: np.ndarray  # (N,)
    valid: np.ndarray  # (N,) bool
    nearest: np.ndarray  # (N,)
    triangle: np.ndarray  # (N, KEPT_WIDTH) int32
    lower: np.ndarray  # (N, KEPT_WIDTH) lower bound + odometer then
    odometer: np.ndarray  # (N,)

    @classmethod
    def empty(cls, n: int) -> _KeptCandidates:
        return cls(np.zeros((n, 3)), np.zeros(n), np.zeros((n, 3)), np.zeros(n),
                   np.zeros(n, dtype=bool), np.zeros(n),
                   np.zeros((n, KEPT_WIDTH), dtype=np.int32), np.full((n, KEPT_WIDTH), np.nan),
                   np.zeros(n))


class MeshField:
    """The mesh colliders over a bake at `fps` samples per second; `reach` (M,) is how far from
    a surface particles are looked for (their largest radius + the collider's depth)."""

    def __init__(self, meshes: MeshColliders, *, fps: float, radius: float,
                 topology: list[_Topology] | None = None):
        """`topology`: the meshes' (another field's of the same meshes), when already known."""
        self.meshes = meshes
        self.fps = float(fps)
        self.F = meshes.frames()
        self.reach = float(radius) + meshes.depth
        self.topology = topology if topology is not None else [
            _topology(t, v.shape[1]) for t, v in zip(meshes.triangles, meshes.vertices,
                                                     strict=True)]
        # Samples read so far (a bake fed as the timeline plays: `update`); a span's grid covers
        # only these, and is built again once more of its samples have arrived.
        self.known = self.F
        self._grids: dict[tuple[int, int, int], TriangleGrid] = {}
        self._normals: dict[tuple[int, int], tuple] = {}
        self._stages: tuple[MeshField, MeshField] | None = None  # `staged_contacts`' fields
        # `_centroids`' answer per mesh: (time, centroid rows, spread, corner rows).
        self._centroid_cache: dict[int, tuple] = {}
        # `staged_contacts`' lattice corners already queried, per mesh: their keys (sorted),
        # each one's side (-1 inside, 1 outside, 0 not found), how far the surface is from
        # it, and the mesh's motion (`_travel`) up to the query.
        self._corners: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        self._motion: list[np.ndarray | None] = [None] * meshes.count
        # Per mesh, its vertices' mean at each sample (F, 3) and how far that mean moved over
        # each interval (F - 1,), NaN until measured (`_origin`, `_carried`).
        self._means: list[np.ndarray | None] = [None] * meshes.count
        self._carry: list[np.ndarray | None] = [None] * meshes.count
        # Per mesh and sample interval (F - 1,): 1 where the vertices at its two samples are
        # the same, 0 where not, NaN until measured (`_unmoved`).
        self._same: list[np.ndarray | None] = [None] * meshes.count
        # `push_out`'s points at their last query, per mesh (`_unclear`, `_remember`).
        self._history: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        # `_kept_contacts`' candidates per mesh, by the caller's point ids.
        self._kept: dict[int, _KeptCandidates] = {}

    def update(self, meshes: MeshColliders, known: int) -> None:
        """The same meshes with the samples before `known` now read (the rest are held)."""
        held = max(min(self.known, int(known)) - 1, 0)  # first interval a held sample touched
        self.meshes, self.known = meshes, int(known)
        self._stages = None
        self._centroid_cache = {}
        self._corners = {}
        # Pseudo-normals of held samples (none is read: the solvers query only known samples,
        # tests/core/test_stream.py and test_cloth_stream.py check it on a deforming body).
        self._normals = {k: n for k, n in self._normals.items() if k[1] <= held}
        for steps in (*self._motion, *self._carry, *self._same):
            if steps is not None:
                steps[held:] = np.nan
        for means in self._means:
            if means is not None:
                means[held:] = np.nan
        self._history = {}
        self._kept = {}

    def widen(self, radius: float) -> None:
        """Look at least `radius` + depth from every surface (the largest particle radius so
        far: grown, never shrunk, so a bake and the same frames fed one by one agree)."""
        reach = np.maximum(self.reach, float(radius) + self.meshes.depth)
        if np.any(reach > self.reach):
            self.reach = reach
            self._grids = {}
            self._stages = None
            self._corners = {}
            self._history = {}
            self._kept = {}

    def _grid(self, m: int, f: int, margin: float = 0.0) -> TriangleGrid:
        """Mesh `m`'s grid of the span holding sample interval `f`, of the reach grown by
        `margin`."""
        span = f // GRID_SPAN
        first = span * GRID_SPAN
        last = min(first + GRID_SPAN, self.F - 1, self.known - 1)
        key = (m, span, last, margin)
        grid = self._grids.get(key)
        if grid is None:
            v = self.meshes.vertices[m][first:last + 1]
            shift = span_shift(v)
            low, high = span_boxes(v, self.topology[m].triangles, shift)
            reach = float(self.reach[m]) + margin
            if shift is None:
                grid = grid_of_boxes(low, high, reach)
            else:
                # Grown a hair: the shifted coordinates are rounded apart from the world's.
                grid = grid_of_boxes(low, high, reach * (1.0 + 1e-9) + 1e-12)
                # The world box holds the moving box at every shift.
                bounds = np.stack([grid.bounds[0] + shift.min(axis=0),
                                   grid.bounds[1] + shift.max(axis=0)])
                grid = replace(grid, shift=shift, first=first, bounds=bounds)
            self._grids = {k: g for k, g in self._grids.items() if k[0] != m}
            self._grids[key] = grid
        return grid

    def _normals_at(self, m: int, f: int) -> tuple:
        key = (m, f)
        normals = self._normals.get(key)
        if normals is None:
            # A still body's normals are those of the sample kept (the same vertices).
            normals = next((n for k, n in self._normals.items()
                            if k[0] == m and self._same_samples(m, k[1], f)), None)
            if normals is None:
                v = self.meshes.vertices[m][f].astype(np.float64, copy=False)
                normals = pseudo_normals(self.topology[m], v)
            # Keep the latest two samples (an interval's ends).
            self._normals = {k: n for k, n in self._normals.items()
                             if k[0] != m or k[1] >= f - 1}
            self._normals[key] = normals
        return normals

    def _positions(self, m: int, t: float, vertex: np.ndarray) -> np.ndarray:
        """World positions of mesh `m`'s vertices `vertex` (any shape) at time `t`."""
        f, alpha = frame_interval(t, self.fps, self.F)
        g = min(f + 1, self.F - 1)
        V = self.meshes.vertices[m]
        a = V[f][vertex].astype(np.float64)
        if alpha != 0.0:
            a += alpha * (V[g][vertex] - a)
        return a

    def _position_rows(self, m: int, t: float, vertex: np.ndarray) -> np.ndarray:
        """`_positions` of the vertices `vertex` (n,) as coordinate rows (3, n)."""
        f, alpha = frame_interval(t, self.fps, self.F)
        g = min(f + 1, self.F - 1)
        V = self.meshes.vertices[m]
        # Whole rows gathered, then transposed: a gather along the strided axis of V[f].T
        # took half as long again (the same values).
        a = V[f].take(vertex, axis=0).T.astype(np.float64, order="C")
        if alpha != 0.0:
            a += alpha * (V[g].take(vertex, axis=0).T - a)
        return a

    def within_reach(self, m: int, points: np.ndarray, t: float) -> np.ndarray:
        """(N,) bool: which `points` may be within reach of mesh `m` at time `t` (the others
        are not: `contacts` and `staged_contacts` find nothing for them). By the cells of the
        staged query's corner grid, whose reach is larger and which that query builds anyway
        (a grid of a 50k-triangle body takes about 120 ms)."""
        corners = self._staged()[1]
        f = frame_interval(t, self.fps, self.F)[0]
        grid = corners._grid(m, f)
        return cell_counts(grid, self._in_grid(grid, points.T, t).T) > 0

    def _in_grid(self, grid: TriangleGrid, x: np.ndarray, t: float) -> np.ndarray:
        """Points `x` (3, N) at time `t` in `grid`'s coordinates: less its shift at `t`, blended
        between the samples as the vertices are (`span_shift`); `x` itself for a still mesh."""
        if grid.shift is None:
            return x
        f, alpha = frame_interval(t, self.fps, self.F)
        g = min(f + 1, self.F - 1)
        last = len(grid.shift) - 1
        shift = grid.shift[min(max(f - grid.first, 0), last)]
        if alpha != 0.0:
            shift = shift + alpha * (grid.shift[min(max(g - grid.first, 0), last)] - shift)
        return x - shift[:, None]

    def contacts(self, m: int, points: np.ndarray, t_start: float, t_end: float, *,
                 ids: np.ndarray | None = None, owners: int = 0,
                 margin: float | None = None) -> Contacts:
        """The contacts of `points` (N, 3) with mesh `m` at the end of the substep
        [t_start, t_end] (see `Contacts`); points farther than its reach are left out. Points
        are taken in chunks of at most `MAX_PAIRS` point-triangle pairs (bounded memory).
        `ids` (N,): the points' numbers among the caller's `owners` points, the same from one
        query to the next: each one's candidates are kept and reused (`_kept_contacts`; the
        same contacts). `margin`: look the points up in the grid of the reach grown by it
        (default: the kept margin with `ids`, else none), the grid a query with `ids` built:
        a grid of a larger reach holds every triangle a smaller one does (the same contacts),
        and only one grid per mesh is kept."""
        f, _ = frame_interval(t_end, self.fps, self.F)
        if margin is None:
            margin = 0.0 if ids is None else self.kept_margin(m)
        grid = self._grid(m, f, margin)
        count = cell_counts(grid, self._in_grid(grid, points.T, t_end).T)
        ends = np.cumsum(count)
        if len(ends) == 0 or ends[-1] <= MAX_PAIRS:
            return self._contacts(m, grid, points, t_start, t_end, ids, owners, margin)
        parts = []
        first = 0
        while first < len(points):
            budget = (ends[first - 1] if first else 0) + MAX_PAIRS
            last = max(int(np.searchsorted(ends, budget, side="right")), first + 1)
            c = self._contacts(m, grid, points[first:last], t_start, t_end,
                               None if ids is None else ids[first:last], owners, margin)
            c.index += first
            parts.append(c)
            first = last
        return Contacts(*(np.concatenate([getattr(c, name) for c in parts])
                          for name in ("index", "normal", "distance", "surface_motion")))

    def near_contacts(self, m: int, points: np.ndarray, t: float) -> Contacts:
        """`contacts` of `points` (N, 3) with mesh `m` at time `t`, of those within the near
        reach (radius + Depth/8, `staged_contacts`' first stage) of its surface: the surface
        point nearest each, its normal and signed distance. Read only (no candidates kept,
        no history); in the grid `push_out`'s near queries use, not built again."""
        near = self._staged()[0]
        return near.contacts(m, points, t, t, margin=near.kept_margin(m))

    def kept_margin(self, m: int) -> float:
        """How far past its reach `_kept_contacts` keeps a point's candidates (metres)."""
        return KEPT_MARGIN * float(self.reach[m])

    def _staged(self) -> tuple[MeshField, MeshField]:
        """The near and the corner fields of `staged_contacts` (the same meshes and samples,
        their own depths), built on first use and again after `update` or `widen`."""
        if self._stages is None:
            depth = self.meshes.depth
            radius = float(np.max(self.reach - depth))
            spacing = radius + NEAR_FRACTION * depth

            def field(depth_of: np.ndarray) -> MeshField:
                # The same triangles: their topology is this field's (not built twice more).
                f = MeshField(replace(self.meshes, depth=depth_of), fps=self.fps, radius=radius,
                              topology=self.topology)
                f.known = self.known
                return f

            # The corners look one spacing past what the points need (full reach + spacing),
            # so a corner found nowhere near stays so while the mesh moves less than that.
            self._stages = (field(NEAR_FRACTION * depth), field(depth + 2.0 * spacing))
        return self._stages

    def staged_contacts(self, m: int, points: np.ndarray, t_start: float,
                        t_end: float) -> Contacts:
        """`contacts` (reach radius + Depth) for every point that is inside or touching, at a
        fraction of its cost. That query tests every triangle within the reach of every point,
        and the pairs grow with the square of the reach, while nearly every point is either
        close to the surface or outside:

        1. A near query, of reach g = radius + Depth/8, finds the points within g of the
           surface: their closest triangle is the one the full query finds (the same candidates
           within g, the same tie rule), so their contact is the same.
        2. A point it does not find is farther than g from the surface, so every point within
           g of it is on its side. Its nearest corner on a lattice of spacing g is within
           0.87 g: the corner's side is the point's. The corners (far fewer than the points)
           are queried with the full reach grown by one spacing, so a corner of any point
           within the full reach is found; a corner not found means its points are out of
           reach.
        3. The points whose corner is inside are queried with the full reach (a strand that
           cuts deep into the body: few points).

        The result is the full query's for every point it would push (distance < radius);
        points farther out than g are left out."""
        return self.staged_query(m, points, t_start, t_end)[0]

    def staged_query(self, m: int, points: np.ndarray, t_start: float, t_end: float, *,
                     ids: np.ndarray | None = None, owners: int = 0,
                     outside: np.ndarray | None = None
                     ) -> tuple[Contacts, np.ndarray, np.ndarray]:
        """`staged_contacts`; per point, how far outside the surface it surely is (its
        distance where the near query found it outside, g where its corner is outside or not
        found, -inf where it may be inside); and (bool) which points it left out may be inside
        beyond the reach (their corner inside, or found nowhere within the corner reach: on
        either side). The others it left out are outside. `ids`, `owners`: as for
        `contacts` (the near query keeps its candidates). `outside` (N,): how far outside
        each point was at an earlier query less how far it (and the mesh) has moved since
        (-inf: unknown): a point the near query leaves out and known to be outside needs no
        corner."""
        near_field, corner_field = self._staged()
        near = near_field.contacts(m, points, t_start, t_end, ids=ids, owners=owners)
        g = float(near_field.reach[m])
        clearance = np.full(len(points), g)
        clearance[near.index] = np.where(near.distance > 0.0, near.distance, -np.inf)
        beyond = np.zeros(len(points), dtype=bool)
        unresolved = np.ones(len(points), dtype=bool)
        unresolved[near.index] = False
        if outside is not None:
            # Outside by o at its last query, it is now outside if it has moved (the mesh with
            # it) less than o + g: the ball of radius o about where it was, clear of the
            # surface, meets the ball of radius g about where it is, clear too (the near query
            # did not find it).
            known = unresolved & (outside > -g)
            clearance[known] = np.maximum(g, outside[known])
            unresolved &= ~known
        if ids is not None:
            # Far from the mesh's box (`TriangleGrid.bounds`): farther than the full reach
            # from the surface, on whichever side; pushed only once within the reach.
            box = near_field._grid(m, frame_interval(t_end, self.fps, self.F)[0],
                                   near_field.kept_margin(m)).bounds
            gap = np.maximum(np.maximum(box[0] - points, points - box[1]), 0.0)
            # Rounded down: a bound on the distance, never a hair over it.
            away = np.sqrt(np.einsum("ij,ij->i", gap, gap)) * (1.0 - 1e-9) - 1e-12
            away -= float(self.reach[m])
            far = unresolved & (away > g)
            clearance[far] = away[far]
            beyond[far] = True
            unresolved &= ~far
        rest = np.flatnonzero(unresolved)
        if not rest.size:
            return near, clearance, beyond
        # Lattice coordinates from a corner near the mesh (its first vertex's), so one key
        # per corner fits in 63 bits; a point more than LATTICE_RANGE spacings (7.8 km at
        # 7.5 mm) from that vertex is far out of reach of any real body. The lattice is
        # carried with the mesh's moving frame (`_origin`, less where it was at time 0): a
        # corner rides along with a body carried at a walk, and keeps its side while the
        # body deforms less than its distance (`_corner_sides`).
        origin = np.rint(self.meshes.vertices[m][0, 0].astype(np.float64) / g)
        shift = self._origin(m, t_end) - self._origin(m, 0.0)
        local = points[rest] - shift if shift.any() else points[rest]
        lattice = np.rint(local / g) - origin
        in_range = np.all(np.abs(lattice) < LATTICE_RANGE, axis=1)
        rest, lattice, local = rest[in_range], lattice[in_range], local[in_range]
        if not rest.size:
            return near, clearance, beyond
        keys, which = np.unique(_lattice_key(lattice), return_inverse=True)
        side, far_by = self._corner_sides(m, keys,
                                          lattice[np.unique(which, return_index=True)[1]],
                                          g, origin, corner_field, t_start, t_end, shift)
        side, far_by = side[which], far_by[which]
        beyond[rest[side == 0]] = True
        # A point is at least its corner's distance less its own from the corner (distance to
        # a surface is 1-Lipschitz): a point far out keeps that clearance, and `push_out` asks
        # it again only once it may have come within its radius. Of unknown side (corner not
        # found) it is pushed only within the full reach: its clearance counts from there.
        off = local - (lattice + origin) * g
        bound = far_by - (np.sqrt(np.einsum("ij,ij->i", off, off)) * (1.0 + 1e-9) + 1e-12)
        bound[side == 0] -= float(self.reach[m])
        clearance[rest] = np.where(side >= 0, np.maximum(g, bound), clearance[rest])
        deep = rest[side < 0]
        if not deep.size:
            return near, clearance, beyond
        clearance[deep] = -np.inf
        far = self.contacts(m, points[deep], t_start, t_end)
        beyond[deep] = True
        beyond[deep[far.index]] = False
        return Contacts(*(np.concatenate([getattr(near, name), value]) for name, value in (
            ("index", deep[far.index]), ("normal", far.normal), ("distance", far.distance),
            ("surface_motion", far.surface_motion)))), clearance, beyond

    def _corner_sides(self, m: int, keys: np.ndarray, lattice: np.ndarray, g: float,
                      origin: np.ndarray, corner_field: MeshField, t_start: float,
                      t_end: float, shift: np.ndarray) -> np.ndarray:
        """The side (int8: -1 inside, 1 outside, 0 not found) of each lattice corner (`keys`
        sorted, `lattice` their integer coordinates relative to the corner `origin`, spacing
        `g`, carried by `shift` (3,), the mesh's moving frame since time 0) of mesh `m` within
        the reach of its points (the full reach + g) at `t_end`. Saying
        inside where it is not only sends points to the exact full query; saying outside where
        it is inside would leave them in the body, so a kept answer must be safe:

        - a corner found at signed distance d keeps its side while the mesh has moved less
          than |d| (the surface has not reached it); inside at any depth counts as inside;
        - a corner not found is farther than the corner field's reach, one spacing past the
          points' (inside or out): it stays out of the points' reach while the mesh has moved
          less than that spacing.

        Only the other corners are queried: on a still body each corner once per bake.
        Returns (side, far_by): far_by (K,) is a lower bound on each corner's distance from
        the surface at `t_end` (its distance, or the corner reach when not found, less the
        mesh's motion since)."""
        # A corner moves with the mesh's moving frame: its distance from the surface changes by
        # at most the vertices' travel relative to that frame (`_travel`), as a point's riding
        # on the body does. (Corners fixed in the world added the frame's path: a body carried
        # at a walk, 6 mm a substep, had every corner queried again at nearly every push.)
        travel = self._travel(m, t_end)
        known = self._corners.get(m)
        side = np.zeros(len(keys), dtype=np.int8)
        far_by = np.zeros(len(keys))
        ask = np.ones(len(keys), dtype=bool)
        corner_reach = float(corner_field.reach[m])
        margin = corner_reach - (float(self.reach[m]) + g)
        if known is not None:
            k_keys, k_side, k_clear, k_travel = known
            at = np.minimum(np.searchsorted(k_keys, keys), len(k_keys) - 1)
            seen = k_keys[at] == keys
            # Rounded up: a bound on the mesh's motion since, never a hair short of it.
            moved = (travel - k_travel[at]) * (1.0 + 1e-9) + 1e-12
            fresh = seen & (moved < k_clear[at])
            side[fresh] = k_side[at[fresh]]
            far_by[fresh] = np.where(side[fresh] == 0, corner_reach,
                                     k_clear[at[fresh]]) - np.abs(moved[fresh])
            ask = ~fresh
        if ask.any():
            at_end = (lattice[ask] + origin) * g
            if shift.any():
                at_end += shift
            c = corner_field.contacts(m, at_end, t_start, t_end)
            asked_side = np.zeros(int(ask.sum()), dtype=np.int8)
            asked_side[c.index] = np.where(c.distance <= 0.0, -1, 1)
            clear = np.full(len(asked_side), margin)
            clear[c.index] = np.abs(c.distance)
            side[ask] = asked_side
            far_by[ask] = np.where(asked_side == 0, corner_reach, clear)
            new = (keys[ask], asked_side, clear, np.full(len(clear), travel))
            if known is not None:  # the newer entry of a corner replaces the older
                keep = np.ones(len(known[0]), dtype=bool)
                at = np.minimum(np.searchsorted(known[0], keys[ask]), len(known[0]) - 1)
                keep[at[known[0][at] == keys[ask]]] = False
                merged = [np.concatenate([old[keep], add]) for old, add in zip(known, new,
                                                                                 strict=True)]
                order = np.argsort(merged[0], kind="stable")
                new = tuple(a[order] for a in merged)
            self._corners[m] = new
        return side, far_by

    def _travel(self, m: int, t: float) -> float:
        """How far mesh `m`'s vertices can have moved from time 0 to `t` relative to its moving
        frame (`_origin`): the sum over the sample intervals of each interval's largest vertex
        move less the move of the vertices' mean (the part of it up to `t`). The difference of
        two times bounds every vertex's move in that frame between them; a point's distance
        from the surface changes by at most that plus the point's own move in the frame (the
        distance does not change when both are carried along together). A body carried
        along (root motion) has little relative travel: what was learnt about a point riding
        on it (its clearance, its kept candidates) stays valid. Each interval's move is
        measured once, when first needed (NaN until then; `update` forgets the ones that held
        samples touched)."""
        def measure(steps: np.ndarray, todo: np.ndarray) -> None:
            means = self._mean_rows(m, int(todo[-1]) + 1)
            V = self.meshes.vertices[m]
            for i in range(0, len(todo), TRAVEL_CHUNK):  # bounded memory: a few samples at once
                chunk = todo[i:i + TRAVEL_CHUNK]
                d = (V[chunk + 1] - V[chunk]).astype(np.float64)  # (n, V, 3)
                d -= (means[chunk + 1] - means[chunk])[:, None, :]
                steps[chunk] = np.sqrt(np.max(np.einsum("fij,fij->fi", d, d), axis=1,
                                              initial=0.0))

        return self._summed_steps(self._motion, m, t, measure)

    def _summed_steps(self, store: list, m: int, t: float,
                      measure: Callable[[np.ndarray, np.ndarray], None]) -> float:
        """The sum from time 0 to `t` of mesh `m`'s per-interval amounts in `store[m]` (F - 1,),
        the last interval's in part: each interval measured once, when first needed, by
        `measure(steps, todo)` (NaN until then; `update` forgets the ones held samples
        touched). `_travel` and `_carried`."""
        if self.F < 2:
            return 0.0
        f, alpha = frame_interval(t, self.fps, self.F)
        steps = store[m]
        if steps is None:
            steps = np.full(self.F - 1, np.nan)
            store[m] = steps
        todo = np.flatnonzero(np.isnan(steps[:f + 1]))
        if len(todo):
            measure(steps, todo)
        return float(steps[:f].sum() + alpha * steps[f])

    def _unmoved(self, m: int, t_a: float, t_b: float) -> bool:
        """Whether mesh `m`'s vertices are the same at times `t_a` and `t_b`: every sample
        interval the two times lie in or between holds the same vertices at both ends (a body
        standing still). Each interval compared once, when first needed."""
        if self.F < 2:
            return True
        f_a, alpha_a = frame_interval(t_a, self.fps, self.F)
        f_b, alpha_b = frame_interval(t_b, self.fps, self.F)
        low = min(f_a, f_b)
        # The last interval a time blends (none past its sample when its weight is 0).
        high = max(f_a + (alpha_a != 0.0), f_b + (alpha_b != 0.0))
        return self._same_samples(m, low, min(high, self.F - 1))

    def _same_samples(self, m: int, low: int, high: int) -> bool:
        """Whether mesh `m`'s vertices are the same at every sample from `low` to `high`."""
        if self.F < 2:
            return True
        low, high = min(low, high), max(low, high)
        same = self._same[m]
        if same is None:
            same = np.full(self.F - 1, np.nan)
            self._same[m] = same
        V = self.meshes.vertices[m]
        for i in range(low, high):
            if np.isnan(same[i]):
                same[i] = float(np.array_equal(V[i], V[i + 1]))
            if not same[i]:
                return False
        return True

    def _mean_rows(self, m: int, last: int) -> np.ndarray:
        """Mesh `m`'s vertices' mean (F, 3) at each sample, measured up to sample `last`."""
        means = self._means[m]
        if means is None:
            means = np.full((self.F, 3), np.nan)
            self._means[m] = means
        todo = np.flatnonzero(np.isnan(means[:last + 1, 0]))
        V = self.meshes.vertices[m]
        for i in range(0, len(todo), TRAVEL_CHUNK):
            chunk = todo[i:i + TRAVEL_CHUNK]
            means[chunk] = V[chunk].mean(axis=1, dtype=np.float64)
        return means

    def _origin(self, m: int, t: float) -> np.ndarray:
        """Mesh `m`'s moving frame at time `t` (3,): its vertices' mean, blended between the
        samples as the vertices are (`_travel`)."""
        if self.F < 2:
            return np.zeros(3)
        f, alpha = frame_interval(t, self.fps, self.F)
        g = min(f + 1, self.F - 1)
        means = self._mean_rows(m, g)
        origin = means[f]
        if alpha != 0.0:
            origin = origin + alpha * (means[g] - origin)
        return origin

    def _carried(self, m: int, t: float) -> float:
        """The length of the path of mesh `m`'s moving frame (`_origin`) from time 0 to `t`."""
        def measure(steps: np.ndarray, todo: np.ndarray) -> None:
            means = self._mean_rows(m, int(todo[-1]) + 1)
            d = means[todo + 1] - means[todo]
            steps[todo] = np.sqrt(np.einsum("ij,ij->i", d, d))

        return self._summed_steps(self._carry, m, t, measure)

    def _contacts(self, m: int, grid: TriangleGrid, points: np.ndarray, t_start: float,
                  t_end: float, ids: np.ndarray | None = None, owners: int = 0,
                  margin: float = 0.0) -> Contacts:
        # The pairs are worked on as coordinate rows (3, pairs), gathered with np.take: NumPy's
        # loops over an axis of 3 and its row gathers by fancy index are several times slower.
        x = np.ascontiguousarray(points.T)
        if ids is None:
            point, triangle, upper, lower = self._candidate_pairs(m, grid, x, t_end)
            keep = _closest_candidates(point, upper, lower)
            point, triangle = point[keep], triangle[keep]
            p, corners, closest, v, w, region, d2 = self._closest(m, t_end, x, point, triangle)
        else:
            point, triangle, p, corners, closest, v, w, region, d2 = self._kept_contacts(
                m, grid, points, x, t_end, ids, owners, margin)
        if len(point) == 0:
            return Contacts(np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0),
                            np.zeros((0, 3)))
        f, alpha = frame_interval(t_end, self.fps, self.F)
        offset = p - closest
        chosen, nearest = nearest_pairs(point, d2, triangle)
        reach = float(self.reach[m])
        chosen = chosen[nearest <= reach * reach]
        if len(chosen) == 0:
            return Contacts(np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0),
                            np.zeros((0, 3)))
        offset = np.ascontiguousarray(offset[:, chosen].T)
        region, triangle, v, w = region[chosen], triangle[chosen], v[chosen], w[chosen]
        bary = np.stack([1 - v - w, v, w], axis=-1)
        distance = np.sqrt(d2[chosen])
        # Pseudo-normal of the closest feature, blended between the interval's samples.
        g = min(f + 1, self.F - 1)
        feature = self._feature_normal(self._normals_at(m, f), m, triangle, region)
        if alpha != 0.0:
            feature = feature + alpha * (
                self._feature_normal(self._normals_at(m, g), m, triangle, region) - feature)
        sign = np.where(np.einsum("ij,ij->i", offset, feature) < 0.0, -1.0, 1.0)
        normal = offset * (sign / np.maximum(distance, _EPS))[:, None]
        on_surface = distance < 1e-9
        if on_surface.any():
            fn = feature[on_surface]
            normal[on_surface] = fn / np.maximum(
                np.sqrt(np.einsum("ij,ij->i", fn, fn)), _EPS)[:, None]
        # Where the surface point was at the substep's start (same barycentric weights); a
        # body that stood still over the substep has not moved it.
        if self._unmoved(m, t_start, t_end):
            motion = np.zeros((len(chosen), 3))
        else:
            before = self._positions(m, t_start, self.topology[m].triangles[triangle])
            corners = np.stack([c[:, chosen].T for c in corners], axis=1)  # (C, 3, 3)
            motion = np.einsum("ij,ijk->ik", bary, corners - before)
        return Contacts(point[chosen], normal, sign * distance, motion)

    def _candidate_pairs(self, m: int, grid: TriangleGrid, x: np.ndarray, t: float
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(point, triangle, upper, lower) of the points `x` (3, N): the triangles of each
        point's cell within its bounding-sphere reach, grouped by point in order, and bounds
        on each one's distance (from its centroid and spread at time `t`)."""
        moving = self._in_grid(grid, x, t)
        count, point, entry = _candidate_entries(grid, moving.T)
        # Bounding-sphere test per pair before the exact distance: a cell holds every triangle
        # within reach of any of its points, most of them out of reach of a given one. The
        # pairs come grouped by point (a repeat, not a gather) and each cell's entries are one
        # run of the grid's entry arrays.
        gap = np.repeat(moving, count, axis=1)
        gap -= np.take(grid.entry_centre, entry, axis=1)
        gap2 = row_dot(gap, gap)
        near = gap2 <= grid.entry_bound2.take(entry)
        point, triangle = point[near], grid.entries.take(entry[near])
        if len(point) == 0:
            return point, triangle, np.zeros(0), np.zeros(0)
        centroid, spread = self._centroids(m, t)
        gap = np.take(x, point, axis=1)
        gap -= np.take(centroid, triangle, axis=1)
        upper = np.sqrt(row_dot(gap, gap))
        return point, triangle, upper, upper - spread.take(triangle)

    def _closest(self, m: int, t: float, x: np.ndarray, point: np.ndarray,
                 triangle: np.ndarray) -> tuple:
        """(p, corners, closest, v, w, region, d2) of the pairs (point, triangle): the points
        (3, C), the triangles' corners at time `t` (3 x (3, C)), `closest_on_triangle_rows`'
        answer and the squared distances (C,)."""
        p = np.take(x, point, axis=1)
        self._centroids(m, t)
        corners = [np.take(c, triangle, axis=1)
                   for c in self._centroid_cache[m][3]]  # 3 x (3, C)
        closest, v, w, region = closest_on_triangle_rows(p, *corners)
        offset = p - closest
        return p, corners, closest, v, w, region, row_dot(offset, offset)

    def _kept_contacts(self, m: int, grid: TriangleGrid, points: np.ndarray, x: np.ndarray,
                       t: float, ids: np.ndarray, owners: int, margin: float) -> tuple:
        """`_contacts`' candidate pairs and their closest points for points numbered `ids` by
        a caller that queries the same points again and again (`push_out`: four to six times
        a substep, each point moving a little in between).

        A point's candidates are looked up in the grid grown by `margin`: every triangle
        within reach + margin of it, each with a lower bound L on its distance (the exact
        distance for those tested, the centroid bound for the others) and the nearest
        distance d*. While the point has moved, and the mesh's vertices have moved (`_travel`),
        less than `margin` together since, every triangle within reach of it is among them. A
        triangle's distance changes by at most the motion s since the bounds were last set:
        one with L - s > d* + s is farther than the one that was nearest, and cannot be the
        nearest now. Only the others are tested. The nearest (ties to the lowest index) is
        among them, and its closest point is the same arithmetic on the same numbers: the same
        contacts as a grid lookup, bit for bit. Then the tested ones' bounds become their
        distances, the others' L - s (kept as L + O_j and read less
        the odometer: `_KeptCandidates`), and d* the new nearest (within a substep a point moves
        a fraction of a millimetre between two queries: one or two candidates are tested).

        Returns (point, triangle, p, corners, closest, v, w, region, d2) grouped by point in
        order."""
        kept = self._kept.get(m)
        if kept is None or kept.at.shape[0] != owners:
            kept = _KeptCandidates.empty(owners)
            self._kept[m] = kept
        travel = self._travel(m, t)
        local = points - self._origin(m, t)  # in the mesh's moving frame (`_travel`)
        moved = local - kept.at[ids]
        moved = np.sqrt(np.einsum("ij,ij->i", moved, moved))
        moved += np.abs(travel - kept.travel[ids])
        # Rounded up: a bound on the motion, never a hair short of it.
        moved = moved * (1.0 + 1e-9) + 1e-12
        reuse = kept.valid[ids] & (moved < margin)
        since = local - kept.seen_at[ids]  # the motion since the bounds were set
        since = np.sqrt(np.einsum("ij,ij->i", since, since))
        since += np.abs(travel - kept.seen_travel[ids])
        since = since * (1.0 + 1e-9) + 1e-12
        fresh = np.flatnonzero(~reuse)
        use = np.flatnonzero(reuse)
        # Fresh points: the grid, the branch and bound, and every candidate's bound kept.
        f_point, f_triangle, f_upper, f_lower = self._candidate_pairs(m, grid, x[:, fresh], t)
        f_keep = np.flatnonzero(_closest_candidates(f_point, f_upper, f_lower))
        # Kept points: the candidates that may be the nearest.
        rows = ids[use]
        s = since[use]
        # A slot stored as L + O_j (its bound L set at odometer O_j) is at least L + O_j - O
        # from the point now, O = O_seen + s: it may be the nearest (at most d* + s) while
        # L + O_j <= d* + 2 s + O_seen.
        seen_odometer = kept.odometer[rows]
        bound = (kept.nearest[rows] + 2.0 * s + seen_odometer) * (1.0 + 1e-9) + 1e-12
        r, col = np.nonzero(kept.lower[rows] <= bound[:, None])  # NaN pads fail
        point = np.concatenate([fresh[f_point[f_keep]], use[r]])
        triangle = np.concatenate([f_triangle[f_keep], kept.triangle[rows[r], col]])
        order = np.argsort(point, kind="stable")  # fresh first within a point: none share one
        point, triangle = point[order], triangle[order]
        p, corners, closest, v, w, region, d2 = self._closest(m, t, x, point, triangle)
        # Keep the fresh points' candidates (those with at most KEPT_WIDTH of them).
        fresh_pair = order < len(f_keep)
        exact = np.sqrt(d2[fresh_pair])  # the fresh survivors, in their order (stable sort)
        f_lower[f_keep] = exact
        # Kept points: the bounds from here (`exact` in the pairs' order, grouped by point).
        tested = np.sqrt(d2[~fresh_pair])
        odometer = seen_odometer + s
        kept.lower[rows[r], col] = tested + odometer[r]
        kept.odometer[rows] = odometer
        if len(r):
            starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
            kept.nearest[rows[r[starts]]] = np.minimum.reduceat(tested, starts)
        kept.seen_at[rows] = local[use]
        kept.seen_travel[rows] = travel
        count = np.bincount(f_point, minlength=len(fresh))
        nearest = np.full(len(fresh), np.inf)
        if len(f_keep):  # survivors grouped by point: each point's smallest
            survivor = f_point[f_keep]
            starts = np.flatnonzero(np.r_[True, survivor[1:] != survivor[:-1]])
            nearest[survivor[starts]] = np.minimum.reduceat(exact, starts)
        fits = count <= KEPT_WIDTH
        owner = ids[fresh]
        kept.valid[owner] = fits
        owner = owner[fits]
        kept.at[owner] = local[fresh[fits]]
        kept.travel[owner] = travel
        kept.seen_at[owner] = local[fresh[fits]]
        kept.seen_travel[owner] = travel
        kept.nearest[owner] = nearest[fits]
        kept.lower[owner] = np.nan
        kept.odometer[owner] = 0.0
        pair_fits = fits[f_point]
        slot = np.arange(len(f_point)) - np.repeat(np.cumsum(count) - count, count)
        kept.lower[ids[fresh[f_point[pair_fits]]], slot[pair_fits]] = f_lower[pair_fits]
        kept.triangle[ids[fresh[f_point[pair_fits]]], slot[pair_fits]] = f_triangle[pair_fits]
        return point, triangle, p, corners, closest, v, w, region, d2

    def _centroids(self, m: int, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Every triangle's centroid (3, T) at time `t` and the largest distance from it to
        its corners (T,), kept per mesh for its latest time (a substep queries it several
        times; kept for one mesh only, two meshes queried in turn, as the pushes and the
        slide on them do, had it computed again at every query)."""
        cached = self._centroid_cache.get(m)
        # A still body's triangles are where they were at the cached time (the same values:
        # an interval's blend of two equal samples is the sample); their corners are kept.
        if cached is None or (cached[0] != t and not self._unmoved(m, cached[0], t)):
            tri = self.topology[m].triangles
            corners = [self._position_rows(m, t, tri[:, k]) for k in range(3)]
            centroid = corners[0] + corners[1]
            centroid += corners[2]
            centroid /= 3.0
            spread = np.zeros(len(tri))
            for c in corners:
                c = c - centroid
                np.maximum(spread, row_dot(c, c), out=spread)
            # Rounded up a little: a bound, never a hair short of a corner. The corners too
            # (`_closest` gathers its pairs' from them: one gather per corner instead of a
            # gather of vertex indices and two of positions, the same numbers).
            cached = (t, centroid, np.sqrt(spread) * (1.0 + 1e-9) + 1e-12, corners)
            self._centroid_cache[m] = cached
        return cached[1], cached[2]

    def _feature_normal(self, normals: tuple, m: int, triangle: np.ndarray,
                        region: np.ndarray) -> np.ndarray:
        """The pseudo-normal (C, 3) of each contact's closest feature: its face, edge or
        vertex."""
        face, edge, vertex_normal = normals
        out = face[triangle]
        for r, slot in _EDGE_SLOT.items():
            on = region == r
            if on.any():
                out[on] = edge[triangle[on], slot]
        corners = self.topology[m].triangles
        for r, corner in _CORNER.items():
            on = region == r
            if on.any():
                out[on] = vertex_normal[corners[triangle[on], corner]]
        return out

    def push_out(self, x: np.ndarray, x_prev: np.ndarray, radius: np.ndarray, t_start: float,
                 t_end: float, mask: np.ndarray | None = None) -> np.ndarray:
        """Push points `x` (N, 3) out of every mesh to their `radius` (N,), with friction.
        `mask` (M, N) bool: which points collide with which mesh (None: all). Returns the
        indices of the points pushed (a point pushed by two meshes is listed twice)."""
        pushed = []
        for m in range(self.meshes.count):
            if mask is None:
                index = None
                points, before, r = x, x_prev, radius
            else:
                index = np.flatnonzero(mask[m])
                if len(index) == 0:
                    continue
                points, before, r = x[index], x_prev[index], radius[index]
            ask, outside = self._unclear(m, points, r, t_end)
            c, clearance, beyond = self.staged_query(m, points[ask], t_start, t_end, ids=ask,
                                                     owners=len(points), outside=outside)
            # Left out and not beyond: outside by the clearance; a contact by its distance.
            self._remember(m, points, ask, clearance, np.where(beyond, -np.inf, clearance),
                           t_end)
            if len(c.index) == 0:
                continue
            c.index = ask[c.index]
            penetration = r[c.index] - c.distance
            hit = penetration > 0.0
            if not hit.any():
                continue
            i = c.index[hit]
            penetration = penetration[hit]
            n = c.normal[hit]
            moved = points[i] + n * penetration[:, None]
            friction = float(self.meshes.friction[m])
            if friction > 0.0:
                moved = _friction(moved, before[i], n, penetration, friction,
                                  c.surface_motion[hit])
            target = i if index is None else index[i]
            x[target] = moved
            pushed.append(target)
        return np.concatenate(pushed) if pushed else np.zeros(0, dtype=np.int64)


    def _unclear(self, m: int, points: np.ndarray, radius: np.ndarray, t: float
                 ) -> tuple[np.ndarray, np.ndarray | None]:
        """The indices of `points` that may touch mesh `m` at time `t`, and how far outside
        each of them surely still is (-inf: maybe inside; None: all unknown). A point
        `push_out` queried before, surely c clear of the surface then, is still more than its
        radius clear while it has moved, and the mesh has moved, less than c - radius together:
        it cannot be pushed, and is not queried (exactly the same pushes, for the points far
        from the body; those touching it are queried at every push). One surely o outside is
        still outside by o less that motion (it cannot have crossed the surface)."""
        history = self._history.get(m)
        if history is None or history[0].shape != points.shape:
            return np.arange(len(points)), None
        _, clearance, _, outside = history
        moved = self._moved_since(m, history, points, t)
        ask = np.flatnonzero(clearance - moved <= radius)
        return ask, outside[ask] - moved[ask]

    def _moved_since(self, m: int, history: tuple, points: np.ndarray, t: float) -> np.ndarray:
        """A bound (N,) on how far each of `points` has moved relative to mesh `m` since
        `push_out` last queried it (its own move in the mesh's moving frame, `_origin`, plus
        the mesh's `_travel` in it), rounded up."""
        last, _, travel, _ = history
        moved = points - self._origin(m, t)  # in the mesh's moving frame (`_travel`)
        moved -= last
        moved = np.sqrt(np.einsum("ij,ij->i", moved, moved))
        moved += np.abs(self._travel(m, t) - travel)
        # Rounded up: a bound on the motion, never a hair short of it.
        return moved * (1.0 + 1e-9) + 1e-12

    def clearance(self, m: int, points: np.ndarray, t: float) -> np.ndarray:
        """A lower bound (N,) on how far each of `points` (N, 3), the point set `push_out` last
        pushed out of mesh `m` (its `mask` row's points, in order) and moved since, is from the
        surface at time `t`, on either side; -inf where unknown (maybe touching). Below its
        radius a point may touch; above it `push_out` would not move it (a point beyond the
        reach, which no query finds, counts as clear). Read only: the history and the kept
        candidates stay `push_out`'s (the cloth's contact sweep asks a subset of the points
        level by level, `core.cloth.mesh_sweep`, and queries those by `contacts`)."""
        return self._bound(m, points, t, 1)

    def outside_by(self, m: int, points: np.ndarray, t: float) -> np.ndarray:
        """As `clearance`, how far outside mesh `m` each point surely is (-inf: maybe inside,
        or unknown). Read only."""
        return self._bound(m, points, t, 3)

    def _bound(self, m: int, points: np.ndarray, t: float, column: int) -> np.ndarray:
        """`push_out`'s history entry `column` (clearance or outside) less the motion since."""
        history = self._history.get(m)
        if history is None or history[0].shape != points.shape:
            return np.full(len(points), -np.inf)
        return history[column] - self._moved_since(m, history, points, t)

    def _remember(self, m: int, points: np.ndarray, ask: np.ndarray, clearance: np.ndarray,
                  outside: np.ndarray, t: float) -> None:
        """Keep where the points `ask` were at this query (in the mesh's moving frame), their
        clearance, how far outside they surely were (-inf: maybe inside), and the mesh's
        `_travel` then (`_unclear` reads them at the next push)."""
        history = self._history.get(m)
        if history is None or history[0].shape != points.shape:
            history = (points.copy(), np.full(len(points), -np.inf),
                       np.zeros(len(points)), np.full(len(points), -np.inf))
            self._history[m] = history
        last, kept, travel, out = history
        last[ask] = points[ask] - self._origin(m, t)
        kept[ask] = clearance
        travel[ask] = self._travel(m, t)
        out[ask] = outside


# Sample intervals whose vertex moves `MeshField._travel` measures in one array operation.
TRAVEL_CHUNK = 16
# Lattice corners are keyed by 21 bits per axis around their origin (`_lattice_key`).
LATTICE_RANGE = 1 << 20


def _lattice_key(lattice: np.ndarray) -> np.ndarray:
    """One int64 per lattice corner (n, 3) of integer coordinates (as floats, each within
    +-LATTICE_RANGE), the same for the same corner in every query."""
    i = lattice.astype(np.int64) + LATTICE_RANGE
    return (i[:, 0] << 42) | (i[:, 1] << 21) | i[:, 2]


def nearest_pairs(point: np.ndarray, d2: np.ndarray, triangle: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(chosen, d2 of each) of (point, triangle) pairs grouped by point, in order, with their
    squared distances `d2`: each point's nearest pair. Ties (a point nearest to a vertex or
    edge several triangles share) go to the lowest triangle index, whatever order the
    candidates came in: the same contact from any candidate set that holds the nearest."""
    starts = np.flatnonzero(np.r_[True, point[1:] != point[:-1]])
    nearest = np.minimum.reduceat(d2, starts)
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(point)]))
    is_nearest = d2 == nearest[group]
    lowest = np.minimum.reduceat(np.where(is_nearest, triangle, np.iinfo(np.int64).max),
                                 starts)
    return np.flatnonzero(is_nearest & (triangle == lowest[group])), nearest


def _closest_candidates(point: np.ndarray, to_centroid: np.ndarray,
                        lower: np.ndarray) -> np.ndarray:
    """Which (point, triangle) pairs, grouped by point, may hold each point's closest
    triangle (a mask). A triangle's centroid is on it, and the triangle lies within `spread`
    of its centroid: the point is at most `to_centroid` from the triangle and at least
    `to_centroid - spread`, so a triangle whose lower bound exceeds the smallest upper bound
    of the point's candidates is farther than another one (branch and bound). Every triangle
    at the nearest distance stays, so the contact (ties to the lowest index) is the one the
    full list gives. Near a 50k-triangle body (7 mm triangles) 22 candidates within reach
    become 6. `lower`: to_centroid - spread."""
    if len(point) == 0:
        return np.zeros(0, dtype=bool)
    starts = np.flatnonzero(np.r_[True, point[1:] != point[:-1]])
    upper = np.minimum.reduceat(to_centroid, starts)
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(point)]))
    # A relative margin for the rounding of the two bounds: keeping one more is harmless.
    return lower <= upper[group] * (1.0 + 1e-9)


# Which corner (vertex regions) or edge slot (edge regions) a region names.
_CORNER = {REGION_A: 0, REGION_B: 1, REGION_C: 2}
_EDGE_SLOT = {REGION_AB: 0, REGION_BC: 1, REGION_CA: 2}


def _friction(x: np.ndarray, x_prev: np.ndarray, n: np.ndarray, penetration: np.ndarray,
              friction: float, surface_motion: np.ndarray) -> np.ndarray:
    """Position-based Coulomb friction (Macklin et al. 2014) on the motion relative to the
    surface: the tangential part of `x - x_prev - surface_motion` removed up to
    `friction * penetration` (all of it inside the cone)."""
    relative = x - x_prev - surface_motion
    tangential = relative - n * np.einsum("ij,ij->i", relative, n)[:, None]
    length = np.sqrt(np.einsum("ij,ij->i", tangential, tangential))
    fraction = np.minimum(friction * penetration / np.maximum(length, _EPS), 1.0)
    return x - tangential * fraction[:, None]
