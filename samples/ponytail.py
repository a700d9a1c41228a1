"""Sample: a head swinging a ponytail of bone chains past sphere colliders.

Built from nothing with bpy only: an armature with a body bone (``Root``, swaying left-right) and
a ``Head`` bone (turning), four ponytail chains of seven bones hanging from a hair tie at the back
of the head (the Waft setup), sphere collider empties on the head, the shoulders and the upper
back, skinned tube meshes for the hair so a render shows the motion, a camera and a sun.
"""

from __future__ import annotations

import bpy
from mathutils import Matrix, Vector

from _common import (
    add_bone_chain,
    add_camera_and_light,
    armature_in_edit_mode,
    key_bone,
    new_object,
    parent_to_bone,
    set_color,
    setup_workbench,
    sphere_collider,
    tube_mesh,
    uv_sphere_mesh,
)

NAME = "ponytail"
DESCRIPTION = "head swinging a 4-chain ponytail past sphere colliders"
FPS = 24
FRAME_START, FRAME_END = 1, 120
PREROLL = 24  # one second of settling on the first frame's pose before frame 1
SHEET_FRAMES = (1, 16, 31, 46, 61, 76, 91, 106)

CHAINS = 4
BONES_PER_CHAIN = 7
SEGMENT = 0.055  # metres per hair bone
HEAD_CENTER = Vector((0.0, 0.0, 1.60))
HEAD_RADIUS = 0.11
HAIR_TIE = Vector((0.0, 0.13, 1.68))  # back of the head (the character faces -Y)

SKIN = (0.93, 0.76, 0.62, 1.0)
SHIRT = (0.25, 0.42, 0.70, 1.0)
HAIR = (0.45, 0.22, 0.10, 1.0)


def _hair_bone(chain: int, index: int) -> str:
    return f"Hair.{chain}.{index:02d}"


def _build_rig():
    rig, bones = armature_in_edit_mode("Rig")
    root = bones.new("Root")  # the body: hips to chest
    root.head, root.tail = (0.0, 0.0, 0.95), (0.0, 0.0, 1.35)
    head = bones.new("Head")  # pivots at the neck
    head.head, head.tail = (0.0, 0.0, 1.45), (0.0, 0.0, 1.78)
    head.parent = root
    chain_points = []
    for c in range(CHAINS):
        spread = (c - (CHAINS - 1) / 2) * 0.03
        start = HAIR_TIE + Vector((spread, 0.0, 0.0))
        direction = Vector((spread * 2.0, 0.55, -1.0)).normalized()
        points = [start + direction * (SEGMENT * k) for k in range(BONES_PER_CHAIN + 1)]
        add_bone_chain(bones, [_hair_bone(c, k) for k in range(BONES_PER_CHAIN)], points, head)
        chain_points.append(points)
    bpy.ops.object.mode_set(mode="OBJECT")
    return rig, chain_points


def _animate(rig) -> None:
    # Root: body sways left-right (bone-local X is world X for a bone pointing up).
    for frame, x in ((1, 0.0), (25, 0.22), (55, -0.22), (85, 0.22), (110, 0.0), (120, 0.0)):
        key_bone(rig, "Root", "location", frame, (x, 0.0, 0.0))
    # Head turns about its own axis (bone-local Y is world Z) and tilts a little.
    rig.pose.bones["Head"].rotation_mode = "XYZ"
    for frame, turn, tilt in (
        (1, 0.0, 0.0),
        (30, 0.7, 0.12),
        (60, -0.7, -0.12),
        (90, 0.55, 0.1),
        (120, 0.0, 0.0),
    ):
        key_bone(rig, "Head", "rotation_euler", frame, (0.0, turn, tilt))


def _make_waft_setup(rig) -> None:
    rig.waft.enabled = True
    rig.waft.shape_stiffness = 0.05
    rig.waft.damping = 1.5
    rig.waft.radius = 0.015
    for c in range(CHAINS):
        for k in range(BONES_PER_CHAIN):
            rig.pose.bones[_hair_bone(c, k)].waft.simulate = True


def _add_body_meshes(rig, chain_points) -> None:
    head = new_object("HeadMesh", uv_sphere_mesh("HeadMesh", HEAD_RADIUS))
    head.matrix_world = Matrix.Translation(HEAD_CENTER) @ Matrix.Diagonal((1, 1.1, 1.15, 1))
    set_color(head, SKIN)
    parent_to_bone(head, rig, "Head")
    torso = new_object("Torso", uv_sphere_mesh("Torso", 1.0))
    torso.matrix_world = Matrix.Translation((0.0, 0.0, 1.18)) @ Matrix.Diagonal(
        (0.2, 0.12, 0.3, 1)
    )
    set_color(torso, SHIRT)
    parent_to_bone(torso, rig, "Root")
    for c, points in enumerate(chain_points):
        radii = [0.024 * (1.0 - 0.7 * k / BONES_PER_CHAIN) for k in range(len(points))]
        tube = new_object(f"Hair.{c}", tube_mesh(f"Hair.{c}", points, radii))
        set_color(tube, HAIR)
        sides = len(tube.data.vertices) // len(points)
        # Rigid skinning: ring 0 sits on the hair tie (Head), ring k on the tail of bone k-1.
        for ring in range(len(points)):
            group_name = "Head" if ring == 0 else _hair_bone(c, ring - 1)
            group = tube.vertex_groups.get(group_name) or tube.vertex_groups.new(name=group_name)
            group.add(list(range(ring * sides, (ring + 1) * sides)), 1.0, "REPLACE")
        modifier = tube.modifiers.new("Armature", "ARMATURE")
        modifier.object = rig


def _add_colliders(rig) -> None:
    for name, center, radius, bone in (
        ("Collider.Head", HEAD_CENTER + Vector((0.0, 0.01, 0.0)), 0.125, "Head"),
        ("Collider.Shoulder.L", (0.17, 0.02, 1.40), 0.1, "Root"),
        ("Collider.Shoulder.R", (-0.17, 0.02, 1.40), 0.1, "Root"),
        ("Collider.Back", (0.0, 0.04, 1.30), 0.13, "Root"),
    ):
        sphere_collider(name, rig, bone, center=center, radius=radius)


def build_scene():
    """Build the ponytail scene in the current (empty) file and return the scene."""
    scene = bpy.context.scene
    scene.render.fps = FPS
    scene.render.fps_base = 1.0
    scene.frame_start, scene.frame_end = FRAME_START, FRAME_END
    rig, chain_points = _build_rig()
    _animate(rig)
    _make_waft_setup(rig)
    _add_body_meshes(rig, chain_points)
    _add_colliders(rig)
    add_camera_and_light(location=(0.75, 1.45, 1.75), target=(0.0, 0.1, 1.42), lens=50.0)
    setup_workbench()
    scene.frame_set(FRAME_START)
    return scene


