"""Cloth-bone benchmark: Waft's cloth core against Blender's own Cloth modifier, in one run.

1. The same 32 × 32 grid (1,024 particles, 1 m × 1 m, top row pinned, the pinned row swinging
   ±0.3 m sideways at 1 Hz, 24 fps): Waft's core (``core.cloth.bake_cloth`` at 240 Hz) against
   Blender's Cloth modifier with its quality steps matched to our substeps (240 Hz / 24 fps =
   10 steps per frame), no collisions. Blender's time is the ``frame_set`` loop that computes
   the cloth minus the same loop with the modifier disabled (its net cost; the gross figure is
   printed too). Target: Waft / Blender Cloth ≤ 1.0.
2. A 2,048-particle cloth-bone rig (32 × 64 grid, a bone on every vertex but the last row):
   core frames per second = frames / (solve + grid bone frames + pose basis). Target ≥ 60.

Prints JSON lines.

    .venv/bin/python tests/benchmarks/bench_cloth.py [--frames 48] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from _waft import use_checkout

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "tools"))

import blender_env

bpy = blender_env.import_bpy_isolated()  # throwaway user dir first, then bpy

FPS = 24
SUBSTEP_RATE = 240.0
SWING = 0.3  # metres


def _import_core():
    """``waft.core`` from this checkout without the (bpy-registering) root package code."""
    use_checkout()
    import waft.core.bone_pose as bone_pose
    import waft.core.cloth.bone_frames as bone_frames
    import waft.core.cloth.solver as solver
    import waft.core.rotations as rotations
    from waft.core.cloth import _bench_cases as cases

    return cases, solver, bone_frames, bone_pose, rotations


cases, cloth_solver, bone_frames, bone_pose, rotations = _import_core()


def time_waft_core(rows: int, cols: int, frames: int) -> float:
    model, drive, settings = cases.make_grid_case(rows, cols, frames=frames, fps=FPS,
                                                  substep=1.0 / SUBSTEP_RATE)
    t0 = time.perf_counter()
    cloth_solver.bake_cloth(model, drive, settings)
    return time.perf_counter() - t0


def build_blender_cloth(rows: int, cols: int, frames: int):
    blender_env.reset_to_empty_file()
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.frame_start, scene.frame_end = 1, frames
    positions = cases.grid_positions(rows, cols)
    mesh = bpy.data.meshes.new("Grid")
    mesh.from_pydata(positions.tolist(), [], cases.grid_quads(rows, cols).tolist())
    ob = bpy.data.objects.new("Grid", mesh)
    scene.collection.objects.link(ob)
    ob.vertex_groups.new(name="Pin").add(list(range(cols)), 1.0, "REPLACE")
    for frame in range(1, frames + 1):
        ob.location.x = SWING * math.sin(2 * math.pi * (frame - 1) / FPS)
        ob.keyframe_insert("location", index=0, frame=frame)
    cloth = ob.modifiers.new("Cloth", "CLOTH")
    cloth.settings.quality = int(round(SUBSTEP_RATE / FPS))  # steps per frame = our substeps
    cloth.settings.vertex_group_mass = "Pin"
    cloth.collision_settings.use_collision = False
    cloth.collision_settings.use_self_collision = False
    cloth.point_cache.frame_start, cloth.point_cache.frame_end = 1, frames
    return scene, ob, cloth


def _play(scene, frames: int) -> float:
    scene.frame_set(1)
    t0 = time.perf_counter()
    for frame in range(2, frames + 1):
        scene.frame_set(frame)
    return time.perf_counter() - t0


def time_blender_cloth(rows: int, cols: int, frames: int) -> tuple[float, float]:
    """(gross, net) seconds for frames 2..F: with the modifier, and minus the same loop
    without it (what the depsgraph costs anyway)."""
    scene, ob, cloth = build_blender_cloth(rows, cols, frames)
    gross = _play(scene, frames)
    moved = np.array([v.co for v in ob.evaluated_get(
        bpy.context.evaluated_depsgraph_get()).data.vertices])
    if not np.isfinite(moved).all():
        raise RuntimeError("Blender Cloth produced non-finite positions")
    cloth.show_viewport = False
    cloth.point_cache.frame_end = frames  # invalidate nothing, just play without the cloth
    baseline = _play(scene, frames)
    return gross, max(gross - baseline, 1e-9)


def time_rig(rows: int, cols: int, frames: int) -> tuple[float, float, int]:
    """Core solve and bone-frame seconds of a rows × cols cloth-bone rig; returns
    (solve s, bones s, bone count)."""
    model, drive, settings = cases.make_grid_case(rows, cols, frames=frames, fps=FPS,
                                                  substep=1.0 / SUBSTEP_RATE)
    t0 = time.perf_counter()
    result = cloth_solver.bake_cloth(model, drive, settings)
    t1 = time.perf_counter()
    r, c = np.meshgrid(np.arange(rows - 1), np.arange(cols), indexing="ij")
    vertex = (r * cols + c).reshape(-1)
    column = vertex % cols
    below = vertex + cols
    left = np.where(column > 0, vertex - 1, -1)
    right = np.where(column < cols - 1, vertex + 1, -1)
    rest = model.rest_positions
    grid_rest = bone_frames.grid_frames(rest, vertex=vertex, below=below, left=left, right=right)
    offsets = bone_frames.rest_offsets(grid_rest=grid_rest, bone_rest_world=grid_rest)
    parent = np.where(vertex >= cols, np.arange(len(vertex)) - cols, -1)
    t2 = time.perf_counter()
    frames_world = bone_frames.grid_frames(result.positions, vertex=vertex, below=below,
                                           left=left, right=right)
    world = bone_frames.bone_world(frames_world, offsets)
    parent_world = np.where((parent >= 0)[None, :, None, None], world[:, parent],
                            np.eye(4))
    parent_rest = np.where((parent >= 0)[:, None, None], grid_rest[parent], np.eye(4))
    basis = bone_pose.basis_from_world(world=world, rest=grid_rest, parent_world=parent_world,
                                       parent_rest=parent_rest)
    _location, rotation, _scale = bone_pose.split_basis(basis)
    rotations.make_sign_continuous(rotations.quat_from_matrix(rotation), axis=0)
    t3 = time.perf_counter()
    return t1 - t0, (t3 - t2), len(vertex)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=48)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    frames, repeat = args.frames, args.repeat
    common = {"grid": "32x32", "particles": 1024, "frames": frames, "fps": FPS,
              "substep_rate_hz": SUBSTEP_RATE, "blender": bpy.app.version_string}

    waft = min(time_waft_core(32, 32, frames) for _ in range(repeat))
    blender = [time_blender_cloth(32, 32, frames) for _ in range(repeat)]
    gross = min(b[0] for b in blender)
    net = min(b[1] for b in blender)
    waft_ms = 1e3 * waft / frames
    gross_ms, net_ms = 1e3 * gross / (frames - 1), 1e3 * net / (frames - 1)
    print(json.dumps({"bench": "cloth_grid_vs_blender_cloth", **common,
                      "waft_core_ms_per_frame": round(waft_ms, 3),
                      "blender_cloth_ms_per_frame": round(net_ms, 3),
                      "blender_cloth_gross_ms_per_frame": round(gross_ms, 3),
                      "blender_cloth_quality": int(round(SUBSTEP_RATE / FPS)),
                      "ratio_waft_over_blender_cloth": round(waft_ms / net_ms, 4),
                      "target_ratio": 1.0}), flush=True)

    runs = [time_rig(32, 64, frames) for _ in range(repeat)]
    solve = min(r[0] for r in runs)
    bones_s = min(r[1] for r in runs)
    fps = frames / (solve + bones_s)
    print(json.dumps({"bench": "cloth_bone_rig_core", "grid": "32x64", "particles": 2048,
                      "bones": runs[0][2], "frames": frames, "fps": FPS,
                      "substep_rate_hz": SUBSTEP_RATE,
                      "solve_ms_per_frame": round(1e3 * solve / frames, 3),
                      "bones_ms_per_frame": round(1e3 * bones_s / frames, 3),
                      "core_frames_per_second": round(fps, 1), "target_fps": 60}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
