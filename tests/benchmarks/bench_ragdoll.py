"""Ragdoll benchmark in real Blender: Waft's ragdoll core versus Blender's own rigid-body world.

The same 17-body humanoid (tests/blender/ragdoll/ragdoll_rigs.py: hips, spine, chest, neck,
head, arms, hands, legs, feet), 250 frames at 24 fps, 240 Hz substeps, 4 solver iterations,
the hips animated (swinging and turning) and every other body hanging from it through joints
with swing/twist limits, gravity on, no ground. Measured in one process on fresh files:

- Waft: ``addon.bake_api.bake_scene`` of the ragdoll; the core's solve time per frame (the
  report's ``solve_s``) and the end-to-end time (sample + solve + write). Two configurations:
  ``limp`` (hips kinematic, the others FREE: what Bullet does below) and ``driven`` (every
  body DRIVEN by motors toward the animation, root locked: the physical-animation case).
- Bullet: the same bodies as capsule rigid bodies (mass = density × capsule volume, as Waft
  computes it), the hips capsule kinematic and parented to the animated hips bone, one GENERIC
  rigid-body constraint per joint at the child's head with the same angular limits (linear
  axes locked), ``substeps_per_frame = 240 / fps``, ``solver_iterations`` matched, baked
  headless with ``bpy.ops.ptcache.bake(bake=True)`` under a context override holding the
  world's ``point_cache`` (the operator steps every frame itself and fills the cache).

Prints JSON lines; ``ratio_waft_core_over_bullet`` < 1 means Waft's core is faster.

    .venv/bin/python tests/benchmarks/bench_ragdoll.py [--frames 250] [--zip ZIP]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO_ROOT / "tools"), str(REPO_ROOT / "tests" / "blender" / "ragdoll"),
                str(Path(__file__).resolve().parent)]

import blender_env
import build_extension

bpy = blender_env.import_bpy_isolated()  # throwaway user dir first, then bpy

import numpy as np  # noqa: E402
import ragdoll_floor  # noqa: E402
import ragdoll_rigs as rigs  # noqa: E402
from mathutils import Matrix, Vector  # noqa: E402

FPS = 24
SUBSTEP_HZ = 240
ITERATIONS = 4
DENSITY = 985.0
SWING = math.radians(45.0)
TWIST = (math.radians(-30.0), math.radians(30.0))


def animate_hips(ob, frames: int) -> None:
    hips = ob.pose.bones["hips"]
    to_local = ob.data.bones["hips"].matrix_local.to_3x3().inverted()
    for frame in range(1, frames + 1, 2):
        phase = 2.0 * math.pi * frame / 36.0
        travel = Vector((0.25 * math.sin(phase), -0.02 * frame, 0.1 * math.cos(2 * phase)))
        hips.location = to_local @ travel  # pose location is in the bone's rest frame
        rigs.set_rotation(hips, (0.2 * math.sin(phase), 0.3 * math.sin(phase),
                                 0.6 * math.sin(0.5 * phase)))
        hips.keyframe_insert("location", frame=frame)
        hips.keyframe_insert("rotation_quaternion", frame=frame)


def build(frames: int, *, driven: bool):
    """The rig in the current (empty) file; returns (scene, armature)."""
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.frame_start, scene.frame_end = 1, frames
    ob = rigs.humanoid(scene, "Bench")
    ob.waft_ragdoll.use_ground = False
    ob.waft_ragdoll.iterations = ITERATIONS
    ob.waft_ragdoll.substep_rate = SUBSTEP_HZ
    ob.waft_ragdoll.default_density = DENSITY
    for pb in ob.pose.bones:
        body = pb.waft_ragdoll
        body.mode = "DRIVEN" if driven else "FREE"
        body.swing_limit = (SWING, SWING)
        body.twist_limit = TWIST
        body.motor_strength = 0.6
    if not driven:
        ob.pose.bones["hips"].waft_ragdoll.mode = "KINEMATIC"
    animate_hips(ob, frames)
    return scene, ob


def bench_waft(bake_api, frames: int, *, driven: bool) -> dict:
    blender_env.reset_to_empty_file()
    scene, _ = build(frames, driven=driven)
    start = time.perf_counter()
    report = bake_api.bake_scene(scene, substep_rate=SUBSTEP_HZ, iterations=ITERATIONS)
    total = time.perf_counter() - start
    ragdoll = report.systems["ragdoll"]
    return {"core_ms_per_frame": 1e3 * ragdoll.solve_s / frames,
            "end_to_end_ms_per_frame": 1e3 * total / frames,
            "sample_s": ragdoll.sample_s, "solve_s": ragdoll.solve_s, "write_s": ragdoll.write_s,
            "bodies": ragdoll.bones}


def _capsule_mesh(name: str, radius: float, length: float):
    """A box whose bounds Blender's CAPSULE shape reads: radius r, height L + 2r along Z."""
    half = 0.5 * length + radius
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([(x * radius, y * radius, z * half) for x in (-1, 1) for y in (-1, 1)
                      for z in (-1, 1)], [], [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1),
                                              (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)])
    return mesh


