"""The contact sweep's push out of body meshes (`contact_sweep.sweep_with_contacts`, issue 13).

The contact sweep places the cloth level by level, each child with its parent held; the shape
colliders push inside it (`solver._Bake._contact_push`). Body meshes (`core.mesh_colliders`)
did not: their `push_out` keeps, per mesh, the history of one fixed point set and each point's
kept candidate triangles, and a level is a different subset of the points every time. Run
after the sweep instead, they left the vertical links at a pushed vertex stretched (a skirt
around a body with running legs 1.4 % at the frames, up to 3.7 % in the substeps).

Here the sweep asks the field in two read-only ways that leave its history alone:

- where the sweep starts, `MeshField.clearance`: from `push_out`'s last query (just run, at
  the same time) a lower bound on each vertex's distance from the surface, and, for the
  vertices that bound leaves within a link's length of touching and the sampled links near
  the surface, one `MeshField.contacts` query (the exact closest triangle, no kept state) of
  the vertices and the links' samples (as `collide_mesh_edges` samples them);
- per level, `contacts` again for only the children, and the links, those numbers cannot
  clear. A distance from a surface changes by at most the distance moved (1-Lipschitz): a
  child that moved m since the start is at least d - m from it, and a link's sample, which
  moves at most as far as the farther of its ends, at least its own d less that. A link not
  sampled at the start is bounded by its ends: a point of a link of length L <= rest between
  ends at least d_a and d_b away is at least (d_a + d_b - L) / 2 away. Most of the cloth
  moves a fraction of a millimetre in the sweep and is never asked again.

The pushes are the shape ones' (`constraints.turn_vertices_out`, and the turn of
`constraints.turn_links_out` for a link crossing between its ends): positions only, no
friction (the substep's friction has acted), the parent final.
"""

from __future__ import annotations

import numpy as np

from .constraints import mesh_edge_samples, norm3, turn_about, turn_vertices_out

# Metres: rounding allowance of the bound on a link's distance from the surface by its ends.
BOUND_SLACK = 1e-6


