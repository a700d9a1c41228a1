"""Ragdoll core benchmark: a walking humanoid ragdoll solved by `waft.core.ragdoll` only.

`core.ragdoll._bench_cases.make_humanoid_case`: 17 capsule bodies (root locked, motors 0.8, arms
on a 40 % physics blend, a ground plane), 250 frames at 30 fps, 240 Hz substeps. Prints one JSON
line per solver configuration (the default 4 iterations, and 1 iteration per substep as Small
Steps recommends), and for four humanoids baked together (one vectorised solve):

    {"bench": "ragdoll_core", "bodies": 17, "frames": 250, "substep_hz": 240, "fps": 30,
     "iterations": 4, "ms_per_frame": ..., "cpu_ms_per_frame": ..., "us_per_body_substep": ...}

The Blender rigid-body (Bullet) comparison with the same bodies lives in R2's benchmark, which
imports `make_humanoid_case` / `humanoid_rest` and prints the Waft / Bullet ratio.

Run: python tests/benchmarks/bench_ragdoll_core.py [--frames N] [--bodies N] [--repeat N]
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import importlib.util
import json
import pstats
import sys
import time
import types
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _import_ragdoll():
    """`waft.core.ragdoll` from this checkout without the (bpy-importing) root package."""
    if "waft" not in sys.modules:
        module = types.ModuleType("waft")
        module.__path__ = [str(REPO_ROOT)]
        module.__spec__ = importlib.util.spec_from_loader("waft", loader=None, is_package=True)
        sys.modules["waft"] = module
    import waft.core.ragdoll as ragdoll
    from waft.core.ragdoll import _bench_cases

    return ragdoll, _bench_cases


ragdoll, cases = _import_ragdoll()


def measure(bodies: int, frames: int, iterations: int, repeat: int, ragdolls: int = 1) -> dict:
    model, drive, settings = cases.make_humanoid_case(bodies=bodies, frames=frames,
                                                      ragdolls=ragdolls)
    settings = dataclasses.replace(settings, iterations=iterations)
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = ragdoll.bake_ragdoll(model, drive, settings)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    substeps = result.substeps
    # Python calls per substep (every Python and C function entered: NumPy's dispatch is the
    # cost at 17 bodies), from one profiled bake of a tenth of the frames.
    short = cases.make_humanoid_case(bodies=bodies, frames=max(frames // 10, 2),
                                     ragdolls=ragdolls)
    profile = cProfile.Profile()
    profile.enable()
    profiled = ragdoll.bake_ragdoll(short[0], short[1], settings)
    profile.disable()
    calls = sum(stat[1] for stat in pstats.Stats(profile).stats.values()) / profiled.substeps
    return {
        "bench": "ragdoll_core", "ragdolls": ragdolls, "bodies": model.n_bodies,
        "frames": frames,
        "substep_hz": round(1.0 / settings.substep), "fps": drive.fps, "iterations": iterations,
        "ms_per_frame": round(1000.0 * best_wall / frames, 3),
        "cpu_ms_per_frame": round(1000.0 * best_cpu / frames, 3),
        "us_per_body_substep": round(1e6 * best_cpu / (substeps * model.n_bodies), 2),
        "calls_per_substep": round(calls, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=17)
    parser.add_argument("--frames", type=int, default=250)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    for iterations in (4, 1):
        print(json.dumps(measure(args.bodies, args.frames, iterations, args.repeat)), flush=True)
    # Several characters in one bake share every NumPy call: the cost per body drops.
    print(json.dumps(measure(args.bodies, args.frames, 4, args.repeat, ragdolls=4)), flush=True)


if __name__ == "__main__":
    main()
