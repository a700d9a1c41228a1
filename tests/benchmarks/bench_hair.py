"""Strand-hair benchmark: the guide solver, render strands, and seed 000's pseudo-code.

1. `hair_guides`: 1,000 guides x 32 particles, 240 Hz substeps (10 per frame at 24 fps), 8 sphere
   colliders (head, neck, shoulders, chest, arms), the 32^3 voxel friction grid, DFTL lengths,
   a head turning 360 deg/s: core milliseconds per frame (target <= 10 ms), wall and CPU (the
   CPU figure is steadier on a shared machine; the solver is single-threaded NumPy). A second
   line adds local shape and shock propagation (the curly preset's extra cost).
2. `render_strands`: 50,000 render strands x 16 points interpolated from the 1,000 guides plus
   the uniform cubic B-spline, per frame (H2's `core.hair`, kernel in `core/hair/_bench.py`;
   target <= 20 ms); then `render_collision`: those strands pushed out of a head, neck and
   shoulders (target <= 5 ms), against the same projection of every point on every collider.
3. `seed000_python`: a direct per-particle Python transcription of seed 000's pseudo-code
   (Verlet with damping, per-strand relaxation iterations: sphere collision, length constraint,
   root fixing; restitution toward the groom decaying root to tip) on the same guides, timed on
   a few substeps, and the speed-up of (1) over it per simulated frame.

Prints one JSON line each. Run: python tests/benchmarks/bench_hair.py [--frames N]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np
from _waft import use_checkout


def _import_core():
    use_checkout()
    import waft.core as core

    return core


core = _import_core()
from waft.core.strands._bench_cases import (  # noqa: E402
    BODY_SPHERES,
    hanging_from_roots,
    head_guides,
    head_turning,
)

GUIDES, PARTICLES, SUBSTEP_HZ, FPS = 1000, 32, 240, 24
LENGTH = 0.5  # metres per guide
SPHERES = BODY_SPHERES  # the colliders seed 000 used (head to arms)


def guides_rest(seed: int = 0) -> np.ndarray:
    return head_guides(GUIDES, PARTICLES, length=LENGTH, seed=seed)


def solver_case(rest: np.ndarray, frames: int, **extra):
    model, kinematic, M = hanging_from_roots(rest, SPHERES, setup="Guide", frames=frames)
    params = core.StrandParams.defaults(GUIDES, PARTICLES, shape_stiffness=0.05, radius=0.005,
                                        voxel_friction=0.2, voxel_resolution=32, **extra)
    drive = core.Drive(fps=FPS, reference=head_turning(rest, frames, FPS),
                       kinematic=np.broadcast_to(kinematic, (GUIDES, PARTICLES)).copy(),
                       space=np.broadcast_to(np.eye(4), (frames, GUIDES, 4, 4)),
                       collider_matrix=M, params=params)
    return model, drive


def bench_solver(rest: np.ndarray, frames: int, label: str, **extra) -> dict:
    model, drive = solver_case(rest, frames, **extra)
    settings = core.SolverSettings(substep=1.0 / SUBSTEP_HZ)
    job = core.bake_steps(model, drive, settings)
    next(job)  # frame 0 (validation, workspace) is not a solved frame
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in job:
        pass
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0  # the machine is shared: CPU time is the steadier figure
    x = job.result.positions
    # Every frame's segments against their rest lengths: the last frame (the key the table
    # has always quoted) and the worst one (tips falling head-on onto the chest and back
    # spheres in frames 8-10 ended 8.4 % short before the positions-only passes slid them to
    # length on the surface; solver._slide_to_length).
    stretch_all = np.abs(np.linalg.norm(np.diff(x, axis=2), axis=-1)
                         / np.linalg.norm(np.diff(rest, axis=1), axis=-1)[None] - 1.0)
    stretch = stretch_all[-1].max()
    ms = 1e3 * seconds / (frames - 1)
    return {"bench": label, "guides": GUIDES, "particles": PARTICLES, "substep_hz": SUBSTEP_HZ,
            "fps": FPS, "colliders": len(SPHERES), "voxel": 32, "frames": frames - 1,
            "ms_per_frame": round(ms, 2), "cpu_ms_per_frame": round(1e3 * cpu / (frames - 1), 2),
            "target_ms": 10.0,
            "max_stretch_last_frame": float(stretch),
            "max_stretch_any_frame": float(stretch_all.max()),
            **{k: v for k, v in extra.items()}}


class Node:  # seed 000: struct Node { Vector3 p0, p1; float length; }
    __slots__ = ("p0", "p1", "length", "goal", "restitution")


def seed000_substep(nodes, strands, roots, spheres, damping, gravity, dt, iterations=1):
    """Seed 000's SimulateHair, per particle in plain Python (list-of-floats vectors)."""
    gx, gy, gz = gravity
    dt2 = dt * dt
    for n in nodes:  # Verlet for each node
        p0, p1 = n.p0, n.p1
        p2 = [p1[0] + damping * (p1[0] - p0[0]) + gx * dt2,
              p1[1] + damping * (p1[1] - p0[1]) + gy * dt2,
              p1[2] + damping * (p1[2] - p0[2]) + gz * dt2]
        # restitution toward the groomed position, r_i = r0^(i c)
        r = n.restitution
        for k in range(3):
            p2[k] += r * (n.goal[k] - p2[k])
        n.p0, n.p1 = p1, p2
    for (start, end), root in zip(strands, roots, strict=True):
        for _ in range(iterations):
            for index in range(start, end - 1):
                na, nb = nodes[index], nodes[index + 1]
                p = nb.p1
                for cx, cy, cz, radius in spheres:  # collideSphere
                    dx, dy, dz = p[0] - cx, p[1] - cy, p[2] - cz
                    d = math.sqrt(dx * dx + dy * dy + dz * dz)
                    if d < radius and d > 1e-12:
                        s = radius / d
                        p = [cx + dx * s, cy + dy * s, cz + dz * s]
                a = na.p1
                dx, dy, dz = p[0] - a[0], p[1] - a[1], p[2] - a[2]  # lengthConstraint
                d = math.sqrt(dx * dx + dy * dy + dz * dz)
                f = (d - nb.length) / (2.0 * d) if d > 1e-12 else 0.0
                na.p1 = [a[0] + dx * f, a[1] + dy * f, a[2] + dz * f]
                nb.p1 = [p[0] - dx * f, p[1] - dy * f, p[2] - dz * f]
            nodes[start].p1 = list(root)  # fix the root


