"""Render strands against a closed body mesh through a distance lattice, built per frame.

Render strands are many (20,000 x 12 points is 240,000 per frame) and lie on the body, so the
exact query (`mesh_colliders.MeshField.staged_contacts`: a closest triangle per point, Ericson's
closest point and the angle-weighted pseudo-normal) costs 0.5-0.9 s per frame on a 5k-triangle
head. It is the cost of the points, not of the surface: the points are dense where hair lies,
many per few millimetres. So the signed distance is sampled once per lattice node near the
points and read back by interpolation (a narrow-band signed distance field, as in TressFX's
and Vellum's hair collision), with the exact query kept wherever the field is not smooth:

1. **Nodes.** The cells of a lattice of spacing `LATTICE_SPACING` that hold points; their
   corners are queried exactly (the same closest point and pseudo-normal as every mesh contact),
   up to `NODE_REACH` spacings past the largest radius.
2. **Smooth cells** (all eight corners found; their normals, the unit gradients of the signed
   distance, within `AGREEMENT` of their mean, `AGREEMENT_INSIDE` when a corner is inside;
   their distances within `PLANAR_TOLERANCE` of the plane with that gradient): a point's signed
   distance and normal are the trilinear blend of its corners'. Measured against the exact
   push: 0.16 mm at most on a 5k-triangle head, 0.34 mm on coarse ones whose flat faces meet
   at 18-30 degrees (next to a convex edge the field rounds within a cell; inside a faceted
   mesh it creases at every ridge between two faces, hence the stricter agreement there: 0.46
   mm without it). Thin parts (an ear's rim, a finger), creases and the medial axis fail the
   test (their corners see different sides or surfaces) and go to the exact query.
3. **Clear cells** (a corner found outside, none inside, one not found): the corner not found is
   outside too, farther than the node reach (the signed distance is 1-Lipschitz on a closed
   mesh, and a cell's diagonal, sqrt(3) spacings, is shorter than the node reach), so every
   point of the cell is farther out than the largest radius: no push, as the exact query says.
4. **The rest** (no corner found, or not smooth) take the exact query.

Open meshes (a body with its neck and wrists open; a mesh's open border is an edge of one
triangle): behind the border, on the plane of its faces, the side flips without the distance
passing zero, which steps 2 and 3 need continuous. The cells that may be within reach of a
border (the exact query's reach or the node reach, plus a cell's diagonal) take the exact query;
the rest of the mesh reads the lattice. (Away from borders this assumes, as the exact staged
query does, that the side of a point changes only through the surface.) A lattice that would
query more nodes than `MAX_NODES_PER_POINT` per point (points sparse for the spacing: a giant's
scale) is not used either: the exact query is cheaper there.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from .mesh_colliders import LATTICE_RANGE, Contacts, MeshColliders, MeshField

LATTICE_SPACING = 0.004  # metres: a hair's radius is 0.4-3 mm, a head's curvature radius ~8 cm
# How far past the largest radius a node is looked for, in spacings: more than a cell's
# diagonal (sqrt 3), which step 3 of the module doc needs.
NODE_REACH = 1.75
# Smooth cell: every corner's normal within 25 degrees of their mean (5 when a corner is inside),
# and every corner's distance within this of the plane through their mean with that normal
# (metres).
AGREEMENT = math.cos(math.radians(25.0))
AGREEMENT_INSIDE = math.cos(math.radians(5.0))
PLANAR_TOLERANCE = 2e-4
MAX_NODES_PER_POINT = 0.5
# The points' cells and nodes are numbered by marking a dense array over their box when it
# has at most this many cells per point (`_cells_and_nodes`), by sorting otherwise.
DENSE_CELLS = 8
# A `NodeCache` holds at most this many times the nodes of the frame that filled it.
CACHE_GROWTH = 4
# Points blended at once (memory: each (chunk, 8) float64 array of the blend is 1 MB, and
# stays in cache: 1 << 17 at once took a quarter longer).
BLEND_CHUNK = 1 << 14
# The eight corners of a cell, as integer offsets; corner 4i + 2j + k is (i, j, k).
_CORNERS = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=np.int64)
# A border edge's neighbourhood in `_near_border`'s hash: BORDER_HASH cells each way.
BORDER_HASH = 3
_AROUND = np.array([[i, j, k] for i in range(-BORDER_HASH, BORDER_HASH + 1)
                    for j in range(-BORDER_HASH, BORDER_HASH + 1)
                    for k in range(-BORDER_HASH, BORDER_HASH + 1)], dtype=np.int64)


class LatticeContacts(NamedTuple):
    index: np.ndarray  # (C,) the points in smooth cells
    normal: np.ndarray  # (C, 3) their interpolated outward normal (unit)
    distance: np.ndarray  # (C,) their interpolated signed distance (negative inside)
    unresolved: np.ndarray  # (U,) the points the exact query must answer


def node_field(field: MeshField, radius: float) -> MeshField:
    """The field the lattice nodes of `field`'s meshes (one sample) are queried in: reach
    `radius` + NODE_REACH spacings."""
    depth = np.full(field.meshes.count, NODE_REACH * LATTICE_SPACING)
    return MeshField(replace(field.meshes, depth=depth), fps=1.0, radius=radius,
                     topology=field.topology)


def boundary_edges(field: MeshField, m: int) -> np.ndarray | None:
    """The edges (E, 2) vertex indices of mesh `m` that belong to one triangle (its open
    border), or None when an edge belongs to more than two (no side is defined near it)."""
    topology = field.topology[m]
    uses = np.bincount(topology.edge_of.reshape(-1), minlength=topology.edges)
    if np.any(uses > 2):
        return None
    triangle, slot = np.nonzero(uses[topology.edge_of] == 1)
    t = topology.triangles
    return np.stack([t[triangle, slot], t[triangle, (slot + 1) % 3]], axis=1)


def _near_border(vertices: np.ndarray, border: np.ndarray, centres: np.ndarray,
                 keep_out: float) -> np.ndarray:
    """(C,) bool: which cell `centres` (C, 3) may lie within `keep_out` of a `border` edge (E, 2)
    of `vertices`. Conservative, by a hash of cells of side S / BORDER_HASH, S = keep_out + the
    longest half edge: a centre more than BORDER_HASH hash cells (along some axis) from every
    edge's midpoint is farther than S from it, so farther than keep_out from the edge."""
    if not len(border):
        return np.zeros(len(centres), dtype=bool)
    a, b = vertices[border[:, 0]], vertices[border[:, 1]]
    mid = 0.5 * (a + b)
    half = 0.5 * np.sqrt(np.einsum("ij,ij->i", b - a, b - a))
    side = ((keep_out + float(half.max())) * (1.0 + 1e-9) + 1e-12) / BORDER_HASH
    origin = np.floor(np.minimum(mid.min(axis=0), centres.min(axis=0)) / side) - BORDER_HASH - 1
    top = np.floor(np.maximum(mid.max(axis=0), centres.max(axis=0)) / side) - origin
    if np.any(top + BORDER_HASH + 1 >= 2 * LATTICE_RANGE):
        return np.ones(len(centres), dtype=bool)  # out of the hash's range: keep them exact
    home = (np.floor(mid / side) - origin).astype(np.int64)
    near = np.unique(_keys((home[:, None, :] + _AROUND).reshape(-1, 3)))
    return np.isin(_keys((np.floor(centres / side) - origin).astype(np.int64)), near)


