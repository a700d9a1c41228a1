"""Core solver benchmark: the rig the Blender peers were measured on, solved by `waft.core` only.

64 chains x 8 bones (S = 64 strands of P = 9 particles), 100 frames, roots swinging +-0.3 m,
one sphere collider, 240 Hz substeps; baked at 24, 30 and 60 fps. Prints one JSON line per fps:

    {"bench": "core_chains", "bones": 512, "frames": 100, "substep_hz": 240, "fps": 24,
     "us_per_bone_frame": ..., "ms_per_frame": ...}

Run: python tests/benchmarks/bench_core.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _waft import use_checkout


def _import_core():
    """`waft.core` from this checkout without running the (bpy-importing) root register code."""
    use_checkout()
    import waft.core as core

    return core


core = _import_core()

CHAINS, BONES, FRAMES, SUBSTEP_HZ = 64, 8, 100, 240
BONE_LENGTH = 0.05
SWING = 0.3  # metres, root amplitude
SWING_HZ = 1.0


def build_rig(fps: float):
    """Model and drive of the benchmark rig at `fps`."""
    S, P = CHAINS, BONES + 1
    grid = int(np.ceil(np.sqrt(CHAINS)))
    roots = np.array([[0.02 * (s % grid), 0.02 * (s // grid), 1.7] for s in range(S)])
    offsets = np.zeros((P, 3))
    offsets[:, 2] = -BONE_LENGTH * np.arange(P)
    rest = roots[:, None, :] + offsets[None]  # (S, P, 3), hanging straight down
    kinematic = np.zeros(P, dtype=bool)
    kinematic[0] = True
    chains = [core.ChainRest(setup="Bench", name=f"Bench: Chain.{s:03d}", rest_positions=rest[s],
                             kinematic=kinematic) for s in range(S)]
    colliders = core.ColliderSet.create(names=["Head"], kind=[core.ColliderKind.ELLIPSOID],
                                        size=[1.0], friction=[0.3])
    model = core.build_strand_model(chains=chains, colliders=colliders)
    t = np.arange(FRAMES) / fps
    sway = SWING * np.sin(2 * np.pi * SWING_HZ * t)
    reference = np.repeat(rest[None], FRAMES, axis=0)
    reference[..., 0] += sway[:, None, None]  # the whole groomed pose follows the root
    sphere = np.tile(np.eye(4), (FRAMES, 1, 1, 1))
    sphere[:, 0, :3, :3] *= 0.08  # a 8 cm sphere the chains swing into
    sphere[:, 0, :3, 3] = (0.07, 0.07, 1.45)
    drive = core.Drive(
        fps=fps,
        reference=reference,
        kinematic=np.broadcast_to(kinematic, (S, P)).copy(),
        space=np.broadcast_to(np.eye(4), (FRAMES, S, 4, 4)),
        collider_matrix=sphere,
        params=core.StrandParams.defaults(S, P),
    )
    return model, drive


def measure(fps: float, repeat: int) -> dict:
    model, drive = build_rig(fps)
    settings = core.SolverSettings(substep=1 / SUBSTEP_HZ)
    core.bake(model, drive, settings)  # warm-up (allocations, caches)
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        core.bake(model, drive, settings)
        best = min(best, time.perf_counter() - start)
    bones = CHAINS * BONES
    return {
        "bench": "core_chains",
        "bones": bones,
        "frames": FRAMES,
        "substep_hz": SUBSTEP_HZ,
        "fps": fps,
        "us_per_bone_frame": round(best / (bones * FRAMES) * 1e6, 3),
        "ms_per_frame": round(best / FRAMES * 1e3, 3),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    for fps in (24, 30, 60):
        print(json.dumps(measure(fps, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
