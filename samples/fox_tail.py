"""Sample: the glTF Fox running, its three-bone tail baked by Waft.

Imports ``../shared/assets/fox_gltf/Fox.glb`` (Khronos glTF sample model; model by PixelMannen,
CC0; rigging and animation by tomkranis, CC BY 4.0; glTF conversion by @AsoboStudio and
@scurest, CC BY 4.0; see that folder's SOURCE.md and LICENSE.md). The asset sits next to the
repository, not inside it; without it this sample is skipped.

The file is in centimetre-like units (bones of 12-24 units), so the rig object is scaled by 0.01
to make the fox about 1.4 m long: Waft simulates in world metres whatever the rig's scale.
"""

from __future__ import annotations

from pathlib import Path

import bpy
from mathutils import Vector

from _common import add_camera_and_light, missing_asset, new_object, setup_workbench

NAME = "fox_tail"
DESCRIPTION = "glTF Fox running, tail chain baked"
ASSET = Path(__file__).resolve().parents[2] / "shared" / "assets" / "fox_gltf" / "Fox.glb"
TAIL_BONES = ("b_Tail01_012", "b_Tail02_013", "b_Tail03_014")
ACTION = "Run"
REPEATS = 4
FPS = 24
PREROLL = 12
RIG_SCALE = 0.01


def missing_assets() -> str | None:
    return missing_asset(ASSET)


def _loop_action(rig, action_name: str, repeats: int) -> int:
    """Play ``action_name`` ``repeats`` times from frame 1 on one NLA track; return last frame."""
    ad = rig.animation_data or rig.animation_data_create()
    for track in list(ad.nla_tracks):
        ad.nla_tracks.remove(track)
    ad.action = None
    action = bpy.data.actions[action_name]
    track = ad.nla_tracks.new()
    track.name = f"Fox {action_name}"
    strip = track.strips.new(action_name, 1, action)
    strip.repeat = repeats
    return int(strip.frame_end)


def _frame_camera(objects) -> None:
    corners = [ob.matrix_world @ Vector(c) for ob in objects for c in ob.bound_box]
    lo = Vector(min(c[i] for c in corners) for i in range(3))
    hi = Vector(max(c[i] for c in corners) for i in range(3))
    center, size = (lo + hi) / 2, max((hi - lo).length, 1e-3)
    add_camera_and_light(
        location=center + Vector((1.2, -0.6, 0.45)) * size * 1.35, target=center, lens=50.0
    )


def build_scene():
    """Import the fox, loop its run, mark the tail as a Waft chain; return the scene."""
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    bpy.ops.import_scene.gltf(filepath=str(ASSET))
    rig = next(ob for ob in scene.objects if ob.type == "ARMATURE")
    rig.scale = (RIG_SCALE,) * 3
    scene.frame_start, scene.frame_end = 1, _loop_action(rig, ACTION, REPEATS)

    rig.waft.enabled = True
    rig.waft.shape_stiffness = 0.15
    rig.waft.damping = 2.0
    rig.waft.radius = 0.03
    for name in TAIL_BONES:
        rig.pose.bones[name].waft.simulate = True

    # A hip collider keeps the swinging tail out of the hind legs.
    bpy.context.view_layer.update()
    hip = rig.pose.bones["b_Hip_01"]
    collider = new_object("Collider.Hips", None)
    collider.empty_display_type = "SPHERE"
    collider.empty_display_size = 12.0  # rig units: 0.12 m once scaled with the rig
    collider.parent = rig
    collider.parent_type = "BONE"
    collider.parent_bone = hip.name
    collider.matrix_world = rig.matrix_world @ hip.matrix.copy()
    collider.matrix_world.translation = rig.matrix_world @ hip.head
    collider.waft_collider.enabled = True

    meshes = [ob for ob in scene.objects if ob.type == "MESH" and ob.parent == rig]
    for ob in meshes:
        ob.color = (0.85, 0.45, 0.15, 1.0)
    for ob in scene.objects:
        if ob.type == "MESH" and ob not in meshes:
            ob.hide_render = True  # helper meshes the importer adds (bone shapes)
    _frame_camera(meshes)
    setup_workbench()
    scene.frame_set(scene.frame_start)
    return scene