def bench_seed000(rest: np.ndarray, substeps: int) -> dict:
    nodes, strands, roots = [], [], []
    decay = 1.0
    for s in range(GUIDES):
        start = len(nodes)
        for i in range(PARTICLES):
            n = Node()
            n.p0 = list(rest[s, i])
            n.p1 = list(rest[s, i])
            n.goal = list(rest[s, i])
            n.length = float(np.linalg.norm(rest[s, i] - rest[s, i - 1])) if i else 0.0
            n.restitution = 0.05 ** (1.0 + decay * max(i - 1, 0)) if i else 1.0
            nodes.append(n)
        strands.append((start, len(nodes)))
        roots.append(tuple(rest[s, 0]))
    spheres = [(c[0], c[1], c[2], r) for _, c, r in SPHERES]
    dt = 1.0 / SUBSTEP_HZ
    t0 = time.perf_counter()
    for _ in range(substeps):
        seed000_substep(nodes, strands, roots, spheres, math.exp(-1.5 * dt), (0, 0, -9.81), dt)
    seconds = time.perf_counter() - t0
    per_frame = seconds / substeps * (SUBSTEP_HZ / FPS)
    return {"bench": "seed000_python", "guides": GUIDES, "particles": PARTICLES,
            "substeps_timed": substeps, "ms_per_frame": round(1e3 * per_frame, 1)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=13)
    parser.add_argument("--seed000-substeps", type=int, default=3)
    args = parser.parse_args(argv)
    rest = guides_rest()
    guides = bench_solver(rest, args.frames, "hair_guides")
    print(json.dumps(guides), flush=True)
    curly = bench_solver(rest, args.frames, "hair_guides_curly", local_stiffness=0.9,
                         shock_propagation=0.3)
    print(json.dumps(curly), flush=True)
    try:
        from waft.core.hair._bench import bench_render_collision, bench_render_frame
    except ImportError as exc:  # H2's render-strand kernel not in this checkout
        print(json.dumps({"bench": "render_strands", "skipped": str(exc)}), flush=True)
    else:
        render = bench_render_frame(strands=50_000, points=16, guides=GUIDES,
                                    guide_points=PARTICLES)
        print(json.dumps({"bench": "render_strands", "target_ms": 20.0, **render}), flush=True)
        # The same strands pushed out of a head, neck and shoulders (issue 13's budget: a few
        # ms); the peer is the same projection of every point on every collider.
        collision = bench_render_collision(strands=50_000, points=16, guides=GUIDES,
                                           guide_points=PARTICLES)
        print(json.dumps({"bench": "render_collision", "target_ms": 5.0, **collision}),
              flush=True)
    python = bench_seed000(rest, args.seed000_substeps)
    python["speedup_vs_core"] = round(python["ms_per_frame"] / guides["ms_per_frame"], 1)
    print(json.dumps(python), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
