"""Sample: the Godot humanoid walking, a ragdoll following it with its arms on a 40 % blend.

Imports ``../shared/assets/godot_skel_bone_2025/skel_bone_2025.glb`` (MIT, Fire & TokageItLab;
see that folder's SOURCE.md) and plays its ``hmd-walk`` cycle three times. The walk carries
the root bone forward 1.21 m per cycle and an NLA repeat would snap it back, so the armature
object steps forward by one cycle's travel at each repeat (constant keys): the world motion is
continuous.

Every humanoid bone but the toes becomes a body (hips, spine, chest, upper chest, neck, head,
shoulders, arms, hands, legs, feet: 20 bodies) with the humanoid limits and radii. The hips are
the root, locked to the animation; legs and torso follow with strong motors; the arms have weak
motors and a 40 % local blend toward the animation (60 % physics; seed 004 kept 40–50 %), so
they lag and swing with inertia on top of the walk.
"""

from __future__ import annotations

from pathlib import Path

import bpy
from mathutils import Vector

from _common import add_camera_and_light, missing_asset, setup_workbench

NAME = "ragdoll_walk"
DESCRIPTION = "Godot humanoid walk, ragdoll arms on a 40 % local blend"
ASSET = (Path(__file__).resolve().parents[2] / "shared" / "assets" / "godot_skel_bone_2025"
         / "skel_bone_2025.glb")
ACTION = "hmd-walk"
CYCLES = 3
CYCLE_FRAMES = 24
FPS = 24
ARM_WORDS = ("shoulder", "upper_arm", "lower_arm", "hand")
ARM_BLEND = 0.4
SHEET_FRAMES = (1, 10, 19, 28, 37, 46, 55, 64)


def missing_assets() -> str | None:
    return missing_asset(ASSET)


def _is_arm(name: str) -> bool:
    return any(name.startswith(word) and not name.endswith("equipment") for word in ARM_WORDS)


def _loop_walk(rig) -> int:
    """``CYCLES`` repeats on one NLA track from frame 1; the object steps one cycle's travel
    forward at each repeat. Returns the last frame."""
    ad = rig.animation_data or rig.animation_data_create()
    for track in list(ad.nla_tracks):
        ad.nla_tracks.remove(track)
    action = bpy.data.actions[ACTION]
    ad.action = action
    scene = bpy.context.scene
    scene.frame_set(int(action.frame_range[0]))
    start = rig.pose.bones["root"].head.copy()
    scene.frame_set(int(action.frame_range[1]))
    travel = rig.matrix_world.to_3x3() @ (rig.pose.bones["root"].head - start)
    ad.action = None
    track = ad.nla_tracks.new()
    track.name = "Walk"
    strip = track.strips.new(ACTION, 1, action)
    strip.repeat = CYCLES
    base = rig.location.copy()
    for cycle in range(CYCLES):
        rig.location = base + travel * cycle
        rig.keyframe_insert("location", frame=1 + cycle * CYCLE_FRAMES)
    object_action = ad.action  # the object's steps go on their own track
    for fcurve in _all_fcurves(object_action):
        for key in fcurve.keyframe_points:
            key.interpolation = 'CONSTANT'
    ad.action = None
    steps = ad.nla_tracks.new()
    steps.name = "Steps"
    steps.strips.new("Steps", 1, object_action)
    return int(strip.frame_end)


def _all_fcurves(action):
    if hasattr(action, "fcurves"):  # Blender 4.2
        return list(action.fcurves)
    curves = []
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                curves.extend(bag.fcurves)
    return curves


def import_walker(scene):
    """The walking Godot rig with its humanoid ragdoll (bodies, limits, radii); returns it."""
    bpy.ops.import_scene.gltf(filepath=str(ASSET))
    rig = next(ob for ob in scene.objects if ob.type == "ARMATURE")
    for ob in scene.objects:
        if ob.type == "MESH" and ob.name in ("Icosphere", "ball", "hinge.A", "hinge.B",
                                             "hinge.C", "Sword.L", "Sword.R"):
            ob.hide_render = True
    end = _loop_walk(rig)
    scene.frame_start, scene.frame_end = 1, end
    scene.frame_set(1)
    bpy.context.view_layer.objects.active = rig
    rig.select_set(True)
    bpy.ops.waft.ragdoll_create(source="HUMANOID")
    for name in ("toes_l", "toes_r"):  # too short to matter; 20 bodies remain
        rig.pose.bones[name].waft_ragdoll.body = False
    settings = rig.waft_ragdoll
    settings.root_lock = True
    settings.fall_threshold = 0.0  # never: the walk is unobstructed
    settings.use_ground = True
    settings.ground_height = -0.05  # just under the soles, so the toes never scrape
    settings.iterations = 4
    for pb in rig.pose.bones:
        body = pb.waft_ragdoll
        if not body.body:
            continue
        body.mode = "DRIVEN"
        body.joint_damping = 2.0
        body.motor_damping = 0.7
        if _is_arm(pb.name):
            body.motor_strength = 0.35
            body.blend = ARM_BLEND
        else:
            body.motor_strength = 0.97
    return rig


def build_scene():
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    rig = import_walker(scene)
    mid = rig.matrix_world.translation + Vector((0.0, -1.8, 0.9))
    add_camera_and_light(location=mid + Vector((5.0, -0.6, 0.6)), target=mid, lens=32.0)
    setup_workbench()
    for ob in scene.objects:
        if ob.type == "MESH" and not ob.hide_render:
            ob.color = (0.55, 0.62, 0.75, 1.0)
    scene.frame_set(scene.frame_start)
    return scene


def check(scene, report) -> None:
    """Hips exact (root lock), arms moved by physics but stay near the animation."""
    import numpy as np

    ragdoll = report.systems["ragdoll"]
    rig = next(ob for ob in scene.objects if ob.type == "ARMATURE")
    setup = ragdoll.setups[0]
    if setup.fell_at is not None:
        raise RuntimeError(f"the walker fell at frame {setup.fell_at}")
    track = rig.animation_data.nla_tracks["Waft Ragdoll"]
    frames = range(scene.frame_start, scene.frame_end + 1, 4)

    def heads(names):
        out = []
        for frame in frames:
            scene.frame_set(frame)
            out.append([rig.matrix_world @ rig.pose.bones[n].head for n in names])
        return np.array(out)

    names = ("hips", "hand_l", "hand_r")
    baked = heads(names)
    track.mute = True
    animated = heads(names)
    track.mute = False
    drift = np.linalg.norm(baked - animated, axis=-1).max(axis=0)
    if drift[0] > 0.01:  # the root lock is a stiff constraint among the others
        raise RuntimeError(f"the locked hips moved {drift[0]:.4f} m off the animation")
    if not 0.005 < drift[1:].max() < 0.5:
        raise RuntimeError(f"hands moved {drift[1:]} m from the animation (expected lag)")
