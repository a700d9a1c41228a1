"""Batch baking benchmark: shots per minute on a local Dask cluster, against baking one by one.

The shots are the samples built from nothing (no ../shared/assets), saved unbaked with their
pre-roll and baked over their full frame ranges, ``--copies`` times each (distinct files, so
the batch sees 6 × copies shots). The peer is what a TD runs today without the batch: one
Blender process per shot, one after the other (``blender -b shot.blend --command waft bake
--output …``; here the same fresh bpy process per shot the batch's workers start, run in a
plain loop). Then ``bake_many`` with 1, 2, … local workers (``--force``: every shot bakes).

Prints JSON lines: one per run (shots, seconds, shots per minute, speed-up over the sequential
loop) and the machine's core count, where the scaling must stop.

    .venv/bin/python tests/benchmarks/bench_batch.py [--copies 2] [--workers 1 2 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO_ROOT / "tools"), str(REPO_ROOT / "samples")]

SAMPLES = ("ponytail", "hair_underwater", "hair_curly_wind", "hair_head_turn", "ragdoll_fall",
           "ragdoll_rigify")

BUILD = """
import sys
sys.path[:0] = [{tools!r}, {samples!r}]
import blender_env
bpy = blender_env.import_bpy_isolated()
blender_env.install_extension({zip!r})
import run_all
for name in {names!r}:
    module = run_all.load_sample(name)
    blender_env.reset_to_empty_file()
    scene = module.build_scene()
    scene.waft.preroll = getattr(module, "PREROLL", 0)
    bpy.ops.wm.save_as_mainfile(filepath={folder!r} + "/" + name + ".blend")
"""


def build_shots(zip_path: Path, folder: Path, copies: int) -> list[Path]:
    """Save the samples unbaked (in a separate Blender process), then copy them."""
    code = BUILD.format(tools=str(REPO_ROOT / "tools"), samples=str(REPO_ROOT / "samples"),
                        zip=str(zip_path), names=SAMPLES, folder=str(folder))
    env = {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shots = []
    for copy in range(copies):
        for name in SAMPLES:
            target = folder / f"{name}_{copy}.blend"
            shutil.copyfile(folder / f"{name}.blend", target)
            shots.append(target)
    return shots


def sequential(shots: list[Path], zip_path: Path, out: Path) -> float:
    """One fresh Blender per shot, one after the other: the child script the workers run."""
    child = REPO_ROOT / "batch" / "child.py"
    start = time.perf_counter()
    for shot in shots:
        with tempfile.TemporaryDirectory() as work:
            job = {"shot": shot.stem, "blend": str(shot), "output": str(out / shot.name),
                   "temporary": str(out / f".{shot.stem}.part"), "zip": str(zip_path),
                   "user_dir": f"{work}/user", "result": f"{work}/result.json"}
            Path(work, "job.json").write_text(json.dumps(job))
            subprocess.run([sys.executable, str(child), f"{work}/job.json"], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            assert json.loads(Path(work, "result.json").read_text())["status"] == "ok"
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--zip", type=Path)
    args = parser.parse_args()
    import _waft

    import build_extension

    _waft.use_checkout()
    from waft.batch import bake_many

    with tempfile.TemporaryDirectory(prefix="waft-bench-batch-") as tmp:
        tmp = Path(tmp)
        zip_path = args.zip or build_extension.build(REPO_ROOT, tmp / "dist")
        (tmp / "shots").mkdir()
        shots = build_shots(zip_path, tmp / "shots", args.copies)
        (tmp / "seq").mkdir()
        seq_s = sequential(shots, zip_path, tmp / "seq")
        print(json.dumps({"run": "one Blender per shot, in sequence (peer)", "shots": len(shots),
                          "seconds": round(seq_s, 2),
                          "shots_per_minute": round(60 * len(shots) / seq_s, 1)}), flush=True)
        for workers in args.workers:
            start = time.perf_counter()
            results = bake_many(shots, tmp / f"w{workers}", workers=workers, zip_path=zip_path,
                                force=True, progress=False)
            seconds = time.perf_counter() - start
            assert all(r.status == "ok" for r in results), [r.error for r in results]
            print(json.dumps({"run": f"bake_many, local cluster of {workers}",
                              "shots": len(shots), "seconds": round(seconds, 2),
                              "shots_per_minute": round(60 * len(shots) / seconds, 1),
                              "speedup_vs_sequential": round(seq_s / seconds, 2),
                              "cores": os.cpu_count()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
