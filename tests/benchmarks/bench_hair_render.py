"""Render-strand benchmark: 50,000 strands x 16 points from 1,000 guides x 32 points per frame.

Roots evaluated on a turning scalp + uniform cubic B-spline of the guides + interpolation, float32
(``waft.core.hair._bench.bench_render_frame``, the kernel hair-sim's bench_hair.py also imports).
The peer, measured in the same run, is a direct per-strand Python transcription of seed 002's
"guide vertex + recorded offset" on a 2,000-strand subset, scaled to the full count. One JSON
line per method:

    {"bench": "hair_render", "method": "BARYCENTRIC", "strands": 50000, "points": 16,
     "ms_per_frame": ..., "cpu_ms_per_frame": ..., "target_ms": 20, "python_loop_ms": ...,
     "speedup": ...}

A last line times the collision of those strands with a head, neck and shoulders
(``bench_render_collision``) against the same projection without the broad phase.

Run: python tests/benchmarks/bench_hair_render.py
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from _waft import use_checkout

use_checkout()

from waft.core.hair import bind_strands, resample_bspline, scatter_roots  # noqa: E402
from waft.core.hair._bench import (  # noqa: E402
    bench_render_collision,
    bench_render_frame,
    hemisphere,
)


def python_loop_ms(*, strands: int = 2000, points: int = 16, guides: int = 1000,
                   guide_points: int = 32) -> float:
    """Per-strand, per-point Python loop (seed 002): strand = nearest guide + offset."""
    vertices, triangles = hemisphere(rings=24, segments=48)
    g = scatter_roots(vertices=vertices, triangles=triangles, count=guides, seed=0)
    rest = g.position[:, None] + np.linspace(0, 0.6, guide_points)[None, :, None] * np.array(
        [0.0, 0.0, -1.0])
    roots = scatter_roots(vertices=vertices, triangles=triangles, count=strands, seed=1)
    binding = bind_strands(roots=roots, guide_rest=rest, method="NEAREST")
    guides_lod = resample_bspline(rest, points).tolist()
    nearest = binding.guide[:, 0].tolist()
    offsets = (roots.position - rest[binding.guide[:, 0], 0]).tolist()
    t0 = time.perf_counter()
    out = []
    for s in range(strands):
        guide, (ox, oy, oz) = guides_lod[nearest[s]], offsets[s]
        out.append([(x + ox, y + oy, z + oz) for x, y, z in guide])
    return 1e3 * (time.perf_counter() - t0)


def main() -> int:
    # Shared machines: the peer is timed between the kernels, best of three, against the
    # kernel's best frame (other jobs only ever add time).
    for method in ("BARYCENTRIC", "NEAREST"):
        loop_ms = min(python_loop_ms() for _ in range(3)) * 50_000 / 2000
        result = bench_render_frame(strands=50_000, points=16, guides=1_000, guide_points=32,
                                    method=method)
        print(json.dumps({"bench": "hair_render", **result, "target_ms": 20,
                          "python_loop_ms": round(loop_ms, 1),
                          "speedup": round(loop_ms / result["ms_best"], 1)}))
    # Collision of the same strands with four body colliders (a few ms is the budget); the
    # reference is the same projection of every point on every collider, no broad phase.
    result = bench_render_collision(strands=50_000, points=16, guides=1_000, guide_points=32)
    print(json.dumps({"bench": "hair_render", **result, "target_ms": 5,
                      "speedup": round(result["no_broad_phase_ms"] / result["ms_best"], 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
