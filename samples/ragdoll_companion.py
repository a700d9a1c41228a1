"""Sample: a small companion ragdoll hanging on the walking character's back (seed 004's BD-1).

The walker is ``ragdoll_walk``'s (Godot humanoid, 20 bodies, arms on a 40 % blend). The
companion is a 5-body armature (base, torso, head, two arms) parented to the walker's
``upper_chest`` bone and placed on its back. Its ragdoll names the walker as its carrier with
carrier bone ``upper_chest``: its base (root, kinematic: the clamp on the back) follows the
carrier's SIMULATED upper chest in the same frame, so the pair is solved carrier first. The rest
is free (no motors, no blend, no joint limits), as seed 004 set up BD-1, with a distance limit to
the animation target that shrinks as the target moves faster (0.12 m at rest, locked at 3 m/s).
"""

from __future__ import annotations

import math

import bpy
from mathutils import Matrix, Vector
from ragdoll_walk import ASSET, FPS, import_walker

from _common import (
    add_camera_and_light,
    armature_from_bones,
    missing_asset,
    new_object,
    parent_to_bone,
    setup_workbench,
    tube_mesh,
    uv_sphere_mesh,
)

NAME = "ragdoll_companion"
DESCRIPTION = "Small companion ragdoll on the walker's back, solved after its carrier"
CARRIER_BONE = "upper_chest"
SHEET_FRAMES = (1, 10, 19, 28, 37, 46, 55, 64)
# name, head, tail, parent: companion bones in its own (object) space, metres, +Y = backward.
BONES = (
    ("base", (0.0, 0.0, 0.0), (0.0, 0.06, 0.0), None),
    ("torso", (0.0, 0.06, 0.0), (0.0, 0.08, 0.16), "base"),
    ("head", (0.0, 0.08, 0.16), (0.0, 0.10, 0.26), "torso"),
    ("arm.L", (0.07, 0.07, 0.10), (0.16, 0.10, 0.0), "torso"),
    ("arm.R", (-0.07, 0.07, 0.10), (-0.16, 0.10, 0.0), "torso"),
)
RADII = {"base": 0.04, "torso": 0.05, "head": 0.05, "arm.L": 0.02, "arm.R": 0.02}


def missing_assets() -> str | None:
    return missing_asset(ASSET)


def _companion_armature(scene, walker):
    ob = armature_from_bones("Companion", BONES)
    # On the walker's back: behind the upper chest (the walker faces -Y), facing away.
    scene.frame_set(scene.frame_start)
    chest = walker.matrix_world @ walker.pose.bones[CARRIER_BONE].head
    ob.matrix_world = Matrix.Translation(chest + Vector((0.0, 0.13, 0.02)))
    parent_to_bone(ob, walker, CARRIER_BONE)
    return ob


def _companion_meshes(companion) -> None:
    bpy.context.view_layer.update()
    for name, head, tail, _ in BONES:
        world_head = companion.matrix_world @ Vector(head)
        world_tail = companion.matrix_world @ Vector(tail)
        radius = RADII[name]
        if name == "head":
            mesh = uv_sphere_mesh(f"Companion {name}", radius * 1.3)
            ob = new_object(f"Companion.{name}", mesh)
            ob.matrix_world = Matrix.Translation((world_head + world_tail) / 2)
        else:
            mesh = tube_mesh(f"Companion {name}",
                             [(0.0, 0.0, 0.0), tuple(world_tail - world_head)],
                             [radius, radius * 0.8])
            ob = new_object(f"Companion.{name}", mesh)
            ob.matrix_world = Matrix.Translation(world_head)
        ob.color = (0.95, 0.6, 0.2, 1.0)
        parent_to_bone(ob, companion, name)


def build_scene():
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    walker = import_walker(scene)
    companion = _companion_armature(scene, walker)
    _companion_meshes(companion)
    for pb in companion.pose.bones:
        body = pb.waft_ragdoll
        body.body = True
        body.radius = RADII[pb.name]
        body.mode = "FREE"
        body.swing_limit = (math.pi, math.pi)  # no joint limits (seed 004's BD-1)
        body.twist_limit = (-math.pi, math.pi)
        body.joint_damping = 3.0
        body.friction = 0.2
    companion.pose.bones["base"].waft_ragdoll.mode = "KINEMATIC"  # the clamp on the back
    head = companion.pose.bones["head"].waft_ragdoll
    head.distance_limit = 0.12
    head.distance_limit_speed = 3.0
    settings = companion.waft_ragdoll
    settings.enabled = True
    settings.root_lock = True
    settings.use_ground = False
    settings.carrier = walker
    settings.carrier_bone = CARRIER_BONE
    mid = walker.matrix_world.translation + Vector((0.0, -1.8, 1.0))
    add_camera_and_light(location=mid + Vector((4.6, 1.4, 0.8)), target=mid, lens=32.0)
    setup_workbench()
    for ob in scene.objects:
        if ob.type == "MESH" and not ob.hide_render and not ob.name.startswith("Companion"):
            ob.color = (0.55, 0.62, 0.75, 1.0)
    scene.frame_set(scene.frame_start)
    return scene


def check(scene, report) -> None:
    """The companion's base stays clamped to the walker's simulated upper chest, its head moves."""
    import numpy as np

    walker = scene.objects["Rig"]
    companion = scene.objects["Companion"]
    if [s.name for s in report.systems["ragdoll"].setups] != ["Companion", "Rig"]:
        raise RuntimeError("both ragdolls must bake together")
    offsets, heads = [], []
    for frame in range(scene.frame_start, scene.frame_end + 1, 3):
        scene.frame_set(frame)
        chest = walker.matrix_world @ walker.pose.bones[CARRIER_BONE].matrix
        base = companion.matrix_world @ companion.pose.bones["base"].matrix
        offsets.append(np.array(chest.inverted() @ base))
        heads.append(np.array(companion.matrix_world @ companion.pose.bones["head"].head))
    offsets = np.array(offsets)
    drift = np.abs(offsets - offsets[0]).max()
    if drift > 2e-3:
        raise RuntimeError(f"the companion's base slid {drift:.4f} on its carrier")
    if np.ptp(np.array(heads), axis=0).max() < 0.05:
        raise RuntimeError("the companion's head did not move")
