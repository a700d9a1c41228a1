"""Write once: the baked rotations go into a NEW action on Waft's own NLA track.

Bulk path (reference/blender-api.md §1): ``fcurves.new`` + ``keyframe_points.add`` +
``foreach_set("co")`` in float32 + LINEAR interpolation + ``fc.update()``. Only the simulated
bones' rotation channels are written, in each bone's ``rotation_mode``.

NLA layout per setup, bottom to top: the user's tracks, ``Waft: original`` (the action that was
active before the first bake, moved there so it keeps a user and is not evaluated above
everything), then ``Waft`` (REPLACE). Muting ``Waft`` plays the original motion again.
"""

from __future__ import annotations

import math

import bpy
import numpy as np

from ..core.rotations import quaternion_to_axis_angle, quaternion_to_euler
from . import compat
from .nla import key_channels
from .sampling import ORIGINAL_TRACK, is_result_or_rest_track

ACTION_PREFIX = "Waft|"

def rotation_channels(mode: str, quats: np.ndarray) -> tuple[str, np.ndarray]:
    """(property name, (F, channels) values) for one bone's (F, 4) quaternions."""
    if mode == "QUATERNION":
        return "rotation_quaternion", quats
    if mode == "AXIS_ANGLE":
        return "rotation_axis_angle", quaternion_to_axis_angle(quats)
    return "rotation_euler", quaternion_to_euler(quats, mode)


def write_fcurves(container, pose_bone, frames: np.ndarray, quats: np.ndarray) -> int:
    """Key one bone's rotation on every frame; returns the number of F-curves written."""
    prop, values = rotation_channels(pose_bone.rotation_mode, quats)
    path = f'pose.bones["{bpy.utils.escape_identifier(pose_bone.name)}"].{prop}'
    return key_channels(container, path, pose_bone.name, frames, values)


def _place_strip(track, name: str, action, start: float):
    strip = track.strips.new(name, int(math.floor(start)), action)
    if strip.frame_start != start:  # keep a fractional action start where it was
        strip.frame_start_ui = start
    return strip


def stash_original_action(ob) -> None:
    """Move the user's active action to the ``Waft: original`` NLA track (keeps it a user)."""
    anim_data = ob.animation_data
    action = anim_data.action
    if action is None:
        return
    slot = compat.active_slot(anim_data)
    track = anim_data.nla_tracks.new()
    track.name = ORIGINAL_TRACK
    strip = _place_strip(track, action.name, action, action.frame_range[0])
    compat.assign_strip_slot(strip, slot)
    strip.blend_type = anim_data.action_blend_type
    strip.extrapolation = anim_data.action_extrapolation
    strip.influence = anim_data.action_influence
    ob.waft.original_action = action
    ob.waft.original_slot = slot.identifier if slot is not None else ""
    anim_data.action = None


def results_left(anim_data) -> bool:
    """Whether any Waft result or rest track (strands, cloth, rods, ragdoll) is still on it."""
    return any(is_result_or_rest_track(t.name) for t in anim_data.nla_tracks)


def restore_original_action(ob) -> bool:
    """Undo ``stash_original_action``: remove ``Waft: original`` and make the user's action
    active again (unless another action is active); whether the track was there."""
    anim_data = ob.animation_data
    original = ob.waft.original_action
    track = anim_data.nla_tracks.get(ORIGINAL_TRACK)
    if track is not None:
        anim_data.nla_tracks.remove(track)
    if original is not None and anim_data.action is None:
        anim_data.action = original
        compat.restore_active_slot(anim_data, original, ob.waft.original_slot)
    ob.waft.original_action = None
    ob.waft.original_slot = ""
    return track is not None
