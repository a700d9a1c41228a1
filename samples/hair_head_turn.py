"""Sample: long straight hair on a head turning sharply (seed 000's head turn).

Built with bpy only: an armature with a body bone and a ``Head`` bone that snaps 80° to one side
in 6 frames (~320°/s), holds, and snaps back; 48 guide chains of 8 bones (40 cm of hair)
growing from the back and crown of a scalp mesh (parented to the head); a head sphere and the
torso (an ellipsoid collider, the shape of its mesh) as colliders; render strands: 20,000
strands interpolated from the guides (barycentric, clumped), 12 points each on the guides'
uniform cubic B-splines, written as a hair Curves object ``HairRig Strands`` with a packed
geometry-nodes bake. The contact sheet shows the strands (Workbench draws hair curves with
their radius).
"""

from __future__ import annotations

import math

import bpy
import numpy as np
from mathutils import Matrix, Vector

from _common import (
    add_camera_and_light,
    armature_in_edit_mode,
    body_collider,
    key_bone,
    new_object,
    parent_to_bone,
    set_color,
    setup_workbench,
    smooth_mesh,
    sphere_collider,
    uv_sphere_mesh,
)

NAME = "hair_head_turn"
DESCRIPTION = "long straight hair (20k render strands from 48 guides) on a sharp head turn"
FPS = 24
FRAME_START, FRAME_END = 1, 48
PREROLL = 48  # two seconds: long hair starting from its groomed pose settles under gravity
SHEET_FRAMES = (1, 8, 12, 16, 22, 30, 36, 44)

HEAD_CENTER = Vector((0.0, 0.0, 1.62))
HEAD_RADIUS = 0.1
SCALP_RADIUS = 0.104
GUIDES = 48
BONES = 8
SEGMENT = 0.05

SKIN = (0.93, 0.76, 0.62, 1.0)
SHIRT = (0.25, 0.42, 0.70, 1.0)
HAIR = (0.30, 0.16, 0.07, 1.0)


def _scalp_points(rings: int = 10, segments: int = 32):
    """Vertices and faces of a scalp: the cap of a sphere down to ~100° from the crown on the
    back (+Y) and ~60° at the front (a hairline)."""
    verts = [(0.0, 0.0, SCALP_RADIUS)]
    for r in range(1, rings + 1):
        for s in range(segments):
            phi = 2.0 * math.pi * s / segments
            back = 0.5 * (1.0 + math.sin(phi))  # 1 at the back of the head, 0 at the face
            theta = math.radians(60.0 + 45.0 * back) * r / rings
            verts.append((SCALP_RADIUS * math.sin(theta) * math.cos(phi),
                          SCALP_RADIUS * math.sin(theta) * math.sin(phi),
                          SCALP_RADIUS * math.cos(theta)))
    faces = [(0, 1 + s, 1 + (s + 1) % segments) for s in range(segments)]
    for r in range(rings - 1):
        a, b = 1 + r * segments, 1 + (r + 1) * segments
        for s in range(segments):
            t = (s + 1) % segments
            faces.append((a + s, b + s, b + t, a + t))
    return verts, faces


def _guide_roots():
    """Guide roots on the scalp: a Fibonacci spiral over the cap (even, deterministic)."""
    roots = []
    golden = math.pi * (3.0 - math.sqrt(5.0))
    for i in range(GUIDES):
        u = (i + 0.5) / GUIDES
        phi = golden * i
        back = 0.5 * (1.0 + math.sin(phi))
        theta = math.radians(60.0 + 45.0 * back) * math.sqrt(u) * 0.95
        roots.append(Vector((math.sin(theta) * math.cos(phi), math.sin(theta) * math.sin(phi),
                             math.cos(theta))))
    return roots


def _build_rig():
    rig, bones = armature_in_edit_mode("HairRig")
    root = bones.new("Root")
    root.head, root.tail = (0.0, 0.0, 0.95), (0.0, 0.0, 1.4)
    head = bones.new("Head")
    head.head, head.tail = (0.0, 0.0, 1.45), (0.0, 0.0, 1.8)
    head.parent = root
    down = Vector((0.0, 0.0, -1.0))
    for g, normal in enumerate(_guide_roots()):
        start = HEAD_CENTER + normal * SCALP_RADIUS
        # Straight hair leaves the scalp along the normal and falls: bend the first bones.
        parent, point = head, start
        for b in range(BONES):
            weight = min(1.0, 0.35 + 0.3 * b)
            direction = (normal * (1.0 - weight) + down * weight).normalized()
            bone = bones.new(f"Guide.{g:02d}.{b}")
            bone.head, bone.tail = point, point + direction * SEGMENT
            bone.parent = parent
            bone.use_connect = b > 0
            parent, point = bone, bone.tail.copy()
    bpy.ops.object.mode_set(mode="OBJECT")
    return rig


def _animate(rig) -> None:
    pb = rig.pose.bones["Head"]
    pb.rotation_mode = "XYZ"
    # Sharp turns: 80° in 6 frames (a quarter second), hold, back, hold.
    for frame, turn in ((1, 0.0), (8, 0.0), (14, 1.4), (26, 1.4), (32, -0.3), (48, -0.3)):
        key_bone(rig, "Head", "rotation_euler", frame, (0.0, turn, 0.0))
    for fcurve in rig.animation_data.action.fcurves if hasattr(
            rig.animation_data.action, "fcurves") else ():
        for key in fcurve.keyframe_points:
            key.interpolation = "SINE"