def _keys(lattice: np.ndarray) -> np.ndarray:
    """One int64 per integer lattice coordinate (n, 3), each within 0..2·LATTICE_RANGE."""
    return (lattice[:, 0] << 42) | (lattice[:, 1] << 21) | lattice[:, 2]


def _cells_and_nodes(lattice: np.ndarray) -> tuple[np.ndarray, ...]:
    """The cells the integer lattice coordinates (n, 3) of the points fall in and their
    corners, as np.unique by `_keys` gives them: (cells (C, 3) in key order, each point's cell
    (n,), the corner nodes' keys (K,) ascending, their coordinates (K, 3), each cell's corners
    (C, 8) as node numbers; corner 4i + 2j + k is (i, j, k)).

    When the points' box of cells is at most DENSE_CELLS times their count (hair on a head: a
    box of 60 cells a side for 220,000 points), by marking a dense array over the box (the
    cells) and over the box grown by one (the nodes) instead of sorting: a box's linear index
    (x, then y, then z) is in the keys' order, so the numbering is the same."""
    low = lattice.min(axis=0)
    dims = [int(d) for d in lattice.max(axis=0) - low + 1]
    if dims[0] * dims[1] * dims[2] > DENSE_CELLS * len(lattice):
        _, first, cell_of = np.unique(_keys(lattice), return_index=True, return_inverse=True)
        corners = (lattice[first][:, None, :] + _CORNERS).reshape(-1, 3)
        node_keys, node_first, node_of = np.unique(_keys(corners), return_index=True,
                                                   return_inverse=True)
        return lattice[first], cell_of, node_keys, corners[node_first], node_of.reshape(-1, 8)
    rows = (lattice - low).T
    linear = (rows[0] * dims[1] + rows[1]) * dims[2] + rows[2]
    _, cell_of, cell_rows = _dense_unique(linear, dims)
    # The nodes' box is one larger per axis; a cell's corner (i, j, k) is its index in that
    # box plus the corner's offset.
    node_dims = [d + 1 for d in dims]
    x, y, z = cell_rows.T
    home = (x * node_dims[1] + y) * node_dims[2] + z
    offset = (_CORNERS[:, 0] * node_dims[1] + _CORNERS[:, 1]) * node_dims[2] + _CORNERS[:, 2]
    _, node_of, coords = _dense_unique(home[:, None] + offset, node_dims)
    coords += low
    return cell_rows + low, cell_of, _keys(coords), coords, node_of


