"""Write once: cloth bone keys into a new action on the armature's own ``Waft Cloth`` track,
and (optionally) the simulated cage as an animated mesh for viewing.

Same bulk F-curve path and the same stash of the user's action as the strands
(``addon/writing.py``): the user's active action moves to ``Waft: original`` and is restored
by ``clear_armature`` once no Waft result is left on the armature.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from .. import compat, rest_channels
from .. import writing as shared_writing
from ..nla import (
    add_result_track,
    clear_held_track,
    held_values,
    key_channels,
    new_result_action,
    remove_track,
    write_held_track,
)
from ..sampling import user_channels


@dataclass(frozen=True)
class ResultTracks:
    """Where a system's bone keys go on an armature.

    ``rest``: under ``track``, one held key per location/rotation channel of a driven bone that
    no user action animates (as the strands' ``Waft: rest``, addon/rest_channels.py): Blender
    leaves unanimated channels at their last evaluated value, so without it muting ``track``, or
    frames outside the bake, would show stale baked values instead of the user's static pose.
    """

    track: str
    rest: str
    prefix: str  # action names: prefix + armature name (+ "|rest")


CLOTH = ResultTracks("Waft Cloth", "Waft Cloth: rest", "Waft Cloth|")
ROD = ResultTracks("Waft Rod", "Waft Rod: rest", "Waft Rod|")
TRACK, REST_TRACK, ACTION_PREFIX = CLOTH.track, CLOTH.rest, CLOTH.prefix
CAGE_SUFFIX = " Waft"


def write_location(container, pose_bone, frames: np.ndarray, location: np.ndarray) -> int:
    """Key one bone's location on every frame (bulk ``foreach_set``, LINEAR)."""
    path = f'pose.bones["{bpy.utils.escape_identifier(pose_bone.name)}"].location'
    return key_channels(container, path, pose_bone.name, frames, location)


def static_channels(ob, bone_names, tracks: ResultTracks = CLOTH
                    ) -> list[tuple[str, int, float, str]]:
    """(data_path, index, value, bone) of the driven bones' location/rotation channels that no
    user action or driver animates; read before sampling."""
    animated = user_channels(ob)
    previous = held_values(ob, tracks.rest)
    channels = []
    for name in bone_names:
        pose_bone = ob.pose.bones[name]
        rotation, count = rest_channels.rotation_prop(pose_bone)
        for prop, size in (("location", 3), (rotation, count)):
            path = f'pose.bones["{bpy.utils.escape_identifier(name)}"].{prop}'
            current = getattr(pose_bone, prop)
            channels.extend((path, i, previous.get((path, i), current[i]), name)
                            for i in range(size) if (path, i) not in animated)
    return channels


def write_armature(ob, frames: np.ndarray, bones: dict[str, tuple[np.ndarray, np.ndarray]],
                   static=(), tracks: ResultTracks = CLOTH):
    """Replace the system's result on armature ``ob``; ``bones``: name → (location (F, 3),
    quaternions (F, 4)); ``static`` from ``static_channels``. Returns (action, F-curve count)."""
    anim_data = ob.animation_data or ob.animation_data_create()
    remove_track(ob, tracks.track)
    remove_track(ob, tracks.rest)
    shared_writing.stash_original_action(ob)
    write_held_track(ob, static, float(frames[0]),
                     tracks.prefix + ob.name + rest_channels.REST_SUFFIX, tracks.rest)
    action, slot, container = new_result_action(ob, tracks.prefix + ob.name)
    count = 0
    for name, (location, quats) in bones.items():
        pose_bone = ob.pose.bones[name]
        count += write_location(container, pose_bone, frames, location)
        count += shared_writing.write_fcurves(container, pose_bone, frames, quats)
    add_result_track(anim_data, tracks.track, action, slot, frames[0])
    return action, count


def clear_armature(ob, tracks: ResultTracks = CLOTH) -> bool:
    """Remove the system's tracks and actions; give the user's action back when no other Waft
    result (strands, ragdoll, ...) still sits on the armature."""
    anim_data = ob.animation_data
    if anim_data is None:
        return False
    removed = remove_track(ob, tracks.track)
    clear_held_track(ob, tracks.rest)
    if not removed or shared_writing.results_left(anim_data):
        return removed
    shared_writing.restore_original_action(ob)
    return True


def remove_cage_output(cage) -> bool:
    output = cage.waft_cloth.cage_output
    if output is None:
        return False
    mesh = output.data
    key = mesh.shape_keys
    action = key.animation_data.action if key is not None and key.animation_data else None
    bpy.data.objects.remove(output)
    if mesh.users == 0:
        bpy.data.meshes.remove(mesh)
    if action is not None and action.users == 0:
        bpy.data.actions.remove(action)
    cage.waft_cloth.cage_output = None
    return True


def write_cage_output(cage, frames: np.ndarray, positions: np.ndarray):
    """A mesh object ``<cage> Waft`` playing the simulated cage (world space, Blender units):
    one shape key per frame, each keyed to 1 on its frame and 0 on its neighbours."""
    remove_cage_output(cage)
    mesh = cage.data.copy()
    mesh.name = cage.name + CAGE_SUFFIX
    output = bpy.data.objects.new(cage.name + CAGE_SUFFIX, mesh)
    for collection in cage.users_collection:
        collection.objects.link(output)
    flat = positions.astype(np.float32).reshape(len(frames), -1)
    mesh.attributes["position"].data.foreach_set("vector", flat[0])
    output.shape_key_add(name="Basis", from_mix=False)
    for i, frame in enumerate(frames):
        block = output.shape_key_add(name=f"Frame {int(frame)}", from_mix=False)
        block.data.foreach_set("co", flat[i])
    key = mesh.shape_keys
    key.use_relative = True
    anim_data = key.animation_data_create()
    action = bpy.data.actions.new(ACTION_PREFIX + output.name)
    slot, container = compat.new_fcurve_container(action, key)
    for frame in frames:
        keys = np.array([[frame - 1, 0.0], [frame, 1.0], [frame + 1, 0.0]])
        path = f'key_blocks["Frame {int(frame)}"].value'
        key_channels(container, path, "Waft Cloth", keys[:, 0], keys[:, 1:])
    anim_data.action = action
    if slot is not None and hasattr(anim_data, "action_slot"):
        anim_data.action_slot = slot
    cage.waft_cloth.cage_output = output
    return output
