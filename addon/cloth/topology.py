"""The cage's grid structure from its quads (NumPy, no bpy): validation, rows, columns and each
bone's grid neighbours.

Seed 001 (Alan Wake's jacket) gives a bone the frame of its grid vertex: x towards the vertex
below in its column, y from its left to its right neighbour in its row. On an arbitrary quad cage
"below" and "row" come from the graph distance to the pinned vertices (``level``): the vertical
links join level k to k + 1, the horizontal links stay within one level (contract,
``ClothModel.level``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import SetupError


def cage_quads(setup: str, face_sizes: np.ndarray, face_vertices: np.ndarray) -> np.ndarray:
    """(Q, 4) quads from a mesh's polygons (``loop_total`` sizes and flat vertex indices).

    The solver's stretch/shear/bend groups are defined on quads (Alan Wake's grid), so every face
    must be one.
    """
    sizes = np.asarray(face_sizes, dtype=np.int64)
    if len(sizes) == 0:
        raise SetupError(f"Cloth cage '{setup}': the mesh has no faces; the cage must be a grid "
                         f"of quads")
    if np.all(sizes == 3):
        raise SetupError(f"Cloth cage '{setup}': the cage is made of triangles only; it must be "
                         f"a grid of quads (rows × columns), e.g. Tris to Quads")
    bad = np.nonzero(sizes != 4)[0]
    if len(bad):
        raise SetupError(f"Cloth cage '{setup}': face {int(bad[0])} has {int(sizes[bad[0]])} "
                         f"vertices; every face of the cage must be a quad")
    return np.asarray(face_vertices, dtype=np.int64).reshape(-1, 4)


def quad_edges(quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique undirected edges (E, 2) (sorted pairs) and how many quads use each (E,)."""
    sides = np.stack((quads, np.roll(quads, -1, axis=1)), axis=-1).reshape(-1, 2)
    sides = np.sort(sides, axis=1)
    edges, counts = np.unique(sides, axis=0, return_counts=True)
    return edges, counts


def check_cage(setup: str, n_vertices: int, quads: np.ndarray) -> np.ndarray:
    """Validate a quad cage: manifold edges, no degenerate quads, no lone vertices. Returns the
    edges (E, 2)."""
    corners = np.sort(quads, axis=1)
    degenerate = np.nonzero(np.any(corners[:, 1:] == corners[:, :-1], axis=1))[0]
    if len(degenerate):
        raise SetupError(f"Cloth cage '{setup}': face {int(degenerate[0])} repeats a vertex")
    edges, counts = quad_edges(quads)
    over = np.nonzero(counts > 2)[0]
    if len(over):
        a, b = edges[over[0]]
        raise SetupError(
            f"Cloth cage '{setup}': the cage is non-manifold: the edge between vertices {int(a)} "
            f"and {int(b)} is shared by {int(counts[over[0]])} faces (at most 2 allowed)")
    used = np.zeros(n_vertices, dtype=bool)
    used[quads.ravel()] = True
    lone = np.nonzero(~used)[0]
    if len(lone):
        raise SetupError(f"Cloth cage '{setup}': vertex {int(lone[0])} has no neighbours (it is "
                         f"in no face); remove it or connect it to the grid")
    return edges


def levels(n_vertices: int, edges: np.ndarray, pinned: np.ndarray) -> np.ndarray:
    """Graph distance of every vertex from the pinned set along the edges (-1 = unreachable).

    Breadth-first, one vectorised sweep over the edges per level (levels are the cage's rows).
    """
    level = np.full(n_vertices, -1, dtype=np.int64)
    level[pinned] = 0
    a, b = edges[:, 0], edges[:, 1]
    k = 0
    while True:
        grow_b = (level[a] == k) & (level[b] < 0)
        grow_a = (level[b] == k) & (level[a] < 0)
        if not (grow_a.any() or grow_b.any()):
            return level
        level[b[grow_b]] = k + 1
        level[a[grow_a]] = k + 1
        k += 1


