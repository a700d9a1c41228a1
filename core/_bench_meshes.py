"""Closed test meshes and strands draped over them, for the body-mesh collider tests and
benchmark (NumPy only)."""

from __future__ import annotations

import numpy as np


def uv_sphere(radius: float, rings: int = 24, segments: int = 48):
    """A closed UV sphere: (V, 3) vertices and (T, 3) outward-wound triangles."""
    theta = np.linspace(0.0, np.pi, rings + 1)[1:-1]
    phi = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    ring = np.stack([np.sin(theta)[:, None] * np.cos(phi), np.sin(theta)[:, None] * np.sin(phi),
                     np.cos(theta)[:, None] * np.ones_like(phi)], axis=-1).reshape(-1, 3)
    vertices = np.concatenate([[[0.0, 0.0, 1.0]], ring, [[0.0, 0.0, -1.0]]]) * radius
    tris = []
    top, bottom = 0, len(vertices) - 1

    def at(r, s):
        return 1 + r * segments + s % segments

    for s in range(segments):
        tris.append((top, at(0, s), at(0, s + 1)))
        tris.append((bottom, at(rings - 2, s + 1), at(rings - 2, s)))
        for r in range(rings - 2):
            tris.append((at(r, s), at(r + 1, s), at(r + 1, s + 1)))
            tris.append((at(r, s), at(r + 1, s + 1), at(r, s + 1)))
    return vertices, np.array(tris)


def draped_strands(n: int, points: int, *, seed: int, radius: float = 0.1,
                   spread: tuple[float, float] = (-0.006, 0.015), cut: int = 0,
                   centre=(0.0, 0.0, 0.0)) -> np.ndarray:
    """(n, points, 3) float32 strands from the upper half of a head of `radius` at `centre`
    down over it: each starts 2 mm off the surface and ends `spread` (low, high, drawn per
    strand) further off it (the density of real hair: thousands of strands); the first `cut`
    strands dip up to 2 cm into the head."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(n, 3))
    u[:, 2] = np.abs(u[:, 2]) + 0.2
    u /= np.linalg.norm(u, axis=1)[:, None]
    theta0, phi = np.arccos(u[:, 2]), np.arctan2(u[:, 1], u[:, 0])
    k = np.linspace(0.0, 1.0, points)[None]
    theta = theta0[:, None] + k * (0.9 * np.pi - theta0[:, None])
    off = radius + 0.002 + rng.uniform(spread[0], spread[1], (n, 1)) * k
    off[:cut] -= 0.02 * k[0]
    strands = np.stack([off * np.sin(theta) * np.cos(phi)[:, None],
                        off * np.sin(theta) * np.sin(phi)[:, None], off * np.cos(theta)],
                       axis=-1) + np.asarray(centre, dtype=np.float64)
    return strands.astype(np.float32)
