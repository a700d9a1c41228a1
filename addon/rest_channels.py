"""Hold the user's static rotation of simulated bones that no user action animates.

Blender leaves a channel that no NLA strip animates at whatever value was evaluated last. After
a bake plays, the rotations of simulated bones the user never keyed hold baked values, so muting
the ``Waft`` track would not give the original pose back, and a re-bake would sample stale
rotations as the reference. Waft therefore keeps those channels' static values in a small action
on its own ``Waft: rest`` track under ``Waft``: with ``Waft`` muted (or while sampling) that
track plays the user's static pose. It only holds channels no user action touches, so it never
overrides the user's animation.
"""

from __future__ import annotations

import bpy
import numpy as np

from . import compat
from .sampling import REST_TRACK, animated_paths

REST_SUFFIX = "|rest"

ROTATION_PROPS = {"QUATERNION": ("rotation_quaternion", 4),
                  "AXIS_ANGLE": ("rotation_axis_angle", 4)}


def rotation_prop(pose_bone) -> tuple[str, int]:
    return ROTATION_PROPS.get(pose_bone.rotation_mode, ("rotation_euler", 3))


def _previous_values(ob) -> dict[tuple[str, int], float]:
    """Static values kept by the previous bake's rest action (the pose may be stale now)."""
    anim_data = ob.animation_data
    track = anim_data.nla_tracks.get(REST_TRACK) if anim_data is not None else None
    values = {}
    if track is None:
        return values
    for strip in track.strips:
        if strip.action is None:
            continue
        for fcurve in compat.action_fcurves(strip.action):
            if len(fcurve.keyframe_points):
                values[(fcurve.data_path, fcurve.array_index)] = fcurve.keyframe_points[0].co[1]
    return values


def static_channels(ob, bone_names) -> list[tuple[str, int, float, str]]:
    """(data_path, index, value, bone name) of simulated bones' unanimated rotation channels."""
    user_paths = animated_paths(ob)
    previous = _previous_values(ob)
    channels = []
    for name in bone_names:
        pose_bone = ob.pose.bones[name]
        prop, count = rotation_prop(pose_bone)
        path = f'pose.bones["{bpy.utils.escape_identifier(name)}"].{prop}'
        if path in user_paths:
            continue
        current = getattr(pose_bone, prop)
        for index in range(count):
            channels.append((path, index, previous.get((path, index), current[index]), name))
    return channels


def remove_rest_track(ob) -> bool:
    anim_data = ob.animation_data
    track = anim_data.nla_tracks.get(REST_TRACK) if anim_data is not None else None
    if track is None:
        return False
    actions = [s.action for s in track.strips if s.action is not None]
    anim_data.nla_tracks.remove(track)
    for action in actions:
        if action.users == 0:
            bpy.data.actions.remove(action)
    return True


def write_rest_track(ob, channels, frame: float, action_name: str) -> None:
    """A one-key-per-channel action on ``Waft: rest`` (HOLD: constant at every frame)."""
    remove_rest_track(ob)
    if not channels:
        return
    action = bpy.data.actions.new(action_name + REST_SUFFIX)
    slot, container = compat.new_fcurve_container(action, ob)
    co = np.array([frame, 0.0], dtype=np.float32)
    for path, index, value, group in channels:
        fcurve = compat.new_fcurve(container, path, index, group)
        fcurve.keyframe_points.add(1)
        co[1] = value
        fcurve.keyframe_points.foreach_set("co", co)
        fcurve.update()
    track = ob.animation_data.nla_tracks.new()
    track.name = REST_TRACK
    strip = track.strips.new(REST_TRACK, int(frame), action)
    compat.assign_strip_slot(strip, slot)
    strip.extrapolation = 'HOLD'


def clear_rest_track(ob) -> bool:
    """Remove ``Waft: rest`` and put its static values back on the pose."""
    values = _previous_values(ob)
    if not remove_rest_track(ob):
        return False
    for (path, index), value in values.items():
        try:
            ob.path_resolve(path)[index] = value
        except ValueError:  # the bone was renamed or removed since the bake
            continue
    return True
