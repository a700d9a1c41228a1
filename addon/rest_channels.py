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

from .nla import clear_held_track, held_values, remove_track, write_held_track
from .sampling import REST_TRACK, animated_channels

REST_SUFFIX = "|rest"

ROTATION_PROPS = {"QUATERNION": ("rotation_quaternion", 4),
                  "AXIS_ANGLE": ("rotation_axis_angle", 4)}


def rotation_prop(pose_bone) -> tuple[str, int]:
    return ROTATION_PROPS.get(pose_bone.rotation_mode, ("rotation_euler", 3))


def static_channels(ob, bone_names) -> list[tuple[str, int, float, str]]:
    """(data_path, index, value, bone name) of simulated bones' unanimated rotation channels."""
    animated = animated_channels(ob)
    previous = held_values(ob, REST_TRACK)
    channels = []
    for name in bone_names:
        pose_bone = ob.pose.bones[name]
        prop, count = rotation_prop(pose_bone)
        path = f'pose.bones["{bpy.utils.escape_identifier(name)}"].{prop}'
        current = getattr(pose_bone, prop)
        channels.extend((path, index, previous.get((path, index), current[index]), name)
                        for index in range(count) if (path, index) not in animated)
    return channels


def remove_rest_track(ob) -> bool:
    return remove_track(ob, REST_TRACK)


def write_rest_track(ob, channels, frame: float, action_name: str) -> None:
    """A one-key-per-channel action on ``Waft: rest`` (HOLD: constant at every frame)."""
    remove_rest_track(ob)
    write_held_track(ob, channels, frame, action_name + REST_SUFFIX, REST_TRACK)


def clear_rest_track(ob) -> bool:
    """Remove ``Waft: rest`` and put its static values back on the pose."""
    return clear_held_track(ob, REST_TRACK)
