"""Helpers shared by the cloth samples (bpy only): the humanoid with in-place cycles moved by
its object, ring/grid cages, render meshes skinned to the cloth bones, collider empties.

The humanoid is ``../shared/assets/godot_skel_bone_2025/skel_bone_2025.glb`` (the "skel bone"
character of the Godot demo projects, see that folder's SOURCE.md and LICENSE): 75 bones,
31 actions at 24 fps, hips 0.79 m above the floor, walking towards -Y with root motion on the
``root`` bone.
"""

from __future__ import annotations

import math
from pathlib import Path

import bpy
import numpy as np
from mathutils import Matrix, Vector

from _common import (
    add_camera_and_light,
    missing_asset,
    new_object,
    set_color,
    setup_workbench,
    smooth_mesh,
)

HUMANOID = (Path(__file__).resolve().parents[2] / "shared" / "assets" / "godot_skel_bone_2025"
            / "skel_bone_2025.glb")
FPS = 24


def missing_humanoid() -> str | None:
    return missing_asset(HUMANOID)


def _action_fcurves(action):
    if hasattr(action, "fcurves") and not hasattr(action, "layers"):
        return action.fcurves
    return action.layers[0].strips[0].channelbags[0].fcurves


def _root_travel(action) -> float:
    """Distance the ``root`` bone travels over one cycle (its root motion), metres."""
    curves = [fc for fc in _action_fcurves(action)
              if fc.data_path == 'pose.bones["root"].location']
    start, end = action.frame_range
    travel = [fc.evaluate(end) - fc.evaluate(start) for fc in curves]
    return float(np.linalg.norm(travel)) if travel else 0.0


def _strip_root_motion(action) -> None:
    fcurves = _action_fcurves(action)
    for fc in [fc for fc in fcurves if fc.data_path == 'pose.bones["root"].location']:
        fcurves.remove(fc)


def import_humanoid(scene, segments) -> tuple:
    """Import the humanoid and play ``segments`` [(action, repeats), ...] back to back.

    Root motion is taken out of the cycles (they repeat in place) and put on the armature
    object instead, keyed linearly towards -Y at each cycle's own speed, so repeats and
    transitions move on without jumping back. Returns (rig, last frame)."""
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    bpy.ops.import_scene.gltf(filepath=str(HUMANOID))
    rig = next(ob for ob in scene.objects if ob.type == "ARMATURE")
    ad = rig.animation_data or rig.animation_data_create()
    for track in list(ad.nla_tracks):
        ad.nla_tracks.remove(track)
    ad.action = None
    frame, y = 1, 0.0
    rig.location = (0.0, 0.0, 0.0)
    rig.keyframe_insert("location", frame=frame)
    previous = None
    for name, repeats in segments:
        action = bpy.data.actions[name]
        travel = _root_travel(action)
        _strip_root_motion(action)
        track = ad.nla_tracks.new()
        track.name = name
        strip = track.strips.new(name, frame, action)
        strip.repeat = repeats
        strip.extrapolation = "HOLD_FORWARD"
        if previous is not None:
            strip.blend_in = 3
        y -= travel * repeats
        frame = int(round(strip.frame_end))
        rig.location = (0.0, y, 0.0)
        rig.keyframe_insert("location", frame=frame)
        previous = strip
    for fc in _action_fcurves(ad.action):
        for key in fc.keyframe_points:
            key.interpolation = "LINEAR"
    ad.action_extrapolation = "HOLD"
    return rig, frame


def style_humanoid(scene, rig, color=(0.85, 0.82, 0.75, 1.0)) -> list:
    """Colour the character's meshes; hide the helper meshes; return the visible ones."""
    visible = []
    for ob in scene.objects:
        if ob.type != "MESH":
            continue
        if ob.name == "skel":
            set_color(ob, color)
            visible.append(ob)
        elif ob.parent is rig and ob.name.startswith("Sword"):
            ob.hide_render = ob.hide_viewport = True
        elif ob.parent is not rig or ob.name.startswith(("ball", "hinge")):
            ob.hide_render = True
    return visible


