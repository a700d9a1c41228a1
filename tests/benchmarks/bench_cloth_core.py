"""Cloth-core benchmark (NumPy only, no Blender): the solver's cost on the issue's two cases.

1. ``grid_32x32``: the 32 x 32 grid (1,024 particles) of ``core.cloth._bench_cases.
   make_grid_case`` (pinned row swinging 0.3 m at 1 Hz, world space) at 240 Hz substeps, 24 fps:
   core milliseconds per frame. (tests/benchmarks/bench_cloth.py times Blender's Cloth modifier
   on the same grid in one run and prints the ratio.)
2. ``rig_2048``: 2,048-particle cloth-bone rigs, core frames per second (target >= 60): the
   32 x 64 grid of make_grid_case, and a skirt of four 16 x 32 panels (one model, vectorised
   across cloths) on a character running at 3 m/s with two ellipsoid thigh colliders, turbulent
   wind and 20 % world motion (every default feature on).

Wall time is the best of ``--repeat`` runs; CPU time (``time.process_time``) is printed too
because the machine may be shared. Prints JSON lines:

    .venv/bin/python tests/benchmarks/bench_cloth_core.py [--frames 48] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _waft import use_checkout

use_checkout()

from waft.core import ColliderKind, ColliderSet, SolverSettings
from waft.core.cloth import ClothDrive, ClothParams, bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_rest, make_grid_case

SUBSTEP_HZ = 240
TARGET_FPS = 60.0


def skirt_case(frames: int, fps: float):
    """Four 16 x 32 panels (2,048 particles) around a running character with thigh ellipsoids."""
    panels = []
    for k in range(4):
        angle = k * np.pi / 2
        rest = grid_rest(16, 32, setup=f"Panel{k}", width=0.6, height=0.6)
        x = rest.rest_positions - (0.3, 0.0, 0.0)
        turn = np.array([[np.cos(angle), -np.sin(angle), 0.0],
                         [np.sin(angle), np.cos(angle), 0.0], [0.0, 0.0, 1.0]])
        x = (x + (0.0, -0.25, 1.0)) @ turn.T
        panels.append(type(rest)(rest.setup, x, rest.quads, rest.pinned, np.linspace(
            0.0, 0.3, 16).repeat(32)))
    colliders = ColliderSet.create(names=["Thigh.L", "Thigh.R"], kind=[ColliderKind.ELLIPSOID] * 2,
                                   size=[1.0, 1.0])
    model = build_cloth_model(cloths=panels, colliders=colliders)
    t = np.arange(frames) / fps
    offset = np.stack([3.0 * t, np.zeros_like(t), 0.03 * np.sin(4 * np.pi * t)], axis=1)
    reference = model.rest_positions[None] + offset[:, None]
    space = np.repeat(np.eye(4)[None, None], frames, axis=0).repeat(4, axis=1)
    space[..., :3, 3] = offset[:, None]
    M = np.repeat(np.eye(4)[None, None], frames, axis=0).repeat(2, axis=1)
    M[..., :3, :3] = np.diag([0.09, 0.09, 0.3])
    for k, side in enumerate((-1.0, 1.0)):
        swing = 0.25 * side * np.sin(2 * np.pi * 1.5 * t)
        M[:, k, :3, 3] = offset + np.stack([swing, np.full_like(t, 0.1 * side),
                                            np.full_like(t, 0.55)], axis=1)
    params = ClothParams.defaults(4, wind_velocity=(0.0, 2.0, 0.0), wind_turbulence=0.4)
    drive = ClothDrive(fps=fps, reference=reference, space=space, collider_matrix=M,
                       params=params)
    return model, drive, SolverSettings(substep=1.0 / SUBSTEP_HZ)


def timed(model, drive, settings, repeat: int) -> tuple[float, float]:
    """(best wall seconds, best CPU seconds) of a whole bake."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        result = bake_cloth(model, drive, settings)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        if not np.isfinite(result.positions).all():
            raise RuntimeError("cloth bake produced non-finite positions")
    return min(wall), min(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=48)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    F = args.frames

    model, drive, settings = make_grid_case(32, 32, frames=F, fps=24.0,
                                            substep=1.0 / SUBSTEP_HZ)
    wall, cpu = timed(model, drive, settings, args.repeat)
    print(json.dumps({"bench": "cloth_core_grid_32x32", "particles": model.n_vertices,
                      "substep_hz": SUBSTEP_HZ, "fps": 24, "frames": F,
                      "ms_per_frame": round(1000 * wall / F, 3),
                      "cpu_ms_per_frame": round(1000 * cpu / F, 3)}))

    cases = [("grid_32x64", lambda fps: make_grid_case(32, 64, frames=F, fps=fps,
                                                       substep=1.0 / SUBSTEP_HZ)),
             ("skirt_4x16x32", lambda fps: skirt_case(F, fps))]
    for name, build in cases:
        for fps in (24.0, 30.0):
            model, drive, settings = build(fps)
            wall, cpu = timed(model, drive, settings, args.repeat)
            print(json.dumps({"bench": f"cloth_core_rig_{name}", "particles": model.n_vertices,
                              "cloths": model.n_cloths, "substep_hz": SUBSTEP_HZ, "fps": fps,
                              "frames": F, "core_fps": round(F / wall, 1),
                              "cpu_core_fps": round(F / cpu, 1),
                              "ratio_to_target_60": round(F / wall / TARGET_FPS, 3)}))


if __name__ == "__main__":
    main()
