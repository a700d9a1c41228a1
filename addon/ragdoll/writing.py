"""Write once: the ragdoll's pose keys go into a NEW action on its own NLA track.

NLA layout per armature, bottom to top: the user's tracks, ``Waft: original`` (the user's action,
moved there by ``addon.writing.stash_original_action`` and shared with the other systems),
any other Waft system's tracks, ``Waft Ragdoll: rest`` (HOLD: the user's static values of baked
channels that no user action animates, so muting the result or re-sampling sees the user's
pose, not the last bake), ``Waft Ragdoll`` (REPLACE, extrapolation NOTHING, action
``Waft Ragdoll|<armature>``): a rotation per body in its ``rotation_mode`` and the root body's
location.
"""

from __future__ import annotations

import bpy
import numpy as np

from .. import compat
from .. import writing as strand_writing
from ..sampling import is_result_track, user_paths

TRACK = "Waft Ragdoll"
REST_TRACK = "Waft Ragdoll: rest"
ACTION_PREFIX = "Waft Ragdoll|"
ROTATION_PROPS = {"QUATERNION": ("rotation_quaternion", 4),
                  "AXIS_ANGLE": ("rotation_axis_angle", 4)}


def _path(pose_bone, prop: str) -> str:
    return f'pose.bones["{bpy.utils.escape_identifier(pose_bone.name)}"].{prop}'


def _channels(ob, names, root: str) -> list[tuple[str, str, int]]:
    """(bone, data path, count) of every channel the bake keys."""
    out = []
    for name in names:
        pose_bone = ob.pose.bones[name]
        prop, count = ROTATION_PROPS.get(pose_bone.rotation_mode, ("rotation_euler", 3))
        out.append((name, _path(pose_bone, prop), count))
    out.append((root, _path(ob.pose.bones[root], "location"), 3))
    return out


def _held_values(ob) -> dict[tuple[str, int], float]:
    """Static values kept on the previous bake's rest track (the pose may be stale now)."""
    anim_data = ob.animation_data
    track = anim_data.nla_tracks.get(REST_TRACK) if anim_data is not None else None
    values = {}
    if track is None:
        return values
    for strip in track.strips:
        for fcurve in compat.action_fcurves(strip.action) if strip.action else ():
            if len(fcurve.keyframe_points):
                values[(fcurve.data_path, fcurve.array_index)] = fcurve.keyframe_points[0].co[1]
    return values


def static_channels(ob, names, root: str) -> list[tuple[str, int, float, str]]:
    """(data path, index, value, bone) of keyed channels no user action animates; read before
    sampling (the values are the user's static pose)."""
    animated = user_paths(ob)
    held = _held_values(ob)
    out = []
    for bone, path, count in _channels(ob, names, root):
        if path in animated:
            continue
        current = ob.path_resolve(path)
        for index in range(count):
            out.append((path, index, held.get((path, index), current[index]), bone))
    return out


def _remove_track(ob, name: str) -> bool:
    anim_data = ob.animation_data
    track = anim_data.nla_tracks.get(name) if anim_data is not None else None
    if track is None:
        return False
    actions = [s.action for s in track.strips if s.action is not None]
    anim_data.nla_tracks.remove(track)
    for action in actions:
        if action.users == 0:
            bpy.data.actions.remove(action)
    return True


def _key_values(container, path: str, group: str, frames: np.ndarray, values: np.ndarray) -> int:
    """One LINEAR F-curve per column of ``values`` (F, C), bulk path (blender-api.md §1)."""
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


def _write_rest_track(ob, channels, frame: float) -> None:
    if not channels:
        return
    action = bpy.data.actions.new(ACTION_PREFIX + ob.name + "|rest")
    slot, container = compat.new_fcurve_container(action, ob)
    for path, index, value, group in channels:
        fcurve = compat.new_fcurve(container, path, index, group)
        fcurve.keyframe_points.add(1)
        fcurve.keyframe_points.foreach_set("co", np.array([frame, value], dtype=np.float32))
        fcurve.update()
    track = ob.animation_data.nla_tracks.new()
    track.name = REST_TRACK
    strip = track.strips.new(REST_TRACK, int(frame), action)
    compat.assign_strip_slot(strip, slot)
    strip.extrapolation = 'HOLD'


def write_ragdoll(ob, frames: np.ndarray, names, rotation: np.ndarray,
                  root_location: np.ndarray, static) -> tuple:
    """Replace the ragdoll result of ``ob``; ``rotation`` (F, N, 4) quaternions per body in
    ``names`` order (the root first), ``root_location`` (F, 3). Returns (action, F-curves)."""
    anim_data = ob.animation_data or ob.animation_data_create()
    _remove_track(ob, TRACK)
    _remove_track(ob, REST_TRACK)
    strand_writing.stash_original_action(ob)
    _write_rest_track(ob, static, float(frames[0]))
    action = bpy.data.actions.new(ACTION_PREFIX + ob.name)
    slot, container = compat.new_fcurve_container(action, ob)
    count = 0
    for b, name in enumerate(names):
        count += strand_writing.write_fcurves(container, ob.pose.bones[name], frames,
                                              rotation[:, b])
    root = ob.pose.bones[names[0]]
    count += _key_values(container, _path(root, "location"), root.name, frames, root_location)
    track = anim_data.nla_tracks.new()  # new tracks go on top
    track.name = TRACK
    strip = track.strips.new(TRACK, int(frames[0]), action)
    compat.assign_strip_slot(strip, slot)
    strip.blend_type = 'REPLACE'
    strip.extrapolation = 'NOTHING'  # outside the baked range the user's animation shows
    return action, count


def clear_ragdoll(ob) -> bool:
    """Remove the ragdoll result; put the static pose back; when no other Waft result is left,
    make the user's original action active again (as ``addon.writing.clear_setup`` does)."""
    anim_data = ob.animation_data
    if anim_data is None:
        return False
    held = _held_values(ob)
    removed = _remove_track(ob, TRACK)
    if _remove_track(ob, REST_TRACK):
        removed = True
        for (path, index), value in held.items():
            try:
                ob.path_resolve(path)[index] = value
            except ValueError:  # the bone was renamed or removed since the bake
                continue
    if not removed:
        return False
    others = [t for t in anim_data.nla_tracks if is_result_track(t.name)
              or (t.name.startswith("Waft") and t.name.endswith(": rest"))]
    if others:
        return True
    track = anim_data.nla_tracks.get(strand_writing.ORIGINAL_TRACK)
    if track is not None:
        anim_data.nla_tracks.remove(track)
    original = ob.waft.original_action
    if original is not None and anim_data.action is None:
        anim_data.action = original
        compat.restore_active_slot(anim_data, original, ob.waft.original_slot)
    ob.waft.original_action = None
    ob.waft.original_slot = ""
    return True
