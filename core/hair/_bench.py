"""Render-strand benchmark kernel, shared by tests/benchmarks (H1's bench_hair.py imports it).

``bench_render_frame`` times what one output frame costs once the guides are solved: evaluate
the render roots on the (moving) scalp, resample the guides on their uniform cubic B-splines and
interpolate every render strand, in float32 as written to Blender. ``bench_render_collision``
times pushing those strands out of a head, neck and shoulders (`collide.py`).
"""

from __future__ import annotations

import time

import numpy as np

from ..colliders import ColliderKind, ColliderSet, shape_normal
from .collide import collide_strands
from .interpolate import bind_strands, render_strands
from .scalp import evaluate_roots, scatter_roots


def hemisphere(*, radius: float = 0.1, rings: int = 12, segments: int = 24):
    """A scalp: the upper half of a UV sphere, (V, 3) vertices and (T, 3) triangles."""
    polar = np.linspace(0.0, 0.5 * np.pi, rings + 1)[1:]  # rings below the pole
    azimuth = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    ring = np.stack([np.sin(polar)[:, None] * np.cos(azimuth)[None],
                     np.sin(polar)[:, None] * np.sin(azimuth)[None],
                     np.cos(polar)[:, None] * np.ones(segments)[None]], axis=-1)
    vertices = radius * np.concatenate([[[0.0, 0.0, 1.0]], ring.reshape(-1, 3)])
    j = np.arange(segments)
    k = (j + 1) % segments
    cap = np.stack([np.zeros(segments, dtype=np.int64), 1 + j, 1 + k], axis=1)
    r = np.arange(rings - 1)[:, None]
    a, b = 1 + r * segments + j, 1 + r * segments + k
    c, d = a + segments, b + segments
    quads = np.concatenate([np.stack([a, c, d], -1).reshape(-1, 3),
                            np.stack([a, d, b], -1).reshape(-1, 3)])
    return vertices, np.concatenate([cap, quads])


def _rotation_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def bench_render_frame(*, strands: int = 50_000, points: int = 16, guides: int = 1_000,
                       guide_points: int = 32, frames: int = 12, method: str = "BARYCENTRIC",
                       seed: int = 0) -> dict:
    """Milliseconds per frame for roots + B-spline + interpolation of ``strands`` strands.

    Guides hang from a hemisphere scalp that turns 90° about z over ``frames`` frames. Returns a
    dict (JSON-ready): median and best ms per frame, bind seconds and the sizes used.
    """
    vertices, triangles = hemisphere(rings=24, segments=48)
    guide_roots = scatter_roots(vertices=vertices, triangles=triangles, count=guides, seed=seed)
    length = 0.6 * np.linspace(0.0, 1.0, guide_points)
    down = np.array([0.0, 0.0, -1.0])
    rest = guide_roots.position[:, None, :] + length[None, :, None] * (
        0.3 * guide_roots.normal[:, None, :] + down)
    roots = scatter_roots(vertices=vertices, triangles=triangles, count=strands, seed=seed + 1)
    t0 = time.perf_counter()
    binding = bind_strands(roots=roots, guide_rest=rest, method=method, clump=0.3,
                           randomness=0.05, seed=seed)
    bind_s = time.perf_counter() - t0
    out = np.empty((strands, points, 3), dtype=np.float32)
    times, cpu = [], []
    for f in range(frames + 1):
        rotation = _rotation_z(0.5 * np.pi * f / frames)
        posed = (rest @ rotation.T).astype(np.float32)  # the solved guides of this frame
        scalp = (vertices @ rotation.T).astype(np.float32)
        t0, c0 = time.perf_counter(), time.process_time()
        root_now, _ = evaluate_roots(triangle=roots.triangle, barycentric=roots.barycentric,
                                     vertices=scalp, triangles=triangles, normals=False)
        render_strands(binding, posed, points=points, roots=root_now, out=out)
        if f:  # frame 0 warms caches (B-spline matrix, allocator)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    ms = 1e3 * np.asarray(times)
    cpu_ms = 1e3 * np.asarray(cpu)
    return {"name": "render_strands", "strands": strands, "points": points, "guides": guides,
            "guide_points": guide_points, "method": method, "frames": frames,
            "ms_per_frame": round(float(np.median(ms)), 3), "ms_best": round(float(ms.min()), 3),
            # CPU time of this process, all threads: above wall time when BLAS threads help
            # the matrix products, below it when other jobs hold the CPUs.
            "cpu_ms_per_frame": round(float(np.median(cpu_ms)), 3),
            "bind_s": round(bind_s, 3), "fallback": round(float(binding.fallback.mean()), 4)}


