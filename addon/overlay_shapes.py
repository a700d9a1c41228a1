"""What the viewport overlay draws besides the collider shapes (``overlay.py``): the shapes the
bake simulates with, each exactly as the solver uses it (``core/shape_outline.py``), at the
current frame's pose, for the selected objects (a crowd's every particle would bury the view
and cost a redraw 19 ms at 2,000 bones; one selected rig costs well under a millisecond).

- bone chains: each simulated bone tail's collision sphere (the armature's *Radius*, or the
  bone's own with *Override*);
- cloth cages: the pinned vertices (crosses) and each free vertex's max-distance sphere;
- ragdolls: every body's capsule (bone length, body radius) and each joint's swing-limit cone,
  and after a bake the animation target's bodies (seed 004's red bodies: where the motors
  pull; ``ragdoll/targets.py``);
- body-mesh colliders: their triangle edges (drawn with the colliders).

A setup the bake would refuse is left out (its error comes at bake time, naming it). Lines are
world space, Blender units, float32 (N, 2, 3).
"""

from __future__ import annotations

import hashlib

import bpy
import numpy as np

from ..core.errors import SetupError
from ..core.shape_outline import (
    capsules_outline,
    crosses_outline,
    mesh_edges,
    spheres_outline,
    swing_cone_outline,
)
from . import reading
from .cloth import reading as cloth_reading
from .mesh_colliders import is_mesh_collider, loop_triangles
from .ragdoll import reading as ragdoll_reading
from .ragdoll import targets as ragdoll_targets

LAYERS = ("particles", "bodies", "limits", "target", "max_distance", "pinned")
PIN_CROSS_FRACTION = 0.02  # a pinned vertex's cross: this fraction of the cage's diagonal
CONE_LENGTH_FRACTION = 0.6  # a swing cone is drawn this fraction of the child bone's length
MAX_CACHED_MESHES = 8

# Mesh collider edges by object name: (hash of its triangles, (E, 2) edges). Finding the edges
# of a 50k-triangle body is ~12 ms, too slow for every redraw; its topology rarely changes.
_edge_cache: dict[str, tuple[bytes, np.ndarray]] = {}
# What a setup's shapes are read from (``read_ragdoll``, ``read_cage``: ~10 ms for a Rigify
# ragdoll or a 24 x 24 cage), by object and its settings until the next depsgraph update
# (``forget_reads``: an edited mesh, a vertex group, a bone): orbiting the view or changing
# the frame redraws without reading again, a changed setting reads again at once.
_reads: dict[tuple, object] = {}


def forget_reads(*_args) -> None:
    _reads.clear()


def _read(kind: str, ob, groups, read):
    """``read()`` cached by (kind, object, the settings of ``groups``)."""
    key = (kind, ob.name, tuple(reading.settings_values(g) for g in groups))
    found = _reads.get(key)
    if found is None:
        if len(_reads) >= 64:
            _reads.clear()
        found = _reads[key] = read()
    return found


def _visible(ob, view_layer) -> bool:
    return view_layer is None or ob.visible_get(view_layer=view_layer)


def _empty() -> np.ndarray:
    return np.zeros((0, 2, 3))


def chain_particle_lines(ob) -> np.ndarray:
    """Collision spheres of the simulated (not pinned) bone tails of armature ``ob``."""
    world = np.array(ob.matrix_world, dtype=np.float64)
    centres, radii = [], []
    default = float(ob.waft.radius)
    for pose_bone in ob.pose.bones:
        bone = pose_bone.waft
        if not bone.simulate or bone.pinned:
            continue
        centres.append(world[:3, :3] @ np.array(pose_bone.tail) + world[:3, 3])
        radii.append(float(bone.radius) if bone.use_overrides else default)
    if not centres:
        return _empty()
    return spheres_outline(np.array(centres), np.array(radii))


def ragdoll_lines(scene, ob) -> tuple[np.ndarray, np.ndarray]:
    """(bodies, swing cones) of ragdoll ``ob`` at its current pose (``read_ragdoll`` sizes)."""
    unit = reading.unit_scale(scene)
    groups = [ob.waft_ragdoll] + [pb.waft_ragdoll for pb in ob.pose.bones if pb.waft_ragdoll.body]
    read = _read("ragdoll", ob, groups, lambda: ragdoll_reading.read_ragdoll(scene, ob, unit))
    world = np.array(ob.matrix_world, dtype=np.float64)
    pose = np.array([world @ np.array(ob.pose.bones[name].matrix) for name in read.names])
    frames = ragdoll_reading.without_scale(pose)
    heads = pose[:, :3, 3]
    length, radius = read.length / unit, read.radius / unit  # Blender units
    bodies = capsules_outline(heads, heads + frames[:, :3, 1] * length[:, None], radius)
    cones = []
    rest = read.rest_matrix[:, :3, :3]
    for i, p in enumerate(read.parent):
        limit = read.swing_limit[i]
        if p < 0 or np.all(limit >= np.pi):
            continue  # the root, or a joint free to swing anywhere
        joint_frame = frames[p, :3, :3] @ rest[p].T @ rest[i]  # parent now ⊗ bind relative
        cones.append(swing_cone_outline(heads[i], joint_frame, limit,
                                        CONE_LENGTH_FRACTION * float(length[i]),
                                        swing_center=read.swing_center[i]))
    return bodies, np.concatenate(cones) if cones else _empty()


