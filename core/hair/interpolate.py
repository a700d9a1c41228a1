"""Render strands driven by guide strands (seed 002: "a few guides drive all the hair").

Binding (once, on the rest pose):

- ``NEAREST`` (seed 002): each render strand follows its nearest guide, shifted by its root's
  offset from that guide's root.
- ``BARYCENTRIC``: among the triangles formed by nearby guide roots, the most compact one whose
  plane projection contains the render root gives its barycentric weights, so neighbouring
  strands blend smoothly between guides (no visible bundles). A root outside every such
  triangle (the edge of the guided area) takes the weights of the closest point of the nearest
  triangle (it blends along the boundary edge); only when every triangle is degenerate does it
  fall back to ``NEAREST``.

The offset (root minus weighted guide root) is stored in a local frame of the first guide:
the frame (edge, in-plane normal, normal) of its "home triangle" with its two nearest
neighbour guide roots, so it turns with the head (G frames per pose). Per frame::

    strand[k] = g0[k] + (1 - c·s_k)·(w1·(g1[k] - g0[k]) + w2·(g2[k] - g0[k]) + offset)
                + s_k·jitter

with g0 the nearest guide, s_k = k / (P - 1) the position along the strand, c the clump factor
(strands gather toward their nearest guide from root to tip) and ``jitter`` a seeded per-strand
random vector in the same local frame (per-strand randomness grows root to tip). At the root
s = 0, so the root is exactly the weighted guide root plus offset, or the given ``roots`` (which
the Blender side evaluates on the deformed scalp, so no root ever leaves it). A strand bound with
weights (1, 0, 0) and zero offset reproduces its guide exactly.

Interpolation and B-spline resampling are both linear in the guide points, so ``render_strands``
resamples the G guides first and interpolates the N strands at the LOD resolution (G ≪ N).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from .. import transcendental
from ..errors import SetupError
from ..triangles import closest_on_triangles
from .bspline import resample_bspline
from .scalp import RootSamples

METHODS = ("BARYCENTRIC", "NEAREST")
MIN_GUIDE_LENGTH = 1e-6  # metres
# A triangle of guide roots whose area is below this fraction of its squared longest edge is
# degenerate (collinear roots): its normal has no direction.
DEGENERATE = 1e-6
# Barycentric coordinates may undershoot 0 by this much and still count as inside.
INSIDE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class StrandBinding:
    """How N render strands follow G guides; see the module doc for the formula."""

    method: str
    guide: np.ndarray  # (N, 3) int: nearest guide first, then the other two triangle corners
    weight: np.ndarray  # (N, 3): interpolation weights, (1, 0, 0) for NEAREST and fallbacks
    offset: np.ndarray  # (N, 3): rest root offset in the guide-triangle frame (x, y, normal)
    jitter: np.ndarray  # (N, 3): per-strand random tip offset in the same frame, metres
    clump: np.ndarray  # (N,): clump factor in [0, 1]
    fallback: np.ndarray  # (N,) bool: BARYCENTRIC strands outside every guide triangle
    triangle: np.ndarray  # (N,) int: guide whose home-triangle frame carries offset, jitter
    corners: np.ndarray  # (G, 3) int: each guide's home triangle (itself, two neighbours)
    flat: np.ndarray  # (G,) bool: degenerate home triangle, frame from the root tangent
    helper: np.ndarray  # (G, 3): fixed world axis orienting flat frames
    guides: int  # G

    @property
    def strands(self) -> int:
        return int(self.guide.shape[0])

    @cached_property
    def _columns(self) -> dict:
        """What every frame's interpolation derives from the binding alone, once per binding
        (the arrays are not changed after binding; a `dataclasses.replace` is a new binding):
        contiguous guide-index columns (a strided column is copied by every np.take), the
        weights and the jitter as columns and rows, the flags of the passes that can be
        skipped. Measured: 1.5 ms a frame at 50,000 strands."""
        clump = self.clump
        return {"guide": tuple(np.ascontiguousarray(self.guide[:, j]) for j in range(3)),
                "blended": bool(self.weight[:, 1:].any()), "jitter": bool(self.jitter.any()),
                "clump": bool(clump.any()), "uniform": bool(np.all(clump == clump[0])),
                "negative_clump": -clump, "dtype": {}}

    def _in(self, dtype) -> dict:
        """The weights (w1, w2 as (N, 1) columns), the jitter as (3, N) rows and the clump as an
        (N, 1) column in `dtype`, once per binding and dtype."""
        cache = self._columns["dtype"]
        key = np.dtype(dtype).str
        if key not in cache:
            cache[key] = {"w1": np.ascontiguousarray(self.weight[:, 1, None], dtype=dtype),
                          "w2": np.ascontiguousarray(self.weight[:, 2, None], dtype=dtype),
                          "jitter": np.ascontiguousarray(self.jitter.T, dtype=dtype),
                          "clump": np.ascontiguousarray(self.clump[:, None], dtype=dtype)}
        return cache[key]


def _unit(v: np.ndarray) -> np.ndarray:
    length = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(length > 0.0, length, 1.0)


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("...i,...i->...", a, b)


def _frames(guides: np.ndarray, corners: np.ndarray, flat: np.ndarray, helper: np.ndarray):
    """Orthonormal frames (x, y, z), each (G, 3), of the guides' home triangles in one pose.

    z is the triangle normal and x its first edge; a degenerate (flat) triple uses the nearest
    guide's first segment as z and a fixed world axis for x.
    """
    a, b, c = (guides[corners[:, i], 0] for i in range(3))
    tangent = guides[corners[:, 0], 1] - a
    flat3 = flat[:, None]
    z = np.where(flat3, _unit(tangent), _unit(np.cross(b - a, c - a)))
    x = np.where(flat3, helper, b - a)
    x = _unit(x - _dot(x, z)[:, None] * z)
    return x, np.cross(z, x), z


def _to_world(local: np.ndarray, frames, triangle: np.ndarray) -> np.ndarray:
    """Local offsets (N, 3) in each strand's home-triangle frame, in world axes. The frame rows
    are gathered with np.take and combined in place (fancy-index row gathers and fresh
    temporaries took 3.5x as long at 50,000 strands); the same sum, (x + y) + z."""
    x, y, z = (np.take(axis, triangle, axis=0) for axis in frames)
    x *= local[:, 0:1]
    y *= local[:, 1:2]
    x += y
    z *= local[:, 2:3]
    x += z
    return x


def _validate_guides(guides, *, name: str) -> np.ndarray:
    guides = np.asarray(guides, dtype=np.float64)
    if guides.ndim != 3 or guides.shape[2] != 3 or guides.shape[0] < 1:
        raise SetupError(f"{name}: guides must have shape (G, P, 3), got {guides.shape}")
    if guides.shape[1] < 2:
        raise SetupError(f"{name}: a guide needs at least 2 points, got {guides.shape[1]}")
    if not np.all(np.isfinite(guides)):
        g = int(np.argwhere(~np.isfinite(guides))[0][0])
        raise SetupError(f"{name}: guide {g} has a non-finite point")
    length = np.linalg.norm(np.diff(guides, axis=1), axis=-1).sum(axis=1)
    short = np.flatnonzero(length < MIN_GUIDE_LENGTH)
    if short.size:
        raise SetupError(f"{name}: guide {int(short[0])} has zero length; a strand needs length "
                         "to give render strands a direction")
    return guides


def _nearest(points: np.ndarray, targets: np.ndarray, k: int, chunk: int = 1 << 22):
    """Indices (N, k) of the k nearest targets to each point, nearest first, and distances.

    Brute force in chunks: candidates are ranked on float32 squared distances (half the memory
    traffic of argpartition), then the k picked are measured and sorted in float64.
    """
    N = len(points)
    index = np.zeros((N, k), dtype=np.int64)
    dist = np.zeros((N, k))
    rows = max(1, chunk // max(len(targets), 1))
    centre = targets.mean(axis=0)  # centred coordinates keep float32 ranking accurate
    t32 = (targets - centre).astype(np.float32)
    t2 = np.sum(t32 * t32, axis=1)
    for start in range(0, N, rows):  # chunks bound memory; work per chunk is vectorised
        p = points[start:start + rows]
        p32 = (p - centre).astype(np.float32)
        d2 = t2[None] - 2.0 * (p32 @ t32.T)  # + |p|², constant per row: ranking unchanged
        if k < len(targets):
            part = np.argpartition(d2, k - 1, axis=1)[:, :k]
        else:
            part = np.broadcast_to(np.arange(len(targets)), d2.shape).copy()
        exact = np.linalg.norm(targets[part] - p[:, None], axis=-1)
        order = np.argsort(exact, axis=1, kind="stable")
        index[start:start + rows] = np.take_along_axis(part, order, axis=1)
        dist[start:start + rows] = np.take_along_axis(exact, order, axis=1)
    return index, dist


def _barycentric(points, a, b, c):
    """Barycentric coordinates (..., 3) of the projections of points onto triangles (a, b, c)."""
    v0, v1, v2 = b - a, c - a, points - a
    d00, d01, d11 = _dot(v0, v0), _dot(v0, v1), _dot(v1, v1)
    d20, d21 = _dot(v2, v0), _dot(v2, v1)
    with np.errstate(divide="ignore", invalid="ignore"):  # degenerate triangles give NaN
        denom = d00 * d11 - d01 * d01
        wb = (d11 * d20 - d01 * d21) / denom
        wc = (d00 * d21 - d01 * d20) / denom
        return np.stack([1.0 - wb - wc, wb, wc], axis=-1)


def _degenerate(a, b, c) -> np.ndarray:
    longest = np.maximum(np.maximum(np.linalg.norm(b - a, axis=-1), np.linalg.norm(c - b, axis=-1)),
                         np.linalg.norm(a - c, axis=-1))
    area2 = np.linalg.norm(np.cross(b - a, c - a), axis=-1)
    return area2 <= DEGENERATE * np.maximum(longest, 1e-300) ** 2


# Candidate triangles among the K nearest guide roots: every triple, nearest-first ordered.
CANDIDATES = 6
_TRIPLES = np.array([(i, j, k) for i in range(CANDIDATES) for j in range(i + 1, CANDIDATES)
                     for k in range(j + 1, CANDIDATES)], dtype=np.int64)


def _triangulate(points, guide_roots, index, dist):
    """Per root, the most compact triangle of nearby guide roots containing its projection.

    Tests every triple of the K nearest guide roots (a local stand-in for a triangulation of the
    guide roots over the scalp) and keeps the containing one with the smallest summed corner
    distance. Returns corner indices (N, 3) (nearest first), barycentric weights, the inside
    mask and the usable mask (inside, or clamped onto the nearest triangle's boundary).
    """
    K = index.shape[1]
    triples = _TRIPLES[np.all(_TRIPLES < K, axis=1)]
    cand = index[:, triples]  # (N, C, 3) guide indices, nearest first within each triple
    corners = guide_roots[cand]  # (N, C, 3, 3)
    a, b, c = corners[..., 0, :], corners[..., 1, :], corners[..., 2, :]
    bary = _barycentric(points[:, None], a, b, c)  # (N, C, 3)
    ok = ~_degenerate(a, b, c) & np.all(np.isfinite(bary), axis=-1) & \
        np.all(bary >= -INSIDE_TOLERANCE, axis=-1)
    cost = np.where(ok, dist[:, triples].sum(axis=-1), np.inf)
    best = np.argmin(cost, axis=1)
    rows = np.arange(len(points))
    inside = ok[rows, best]
    bary = np.clip(bary[rows, best], 0.0, 1.0)
    # Outside every triangle (hairline, edge of the guided area): the closest point of the
    # nearest non-degenerate triangle, so strands blend along the boundary edge instead of
    # snapping to single guides in bundles.
    out = np.flatnonzero(~inside)
    if out.size:
        p = points[out, None]
        closest, edge_bary, _ = closest_on_triangles(p, a[out], b[out], c[out])
        gap = np.sum((closest - p) ** 2, axis=-1)
        gap = np.where(_degenerate(a[out], b[out], c[out]), np.inf, gap)
        near = np.argmin(gap, axis=1)
        usable = np.isfinite(gap[np.arange(out.size), near])
        best[out[usable]] = near[usable]
        bary[out[usable]] = edge_bary[np.arange(out.size), near][usable]
        inside_or_edge = inside.copy()
        inside_or_edge[out[usable]] = True
        return cand[rows, best], bary, inside, inside_or_edge
    return cand[rows, best], bary, inside, inside


def _home_triangles(guide_roots: np.ndarray) -> np.ndarray:
    """(G, 3): each guide with its two nearest other guides (repeats when fewer exist)."""
    G = len(guide_roots)
    if G < 3:
        return np.stack([np.arange(G), np.full(G, G - 1), np.zeros(G, np.int64)], axis=1)
    cand, _ = _nearest(guide_roots, guide_roots, min(4, G))
    others = cand != np.arange(G)[:, None]  # drop the guide itself (coincident roots too)
    order = np.argsort(~others, axis=1, kind="stable")[:, :2]
    return np.concatenate([np.arange(G)[:, None], np.take_along_axis(cand, order, axis=1)],
                          axis=1)


def bind_strands(*, roots, guide_rest, method: str = "BARYCENTRIC", clump: float = 0.0,
                 randomness: float = 0.0, seed: int = 0, name: str = "hair") -> StrandBinding:
    """Bind render strands with rest ``roots`` (RootSamples or (N, 3)) to ``guide_rest`` (G, P, 3).

    ``clump`` in [0, 1]: 1 pulls every tip onto its nearest guide. ``randomness`` ≥ 0: size of
    the per-strand random tip offset as a fraction of the guide length (seeded by ``seed``).
    Raises SetupError naming ``name`` for bad shapes, non-finite values and zero-length guides.
    """
    if method not in METHODS:
        raise SetupError(f"{name}: unknown interpolation method {method!r}; use one of {METHODS}")
    clump, randomness = float(clump), float(randomness)
    if not (np.isfinite(clump) and 0.0 <= clump <= 1.0):
        raise SetupError(f"{name}: clump must be in [0, 1], got {clump}")
    if not (np.isfinite(randomness) and randomness >= 0.0):
        raise SetupError(f"{name}: randomness must be >= 0, got {randomness}")
    guides = _validate_guides(guide_rest, name=name)
    points = roots.position if isinstance(roots, RootSamples) else roots
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 3 or len(points) < 1:
        raise SetupError(f"{name}: roots must have shape (N, 3) with N >= 1, got {points.shape}")
    if not np.all(np.isfinite(points)):
        raise SetupError(f"{name}: a render strand root is not finite")
    N, G = len(points), len(guides)
    guide_roots = guides[:, 0]
    index, dist = _nearest(points, guide_roots, min(CANDIDATES, G))
    # Frame triple for NEAREST strands: the three nearest guides (repeat when fewer exist).
    guide = np.concatenate([index, np.repeat(index[:, -1:], 2, axis=1)], axis=1)[:, :3]
    weight = np.zeros((N, 3))
    weight[:, 0] = 1.0
    fallback = np.zeros(N, dtype=bool)
    if method == "BARYCENTRIC" and G >= 3:
        tri, bary, inside, usable = _triangulate(points, guide_roots, index, dist)
        # A root on a guide root keeps exactly that guide (no round-off from the projection).
        on_guide = dist[:, 0] <= 1e-12 * max(1.0, float(np.abs(guide_roots).max()))
        use = usable & ~on_guide
        guide[use] = tri[use]
        weight[use] = bary[use]
        fallback = ~inside & ~on_guide
    elif method == "BARYCENTRIC":
        fallback[:] = dist[:, 0] > 0.0
    # One frame per guide, from its "home triangle" (the guide and its two nearest neighbour
    # roots), gathered per strand through its first guide: G frames per pose, not N.
    corners = _home_triangles(guide_roots)
    triangle = guide[:, 0]
    a, b, c = (guide_roots[corners[:, i]] for i in range(3))
    flat = _degenerate(a, b, c)
    tangent = _unit(guides[corners[:, 0], 1] - a)
    helper = np.eye(3)[np.argmin(np.abs(tangent), axis=1)]
    frames = _frames(guides, corners, flat, helper)
    world_offset = points - np.einsum("nj,njd->nd", weight, guide_roots[guide])
    x, y, z = (axis[triangle] for axis in frames)
    offset = np.stack([_dot(world_offset, x), _dot(world_offset, y), _dot(world_offset, z)],
                      axis=1)
    rng = np.random.default_rng(int(seed))
    # Uniform in the unit ball: direction from a normal sample, radius from u^(1/3).
    direction = _unit(rng.standard_normal((N, 3)))
    radius = transcendental.power(rng.random(N), 1.0 / 3.0)
    guide_length = np.linalg.norm(np.diff(guides, axis=1), axis=-1).sum(axis=1)
    strand_length = np.einsum("nj,nj->n", weight, guide_length[guide])
    jitter = direction * (radius * randomness * strand_length)[:, None]
    return StrandBinding(method=method, guide=guide, weight=weight, offset=offset, jitter=jitter,
                         clump=np.full(N, clump), fallback=fallback, triangle=triangle,
                         corners=corners, flat=flat, helper=helper, guides=G)


def _to_world_rows(local: np.ndarray, frames, triangle: np.ndarray, out: np.ndarray) -> None:
    """`_to_world` on coordinate rows: local offsets (3, N) in each strand's home-triangle
    frame, added to `out` (3, N) in world axes. The same sum, (x + y) + z, in the same
    precision, elementwise: NumPy's loops over an axis of 3, as in (N, 3) arrays, run several
    times slower than over the strands (4.7 -> 0.5 ms at 50,000 strands)."""
    rows = [np.ascontiguousarray(axis.T) for axis in frames]  # (3, G) each
    for d in range(3):
        world = np.take(rows[0][d], triangle)
        world *= local[0]
        y = np.take(rows[1][d], triangle)
        y *= local[1]
        world += y
        z = np.take(rows[2][d], triangle)
        z *= local[2]
        world += z
        out[d] += world


@lru_cache(maxsize=16)
def _line_basis(points: int, dtype) -> np.ndarray:
    """(6, points * 3) matrix B with [a, b] @ B = a + s_k·b at every point k (flat layout)."""
    s = np.linspace(0.0, 1.0, points)
    basis = np.zeros((6, points, 3))
    for d in range(3):  # three components
        basis[d, :, d] = 1.0
        basis[3 + d, :, d] = s
    basis = basis.reshape(6, points * 3).astype(dtype)
    basis.setflags(write=False)
    return basis


# Points per block of the per-strand passes (8,192 / P strands): a block's output rows and two
# scratch arrays (3 x 98 kB in float32) stay in a core's L2 cache through the block's thirteen
# passes, and the block's small matrix product (8,192 / P x 6 by 6 x 3P: 147,456
# multiply-adds) stays under OpenBLAS's threading threshold (65,536 x 4): a product of 2,048
# x 16-point strands went to two BLAS threads, whose second one waits for a CPU on a busy
# machine (measured at load 11 on 2 cores: 137 ms wall for the 25 blocks' products of 2,048
# strands against 4.7 ms for the 98 of 512, the same 4-6 ms of CPU). Every point is computed
# by the same operations in the same order as on whole arrays: the same bits (checked on the
# benchmark's frames, float32 and float64, per-strand clump, NEAREST, two frames at once).
BLOCK_POINTS = 8192


def _interpolate_pose(binding: StrandBinding, guides: np.ndarray, roots, out: np.ndarray,
                      frame_guides: np.ndarray):
    """One pose: guides (G, P, 3) -> out (N, P * 3), all strands at once.

    Rearranged so every pass over the big arrays is contiguous (broadcasting a (N, 1, 3) vector
    over points is ~10x slower in NumPy than a flat row or column broadcast):
    strand[k] = h0[k] + keep_k·(w1 (h1 - h0) + w2 (h2 - h0))[k] + root + s_k·(jitter - c·delta)
    with h the guide shapes relative to their roots, keep_k = 1 - c·s_k and delta = root - g0's
    root; the last two terms are one small matrix product. The per-strand passes run a block of
    strands at a time (`BLOCK_POINTS`).
    """
    G, P, _ = guides.shape
    N = len(out)
    dtype = out.dtype
    guide_roots = guides[:, 0]
    # Guide shapes relative to their roots, flat (G, P * 3): the per-strand gathers copy rows.
    shape = (guides - guide_roots[:, None]).reshape(G, P * 3).astype(dtype, copy=False)
    columns, typed = binding._columns, binding._in(dtype)
    i0, i1, i2 = columns["guide"]
    has_jitter, has_clump, blended = columns["jitter"], columns["clump"], columns["blended"]
    frames = None
    if roots is None or has_jitter:
        frames = _frames(frame_guides, binding.corners, binding.flat, binding.helper)
    if roots is None:
        roots = np.einsum("nj,njd->nd", binding.weight, guide_roots[binding.guide]) + \
            _to_world(binding.offset, frames, binding.triangle)
    # The root and s·(jitter - c·delta) terms as coordinate rows (6, N), the same values as
    # the (N, 6) form they replace (elementwise, in the same precision and order).
    line = np.empty((6, N), dtype=dtype)
    line[:3] = roots.T
    if has_clump:
        negative_clump = columns["negative_clump"]
        for d in range(3):
            np.multiply(negative_clump, roots[:, d] - np.take(guide_roots[:, d], i0),
                        out=line[3 + d], casting="same_kind")
    else:
        line[3:] = 0.0
    if has_jitter:  # gathers in the output precision: this is a per-strand pass
        _to_world_rows(typed["jitter"], tuple(axis.astype(dtype) for axis in frames),
                       binding.triangle, line[3:])
    basis = _line_basis(P, np.dtype(dtype))
    keep = None  # 1 - c·s per flat point, when one clump serves every strand
    if blended:
        w1, w2 = typed["w1"], typed["w2"]
        s3 = np.repeat(np.linspace(0.0, 1.0, P), 3)
        if has_clump and columns["uniform"]:
            keep = (1.0 - binding.clump[0] * s3).astype(dtype)[None]
        elif has_clump:
            s3 = s3.astype(dtype)[None]
            clump = typed["clump"]
    size = max(min(BLOCK_POINTS // P, N), 1)
    blend, other = np.empty((size, P * 3), dtype=dtype), np.empty((size, P * 3), dtype=dtype)
    # Indices come from the binding (validated when it was made): mode="clip" lets np.take
    # write into `out` directly (the default "raise" buffers the whole result first).
    for start in range(0, N, size):
        stop = min(start + size, N)
        o = out[start:stop]
        b, t = blend[:stop - start], other[:stop - start]
        np.take(shape, i0[start:stop], axis=0, out=o, mode="clip")  # h0
        if blended:
            np.take(shape, i1[start:stop], axis=0, out=b, mode="clip")
            b -= o
            b *= w1[start:stop]
            np.take(shape, i2[start:stop], axis=0, out=t, mode="clip")
            t -= o
            t *= w2[start:stop]
            b += t
            if keep is not None:  # blend *= 1 - c·s: a single row broadcast
                b *= keep
            elif has_clump:  # per-strand clump: row and column broadcasts
                np.multiply(b, s3, out=t)
                t *= clump[start:stop]
                b -= t
            o += b
        np.matmul(line[:, start:stop].T, basis, out=t)
        o += t
    return out


def interpolate_strands(binding: StrandBinding, guides, *, roots=None, out=None,
                        frame_guides=None) -> np.ndarray:
    """Render strands (..., N, P, 3) from guides (..., G, P, 3) (any leading axes, e.g. frames).

    ``roots`` (..., N, 3): where the render roots are (evaluated on the deformed scalp); None
    places them at the weighted guide roots plus the offset turned with the guide triangle.
    Computed in the guides' dtype (float32 halves the memory traffic for Blender output);
    ``out`` may be a preallocated (..., N, P, 3) array of that dtype. ``frame_guides``: the
    guides the binding was made on, at their own resolution, when ``guides`` are resampled (the
    fallback frames of degenerate guide triples use the first segment's direction).
    """
    guides = np.asarray(guides)
    if guides.dtype not in (np.float32, np.float64):
        guides = guides.astype(np.float64)
    if guides.ndim < 3 or guides.shape[-3] != binding.guides or guides.shape[-1] != 3:
        raise SetupError(f"guides have shape {guides.shape}, expected (..., {binding.guides}, "
                         "P, 3)")
    lead, (G, P) = guides.shape[:-3], guides.shape[-3:-1]
    N = binding.strands
    if roots is not None:
        roots = np.asarray(roots, dtype=np.float64)
        if roots.shape != (*lead, N, 3):
            raise SetupError(f"roots have shape {roots.shape}, expected {(*lead, N, 3)}")
        roots = roots.reshape(-1, N, 3)
    if out is None:
        out = np.empty((*lead, N, P, 3), dtype=guides.dtype)
    elif out.shape != (*lead, N, P, 3):
        raise SetupError(f"out has shape {out.shape}, expected {(*lead, N, P, 3)}")
    flat_guides = guides.reshape(-1, G, P, 3).astype(np.float64, copy=False)
    flat_out = out.reshape(-1, N, P * 3)
    if frame_guides is None:
        frame_guides = flat_guides
    else:
        frame_guides = np.asarray(frame_guides, dtype=np.float64)
        frame_guides = frame_guides.reshape(-1, *frame_guides.shape[-3:])
    for i in range(flat_guides.shape[0]):  # one pose (frame) at a time, all strands vectorised
        _interpolate_pose(binding, flat_guides[i], None if roots is None else roots[i],
                          flat_out[i], frame_guides[i])
    return out


def render_strands(binding: StrandBinding, guides, *, points: int, roots=None,
                   out=None) -> np.ndarray:
    """Guides (..., G, P, 3) -> render strands (..., N, points, 3) on the guides' B-splines.

    Resamples the G guides first, then interpolates at ``points`` per strand: both steps are
    linear in the guide points, so this equals interpolate-then-resample up to the clump and
    jitter profiles, at G/N of the B-spline cost.
    """
    return interpolate_strands(binding, resample_bspline(guides, points), roots=roots, out=out,
                               frame_guides=guides)
