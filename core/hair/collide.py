"""Render strands pushed out of the colliders their guides collide with.

Render strands are interpolated from the simulated guides (`interpolate.py`), so between two
guides that hug a head a strand can cut through it: in the head-turn sample 1,906 of 20,000
strands went up to 10.4 cm inside the head while every guide stayed outside. After
interpolation, each strand point (the root excepted: it sits on the scalp) is projected out of
every collider to its own radius, with the same shapes and signed distances the solvers use
(`core/colliders.py`). It is a position projection of the drawn curve only, no dynamics: the
guides carry the motion.

Cost: 50,000 strands x 16 points is 800,000 points per frame. The broad phase tests every point
against each collider's bounding sphere once, in float32 on coordinate rows, a block of points
at a time (`_candidates`); only the points inside one (113k on the benchmark) are looked at
again, by every collider where they are at its turn (the first pass reuses the broad phase's
test of the points no earlier collider moved), and the exact signed distance runs on the
points inside its bounding sphere alone (`collider_rows`; a capsule's and a general
ellipsoid's only where a bound of it is within reach); planes test every point. A later pass
looks again only at the points the last one moved, each with the colliders that have not seen
it since (a collider with an exact distance does not test its own push again: the projection
is idempotent, and re-testing re-pushed 15.4k of the benchmark's points by a rounding). A
capsule's and a general ellipsoid's bound is screened in float32 first, with an allowance for
its rounding (`collider_rows.capsule_screen_rows`), so the float64 bound runs on the points
within reach alone and keeps the very same points (session 50: pass 1 8.4-9.0 -> 7.1-7.4 ms,
the call's temporaries 12.6 -> 9.5 MB).
Measured on the benchmark's head, neck and shoulders: 26.5 ms CPU per frame against 36.5
for one matrix product of every point and collider (|x|² − 2 x·c + |c|², and a (K, n)
mask) in the same runs on a loaded machine, then 23.5 -> 22.9 ms with the first pass's
reuse, the later passes' moved points and the ellipsoid's bound (hair_head_turn's frames
13.6 -> 10.8 ms); a box per strand (the strands all hang past the head) took 95 ms and no
broad phase 290 ms (tests/benchmarks/bench_hair_render.py; docs/hair-render.md).

Body-mesh colliders (`core/mesh_colliders.py`) come after the shapes, once per frame
(`collide_strands_meshes`): each strand near a mesh's bounding box has its points queried
against the exact triangles of that frame (per-frame triangle grid, Ericson's closest point,
the angle-weighted pseudo-normal for inside/outside), and a point inside is moved out along the
normal to its radius. Dense strands read the signed distance from a lattice of
such queries where the field is smooth (`core/mesh_lattice.py`), and keep the exact query
elsewhere. The body's surface is what the viewer sees, so it goes last; a point it
pushes into a shape collider stays there (a crease between the body and a shape collider).
A point deeper than the mesh's Depth beyond its radius finds no triangle; inside a closed part of
the mesh (ray parity, `mesh_inside`) it goes to the nearest surface, out by its radius (a chord
between two guides round a head lands on their arc); elsewhere it stays, as for the guides.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..collider_rows import (
    capsule_bound_rows,
    capsule_screen_rows,
    ellipsoid_bound_rows,
    ellipsoid_screen_rows,
    shape_normal_rows,
)
from ..colliders import ColliderKind, ColliderSet, is_similarity
from ..mesh_colliders import MeshColliders, MeshField
from ..mesh_inside import closed_shells, in_hull, nearest_contacts, ray_within
from ..mesh_lattice import PLANAR_TOLERANCE, NodeCache, lattice_contacts


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
# Relative rounding allowance of the lower bounds `capsule_bound_rows` and
# `ellipsoid_bound_rows` against their shape's own distance (both float64; measured up to
# 6e-13 of the capsule's distance from the origin + size).
BOUND_TOLERANCE = 1e-9


def _boxes(points: np.ndarray, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-strand bounding boxes (N, 3) of points (N, P, 3), grown by `reach`: one
    minimum/maximum per point index (a reduction over the middle axis is 3x slower)."""
    lo = points[:, 0].copy()
    hi = lo.copy()
    for p in range(1, points.shape[1]):
        np.minimum(lo, points[:, p], out=lo)
        np.maximum(hi, points[:, p], out=hi)
    return lo - np.float32(reach), hi + np.float32(reach)