@dataclass(frozen=True)
class GridNeighbours:
    """Per mapped vertex: the grid neighbours Alan Wake's bone frame uses (-1 = none)."""

    below: np.ndarray  # (B,) next vertex down the column (level + 1)
    above: np.ndarray  # (B,) previous vertex up the column (level - 1)
    left: np.ndarray  # (B,) row neighbour on the left (see ``row_votes``)
    right: np.ndarray  # (B,) row neighbour on the right


def row_votes(quads: np.ndarray, level: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every quad's say on which side of a vertex each row neighbour lies.

    Returns (vertex, neighbour, quad, vote) arrays, one entry per end of each row link (a side
    of a quad whose ends share a level) per quad using it: vote +1 means the neighbour is on the
    vertex's right, -1 on its left, 0 no say. Right is the top row's orientation: along the
    quads' winding for a quad below the link (its other corners one level further down). A
    quad above the link runs along it the other way (neighbouring quads of an oriented cage
    wind in opposite directions along the side they share), so there the winding is flipped;
    taking the winding alone, as before, made both row neighbours of a vertex with quads above
    and below "after" it. A quad whose other corners are on the link's own level (a pinned
    patch) has no say.
    """
    quads = np.asarray(quads, dtype=np.int64)
    level = np.asarray(level, dtype=np.int64)
    corners = [np.roll(quads, -k, axis=1).ravel() for k in range(4)]
    a, b, c, d = corners
    quad = np.repeat(np.arange(len(quads)), 4)
    row = level[a] == level[b]
    side = np.sign(level[c] + level[d] - 2 * level[a])[row]  # +1 the quad is below the link
    a, b, quad = a[row], b[row], quad[row]
    return (np.concatenate((a, b)), np.concatenate((b, a)), np.concatenate((quad, quad)),
            np.concatenate((side, -side)))


def grid_neighbours(quads: np.ndarray, edges: np.ndarray, level: np.ndarray,
                    vertices: np.ndarray, rest_positions: np.ndarray) -> GridNeighbours:
    """Below/above/left/right of each vertex in ``vertices`` (setup time, a loop over bones).

    Several candidates (irregular cages): ``below``/``above`` take the one most in line with the
    column (closest to straight through the vertex). Rows are oriented by the quads
    (``row_votes``), so left and right run the same way on every row and never swap between
    neighbouring bones; a neighbour the quads leave undecided goes by the quads holding the
    vertex's column neighbour (a pinned row with cloth on both sides hangs into that one), then
    by the winding (the top row's rule). Of several neighbours on one side, the one giving the
    straightest row through the vertex (rest positions) is taken.
    """
    quads = np.asarray(quads, dtype=np.int64)
    rest_positions = np.asarray(rest_positions, dtype=float)
    neighbours: dict[int, list[int]] = {}
    for a, b in edges.tolist():
        neighbours.setdefault(a, []).append(b)
        neighbours.setdefault(b, []).append(a)
    vote_v, vote_n, vote_q, vote = row_votes(quads, level)
    order = np.lexsort((vote_q, vote_n, vote_v))
    votes: dict[int, list[tuple[int, int, int]]] = {}
    for v, n, q, s in zip(vote_v[order].tolist(), vote_n[order].tolist(),
                          vote_q[order].tolist(), vote[order].tolist(), strict=True):
        votes.setdefault(v, []).append((n, q, s))
    successors = _winding_successors(quads)
    out = np.full((4, len(vertices)), -1, dtype=np.int64)
    for i, v in enumerate(np.asarray(vertices).tolist()):
        near = neighbours.get(v, [])
        ups = [n for n in near if level[n] == level[v] - 1]
        downs = [n for n in near if level[n] == level[v] + 1]
        if ups:
            out[1, i] = min(ups)
        if downs:
            if out[1, i] >= 0:  # the most collinear continuation of the column
                up_dir = rest_positions[v] - rest_positions[out[1, i]]
                scores = [np.dot(rest_positions[n] - rest_positions[v], up_dir) /
                          max(np.linalg.norm(rest_positions[n] - rest_positions[v]), 1e-12)
                          for n in downs]
                out[0, i] = downs[int(np.argmax(scores))]
            else:
                out[0, i] = min(downs)
        if ups and len(ups) > 1 and out[0, i] >= 0:
            down_dir = rest_positions[out[0, i]] - rest_positions[v]
            scores = [np.dot(rest_positions[v] - rest_positions[n], down_dir) for n in ups]
            out[1, i] = ups[int(np.argmax(scores))]
        column = int(out[0, i] if out[0, i] >= 0 else out[1, i])
        left, right = _row_sides(v, sorted(n for n in near if level[n] == level[v]),
                                 votes.get(v, []), quads, column, successors)
        out[2, i], out[3, i] = _straightest(v, left, right, rest_positions)
    return GridNeighbours(below=out[0], above=out[1], left=out[2], right=out[3])


def _winding_successors(quads: np.ndarray) -> dict[int, list[int]]:
    nxt: dict[int, list[int]] = {}
    for a, b in zip(quads.ravel().tolist(), np.roll(quads, -1, axis=1).ravel().tolist(),
                    strict=True):
        nxt.setdefault(a, []).append(b)
    return nxt


def _row_sides(v: int, row: list[int], votes: list[tuple[int, int, int]], quads: np.ndarray,
               column: int, successors: dict[int, list[int]]):
    """Row neighbours of ``v`` split into (left, right) lists of (neighbour, strength), by the
    sum of the quads' votes, then the votes of the quads holding ``column``, then the winding."""
    left, right = [], []
    for n in row:
        mine = [(q, s) for m, q, s in votes if m == n]
        total = sum(s for _, s in mine)
        key = (total,
               sum(s for q, s in mine if column >= 0 and column in quads[q]),
               1 if n in successors.get(v, []) else -1)
        sign = next((k for k in key if k != 0), 0)
        (right if sign > 0 else left).append((n, abs(total)))
    return left, right


def _straightest(v: int, left: list[tuple[int, int]], right: list[tuple[int, int]],
                 rest_positions: np.ndarray) -> tuple[int, int]:
    """One left and one right neighbour (-1 for none): the pair most in line through ``v``;
    alone on its side, the one with the most votes (then the lowest index)."""
    def strongest(side):
        return min(side, key=lambda ns: (-ns[1], ns[0]))[0] if side else -1

    if (len(left) > 1 and right) or (len(right) > 1 and left):
        p = rest_positions[v]
        best, pair = -np.inf, (-1, -1)
        for lft, _ in left:
            for rgt, _ in right:
                into, out_ = p - rest_positions[lft], rest_positions[rgt] - p
                straight = float(np.dot(into, out_) / max(
                    np.linalg.norm(into) * np.linalg.norm(out_), 1e-12))
                if straight > best + 1e-9:
                    best, pair = straight, (lft, rgt)
        return pair
    return strongest(left), strongest(right)


def column_chains(quads: np.ndarray, edges: np.ndarray, level: np.ndarray,
                  rest_positions: np.ndarray, *, column_step: int = 1) -> list[list[int]]:
    """Vertex chains from each top-row vertex down its column, every ``column_step``-th column.

    The top row (level 0) is walked along its horizontal links from an end (or from its lowest
    index when it is a closed ring, a skirt), so "every other column" (Alan Wake) alternates
    along the row.
    """
    top = np.nonzero(level == 0)[0]
    grid = grid_neighbours(quads, edges, level, np.arange(len(level)), rest_positions)
    side = {int(v): (int(grid.left[v]), int(grid.right[v])) for v in top}
    ends = [v for v, (lft, _) in side.items() if lft < 0]
    start = min(ends) if ends else int(top.min())
    row, seen, v = [], set(), start
    while v >= 0 and v not in seen:
        row.append(v)
        seen.add(v)
        v = side[v][1]
    chains = []
    for v in row[::max(int(column_step), 1)]:
        chain = [v]
        while True:
            below = int(grid.below[chain[-1]])
            if below < 0 or below in chain:
                break
            chain.append(below)
        chains.append(chain)
    return chains


BIND_CANDIDATES = 16  # triangles, by centroid distance, whose exact distance is compared


def bind_to_surface(points: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, ...]:
    """Attach points (P, 3) to the closest of ``triangles`` (T, 3, 3) (StrayCloth's skinning of
    cloth particles to the body surface).

    Returns (triangle index (P,), barycentric weights (P, 3), offset along the triangle normal
    (P,)). The triangle is the one whose closest point (Ericson 2005, 5.1.5) is nearest, among
    the BIND_CANDIDATES with the nearest centroids; the weights are those of the point's
    projection onto that triangle's plane, not clamped (slightly outside the triangle when the
    point is beyond an edge), so the bound point is exactly the vertex at the binding frame.
    The nearest centroid alone, with clamped weights, moved pins on uneven triangles (a long
    thin triangle's centroid is far from most of it) by up to 29 cm.
    """
    centroids = triangles.mean(axis=1)
    d2 = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(-1)
    k = min(BIND_CANDIDATES, len(triangles))
    candidates = np.argpartition(d2, k - 1, axis=1)[:, :k] if k < len(triangles) else \
        np.broadcast_to(np.arange(len(triangles)), d2.shape)
    tri_c = triangles[candidates]  # (P, k, 3, 3)
    distance = _triangle_distance(points[:, None, :], tri_c[..., 0, :], tri_c[..., 1, :],
                                  tri_c[..., 2, :])
    tri = candidates[np.arange(len(points)), np.argmin(distance, axis=1)]
    a, b, c = (triangles[tri, k] for k in range(3))
    normal = np.cross(b - a, c - a)
    normal /= np.maximum(np.linalg.norm(normal, axis=-1, keepdims=True), 1e-12)
    offset = np.einsum("pi,pi->p", points - a, normal)
    weights = _barycentric(points - offset[:, None] * normal, a, b, c)
    return tri, weights, offset


def _triangle_distance(p, a, b, c) -> np.ndarray:
    """Distance from points p to triangles abc (broadcast (..., 3)): to the plane when the
    projection is inside, else to the nearest edge."""
    normal = np.cross(b - a, c - a)
    normal /= np.maximum(np.linalg.norm(normal, axis=-1, keepdims=True), 1e-12)
    height = np.einsum("...i,...i->...", p - a, normal)
    weights = _barycentric(p - height[..., None] * normal, a, b, c)
    inside = np.all(weights >= 0.0, axis=-1)
    edges = np.stack([_segment_distance(p, a, b), _segment_distance(p, b, c),
                      _segment_distance(p, c, a)]).min(axis=0)
    return np.where(inside, np.abs(height), edges)


def _segment_distance(p, a, b) -> np.ndarray:
    d = b - a
    t = np.einsum("...i,...i->...", p - a, d) / np.maximum(np.einsum("...i,...i->...", d, d),
                                                         1e-30)
    closest = a + np.clip(t, 0.0, 1.0)[..., None] * d
    return np.linalg.norm(p - closest, axis=-1)


def _barycentric(p, a, b, c) -> np.ndarray:
    """Barycentric weights (..., 3) of p in the plane of abc (they sum to 1; outside the
    triangle one or two are negative)."""
    v0, v1, v2 = b - a, c - a, p - a
    d00, d01, d11 = (v0 * v0).sum(-1), (v0 * v1).sum(-1), (v1 * v1).sum(-1)
    d20, d21 = (v2 * v0).sum(-1), (v2 * v1).sum(-1)
    denom = np.maximum(d00 * d11 - d01 * d01, 1e-30)
    v = (d11 * d20 - d01 * d21) / denom
    w = (d00 * d21 - d01 * d20) / denom
    return np.stack((1.0 - v - w, v, w), axis=-1)


def surface_points(triangles: np.ndarray, weights: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Bound points on deformed triangles (..., P, 3, 3) → (..., P, 3)."""
    a, b, c = triangles[..., 0, :], triangles[..., 1, :], triangles[..., 2, :]
    normal = np.cross(b - a, c - a)
    normal /= np.maximum(np.linalg.norm(normal, axis=-1, keepdims=True), 1e-12)
    point = np.einsum("...pk,...pki->...pi", weights, triangles)
    return point + offset[..., None] * normal
