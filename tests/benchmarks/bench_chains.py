"""End-to-end benchmark in real Blender: Waft's bake versus Blender's own ``nla.bake``.

The rig the Blender spring-bone add-ons were measured on (issue 2 §6): one armature with 64
chains x 8 bones (512 bones) hanging from a ``Root`` bone keyed swinging +-0.3 m, one sphere
collider, 100 frames at 24 fps. Two measurements on identical fresh scenes in one process:

- Waft: ``addon.bake_api.bake_scene`` (sample + solve + write; the report's split is printed);
- ``bpy.ops.nla.bake(visual_keying=True, bake_types={'POSE'})`` of the same 512 bones with no
  physics at all (what handler-driven add-ons must pay on top of their simulation).

Prints JSON lines (``end_to_end_us_per_bone_frame``, ``nla_bake_us_per_bone_frame``,
``ratio_waft_over_nla_bake``), then the core-only numbers of tests/benchmarks/bench_core.py.

    .venv/bin/python tests/benchmarks/bench_chains.py [--quick] [--repeat N] [--zip ZIP]
                                                      [--only-tail]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "tools"))

import blender_env
import build_extension

bpy = blender_env.import_bpy_isolated()  # throwaway user dir first, then bpy

BONE_LENGTH = 0.05  # metres
SWING = 0.3  # metres, root amplitude
FPS = 24


def build_rig(chains: int, bones: int, frames: int):
    """The benchmark scene in the current (empty) file; returns (scene, rig, chain bone names)."""
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.frame_start, scene.frame_end = 1, frames
    rig = bpy.data.objects.new("Bench", bpy.data.armatures.new("Bench"))
    scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    rig.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = rig.data.edit_bones
    root = edit_bones.new("Root")
    root.head, root.tail = (0.0, 0.0, 1.7), (0.0, 0.0, 1.8)
    grid = int(chains**0.5 + 0.999)
    names = []
    for c in range(chains):
        x, y = 0.03 * (c % grid - grid / 2), 0.03 * (c // grid - grid / 2)
        parent = root
        for k in range(bones):
            bone = edit_bones.new(f"Chain.{c:03d}.{k}")
            bone.head = (x, y, 1.7 - BONE_LENGTH * k)
            bone.tail = (x, y, 1.7 - BONE_LENGTH * (k + 1))
            bone.parent, bone.use_connect = parent, k > 0
            parent = bone
            names.append(bone.name)
    bpy.ops.object.mode_set(mode="OBJECT")
    root_pose = rig.pose.bones["Root"]
    quarter = max(frames // 4, 1)
    for frame, x in ((1, 0.0), (1 + quarter, SWING), (1 + 3 * quarter, -SWING), (frames, 0.0)):
        root_pose.location = (x, 0.0, 0.0)  # bone-local X is world X for a bone pointing up
        root_pose.keyframe_insert("location", frame=frame)
    collider = bpy.data.objects.new("Collider", None)
    scene.collection.objects.link(collider)
    collider.empty_display_type = "SPHERE"
    collider.empty_display_size = 0.15
    collider.location = (0.0, 0.25, 1.55)
    return scene, rig, names


def time_waft(bake_api, chains: int, bones: int, frames: int) -> dict:
    blender_env.reset_to_empty_file()
    scene, rig, names = build_rig(chains, bones, frames)
    rig.waft.enabled = True
    for name in names:
        rig.pose.bones[name].waft.simulate = True
    scene.objects["Collider"].waft_collider.enabled = True
    start = time.perf_counter()
    report = bake_api.bake_scene(scene)
    seconds = time.perf_counter() - start
    if rig.animation_data is None or rig.animation_data.nla_tracks.get("Waft") is None:
        raise RuntimeError("the Waft bake wrote no 'Waft' NLA track")
    keys = ("sample_s", "solve_s", "write_s")
    split = {k: getattr(report, k) for k in keys if hasattr(report, k)}
    return {"seconds": seconds, **split}


def time_nla_bake(chains: int, bones: int, frames: int) -> dict:
    blender_env.reset_to_empty_file()
    scene, rig, names = build_rig(chains, bones, frames)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    wanted = set(names)
    for pb in rig.pose.bones:
        blender_env.set_pose_bone_selected(pb, pb.name in wanted)
    start = time.perf_counter()
    result = bpy.ops.nla.bake(
        frame_start=1,
        frame_end=frames,
        only_selected=True,
        visual_keying=True,
        bake_types={"POSE"},
    )
    seconds = time.perf_counter() - start
    bpy.ops.object.mode_set(mode="OBJECT")
    if result != {"FINISHED"}:
        raise RuntimeError(f"nla.bake returned {result}")
    return {"seconds": seconds}


def add_skinned_body(scene, subdivisions: int = 500):
    """A 251k-vertex grid skinned by its own keyed rig (a character's body no setup reads)."""
    rig = bpy.data.objects.new("BodyRig", bpy.data.armatures.new("BodyRig"))
    scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    spine = rig.data.edit_bones.new("Spine")
    spine.head, spine.tail = (1.0, 0.0, 0.0), (1.0, 0.0, 1.0)
    bpy.ops.object.mode_set(mode="OBJECT")
    pose = rig.pose.bones["Spine"]
    pose.rotation_mode = "XYZ"
    for frame, angle in ((1, 0.0), (50, 0.6), (100, 0.0)):
        pose.rotation_euler = (angle, 0.0, 0.0)
        pose.keyframe_insert("rotation_euler", frame=frame)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=subdivisions, y_subdivisions=subdivisions,
                                    size=1.0, location=(1.0, 0.0, 0.5))
    body = bpy.context.object
    group = body.vertex_groups.new(name="Spine")
    group.add(list(range(len(body.data.vertices))), 1.0, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = rig
    return body


def time_with_body(bake_api, module_name: str, frames: int) -> dict:
    """A 4-bone tail (1 chain × 4) beside a 251k-vertex skinned body, 100 frames: Waft end to
    end as it bakes (only what it reads evaluated), and with every object evaluated; nla.bake of
    the 4 bones with the body evaluated, and with it disabled first (Jiggle Physics' bake)."""
    import contextlib
    import importlib

    scope = importlib.import_module(f"{module_name}.addon.sampling_scope")
    out = {}
    for label, hidden in (("waft", None), ("waft_every_object_evaluated", "off")):
        blender_env.reset_to_empty_file()
        scene, rig, names = build_rig(1, 4, frames)
        add_skinned_body(scene)
        rig.waft.enabled = True
        for name in names:
            rig.pose.bones[name].waft.simulate = True
        original = scope.unneeded_hidden
        if hidden == "off":
            scope.unneeded_hidden = lambda _scene: contextlib.nullcontext([])
        try:
            start = time.perf_counter()
            bake_api.bake_scene(scene)
            out[label] = time.perf_counter() - start
        finally:
            scope.unneeded_hidden = original
    for label, hide in (("nla_bake", False), ("nla_bake_body_disabled", True)):
        blender_env.reset_to_empty_file()
        scene, rig, names = build_rig(1, 4, frames)
        body = add_skinned_body(scene)
        start = time.perf_counter()
        body.hide_viewport = hide
        bpy.context.view_layer.objects.active = rig
        bpy.ops.object.mode_set(mode="POSE")
        for pb in rig.pose.bones:
            blender_env.set_pose_bone_selected(pb, pb.name in names)
        bpy.ops.nla.bake(frame_start=1, frame_end=frames, only_selected=True,
                         visual_keying=True, bake_types={"POSE"})
        bpy.ops.object.mode_set(mode="OBJECT")
        body.hide_viewport = False
        out[label] = time.perf_counter() - start
    return out


def best(runs: list[dict]) -> dict:
    return min(runs, key=lambda r: r["seconds"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Waft end-to-end bake vs nla.bake (512 bones)")
    parser.add_argument("--quick", action="store_true", help="16 chains x 8 bones, 25 frames")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best is kept")
    parser.add_argument("--zip", type=Path, default=None, help="extension zip (built if absent)")
    parser.add_argument("--no-core", action="store_true", help="skip bench_core.py")
    parser.add_argument("--only-tail", action="store_true",
                        help="only the 4-bone tail beside the skinned body (no 512 bones, no core)")
    args = parser.parse_args(argv)
    chains, bones, frames = (16, 8, 25) if args.quick else (64, 8, 100)
    repeat = 1 if args.quick else max(args.repeat, 1)

    # Built from the checkout unless given: a zip left in dist/ may be older than the code.
    zip_path = args.zip or build_extension.build(REPO_ROOT,
                                                 Path(tempfile.mkdtemp(prefix="waft-dist-")))
    module_name, _ = blender_env.install_extension(zip_path)
    bake_api = blender_env.bake_api(module_name)

    if args.only_tail:
        print_tail(bake_api, module_name, repeat)
        return 0

    bone_frames = chains * bones * frames
    common = {"bones": chains * bones, "chains": chains, "frames": frames, "fps": FPS,
              "blender": bpy.app.version_string}
    waft = best([time_waft(bake_api, chains, bones, frames) for _ in range(repeat)])
    nla = best([time_nla_bake(chains, bones, frames) for _ in range(repeat)])
    waft_us = 1e6 * waft["seconds"] / bone_frames
    nla_us = 1e6 * nla["seconds"] / bone_frames
    print(json.dumps({"bench": "waft_end_to_end", **common, "seconds": round(waft["seconds"], 4),
                      **{k: round(v, 4) for k, v in waft.items() if k != "seconds"},
                      "end_to_end_us_per_bone_frame": round(waft_us, 3)}), flush=True)
    print(json.dumps({"bench": "nla_bake", **common, "seconds": round(nla["seconds"], 4),
                      "nla_bake_us_per_bone_frame": round(nla_us, 3)}), flush=True)
    print(json.dumps({"bench": "ratio", **common,
                      "ratio_waft_over_nla_bake": round(waft_us / nla_us, 4)}), flush=True)

    print_tail(bake_api, module_name, repeat)

    bench_core = Path(__file__).with_name("bench_core.py")
    if bench_core.is_file() and not args.no_core:
        # A separate process: the core numbers must not include Blender's memory or threads.
        core_args = ["--repeat", "1"] if args.quick else []
        proc = subprocess.run([sys.executable, str(bench_core), *core_args],
                              capture_output=True, text=True, check=False)
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                print(line, flush=True)
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
    return 0


def print_tail(bake_api, module_name: str, repeat: int) -> None:
    body = [time_with_body(bake_api, module_name, 100) for _ in range(repeat)]
    body = {key: min(run[key] for run in body) for key in body[0]}
    print(json.dumps({"bench": "tail_beside_skinned_body", "bones": 4, "frames": 100,
                      "body_vertices": 251001, **{f"{k}_s": round(v, 4) for k, v in body.items()},
                      "ratio_waft_over_nla_bake_body_disabled": round(
                          body["waft"] / body["nla_bake_body_disabled"], 3),
                      "ratio_waft_over_nla_bake": round(body["waft"] / body["nla_bake"], 3)}),
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
