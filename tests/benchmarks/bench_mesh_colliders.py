"""Body-mesh collider benchmark (NumPy only, no Blender): what a mesh costs against the sphere
it approximates, measured in the same run.

1. ``query``: one push of N points (all within 8 cm of the surface, the worst case: hair lying
   on a head) out of a closed body mesh of T triangles (a UV sphere of radius 0.3 m), milliseconds,
   beside Waft's analytic sphere collider pushing the same points (``colliders.push_out``).
2. ``bake``: 100 guides x 16 points falling on a 0.1 m head for 24 frames at 240 Hz, core
   milliseconds per frame, with the head as a 5k-triangle mesh and as a sphere collider.
3. ``bake body``: 1,000 guides x 32 points falling onto a 50k-triangle body (a 0.3 m sphere,
   a full body's triangle size) for 3 frames at 240 Hz, the same way; and ``bake body
   walking``, the same with the body, the guides' roots and the sphere carried along at a
   walk (1.4 m/s, root motion).
4. ``render strands``: one frame of 20,000 render strands x 12 points draped over a 0.1 m head
   (``hair.collide_strands_meshes``, Depth 2 cm), milliseconds, against the same head as an
   analytic sphere collider (``hair.collide_strands``); and the same with 1,000 of them cutting
   a chord up to 6 cm deep through the head (points beyond the mesh's reach).

Prints JSON lines:

    .venv/bin/python tests/benchmarks/bench_mesh_colliders.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np
from _waft import use_checkout

use_checkout()

from waft import core  # noqa: E402
from waft.core._bench_meshes import draped_strands, uv_sphere  # noqa: E402
from waft.core.colliders import push_out, sphere_normal  # noqa: E402
from waft.core.hair import collide_strands, collide_strands_meshes  # noqa: E402
from waft.core.mesh_colliders import (  # noqa: E402
    MeshColliders,
    MeshField,
    grid_of_boxes,
    span_boxes,
)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def query_case(points: int, rings: int, segments: int, repeat: int) -> dict:
    R, radius = 0.3, 0.005
    vertices, tris = uv_sphere(R, rings, segments)
    rng = np.random.default_rng(0)
    d = rng.normal(size=(points, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    x = d * rng.uniform(R - 0.02, R + 0.06, points)[:, None]
    meshes = MeshColliders.create(names=["Body"], triangles=[tris],
                                  vertices=[np.repeat(vertices[None], 9, 0).astype(np.float32)],
                                  friction=[0.3])
    field = MeshField(meshes, fps=120.0, radius=radius)
    field.contacts(0, x, 0.0, 1 / 240)  # builds the span's grid once, as in a bake
    r = np.full(points, radius)
    def push():
        # One push of points the field has not seen: it keeps each point's clearance from its
        # last push and skips the points surely clear of the body at the next, and its near
        # query keeps each point's candidate triangles.
        getattr(field, "_history", {}).clear()
        for f in (field, *(getattr(field, "_stages", None) or ())):
            getattr(f, "_kept", {}).clear()
        field.push_out(x.copy(), x, r, 0.0, 1 / 240)

    mesh_s = best(push, repeat)

    def sphere():
        y = x.copy()
        n, sd = sphere_normal(y, np.zeros(3), R)
        push_out(y, x, n, sd, r, 0.3)

    sphere_s = best(sphere, repeat)
    span = np.repeat(vertices[None], 5, axis=0)  # a span: 5 samples
    # (the bake's path, `MeshField._grid` on a still mesh)
    grid_s = best(lambda: grid_of_boxes(*span_boxes(span, tris), float(field.reach[0])),
                  repeat)
    return {"case": "query", "points": points, "triangles": len(tris),
            "mesh_ms": round(mesh_s * 1e3, 2), "grid_build_ms": round(grid_s * 1e3, 2),
            "peer": "Waft sphere collider", "peer_ms": round(sphere_s * 1e3, 3),
            "ratio": round(mesh_s / sphere_s, 1)}


def _falling_guides(R: float, rings: int, segments: int, guides: int, points: int,
                    frames: int, repeat: int, walk: float = 0.0) -> tuple[float, float, int]:
    """Seconds per bake of `guides` x `points` chains falling onto a sphere of radius R, as a
    UV-sphere mesh and as the sphere collider, and the mesh's triangle count; everything
    carried along +X at `walk` m/s."""
    fps = 24.0
    vertices, tris = uv_sphere(R, rings, segments)
    rng = np.random.default_rng(1)
    chains = []
    for _ in range(guides):
        d = rng.normal(size=3)
        d[2] = abs(d[2]) + 0.5
        d /= np.linalg.norm(d)
        side = np.cross(d, [0.0, 0.0, 1.0]) + 1e-9
        side /= np.linalg.norm(side)
        chains.append(d * (R + 0.006) + np.outer(np.arange(points) * 0.015, side))
    colliders = core.ColliderSet.create(names=["Body"], kind=[0], size=[R], friction=[0.3])
    model_s, drive_s = _build(chains, frames, fps, colliders)
    model_m, drive_m = _build(chains, frames, fps, None)
    carried = np.zeros((frames, 3))
    carried[:, 0] = walk * np.arange(frames) / fps
    if walk:
        drive_s, drive_m = (_carry(d, carried) for d in (drive_s, drive_m))
    meshes = MeshColliders.create(names=["Body"], triangles=[tris],
                                  vertices=[vertices[None] + carried[:, None, :]],
                                  friction=[0.3])
    drive_m = replace(drive_m, meshes=meshes)
    settings = core.SolverSettings(substep=1 / 240)
    mesh_s = best(lambda: core.bake(model_m, drive_m, settings), repeat)
    sphere_s = best(lambda: core.bake(model_s, drive_s, settings), repeat)
    return mesh_s, sphere_s, len(tris)


def bake_case(repeat: int) -> dict:
    frames = 24
    mesh_s, sphere_s, triangles = _falling_guides(0.1, 50, 50, 100, 16, frames, repeat)
    mesh_s, sphere_s = mesh_s / frames, sphere_s / frames
    return {"case": "bake", "guides": 100, "points": 16, "triangles": triangles,
            "mesh_ms_per_frame": round(mesh_s * 1e3, 2), "peer": "Waft sphere collider",
            "peer_ms_per_frame": round(sphere_s * 1e3, 2), "ratio": round(mesh_s / sphere_s, 1)}


def body_bake_case(repeat: int, walk: float = 0.0) -> dict:
    """Issue 13's figure: 1,000 guides x 32 falling onto a 50k-triangle body (a 0.3 m sphere:
    7 mm triangles, a full body's density), three frames at 240 Hz, core milliseconds per
    frame, against the same body as a sphere collider; carried along at `walk` m/s."""
    frames = 4
    mesh_s, sphere_s, triangles = _falling_guides(0.3, 100, 250, 1000, 32, frames, repeat,
                                                  walk)
    mesh_s, sphere_s = mesh_s / (frames - 1), sphere_s / (frames - 1)
    return {"case": "bake body walking" if walk else "bake body", "guides": 1000,
            "points": 32, "triangles": triangles,
            "mesh_ms_per_frame": round(mesh_s * 1e3, 1), "peer": "Waft sphere collider",
            "peer_ms_per_frame": round(sphere_s * 1e3, 2), "ratio": round(mesh_s / sphere_s, 1)}


def render_case(rings: int, segments: int, repeat: int, dipping: int = 0) -> dict:
    """Strands from the upper half of the head down over it, 0-1.5 cm off its surface; the
    first `dipping` of them cut a chord up to 6 cm deep through it (render strands interpolated
    between guides on either side of a head: their points beyond the mesh's reach go to the
    nearest surface, `mesh_inside`)."""
    R, n, P = 0.1, 20_000, 12
    vertices, tris = uv_sphere(R, rings, segments)
    strands = draped_strands(n, P, seed=2, radius=R, spread=(-0.003, 0.012))
    if dipping:
        dip = strands[:dipping].astype(np.float64)
        length = np.linalg.norm(dip, axis=-1)
        dip *= ((length - 0.06 * np.sin(np.pi * np.linspace(0.0, 1.0, P))) / length)[..., None]
        strands[:dipping] = dip
    radius = np.linspace(0.003, 0.001, P)
    meshes = MeshColliders.create(names=["Head"], triangles=[tris],
                                  vertices=[vertices[None].astype(np.float32)])
    mesh_s = best(lambda: collide_strands_meshes(strands.copy(), radius, meshes), repeat)
    colliders = core.ColliderSet.create(names=["Head"], kind=[0], size=[R])
    sphere_s = best(lambda: collide_strands(strands.copy(), radius, colliders,
                                            np.eye(4)[None]), repeat)
    return {"case": "render strands", "strands": n, "points": P, "triangles": len(tris),
            "dipping_6cm": dipping, "mesh_ms_per_frame": round(mesh_s * 1e3, 1),
            "peer": "Waft sphere collider",
            "peer_ms_per_frame": round(sphere_s * 1e3, 1), "ratio": round(mesh_s / sphere_s, 1)}


def _carry(drive, carried: np.ndarray):
    """`drive` with its reference, chain spaces and colliders moved by `carried` (F, 3)."""
    space = np.array(drive.space)
    space[..., :3, 3] += carried[:, None, :]
    matrix = np.array(drive.collider_matrix)
    matrix[..., :3, 3] += carried[:, None, :]
    return replace(drive, reference=drive.reference + carried[:, None, None, :], space=space,
                   collider_matrix=matrix)


def _build(chains, frames, fps, colliders):
    rests = [core.ChainRest(setup="Hair", name=f"Hair: {i}", rest_positions=c,
                            kinematic=np.r_[True, np.zeros(len(c) - 1, bool)])
             for i, c in enumerate(chains)]
    model = core.build_strand_model(chains=rests, colliders=colliders)
    S, P = model.strands, model.particles
    reference = np.repeat(np.stack(chains)[None], frames, axis=0)
    K = model.colliders.count
    M = np.tile(np.eye(4), (frames, K, 1, 1))
    drive = core.Drive(fps=fps, reference=reference, kinematic=np.eye(1, P, dtype=bool)
                       .repeat(S, axis=0), space=np.broadcast_to(np.eye(4), (frames, S, 4, 4)),
                       collider_matrix=M, params=core.StrandParams.defaults(
                           S, P, radius=0.005, damping=1.0))
    return model, drive


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for points, rings, segments in ((1_000, 40, 64), (32_000, 40, 64), (1_000, 125, 200),
                                    (32_000, 125, 200)):
        print(json.dumps(query_case(points, rings, segments, args.repeat)), flush=True)
    print(json.dumps(bake_case(args.repeat)), flush=True)
    print(json.dumps(body_bake_case(1)), flush=True)  # seconds per run: once
    print(json.dumps(body_bake_case(1, walk=1.4)), flush=True)
    for rings, segments in ((12, 24), (40, 64)):
        print(json.dumps(render_case(rings, segments, args.repeat)), flush=True)
    print(json.dumps(render_case(40, 64, args.repeat, dipping=1000)), flush=True)


if __name__ == "__main__":
    main()