def _dense_unique(linear: np.ndarray, dims: list[int]) -> tuple[np.ndarray, ...]:
    """np.unique of linear indices (any shape) into a box of `dims` cells, by marking a dense
    array: (the distinct indices ascending, each entry's number among them (linear's shape),
    their coordinates (K, 3) in the box)."""
    size = dims[0] * dims[1] * dims[2]
    present = np.zeros(size, dtype=bool)
    present[linear] = True
    distinct = np.flatnonzero(present)
    number = np.empty(size, dtype=np.int64)
    number[distinct] = np.arange(len(distinct))
    x, rest = np.divmod(distinct, dims[1] * dims[2])
    y, z = np.divmod(rest, dims[2])
    return distinct, number[linear], np.stack([x, y, z], axis=1)


class NodeCache:
    """The lattice nodes already queried, per mesh, kept from one frame to the next while the
    mesh has not moved (a still body under wind-blown hair): a node's answer depends only on
    where it is and on the mesh's vertices (and the reach), so it is the same bits whether it
    is queried again or read back. A mesh that moved, or a reach that changed, starts over."""

    def __init__(self):
        # Per mesh: (vertices, reach, sorted keys, found, distance, normal rows (3, n)).
        self._entries: dict[int, tuple] = {}
        self.queried = 0  # nodes queried so far (what the cache did not answer)
        # The last frame's fields (`fields`): (frame, radius, field, node field).
        self._fields: tuple | None = None

    def fields(self, meshes: MeshColliders, sample: int, radius: float
               ) -> tuple[MeshField, MeshField]:
        """The field of `meshes`' sample `sample` alone (fps 1, `radius`) and its lattice
        nodes' (`node_field`). Kept from one frame to the next: the triangles' topology (and
        the triangle arrays, which `mesh_inside.closed_shells` knows by identity) while they
        are the same, and the whole fields while the sample's vertices are too (a still body):
        their triangle grids, normals and staged corners are what the same frame would build
        again, bit for bit (a corner's side depends on where it is and on the vertices). Copies
        are kept, so a caller that writes the next frame into the same arrays starts over."""
        vertices = tuple(v[sample:sample + 1] for v in meshes.vertices)
        kept = self._fields
        same = (kept is not None and kept[0].count == meshes.count
                and np.array_equal(kept[0].depth, meshes.depth)
                and all(np.array_equal(a, b) for a, b in zip(kept[0].triangles,
                                                              meshes.triangles, strict=True)))
        if same and kept[1] == radius and all(
                a.dtype == b.dtype and np.array_equal(a, b)
                for a, b in zip(kept[0].vertices, vertices, strict=True)):
            return kept[2], kept[3]
        triangles = kept[0].triangles if same else tuple(t.copy() for t in meshes.triangles)
        frame = MeshColliders(meshes.names, triangles, tuple(v.copy() for v in vertices),
                              meshes.friction, meshes.depth.copy())
        topology = kept[2].topology if same and all(
            a.shape == b.shape for a, b in zip(kept[0].vertices, vertices, strict=True)) else None
        field = MeshField(frame, fps=1.0, radius=radius, topology=topology)
        nodes = node_field(field, radius)
        self._fields = (frame, radius, field, nodes)
        return field, nodes

    def answers(self, field: MeshField, m: int, keys: np.ndarray, nodes: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(found (n,), signed distance (n,), outward normal rows (3, n)) of the lattice nodes
        `nodes` (n, 3), keyed by their sorted unique `keys` (n,), on mesh `m` of `field`."""
        vertices = field.meshes.vertices[m][0]
        reach = float(field.reach[m])
        entry = self._entries.get(m)
        if entry is not None and (entry[1] != reach or not len(entry[2])
                                  or not np.array_equal(entry[0], vertices)):
            entry = None
        if entry is None:
            ask = np.arange(len(keys))
            known = None
        else:
            at = np.minimum(np.searchsorted(entry[2], keys), len(entry[2]) - 1)
            known = entry[2][at] == keys
            ask = np.flatnonzero(~known)
        # None to ask (every node cached): no grid to build for them.
        c = (field.contacts(m, nodes[ask], 0.0, 0.0) if len(ask) else
             Contacts(np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3))))
        self.queried += len(ask)
        found = np.zeros(len(ask), dtype=bool)
        found[c.index] = True
        distance = np.zeros(len(ask))
        distance[c.index] = c.distance
        normal = np.zeros((3, len(ask)))
        normal[:, c.index] = c.normal.T
        if known is not None:
            hit = at[known]
            out = (np.empty(len(keys), dtype=bool), np.empty(len(keys)), np.empty((3, len(keys))))
            for a, old, new in zip(out, entry[3:], (found, distance, normal), strict=True):
                a[..., known] = old[..., hit]
                a[..., ask] = new
            found, distance, normal = out
            # Kept: what the cache held and what was asked now, in key order; a cache grown to
            # many times a frame's nodes (hair sweeping over a large body) holds this frame's.
            if len(entry[2]) + len(ask) <= CACHE_GROWTH * len(keys):
                merged = [np.concatenate([old, new], axis=-1) for old, new in zip(
                    entry[2:], (keys[ask], found[ask], distance[ask], normal[:, ask]),
                    strict=True)]
                order = np.argsort(merged[0], kind="stable")
                self._entries[m] = (entry[0], reach, *(a[..., order] for a in merged))
                return found, distance, normal
        self._entries[m] = (vertices.copy(), reach, keys, found, distance, normal)
        return found, distance, normal


def lattice_contacts(field: MeshField, m: int, points: np.ndarray, reach: float,
                     cache: NodeCache | None = None) -> LatticeContacts | None:
    """The contacts of `points` (N, 3) float64 with mesh `m` of `field` (a `node_field`, one
    sample) read from the lattice (see the module doc), or None where the lattice does not
    apply (a non-manifold mesh, points too sparse, points out of the lattice's range).
    `reach`: how far the exact query looks (the largest radius + the mesh's Depth). `cache`:
    nodes queried at earlier frames (`NodeCache`)."""
    h = LATTICE_SPACING
    border = boundary_edges(field, m) if len(points) else None
    if border is None:
        return None
    origin = np.floor(field.meshes.vertices[m][0, 0].astype(np.float64) / h)
    scaled = points / h - origin
    cell = np.floor(scaled)
    if not np.all(np.abs(cell) < LATTICE_RANGE - 1):
        return None
    lattice = cell.astype(np.int64) + LATTICE_RANGE
    cells, cell_of, node_keys, node_cells, node_of = _cells_and_nodes(lattice)
    if len(node_keys) > MAX_NODES_PER_POINT * len(points):
        return None
    nodes = ((node_cells - LATTICE_RANGE).astype(np.float64) + origin) * h
    if cache is None:
        cache = NodeCache()
    found, distance, normal = cache.answers(field, m, node_keys, nodes)
    # Per cell (C, 8): the corners' answers.
    corner_found = found[node_of]
    corner_distance = distance[node_of]
    corner_normal = [row[node_of] for row in normal]  # 3 x (C, 8)
    every = corner_found.all(axis=1)
    mean = [row.sum(axis=1) for row in corner_normal]
    length = np.sqrt(mean[0] * mean[0] + mean[1] * mean[1] + mean[2] * mean[2])
    length = np.maximum(length, 1e-12)
    mean = [row / length for row in mean]
    least = np.full(len(every), np.inf)  # the smallest cosine of a corner's normal to the mean
    for k in range(8):
        np.minimum(least, sum(corner_normal[a][:, k] * mean[a] for a in range(3)), out=least)
    # The plane through the corners' mean distance at the cell's centre with the mean normal.
    centre = corner_distance.mean(axis=1)
    planar = np.ones(len(every), dtype=bool)
    for k, offset in enumerate(_CORNERS - 0.5):
        plane = centre + h * (offset[0] * mean[0] + offset[1] * mean[1] + offset[2] * mean[2])
        planar &= np.abs(corner_distance[:, k] - plane) <= PLANAR_TOLERANCE
    outside = (corner_found & (corner_distance > 0.0)).any(axis=1)
    inside = (corner_found & (corner_distance <= 0.0)).any(axis=1)
    # Inside a faceted mesh the field creases at every ridge between two faces (outside it is
    # rounded), so a cell with a corner inside must agree more closely.
    smooth = every & planar & (least >= np.where(inside, AGREEMENT_INSIDE, AGREEMENT))
    clear = ~every & outside & ~inside
    if len(border):
        # Near an open border the side can flip without the distance passing zero (behind the
        # border, on the plane of its faces): cells that may hold such a point within either
        # reach, with a cell's diagonal to spare, go to the exact query.
        diagonal = h * math.sqrt(3.0)
        keep_out = max(reach, float(field.reach[m]) + diagonal) + diagonal
        centres = ((cells - LATTICE_RANGE).astype(np.float64) + origin + 0.5) * h
        vertices = field.meshes.vertices[m][0].astype(np.float64)
        near = _near_border(vertices, border, centres, keep_out)
        smooth &= ~near
        clear &= ~near

    index = np.flatnonzero(smooth[cell_of])
    unresolved = np.flatnonzero(~(smooth | clear)[cell_of])
    read = np.empty(len(index))
    blend = np.empty((len(index), 3))
    for start in range(0, len(index), BLEND_CHUNK):  # bounded memory: (chunk, 8) at a time
        part = index[start:start + BLEND_CHUNK]
        owner = cell_of.take(part)
        f = scaled.take(part, axis=0) - cell.take(part, axis=0)  # (n, 3) in [0, 1]
        weight = np.empty((len(part), 8))
        for k, (i, j, l_) in enumerate(_CORNERS):
            weight[:, k] = ((f[:, 0] if i else 1.0 - f[:, 0])
                            * (f[:, 1] if j else 1.0 - f[:, 1])
                            * (f[:, 2] if l_ else 1.0 - f[:, 2]))
        read[start:start + len(part)] = np.einsum("pk,pk->p", weight,
                                                  corner_distance.take(owner, axis=0))
        for a, row in enumerate(corner_normal):
            blend[start:start + len(part), a] = np.einsum("pk,pk->p", weight,
                                                          row.take(owner, axis=0))
    blend /= np.maximum(np.sqrt(np.einsum("ij,ij->i", blend, blend)), 1e-12)[:, None]
    return LatticeContacts(index, blend, read, unresolved)
