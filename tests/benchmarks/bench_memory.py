"""Peak memory of a long bake in real Blender: Waft's bake versus Blender's own ``nla.bake``.

The rig of bench_chains.py (64 chains x 8 bones = 512 bones, keyed root swing, one sphere
collider) over a long shot. Each measurement resets the process's peak resident set
(``/proc/self/clear_refs``, Linux) on a fresh scene and reads ``VmHWM`` after the bake:

- Waft: ``addon.bake_api.bake_scene`` at the default Sample Rate (120 Hz: five samples per
  24 fps frame), sample + solve + write;
- ``bpy.ops.nla.bake(visual_keying=True, bake_types={'POSE'})`` of the same bones, no physics.

Prints JSON lines (``peak_mb`` above the scene's own resident set, ``result_mb``: the solved
positions, float64, that the keys are made from; ``resident_after_mb``: what is still resident
after the bake, the keys Blender holds, and ``peak_above_after_mb`` what the bake held beyond
them at its peak).

    .venv/bin/python tests/benchmarks/bench_memory.py [--frames 1000 5000] [--zip ZIP]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_chains  # noqa: E402  (imports bpy into a throwaway user dir)
from bench_chains import REPO_ROOT, blender_env, bpy, build_extension  # noqa: E402

CHAINS, BONES = 64, 8


def _status(field: str) -> float:
    """A ``/proc/self/status`` memory field in MB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"{field} is not in /proc/self/status (Linux only)")


def _peak_of(run) -> tuple[float, float, float]:
    """(seconds, peak resident MB above the resident set before, resident MB above it after)
    of ``run()``: what is still resident after the bake is what it made (Blender's F-curve
    points), the floor of any bake that writes those keys."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the peak (VmHWM) starts again from the current resident set
    before = _status("VmRSS")
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start, _status("VmHWM") - before,
            _status("VmRSS") - before)


def _scene(frames: int):
    blender_env.reset_to_empty_file()
    scene, rig, names = bench_chains.build_rig(CHAINS, BONES, frames)
    return scene, rig, names


def measure_waft(bake_api, frames: int) -> dict:
    scene, rig, names = _scene(frames)
    rig.waft.enabled = True
    for name in names:
        rig.pose.bones[name].waft.simulate = True
    seconds, peak, after = _peak_of(lambda: bake_api.bake_scene(scene))
    return {"seconds": seconds, "peak_mb": peak, "resident_after_mb": after,
            "peak_above_after_mb": peak - after}


def measure_nla_bake(frames: int) -> dict:
    _scene_, rig, names = _scene(frames)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    wanted = set(names)
    for pb in rig.pose.bones:
        blender_env.set_pose_bone_selected(pb, pb.name in wanted)
    result = set()
    seconds, peak, after = _peak_of(lambda: result.update(bpy.ops.nla.bake(
        frame_start=1, frame_end=frames, only_selected=True, visual_keying=True,
        bake_types={"POSE"})))
    bpy.ops.object.mode_set(mode="OBJECT")
    if "FINISHED" not in result:
        raise RuntimeError(f"nla.bake returned {result}")
    return {"seconds": seconds, "peak_mb": peak, "resident_after_mb": after,
            "peak_above_after_mb": peak - after}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Peak memory of a long bake (512 bones)")
    parser.add_argument("--frames", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--zip", type=Path, default=None, help="extension zip (built if absent)")
    parser.add_argument("--no-peer", action="store_true", help="skip nla.bake")
    args = parser.parse_args(argv)
    zip_path = args.zip or build_extension.build(REPO_ROOT,
                                                 Path(tempfile.mkdtemp(prefix="waft-dist-")))
    module_name, _ = blender_env.install_extension(zip_path)
    bake_api = blender_env.bake_api(module_name)
    for frames in args.frames:
        common = {"bones": CHAINS * BONES, "frames": frames, "blender": bpy.app.version_string,
                  "result_mb": round(frames * CHAINS * (BONES + 1) * 3 * 8 / 1e6, 1)}
        waft = measure_waft(bake_api, frames)
        print(json.dumps({"bench": "memory_waft", **common,
                          **{k: round(v, 2) for k, v in waft.items()}}), flush=True)
        if not args.no_peer:
            nla = measure_nla_bake(frames)
            print(json.dumps({"bench": "memory_nla_bake", **common,
                              **{k: round(v, 2) for k, v in nla.items()},
                              "ratio_waft_over_nla_bake": round(waft["peak_mb"]
                                                                / max(nla["peak_mb"], 1.0), 2)}),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
