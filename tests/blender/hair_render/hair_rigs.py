"""A head with guide-strand chains and a scalp, built with bpy as a user would."""

from __future__ import annotations

import bpy
import numpy as np
from mathutils import Vector

from waft.core._bench_meshes import uv_sphere
from waft.core.hair import scatter_roots
from waft.core.hair._bench import hemisphere
from waft.core.triangles import closest_on_triangles

HEAD = Vector((0.0, 0.0, 1.6))
RADIUS = 0.1


def scalp_mesh(scene, name: str = "Scalp", *, rings: int = 6, segments: int = 12):
    vertices, triangles = hemisphere(radius=RADIUS, rings=rings, segments=segments)
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(v + np.array(HEAD)) for v in vertices], [],
                     [tuple(int(i) for i in t) for t in triangles])
    mesh.update()
    ob = bpy.data.objects.new(name, mesh)
    scene.collection.objects.link(ob)
    return ob


def head_rig(scene, *, guides: int = 16, bones: int = 4, segment: float = 0.08,
             turn_deg: float = 90.0, turn_frames: int = 6, name: str = "Hair"):
    """Armature ``name``: a ``Head`` bone turning about world Z by ``turn_deg`` over
    ``turn_frames`` frames, ``guides`` chains of ``bones`` bones growing from a hemisphere scalp
    (parented to the head bone). Returns (rig, scalp)."""
    vertices, triangles = hemisphere(radius=RADIUS, rings=6, segments=12)
    roots = scatter_roots(vertices=vertices, triangles=triangles, count=guides, seed=11)
    rig = bpy.data.objects.new(name, bpy.data.armatures.new(name))
    scene.collection.objects.link(rig)
    view_layer = bpy.context.view_layer
    view_layer.objects.active = rig
    rig.select_set(True)
    bpy.ops.object.mode_set(mode='EDIT')
    edit = rig.data.edit_bones
    head = edit.new("Head")
    head.head, head.tail = HEAD - Vector((0, 0, 0.1)), HEAD + Vector((0, 0, 0.15))
    down = Vector((0.0, 0.0, -1.0))
    for g in range(guides):
        start = HEAD + Vector(roots.position[g])
        direction = (0.5 * Vector(roots.normal[g]) + down).normalized()
        parent = head
        for b in range(bones):
            bone = edit.new(f"Guide.{g:02d}.{b}")
            bone.head = start + direction * (segment * b)
            bone.tail = start + direction * (segment * (b + 1))
            bone.parent = parent
            bone.use_connect = b > 0
            parent = bone
    bpy.ops.object.mode_set(mode='OBJECT')
    for pb in rig.pose.bones:
        if pb.name.startswith("Guide."):
            pb.waft.simulate = True
    rig.waft.enabled = True
    pb = rig.pose.bones["Head"]
    pb.rotation_mode = 'XYZ'
    for frame, turn in ((1, 0.0), (1 + turn_frames, np.deg2rad(turn_deg))):
        pb.rotation_euler = (0.0, turn, 0.0)  # bone Y is world Z for an upright bone
        pb.keyframe_insert("rotation_euler", frame=frame)
    scalp = scalp_mesh(scene)
    world = scalp.matrix_world.copy()
    scalp.parent, scalp.parent_type, scalp.parent_bone = rig, 'BONE', "Head"
    view_layer.update()
    scalp.matrix_world = world
    hair = rig.waft_hair
    hair.render_strands = True
    hair.scalp = scalp
    hair.count = 2000
    hair.points = 8
    return rig, scalp


def mesh_head(scene, rig, radius: float, centre, *, depth: float):
    """A closed, coarse UV sphere (flat faces: not the sphere the shapes know) at ``centre``,
    turning with ``rig``'s ``Head`` bone (or with ``rig`` itself when it is not an armature),
    as a body-mesh collider."""
    vertices, triangles = uv_sphere(radius, rings=8, segments=16)
    mesh = bpy.data.meshes.new("BodyMesh")
    mesh.from_pydata([tuple(v + np.asarray(centre)) for v in vertices], [],
                     [tuple(int(i) for i in t) for t in triangles])
    mesh.update()
    ob = bpy.data.objects.new("BodyMesh", mesh)
    scene.collection.objects.link(ob)
    bpy.context.view_layer.update()
    world = ob.matrix_world.copy()
    if rig.type == 'ARMATURE':
        ob.parent, ob.parent_type, ob.parent_bone = rig, 'BONE', "Head"
    else:
        ob.parent = rig
    bpy.context.view_layer.update()
    ob.matrix_world = world
    ob.waft_collider.enabled, ob.waft_collider.friction = True, 0.0
    ob.waft_collider.depth = depth
    return ob


