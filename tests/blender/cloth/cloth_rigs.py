"""Cloth test rigs built with bpy as a user would: an armature with a ``Root`` bone, a hanging
quad grid (the cage) skinned to ``Root`` with its top row in the ``Pin`` group, made a Waft
cloth setup with the ``waft.cloth_add`` operator. Results are read back by playing the scene."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import waft_rigs as rigs  # noqa: E402

ROOT = rigs.ROOT
TOP = 2.0  # z of the cage's pinned top row


def grid_cage(scene, name: str = "Cage", *, rows: int = 5, columns: int = 6,
              spacing: float = 0.1, top: float = TOP):
    """A vertical rows × columns quad grid in the XZ plane hanging from z = ``top``."""
    verts = [((c - (columns - 1) / 2) * spacing, 0.0, top - r * spacing)
             for r in range(rows) for c in range(columns)]
    faces = [(r * columns + c, r * columns + c + 1, (r + 1) * columns + c + 1,
              (r + 1) * columns + c) for r in range(rows - 1) for c in range(columns - 1)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], faces)
    mesh.update()
    ob = bpy.data.objects.new(name, mesh)
    scene.collection.objects.link(ob)
    return ob


def skin_to(cage, rig, bone: str = ROOT, *, pinned_rows: int = 1, columns: int = 6) -> None:
    """Weight every vertex to ``bone`` (Armature modifier) and pin the first rows."""
    n = len(cage.data.vertices)
    cage.vertex_groups.new(name=bone).add(list(range(n)), 1.0, 'REPLACE')
    cage.vertex_groups.new(name="Pin").add(list(range(pinned_rows * columns)), 1.0, 'REPLACE')
    modifier = cage.modifiers.new("Armature", 'ARMATURE')
    modifier.object = rig


def cloth_rig(scene, *, rows: int = 5, columns: int = 6, spacing: float = 0.1,
              column_step: int = 2, rotation_mode: str = "QUATERNION"):
    """(rig, cage): a Root bone and a skinned cage driving bones created on its grid."""
    rig = rigs.new_armature(scene, "Rig", [{"name": ROOT, "head": (0.0, 0.0, TOP + 0.2),
                                            "tail": (0.0, 0.0, TOP)}])
    cage = grid_cage(scene, rows=rows, columns=columns, spacing=spacing)
    skin_to(cage, rig, columns=columns)
    make_setup(cage, rig, column_step=column_step)
    for item in cage.waft_cloth.bones:
        rig.pose.bones[item.bone].rotation_mode = rotation_mode
    return rig, cage


def make_setup(cage, rig, **kwargs) -> None:
    view_layer = bpy.context.view_layer
    for ob in view_layer.objects:
        ob.select_set(False)
    rig.select_set(True)
    cage.select_set(True)
    view_layer.objects.active = cage
    result = bpy.ops.waft.cloth_add(**kwargs)
    assert result == {'FINISHED'}, result


def key_root(rig, frames, location, *, interpolation: str = "LINEAR") -> None:
    rigs.key_root_location(rig, frames, location, interpolation=interpolation)


def bone_worlds(scene, rig, names, frames) -> np.ndarray:
    """(F, B, 4, 4) world matrices of pose bones, by playing the scene."""
    out = np.empty((len(frames), len(names), 4, 4))
    for i, frame in enumerate(frames):
        scene.frame_set(frame)
        world = np.array(rig.matrix_world)
        for b, name in enumerate(names):
            out[i, b] = world @ np.array(rig.pose.bones[name].matrix)
    return out


def cloth_fcurves(rig) -> dict:
    """{(data_path, index): (F, 2) keyframe co} of the rig's ``Waft Cloth`` action."""
    track = rig.animation_data.nla_tracks["Waft Cloth"]
    action = track.strips[0].action
    return {(fc.data_path, fc.array_index): np.array([k.co for k in fc.keyframe_points])
            for fc in rigs.action_fcurves(action)}


def action_keys(action) -> dict:
    return {(fc.data_path, fc.array_index): [tuple(k.co) for k in fc.keyframe_points]
            for fc in rigs.action_fcurves(action)}