def collision_scene(*, strands: int = 50_000, points: int = 16, guides: int = 1_000,
                    guide_points: int = 32, seed: int = 0):
    """``bench_render_collision``'s frame: (strands (N, P, 3) float32 before collision, radius
    (P,), colliders, matrices (K, 4, 4), the render roots (`scalp.RootSamples`))."""
    vertices, triangles = hemisphere(rings=24, segments=48)
    guide_roots = scatter_roots(vertices=vertices, triangles=triangles, count=guides, seed=seed)
    length = 0.6 * np.linspace(0.0, 1.0, guide_points)
    rest = guide_roots.position[:, None, :] + length[None, :, None] * (
        0.3 * guide_roots.normal[:, None, :] + np.array([0.0, 0.0, -1.0]))
    roots = scatter_roots(vertices=vertices, triangles=triangles, count=strands, seed=seed + 1)
    colliders = ColliderSet.create(
        names=["Head", "Neck", "Shoulder.L", "Shoulder.R"],
        kind=[ColliderKind.ELLIPSOID, ColliderKind.CAPSULE, ColliderKind.ELLIPSOID,
              ColliderKind.ELLIPSOID], size=[0.095, 0.06, 0.09, 0.09],
        radius_a=[0, 0.06, 0, 0], radius_b=[0, 0.05, 0, 0])
    matrices = np.repeat(np.eye(4)[None], 4, axis=0)
    matrices[1, :3, 3] = (0.0, 0.0, -0.17)
    matrices[2, :3, 3] = (0.17, 0.0, -0.3)
    matrices[2, :3, :3] = np.diag([1.0, 0.8, 0.7])  # an ellipsoid: the general shape path
    matrices[3, :3, 3] = (-0.17, 0.0, -0.3)
    # The guides as the solver leaves them: outside the body (they hang from the scalp through
    # the head otherwise); the strands between them still cut into it.
    collide_strands(rest, np.full(guide_points, 0.005), colliders, matrices)
    binding = bind_strands(roots=roots, guide_rest=rest, method="BARYCENTRIC", clump=0.3,
                           randomness=0.05, seed=seed)
    frame = render_strands(binding, rest.astype(np.float32), points=points)
    return frame, np.linspace(0.002, 0.0005, points), colliders, matrices, roots


def bench_render_collision(*, strands: int = 50_000, points: int = 16, guides: int = 1_000,
                           guide_points: int = 32, repeats: int = 5, seed: int = 0) -> dict:
    """Milliseconds per frame to push ``strands`` render strands out of a head sphere, a neck
    capsule and two shoulders (a sphere and an ellipsoid) (`collide.collide_strands`), against
    the same projection of every point on every collider without the broad phase."""
    frame, radius, colliders, matrices, _ = collision_scene(
        strands=strands, points=points, guides=guides, guide_points=guide_points, seed=seed)
    times, brute, moved = [], [], 0
    for _ in range(repeats):
        out = frame.copy()
        t0 = time.perf_counter()
        moved = collide_strands(out, radius, colliders, matrices).moved
        times.append(time.perf_counter() - t0)
        everything = frame[:, 1:].reshape(-1, 3).astype(np.float64)
        t0 = time.perf_counter()
        for k in range(colliders.count):  # no broad phase: every point, every collider
            n, sd = shape_normal(int(colliders.kind[k]), everything, matrices[k],
                                 np.linalg.inv(matrices[k]), colliders, k)
            depth = np.tile(radius[1:], strands) - sd
            np.add(everything, n * np.maximum(depth, 0.0)[:, None], out=everything)
        brute.append(time.perf_counter() - t0)
    ms, brute_ms = 1e3 * np.asarray(times), 1e3 * np.asarray(brute)
    return {"name": "render_collision", "strands": strands, "points": points,
            "colliders": colliders.count, "points_moved": moved,
            "ms_per_frame": round(float(np.median(ms)), 3), "ms_best": round(float(ms.min()), 3),
            "no_broad_phase_ms": round(float(brute_ms.min()), 3)}