def _make_waft_setup(rig, scalp) -> None:
    rig.waft.enabled = True
    rig.waft.shape_stiffness = 0.04
    rig.waft.damping = 1.5
    rig.waft.radius = 0.01
    for pb in rig.pose.bones:
        if pb.name.startswith("Guide."):
            pb.waft.simulate = True
    hair = rig.waft_hair
    hair.render_strands = True
    hair.scalp = scalp
    hair.count = 20000
    hair.points = 12
    hair.method = "BARYCENTRIC"
    hair.clump = 0.35
    hair.randomness = 0.04
    hair.root_radius = 0.0012
    hair.tip_radius = 0.0004


def _add_meshes(rig):
    head = new_object("HeadMesh", uv_sphere_mesh("HeadMesh", HEAD_RADIUS))
    head.matrix_world = Matrix.Translation(HEAD_CENTER) @ Matrix.Diagonal((1, 1.05, 1.1, 1))
    set_color(head, SKIN)
    parent_to_bone(head, rig, "Head")
    verts, faces = _scalp_points()
    scalp = new_object("Scalp", smooth_mesh("Scalp", verts, faces))
    scalp.matrix_world = Matrix.Translation(HEAD_CENTER)
    set_color(scalp, HAIR)
    parent_to_bone(scalp, rig, "Head")
    torso = new_object("Torso", uv_sphere_mesh("Torso", 1.0))
    torso.matrix_world = Matrix.Translation((0.0, 0.0, 1.2)) @ Matrix.Diagonal((0.2, 0.12, 0.28, 1))
    set_color(torso, SHIRT)
    parent_to_bone(torso, rig, "Root")
    return scalp


def _add_colliders(rig) -> None:
    sphere_collider("Collider.Head", rig, "Head", center=HEAD_CENTER, radius=0.115)
    # The torso as it is drawn (an ellipsoid), not spheres near it: with a back sphere and two
    # shoulder spheres 5.4 % of the guide particle-frames ended up to 38 mm inside the torso
    # mesh (and the hair hovered 6 cm behind the back where the sphere stuck out); now none.
    body_collider("Collider.Torso", rig, "Root", body=bpy.context.scene.objects["Torso"])


def build_scene():
    """Build the head-turn hair scene in the current (empty) file and return the scene."""
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.frame_start, scene.frame_end = FRAME_START, FRAME_END
    rig = _build_rig()
    _animate(rig)
    scalp = _add_meshes(rig)
    _make_waft_setup(rig, scalp)
    _add_colliders(rig)
    add_camera_and_light(location=(0.95, 1.25, 1.75), target=(0.0, 0.05, 1.45), lens=50.0)
    setup_workbench()
    scene.frame_set(FRAME_START)
    return scene


def check(scene, result) -> None:
    """The bake wrote the render strands: a Curves object whose points move with the head."""
    ob = scene.objects.get("HairRig Strands")
    if ob is None or ob.type != "CURVES":
        raise RuntimeError("the bake wrote no 'HairRig Strands' Curves object")
    ob.color = HAIR  # Workbench object colour
    tips = []
    for frame in (8, 16):
        scene.frame_set(frame)
        data = ob.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        co = np.empty(len(data.points) * 3, dtype=np.float32)
        data.position_data.foreach_get("vector", co)
        tips.append(co.reshape(20000, 12, 3)[:, -1])
    moved = float(np.median(np.linalg.norm(tips[1] - tips[0], axis=1)))
    if not moved > 0.05:
        raise RuntimeError(f"render strand tips moved only {moved:.3f} m in the head turn")
    _check_outside_torso(scene)
    scene.frame_set(FRAME_START)


def _check_outside_torso(scene) -> None:
    """No guide bone tail and no render strand point (roots apart) inside the torso's
    ellipsoid, on any frame: what an animator would see as hair inside the body."""
    rig, torso = scene.objects["HairRig"], scene.objects["Torso"]
    strands = scene.objects["HairRig Strands"]
    tails = [pb for pb in rig.pose.bones if pb.waft.simulate]
    worst = 0.0
    for frame in range(FRAME_START, FRAME_END + 1):
        scene.frame_set(frame)
        world = np.array(rig.matrix_world)
        points = [np.array([tuple(pb.tail) for pb in tails]) @ world[:3, :3].T + world[:3, 3]]
        data = strands.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        co = np.empty(len(data.points) * 3, dtype=np.float32)
        data.position_data.foreach_get("vector", co)
        points.append(co.reshape(20000, 12, 3)[:, 1:].reshape(-1, 3))
        inverse = np.linalg.inv(np.array(torso.matrix_world))  # the unit sphere's space
        for p in points:
            local = p @ inverse[:3, :3].T + inverse[:3, 3]
            worst = max(worst, float((1.0 - np.linalg.norm(local, axis=1)).max()))
    if worst > 0.0:  # depth in the unit sphere's radius, about 0.12-0.28 m
        raise RuntimeError(f"hair inside the torso: {worst:.4f} of its radius deep")
