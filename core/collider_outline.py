"""Wireframe outlines of collider shapes, every point exactly on the surface the solvers collide
with (`colliders.py`): what the viewport draws for a Waft collider, so an artist sees the shape
at the size it collides (a capsule drawn as a small sphere once collided as a 0.5 m capsule).

Each function returns (N, 2, 3) world-space line segments (pairs of points), built from the same
world matrix and parameters as the shape's signed distance: an ellipsoid is a sphere of radius
`size` under the full affine matrix; a capsule ("round cone", the convex hull of two spheres) has
its ends at local z = ±size and radii scaled by the mean length of the local x and y axes; a box
has half-extents `size`; a plane is the local xy plane (a square of half-width `size` is drawn).
"""

from __future__ import annotations

import math

import numpy as np

from .colliders import ColliderKind

SEGMENTS = 32  # line segments per full circle


def _polyline(points: np.ndarray, *, closed: bool) -> np.ndarray:
    """(N, 3) points → (N or N - 1, 2, 3) segments joining consecutive points."""
    end = np.roll(points, -1, axis=0) if closed else points[1:]
    start = points if closed else points[:-1]
    return np.stack([start, end], axis=1)


def _apply(M: np.ndarray, local: np.ndarray) -> np.ndarray:
    return local @ M[:3, :3].T + M[:3, 3]


def _circle(angles: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.cos(angles)[:, None] * u + np.sin(angles)[:, None] * v


def ellipsoid_outline(M: np.ndarray, size: float, segments: int = SEGMENTS) -> np.ndarray:
    """Three great circles and two latitude rings of the local sphere, mapped by `M`."""
    t = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    e = np.eye(3)
    rings = [_circle(t, e[0], e[1]), _circle(t, e[1], e[2]), _circle(t, e[2], e[0])]
    for z in (-0.5, 0.5):
        r = np.sqrt(1.0 - z * z)
        rings.append(r * _circle(t, e[0], e[1]) + z * e[2])
    return np.concatenate([_polyline(_apply(M, size * ring), closed=True) for ring in rings])


def _frame(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors perpendicular to `axis` (unit) and to each other."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(axis, helper)
    u /= np.linalg.norm(u)
    return u, np.cross(axis, u)


def capsule_outline(M: np.ndarray, half_length: float, radius_a: float, radius_b: float,
                    segments: int = SEGMENTS) -> np.ndarray:
    """The tangent circles where the cone side meets each end sphere, four lines along the side,
    and the caps' meridian arcs in two planes, in world space (the capsule's own construction)."""
    A = _apply(M, np.array([0.0, 0.0, -half_length]))
    B = _apply(M, np.array([0.0, 0.0, half_length]))
    radial_scale = 0.5 * (np.linalg.norm(M[:3, 0]) + np.linalg.norm(M[:3, 1]))
    ra, rb = radius_a * radial_scale, radius_b * radial_scale
    axis = B - A
    L = float(np.linalg.norm(axis))
    if L < 1e-12 or abs(ra - rb) >= L:  # one sphere holds the other: the bigger sphere
        center, r = (A, ra) if ra >= rb else (B, rb)
        return ellipsoid_outline(np.block([[np.eye(3), center[:, None]], [np.zeros((1, 3)),
                                           np.ones((1, 1))]]), r, segments)
    axis = axis / L
    u, v = _frame(axis)
    b = (ra - rb) / L  # sin of the side's tilt: its normal is a d + b axis (`capsule_normal`)
    a = np.sqrt(1.0 - b * b)
    t = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    ring = _circle(t, u, v)  # (segments, 3) unit radial directions
    lines = []
    ends = ((A, ra, -1.0), (B, rb, 1.0))
    for center, r, _ in ends:  # the circles where the side touches each sphere
        lines.append(_polyline(center + r * (a * ring + b * axis), closed=True))
    for direction in (u, v, -u, -v):
        lines.append(np.stack([A + ra * (a * direction + b * axis),
                               B + rb * (a * direction + b * axis)])[None])
    # Cap arcs in the (u, axis) and (v, axis) planes: from the tangent point (angle tilt from
    # the sphere's equator) over the pole to the opposite tangent point, -pi - tilt at A's end
    # (pole -axis), pi - tilt at B's (pole +axis).
    tilt = math.asin(b)  # a scalar: the C library's, no NumPy kernel involved
    for center, r, pole in ends:
        end = -np.pi - tilt if pole < 0 else np.pi - tilt
        phi = np.linspace(tilt, end, segments // 2 + 1)[:, None]
        for direction in (u, v):
            lines.append(_polyline(center + r * (np.cos(phi) * direction + np.sin(phi) * axis),
                                   closed=False))
    return np.concatenate(lines)


def box_outline(M: np.ndarray, half_extent: float) -> np.ndarray:
    """The 12 edges of the local cube [-size, size]^3 mapped by `M`."""
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    edges = [(i, j) for i in range(8) for j in range(i + 1, 8)
             if np.count_nonzero(corners[i] != corners[j]) == 1]
    world = _apply(M, half_extent * corners)
    return np.array([[world[i], world[j]] for i, j in edges])


def plane_outline(M: np.ndarray, size: float, lines: int = 5) -> np.ndarray:
    """A `lines` x `lines` grid of half-width `size` in the local xy plane (the plane is
    infinite; this is the part drawn)."""
    s = np.linspace(-size, size, lines)
    segments = []
    for c in s:
        segments.append([[c, -size, 0.0], [c, size, 0.0]])
        segments.append([[-size, c, 0.0], [size, c, 0.0]])
    local = np.array(segments)
    return _apply(M, local.reshape(-1, 3)).reshape(-1, 2, 3)


def collider_outline(kind: int, M: np.ndarray, *, size: float, radius_a: float = 0.0,
                     radius_b: float = 0.0) -> np.ndarray:
    """(N, 2, 3) world line segments on the surface of one collider (`ColliderKind`)."""
    M = np.asarray(M, dtype=np.float64)
    if kind == ColliderKind.ELLIPSOID:
        return ellipsoid_outline(M, size)
    if kind == ColliderKind.CAPSULE:
        return capsule_outline(M, size, radius_a, radius_b)
    if kind == ColliderKind.BOX:
        return box_outline(M, size)
    return plane_outline(M, size)
