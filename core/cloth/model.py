"""Cloth-bone model: low-resolution quad cages (seed 001), their constraints and validation.

A setup is a quad cage whose vertices become particles; some are pinned (they copy the skinned
reference). From the quads we derive, for all cloths at once (concatenated, N particles):

* stretch links: the quad sides (seed 001 "stretch constraints", blue in its figure 4);
* shear links: both quad diagonals; bend links: skip-one pairs across every shared quad side
  (a - j - c straight through j), the seed's "shear/bend constraints" solved with other settings;
* levels: graph distance from the pinned set over stretch links ("top-down" order); a stretch
  link from level k to k + 1 is vertical (hard, top-down, seed 001), one within a level is
  horizontal (between neighbouring chains, so skirts do not open gaps);
* spans: where two hanging chains meet end to end (a strip pinned at both ends), the path from
  one pin to the other, whose lengths the solver makes exact together (`core.shake`) because
  the top-down sweep can only hang each vertex from one side;
* columns: every other hanging chain (a column of a cage, from its pin to its hem), projected
  by SHAKE the same way before the sweep in cloths with stiff bending or shear (the solver's
  STIFF_COMPLIANCE), so the exact lengths move positions and velocities alike (the sweep's
  parent share is velocity only);
* edge vertices: fewer than 4 stretch neighbours (seed 001), simulated with their own multipliers;
* the layer below each vertex of a layered cage (seed 003 layered self-collision).

Every constraint group is graph-coloured (`colouring.py`) so the solver runs one NumPy
expression per colour across every cloth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..colliders import ColliderSet
from ..errors import SetupError
from .colouring import colour_groups, colour_pairs

MIN_EDGE_LENGTH = 1e-6  # metres; shorter stretch links are degenerate (coincident vertices)


@dataclass(frozen=True)
class ClothRest:
    """One cage in its bind pose (see docs/cloth-solver.md)."""

    setup: str  # Blender object name (used in every error message)
    rest_positions: np.ndarray  # (N, 3) world metres, bind pose
    quads: np.ndarray  # (Q, 4) int, vertex indices in winding order (the cage's faces)
    pinned: np.ndarray  # (N,) bool: follows the reference exactly
    max_distance: np.ndarray  # (N,) metres from the reference position; np.inf = off
    layer: np.ndarray | None = None  # (N,) int >= 0; layer L collides one-sidedly with L - 1


@dataclass(frozen=True)
class DistanceGroup:
    """Two-particle distance constraints `|x[b] - x[a]| = rest`, coloured."""

    a: np.ndarray  # (E,) int
    b: np.ndarray  # (E,) int
    rest: np.ndarray  # (E,) metres
    cloth: np.ndarray  # (E,) int, cloth of the constraint
    colours: tuple[np.ndarray, ...]  # constraint indices per colour (disjoint particles)

    @property
    def count(self) -> int:
        return int(self.a.size)


@dataclass(frozen=True)
class LayerPairs:
    """Each vertex of layer L >= 1 paired (at rest) with a point of a quad of layer L - 1."""

    vertex: np.ndarray  # (L,) int, the colliding particle
    quad: np.ndarray  # (L, 4) int, corners of the quad below
    uv: np.ndarray  # (L, 2) bilinear coordinates of the paired surface point
    side: np.ndarray  # (L,) +1 / -1: which side of the quad (its winding normal) the vertex is on

    @property
    def count(self) -> int:
        return int(self.vertex.size)


@dataclass(frozen=True)
class ClothModel:
    """All cloths concatenated (N particles, C cloths); read-only after building."""

    setup_names: tuple[str, ...]  # (C,)
    rest_positions: np.ndarray  # (N, 3)
    quads: np.ndarray  # (Q, 4) global vertex indices
    cloth_of_vertex: np.ndarray  # (N,) int
    vertex_offset: np.ndarray  # (C + 1,) cloth c owns vertices vertex_offset[c]:vertex_offset[c+1]
    pinned: np.ndarray  # (N,) bool
    max_distance: np.ndarray  # (N,) metres, inf = off
    layer: np.ndarray  # (N,) int (0 when the cage has no layers)
    edge_vertex: np.ndarray  # (N,) bool: fewer than 4 stretch neighbours (seed 001)
    level: np.ndarray  # (N,) int: graph distance from the pinned set (top-down order)
    parent: np.ndarray  # (N,) int: the level k - 1 neighbour a level k vertex hangs from; -1 pinned
    stretch: DistanceGroup
    vertical: np.ndarray  # (E_stretch,) bool: stretch link joins level k and k + 1
    spans: tuple[np.ndarray, ...]  # colours of (P, L) pin-to-pin vertex paths (see `_spans`)
    columns: tuple[np.ndarray, ...]  # colours of (P, L) hanging chains (see `_columns`)
    shear: DistanceGroup
    bend: DistanceGroup
    layers: LayerPairs
    colliders: ColliderSet
    collider_mask: np.ndarray  # (K, C) bool: collider k acts on cloth c

    @property
    def n_vertices(self) -> int:
        return int(self.cloth_of_vertex.size)

    @property
    def n_cloths(self) -> int:
        return len(self.setup_names)

    @property
    def horizontal(self) -> np.ndarray:
        """(E_stretch,) bool: stretch link within one level (between neighbouring chains)."""
        return ~self.vertical

    def locate(self, vertex: int) -> tuple[str, int]:
        """(setup name, local vertex index) of global vertex `vertex`, for error messages."""
        c = int(self.cloth_of_vertex[vertex])
        return self.setup_names[c], int(vertex - self.vertex_offset[c])


# --------------------------------------------------------------------------------------------
# Validation of one cage.


def _check_cloth(cloth: ClothRest) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                            np.ndarray]:
    name = cloth.setup
    x = np.asarray(cloth.rest_positions, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 3 or x.shape[0] < 2:
        raise SetupError(f"cloth '{name}': rest_positions has shape {x.shape}, expected (N, 3) "
                         "with N >= 2")
    N = x.shape[0]
    bad = ~np.all(np.isfinite(x), axis=1)
    if bad.any():
        raise SetupError(f"cloth '{name}': vertex {int(np.flatnonzero(bad)[0])} has a "
                         "non-finite rest position")
    quads = np.asarray(cloth.quads)
    if quads.ndim != 2 or quads.shape[1] != 4 or quads.shape[0] < 1:
        raise SetupError(f"cloth '{name}': quads has shape {quads.shape}, expected (Q, 4) with "
                         "Q >= 1 (the cage needs quad faces; triangle-only cages are not "
                         "supported)")
    if not np.issubdtype(quads.dtype, np.integer) and (
            not np.all(np.isfinite(quads)) or np.any(quads != np.round(quads))):
        raise SetupError(f"cloth '{name}': quad vertex indices must be integers")
    quads = quads.astype(np.int64)
    out = (quads < 0) | (quads >= N)
    if out.any():
        q = int(np.argwhere(out)[0][0])
        raise SetupError(f"cloth '{name}': quad {q} refers to vertex {int(quads[out][0])}, "
                         f"outside 0..{N - 1}")
    s = np.sort(quads, axis=1)
    repeated = np.any(s[:, 1:] == s[:, :-1], axis=1)
    if repeated.any():
        q = int(np.flatnonzero(repeated)[0])
        raise SetupError(f"cloth '{name}': quad {q} uses a vertex twice {quads[q].tolist()}")
    pinned = np.asarray(cloth.pinned)
    if pinned.shape != (N,):
        raise SetupError(f"cloth '{name}': pinned has shape {pinned.shape}, expected ({N},)")
    pinned = pinned.astype(bool)
    if not pinned.any():
        raise SetupError(f"cloth '{name}': no vertex is pinned; pin the vertices that follow "
                         "the character (e.g. the waistband)")
    if pinned.all():
        raise SetupError(f"cloth '{name}': every vertex is pinned, nothing would move")
    max_distance = np.asarray(cloth.max_distance, dtype=np.float64)
    if max_distance.shape != (N,):
        raise SetupError(f"cloth '{name}': max_distance has shape {max_distance.shape}, expected "
                         f"({N},)")
    bad = np.isnan(max_distance) | (max_distance < 0)
    if bad.any():
        v = int(np.flatnonzero(bad)[0])
        raise SetupError(f"cloth '{name}': vertex {v} has max distance {max_distance[v]!r}; it "
                         "must be >= 0 (inf = off)")
    if cloth.layer is None:
        layer = np.zeros(N, dtype=np.int64)
    else:
        layer = np.asarray(cloth.layer)
        if layer.shape != (N,):
            raise SetupError(f"cloth '{name}': layer has shape {layer.shape}, expected ({N},)")
        if not np.issubdtype(layer.dtype, np.integer) and (
                not np.all(np.isfinite(layer)) or np.any(layer != np.round(layer))):
            raise SetupError(f"cloth '{name}': layers must be integers")
        layer = layer.astype(np.int64)
        if np.any(layer < 0):
            v = int(np.flatnonzero(layer < 0)[0])
            raise SetupError(f"cloth '{name}': vertex {v} has negative layer {layer[v]}")
    return x, quads, pinned, max_distance, layer


# --------------------------------------------------------------------------------------------
# Topology (vectorised over every quad of every cloth).


def _edges_from_quads(quads: np.ndarray, N: int):
    """Unique undirected quad sides and, per half-edge, the quad-across partner of both ends.

    Half-edge s of quad (v0, v1, v2, v3) runs v_s -> v_{s+1}; across the quad, v_s faces
    v_{s+3} and v_{s+1} faces v_{s+2} (the opposite side). Returns (edges (E, 2) sorted pairs,
    half-edge -> edge index (4Q,), and the half-edge ends/partners as (4Q,) arrays).
    """
    s = np.arange(4)
    start = quads[:, s].reshape(-1)
    end = quads[:, (s + 1) % 4].reshape(-1)
    across_start = quads[:, (s + 3) % 4].reshape(-1)
    across_end = quads[:, (s + 2) % 4].reshape(-1)
    lo = np.minimum(start, end)
    hi = np.maximum(start, end)
    key = lo * N + hi
    unique, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    edges = np.stack([unique // N, unique % N], axis=1)
    return edges, inverse, counts, start, end, across_start, across_end


def _bend_pairs(inverse, counts, start, end, across_start, across_end):
    """Skip-one pairs straight through a vertex across each side shared by two quads."""
    shared = counts[inverse] == 2
    idx = np.flatnonzero(shared)
    order = idx[np.argsort(inverse[idx], kind="stable")]
    first, second = order[0::2], order[1::2]
    if first.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    # Partner of each end in each quad (the half-edges may run in opposite directions).
    def partner(h, vertex):
        return np.where(start[h] == vertex, across_start[h], across_end[h])

    v0 = start[first]
    v1 = end[first]
    pairs = np.concatenate([
        np.stack([partner(first, v0), v0, partner(second, v0)], axis=1),
        np.stack([partner(first, v1), v1, partner(second, v1)], axis=1),
    ])
    return pairs  # (a, middle, c)


def _levels(edges: np.ndarray, pinned: np.ndarray) -> np.ndarray:
    """Breadth-first graph distance from the pinned set over stretch links (-1 unreachable)."""
    level = np.where(pinned, 0, -1).astype(np.int64)
    a, b = edges[:, 0], edges[:, 1]
    k = 0
    while True:
        frontier_a = (level[a] == k) & (level[b] < 0)
        frontier_b = (level[b] == k) & (level[a] < 0)
        if not (frontier_a.any() or frontier_b.any()):
            return level
        level[b[frontier_a]] = k + 1
        level[a[frontier_b]] = k + 1
        k += 1


def _parents(edges: np.ndarray, level: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """For each vertex of level k >= 1, the level k - 1 neighbour it hangs from.

    Where several qualify (a cage pinned at a corner), the one most nearly straight above in the
    bind pose (largest rest height difference per metre of link), ties to the lower index.
    """
    a, b = edges[:, 0], edges[:, 1]
    down_ab = level[b] == level[a] + 1
    down_ba = level[a] == level[b] + 1
    child = np.concatenate([b[down_ab], a[down_ba]])
    par = np.concatenate([a[down_ab], b[down_ba]])
    link = rest[par] - rest[child]
    score = link[:, 2] / np.maximum(np.linalg.norm(link, axis=1), MIN_EDGE_LENGTH)
    order = np.lexsort((par, -score, child))
    child, par = child[order], par[order]
    first = np.ones(child.size, dtype=bool)
    first[1:] = child[1:] != child[:-1]
    parent = np.full(level.size, -1, dtype=np.int64)
    parent[child[first]] = par[first]
    return parent


# A meeting link continues both chains it joins when it turns by less than this from each
# chain's last link at rest (60 degrees): a strip's middle link does (0), the link between two
# neighbouring columns of a cage pinned at one corner does not (90).
SPAN_MIN_COSINE = 0.5


def _root_path(v: int, parent: np.ndarray) -> list[int]:
    """Vertices from the pin that `v` hangs from down to `v`."""
    path = [v]
    while parent[path[-1]] >= 0:
        path.append(int(parent[path[-1]]))
    return path[::-1]


def _continues(x: np.ndarray, parent: np.ndarray, v: int, towards: int) -> bool:
    """Whether the link v -> towards continues v's own chain (parent -> v) at rest."""
    if parent[v] < 0:
        return True  # a pin: the chain starts here
    last = x[v] - x[parent[v]]
    link = x[towards] - x[v]
    norms = np.linalg.norm(last) * np.linalg.norm(link)
    return bool(last @ link >= SPAN_MIN_COSINE * norms)


