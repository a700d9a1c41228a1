"""Read a character's skin for ``waft.fit_colliders``: which bind-pose vertices each bone moves
most, in that bone's rest frame (``core.collider_fit`` fits the capsules)."""

from __future__ import annotations

import numpy as np

from ..core.collider_fit import owned_vertices, strongest_bone


def skinned_meshes(rig) -> list:
    """Mesh objects an Armature modifier deforms with ``rig``."""
    import bpy

    return [ob for ob in bpy.data.objects if ob.type == 'MESH' and any(
        m.type == 'ARMATURE' and m.object == rig for m in ob.modifiers)]


def _weight_elements(mesh_ob, deform_groups: dict[int, str]) -> tuple:
    """(vertex, group index, weight) arrays of the mesh's deforming weights. bpy has no bulk
    read of vertex-group weights: one Python pass over the vertices (a one-shot operator)."""
    vertex, group, weight = [], [], []
    for i, v in enumerate(mesh_ob.data.vertices):
        for element in v.groups:
            if element.group in deform_groups:
                vertex.append(i)
                group.append(element.group)
                weight.append(element.weight)
    return np.array(vertex, dtype=np.int64), np.array(group, dtype=np.int64), np.array(weight)


def owned_points(rig, bone_names) -> dict[str, np.ndarray]:
    """{bone: (V, 3) bind-pose positions of the vertices it moves most (weight ≥ MIN_WEIGHT),
    in the bone's rest frame}, over every mesh the rig deforms."""
    wanted = set(bone_names)
    found: dict[str, list] = {name: [] for name in bone_names}
    to_rig = np.array(rig.matrix_world.inverted())
    for mesh_ob in skinned_meshes(rig):
        deform_groups = {g.index: g.name for g in mesh_ob.vertex_groups
                         if g.name in rig.data.bones and rig.data.bones[g.name].use_deform}
        if not deform_groups.keys() & {g.index for g in mesh_ob.vertex_groups
                                       if g.name in wanted}:
            continue
        count = len(mesh_ob.data.vertices)
        co = np.empty(3 * count)
        mesh_ob.data.vertices.foreach_get("co", co)
        matrix = to_rig @ np.array(mesh_ob.matrix_world)
        points = co.reshape(count, 3) @ matrix[:3, :3].T + matrix[:3, 3]
        owner, strongest = strongest_bone(*_weight_elements(mesh_ob, deform_groups), count)
        for index, name in deform_groups.items():
            if name not in wanted:
                continue
            mine = owned_vertices(owner, strongest, index)
            if mine.size:
                rest = np.linalg.inv(np.array(rig.data.bones[name].matrix_local))
                found[name].append(points[mine] @ rest[:3, :3].T + rest[:3, 3])
    return {name: np.concatenate(parts) if parts else np.zeros((0, 3))
            for name, parts in found.items()}
