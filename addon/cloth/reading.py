"""Read once: every cloth cage of a bake as plain arrays, validated before anything is sampled.

Nothing is written; every problem raises ``SetupError`` naming the cage (and vertex or bone)
and saying why, so a bad setup fails before the scene is stepped (the file stays unchanged).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import bpy
import numpy as np

from ...core.errors import SetupError
from .. import reading as shared_reading
from ..mesh_colliders import mesh_collider_union
from ..settled import read_point_offsets
from . import topology

# Plain float settings of Object.waft_cloth; each must be finite (lengths in scene units).
FLOAT_SETTINGS = (
    "stretch_compliance", "shear_compliance", "bend_compliance", "horizontal_compliance",
    "damping", "world_motion_fraction", "wind_turbulence", "drag", "radius",
    "max_distance_scale", "backstop_distance", "contact_damping", "edge_damping_scale",
    "edge_wind_scale", "edge_world_motion_scale", "edge_max_distance_scale", "cut_threshold",
    "layer_thickness", "max_distance",
)
VECTOR_SETTINGS = ("gravity", "wind_velocity")
# Settings that are lengths in scene units (converted to metres with the unit scale).
LENGTH_SETTINGS = ("radius", "backstop_distance", "cut_threshold", "layer_thickness")
# A vertex group weight above this pins the vertex.
PIN_WEIGHT = 0.5


@dataclass(frozen=True)
class ClothSetupRead:
    """One cage and the bones it drives."""

    object: object  # the cage mesh object
    name: str
    armature: object  # armature object
    n_vertices: int
    rest_world: np.ndarray  # (N, 3) undeformed cage in world space, Blender units
    quads: np.ndarray  # (Q, 4)
    edges: np.ndarray  # (E, 2)
    level: np.ndarray  # (N,) graph distance from the pinned set
    pinned: np.ndarray  # (N,) bool
    max_distance: np.ndarray  # (N,) Blender units, inf = off
    layer: np.ndarray | None  # (N,) int or None
    bone_names: tuple[str, ...]
    bone_vertex: np.ndarray  # (B,)
    grid: topology.GridNeighbours  # of each bone's vertex
    bone_index: np.ndarray  # (B,) index into armature.pose.bones
    parent_index: np.ndarray  # (B,) index of the parent in pose.bones, -1 = root
    parent_cloth: np.ndarray  # (B,) index of the parent among the cloth bones, -1 = not cloth
    depth: np.ndarray  # (B,) cloth-parent depth: parents are posed before children
    rest_matrix: np.ndarray  # (B, 4, 4) Bone.matrix_local
    parent_rest: np.ndarray  # (B, 4, 4) parent's Bone.matrix_local (identity for roots)
    armature_rest_world: np.ndarray  # (4, 4) armature matrix_world when read
    bone_count: int  # len(armature.pose.bones)
    space_bone: int  # index into pose.bones of the character-space bone, -1 = the object
    surface_body: object | None  # body mesh object (SURFACE pin mode) or None
    reset_frames: tuple[int, ...]  # scene frames
    settled_offset: np.ndarray | None  # (N, 3) Blender units, space axes; None = not used


@dataclass(frozen=True)
class ClothRead:
    setups: tuple[ClothSetupRead, ...]
    colliders: tuple  # addon.reading.ColliderRead, sorted by name
    collider_mask: np.ndarray  # (K, C) bool
    unit_scale: float
    frame_start: int
    frame_end: int
    fps: float
    # Body-mesh colliders (addon.mesh_colliders.MeshColliderRead) and their (M, C) bool mask.
    meshes: tuple = ()
    mesh_mask: np.ndarray | None = None


def _where(ob) -> str:
    return f"Cloth cage '{ob.name}'"


def find_cages(scene, objects=None) -> list:
    """The cages to bake: every enabled one in the scene, or those among ``objects`` (a cage,
    or an armature standing for every enabled cage of the scene that drives it), plus the other
    cages driving the same armatures."""
    every = [ob for ob in scene.objects if is_cage(ob)]
    if objects is None:
        return sorted(every, key=lambda ob: ob.name)
    cages = {}
    for ob in objects:
        if is_cage(ob):
            cages[ob.name] = ob
        elif ob.type == 'ARMATURE':
            cages.update((c.name, c) for c in every if c.waft_cloth.armature is ob)
        else:
            raise SetupError(f"Object '{ob.name}' is not a Waft cloth cage (enable Waft Cloth "
                             f"on a quad mesh)")
    # Cages driving one armature share its action: bake them together, or a partial bake would
    # drop the other cages' bones from it.
    armatures = {c.waft_cloth.armature for c in cages.values()} - {None}
    cages.update((c.name, c) for c in every if c.waft_cloth.armature in armatures)
    return sorted(cages.values(), key=lambda ob: ob.name)


def is_cage(ob) -> bool:
    return ob.type == 'MESH' and ob.waft_cloth.enabled


def claims(ob) -> bool:
    """A cage, or an armature that an enabled cage drives (Bake Active on the armature)."""
    if is_cage(ob):
        return True
    return ob.type == 'ARMATURE' and any(
        is_cage(o) and o.waft_cloth.armature is ob for o in bpy.data.objects)


def check_settings(ob) -> None:
    settings = ob.waft_cloth
    shared_reading.check_finite_settings(settings, FLOAT_SETTINGS, _where(ob))
    for name in VECTOR_SETTINGS:
        if not all(math.isfinite(v) for v in getattr(settings, name)):
            raise SetupError(f"{_where(ob)}: setting '{name}' is not finite")


def group_weights(ob, group_name: str, what: str) -> np.ndarray | None:
    """(N,) weights of a vertex group (0 where unassigned); None when no name is set."""
    if not group_name:
        return None
    group = ob.vertex_groups.get(group_name)
    if group is None:
        raise SetupError(f"{_where(ob)}: {what} vertex group '{group_name}' does not exist")
    index = group.index
    weights = np.zeros(len(ob.data.vertices))
    for vertex in ob.data.vertices:  # setup time only: vertex groups have no bulk accessor
        for element in vertex.groups:
            if element.group == index:
                weights[vertex.index] = element.weight
    return weights


def mesh_arrays(ob) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mesh = ob.data
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    sizes = np.empty(len(mesh.polygons), dtype=np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    verts = np.empty(len(mesh.loops), dtype=np.int32)
    mesh.loops.foreach_get("vertex_index", verts)
    return co.reshape(-1, 3).astype(np.float64), sizes, verts


def _check_evaluated_count(ob, depsgraph) -> None:
    evaluated = ob.evaluated_get(depsgraph).data
    if len(evaluated.vertices) != len(ob.data.vertices):
        raise SetupError(
            f"{_where(ob)}: its modifiers change the vertex count ({len(ob.data.vertices)} → "
            f"{len(evaluated.vertices)}); the cage may only be deformed (Armature modifier)")


def pinned_vertices(ob) -> np.ndarray:
    settings = ob.waft_cloth
    if not settings.pin_group:
        raise SetupError(f"{_where(ob)}: no pin group set; choose the vertex group of the "
                         f"vertices that follow the character")
    pinned = group_weights(ob, settings.pin_group, "pin") > PIN_WEIGHT
    if not pinned.any():
        raise SetupError(f"{_where(ob)}: no vertex is pinned (pin group "
                         f"'{settings.pin_group}' is empty); pin the vertices that hold the "
                         f"cloth on")
    if pinned.all():
        raise SetupError(f"{_where(ob)}: every vertex is pinned (pin group "
                         f"'{settings.pin_group}'), so nothing is left to simulate")
    return pinned


def max_distance(ob, n: int) -> np.ndarray:
    settings = ob.waft_cloth
    if settings.max_distance <= 0.0:
        return np.full(n, np.inf)
    weights = group_weights(ob, settings.max_distance_group, "max distance")
    if weights is None:
        return np.full(n, float(settings.max_distance))
    return weights * float(settings.max_distance)


def _layers(ob) -> np.ndarray | None:
    layers = ob.waft_cloth.layers
    if len(layers) == 0:
        return None
    layer = np.zeros(len(ob.data.vertices), dtype=np.int64)
    for k, item in enumerate(layers):
        weights = group_weights(ob, item.group, f"layer {k}")
        if weights is None:
            raise SetupError(f"{_where(ob)}: layer {k} has no vertex group")
        layer[weights > PIN_WEIGHT] = k
    return layer


def _reset_frames(ob) -> tuple[int, ...]:
    text = ob.waft_cloth.reset_frames.strip()
    if not text:
        return ()
    try:
        return tuple(sorted({int(part) for part in text.replace(";", ",").split(",")
                             if part.strip()}))
    except ValueError:
        raise SetupError(f"{_where(ob)}: Reset Frames '{text}' must be frame numbers separated "
                         f"by commas") from None


def _settled_offset(ob, use_settled: bool) -> np.ndarray | None:
    """The cage's settled pose (Capture Settled Pose) when Settled Pose is on."""
    settings = ob.waft_cloth
    if not (use_settled and settings.use_settled_pose):
        return None
    return read_point_offsets(ob.data, captured=settings.settled_vertices,
                              points=len(ob.data.vertices), where=_where(ob))