def _spans(edges: np.ndarray, parent: np.ndarray, pinned: np.ndarray,
           x: np.ndarray) -> tuple[np.ndarray, ...]:
    """Pin-to-pin paths through the links where two hanging chains meet end to end.

    The top-down sweep hangs every vertex from one parent, so a strip pinned at both ends is two
    chains (one from each pin) that meet at a link nothing keeps at length: under a hard sweep it
    stayed 24 % long. A meeting link joins two vertices neither of which hangs from the other,
    hanging from different pins, and continues both chains (`SPAN_MIN_COSINE`); the span is
    the first chain from its pin, the link, and the second chain back up to its own pin.

    Returned as colours (`_colour_paths`: (P, L) vertex paths padded with their last pin).
    Built once per model, in Python: spans are few (one per column).
    """
    paths = []
    for a, b in edges:
        a, b = int(a), int(b)
        if pinned[a] and pinned[b] or parent[a] == b or parent[b] == a:
            continue
        if not (_continues(x, parent, a, b) and _continues(x, parent, b, a)):
            continue
        first, second = _root_path(a, parent), _root_path(b, parent)
        if first[0] != second[0] and not set(first) & set(second):  # else a loop, not a span
            paths.append(first + second[::-1])
    return _colour_paths(paths, pinned)


