"""A segment's child turned about its parent, around a collider's edge, until it clears it.

The positions-only passes that end a substep alternate two projections: the FTL sweep puts a
child at its rest length L from its parent along their segment (Mueller et al. 2012), the
collider pushes it out through the nearest face. Their fixed point is not a solution where the
parent stands more than L inside the plane of the face the child was pushed out of: a child
dragged under a box's bottom face while its parent rides up the side face (the sweep's point
is inside the box, nearest the bottom face, and the push puts it back where it was), or a
child on the far side of a sphere smaller than a segment. The slide on the push's tangent plane
(`solver._slide_to_length`) cannot reach that plane at L either. The colliders win and the
segment ends the substep long (18-32 % in tests/core/test_chains_audit.py).

The set of places at L from the parent and outside a convex collider is the rest-length sphere
minus the collider; from the sweep's point (inside) the nearest part of it that the child can
reach by moving toward its parent along the surface lies on the great circle from the sweep's
direction u0 to the collider's outward normal at the parent n_p, whose end p + L n_p is
outside (a convex collider's distance grows by L along its outward normal). The child goes to
the first point of that arc clear of the collider, found by bisection on the angle (the arc's
points are inside at the start, clear at the end): it ends at length and outside, around the
edge. Generic over the analytic shapes (box, capsule, ellipsoid, sphere, plane) through their
signed distances (`colliders.shape_normal`). All arrays are component-major (3, n).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import transcendental
from ..triangles import row_dot

# Bisection steps on the arc's angle (at most pi): the child ends clear of the collider and
# within pi 2^-18 L of the arc's first clear point (0.6 um on a 5 cm segment).
TURN_STEPS = 18


def _norm(d: np.ndarray) -> np.ndarray:
    square = np.square(d)
    return np.sqrt(square[0] + square[1] + square[2])


def turn_until_clear(parent: np.ndarray, child: np.ndarray, rest: np.ndarray,
                     depth: Callable[[np.ndarray], np.ndarray], outward: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Children (3, n) at `rest` from their parents along their segments, or, where that point
    is inside the collider (`depth(points) > 0`: how far a point (3, n) is inside it, particle
    radius counted), turned about the parent toward `outward` (unit, the collider's outward
    normal at the parent) to the first point of that great circle clear of it. Returns
    (placed, moved): `moved` False where the sweep's point is inside and the segment points
    along `outward` or straight against it (no arc to turn on); those stay where they were."""
    d = child - parent
    u0 = d / np.maximum(_norm(d), 1e-300)
    swept = parent + rest * u0
    inside = depth(swept) > 0.0
    cos = row_dot(u0, outward)
    w = outward - cos * u0
    sin = _norm(w)
    turned = inside & (sin > 1e-9)
    moved = ~inside | turned
    if not turned.any():
        return np.where(moved, swept, child), moved
    w /= np.maximum(sin, 1e-300)
    # Angles: lo inside, hi clear (the end of the arc, the outward normal itself).
    lo = np.zeros_like(rest)
    hi = transcendental.arctan2(sin, cos)  # (guarded: bits independent of the heap)
    for _ in range(TURN_STEPS):
        mid = 0.5 * (lo + hi)
        point = parent + rest * (np.cos(mid) * u0 + np.sin(mid) * w)
        clear = depth(point) <= 0.0
        hi = np.where(clear, mid, hi)
        lo = np.where(clear, lo, mid)
    placed = parent + rest * (np.cos(hi) * u0 + np.sin(hi) * w)
    return np.where(turned, placed, np.where(moved, swept, child)), moved
