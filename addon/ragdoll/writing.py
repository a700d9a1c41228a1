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
from ..sampling import FOLLOWED_TRACKS, user_channels

# The result and rest tracks; other systems sample with them playing (written first).
TRACK, REST_TRACK = FOLLOWED_TRACKS
ACTION_PREFIX = "Waft Ragdoll|"
ROTATION_PROPS = {"QUATERNION": ("rotation_quaternion", 4),
                  "AXIS_ANGLE": ("rotation_axis_angle", 4)}


def _path(pose_bone, prop: str) -> str:
    return f'pose.bones["{bpy.utils.escape_identifier(pose_bone.name)}"].{prop}'


def _channels(ob, names, located) -> list[tuple[str, str, int]]:
    """(bone, data path, count) of every channel the bake keys (``located``: the bodies keyed
    with location too)."""
    out = []
    for name in names:
        pose_bone = ob.pose.bones[name]
        prop, count = ROTATION_PROPS.get(pose_bone.rotation_mode, ("rotation_euler", 3))
        out.append((name, _path(pose_bone, prop), count))
    for name in located:
        out.append((name, _path(ob.pose.bones[name], "location"), 3))
    return out


def static_channels(ob, names, located) -> list[tuple[str, int, float, str]]:
    """(data path, index, value, bone) of keyed channels no user action animates; read before
    sampling (the values are the user's static pose)."""
    animated = user_channels(ob)
    held = held_values(ob, REST_TRACK)
    out = []
    for bone, path, count in _channels(ob, names, located):
        current = ob.path_resolve(path)
        out.extend((path, index, held.get((path, index), current[index]), bone)
                   for index in range(count) if (path, index) not in animated)
    return out


def write_ragdoll(ob, frames: np.ndarray, names, rotation: np.ndarray, located,
                  location: np.ndarray, static) -> tuple:
    """Replace the ragdoll result of ``ob``; ``rotation`` (F, N, 4) quaternions per body in
    ``names`` order (the root first), ``location`` (F, len(located), 3) of the bodies named in
    ``located`` (the root, and bodies detached from their parent bone). Returns (action,
    F-curves)."""
    anim_data = ob.animation_data or ob.animation_data_create()
    remove_track(ob, TRACK)
    remove_track(ob, REST_TRACK)
    shared_writing.stash_original_action(ob)
    write_held_track(ob, static, float(frames[0]), ACTION_PREFIX + ob.name + "|rest", REST_TRACK)
    action, slot, container = new_result_action(ob, ACTION_PREFIX + ob.name)
    count = 0
    for b, name in enumerate(names):
        count += shared_writing.write_fcurves(container, ob.pose.bones[name], frames,
                                              rotation[:, b])
    for k, name in enumerate(located):
        pose_bone = ob.pose.bones[name]
        count += key_channels(container, _path(pose_bone, "location"), name, frames,
                              location[:, k])
    add_result_track(anim_data, TRACK, action, slot, frames[0])
    return action, count


def clear_ragdoll(ob) -> bool:
    """Remove the ragdoll result; put the static pose back; when no other Waft result is left,
    make the user's original action active again (as ``addon.strands.writing.clear_setup`` does)."""
    anim_data = ob.animation_data
    if anim_data is None:
        return False
    removed = remove_track(ob, TRACK)
    if clear_held_track(ob, REST_TRACK):
        removed = True
    if not removed:
        return False
    if shared_writing.results_left(anim_data):
        return True
    shared_writing.restore_original_action(ob)
    return True
