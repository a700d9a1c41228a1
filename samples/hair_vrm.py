"""Sample: the Godette VRM character's spring bones baked by the VRM Spring Bone solver.

Imports ``../shared/assets/godette_vrm/Godette_vrm_v4.vrm`` (a VRM 0.x model: a glb with the
``VRM`` extension; CC BY 3.0, model SirRichard94, VRM adaptation Lyuma) through a copy renamed
``.glb`` with Blender's glTF importer, then runs *Import VRM Spring Bones*
(``waft.import_vrm_springs``) on it as a user would: the file's ``secondaryAnimation`` becomes
eight chains on the VRM Spring Bone solver with the file's stiffness, drag and hit radius, its
sphere colliders become Waft colliders on the head and neck bones, and each chain collides with
its own collider groups (the buns with none, the fringe with the head and VRM's 1 m "ceiling"
sphere). The head turns and nods (the file has no animation); the bake moves the hair as a VRM
runtime would.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import bpy

from _common import add_camera_and_light, key_bone, missing_asset, setup_workbench

NAME = "hair_vrm"
DESCRIPTION = "Godette VRM: the file's spring bones and colliders on the VRM Spring Bone solver"
FPS = 24
FRAME_START, FRAME_END = 1, 72
ASSET = (Path(__file__).resolve().parents[2] / "shared" / "assets" / "godette_vrm"
         / "Godette_vrm_v4.vrm")
HEAD_BONE = "head_Armature"
CHAINS = 8  # the file's spring-bone chains


def missing_assets() -> str | None:
    return missing_asset(ASSET)


def import_character():
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "godette.glb"
        shutil.copyfile(ASSET, copy)
        bpy.ops.import_scene.gltf(filepath=str(copy))
    rig = next(ob for ob in bpy.context.scene.objects if ob.type == "ARMATURE")
    # The glTF sample ships an icosphere helper at the origin: not part of the character.
    for ob in list(bpy.context.scene.objects):
        if ob.type == "MESH" and ob.parent is None:
            bpy.data.objects.remove(ob)
    return rig


def animate(rig) -> None:
    pb = rig.pose.bones[HEAD_BONE]
    pb.rotation_mode = "XYZ"
    # The head bone points up: local Y is the turn axis, local X nods.
    for frame, turn, nod in ((1, 0.0, 0.0), (18, 0.7, 0.1), (36, -0.7, -0.15), (54, 0.4, 0.1),
                             (72, 0.0, 0.0)):
        key_bone(rig, HEAD_BONE, "rotation_euler", frame, (nod, turn, 0.0))


def build_scene():
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.frame_start, scene.frame_end = FRAME_START, FRAME_END
    rig = import_character()
    bpy.context.view_layer.objects.active = rig
    result = bpy.ops.waft.import_vrm_springs(filepath=str(ASSET))
    if result != {"FINISHED"}:
        raise RuntimeError(f"Import VRM Spring Bones returned {result}")
    animate(rig)
    add_camera_and_light(location=(0.9, 1.6, 1.35), target=(0.0, 0.0, 1.15), lens=45.0)
    setup_workbench()
    shading = scene.display.shading
    shading.color_type = "TEXTURE"
    scene.frame_set(FRAME_START)
    return scene


def check(scene, result) -> None:
    """Every VRM chain was simulated: the hair moves against the head's own motion."""
    rig = next(ob for ob in scene.objects if ob.type == "ARMATURE")
    simulated = [pb.name for pb in rig.pose.bones if pb.waft.simulate]
    if rig.waft.solver != "VRM" or len(result.chain_positions) != CHAINS:
        raise RuntimeError(f"expected the {CHAINS} VRM chains on the VRM Spring Bone solver, got "
                           f"{sorted(result.chain_positions)} ({rig.waft.solver})")
    if not simulated:
        raise RuntimeError("no bone is simulated")
