"""Scene-building helpers shared by the sample scripts (bpy only, no Waft code)."""

from __future__ import annotations

import math

import bpy
from mathutils import Matrix, Vector


def missing_asset(path) -> str | None:
    """Why a sample cannot run when its asset file ``path`` is absent (None when present)."""
    if not path.is_file():
        return f"{path} not found (the shared assets folder must sit next to the repository)"
    return None


def new_object(name: str, data, *, collection=None):
    ob = bpy.data.objects.new(name, data)
    (collection or bpy.context.scene.collection).objects.link(ob)
    return ob


def set_color(ob, rgba) -> None:
    """Object colour (Workbench shows it with shading.color_type == 'OBJECT') and a material."""
    ob.color = rgba
    if ob.type != "MESH":
        return
    mat = bpy.data.materials.new(f"{ob.name} material")
    mat.diffuse_color = rgba
    ob.data.materials.append(mat)


def smooth_mesh(name: str, verts, faces):
    """A new smooth-shaded mesh from vertex and face lists."""
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], faces)
    for poly in mesh.polygons:
        poly.use_smooth = True
    mesh.update()
    return mesh


def uv_sphere_mesh(name: str, radius: float, *, segments: int = 24, rings: int = 12):
    verts = [(0.0, 0.0, radius)]
    for r in range(1, rings):
        theta = math.pi * r / rings
        for s in range(segments):
            phi = 2.0 * math.pi * s / segments
            verts.append(
                (
                    radius * math.sin(theta) * math.cos(phi),
                    radius * math.sin(theta) * math.sin(phi),
                    radius * math.cos(theta),
                )
            )
    verts.append((0.0, 0.0, -radius))
    # Wound counter-clockwise seen from outside: the normals point out (a Waft mesh collider
    # made of it collides from outside, and it shades lit side out).
    faces = [(0, 1 + s, 1 + (s + 1) % segments) for s in range(segments)]
    for r in range(rings - 2):
        a, b = 1 + r * segments, 1 + (r + 1) * segments
        for s in range(segments):
            t = (s + 1) % segments
            faces.append((a + s, b + s, b + t, a + t))
    last = len(verts) - 1
    base = 1 + (rings - 2) * segments
    faces += [(base + (s + 1) % segments, base + s, last) for s in range(segments)]
    return smooth_mesh(name, verts, faces)


def tube_mesh(name: str, points, radii, *, sides: int = 8):
    """A tube through ``points`` with per-point ``radii``: rings of ``sides`` vertices."""
    pts = [Vector(p) for p in points]
    verts, faces = [], []
    for i, p in enumerate(pts):
        tangent = (pts[min(i + 1, len(pts) - 1)] - pts[max(i - 1, 0)]).normalized()
        side = tangent.cross(Vector((0.0, 0.0, 1.0)))
        if side.length < 1e-6:
            side = tangent.cross(Vector((1.0, 0.0, 0.0)))
        side.normalize()
        up = side.cross(tangent)
        for s in range(sides):
            a = 2.0 * math.pi * s / sides
            verts.append(tuple(p + radii[i] * (math.cos(a) * side + math.sin(a) * up)))
    for i in range(len(pts) - 1):
        a, b = i * sides, (i + 1) * sides
        for s in range(sides):
            t = (s + 1) % sides
            faces.append((a + s, a + t, b + t, b + s))
    faces.append(tuple(range(len(verts) - 1, len(verts) - 1 - sides, -1)))  # cap the tip
    return smooth_mesh(name, verts, faces)


def parent_to_bone(ob, rig, bone_name: str) -> None:
    """Parent ``ob`` to a bone and keep its current world placement."""
    world = ob.matrix_world.copy()
    ob.parent = rig
    ob.parent_type = "BONE"
    ob.parent_bone = bone_name
    bpy.context.view_layer.update()
    ob.matrix_world = world


def armature_in_edit_mode(name: str, *, display_type: str | None = "STICK"):
    """A new armature object ``name`` (``display_type`` unless None), active and selected, in
    Edit Mode; returns (object, its edit bones)."""
    rig = new_object(name, bpy.data.armatures.new(name))
    if display_type is not None:
        rig.data.display_type = display_type
    bpy.context.view_layer.objects.active = rig
    rig.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    return rig, rig.data.edit_bones


