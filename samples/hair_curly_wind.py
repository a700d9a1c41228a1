"""Sample: curly guide strands on a head in a gusty, wandering wind (seed 002).

Built from nothing with bpy: an armature with a body (``Root``) and a ``Head`` bone that nods and
turns, twelve curly guide chains (helices of ten bones) around the crown, sphere colliders on the
head and shoulders, skinned tube meshes so a render shows the curls. The setup uses the
``HAIR_CURLY`` preset (local shape keeps every curl) plus a wind whose direction wanders, whose
gusts run out of step per strand and which pushes only across each strand (tangent response).
"""

from __future__ import annotations

import math

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

NAME = "hair_curly_wind"
DESCRIPTION = "curly guide strands in a gusty, wandering wind"
FPS = 24
FRAME_START, FRAME_END = 1, 96
PREROLL = 24
PRESET = "HAIR_CURLY"

CHAINS, BONES = 12, 10
SEGMENT = 0.03
CURL_RADIUS, CURL_STEP = 0.025, 2 * math.pi / 5  # one turn every five bones
HEAD_CENTER = Vector((0.0, 0.0, 1.60))
HEAD_RADIUS = 0.11
SKIN, SHIRT, HAIR = (0.93, 0.76, 0.62, 1.0), (0.25, 0.42, 0.70, 1.0), (0.55, 0.27, 0.10, 1.0)


def hair_bone(chain: int, index: int) -> str:
    return f"Hair.{chain:02d}.{index:02d}"


def curl_points(chain: int, chains: int, bones: int, segment: float):
    """A helix hanging from the crown, leaning out from the head."""
    angle = 2 * math.pi * chain / chains
    out = Vector((math.cos(angle), math.sin(angle), 0.0))
    root = HEAD_CENTER + (HEAD_RADIUS + 0.012) * (out * 0.75 + Vector((0, 0, 0.66)))
    axis = (out * 0.6 + Vector((0.0, 0.0, -1.0))).normalized()
    side = axis.cross(Vector((0.0, 0.0, 1.0))).normalized()
    up = side.cross(axis)
    points, descent = [root], 0.0
    for k in range(1, bones + 1):
        descent += segment * 0.55
        phase = k * CURL_STEP
        radius = CURL_RADIUS * min(1.0, k / 2)
        offset = radius * (math.cos(phase) - 1.0) * side + radius * math.sin(phase) * up
        points.append(root + axis * descent + offset)
    return points


def build_head_rig(*, chains=CHAINS, bones=BONES, segment=SEGMENT, points_of=curl_points):
    rig, edit = armature_in_edit_mode("Rig")
    root = edit.new("Root")
    root.head, root.tail = (0.0, 0.0, 0.95), (0.0, 0.0, 1.35)
    head = edit.new("Head")
    head.head, head.tail = (0.0, 0.0, 1.45), (0.0, 0.0, 1.78)
    head.parent = root
    all_points = []
    for c in range(chains):
        points = points_of(c, chains, bones, segment)
        add_bone_chain(edit, [hair_bone(c, k) for k in range(bones)], points, head)
        all_points.append(points)
    bpy.ops.object.mode_set(mode="OBJECT")
    for c in range(chains):
        for k in range(bones):
            rig.pose.bones[hair_bone(c, k)].waft.simulate = True
    return rig, all_points


def add_body(rig, all_points, *, hair_radius=0.008) -> None:
    head = new_object("HeadMesh", uv_sphere_mesh("HeadMesh", HEAD_RADIUS))
    head.matrix_world = Matrix.Translation(HEAD_CENTER)
    set_color(head, SKIN)
    parent_to_bone(head, rig, "Head")
    torso = new_object("Torso", uv_sphere_mesh("Torso", 1.0))
    torso.matrix_world = Matrix.Translation((0.0, 0.0, 1.18)) @ Matrix.Diagonal((0.2, 0.12, 0.3, 1))
    set_color(torso, SHIRT)
    parent_to_bone(torso, rig, "Root")
    for c, points in enumerate(all_points):
        radii = [hair_radius * (1.0 - 0.6 * k / len(points)) for k in range(len(points))]
        tube = new_object(f"Hair.{c:02d}", tube_mesh(f"Hair.{c:02d}", points, radii, sides=6))
        set_color(tube, HAIR)
        sides = len(tube.data.vertices) // len(points)
        for ring in range(len(points)):
            name = "Head" if ring == 0 else hair_bone(c, ring - 1)
            group = tube.vertex_groups.get(name) or tube.vertex_groups.new(name=name)
            group.add(list(range(ring * sides, (ring + 1) * sides)), 1.0, "REPLACE")
        tube.modifiers.new("Armature", "ARMATURE").object = rig


def add_colliders(rig) -> None:
    for name, center, radius, bone in (
        ("Collider.Head", HEAD_CENTER, HEAD_RADIUS + 0.005, "Head"),
        ("Collider.Shoulder.L", (0.17, 0.0, 1.40), 0.1, "Root"),
        ("Collider.Shoulder.R", (-0.17, 0.0, 1.40), 0.1, "Root"),
    ):
        sphere_collider(name, rig, bone, center=center, radius=radius)


def animate_head(rig) -> None:
    rig.pose.bones["Head"].rotation_mode = "XYZ"
    for frame, turn, nod in ((1, 0.0, 0.0), (30, 0.6, 0.15), (55, -0.5, -0.1), (80, 0.2, 0.0),
                             (96, 0.0, 0.0)):
        key_bone(rig, "Head", "rotation_euler", frame, (nod, turn, 0.0))


def scene_settings(scene) -> None:
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.frame_start, scene.frame_end = FRAME_START, FRAME_END


def build_scene():
    scene = bpy.context.scene
    scene_settings(scene)
    rig, points = build_head_rig()
    animate_head(rig)
    rig.waft.enabled = True
    bpy.context.view_layer.objects.active = rig
    bpy.ops.waft.apply_preset(preset=PRESET)
    rig.waft.radius = 0.008
    rig.waft.wind_direction = (1.0, 0.3, 0.0)
    rig.waft.wind_gust = 0.6
    rig.waft.wind_turbulence = 0.2
    rig.waft.wind_seed = 7
    # The wind picks up over the first second (keyframed: sampled per frame).
    rig.waft.wind_speed = 2.0
    rig.waft.keyframe_insert("wind_speed", frame=FRAME_START)
    rig.waft.wind_speed = 6.0
    rig.waft.keyframe_insert("wind_speed", frame=FRAME_START + 24)
    add_body(rig, points)
    add_colliders(rig)
    add_camera_and_light(location=(0.9, -1.2, 1.75), target=(0.0, 0.0, 1.5), lens=50.0)
    setup_workbench()
    scene.frame_set(FRAME_START)
    return scene