def _armature(scene, ob):
    armature = ob.waft_cloth.armature
    if armature is None:
        raise SetupError(f"{_where(ob)}: no armature set; pick the armature whose bones the "
                         f"cage drives")
    if scene.objects.get(armature.name) is not armature:
        raise SetupError(f"{_where(ob)}: armature '{armature.name}' is not in scene "
                         f"'{scene.name}'")
    shared_reading.check_world_scale(armature, "Armature")
    shared_reading.check_animation_target(armature)
    return armature


def _bones(ob, armature, n: int) -> tuple[tuple[str, ...], np.ndarray]:
    entries = ob.waft_cloth.bones
    if len(entries) == 0:
        raise SetupError(f"{_where(ob)}: no bones are mapped to the cage; use Add Cloth Setup "
                         f"(maps bones automatically) or add them to the bone list")
    names, vertices = [], []
    for entry in entries:
        if entry.bone in names:
            raise SetupError(f"{_where(ob)}, bone '{entry.bone}': mapped twice")
        if armature.pose.bones.get(entry.bone) is None:
            raise SetupError(f"{_where(ob)}, bone '{entry.bone}': armature "
                             f"'{armature.name}' has no such bone")
        if not 0 <= entry.vertex < n:
            raise SetupError(f"{_where(ob)}, bone '{entry.bone}': maps to no vertex (vertex "
                             f"{entry.vertex} of {n}); map it to a cage vertex")
        names.append(entry.bone)
        vertices.append(entry.vertex)
    return tuple(names), np.array(vertices, dtype=np.int64)


