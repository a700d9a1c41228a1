"""Closest point on a triangle, for many point-triangle pairs at once.

Ericson, *Real-Time Collision Detection* (2005) §5.1.5: the closest point lies in one of seven
Voronoi regions (three vertices, three edges, the face); every region's test and barycentric
weights are evaluated for all pairs and the first passing test in Ericson's order is kept.
Hair roots bind to their scalp with it (`hair.scalp`) and the body-mesh colliders find the
nearest surface with it (`mesh_colliders`).
"""

from __future__ import annotations

import numpy as np

# Voronoi regions of the closest point: the three vertices, the three edges, the face.
REGION_A, REGION_B, REGION_C, REGION_AB, REGION_BC, REGION_CA, REGION_FACE = range(7)


def row_dot(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Dot products of coordinate rows (3, ...), associated as NumPy's einsum sums three
    products ((x + z) + y): the same values as an einsum over (..., 3) rows of points."""
    out = u[0] * v[0]
    out += u[2] * v[2]
    out += u[1] * v[1]
    return out


def closest_on_triangles(p, a, b, c) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closest points on triangles (a, b, c) to points p, all (..., 3): the points (..., 3),
    their barycentric weights (..., 3) and their Voronoi region (..., ) (`REGION_*`)."""
    rows = (np.ascontiguousarray(np.moveaxis(np.asarray(q), -1, 0)) for q in (p, a, b, c))
    point, v, w, region = closest_on_triangle_rows(*rows)
    return np.moveaxis(point, 0, -1), np.stack([1 - v - w, v, w], axis=-1), region


def closest_on_triangle_rows(P, A, B, C) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                   np.ndarray]:
    """`closest_on_triangles` on coordinate rows: points P and corners A, B, C (3, ...). The
    closest points (3, ...), the barycentric weights v, w of B and C (...,) (A's is 1 - v - w)
    and the regions (...,).

    Rows because NumPy's loops over an axis of 3 run several times slower than over the pairs
    (2.7x faster over 2 million pairs); each region's weights are computed only for the pairs
    in it."""
    ab, ac, ap = B - A, C - A, P - A
    d1 = row_dot(ab, ap)
    d2 = row_dot(ac, ap)
    bp = P - B
    d3 = row_dot(ab, bp)
    d4 = row_dot(ac, bp)
    cp = P - C
    d5 = row_dot(ab, cp)
    d6 = row_dot(ac, cp)
    va = d3 * d6 - d5 * d4
    vb = d5 * d2 - d1 * d6
    vc = d1 * d4 - d3 * d2
    region = np.full(d1.shape, REGION_FACE, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = va + vb + vc
        v = vb / denom
        w = vc / denom
        # Ericson's early returns, in his order: the first region whose test passes wins, so
        # the regions are written last to first, each over the ones after it. Constants go in
        # by np.copyto(where=...): one pass, where a boolean assignment compacts the mask
        # first (the same values).
        bc = (va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0)
        if bc.any():
            w_bc = (d4 - d3)[bc] / ((d4 - d3)[bc] + (d5 - d6)[bc])
            region[bc], v[bc], w[bc] = REGION_BC, 1 - w_bc, w_bc
        ca = (vb <= 0) & (d2 >= 0) & (d6 <= 0)
        if ca.any():
            region[ca], v[ca], w[ca] = REGION_CA, 0.0, d2[ca] / (d2[ca] - d6[ca])
        on_c = (d6 >= 0) & (d5 <= d6)
        _put(on_c, REGION_C, 0.0, 1.0, region, v, w)
        on_ab = (vc <= 0) & (d1 >= 0) & (d3 <= 0)
        if on_ab.any():
            region[on_ab], v[on_ab], w[on_ab] = REGION_AB, d1[on_ab] / (d1[on_ab] - d3[on_ab]), 0.0
        on_b = (d3 >= 0) & (d4 <= d3)
        _put(on_b, REGION_B, 1.0, 0.0, region, v, w)
        on_a = (d1 <= 0) & (d2 <= 0)
        _put(on_a, REGION_A, 0.0, 0.0, region, v, w)
    # Degenerate triangles (zero area) leave NaN or inf in the face weights: np.nan_to_num's
    # answer, but only when there is one (it makes six passes over each array).
    for weight in (v, w):
        if not np.isfinite(weight).all():
            np.nan_to_num(weight, copy=False)
    return A + v * ab + w * ac, v, w, region


def _put(on: np.ndarray, region: int, v: float, w: float, regions: np.ndarray,
         vs: np.ndarray, ws: np.ndarray) -> None:
    """Region `region` and weights (v, w) where `on`."""
    np.copyto(regions, region, where=on)
    np.copyto(vs, v, where=on)
    np.copyto(ws, w, where=on)