def _colour_paths(paths: list[list[int]], pinned: np.ndarray) -> tuple[np.ndarray, ...]:
    """Vertex paths as colours (first fit, in order): each colour a (P, L) array of paths
    padded with their last vertex, no free vertex in two paths of one colour (so one vectorised
    projection moves each vertex once)."""
    colours: list[list[list[int]]] = []
    taken: list[set[int]] = []
    for path in paths:
        free = {v for v in path if not pinned[v]}
        for members, used in zip(colours, taken, strict=True):
            if not used & free:
                members.append(path)
                used |= free
                break
        else:
            colours.append([path])
            taken.append(free)
    out = []
    for members in colours:
        length = max(len(p) for p in members)
        out.append(np.array([p + [p[-1]] * (length - len(p)) for p in members], np.int64))
    return tuple(out)


def _columns(parent: np.ndarray, pinned: np.ndarray,
             spans: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """The hanging chains of the top-down sweep, for SHAKE (`constraints.solve_spans`): each path
    starts at an anchor (a pin, or a vertex several others hang from) and runs down through the
    vertices one other hangs from, to the vertex none does (a column of a cage, from its pinned
    top row to its hem). Vertices on a span are the span's. Colours as `_spans`
    (`_colour_paths`)."""
    N = parent.size
    count = np.bincount(parent[parent >= 0], minlength=N)
    only_child = np.full(N, -1, dtype=np.int64)
    hanging = np.flatnonzero(parent >= 0)
    only_child[parent[hanging]] = hanging  # meaningful where count == 1
    on_span = np.zeros(N, dtype=bool)
    for colour in spans:
        on_span[colour.reshape(-1)] = True
    on_span &= ~pinned
    paths = []
    for v in hanging:
        anchor = int(parent[v])
        if not (pinned[anchor] or count[anchor] > 1) or on_span[v]:
            continue  # v continues its parent's path, or the span holds it
        path = [anchor, int(v)]
        while count[path[-1]] == 1 and not on_span[only_child[path[-1]]]:
            path.append(int(only_child[path[-1]]))
        paths.append(path)
    return _colour_paths(paths, pinned)


def _group(a, b, rest_positions, cloth_of_vertex, movable, N) -> DistanceGroup:
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    keep = movable[a] | movable[b]  # links between two pinned vertices never move anything
    a, b = a[keep], b[keep]
    rest = np.linalg.norm(rest_positions[b] - rest_positions[a], axis=1)
    colours = colour_groups(colour_pairs(a, b, N))
    return DistanceGroup(a=a, b=b, rest=rest, cloth=cloth_of_vertex[a],
                         colours=tuple(colours))


def _unique_pairs(pairs: np.ndarray, N: int) -> np.ndarray:
    lo = np.minimum(pairs[:, 0], pairs[:, 1])
    hi = np.maximum(pairs[:, 0], pairs[:, 1])
    keep = lo != hi
    key = np.unique(lo[keep] * N + hi[keep])
    return np.stack([key // N, key % N], axis=1)


def _layer_pairs(x: np.ndarray, quads: np.ndarray, quad_cloth: np.ndarray, layer: np.ndarray,
                 cloth_of_vertex: np.ndarray, pinned: np.ndarray,
                 names: tuple[str, ...]) -> LayerPairs:
    """Pair every free vertex of layer L >= 1 with the nearest quad of layer L - 1 (same cloth).

    Fixed at rest (seed 003 relies on its uniform grids to infer the pushing triangle); the side
    it starts on is the side it must stay on, which is what pulls a vertex already through back.
    """
    vertices, pair_quads, uvs, sides = [], [], [], []
    quad_layer = layer[quads[:, 0]]
    same_layer = np.all(layer[quads] == quad_layer[:, None], axis=1)
    centroid = x[quads].mean(axis=1)
    for c in np.unique(cloth_of_vertex[layer > 0]):  # loop over layered cloths and layers
        for L in np.unique(layer[(cloth_of_vertex == c) & (layer > 0)]):
            verts = np.flatnonzero((cloth_of_vertex == c) & (layer == L) & ~pinned)
            below = np.flatnonzero((quad_cloth == c) & (quad_layer == L - 1) & same_layer)
            if verts.size == 0:
                continue
            if below.size == 0:
                raise SetupError(f"cloth '{names[int(c)]}': layer {L} has no quads of layer "
                                 f"{L - 1} below it to collide with")
            d2 = np.sum((x[verts][:, None, :] - centroid[below][None, :, :]) ** 2, axis=-1)
            q = below[np.argmin(d2, axis=1)]
            corners = quads[q]
            p = x[corners]  # (V, 4, 3)
            e1 = p[:, 1] - p[:, 0]
            e3 = p[:, 3] - p[:, 0]
            rel = x[verts] - p[:, 0]
            u = np.clip(np.sum(rel * e1, 1) / np.sum(e1 * e1, 1), 0.0, 1.0)
            v = np.clip(np.sum(rel * e3, 1) / np.sum(e3 * e3, 1), 0.0, 1.0)
            surface = bilinear(p, np.stack([u, v], axis=1))
            n = quad_normal(p)
            side = np.where(np.sum((x[verts] - surface) * n, axis=1) >= 0.0, 1.0, -1.0)
            vertices.append(verts)
            pair_quads.append(corners)
            uvs.append(np.stack([u, v], axis=1))
            sides.append(side)
    if not vertices:
        return LayerPairs(np.zeros(0, np.int64), np.zeros((0, 4), np.int64), np.zeros((0, 2)),
                          np.zeros(0))
    return LayerPairs(np.concatenate(vertices), np.concatenate(pair_quads),
                      np.concatenate(uvs), np.concatenate(sides))


def bilinear(corners: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """Point (..., 3) of the bilinear patch through `corners` (..., 4, 3) at `uv` (..., 2)."""
    u, v = uv[..., 0:1], uv[..., 1:2]
    return ((1 - u) * (1 - v) * corners[..., 0, :] + u * (1 - v) * corners[..., 1, :]
            + u * v * corners[..., 2, :] + (1 - u) * v * corners[..., 3, :])


def quad_normal(corners: np.ndarray) -> np.ndarray:
    """Unit winding normal of quads (..., 4, 3): cross of the diagonals (right-hand rule)."""
    n = np.cross(corners[..., 2, :] - corners[..., 0, :], corners[..., 3, :] - corners[..., 1, :])
    length = np.linalg.norm(n, axis=-1, keepdims=True)
    return n / np.maximum(length, 1e-12)


# --------------------------------------------------------------------------------------------


def build_cloth_model(*, cloths: Sequence[ClothRest], colliders: ColliderSet | None = None,
                      collider_mask: np.ndarray | None = None) -> ClothModel:
    """Validate and concatenate cages; raise `SetupError` naming the setup and vertex."""
    cloths = list(cloths)
    if not cloths:
        raise SetupError("no cloth to build")
    names = tuple(str(c.setup) for c in cloths)
    positions, quads_all, pinned_all, maxd_all, layer_all, owner, quad_owner = ([] for _ in
                                                                                 range(7))
    offset = [0]
    for c, cloth in enumerate(cloths):
        x, quads, pinned, max_distance, layer = _check_cloth(cloth)
        positions.append(x)
        quads_all.append(quads + offset[-1])
        pinned_all.append(pinned)
        maxd_all.append(max_distance)
        layer_all.append(layer)
        owner.append(np.full(x.shape[0], c, dtype=np.int64))
        quad_owner.append(np.full(quads.shape[0], c, dtype=np.int64))
        offset.append(offset[-1] + x.shape[0])
    x = np.concatenate(positions)
    quads = np.concatenate(quads_all)
    pinned = np.concatenate(pinned_all)
    max_distance = np.concatenate(maxd_all)
    layer = np.concatenate(layer_all)
    cloth_of_vertex = np.concatenate(owner)
    quad_cloth = np.concatenate(quad_owner)
    vertex_offset = np.asarray(offset, dtype=np.int64)
    N = x.shape[0]

    def where(v: int) -> str:
        c = int(cloth_of_vertex[v])
        return f"cloth '{names[c]}', vertex {int(v - vertex_offset[c])}"

    edges, inverse, counts, start, end, across_start, across_end = _edges_from_quads(quads, N)
    if np.any(counts > 2):
        e = int(np.flatnonzero(counts > 2)[0])
        a, b = (int(v) for v in edges[e])
        other = int(b - vertex_offset[cloth_of_vertex[b]])
        raise SetupError(f"{where(a)}: the edge to vertex {other}"
                         f" is shared by {int(counts[e])} quads; the cage must be manifold")
    length = np.linalg.norm(x[edges[:, 1]] - x[edges[:, 0]], axis=1)
    if np.any(length < MIN_EDGE_LENGTH):
        e = int(np.flatnonzero(length < MIN_EDGE_LENGTH)[0])
        a, b = (int(v) for v in edges[e])
        raise SetupError(f"{where(a)}: the edge to vertex "
                         f"{int(b - vertex_offset[cloth_of_vertex[b]])} has zero length "
                         f"({length[e]:.3g} m); merge or move the coincident vertices")
    degree = np.bincount(edges.reshape(-1), minlength=N)
    if np.any(degree == 0):
        v = int(np.flatnonzero(degree == 0)[0])
        raise SetupError(f"{where(v)} has no stretch neighbour (it belongs to no quad)")
    level = _levels(edges, pinned)
    if np.any(level < 0):
        v = int(np.flatnonzero(level < 0)[0])
        raise SetupError(f"{where(v)} is not connected to any pinned vertex; it would fall away "
                         "(pin a vertex of every separate piece)")
    parent = _parents(edges, level, x)
    spans = _spans(edges, parent, pinned, x)
    columns = _columns(parent, pinned, spans)
    movable = ~pinned

    stretch = _group(edges[:, 0], edges[:, 1], x, cloth_of_vertex, movable, N)
    vertical = level[stretch.a] != level[stretch.b]
    diagonals = np.concatenate([quads[:, [0, 2]], quads[:, [1, 3]]])
    shear_pairs = _unique_pairs(diagonals, N)
    shear = _group(shear_pairs[:, 0], shear_pairs[:, 1], x, cloth_of_vertex, movable, N)
    triples = _bend_pairs(inverse, counts, start, end, across_start, across_end)
    bend_pairs = _unique_pairs(triples[:, [0, 2]], N) if triples.size else np.zeros((0, 2),
                                                                                    np.int64)
    bend = _group(bend_pairs[:, 0], bend_pairs[:, 1], x, cloth_of_vertex, movable, N)
    layers = _layer_pairs(x, quads, quad_cloth, layer, cloth_of_vertex, pinned, names)

    colliders = colliders if colliders is not None else ColliderSet.empty()
    K, C = colliders.count, len(cloths)
    if collider_mask is None:
        mask = np.ones((K, C), dtype=bool)
    else:
        mask = np.asarray(collider_mask, dtype=bool)
        if mask.shape != (K, C):
            raise SetupError(f"collider_mask has shape {mask.shape}, expected {(K, C)}")
    return ClothModel(
        setup_names=names, rest_positions=x, quads=quads, cloth_of_vertex=cloth_of_vertex,
        vertex_offset=vertex_offset, pinned=pinned, max_distance=max_distance, layer=layer,
        edge_vertex=degree < 4, level=level, parent=parent, stretch=stretch, vertical=vertical,
        spans=spans, columns=columns, shear=shear, bend=bend, layers=layers, colliders=colliders,
        collider_mask=mask)