def _hierarchy(armature, names) -> tuple[np.ndarray, ...]:
    bones = armature.pose.bones
    index = {pb.name: i for i, pb in enumerate(bones)}
    cloth = {name: b for b, name in enumerate(names)}
    bone_index = np.array([index[n] for n in names], dtype=np.int64)
    parents = [bones[n].parent for n in names]
    parent_index = np.array([index[p.name] if p is not None else -1 for p in parents],
                            dtype=np.int64)
    parent_cloth = np.array([cloth.get(p.name, -1) if p is not None else -1 for p in parents],
                            dtype=np.int64)
    depth = np.zeros(len(names), dtype=np.int64)
    for b in range(len(names)):  # setup time: walk up the cloth parents
        p = parent_cloth[b]
        while p >= 0:
            depth[b] += 1
            p = parent_cloth[p]
    rest = np.array([np.array(bones[n].bone.matrix_local) for n in names])
    parent_rest = np.array([np.array(p.bone.matrix_local) if p is not None else np.eye(4)
                            for p in parents])
    return bone_index, parent_index, parent_cloth, depth, rest, parent_rest


def read_cage(scene, ob, depsgraph, *, use_settled: bool = True) -> ClothSetupRead:
    where = _where(ob)
    check_settings(ob)
    shared_reading.check_world_scale(ob, "Cloth cage")
    armature = _armature(scene, ob)
    co, sizes, loop_vertices = mesh_arrays(ob)
    n = len(co)
    quads = topology.cage_quads(ob.name, sizes, loop_vertices)
    edges = topology.check_cage(ob.name, n, quads)
    _check_evaluated_count(ob, depsgraph)
    pinned = pinned_vertices(ob)
    level = topology.levels(n, edges, pinned)
    unreachable = np.nonzero(level < 0)[0]
    if len(unreachable):
        raise SetupError(f"{where}: vertex {int(unreachable[0])} is not connected to any pinned "
                         f"vertex; a loose piece would fall away")
    names, bone_vertex = _bones(ob, armature, n)
    world = np.array(ob.matrix_world)
    rest_world = co @ world[:3, :3].T + world[:3, 3]
    grid = topology.grid_neighbours(quads, edges, level, bone_vertex, rest_world)
    lone = np.nonzero((grid.below < 0) & (grid.above < 0))[0]
    if len(lone):
        b = int(lone[0])
        raise SetupError(f"{where}, bone '{names[b]}': its vertex {int(bone_vertex[b])} has no "
                         f"vertical neighbour, so the bone has no direction")
    bone_index, parent_index, parent_cloth, depth, rest, parent_rest = _hierarchy(armature, names)
    settings = ob.waft_cloth
    space_bone = -1
    if settings.space_bone:
        pose_bone = armature.pose.bones.get(settings.space_bone)
        if pose_bone is None:
            raise SetupError(f"{where}: space bone '{settings.space_bone}' is not a bone of "
                             f"'{armature.name}'")
        space_bone = list(armature.pose.bones).index(pose_bone)
    body = None
    if settings.pin_mode == "SURFACE":
        body = settings.body
        if body is None or body.type != 'MESH':
            raise SetupError(f"{where}: Surface pin mode needs a body mesh to stick to")
        if scene.objects.get(body.name) is not body:
            raise SetupError(f"{where}: body '{body.name}' is not in scene '{scene.name}'")
        if len(body.evaluated_get(depsgraph).data.polygons) == 0:
            raise SetupError(f"{where}: body '{body.name}' has no faces to stick to")
    return ClothSetupRead(
        object=ob, name=ob.name, armature=armature, n_vertices=n, rest_world=rest_world,
        quads=quads, edges=edges, level=level, pinned=pinned, max_distance=max_distance(ob, n),
        layer=_layers(ob), bone_names=names, bone_vertex=bone_vertex, grid=grid,
        bone_index=bone_index, parent_index=parent_index, parent_cloth=parent_cloth,
        depth=depth, rest_matrix=rest, parent_rest=parent_rest,
        armature_rest_world=np.array(armature.matrix_world), bone_count=len(armature.pose.bones),
        space_bone=space_bone, surface_body=body, reset_frames=_reset_frames(ob),
        settled_offset=_settled_offset(ob, use_settled))


