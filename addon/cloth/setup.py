"""Making a cloth setup: bones on the cage's grid or mapped to it (used by ``waft.cloth_add``).

Seed 001 places a bone on every row of the simulation grid (but the last) and on every other
column; ``create_grid_bones`` builds exactly that from a quad cage, ``map_nearest_bones`` maps
bones that already exist to the vertex nearest their head.
"""

from __future__ import annotations

import bpy
import numpy as np
from mathutils import Vector

from ...core.errors import SetupError
from . import reading, topology


def cage_grid(cage):
    """(world rest positions (N, 3), quads, edges, level) of a cage, validated."""
    co, sizes, loop_vertices = reading.mesh_arrays(cage)
    quads = topology.cage_quads(cage.name, sizes, loop_vertices)
    edges = topology.check_cage(cage.name, len(co), quads)
    pinned = reading.pinned_vertices(cage)
    level = topology.levels(len(co), edges, pinned)
    world = np.array(cage.matrix_world)
    return co @ world[:3, :3].T + world[:3, 3], quads, edges, level


def pin_parent_bone(cage, armature) -> str:
    """The bone the pinned vertices are weighted to most (their natural parent), or ''."""
    pin = cage.vertex_groups.get(cage.waft_cloth.pin_group)
    totals: dict[str, float] = {}
    bones = armature.data.bones
    for vertex in cage.data.vertices:
        groups = {g.group: g.weight for g in vertex.groups}
        if pin is None or groups.get(pin.index, 0.0) <= reading.PIN_WEIGHT:
            continue
        for index, weight in groups.items():
            name = cage.vertex_groups[index].name
            if name in bones:
                totals[name] = totals.get(name, 0.0) + weight
    if cage.parent is armature and cage.parent_type == 'BONE' and cage.parent_bone:
        return cage.parent_bone
    return max(totals, key=totals.get) if totals else ""


def create_grid_bones(cage, armature, *, parent_bone: str = "", row_step: int = 1,
                      column_step: int = 2, prefix: str = "Cloth") -> list[tuple[str, int]]:
    """New bones along the cage's columns: every ``row_step``-th row but the last, every
    ``column_step``-th column. Each column is a connected chain under ``parent_bone``.
    Returns (bone name, head vertex) pairs."""
    rest, quads, edges, level = cage_grid(cage)
    chains = topology.column_chains(quads, edges, level, rest, column_step=column_step)
    to_armature = np.linalg.inv(np.array(armature.matrix_world))
    local = rest @ to_armature[:3, :3].T + to_armature[:3, 3]
    view_layer = bpy.context.view_layer
    active, mode = view_layer.objects.active, armature.mode
    view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode='EDIT')
    pairs = []
    try:
        edit_bones = armature.data.edit_bones
        parent = edit_bones.get(parent_bone) if parent_bone else None
        for c, chain in enumerate(chains):
            previous = parent
            rows = chain[::max(int(row_step), 1)]
            for r, (head, tail) in enumerate(zip(rows[:-1], rows[1:], strict=True)):
                bone = edit_bones.new(f"{prefix}.{c:02d}.{r:02d}")
                bone.head = Vector(local[head])
                bone.tail = Vector(local[tail])
                bone.parent = previous
                bone.use_connect = previous is not None and previous is not parent
                bone.use_deform = True
                previous = bone
                pairs.append((bone.name, int(head)))
    finally:
        bpy.ops.object.mode_set(mode='OBJECT' if mode != 'EDIT' else mode)
        view_layer.objects.active = active
    return pairs


def map_nearest_bones(cage, armature, bone_names=None, *,
                      tolerance: float | None = None) -> list[tuple[str, int]]:
    """Map existing bones to the cage vertex nearest their head (world space).

    ``bone_names`` None: every bone whose head lies within ``tolerance`` (default: half the
    shortest cage edge) of a vertex. A named bone further away than that is an error."""
    rest, _quads, edges, _level = cage_grid(cage)
    if tolerance is None:
        tolerance = 0.5 * float(np.linalg.norm(rest[edges[:, 0]] - rest[edges[:, 1]],
                                               axis=1).min())
    world = np.array(armature.matrix_world)
    names = list(bone_names) if bone_names is not None else [b.name for b in armature.data.bones]
    pairs = []
    for name in names:
        bone = armature.data.bones.get(name)
        if bone is None:
            raise SetupError(f"Armature '{armature.name}' has no bone '{name}'")
        head = world[:3, :3] @ np.array(bone.head_local) + world[:3, 3]
        distance = np.linalg.norm(rest - head, axis=1)
        vertex = int(np.argmin(distance))
        if distance[vertex] <= tolerance:
            pairs.append((name, vertex))
        elif bone_names is not None:
            raise SetupError(f"Cloth cage '{cage.name}', bone '{name}': maps to no vertex (the "
                             f"nearest, {vertex}, is {distance[vertex]:.3g} away)")
    return pairs


def set_mapping(cage, pairs) -> None:
    bones = cage.waft_cloth.bones
    bones.clear()
    for name, vertex in pairs:
        item = bones.add()
        item.bone = name
        item.vertex = vertex
