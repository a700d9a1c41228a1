"""Sample: a generated Rigify human goes limp and crumples to the floor beside a low box.

The rig is generated here from Blender's own human metarig (Rigify ships with Blender), as an
animator gets it: ORG, MCH, control and DEF bones, the DEF bones following the others through
Copy Transforms and Stretch To. *Create Waft Ragdoll › Humanoid* picks the DEF skeleton (31
bodies: spine, B-bone limb segments, hands, feet, toes; each limb bone's second segment welded
to its first, so 23 rigid bodies), joins it into one tree through the ORG bones (DEF-thigh.L
hangs from ORG-spine, so from the DEF-spine body), and turns the DEF bones' constraints off for
the result. Capsules on the DEF bones show what the mesh would follow.
"""

from __future__ import annotations

import bpy
from mathutils import Matrix, Vector

from _common import (
    add_camera_and_light,
    new_object,
    parent_to_bone,
    set_color,
    setup_workbench,
    tube_mesh,
)

NAME = "ragdoll_rigify"
DESCRIPTION = "Generated Rigify human, limp: crumples to the floor beside a box"
FPS = 24
FRAMES = 144
SHEET_FRAMES = (1, 8, 14, 20, 28, 60, 104, 144)
BOX_TOP = 0.45
PLAYBACK_SLACK = 0.04  # m, see check()


def _rigify_human(scene):
    if "rigify" not in bpy.context.preferences.addons:
        bpy.ops.preferences.addon_enable(module="rigify")
    bpy.ops.object.armature_human_metarig_add()
    metarig = bpy.context.view_layer.objects.active
    bpy.ops.pose.rigify_generate()
    rig = next(ob for ob in scene.objects if ob.type == "ARMATURE" and ob is not metarig
               and ob.data.bones.get("DEF-spine") is not None)
    bpy.data.objects.remove(metarig)
    rig.data.display_type = "STICK"
    rig.show_in_front = False
    rig.hide_render = True
    bpy.context.view_layer.objects.active = rig
    rig.select_set(True)
    return rig


def _capsules(rig) -> None:
    for pb in rig.pose.bones:
        if not pb.waft_ragdoll.body:
            continue
        bone = pb.bone
        head, tail = rig.matrix_world @ bone.head_local, rig.matrix_world @ bone.tail_local
        radius = pb.waft_ragdoll.radius
        mesh = tube_mesh(f"Capsule {pb.name}", [(0.0, 0.0, 0.0), tuple(tail - head)],
                         [radius, radius * 0.9], sides=12)
        ob = new_object(f"Capsule.{pb.name}", mesh)
        ob.matrix_world = Matrix.Translation(head)  # parent_to_bone keeps matrix_world
        set_color(ob, (0.3, 0.55, 0.85, 1.0))
        parent_to_bone(ob, rig, pb.name)


def build_scene():
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.frame_start, scene.frame_end = 1, FRAMES
    rig = _rigify_human(scene)
    # In front of a low box, lifted so the feet capsules start clear of the floor.
    rig.location = (0.0, 0.25, 0.04)
    bpy.context.view_layer.update()
    bpy.ops.object.mode_set(mode="POSE")
    bpy.ops.waft.ragdoll_create(source="HUMANOID")
    bpy.ops.object.mode_set(mode="OBJECT")
    for pb in rig.pose.bones:
        if pb.waft_ragdoll.body:
            pb.waft_ragdoll.mode = "FREE"
            pb.waft_ragdoll.joint_damping = 2.0
            pb.waft_ragdoll.friction = 0.5
    settings = rig.waft_ragdoll
    settings.root_lock = False
    settings.use_ground = True
    settings.ground_height = 0.0
    # 31 bodies in long chains: more passes than the default keep the joints tighter (at 8 the
    # body lying on the floor crept 1-15 mm a frame from the joints' and contacts' residual
    # fight). At 12 it crumples, an arm and a leg topple over once more at frames 95-115, and
    # it lies still from frame 125 (6 s are baked: the check wants it at rest at the end).
    settings.iterations = 12
    # A low box behind the knees: a Waft box collider and the cube that shows it.
    box = new_object("Collider.Box", None)
    box.empty_display_type = "CUBE"
    box.location = (0.0, 0.55, BOX_TOP / 2)
    box.scale = (0.6, 0.2, BOX_TOP / 2)
    box.waft_collider.enabled = True
    box.waft_collider.friction = 0.5
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=box.location)
    cube = bpy.context.active_object
    cube.name = "Box"
    cube.scale = box.scale
    set_color(cube, (0.7, 0.7, 0.72, 1.0))
    bpy.ops.mesh.primitive_plane_add(size=6.0, location=(0.0, 0.5, 0.0))
    set_color(bpy.context.active_object, (0.45, 0.47, 0.5, 1.0))
    _capsules(rig)
    target = Vector((0.0, 0.5, 0.6))
    add_camera_and_light(location=target + Vector((4.2, -1.6, 1.2)), target=target, lens=35.0)
    setup_workbench()
    scene.frame_set(1)
    return scene


def check(scene, report) -> None:
    """The DEF skeleton fell (head low) and is at rest at the end; no simulated capsule went
    through the floor, and the played bones stay within PLAYBACK_SLACK of it (rotation keys drop
    the solver's 5 mm joint tolerance joint by joint along the seven-segment spine)."""
    import sys

    import numpy as np

    rig = next(ob for ob in scene.objects if ob.type == "ARMATURE")
    reading = next(m for n, m in sys.modules.items() if n.endswith(".addon.ragdoll.reading"))
    bodies = reading.body_bones(rig)
    if len(bodies) < 25 or any(not pb.name.startswith("DEF-") for pb in bodies):
        raise RuntimeError(f"Create Humanoid took {len(bodies)} bones, not the DEF skeleton")
    frames = report.systems["ragdoll"].body_matrix[rig.name]  # (F, N, 4, 4) at the bone heads
    radius = np.array([pb.waft_ragdoll.radius for pb in bodies])
    length = np.array([pb.bone.length for pb in bodies])
    heads = frames[:, :, :3, 3]
    tails = heads + frames[:, :, :3, 1] * length[:, None]
    sunk = -(np.minimum(heads[..., 2], tails[..., 2]) - radius).min()
    if sunk > 0.01:
        raise RuntimeError(f"a simulated capsule went {sunk:.3f} m through the floor")
    played = []
    for frame in range(1, FRAMES + 1):
        scene.frame_set(frame)
        played.append([tuple(rig.matrix_world @ pb.head) for pb in bodies])
    played = np.array(played)
    off = np.linalg.norm(played - heads, axis=-1).max()
    if off > PLAYBACK_SLACK:
        raise RuntimeError(f"the keys play a bone {off:.3f} m from the simulation")
    if played[-1, [pb.name for pb in bodies].index("DEF-spine.006"), 2] > 0.8:
        raise RuntimeError("the head did not come down")
    moved = np.linalg.norm(played[-1] - played[-4], axis=-1).max()
    if moved > 0.02:
        raise RuntimeError(f"not at rest at the end ({moved:.3f} m in 3 frames)")