def collider_objects(scene, ob) -> list:
    collection = ob.waft_cloth.collider_collection
    members = shared_reading.enabled_colliders(scene, collection)
    if collection is None:
        return members
    for c in members:
        if scene.objects.get(c.name) is not c:
            raise SetupError(f"{_where(ob)}: collider '{c.name}' is not in scene '{scene.name}'")
    return members


def read_cloth(scene, objects, frame_start: int, frame_end: int, *,
               use_settled: bool = True) -> ClothRead | None:
    """Validate and read every cage of the bake; None when there is none. ``use_settled``
    False: ignore the cages' settled poses (Capture Settled Pose simulates without them)."""
    cages = find_cages(scene, objects)
    if not cages:
        return None
    scale = shared_reading.unit_scale(scene)
    fps = shared_reading.scene_fps(scene)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    setups = tuple(read_cage(scene, ob, depsgraph, use_settled=use_settled) for ob in cages)
    armatures = [s.armature.name for s in setups]
    for s in setups:
        if armatures.count(s.armature.name) > 1:
            shared = set(s.bone_names)
            for other in setups:
                if other is not s and other.armature is s.armature:
                    both = shared & set(other.bone_names)
                    if both:
                        raise SetupError(f"{_where(s.object)}, bone '{sorted(both)[0]}': also "
                                         f"driven by cage '{other.name}'")
    per_cloth = [collider_objects(scene, s.object) for s in setups]
    colliders, mask = shared_reading.collider_union(per_cloth)
    meshes, mesh_mask = mesh_collider_union(per_cloth, scale)
    return ClothRead(setups=setups, colliders=colliders, collider_mask=mask, unit_scale=scale,
                     frame_start=frame_start, frame_end=frame_end, fps=fps, meshes=meshes,
                     mesh_mask=mesh_mask)