def convex_signed_distance(points: np.ndarray, ob) -> np.ndarray:
    """Exact signed distance to a closed convex mesh, by brute force: inside, the nearest face
    plane; outside, the nearest point over every triangle (no grid, no pseudo-normal)."""
    mesh = ob.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    mesh.calc_loop_triangles()
    M = np.array(ob.matrix_world)
    v = np.array([M[:3, :3] @ np.array(p.co) + M[:3, 3] for p in mesh.vertices])
    t = np.array([tuple(lt.vertices) for lt in mesh.loop_triangles])
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    plane = np.einsum("ptk,tk->pt", points[:, None] - a[None], n)
    inside = plane.max(axis=1) < 0.0
    out = plane.max(axis=1)
    far = np.flatnonzero(~inside)
    for chunk in np.array_split(far, max(1, len(far) // 2000)):
        p = np.repeat(points[chunk], len(t), axis=0)
        closest, _bary, _region = closest_on_triangles(p, np.tile(a, (len(chunk), 1)),
                                                       np.tile(b, (len(chunk), 1)),
                                                       np.tile(c, (len(chunk), 1)))
        d = np.linalg.norm(p - closest, axis=1).reshape(len(chunk), len(t))
        out[chunk] = d.min(axis=1)
    return out


def evaluated_points(ob) -> np.ndarray:
    data = ob.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    co = np.empty(len(data.points) * 3, dtype=np.float32)
    data.position_data.foreach_get("vector", co)
    return co.reshape(-1, 3) @ np.array(ob.matrix_world)[:3, :3].T + \
        np.array(ob.matrix_world)[:3, 3]


def evaluated_triangles(ob) -> tuple[np.ndarray, np.ndarray]:
    mesh = ob.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    m = np.array(ob.matrix_world)
    return co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3], tris.reshape(-1, 3)


def save_first_on_42(directory) -> None:
    """Blender 4.2 bakes geometry only to disk next to a saved file (no packed bakes)."""
    if bpy.app.version < (4, 3, 0):
        bpy.ops.wm.save_as_mainfile(filepath=str(directory / "hair.blend"))


def curves_head(scene, *, guides: int = 12, points: int = 6, length: float = 0.35,
                turn_deg: float = 90.0, turn_frames: int = 6, name: str = "Groom"):
    """A hair Curves object ``name`` (``guides`` curves of ``points`` points) growing from a
    hemisphere scalp, both parented to an empty ``Head`` that turns about Z. Returns
    (curves object, scalp, head empty)."""
    vertices, triangles = hemisphere(radius=RADIUS, rings=6, segments=12)
    roots = scatter_roots(vertices=vertices, triangles=triangles, count=guides, seed=5)
    head = bpy.data.objects.new("Head", None)
    scene.collection.objects.link(head)
    head.location = HEAD
    head.rotation_mode = 'XYZ'
    for frame, turn in ((1, 0.0), (1 + turn_frames, np.deg2rad(turn_deg))):
        head.rotation_euler = (0.0, 0.0, turn)
        head.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_set(1)  # the head's matrix_world at rest, for the parent inverses below
    scalp = scalp_mesh(scene)
    s = np.linspace(0.0, 1.0, points)[None, :, None]
    direction = 0.5 * roots.normal[:, None] + np.array([0.0, 0.0, -1.0])
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    world = np.array(HEAD) + roots.position[:, None] + length * s * direction
    data = bpy.data.hair_curves.new(name)
    data.add_curves([points] * guides)
    data.position_data.foreach_set("vector", (world - np.array(HEAD)).astype(np.float32).ravel())
    ob = bpy.data.objects.new(name, data)
    scene.collection.objects.link(ob)
    data.surface = scalp
    for child in (scalp, ob):
        child.parent = head
        child.matrix_parent_inverse = head.matrix_world.inverted()
    ob.location = HEAD  # the curve points are relative to the head centre
    ob.matrix_parent_inverse = head.matrix_world.inverted()
    bpy.context.view_layer.update()
    ob.waft_hair.enabled = True
    return ob, scalp, head


def original_points(ob) -> np.ndarray:
    co = np.empty(len(ob.data.points) * 3, dtype=np.float32)
    ob.data.position_data.foreach_get("vector", co)
    return co.reshape(-1, 3)
