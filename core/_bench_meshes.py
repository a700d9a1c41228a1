"""Closed test meshes for the body-mesh collider tests and benchmark (NumPy only)."""

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
