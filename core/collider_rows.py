"""The collider shapes of `colliders.py` on coordinate rows: points as (3, n) arrays.

The same normals and signed distances as `colliders.shape_normal` (to rounding), for many
points at once: NumPy's loops over an axis of 3, as in an (n, 3) array of points, run several
times slower than over the points, so the render strands' exact test (hundreds of thousands of
points a frame, `hair/collide.py`) works on rows. Spheres (ellipsoids under a similarity),
ellipsoids and capsules have their own row forms; boxes and planes go through
`colliders.shape_normal`.
"""

from __future__ import annotations

import numpy as np

from .colliders import _EPS, ColliderKind, ColliderSet, capsule_ends, shape_normal

_UP = np.array([0.0, 0.0, 1.0])


def _linear(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A (3, 3) applied to rows x (3, n), row by row in NumPy's elementwise loops rather than
    BLAS: OpenBLAS hands a 3 x 3 by 3 x n product past ~29k points to two threads, and on a
    busy machine the second waits for a CPU (measured at load 11 on 2 cores, 60k points:
    median 11.6 ms wall, best 0.49). Elementwise, (a0 x0 + a1 x1) + a2 x2 per column: a
    column's bits do not depend on the batch (einsum's do: tested)."""
    out = np.empty((3, x.shape[1]), dtype=np.result_type(A, x))
    term = np.empty(x.shape[1], dtype=out.dtype)
    for i in range(3):
        np.multiply(x[0], A[i, 0], out=out[i])
        for j in (1, 2):
            np.multiply(x[j], A[i, j], out=term)
            out[i] += term
    return out


def _norm(v: np.ndarray) -> np.ndarray:
    return np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


def _normalise(v: np.ndarray, length: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """`v` (3, n) divided by its `length` (n,) in place; zero vectors become `fallback` (3,)."""
    degenerate = length < _EPS
    v /= np.maximum(length, _EPS)
    if degenerate.any():
        v[:, degenerate] = fallback[:, None]
    return v


def sphere_rows(x: np.ndarray, centre: np.ndarray, radius: float):
    """A sphere: outward normals (3, n) and signed distances (n,)."""
    n = x - centre[:, None]
    length = _norm(n)
    return _normalise(n, length, _UP), length - radius


def ellipsoid_rows(x: np.ndarray, M: np.ndarray, Minv: np.ndarray, size: float):
    """A sphere of radius `size` under any world matrix `M`: the radial projection in its unit
    space and the distance to the tangent plane there (`colliders.ellipsoid_normal`)."""
    u = _linear(Minv[:3, :3], x)
    u += Minv[:3, 3:4]
    u /= size
    _normalise(u, _norm(u), _UP)  # the unit-sphere point s
    surface = _linear(M[:3, :3], u * size)
    surface += M[:3, 3:4]
    n = _linear(Minv[:3, :3].T, u)  # the gradient of |Minv x| there
    _normalise(n, _norm(n), _UP)
    offset = x - surface
    return n, offset[0] * n[0] + offset[1] * n[1] + offset[2] * n[2]


def capsule_rows(x: np.ndarray, M: np.ndarray, half_length: float, radius_a: float,
                 radius_b: float):
    """A tapered capsule, the convex hull of two spheres (`colliders.capsule_normal`)."""
    A, B, ra, rb, L = capsule_ends(M, half_length, radius_a, radius_b)
    axis = B - A
    if L < _EPS or abs(ra - rb) >= L:  # one sphere holds the other
        return sphere_rows(x, A, ra) if ra >= rb else sphere_rows(x, B, rb)
    axis = axis / L
    rel = x - A[:, None]
    y = axis[0] * rel[0] + axis[1] * rel[1] + axis[2] * rel[2]
    radial = rel - axis[:, None] * y
    rho = _norm(radial)
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    perpendicular = np.cross(axis, helper)
    _normalise(radial, rho, perpendicular / np.linalg.norm(perpendicular))
    rho[rho < _EPS] = 0.0
    # The sides are tangent to both end spheres: sin(phi) = (ra - rb) / L.
    b = (ra - rb) / L
    a = np.sqrt(1.0 - b * b)
    k = a * y - b * rho  # along the side line
    n = a * radial + b * axis[:, None]
    sd = a * rho + b * y - ra
    for end, centre, r in ((k < 0.0, A, ra), (k > a * L, B, rb)):
        end = np.flatnonzero(end)
        if end.size:  # past an end: that end's sphere (columns taken and put, row by row)
            n_end, sd[end] = sphere_rows(np.take(x, end, axis=1), centre, r)
            for row in range(3):
                np.put(n[row], end, n_end[row])
    return n, sd


def capsule_bound_rows(x: np.ndarray, M: np.ndarray, half_length: float, radius_a: float,
                       radius_b: float) -> np.ndarray:
    """A lower bound (n,) of `capsule_rows`' signed distance of the points x (3, n), to
    rounding: the distance to the axis segment less the larger end radius. The tapered capsule
    (the hull of its end spheres) lies inside the round capsule of that radius about the
    segment, and a convex set's signed distance only grows as the set shrinks. Half the
    operations of `capsule_rows`, and elementwise like it: a caller may skip the exact shape
    for the points the bound puts beyond their radius and get the same distances for the rest
    (a capsule's bounding sphere holds many points far from its sides)."""
    A, B, ra, rb, L = capsule_ends(M, half_length, radius_a, radius_b)
    rel = x - A[:, None]
    if L >= _EPS:
        axis = (B - A) / L
        along = axis[0] * rel[0] + axis[1] * rel[1] + axis[2] * rel[2]
        np.clip(along, 0.0, L, out=along)
        for row in range(3):
            rel[row] -= axis[row] * along
    return _norm(rel) - max(ra, rb)


def ellipsoid_bound_rows(x: np.ndarray, M: np.ndarray, Minv: np.ndarray,
                         size: float) -> np.ndarray:
    """A lower bound (n,) of `ellipsoid_rows`' signed distance of the points x (3, n) outside
    the ellipsoid, to rounding (negative inside). With u = (Minv x) / size and s = u / |u|,
    that distance is size (|u| − 1) / |Minv^T s| (the offset from the radial projection is
    size (|u| − 1) M s, the normal Minv^T s normalised), and |Minv^T s| ≤ 1 / σ_min(M) for a
    unit s: so it is at least (|Minv x| − size) σ_min(M) where that is positive. One matrix
    product and a norm, a fifth of `ellipsoid_rows`: a caller may skip the exact shape for the
    points the bound puts beyond their radius (an ellipsoid's bounding sphere holds many points
    far from its flat sides) and get the same distances for the rest, as the batch's products
    are columnwise (`hair.collide`)."""
    u = _linear(Minv[:3, :3], x)
    u += Minv[:3, 3:4]  # in place: `Minv @ x + t` allocated a second (3, n) array, 4x slower
    sigma = float(np.linalg.svd(M[:3, :3], compute_uv=False)[-1])
    return (_norm(u) - size) * sigma


# Relative allowance of the float32 forms below against the float64 bounds they screen for:
# coordinates, matrix and axis rounded to float32 and a dozen float32 operations stay within
# ~20 float32 epsilons (1.2e-6) of the scale |x| + |the shape's origin| + its extent;
# 1e-5 leaves a factor of 8.
SCREEN_TOLERANCE = 1e-5


def capsule_screen_rows(x: np.ndarray, M: np.ndarray, half_length: float, radius_a: float,
                        radius_b: float, *, within: float, scale: float) -> np.ndarray:
    """Which float32 points x (3, n), all within `scale` of the world origin, may have
    `capsule_bound_rows` below `within`: the same distance to the axis segment in float32 (half
    the memory and twice the lanes of float64), against `within` + the larger end radius
    grown by `SCREEN_TOLERANCE` of the scale. A superset of the points the float64 bound keeps,
    so the caller's float64 bound of these alone keeps the very same points."""
    A, B, ra, rb, L = capsule_ends(M, half_length, radius_a, radius_b)
    scale = scale + float(np.linalg.norm(A)) + L
    rel = x - A.astype(x.dtype)[:, None]
    if L >= _EPS:
        axis = ((B - A) / L).astype(x.dtype)
        along = axis[0] * rel[0]
        along += axis[1] * rel[1]
        along += axis[2] * rel[2]
        np.clip(along, 0.0, np.float32(L), out=along)
        for row in range(3):
            rel[row] -= axis[row] * along
    limit = within + max(ra, rb) + SCREEN_TOLERANCE * scale
    rel *= rel
    rel[0] += rel[1]
    rel[0] += rel[2]
    return rel[0] <= np.float32(limit * limit)


def ellipsoid_screen_rows(x: np.ndarray, M: np.ndarray, Minv: np.ndarray, size: float, *,
                          within: float, scale: float) -> np.ndarray:
    """Which float32 points x (3, n), all within `scale` of the world origin, may have
    `ellipsoid_bound_rows` below `within`: (|Minv x| − size) σ_min(M) < within means
    |Minv x| < size + within / σ_min, tested on |Minv x|² in float32 with `SCREEN_TOLERANCE`
    of the scale of Minv x. A superset of the points the float64 bound keeps."""
    sigma = float(np.linalg.svd(M[:3, :3], compute_uv=False)[-1])
    u = _linear(Minv[:3, :3].astype(x.dtype), x)
    u += Minv[:3, 3:4].astype(x.dtype)
    reach = size + within / sigma
    scale = float(np.linalg.norm(Minv[:3, :3])) * scale + float(np.linalg.norm(Minv[:3, 3]))
    limit = reach + SCREEN_TOLERANCE * (scale + reach)
    u *= u
    u[0] += u[1]
    u[0] += u[2]
    return u[0] <= np.float32(limit * limit)


def shape_normal_rows(kind: int, x: np.ndarray, M: np.ndarray, Minv: np.ndarray,
                      colliders: ColliderSet, index: int, *, similarity: bool = False):
    """`colliders.shape_normal` of points x (3, n): normals (3, n) and signed distances (n,)."""
    size = float(colliders.size[index])
    if kind == ColliderKind.ELLIPSOID:
        if similarity:
            return sphere_rows(x, M[:3, 3], size * float(np.linalg.norm(M[:3, 0])))
        return ellipsoid_rows(x, M, Minv, size)
    if kind == ColliderKind.CAPSULE:
        return capsule_rows(x, M, size, float(colliders.radius_a[index]),
                            float(colliders.radius_b[index]))
    n, sd = shape_normal(kind, np.ascontiguousarray(x.T), M, Minv, colliders, index)
    return np.ascontiguousarray(np.broadcast_to(n, (x.shape[1], 3)).T), sd