def cloth_lines(scene, ob, depsgraph) -> tuple[np.ndarray, np.ndarray]:
    """(max-distance spheres of the free vertices, crosses on the pinned) of cage ``ob``: the
    solver's limit, *Max Distance* × its vertex group weight × *Max Distance Scale*, times *Edge
    Max Distance* on border vertices (fewer than four stretch neighbours, seed 001's edge)."""
    read = _read("cage", ob, [ob.waft_cloth],
                 lambda: cloth_reading.read_cage(scene, ob, depsgraph))
    mesh = ob.evaluated_get(depsgraph).data
    n = read.n_vertices
    local = np.empty(n * 3)
    mesh.vertices.foreach_get("co", local)
    world_matrix = np.array(ob.matrix_world, dtype=np.float64)
    points = local.reshape(n, 3) @ world_matrix[:3, :3].T + world_matrix[:3, 3]
    settings = ob.waft_cloth
    border = np.bincount(read.edges.reshape(-1), minlength=n) < 4
    limit = (read.max_distance * float(settings.max_distance_scale)
             * np.where(border, float(settings.edge_max_distance_scale), 1.0))
    spheres = ~read.pinned & np.isfinite(limit)
    diagonal = float(np.linalg.norm(points.max(axis=0) - points.min(axis=0)))
    return (spheres_outline(points[spheres], limit[spheres]) if spheres.any() else _empty(),
            crosses_outline(points[read.pinned], PIN_CROSS_FRACTION * diagonal))


def mesh_collider_lines(ob, depsgraph) -> np.ndarray:
    """The triangle edges of mesh collider ``ob``'s evaluated mesh, world space."""
    mesh = ob.evaluated_get(depsgraph).data
    local = np.empty(len(mesh.vertices) * 3)
    mesh.vertices.foreach_get("co", local)
    world_matrix = np.array(ob.matrix_world, dtype=np.float64)
    points = local.reshape(-1, 3) @ world_matrix[:3, :3].T + world_matrix[:3, 3]
    tris = loop_triangles(mesh)
    key = hashlib.blake2b(tris.tobytes(), digest_size=16).digest()
    cached = _edge_cache.get(ob.name)
    if cached is None or cached[0] != key:
        if len(_edge_cache) >= MAX_CACHED_MESHES:
            _edge_cache.clear()
        cached = _edge_cache[ob.name] = (key, mesh_edges(tris))
    return points[cached[1]]


def simulation_lines(scene, view_layer=None) -> dict[str, np.ndarray]:
    """{layer: (N, 2, 3) float32 world segments} for every visible, selected, enabled setup of
    ``scene`` (every one without ``view_layer``) (``LAYERS``: chain particles, ragdoll bodies
    and limits, cloth max distances and pins)."""
    out: dict[str, list] = {name: [] for name in LAYERS}
    depsgraph = bpy.context.evaluated_depsgraph_get()
    for ob in scene.objects:
        if not _visible(ob, view_layer) or (view_layer is not None
                                            and not ob.select_get(view_layer=view_layer)):
            continue
        try:
            if ob.type == 'ARMATURE' and ob.waft.enabled:
                out["particles"].append(chain_particle_lines(ob))
            if ob.type == 'ARMATURE' and ob.waft_ragdoll.enabled:
                bodies, cones = ragdoll_lines(scene, ob)
                out["bodies"].append(bodies)
                out["limits"].append(cones)
                target = ragdoll_targets.target_lines(ob.name, scene.frame_current)
                if target is not None:
                    out["target"].append(target)
            if cloth_reading.is_cage(ob):
                spheres, crosses = cloth_lines(scene, ob, depsgraph)
                out["max_distance"].append(spheres)
                out["pinned"].append(crosses)
        except SetupError:
            continue  # named by the bake, which refuses it
    return {name: (np.concatenate(parts) if parts else _empty()).astype(np.float32)
            for name, parts in out.items()}


def mesh_collider_segments(scene, view_layer=None) -> tuple[np.ndarray, np.ndarray]:
    """((N, 2, 3) float32 segments, (N,) bool selected) of the enabled mesh colliders."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    segments, selected = [], []
    for ob in scene.objects:
        if not (ob.waft_collider.enabled and is_mesh_collider(ob) and _visible(ob, view_layer)):
            continue
        lines = mesh_collider_lines(ob, depsgraph)
        segments.append(lines)
        selected.append(np.full(len(lines), view_layer is not None
                                and ob.select_get(view_layer=view_layer)))
    if not segments:
        return np.zeros((0, 2, 3), dtype=np.float32), np.zeros(0, dtype=bool)
    return np.concatenate(segments).astype(np.float32), np.concatenate(selected)
