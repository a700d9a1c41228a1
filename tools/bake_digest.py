"""Bake sample scenes and print a digest of everything the bake wrote, one JSON line each.

    python tools/bake_digest.py --zip dist/waft-0.1.0.zip [--repeat N] [SAMPLE[:FRAMES] ...]

With no sample names every sample is baked; `--repeat N` bakes each one N times in this process
(each time in a fresh empty file) and prints every digest, for in-process determinism. A name
may repeat (baked again, in a fresh empty file) and may end in `:FRAMES`: only the first FRAMES
frames of the sample's range are baked and hashed (its scene end moved before the bake; the
preroll stays), for the determinism test's shorter bakes.

For every sample: build the scene in an empty file, bake it through the installed add-on
(`bake_api.bake_scene`, as the main job does) and hash, bitwise,
- every F-curve of every action (data path, index, each key's frame, value, handles and
  interpolation), in name order;
- every evaluated hair Curves object's point positions at every frame of the scene range
  (render strands are played back through their own modifiers: what the user renders).
Two runs of the same Waft and Blender on the same machine must print the same lines; the
determinism test runs this in fresh processes with different PYTHONHASHSEED.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO_ROOT / "tools"), str(REPO_ROOT / "samples")]

import blender_env  # noqa: E402

bpy = blender_env.import_bpy_isolated()
COMPAT = None  # the installed add-on's compat module (action F-curves of every Blender)


def keys_digest(action_fcurves) -> tuple[str, int]:
    h = hashlib.sha256()
    count = 0
    for action in sorted(bpy.data.actions, key=lambda a: a.name):
        curves = sorted(action_fcurves(action), key=lambda fc: (fc.data_path, fc.array_index))
        for fc in curves:
            n = len(fc.keyframe_points)
            h.update(f"{action.name}|{fc.data_path}|{fc.array_index}|{n}".encode())
            for attr in ("co", "handle_left", "handle_right"):
                buf = np.empty(2 * n, dtype=np.float32)
                fc.keyframe_points.foreach_get(attr, buf)
                h.update(buf.tobytes())
            h.update("".join(k.interpolation for k in fc.keyframe_points).encode())
            count += 1
    return h.hexdigest(), count


def curves_digest(scene) -> tuple[str, int]:
    h = hashlib.sha256()
    hair = sorted((ob for ob in scene.objects if ob.type == 'CURVES'), key=lambda ob: ob.name)
    if not hair:
        return "", 0
    for frame in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for ob in hair:
            data = ob.evaluated_get(depsgraph).data
            buf = np.empty(3 * len(data.points), dtype=np.float32)
            data.points.foreach_get("position", buf)
            h.update(f"{ob.name}|{frame}".encode())
            h.update(buf.tobytes())
    return h.hexdigest(), len(hair)


def digest_sample(name: str, bake_api, frames: int | None = None) -> dict:
    import run_all  # samples/run_all.py: load_sample

    module = run_all.load_sample(name)
    missing = getattr(module, "missing_assets", lambda: None)()
    if missing:
        return {"sample": name, "skipped": str(missing)}
    blender_env.reset_to_empty_file()
    scene = module.build_scene()
    if frames is not None:
        scene.frame_end = min(scene.frame_end, scene.frame_start + frames - 1)
    bake_api.bake_scene(scene, preroll=getattr(module, "PREROLL", 0))
    keys, fcurves = keys_digest(COMPAT.action_fcurves)
    geometry, curves_objects = curves_digest(scene)
    return {"sample": name, "frames": [scene.frame_start, scene.frame_end], "keys": keys,
            "fcurves": fcurves, "curves": geometry, "curves_objects": curves_objects}


def parse_sample(arg: str) -> tuple[str, int | None]:
    """`NAME` or `NAME:FRAMES` (the first FRAMES frames of the sample's range)."""
    name, _, frames = arg.partition(":")
    return name, (int(frames) if frames else None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zip", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("samples", nargs="*")
    args = parser.parse_args(argv)
    import run_all  # samples/run_all.py: the sample names

    wanted = [parse_sample(arg) for arg in args.samples] or [(n, None) for n in run_all.SAMPLES]
    global COMPAT
    module_name, _ = blender_env.install_extension(args.zip)
    bake_api = blender_env.bake_api(module_name)
    COMPAT = importlib.import_module(module_name + ".addon.compat")  # legacy and slotted
    for name, frames in wanted:
        for _ in range(args.repeat):
            print(json.dumps(digest_sample(name, bake_api, frames)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
