"""The spread of session 49/50's two friction laws on bone chains, measured off the suite's
parameters (`python tools/chain_rest_spread.py [--rest] [--edge] [--seconds 8] [-j 2]`).

--rest: SOFT, PONYTAIL and HAIR_STRAIGHT_LONG (addon/strands/presets.py) draped from a still
root 10 / 15 / 20 cm above the ground, collider friction 0.1 / 0.3 / 0.6 / 1.0, passive: the
largest speed (mm/s) of a particle touching the ground over the last second, as
tests/core/test_preset_rest.py measures it (36 cases; the test itself is SOFT/0.3/15 cm).
Coulomb friction holds a contact whose tangential pull is inside its cone without any slip, so
more than 1 mm/s seconds after the drape is friction failing (the test's bound).

--edge: an 8-bone chain dragged by a 5 g root past a box (friction 0.3) at 8 placements, at
24 / 25 / 60 fps, as tests/core/test_chains_audit.py's `_dragged_past`: the largest depth
inside the box (um) and the longest segment's error at a frame (%, bound 0.5).

Columns are printed as they finish; a summary counts the cases over each bound.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

REST_PRESETS = ("SOFT", "PONYTAIL", "HAIR_STRAIGHT_LONG")
REST_FRICTIONS = (0.1, 0.3, 0.6, 1.0)
REST_HEIGHTS = (0.10, 0.15, 0.20)

# size (half extent, m), centre: the box placements of test_chains_audit (the under-an-edge,
# with-friction and held-in-the-cone tests) and two more between them.
EDGE_BOXES = {
    "10 cm at -6.5/70": (0.05, (-0.065, 0.0, 0.7)),
    "10 cm at +6.5/70": (0.05, (0.065, 0.0, 0.7)),
    "8 cm at -5.5/75": (0.04, (-0.055, 0.0, 0.75)),
    "10 cm at +7/75": (0.05, (0.07, 0.0, 0.75)),
    "8 cm at -6/80": (0.04, (-0.06, 0.0, 0.8)),
    "8 cm at +5.5/75": (0.04, (0.055, 0.0, 0.75)),
    "10 cm at -7/75": (0.05, (-0.07, 0.0, 0.75)),
    "8 cm at +6/80": (0.04, (0.06, 0.0, 0.8)),
}
EDGE_FPS = (24, 25, 60)


def _tests():
    # tests/ and tests/core are namespace packages; their conftest registers `waft`.
    from tests.core import conftest, test_chains_audit, test_preset_rest
    return conftest, test_preset_rest, test_chains_audit


def rest_speed(preset: str, friction: float, height: float, seconds: float) -> float:
    """The largest speed (m/s) of a particle touching the ground over the last second."""
    conftest, rest, _ = _tests()
    core = rest.core
    fps = rest.FPS
    root = np.array([0.0, 0.0, height])
    chain = root + np.arange(rest.BONES + 1)[:, None] * np.array([rest.LENGTH, 0.0, 0.0])
    colliders = core.ColliderSet.create(names=["C"], kind=[rest.ColliderKind.PLANE],
                                        size=[rest.SIZE], radius_a=[rest.SIZE],
                                        radius_b=[rest.SIZE], friction=[friction])
    M = np.eye(4)
    frames = int(seconds * fps) + 1
    values = rest.PRESETS[preset]
    params = {name: value for name, value in values.items() if name in rest.FIELDS}
    params["gravity"] = np.array([0.0, 0.0, -conftest.G]) * values.get("gravity_factor", 1.0)
    model, drive = conftest.Rig.build(
        [chain], frames=frames, fps=fps, colliders=colliders,
        collider_matrix=np.tile(M, (frames, 1, 1, 1)), radius=rest.RADIUS, use_tether=True,
        **{"damping": 1.0, "shape_stiffness": 0.1, "bend_compliance": 5e-5, "drag": 0.5,
           **params})
    x = core.bake(model, drive).positions[:, 0]
    if not np.isfinite(x).all():
        return float("nan")
    speed = np.linalg.norm(np.diff(x, axis=0), axis=-1) * fps
    _, distance = rest.shape_normal(int(colliders.kind[0]), x.reshape(-1, 3), M,
                                    np.linalg.inv(M), colliders, 0)
    touching = (distance.reshape(x.shape[:2]) < rest.RADIUS + rest.TOUCH)[1:]
    return float(np.where(touching, speed, 0.0)[-int(fps):].max())


def edge(size: float, centre, fps: int) -> tuple[float, float]:
    """(deepest frame inside the box (m), longest segment error at a frame (share))."""
    conftest, _, audit = _tests()
    x, depth, stretch = audit._dragged_past(conftest.Rig, audit.ColliderKind.BOX, size,
                                           centre, fps=fps)
    if not np.isfinite(x).all():
        return float("nan"), float("nan")
    return float(depth.max()), float(stretch.max())


def _run_rest(pool, seconds: float) -> None:
    cases = [(p, f, h) for p in REST_PRESETS for f in REST_FRICTIONS for h in REST_HEIGHTS]
    jobs = [pool.submit(rest_speed, p, f, h, seconds) for p, f, h in cases]
    speeds = []
    print(f"rest on the ground, {seconds:g} s, contacts' speed over the last second (mm/s)")
    for (p, f, h), job in zip(cases, jobs, strict=True):
        v = job.result() * 1e3
        speeds.append(v)
        print(f"  {p:20s} friction {f:3.1f} root {h * 100:4.0f} cm  {v:8.3f}", flush=True)
    speeds = np.array(speeds)
    print(f"  over 1 mm/s: {int(np.sum(~(speeds < 1.0)))} of {len(speeds)}, over 0.1: "
          f"{int(np.sum(~(speeds < 0.1)))}, worst {np.nanmax(speeds):.3f} mm/s")


def _run_edge(pool) -> None:
    cases = [(name, fps) for name in EDGE_BOXES for fps in EDGE_FPS]
    jobs = [pool.submit(edge, *EDGE_BOXES[name], fps) for name, fps in cases]
    print("dragged under a box's edge, friction 0.3: depth (um), longest segment (%)")
    worst: dict[str, float] = {}
    for (name, fps), job in zip(cases, jobs, strict=True):
        depth, stretch = job.result()
        worst[name] = max(worst.get(name, 0.0), stretch)
        print(f"  {name:18s} {fps:3d} fps  depth {depth * 1e6:8.2f}  stretch "
              f"{stretch * 100:7.3f}", flush=True)
    failing = [name for name, s in worst.items() if not s <= 5e-3]
    print(f"  placements over 0.5 % at one of {EDGE_FPS} fps: {len(failing)} of "
          f"{len(worst)} {failing}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rest", action="store_true")
    parser.add_argument("--edge", action="store_true")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()
    if not (args.rest or args.edge):
        args.rest = args.edge = True
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        if args.edge:
            _run_edge(pool)
        if args.rest:
            _run_rest(pool, args.seconds)
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
