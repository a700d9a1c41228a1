"""Wireframe outlines of what the solvers simulate with, for the viewport overlay (beside the
collider outlines of `collider_outline.py`): every point lies exactly on the shape the solver
uses, so an artist sees a particle radius, a ragdoll body or a max-distance sphere at the size
it acts.

- a particle's collision sphere and a cloth vertex's max-distance sphere: three great circles;
- ragdoll bodies: the capsules (sphere-swept segments) from the bones' heads along their axes
  (`core.ragdoll`: a body is a capsule of the bone's length and the body radius);
- a ragdoll joint's swing limit: the elliptical cone (Müller et al. 2020, §3.4.2) of directions
  the child bone's axis may take, swing vectors (sx, sz) on the ellipse (sx/ax)² + (sz/az)² = 1
  in the joint frame;
- a body mesh: the edges of its triangles (the surface the mesh colliders push out of);
- a pinned vertex: a small three-axis cross.

All functions return (N, 2, 3) float64 world line segments.
"""

from __future__ import annotations

import numpy as np

from .collider_outline import SEGMENTS


def _rings(count: int, segments: int) -> np.ndarray:
    """(count, 3 * segments, 2, 3) unit great circles in the xy, yz and zx planes."""
    t = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    c, s = np.cos(t), np.sin(t)
    zero = np.zeros_like(t)
    circles = np.concatenate([np.stack(axes, -1) for axes in
                              ((c, s, zero), (zero, c, s), (s, zero, c))])
    ends = np.concatenate([np.roll(np.stack(axes, -1), -1, axis=0) for axes in
                           ((c, s, zero), (zero, c, s), (s, zero, c))])
    unit = np.stack([circles, ends], axis=1)  # (3 segments, 2, 3)
    return np.broadcast_to(unit, (count,) + unit.shape)


def spheres_outline(centres: np.ndarray, radii: np.ndarray,
                    segments: int = SEGMENTS) -> np.ndarray:
    """Three great circles of each sphere (centres (n, 3), radii (n,))."""
    centres = np.asarray(centres, dtype=np.float64).reshape(-1, 3)
    radii = np.broadcast_to(np.asarray(radii, dtype=np.float64), (len(centres),))
    lines = _rings(len(centres), segments) * radii[:, None, None, None]
    lines = lines + centres[:, None, None, :]
    return lines.reshape(-1, 2, 3)


def capsules_outline(heads: np.ndarray, tails: np.ndarray, radii: np.ndarray,
                     segments: int = SEGMENTS) -> np.ndarray:
    """The capsules of `radii` (n,) around the segments heads–tails (n, 3) (ragdoll bodies),
    all at once: at each end the ring where the side meets the end sphere and the cap's two
    half meridians, and four lines along the side."""
    heads = np.asarray(heads, dtype=np.float64).reshape(-1, 3)
    tails = np.asarray(tails, dtype=np.float64).reshape(-1, 3)
    n = len(heads)
    radii = np.broadcast_to(np.asarray(radii, dtype=np.float64), (n,))[:, None, None]
    axis = tails - heads
    length = np.linalg.norm(axis, axis=1, keepdims=True)
    axis = np.where(length > 1e-12, axis / np.maximum(length, 1e-12), [0.0, 0.0, 1.0])
    helper = np.where(np.abs(axis[:, :1]) < 0.9, [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    u = np.cross(axis, helper)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    v = np.cross(axis, u)
    u, v, w = u[:, None], v[:, None], axis[:, None]  # (n, 1, 3)
    t = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)[None, :, None]
    ring = np.cos(t) * u + np.sin(t) * v  # (n, segments, 3) unit radial directions
    phi = np.linspace(0.0, np.pi, segments // 2 + 1)[None, :, None]
    lines = []
    for centre, pole in ((heads[:, None], -w), (tails[:, None], w)):
        points = centre + radii * ring
        lines.append(np.stack([points, np.roll(points, -1, axis=1)], axis=2))
        for d in (u, v):  # half meridians over the pole, from +d to -d
            arc = centre + radii * (np.cos(phi) * d + np.sin(phi) * pole)
            lines.append(np.stack([arc[:, :-1], arc[:, 1:]], axis=2))
    for d in (u, v, -u, -v):
        lines.append(np.stack([heads[:, None] + radii * d, tails[:, None] + radii * d],
                              axis=2))
    return np.concatenate(lines, axis=1).reshape(-1, 2, 3)


def swing_cone_outline(apex: np.ndarray, joint_frame: np.ndarray, swing_limit: np.ndarray,
                       length: float, segments: int = SEGMENTS,
                       swing_center: np.ndarray | None = None) -> np.ndarray:
    """The swing limit cone of one joint: lines from `apex` (the child's head) to `length` along
    the boundary directions and the ring joining their ends. `joint_frame` (3, 3): the child's
    bind orientation carried by its parent now (columns = local axes); `swing_limit` (2,): the
    ellipse's semi-axes about local X and Z, radians (≥ π: free that way, drawn at π);
    `swing_center` (2,): its centre (a one-sided hinge), zero when None."""
    ax, az = (min(float(a), np.pi) for a in swing_limit)
    cx, cz = (0.0, 0.0) if swing_center is None else (float(c) for c in swing_center)
    t = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    sx, sz = cx + ax * np.cos(t), cz + az * np.sin(t)  # the swing rotation vector on the ellipse
    angle = np.hypot(sx, sz)
    safe = np.maximum(angle, 1e-300)
    kx, kz = sx / safe, sz / safe  # unit axis (kx, 0, kz), perpendicular to +Y
    # Rodrigues: +Y turned by `angle` about (kx, 0, kz): cos a ŷ + sin a (k × ŷ).
    local = np.stack([-kz * np.sin(angle), np.cos(angle), kx * np.sin(angle)], -1)
    tips = apex + length * (local @ np.asarray(joint_frame, dtype=np.float64).T)
    spokes = np.stack([np.broadcast_to(apex, tips.shape), tips], axis=1)[:: max(segments // 8, 1)]
    ring = np.stack([tips, np.roll(tips, -1, axis=0)], axis=1)
    return np.concatenate([spokes, ring])


def mesh_edges(triangles: np.ndarray) -> np.ndarray:
    """(E, 2) vertex pairs of every edge of the triangles (T, 3), each once (low index first).
    One 1-D unique over a * V + b keys (a row-wise unique is ~8x slower: 88 ms at 50k
    triangles)."""
    tris = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    if not len(tris):
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    pairs.sort(axis=1)
    base = int(tris.max()) + 1
    keys = np.unique(pairs[:, 0] * base + pairs[:, 1])
    return np.stack([keys // base, keys % base], axis=1)


def mesh_edges_outline(vertices: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Every edge of the triangles (T, 3) over `vertices` (V, 3), each once."""
    return np.asarray(vertices, dtype=np.float64)[mesh_edges(triangles)]


def crosses_outline(points: np.ndarray, size: float) -> np.ndarray:
    """A three-axis cross of half-width `size` at each point (a pinned vertex)."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 1, 1, 3)
    arms = size * np.stack([-np.eye(3), np.eye(3)], axis=1)  # (3, 2, 3)
    return (points + arms[None]).reshape(-1, 2, 3)
