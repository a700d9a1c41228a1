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
from .. import writing as strand_writing
from ..sampling import is_result_or_rest_track, user_paths


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
    return _write_channels(container, path, pose_bone.name, frames, location)


def _write_channels(container, path: str, group: str, frames, values) -> int:
    co = np.empty((len(frames), 2), dtype=np.float32)
    co[:, 0] = frames
    interpolation = np.full(len(frames), strand_writing._linear_value(), dtype=np.int32)
    for index in range(values.shape[1]):
        fcurve = compat.new_fcurve(container, path, index, group)
        fcurve.keyframe_points.add(len(frames))
        co[:, 1] = values[:, index]
        fcurve.keyframe_points.foreach_set("co", co.ravel())
        fcurve.keyframe_points.foreach_set("interpolation", interpolation)
        fcurve.update()
    return values.shape[1]


def remove_track(ob, name: str = TRACK) -> bool:
    anim_data = ob.animation_data
    track = anim_data.nla_tracks.get(name) if anim_data is not None else None
    if track is None:
        return False
    strand_writing._remove_track_and_orphans(anim_data, track)
    return True


def _rest_values(ob, tracks: ResultTracks) -> dict[tuple[str, int], float]:
    """The static values the previous bake's rest track holds (the pose itself may be stale)."""
    anim_data = ob.animation_data
    track = anim_data.nla_tracks.get(tracks.rest) if anim_data is not None else None
    values = {}
    for strip in (track.strips if track is not None else ()):
        for fcurve in compat.action_fcurves(strip.action) if strip.action else ():
            if len(fcurve.keyframe_points):
                values[(fcurve.data_path, fcurve.array_index)] = fcurve.keyframe_points[0].co[1]
    return values


def static_channels(ob, bone_names, tracks: ResultTracks = CLOTH
                    ) -> list[tuple[str, int, float, str]]:
    """(data_path, index, value, bone) of the driven bones' location/rotation channels that no
    user action or driver animates; read before sampling."""
    animated = user_paths(ob)
    previous = _rest_values(ob, tracks)
    channels = []
    for name in bone_names:
        pose_bone = ob.pose.bones[name]
        rotation, count = rest_channels.rotation_prop(pose_bone)
        for prop, size in (("location", 3), (rotation, count)):
            path = f'pose.bones["{bpy.utils.escape_identifier(name)}"].{prop}'
            if path in animated:
                continue
            current = getattr(pose_bone, prop)
            channels.extend((path, i, previous.get((path, i), current[i]), name)
                            for i in range(size))
    return channels


def _write_rest(ob, channels, frame: float, tracks: ResultTracks) -> None:
    if not channels:
        return
    action = bpy.data.actions.new(tracks.prefix + ob.name + rest_channels.REST_SUFFIX)
    slot, container = compat.new_fcurve_container(action, ob)
    co = np.array([frame, 0.0], dtype=np.float32)
    for path, index, value, group in channels:
        fcurve = compat.new_fcurve(container, path, index, group)
        fcurve.keyframe_points.add(1)
        co[1] = value
        fcurve.keyframe_points.foreach_set("co", co)
        fcurve.update()
    track = ob.animation_data.nla_tracks.new()
    track.name = tracks.rest
    strip = track.strips.new(tracks.rest, int(frame), action)
    compat.assign_strip_slot(strip, slot)
    strip.extrapolation = 'HOLD'


def _clear_rest(ob, tracks: ResultTracks) -> None:
    values = _rest_values(ob, tracks)
    if not remove_track(ob, tracks.rest):
        return
    for (path, index), value in values.items():
        try:
            ob.path_resolve(path)[index] = value
        except ValueError:  # the bone was renamed or removed since the bake
            continue


def write_armature(ob, frames: np.ndarray, bones: dict[str, tuple[np.ndarray, np.ndarray]],
                   static=(), tracks: ResultTracks = CLOTH):
    """Replace the system's result on armature ``ob``; ``bones``: name → (location (F, 3),
    quaternions (F, 4)); ``static`` from ``static_channels``. Returns (action, F-curve count)."""
    anim_data = ob.animation_data or ob.animation_data_create()
    remove_track(ob, tracks.track)
    remove_track(ob, tracks.rest)
    strand_writing.stash_original_action(ob)
    _write_rest(ob, static, float(frames[0]), tracks)
    action = bpy.data.actions.new(tracks.prefix + ob.name)
    slot, container = compat.new_fcurve_container(action, ob)
    count = 0
    for name, (location, quats) in bones.items():
        pose_bone = ob.pose.bones[name]
        count += write_location(container, pose_bone, frames, location)
        count += strand_writing.write_fcurves(container, pose_bone, frames, quats)
    track = anim_data.nla_tracks.new()  # new tracks go on top
    track.name = tracks.track
    strip = track.strips.new(tracks.track, int(frames[0]), action)
    compat.assign_strip_slot(strip, slot)
    strip.blend_type = 'REPLACE'
    strip.extrapolation = 'NOTHING'
    return action, count


def _other_results(anim_data) -> bool:
    return any(is_result_or_rest_track(t.name)
               for t in anim_data.nla_tracks)


def clear_armature(ob, tracks: ResultTracks = CLOTH) -> bool:
    """Remove the system's tracks and actions; give the user's action back when no other Waft
    result (strands, ragdoll, ...) still sits on the armature."""
    anim_data = ob.animation_data
    if anim_data is None:
        return False
    removed = remove_track(ob, tracks.track)
    _clear_rest(ob, tracks)
    if not removed or _other_results(anim_data):
        return removed
    original = ob.waft.original_action
    track = anim_data.nla_tracks.get(strand_writing.ORIGINAL_TRACK)
    if track is not None:
        anim_data.nla_tracks.remove(track)
    if original is not None and anim_data.action is None:
        anim_data.action = original
        compat.restore_active_slot(anim_data, original, ob.waft.original_slot)
    ob.waft.original_action = None
    ob.waft.original_slot = ""
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
        _write_channels(container, path, "Waft Cloth", keys[:, 0], keys[:, 1:])
    anim_data.action = action
    if slot is not None and hasattr(anim_data, "action_slot"):
        anim_data.action_slot = slot
    cage.waft_cloth.cage_output = output
    return output
