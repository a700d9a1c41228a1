"""Read a character's skin for ``waft.fit_colliders``: which bind-pose vertices each bone moves
most, in that bone's rest frame (``core.collider_fit`` fits the capsules)."""

from __future__ import annotations

import numpy as np

from ..core.collider_fit import MIN_WEIGHT


def skinned_meshes(rig) -> list:
    """Mesh objects an Armature modifier deforms with ``rig``."""
    import bpy

    return [ob for ob in bpy.data.objects if ob.type == 'MESH' and any(
        m.type == 'ARMATURE' and m.object == rig for m in ob.modifiers)]


def _strongest_bone(mesh_ob, deform_groups: dict[int, str]) -> tuple[list, np.ndarray]:
    """Per vertex: the deforming bone with the largest weight (None) and that weight."""
    owner, weight = [], np.zeros(len(mesh_ob.data.vertices))
    for i, vertex in enumerate(mesh_ob.data.vertices):
        best, best_weight = None, 0.0
        for element in vertex.groups:
            name = deform_groups.get(element.group)
            if name is not None and element.weight > best_weight:
                best, best_weight = name, element.weight
        owner.append(best)
        weight[i] = best_weight
    return owner, weight


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
        owner, weight = _strongest_bone(mesh_ob, deform_groups)
        owner = np.array(owner, dtype=object)
        for name in wanted & set(deform_groups.values()):
            mine = (owner == name) & (weight >= MIN_WEIGHT)
            if mine.any():
                rest = np.linalg.inv(np.array(rig.data.bones[name].matrix_local))
                found[name].append(points[mine] @ rest[:3, :3].T + rest[:3, 3])
    return {name: np.concatenate(parts) if parts else np.zeros((0, 3))
            for name, parts in found.items()}