def armature_from_bones(name: str, bones):
    """A new armature object ``name`` from (bone, head, tail, parent bone or None) rows, in
    parent-first order; a bone whose head is its parent's tail is connected. Ends in Object
    Mode."""
    rig, edit_bones = armature_in_edit_mode(name, display_type=None)
    for bone_name, head, tail, parent in bones:
        bone = edit_bones.new(bone_name)
        bone.head, bone.tail = head, tail
        if parent:
            bone.parent = edit_bones[parent]
            bone.use_connect = Vector(head) == edit_bones[parent].tail
    bpy.ops.object.mode_set(mode="OBJECT")
    return rig


def add_bone_chain(edit_bones, names, points, parent):
    """Connected edit bones ``names[k]`` from ``points[k]`` to ``points[k + 1]``, the first one
    parented (not connected) to ``parent``; returns the last bone."""
    for k, name in enumerate(names):
        bone = edit_bones.new(name)
        bone.head, bone.tail = points[k], points[k + 1]
        bone.parent = parent
        bone.use_connect = k > 0
        parent = bone
    return parent


def sphere_collider(name: str, rig, bone: str, *, center, radius: float):
    """A Waft sphere collider empty of ``radius`` at world ``center``, following ``bone``."""
    empty = new_object(name, None)
    empty.empty_display_type = "SPHERE"
    empty.empty_display_size = radius
    empty.location = center
    bpy.context.view_layer.update()
    parent_to_bone(empty, rig, bone)
    empty.waft_collider.enabled = True
    return empty


def body_collider(name: str, rig, bone: str, *, body, radius: float = 1.0):
    """A Waft collider that is the ellipsoid a UV-sphere mesh ``body`` of ``radius`` (scaled
    by its object matrix) is drawn as: a sphere empty under the same non-uniform scale (an
    ellipsoid collider), following ``bone``. The mesh's flat faces lie within it, so what rests
    on the collider rests on the visible surface (within the faces' sagitta, a few mm)."""
    empty = new_object(name, None)
    empty.empty_display_type = "SPHERE"
    empty.empty_display_size = radius
    empty.matrix_world = body.matrix_world.copy()
    bpy.context.view_layer.update()
    parent_to_bone(empty, rig, bone)
    empty.waft_collider.enabled = True
    return empty


def add_camera_and_light(
    *, location, target, lens: float = 50.0, sun_rotation=(0.9, 0.2, 0.6)
):
    scene = bpy.context.scene
    cam = new_object("Camera", bpy.data.cameras.new("Camera"))
    cam.data.lens = lens
    cam.location = location
    direction = Vector(target) - Vector(location)
    cam.rotation_euler = direction.to_track_quat("-Z", "Y").to_euler()
    scene.camera = cam
    sun = new_object("Sun", bpy.data.lights.new("Sun", type="SUN"))
    sun.data.energy = 3.0
    sun.rotation_euler = sun_rotation
    return cam, sun


def setup_workbench(*, resolution=(320, 240)) -> None:
    """A small, fast, deterministic render: Workbench, object colours, studio light."""
    scene = bpy.context.scene
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x, scene.render.resolution_y = resolution
    scene.render.resolution_percentage = 100
    scene.render.film_transparent = False
    shading = scene.display.shading
    shading.light = "STUDIO"
    shading.color_type = "OBJECT"
    shading.show_shadows = True
    shading.show_cavity = False
    world = scene.world or bpy.data.worlds.new("World")
    scene.world = world
    world.color = (0.8, 0.82, 0.86)


def key_bone(rig, bone: str, prop: str, frame: int, value) -> None:
    pb = rig.pose.bones[bone]
    setattr(pb, prop, value)
    pb.keyframe_insert(prop, frame=frame)


def matrix_look(origin, direction) -> Matrix:
    """World matrix at ``origin`` whose local Y axis points along ``direction``."""
    quat = Vector(direction).to_track_quat("Y", "Z")
    return Matrix.Translation(Vector(origin)) @ quat.to_matrix().to_4x4()
