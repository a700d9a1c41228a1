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


def closest_on_triangles(p, a, b, c) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closest points on triangles (a, b, c) to points p, all (..., 3): the points (..., 3),
    their barycentric weights (..., 3) and their Voronoi region (..., ) (`REGION_*`)."""
    ab, ac, ap = b - a, c - a, p - a
    d1 = np.einsum("...i,...i->...", ab, ap)
    d2 = np.einsum("...i,...i->...", ac, ap)
    bp = p - b
    d3 = np.einsum("...i,...i->...", ab, bp)
    d4 = np.einsum("...i,...i->...", ac, bp)
    cp = p - c
    d5 = np.einsum("...i,...i->...", ab, cp)
    d6 = np.einsum("...i,...i->...", ac, cp)
    va = d3 * d6 - d5 * d4
    vb = d5 * d2 - d1 * d6
    vc = d1 * d4 - d3 * d2
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = va + vb + vc
        v_in = vb / denom
        w_in = vc / denom
        v_ab = d1 / (d1 - d3)
        w_ac = d2 / (d2 - d6)
        w_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
    zeros = np.zeros_like(d1)
    ones = np.ones_like(d1)
    # Ericson's early returns, in his order: the first region whose test passes wins.
    tests = [
        (REGION_A, (d1 <= 0) & (d2 <= 0), zeros, zeros),
        (REGION_B, (d3 >= 0) & (d4 <= d3), ones, zeros),
        (REGION_AB, (vc <= 0) & (d1 >= 0) & (d3 <= 0), v_ab, zeros),
        (REGION_C, (d6 >= 0) & (d5 <= d6), zeros, ones),
        (REGION_CA, (vb <= 0) & (d2 >= 0) & (d6 <= 0), zeros, w_ac),
        (REGION_BC, (va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0), 1 - w_bc, w_bc),
    ]
    conditions = [t[1] for t in tests]
    region = np.select(conditions, [t[0] for t in tests], REGION_FACE)
    v = np.nan_to_num(np.select(conditions, [t[2] for t in tests], v_in))
    w = np.nan_to_num(np.select(conditions, [t[3] for t in tests], w_in))
    bary = np.stack([1 - v - w, v, w], axis=-1)
    point = a + v[..., None] * ab + w[..., None] * ac
    return point, bary, region
