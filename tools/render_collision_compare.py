"""Does `collide_strands` push the very same bits as at another revision? (issue 13)

    python tools/render_collision_compare.py [--against main] [--scenes 300]

Loads core/hair/collide.py as it is at the revision `--against` (`git show`) beside this
checkout's, and runs both on `bench_render_collision`'s frame and on seeded random scenes:
1-8 colliders of every kind (spheres, similar and general ellipsoids, round and thin
capsules, boxes, planes), turned and scaled, up to 2 km from the origin; 1-400 strands of
2-19 points wandering through them; float32 (four in five) and float64; radii up to 1 cm and
0-2 fixed roots. A scene differs when the points (np.array_equal) or the projections and
passes counted differ. Exit status 1 when any does.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests" / "benchmarks"))

from _waft import use_checkout  # noqa: E402

use_checkout()

from waft.core.colliders import ColliderKind, ColliderSet  # noqa: E402
from waft.core.hair import collide  # noqa: E402
from waft.core.hair._bench import collision_scene  # noqa: E402


def collide_at(revision: str):
    """core/hair/collide.py at `revision`, as a module of this checkout's waft.core.hair (its
    relative imports load this checkout's modules)."""
    source = subprocess.run(["git", "show", f"{revision}:core/hair/collide.py"], cwd=REPO_ROOT,
                            check=True, capture_output=True, text=True).stdout
    name = "waft.core.hair._collide_at_revision"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "waft.core.hair"
    exec(compile(source, f"{revision}:core/hair/collide.py", "exec"), module.__dict__)
    return module


def _rotation(rng: np.random.Generator) -> np.ndarray:
    w, x, y, z = (q := rng.normal(size=4)) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def random_scene(seed: int):
    """(points, radius, colliders, matrices, first) of seeded scene `seed`."""
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 9))
    origin = rng.normal(size=3) * float(rng.choice([0.0, 1.0, 50.0, 2000.0]))
    kinds = rng.choice([ColliderKind.ELLIPSOID, ColliderKind.CAPSULE, ColliderKind.BOX,
                        ColliderKind.PLANE], size=K, p=[0.5, 0.35, 0.1, 0.05])
    colliders = ColliderSet.create(
        names=[f"c{k}" for k in range(K)], kind=[int(k) for k in kinds],
        size=list(rng.uniform(0.02, 0.3, size=K)), radius_a=list(rng.uniform(0.005, 0.1, K)),
        radius_b=list(rng.uniform(0.005, 0.1, K)))
    matrices = np.repeat(np.eye(4)[None], K, axis=0)
    for k in range(K):
        R = _rotation(rng)
        if kinds[k] == ColliderKind.ELLIPSOID and rng.random() < 0.6:  # a general ellipsoid
            R = R @ np.diag(rng.uniform(0.2, 1.5, size=3))
        elif rng.random() < 0.3:
            R = R * rng.uniform(0.5, 2.0)
        if kinds[k] == ColliderKind.CAPSULE and rng.random() < 0.5:  # a thin capsule
            R = R @ np.diag([rng.uniform(0.05, 1.0), rng.uniform(0.05, 1.0), 1.0])
        matrices[k, :3, :3] = R
        matrices[k, :3, 3] = origin + rng.normal(size=3) * 0.15
    N, P = int(rng.integers(1, 400)), int(rng.integers(2, 20))
    dtype = np.float32 if rng.random() < 0.8 else np.float64
    start = origin + rng.normal(size=(N, 1, 3)) * 0.2
    points = (start + np.cumsum(rng.normal(size=(N, P, 3)) * 0.03, axis=1)).astype(dtype)
    return points, rng.uniform(0.0, 0.01, size=P), colliders, matrices, int(
        rng.integers(0, min(3, P)))


def differs(before, points, radius, colliders, matrices, first: int = 1) -> bool:
    a, b = points.copy(), points.copy()
    pa = before.collide_strands(a, radius, colliders, matrices, first=first)
    pb = collide.collide_strands(b, radius, colliders, matrices, first=first)
    return not (np.array_equal(a, b) and pa == pb)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="main")
    parser.add_argument("--scenes", type=int, default=300)
    args = parser.parse_args()
    before = collide_at(args.against)
    frame, radius, colliders, matrices, _ = collision_scene()
    bench = differs(before, frame, radius, colliders, matrices)
    print(f"bench_render_collision's frame: {'DIFFERS' if bench else 'the same'}")
    seeds = [s for s in range(args.scenes) if differs(before, *random_scene(s))]
    print(f"{args.scenes} random scenes: {len(seeds)} differ" + (f" (seeds {seeds[:20]})"
                                                                  if seeds else ""))
    return int(bench or bool(seeds))


if __name__ == "__main__":
    sys.exit(main())