def ring_cage(name: str, *, center, rows: int, columns: int, top: float, spacing: float,
              radius_top: float, radius_bottom: float, depth: float = 1.0,
              arc: float = 2 * math.pi, start_angle: float = 0.0):
    """A (possibly open) ring of quads: rows from ``top`` down by ``spacing``; the radius grows
    linearly; ``depth`` scales the Y radius (an elliptic waist). ``arc`` < 2π leaves it open
    (a jacket); returns (object, vertices as (rows, columns, 3))."""
    closed = arc >= 2 * math.pi - 1e-9
    count = columns
    step = arc / (columns if closed else columns - 1)
    verts = np.empty((rows, count, 3))
    for r in range(rows):
        radius = radius_top + (radius_bottom - radius_top) * r / (rows - 1)
        for c in range(count):
            a = start_angle + c * step
            verts[r, c] = (center[0] + radius * math.sin(a), center[1] + depth * radius
                           * math.cos(a), top - r * spacing)
    faces = []
    span = count if closed else count - 1
    for r in range(rows - 1):
        for c in range(span):
            d = (c + 1) % count
            faces.append((r * count + c, r * count + d, (r + 1) * count + d,
                          (r + 1) * count + c))
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(v) for v in verts.reshape(-1, 3)], [], faces)
    mesh.update()
    ob = new_object(name, mesh)
    return ob, verts


def skin_cage(cage, rig, bone: str, pinned_rows: int, columns: int) -> None:
    """The cage follows ``bone`` rigidly (its reference); its first rows are pinned."""
    n = len(cage.data.vertices)
    cage.vertex_groups.new(name=bone).add(list(range(n)), 1.0, "REPLACE")
    cage.vertex_groups.new(name="Pin").add(list(range(pinned_rows * columns)), 1.0, "REPLACE")
    modifier = cage.modifiers.new("Armature", "ARMATURE")
    modifier.object = rig
    cage.parent = rig
    cage.matrix_parent_inverse = rig.matrix_world.inverted()
    cage.hide_render = True
    cage.display_type = "WIRE"


def add_cloth_setup(cage, rig, **kwargs) -> None:
    view_layer = bpy.context.view_layer
    for ob in view_layer.objects:
        ob.select_set(False)
    rig.select_set(True)
    cage.select_set(True)
    view_layer.objects.active = cage
    result = bpy.ops.waft.cloth_add(**kwargs)
    if result != {"FINISHED"}:
        raise RuntimeError(f"waft.cloth_add returned {result}")


def grid_surface(name: str, verts: np.ndarray, *, closed: bool, subdivide: int = 3):
    """A smooth render mesh through the cage's (rows, columns, 3) vertices, ``subdivide``
    times finer (bilinear), with its (row, column) coordinates in cage units."""
    rows, columns = verts.shape[:2]
    span = columns if closed else columns - 1
    fr = np.linspace(0.0, rows - 1, (rows - 1) * subdivide + 1)
    fc = np.linspace(0.0, span, span * subdivide + (0 if closed else 1), endpoint=not closed)
    pts, coords = [], []
    for v in fr:
        r0 = min(int(v), rows - 2)
        tv = v - r0
        for u in fc:
            c0 = int(math.floor(u)) % columns
            c1 = (c0 + 1) % columns if closed else min(c0 + 1, columns - 1)
            tu = u - math.floor(u)
            top = (1 - tu) * verts[r0, c0] + tu * verts[r0, c1]
            bottom = (1 - tu) * verts[r0 + 1, c0] + tu * verts[r0 + 1, c1]
            pts.append(tuple((1 - tv) * top + tv * bottom))
            coords.append((v, u))
    n_u = len(fc)
    faces = []
    for i in range(len(fr) - 1):
        for j in range(n_u if closed else n_u - 1):
            k = (j + 1) % n_u
            faces.append((i * n_u + j, i * n_u + k, (i + 1) * n_u + k, (i + 1) * n_u + j))
    mesh = smooth_mesh(name, pts, faces)
    mesh.polygons.foreach_set("use_smooth", [True] * len(mesh.polygons))
    ob = new_object(name, mesh)
    return ob, np.array(coords)


def skin_to_cloth_bones(ob, rig, cage, coords: np.ndarray, columns: int, *, closed: bool,
                        solidify: float = 0.006) -> None:
    """Weight a render mesh to the cloth bones by its (row, column) cage coordinates: linear
    between the two nearest bone columns, the bone of the cage row it lies in."""
    by_cell = {}
    for item in cage.waft_cloth.bones:
        by_cell[divmod(item.vertex, columns)] = item.bone
    bone_columns = sorted({c for _, c in by_cell})
    bone_rows = sorted({r for r, _ in by_cell})
    groups = {name: ob.vertex_groups.new(name=name) for name in by_cell.values()}
    for index, (v, u) in enumerate(coords):
        row = max(r for r in bone_rows if r <= max(v - 1e-9, 0.0)) if v > 0 else bone_rows[0]
        cols = np.array(bone_columns, dtype=float)
        if closed:
            ahead = (cols - u) % columns
            c1 = bone_columns[int(np.argmin(ahead))]
            c0 = bone_columns[int(np.argmin((u - cols) % columns))]
            gap = (c1 - c0) % columns or columns
            t = ((u - c0) % columns) / gap
        else:
            c0 = max([c for c in bone_columns if c <= u], default=bone_columns[0])
            c1 = min([c for c in bone_columns if c >= u], default=bone_columns[-1])
            t = 0.0 if c1 == c0 else (u - c0) / (c1 - c0)
        for column, weight in ((c0, 1.0 - t), (c1, t)):
            if weight > 1e-6:
                groups[by_cell[(row, column)]].add([index], weight, "ADD")
    modifier = ob.modifiers.new("Armature", "ARMATURE")
    modifier.object = rig
    ob.parent = rig
    ob.matrix_parent_inverse = rig.matrix_world.inverted()
    if solidify > 0:
        solid = ob.modifiers.new("Solidify", "SOLIDIFY")
        solid.thickness = solidify