def _samples(x: np.ndarray, a: np.ndarray, b: np.ndarray, count: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`count` (n,) evenly spaced interior points of each link (a, b) (`collide_mesh_edges`'
    samples): (which link, parameter s, points (k, 3))."""
    which = np.repeat(np.arange(a.size), count)
    k = np.arange(which.size) - np.repeat(np.cumsum(count) - count, count)
    s = (k + 1.0) / (count[which] + 1.0)
    xa = x.take(a, axis=0)
    return which, s, xa[which] + s[:, None] * (x.take(b, axis=0) - xa)[which]


class MeshSweepPush:
    """One substep's mesh pushes for the contact sweep: `field` (`MeshField`), `index` the
    free vertices any mesh acts on and `mask` (M, len(index)) which mesh acts on which (None:
    all), as `push_out` was given them; `x` (N, 3) where the sweep starts (the caller measures
    the moves from there), `radius` (N,) per vertex (-inf where pinned: links from a pin are
    not pushed, as in `collide_mesh_edges`), `links` (parent, child, rest) of the sweep's
    levels from where it starts, the substep [t_start, t_end]."""

    def __init__(self, field, index: np.ndarray, mask: np.ndarray | None, x: np.ndarray,
                 radius: np.ndarray, links: tuple[np.ndarray, np.ndarray, np.ndarray],
                 t_start: float, t_end: float):
        self.field = field
        self.radius = radius
        self.t_start, self.t_end = t_start, t_end
        N = x.shape[0]
        parent, child, rest = links
        r_a, r_b = radius[parent], radius[child]
        wider = np.maximum(r_a, r_b)
        count = mesh_edge_samples(rest, wider)
        count[~np.isfinite(r_a)] = 0
        # Per mesh: a lower bound on each vertex's signed distance from the surface at the
        # start (inf: not the mesh's), which vertices it acts on, and per child vertex a lower
        # bound on (distance - radius) over its link's samples at the start (NaN: not sampled).
        self.parts = []
        for m in range(field.meshes.count):
            rows = index if mask is None else index[mask[m]]
            if rows.size == 0:
                continue
            clear = np.full(N, np.inf)
            clear[rows] = field.clearance(m, x[rows], t_end)
            outside = np.full(N, -np.inf)
            outside[rows] = field.outside_by(m, x[rows], t_end)
            member = np.zeros(N, dtype=bool)
            member[rows] = True
            # What these bounds would send to a query before it moved at all: exact now, once
            # (a pushed vertex's bound is its distance before the push, and it would be asked
            # at every level; a link lying along the surface is never cleared by its ends).
            # Refining a wider band (every vertex within a link's length) cost more than the
            # queries it saved: skirt around a body mesh 0.56 s against 0.37 s a bake.
            vertex = np.flatnonzero(member[child] & (clear[child] < r_b))
            link = np.flatnonzero(member[child] & (count > 0) & (
                0.5 * (clear[parent] + clear[child] - rest) < wider + BOUND_SLACK))
            which, s, points = _samples(x, parent[link], child[link], count[link])
            g = float(field.reach[m])
            c = field.contacts(m, np.concatenate([x.take(child[vertex], axis=0), points]),
                               t_start, t_end)
            # Not found: farther than the reach g, on a side not known. Deep inside it may come
            # within the reach (and be pushed) by any move: a vertex keeps its bound from
            # `push_out` (whose clearance counts such points from the reach). A sample is
            # outside when its link's ends surely are, by o_a and o_b, and o_a + o_b + 2 g >= L:
            # one inside deeper than g would be farther than o + g from both ends. Then it is
            # pushed only after moving more than g - r; otherwise it counts as touching (on the
            # body-mesh skirt, 717 level queries a bake instead of 342).
            found = np.zeros(vertex.size + which.size, dtype=bool)
            found[c.index] = True
            distance = np.zeros(vertex.size + which.size)
            distance[c.index] = c.distance
            exact = found[:vertex.size]
            clear[child[vertex[exact]]] = distance[:vertex.size][exact]
            link_low = np.full(N, np.nan)
            if which.size:
                a, b = parent[link], child[link]
                length = norm3(x.take(b, axis=0) - x.take(a, axis=0))
                beyond = (outside[a] + outside[b] + 2.0 * g
                          >= length * (1.0 + 1e-9) + BOUND_SLACK)
                distance[vertex.size:] = np.where(found[vertex.size:], distance[vertex.size:],
                                                  np.where(beyond[which], g, -np.inf))
                low = distance[vertex.size:] - ((1.0 - s) * r_a[link][which]
                                                + s * r_b[link][which])
                low = np.where(np.isfinite(low), low, 0.0)
                starts = np.cumsum(count[link]) - count[link]
                link_low[child[link]] = np.minimum.reduceat(low, starts)
            self.parts.append((m, clear, member, link_low))

    def __call__(self, x: np.ndarray, parent: np.ndarray, child: np.ndarray, rest: np.ndarray,
                 moved_a: np.ndarray, moved_b: np.ndarray, touched: np.ndarray) -> bool:
        """Push one level's children (their links `parent` -> `child`, rest lengths `rest`) out
        of the meshes with the parents held; `moved_a`, `moved_b` how far each end has moved
        since the start. Flags what it moved in `touched`; returns whether it moved any."""
        moved = False
        radius = self.radius
        r_a, r_b = radius[parent], radius[child]
        wider = np.maximum(r_a, r_b)
        count = mesh_edge_samples(rest, wider)
        count[~np.isfinite(r_a)] = 0
        # Rounded up: bounds on the moves, never a hair short (a vertex that did not move at
        # all is where its distance was taken, and is as far as that).
        moved_a = np.where(moved_a > 0.0, moved_a * (1.0 + 1e-9) + 1e-12, 0.0)
        moved_b = np.where(moved_b > 0.0, moved_b * (1.0 + 1e-9) + 1e-12, 0.0)
        farther = np.maximum(moved_a, moved_b)
        for m, clear, member, link_low in self.parts:
            low_b = clear[child] - moved_b
            vertex = member[child] & (low_b < r_b)
            link = member[child] & (count > 0)
            if link.any():
                ends = 0.5 * (clear[parent] - moved_a + low_b - rest) - wider
                sampled = link_low[child]
                bound = np.where(np.isnan(sampled), ends, sampled - farther)
                link &= bound < np.where(np.isnan(sampled), BOUND_SLACK, 0.0)
            if not (vertex.any() or link.any()):
                continue
            moved |= self._push(x, m, parent, child, rest, count, np.flatnonzero(vertex),
                                np.flatnonzero(link), touched)
        return moved

    def _push(self, x: np.ndarray, m: int, parent: np.ndarray, child: np.ndarray,
              rest: np.ndarray, samples: np.ndarray, vertex: np.ndarray, link: np.ndarray,
              touched: np.ndarray) -> bool:
        """Mesh `m`'s pushes of the level's links `vertex` (their children tested) and `link`
        (their interiors tested, with their parents for how deep those are): one `contacts`
        query of every point."""
        radius = self.radius
        a, b = parent[link], child[link]
        xa, xb = x.take(a, axis=0), x.take(b, axis=0)
        which, s, on_links = _samples(x, a, b, samples[link])
        points = np.concatenate([x.take(child[vertex], axis=0), xa, on_links])
        c = self.field.contacts(m, points, self.t_start, self.t_end)
        if c.index.size == 0:
            return False
        nv, nl = vertex.size, link.size
        distance = np.full(points.shape[0], np.inf)  # not found: beyond the reach
        distance[c.index] = c.distance
        normal = np.zeros_like(points)
        normal[c.index] = c.normal
        moved = False
        # Children inside their radius of the surface: out along the normal, parent held.
        penetration = radius[child[vertex]] - distance[:nv]
        hit = penetration > 0.0
        if hit.any():
            i = vertex[hit]
            turn_vertices_out(x, parent[i], child[i], normal[:nv][hit], penetration[hit],
                              rest[i], touched)
            moved = True
        if not nl:
            return moved
        # Links crossing between their ends (their child not just pushed): the deepest sample
        # of each comes out by turning the link about its parent on its rest-length sphere,
        # the child penetration / s higher along the normal (`turn_links_out`). A parent inside
        # its own radius is not the link's to fix: that part is left out (`turn_links_out`'s
        # parent_depth).
        pushed = np.zeros(child.size, dtype=bool)
        pushed[vertex[hit]] = True
        r_a = radius[a]
        depth_a = np.maximum(r_a - distance[nv:nv + nl], 0.0)
        d_s = distance[nv + nl:]
        penetration = ((1.0 - s) * (r_a - depth_a)[which] + s * radius[b][which] - d_s)
        hit = (penetration > 0.0) & ~pushed[link][which]
        if not hit.any():
            return moved
        order = np.flatnonzero(hit)
        order = order[np.lexsort((-penetration[order], which[order]))]
        first = np.ones(order.size, dtype=bool)
        first[1:] = which[order][1:] != which[order][:-1]
        pick = order[first]  # each link's deepest sample
        j = which[pick]
        x[b[j]] = turn_about(xa[j], xb[j], normal[nv + nl:][pick], penetration[pick] / s[pick],
                             rest[link][j])
        touched[b[j]] = True
        return True
