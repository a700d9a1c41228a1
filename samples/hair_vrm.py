"""Sample: the Godette VRM character's spring-bone hair simulated by Waft.

Imports ``../shared/assets/godette_vrm/Godette_vrm_v4.vrm`` (a VRM 0.x model: a glb with the
``VRM`` extension; CC BY 3.0, model SirRichard94, VRM adaptation Lyuma) through a copy renamed
``.glb``. The hair chains and their sphere colliders come from the file's own
``extensions.VRM.secondaryAnimation`` (reference/vrm-springbone.md):

- every ``boneGroups[].bones`` root and its descendants become a Waft chain; each bone is aimed
  at its child (the glTF importer points bones up), and a leaf gets VRM 0.x's virtual 7 cm tail
  along its parent direction;
- ``colliderGroups[].colliders`` (offset in the node's space, radius) become sphere collider
  empties parented to that bone. VRM 0.x offsets are in Unity's left-handed space (x mirrored
  against glTF), converted here; glTF Y-up becomes Blender Z-up.
- ``hitRadius`` becomes the particle radius; ``dragForce`` (a per-frame velocity loss in VRM)
  becomes per-second damping at 24 fps.

One difference to VRM: Waft picks colliders per setup (armature), not per spring group, so the
head colliders also touch the hair buns; the 1 m "ceiling" sphere VRM puts over the fringe
would swallow the buns, so it is left out. The head turns and nods (the file has no animation).
"""

from __future__ import annotations

import json
import math
import shutil
import struct
import tempfile
from pathlib import Path

import bpy
from mathutils import Vector

from _common import (
    add_camera_and_light,
    key_bone,
    missing_asset,
    setup_workbench,
    sphere_collider,
)

NAME = "hair_vrm"
DESCRIPTION = "Godette VRM: spring-bone hair chains and colliders from the VRM extension"
FPS = 24
FRAME_START, FRAME_END = 1, 72
PREROLL = 24
ASSET = (Path(__file__).resolve().parents[2] / "shared" / "assets" / "godette_vrm"
         / "Godette_vrm_v4.vrm")
VIRTUAL_TAIL = 0.07  # metres: VRM 0.x leaf tail
MAX_COLLIDER_RADIUS = 0.5  # larger spheres are VRM "ceilings" (see the module docstring)
HEAD_BONE = "head_Armature"


def missing_assets() -> str | None:
    return missing_asset(ASSET)


def read_vrm_json(path: Path) -> dict:
    """The glTF JSON chunk of a .vrm/.glb (header, then the JSON chunk)."""
    data = path.read_bytes()
    magic, _version, _length = struct.unpack_from("<III", data, 0)
    if magic != 0x46546C67:  # b"glTF"
        raise RuntimeError(f"{path.name} is not a binary glTF")
    chunk_length, chunk_type = struct.unpack_from("<II", data, 12)
    if chunk_type != 0x4E4F534A:  # b"JSON"
        raise RuntimeError(f"{path.name}: first chunk is not JSON")
    return json.loads(data[20:20 + chunk_length])


def spring_data(gltf: dict):
    """(chains as lists of node names, colliders as (node name, offset, radius))."""
    nodes = gltf["nodes"]
    ext = gltf.get("extensions", {})
    chains, colliders = [], []
    if "VRMC_springBone" in ext:  # VRM 1.0
        spring = ext["VRMC_springBone"]
        for s in spring.get("springs", []):
            chains.append([nodes[j["node"]]["name"] for j in s["joints"]])
        for c in spring.get("colliders", []):
            sphere = c["shape"].get("sphere")
            if sphere:
                colliders.append((nodes[c["node"]]["name"], tuple(sphere["offset"]),
                                  sphere["radius"], False))
        return chains, colliders
    secondary = ext["VRM"]["secondaryAnimation"]
    for group in secondary["boneGroups"]:
        for root in group["bones"]:
            chain, node = [], root
            while True:  # VRM 0.x: every descendant; a branch is cut at its first child
                chain.append(nodes[node]["name"])
                children = nodes[node].get("children", [])
                if not children:
                    break
                node = children[0]
            chains.append(chain)
    for group in secondary["colliderGroups"]:
        for c in group["colliders"]:
            o = c["offset"]
            colliders.append((nodes[group["node"]]["name"], (o["x"], o["y"], o["z"]),
                              c["radius"], True))
    return chains, colliders


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


def aim_chains(rig, chains) -> None:
    """Point each chain bone at its child; leaves get the VRM 0.x virtual tail."""
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    edit = rig.data.edit_bones
    for chain in chains:
        for i, name in enumerate(chain):
            bone = edit[name]
            if i + 1 < len(chain):
                tail = edit[chain[i + 1]].head.copy()
            else:
                parent = edit[chain[i - 1]].head if i else bone.parent.head
                tail = bone.head + (bone.head - parent).normalized() * VIRTUAL_TAIL
            if (tail - bone.head).length > 1e-4:
                bone.tail = tail
    bpy.ops.object.mode_set(mode="OBJECT")


def add_colliders(rig, colliders) -> list[str]:
    bpy.context.view_layer.update()
    names = []
    for i, (node, offset, radius, unity) in enumerate(colliders):
        if radius > MAX_COLLIDER_RADIUS:
            continue
        x, y, z = offset
        if unity:  # VRM 0.x: Unity left-handed, x mirrored against glTF
            x = -x
        local = Vector((x, -z, y))  # glTF Y-up -> Blender Z-up (the importer's conversion)
        head = rig.matrix_world @ rig.data.bones[node].head_local
        empty = sphere_collider(f"Collider.{node}.{i}", rig, node, center=head + local,
                                radius=radius)
        names.append(empty.name)
    return names


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
    gltf = read_vrm_json(ASSET)
    chains, colliders = spring_data(gltf)
    rig = import_character()
    aim_chains(rig, chains)
    for chain in chains:
        for name in chain:
            rig.pose.bones[name].waft.simulate = True
    rig.waft.enabled = True
    bpy.context.view_layer.objects.active = rig
    bpy.ops.waft.apply_preset(preset="HAIR_BRAID")
    group = gltf["extensions"]["VRM"]["secondaryAnimation"]["boneGroups"][0]
    rig.waft.radius = group["hitRadius"]
    rig.waft.damping = -math.log(1.0 - group["dragForce"]) * FPS / 10.0
    rig.waft.shape_stiffness = 0.15
    rig.waft.bend_compliance = 0.01
    add_colliders(rig, colliders)
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
    if len(simulated) < 8:
        raise RuntimeError(f"expected the 8 VRM hair chains, got bones {simulated}")