def capsule_collider(name: str, rig, bone: str, *, radius_a: float, radius_b: float,
                     shorten: float = 0.0):
    """A CAPSULE collider empty along a bone (local Z = the bone's Y), parented to it."""
    pose_bone = rig.pose.bones[bone]
    head = rig.matrix_world @ pose_bone.head
    tail = rig.matrix_world @ pose_bone.tail
    axis = (tail - head)
    half = axis.length / 2 - shorten
    empty = new_object(name, None)
    empty.empty_display_type = "SPHERE"
    empty.empty_display_size = half
    rotation = axis.to_track_quat("Z", "Y").to_matrix().to_4x4()
    _parent_keep(empty, rig, bone, Matrix.Translation((head + tail) / 2) @ rotation)
    settings = empty.waft_collider
    settings.enabled = True
    settings.shape = "CAPSULE"
    settings.radius_a, settings.radius_b = radius_a, radius_b
    return empty


def ellipsoid_collider(name: str, rig, bone: str, *, radii, along: float = 0.5):
    """An ELLIPSOID collider (Sphere empty, unit size, non-uniform scale) on a bone at
    fraction ``along`` from head to tail, its Z along the bone."""
    pose_bone = rig.pose.bones[bone]
    head = rig.matrix_world @ pose_bone.head
    tail = rig.matrix_world @ pose_bone.tail
    rotation = (tail - head).to_track_quat("Z", "Y").to_matrix().to_4x4()
    empty = new_object(name, None)
    empty.empty_display_type = "SPHERE"
    empty.empty_display_size = 1.0
    world = (Matrix.Translation(head.lerp(tail, along)) @ rotation
             @ Matrix.Diagonal(Vector((*radii, 1.0))))
    _parent_keep(empty, rig, bone, world)
    empty.waft_collider.enabled = True
    return empty


def _parent_keep(ob, rig, bone: str, world) -> None:
    ob.parent = rig
    ob.parent_type = "BONE"
    ob.parent_bone = bone
    bpy.context.view_layer.update()
    ob.matrix_world = world


def follow_camera(scene, rig, *, offset=(1.6, -2.6, 0.5), height: float = 0.75,
                  lens: float = 45.0):
    """A camera and sun; the camera is parented to the moving armature object."""
    target = Vector((0.0, 0.0, height))
    cam, _sun = add_camera_and_light(location=target + Vector(offset), target=target, lens=lens)
    cam.parent = rig
    cam.matrix_parent_inverse = rig.matrix_world.inverted()
    return cam


def add_floor(size: float = 40.0):
    mesh = bpy.data.meshes.new("Floor")
    s = size / 2
    mesh.from_pydata([(-s, -s, 0.0), (s, -s, 0.0), (s, s, 0.0), (-s, s, 0.0)], [],
                     [(0, 1, 2, 3)])
    floor = new_object("Floor", mesh)
    set_color(floor, (0.55, 0.57, 0.6, 1.0))
    return floor


def garment(name: str, verts, rig, cage, columns: int, *, closed: bool, color):
    """The rendered garment: a smooth surface through the cage rows ``verts``, skinned to the
    cage's cloth bones, in ``color``."""
    surface, coords = grid_surface(name, verts, closed=closed, subdivide=3)
    skin_to_cloth_bones(surface, rig, cage, coords, columns, closed=closed)
    set_color(surface, color)
    return surface


def finish_scene(scene, rig, **camera):
    """Floor, a camera following ``rig`` (``follow_camera`` arguments), Workbench, first frame;
    returns the scene."""
    add_floor()
    follow_camera(scene, rig, **camera)
    setup_workbench()
    scene.frame_set(scene.frame_start)
    return scene