def _activate(ob) -> None:
    view_layer = bpy.context.view_layer
    for other in view_layer.objects.selected:
        other.select_set(False)
    view_layer.objects.active = ob
    ob.select_set(True)


def build_bullet(frames: int):
    """Bullet rigid bodies and GENERIC constraints for the same bodies; returns the scene."""
    blender_env.reset_to_empty_file()
    scene, rig = build(frames, driven=False)
    with bpy.context.temp_override(scene=scene):
        bpy.ops.rigidbody.world_add()
    world = scene.rigidbody_world
    world.substeps_per_frame = SUBSTEP_HZ // FPS
    world.solver_iterations = ITERATIONS
    world.point_cache.frame_start, world.point_cache.frame_end = 1, frames
    # Bodies and joints where the bones are on the first frame (only the hips are animated,
    # so every joint starts at its rest angle and the limits mean what Waft's do).
    scene.frame_set(1)
    bodies = {}
    for pb in rig.pose.bones:
        bone = pb.bone
        radius, length = pb.waft_ragdoll.radius, bone.length
        capsule = bpy.data.objects.new(f"RB.{pb.name}", _capsule_mesh(pb.name, radius, length))
        scene.collection.objects.link(capsule)
        # Capsule axis = local Z = the bone's Y; centre at the middle of the bone.
        frame = rig.matrix_world @ pb.matrix
        to_z = Matrix(((1, 0, 0, 0), (0, 0, 1, 0), (0, -1, 0, 0), (0, 0, 0, 1)))
        capsule.matrix_world = frame @ Matrix.Translation((0.0, 0.5 * length, 0.0)) @ to_z
        _activate(capsule)
        bpy.ops.rigidbody.object_add(type='ACTIVE')
        body = capsule.rigid_body
        body.collision_shape = 'CAPSULE'
        volume = math.pi * radius * radius * length + 4.0 / 3.0 * math.pi * radius**3
        body.mass = DENSITY * volume
        body.friction = 0.5
        if pb.name == "hips":
            body.kinematic = True  # animated: follows the hips bone
            world_matrix = capsule.matrix_world.copy()
            capsule.parent = rig
            capsule.parent_type = 'BONE'
            capsule.parent_bone = "hips"
            bpy.context.view_layer.update()
            capsule.matrix_world = world_matrix
        bodies[pb.name] = capsule
    for pb in rig.pose.bones:
        if pb.parent is None:
            continue
        joint = bpy.data.objects.new(f"Joint.{pb.name}", None)
        scene.collection.objects.link(joint)
        joint.matrix_world = rig.matrix_world @ pb.matrix  # the child's frame at its head
        _activate(joint)
        bpy.ops.rigidbody.constraint_add(type='GENERIC')
        c = joint.rigid_body_constraint
        c.object1, c.object2 = bodies[pb.parent.name], bodies[pb.name]
        c.disable_collisions = True
        for axis in "xyz":
            setattr(c, f"use_limit_lin_{axis}", True)
            setattr(c, f"limit_lin_{axis}_lower", 0.0)
            setattr(c, f"limit_lin_{axis}_upper", 0.0)
            setattr(c, f"use_limit_ang_{axis}", True)
        c.limit_ang_x_lower, c.limit_ang_x_upper = -SWING, SWING
        c.limit_ang_z_lower, c.limit_ang_z_upper = -SWING, SWING
        c.limit_ang_y_lower, c.limit_ang_y_upper = TWIST
    return scene, bodies