def _put_rows(a: np.ndarray, index: np.ndarray, values: np.ndarray) -> None:
    """a[index] = values for rows of a contiguous (n, 3) array, as one put of 12-byte items."""
    row = np.dtype((np.void, a.itemsize * 3))
    np.put(a.view(row).ravel(), index, np.ascontiguousarray(values, dtype=a.dtype).view(row))


def _sphere_test(x: np.ndarray, centre: np.ndarray, limit2: np.floating, d2: np.ndarray,
                 other: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """`keep` (n,) bool: which points, as coordinate rows (3, n), are within a sphere: |x − c|²
    ≤ `limit2` in the rows' precision, summed x, y, z (`d2`, `other`: (n,) scratch). Nine
    passes over the points, in place: one matrix product of every collider (|x|² − 2 x·c +
    |c|², which cancels and needs a margin) and a (K, n) mask cost more than this exact test
    of each collider in turn."""
    np.subtract(x[0], centre[0], out=d2)
    np.multiply(d2, d2, out=d2)
    for axis in (1, 2):
        np.subtract(x[axis], centre[axis], out=other)
        np.multiply(other, other, out=other)
        d2 += other
    return np.less_equal(d2, limit2, out=keep)


# Points per block of the broad phase: a block's rows and scratch (~1.3 MB in float32) stay in
# the cache through every collider's nine passes; whole-array passes over 800,000 points go to
# memory each time (measured: a third faster, with the transposition to rows done per block).
BLOCK = 1 << 16


def _candidates(flat: np.ndarray, spheres: list, radius: np.ndarray, first: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The points (n, 3) of strands of P = len(radius) points, but the first `first` of each
    (the roots), inside any of the `spheres` (float32 centre (3,), squared radius) by
    `_sphere_test`, a block of points at a time: their flat indices, ascending; their
    coordinate rows (3, c), gathered from the block's rows while they are in the cache; which
    spheres each is inside (K, c) bool, the very test the first pass would make of an unmoved
    point; and each one's radius (c,)."""
    n, P = len(flat), len(radius)
    # Whole strands per block, so one pattern of the roots and radii serves every block.
    size = min(max(BLOCK // P, 1) * P, n)
    rows = np.empty((3, size), dtype=flat.dtype)
    d2, other = np.empty(size, dtype=flat.dtype), np.empty(size, dtype=flat.dtype)
    # The spheres' tests of one block, gathered at its candidates while in the cache:
    # whole-array masks (n bools per sphere, 3.2 MB on the benchmark) were fresh pages every
    # frame, and were read again from memory at the candidates.
    tests = np.empty((len(spheres), size), dtype=bool)
    inside = np.empty(size, dtype=bool)
    body = np.tile(np.arange(P) >= first, size // P)  # the roots stay
    radii = np.tile(radius, size // P)
    found, gathered, within, radius_of = [], [], [], []
    for start in range(0, n, size):
        m = min(size, n - start)
        x = rows[:, :m]
        np.copyto(x, flat[start:start + m].T)
        block = inside[:m]
        block[:] = False
        for (centre, limit2), test in zip(spheres, tests, strict=True):
            block |= _sphere_test(x, centre, limit2, d2[:m], other[:m], test[:m])
        block &= body[:m]
        hit = np.flatnonzero(block)
        found.append(hit + start)
        gathered.append(np.take(x, hit, axis=1, mode="clip"))
        within.append(np.take(tests[:, :m], hit, axis=1, mode="clip"))
        radius_of.append(np.take(radii, hit, mode="clip"))
    return (np.concatenate(found), np.concatenate(gathered, axis=1),
            np.concatenate(within, axis=1), np.concatenate(radius_of))


class Projections(NamedTuple):
    moved: int  # point projections made
    passes: int  # passes over the colliders made (a compact bake replays as many)


def collide_strands(points: np.ndarray, radius: np.ndarray, colliders: ColliderSet,
                    matrices: np.ndarray, *, first: int = 1) -> Projections:
    """Push the points (N, P, 3) of render strands out of every collider (world `matrices`
    (K, 4, 4)) to their `radius` (P,), in place; points before `first` (the roots) stay."""
    N, P = points.shape[:2]
    r = np.asarray(radius, dtype=np.float64)
    if not (first < P and colliders.count and N):
        return Projections(0, 0)
    reach = float(r[first:].max())
    shapes = []
    for k in range(colliders.count):
        M = np.asarray(matrices[k], dtype=np.float64)
        kind = int(colliders.kind[k])
        centre, bound = bounding_sphere(kind, M, float(colliders.size[k]),
                                         float(colliders.radius_a[k]),
                                         float(colliders.radius_b[k]))
        similar = kind == ColliderKind.ELLIPSOID and is_similarity(M)
        # The bounding sphere's float32 test, as stored: its centre and squared radius.
        sphere = (centre.astype(np.float32), np.float32(bound + reach) ** 2)
        shapes.append((k, kind, M, np.linalg.inv(M), centre, bound, similar, sphere))
    flat = np.ascontiguousarray(points.reshape(-1, 3))  # a view of contiguous points
    # Everything per point works on coordinate rows (3, n): NumPy's loops over an axis of 3
    # run several times slower than over the points (collider_rows). Rows are gathered with
    # np.take and written back to the points with one put of whole rows.
    # The first pass tests every point but the roots against every collider's bounding sphere
    # where it stands; the points inside any ("index", ascending) are the only ones a collider
    # can reach in any pass: a point moves only when it is inside one, and a point outside all
    # stays where it is, outside all. Each collider then tests those points again where they
    # are when its turn comes (moved by an earlier one or not), so it sees the very points, in
    # the very order, that a test of every point would give it.
    within = None  # which candidates are inside each collider's sphere where they stand
    if all(np.isfinite(shape[5]) for shape in shapes):
        spheres = [shape[7] for shape in shapes]
        index, x, within, radius_of = _candidates(flat, spheres, r, first)
    else:  # a plane: every point
        index = np.flatnonzero(np.tile(np.arange(P) >= first, N))
        x = np.ascontiguousarray(np.take(flat, index, axis=0).T)
        radius_of = np.take(r, index % P)  # each candidate's radius, kept with it
    moved = passes = turn = 0
    # The projection onto a shape with an exact distance (sphere, similar ellipsoid, capsule,
    # box, plane) is idempotent: a point it pushed to its radius and nobody moved since is
    # outside it (to the rounding of the stored point), so that collider does not test the
    # point again (pass 2 of the benchmark re-tested 36k points and re-pushed 15.4k of them by
    # less than 1 µm, a rounding inside, changing nothing visible). A general ellipsoid's
    # distance is to the tangent plane at the radial projection, not the nearest point: its
    # push can leave a point a micrometre inside, so it tests its own pushes again. Per
    # candidate, the turn of its last move (2 x (pass x K + collider), + 1 for a push the
    # collider must test again); per collider, the turn it last ran: a later pass tests a
    # point with a collider only if the point moved after that collider's last turn.
    moved_at = np.full(x.shape[1], -1, dtype=np.int64)
    ran_at = np.full(len(shapes), -1, dtype=np.int64)
    for _ in range(MAX_PASSES):
        d2, other = np.empty_like(x[0]), np.empty_like(x[0])
        keep = np.empty(x.shape[1], dtype=bool)
        touched = np.zeros(N, dtype=bool)
        shifted = np.zeros(x.shape[1], dtype=bool)  # the points a collider moved in this pass
        hits = []  # the points each collider moved in this pass, in turn
        for k, kind, M, Minv, centre, bound, similar, (centre32, limit2) in shapes:
            ran_before, ran_at[k], turn = ran_at[k], turn, turn + 2
            # The float32 bounding-sphere test (as stored) where the points are now, then the
            # exact signed distance on the points inside alone. In the first pass the broad
            # phase made that test of every point where it stood: only the points an earlier
            # collider moved are tested again (the test is elementwise: the same bits).
            if np.isfinite(bound):
                if within is not None:
                    inside_sphere = within[k]
                    # The points earlier colliders moved (a point two of them moved is tested
                    # twice, to the same bits): no scan of every candidate for them.
                    again = np.concatenate(hits) if hits else np.zeros(0, dtype=np.int64)
                    if again.size > len(d2):  # more repeats than candidates: each once
                        again = np.flatnonzero(shifted)
                    if again.size:
                        c = again.size
                        inside_sphere[again] = _sphere_test(
                            np.take(x, again, axis=1, mode="clip"), centre32, limit2,
                            d2[:c], other[:c], keep[:c])
                    near = np.flatnonzero(inside_sphere)
                elif not passes:  # a plane among the colliders: every point, where it is
                    near = np.flatnonzero(_sphere_test(x, centre32, limit2, d2, other, keep))
                else:  # the points moved since this collider's last turn
                    fresh = np.flatnonzero(moved_at > ran_before)
                    c = fresh.size
                    near = fresh[_sphere_test(np.take(x, fresh, axis=1, mode="clip"),
                                              centre32, limit2, d2[:c], other[:c], keep[:c])]
            elif not passes:  # a plane: every point
                near = np.arange(x.shape[1])
            else:
                near = np.flatnonzero(moved_at > ran_before)
            if not near.size:
                continue
            near_x = np.take(x, near, axis=1, mode="clip")
            bounded = kind == ColliderKind.CAPSULE or (kind == ColliderKind.ELLIPSOID
                                                       and not similar)
            tolerance = BOUND_TOLERANCE * (1.0 + float(np.abs(M[:3, 3]).max()) + bound)
            if bounded and near_x.dtype == np.float32:
                # The bound's screen in float32 first (`collider_rows.capsule_screen_rows`,
                # `ellipsoid_screen_rows`: a superset of the points the float64 bound keeps),
                # then float64 for those alone: the benchmark neck's sphere holds 61k points,
                # 12k of them within reach of its bound; the float64 bound of every one of them
                # was the pass's largest cost and its largest temporaries.
                scale = float(np.linalg.norm(centre)) + 1.001 * (bound + reach)
                args = ((M, float(colliders.size[k]), float(colliders.radius_a[k]),
                         float(colliders.radius_b[k])) if kind == ColliderKind.CAPSULE
                        else (M, Minv, float(colliders.size[k])))
                screen = capsule_screen_rows if kind == ColliderKind.CAPSULE \
                    else ellipsoid_screen_rows
                close = np.flatnonzero(screen(near_x, *args, within=reach + tolerance,
                                              scale=scale))
                if not close.size:
                    continue
                near = near[close]
                near_x = np.take(near_x, close, axis=1, mode="clip")
            xs = near_x.astype(np.float64)
            radii = np.take(radius_of, near, mode="clip")
            if bounded:
                # Only the points a lower bound of the distance leaves within their radius:
                # the capsule's distances are elementwise, the same for them as in any batch;
                # the ellipsoid's matrix products are columnwise (the same bits for a column
                # in any batch: checked on 300 random batches and subsets, and by the tests'
                # comparison with testing every point). Measured: the hair_head_turn torso's
                # bounding sphere holds 86.5k points a frame, the bound keeps 8.7k (8.2k
                # inside).
                if kind == ColliderKind.CAPSULE:
                    bound_sd = capsule_bound_rows(xs, M, float(colliders.size[k]),
                                                  float(colliders.radius_a[k]),
                                                  float(colliders.radius_b[k]))
                else:
                    bound_sd = ellipsoid_bound_rows(xs, M, Minv, float(colliders.size[k]))
                may = np.flatnonzero(~(bound_sd >= radii + tolerance))
                if not may.size:
                    continue
                near, radii = near[may], radii[may]
                xs = np.take(xs, may, axis=1, mode="clip")
            n, sd = shape_normal_rows(kind, xs, M, Minv, colliders, k, similarity=similar)
            depth = radii - sd
            inside = np.flatnonzero(depth > 0.0)
            if not inside.size:
                continue
            depth = depth[inside]
            out = np.take(xs, inside, axis=1)
            out += np.take(n, inside, axis=1) * depth
            out = out.astype(flat.dtype, copy=False)  # float32 as stored (or the caller's float64)
            hit = near[inside]
            shifted[hit] = True
            hits.append(hit)
            moved_at[hit] = ran_at[k] + int(kind == ColliderKind.ELLIPSOID and not similar)
            for axis in range(3):
                np.put(x[axis], hit, out[axis])
            touched[index[hit[depth > SETTLED_DEPTH]] // P] = True
            moved += int(inside.size)
        # The points this pass moved, back to the strands: once, where the rows leave them.
        shift = np.flatnonzero(shifted)
        _put_rows(flat, index[shift], np.take(x, shift, axis=1).T)
        passes += 1
        within = None  # later passes test where the points are
        if not touched.any():
            break
        # The next pass: the points this one moved, of the strands it moved by more than
        # SETTLED_DEPTH (the rows hold where they are now). A point it left where it was stays
        # outside every collider: each tested it there, at its turn, and the tests are
        # elementwise (the same bits in any batch), so the next pass would find it outside again
        # (measured on the benchmark: pass 2 tests 37k points, not the 75k of its strands).
        # Of those, only the points some collider has not seen since their last move: moved
        # after the first collider's turn, or by a general ellipsoid (the head's own pushes
        # of the benchmark, 11k points, are settled: every later collider saw them there).
        kept = shift[np.take(touched, index[shift] // P) & (np.take(moved_at, shift)
                                                            > ran_at[0])]
        index, x = index[kept], np.take(x, kept, axis=1)
        moved_at, radius_of = np.take(moved_at, kept), np.take(radius_of, kept)
    if not np.may_share_memory(flat, points):  # a copy was made: write it back
        points[...] = flat.reshape(points.shape)
    return Projections(moved, passes)


def collide_strands_meshes(points: np.ndarray, radius: np.ndarray, meshes: MeshColliders, *,
                           sample: int = 0, first: int = 1,
                           cache: NodeCache | None = None) -> np.ndarray:
    """Push the points (N, P, 3) of render strands out of every mesh collider's surface at its
    sample ``sample`` to their `radius` (P,), in place; points before `first` stay. Returns the
    flat indices (into N·P, ascending, once each) of the points moved. `cache`: the distance
    lattice's nodes of earlier frames (`mesh_lattice.NodeCache`; the same result without)."""
    N, P, _ = points.shape
    r = np.asarray(radius, dtype=np.float64)
    if meshes is None or not meshes.count or first >= P or not N:
        return np.zeros(0, dtype=np.int64)
    # One sample alone, so the preview (a frame at a time) and the bake query the same grid
    # and normals and agree bit for bit; the cache keeps the fields while the body is still.
    rmax = float(r[first:].max())
    field, nodes = (cache if cache is not None else NodeCache()).fields(meshes, sample, rmax)
    frame = field.meshes
    moved = []
    for m in range(frame.count):
        body = points[:, first:]
        vertices = frame.vertices[m][0]
        reach = np.float32(field.reach[m])
        low, high = vertices.min(axis=0) - reach, vertices.max(axis=0) + reach
        lo, hi = _boxes(body, 0.0)
        near = np.flatnonzero(np.all((lo <= high) & (hi >= low), axis=1))
        if not near.size:
            continue
        x = body[near].reshape(-1, 3).astype(np.float64)
        # A point outside the mesh's box grown by its reach, or in an empty cell of a triangle
        # grid of a larger reach (`within_reach`), finds none: long hair hangs mostly far from
        # a head.
        inbox = (x[:, 0] >= low[0]) & (x[:, 0] <= high[0])  # by column: no all() over an axis of 3
        for a in (1, 2):
            inbox &= (x[:, a] >= low[a]) & (x[:, a] <= high[a])
        ask = np.flatnonzero(inbox)
        ask = ask[field.within_reach(m, x[ask], 0.0)]
        index, normal, distance, beyond = _contacts(field, nodes, m, x[ask], cache)
        index = ask[index]
        # Unknown side: the points the query left out as maybe deeper inside than the reach,
        # and those not asked (beyond the reach, on either side).
        unknown = np.ones(len(x), dtype=bool)
        unknown[ask] = False
        unknown[ask[beyond]] = True
        deep = _beyond_reach(frame, field, m, x, np.flatnonzero(unknown))
        if deep is not None:
            index, normal, distance = (np.concatenate(a) for a in zip(
                (index, normal, distance), deep, strict=True))
        k = index % (P - first)
        depth = r[first:][k] - distance
        inside = depth > 0.0
        if not inside.any():
            continue
        i = index[inside]
        x[i] += normal[inside] * depth[inside, None]
        strand, point = near[i // (P - first)], i % (P - first) + first
        before = points[strand, point]
        points[strand, point] = x[i]
        # Flat indices of the points whose stored value changed (a push below the float32
        # rounding of a stored point changes nothing).
        changed = np.any(points[strand, point] != before, axis=1)
        moved.append((strand * P + point)[changed])
    if not moved:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.concatenate(moved))


def _beyond_reach(frame: MeshColliders, field: MeshField, m: int, x: np.ndarray,
                  lost: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(index, outward normal, signed distance) of the points `x[lost]` (beyond mesh `m`'s
    reach, on a side its query does not know) that are inside one of its closed parts. Their
    side by ray parity, their contact on the nearest surface (`mesh_inside`); None when there
    is none. Open parts have no inside away from their surface: a point beyond their reach
    stays, as before."""
    if not len(lost):
        return None
    shells = closed_shells(frame.triangles[m], field.topology[m])
    if shells is None:
        return None
    vertices = frame.vertices[m][0].astype(np.float64)
    lost = lost[in_hull(vertices, shells, x[lost])]
    within = ray_within(vertices, shells, x[lost])
    if not len(within.point):
        return None
    index, normal, distance = nearest_contacts(vertices, shells, x[lost], within)
    return lost[index], normal, distance


# How near the reach's depth a lattice distance must be for the exact query to decide (metres):
# the lattice reads the distance to about its planar tolerance (`mesh_lattice`).
DEPTH_MARGIN = 4.0 * PLANAR_TOLERANCE


def _contacts(field: MeshField, nodes: MeshField, m: int, x: np.ndarray,
              cache: NodeCache | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(index, outward normal, signed distance) of the points `x` (n, 3) within reach of mesh
    `m`: from the distance lattice where it is smooth (`mesh_lattice`), from the exact staged
    query elsewhere; and the indices of the points left out that may be inside deeper than the
    reach (the others left out are outside)."""
    lattice = lattice_contacts(nodes, m, x, float(field.reach[m]), cache)
    if lattice is None:
        c, _, beyond = field.staged_query(m, x, 0.0, 0.0)
        return c.index, c.normal, c.distance, np.flatnonzero(beyond)
    # A point deeper than the mesh's reach (its Depth + the largest radius) is left out, as
    # the exact query leaves it (a Depth under the lattice's node reach leaves such points in
    # smooth cells); one near that depth, where the lattice's rounding could decide otherwise
    # than the exact distance, is asked.
    reach = float(field.reach[m])
    kept = lattice.distance >= -reach + DEPTH_MARGIN
    border = ~kept & (lattice.distance >= -reach - DEPTH_MARGIN)
    rest = np.concatenate([lattice.unresolved, lattice.index[border]])
    c, _, beyond = field.staged_query(m, x[rest], 0.0, 0.0)
    return (np.concatenate([lattice.index[kept], rest[c.index]]),
            np.concatenate([lattice.normal[kept], c.normal]),
            np.concatenate([lattice.distance[kept], c.distance]),
            np.concatenate([lattice.index[~kept & ~border], rest[beyond]]))