def bench_bullet(frames: int) -> dict:
    scene, bodies = build_bullet(frames)
    cache = scene.rigidbody_world.point_cache
    start = time.perf_counter()
    with bpy.context.temp_override(scene=scene, point_cache=cache):
        bpy.ops.ptcache.bake(bake=True)
    seconds = time.perf_counter() - start
    if not cache.is_baked:
        raise RuntimeError("the rigid-body cache did not bake")
    # The same frames stepped without physics: what Blender's frame loop costs by itself.
    scene.rigidbody_world.enabled = False
    start = time.perf_counter()
    for frame in range(1, frames + 1):
        scene.frame_set(frame)
    baseline = time.perf_counter() - start
    scene.rigidbody_world.enabled = True
    scene.frame_set(frames)
    hand = np.array(bodies["hand.L"].matrix_world.translation)
    return {"bake_ms_per_frame": 1e3 * seconds / frames,
            "frame_loop_ms_per_frame": 1e3 * baseline / frames,
            "hand_l_at_end": hand.round(3).tolist(), "bodies": len(bodies)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=250)
    parser.add_argument("--zip", type=Path, default=None)
    args = parser.parse_args(argv)
    zip_path = args.zip or build_extension.build(REPO_ROOT, Path(tempfile.mkdtemp()))
    module_name, _ = blender_env.install_extension(zip_path)
    bake_api = blender_env.bake_api(module_name)
    bullet = bench_bullet(args.frames)
    common = {"frames": args.frames, "fps": FPS, "substep_hz": SUBSTEP_HZ,
              "iterations": ITERATIONS, "bodies": bullet["bodies"]}
    print(json.dumps({"bench": "ragdoll_bullet", **common,
                      "bullet_bake_ms_per_frame": round(bullet["bake_ms_per_frame"], 3),
                      "frame_loop_ms_per_frame": round(bullet["frame_loop_ms_per_frame"], 3),
                      "hand_l_at_end": bullet["hand_l_at_end"],
                      "baked_via": "bpy.ops.ptcache.bake(bake=True), context override "
                                   "point_cache=scene.rigidbody_world.point_cache"}))
    for config, driven in (("limp", False), ("driven", True)):
        waft = bench_waft(bake_api, args.frames, driven=driven)
        print(json.dumps({
            "bench": f"ragdoll_waft_{config}", **common,
            "waft_core_ms_per_frame": round(waft["core_ms_per_frame"], 3),
            "waft_end_to_end_ms_per_frame": round(waft["end_to_end_ms_per_frame"], 3),
            "bullet_bake_ms_per_frame": round(bullet["bake_ms_per_frame"], 3),
            "ratio_waft_core_over_bullet": round(
                waft["core_ms_per_frame"] / bullet["bake_ms_per_frame"], 3),
            "ratio_waft_end_to_end_over_bullet": round(
                waft["end_to_end_ms_per_frame"] / bullet["bake_ms_per_frame"], 3),
        }))
    # The NumPy floor (ragdoll_floor.py): the same tree's ball joints alone, the same substeps
    # and iterations, in the fewest array operations we know: a lower bound for a NumPy
    # position-based solver of this rig at these settings, whatever else it solves.
    names = [bone[0] for bone in rigs.HUMANOID]
    heads, tails = (np.array([bone[k] for bone in rigs.HUMANOID]) for k in (1, 2))
    floor = ragdoll_floor.floor(
        heads, tails, np.array([names.index(bone[3]) if bone[3] else -1
                                for bone in rigs.HUMANOID]),
        substep_hz=SUBSTEP_HZ, fps=FPS, iterations=ITERATIONS, frames=args.frames)
    print(json.dumps({
        "bench": "ragdoll_numpy_floor", **common,
        "what": "ball joints alone (no limits, motors, contacts), one Jacobi batch per iteration",
        "floor_ms_per_frame": round(floor["ms_per_frame"], 3),
        "calls_per_substep": round(floor["calls_per_substep"], 1),
        "us_per_call": round(floor["us_per_call"], 3),
        "widest_joint_gap_mm": round(1e3 * floor["widest_joint_gap_m"], 2),
        "bullet_bake_ms_per_frame": round(bullet["bake_ms_per_frame"], 3),
        "ratio_floor_over_bullet": round(floor["ms_per_frame"] / bullet["bake_ms_per_frame"], 3),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
