"""Write once: the baked rotations go into a NEW action on Waft's own NLA track.

Bulk path (reference/blender-api.md §1): ``fcurves.new`` + ``keyframe_points.add`` +
``foreach_set("co")`` in float32 + LINEAR interpolation + ``fc.update()``. Only the simulated
bones' rotation channels are written, in each bone's ``rotation_mode``.

NLA layout per setup, bottom to top: the user's tracks, ``Waft: original`` (the action that was
active before the first bake, moved there so it keeps a user and is not evaluated above
everything), then ``Waft`` (REPLACE). Muting ``Waft`` plays the original motion again.

An active action is evaluated at the scene time directly (its F-curves' own extrapolation and
modifiers: a run cycle's Cycles modifier repeats it forever), while an NLA strip plays only its
frame range and holds outside it. So the stash strip spans from frame 0 (or the earliest
negative frame the action or scene uses) to STASH_SPAN frames past everything the action and
the scene cover, action time = scene time (scale 1, one repeat): the strip then evaluates the
action exactly as the active action did, bitwise, also at sub-frame times.
"""

from __future__ import annotations

import math

import bpy
import numpy as np

from ..core.key_reduction import kept_frames
from ..core.rotations import quaternion_to_axis_angle, quaternion_to_euler
from . import compat
from .nla import key_channels
from .reading import scene_range
from .sampling import ORIGINAL_TRACK, is_result_or_rest_track

ACTION_PREFIX = "Waft|"

def rotation_channels(mode: str, quats: np.ndarray) -> tuple[str, np.ndarray]:
    """(property name, (F, channels) values) for one bone's (F, 4) quaternions."""
    if mode == "QUATERNION":
        return "rotation_quaternion", quats
    if mode == "AXIS_ANGLE":
        return "rotation_axis_angle", quaternion_to_axis_angle(quats)
    return "rotation_euler", quaternion_to_euler(quats, mode)


def write_fcurves(container, pose_bone, frames: np.ndarray, quats: np.ndarray, *,
                  max_angle: float | None = None, keys: list | None = None) -> int:
    """Key one bone's rotation on every frame, or with ``max_angle`` (radians) only on the
    frames key reduction keeps (``core.key_reduction``: interpolating the stored float32
    channels stays within that angle of every frame); returns the number of F-curves written.
    ``keys``: gets (keys written, keys of a key on every frame) appended."""
    prop, values = rotation_channels(pose_bone.rotation_mode, quats)
    if max_angle is not None:
        stored = values.astype(np.float32).astype(np.float64)  # what the F-curves will hold
        keep = kept_frames(stored, pose_bone.rotation_mode, max_angle=max_angle)
        frames, values = frames[keep], values[keep]
    if keys is not None:
        keys.append((len(frames) * values.shape[1], len(quats) * values.shape[1]))
    path = f'pose.bones["{bpy.utils.escape_identifier(pose_bone.name)}"].{prop}'
    return key_channels(container, path, pose_bone.name, frames, values)


STASH_SPAN = 100_000  # frames the stash strip reaches beyond the action's and scene's ends
KEYED_AFTER_BAKE = "Keyed after bake"  # the track of an action made active after a bake


# Blender's frame limits (MINAFRAMEF / MAXFRAMEF): the range an F-modifier gives an action.
MIN_FRAME, MAX_FRAME = -1048574.0, 1048574.0


def plays_through_nla(anim_data) -> bool:
    """Whether Blender evaluates ``anim_data`` through its NLA stack: NLA evaluation on and a
    track it would evaluate (not muted, with a strip). Only then does the active action blend
    over the stack with its blend type, influence and extrapolation; otherwise it plays
    directly, at full influence over its whole F-curves (those settings are ignored)."""
    return anim_data.use_nla and any(not track.mute and len(track.strips)
                                     for track in anim_data.nla_tracks)


def key_range(action) -> tuple[float, float]:
    """The frames over which the NLA plays an active action (the range Blender gives its
    implicit strip: every F-curve's first to last key, widened by the last F-modifier of each:
    a Limits modifier to its frame limits, a Cycles modifier to the frame limits on each side it
    repeats, any other to both). At least one frame long."""
    lo, hi, found = 999999999.0, -999999999.0, False  # (Blender's starting values)
    for fcurve in compat.action_fcurves(action):
        keys = fcurve.keyframe_points
        if len(keys):
            lo, hi, found = min(lo, keys[0].co[0]), max(hi, keys[-1].co[0]), True
        if len(fcurve.modifiers):
            found = True
            last = fcurve.modifiers[-1]
            if last.type == 'LIMITS':
                lo = min(lo, last.min_x) if last.use_min_x else lo
                hi = max(hi, last.max_x) if last.use_max_x else hi
            elif last.type == 'CYCLES':
                lo = MIN_FRAME if last.mode_before != 'NONE' else lo
                hi = MAX_FRAME if last.mode_after != 'NONE' else hi
            else:
                lo, hi = MIN_FRAME, MAX_FRAME
    if not found:
        return 0.0, 1.0
    lo, hi = max(lo, MIN_FRAME), min(hi + 1.0 if hi == lo else hi, MAX_FRAME)
    return lo, hi if hi > lo else lo + 1.0


def _stash_strip(track, action, slot, anim_data, scene):
    """A strip on ``track`` playing ``action`` as the active action plays it (module doc).

    Played directly (``plays_through_nla`` false: no NLA track that plays), the action is
    evaluated at full influence, replacing, at every frame: the strip is REPLACE, influence 1,
    over the whole span. Over an NLA stack it blends with the active action's blend type and
    influence (a constant key on the strip's animated influence: a strip's plain influence is
    ignored) and plays only where its extrapolation says: Hold everywhere, Hold Forward from the
    first frame of its ``key_range``, Nothing over that range."""
    first, last = action.frame_range
    # From frame 0 (or the earliest negative frame in use): Blender evaluates a strip at
    # strip start + (scene time - strip start) in float32, exact for a start of 0 but off by up
    # to 0.008 frames at sub-frame times for a start 100,000 frames back (sub-frame sampling
    # of a re-bake must read what the first bake read from the active action).
    played = scene_range(scene)
    lo = min(0, math.floor(first), scene.frame_start, played[0])
    hi = math.ceil(max(last, scene.frame_end, played[1])) + STASH_SPAN
    blended = plays_through_nla(anim_data)
    extrapolation = anim_data.action_extrapolation if blended else 'HOLD'
    if extrapolation != 'HOLD':
        start, end = key_range(action)
        if start > lo:  # (a range reaching further back plays everywhere the span does)
            lo = start
        elif extrapolation == 'HOLD_FORWARD':
            extrapolation = 'HOLD'
        if extrapolation == 'NOTHING':
            hi = min(hi, end)
    strip = track.strips.new(action.name, int(first), action)
    compat.assign_strip_slot(strip, slot)
    strip.use_sync_length = False
    # Widen the action range first (the strip's end follows it), then move the start.
    strip.action_frame_end = hi
    strip.frame_end_ui = hi
    strip.action_frame_start = lo
    strip.frame_start_ui = lo
    strip.scale = 1.0
    strip.repeat = 1.0
    strip.blend_type = anim_data.action_blend_type if blended else 'REPLACE'
    strip.extrapolation = 'NOTHING' if extrapolation != 'HOLD' else 'HOLD'
    if blended and anim_data.action_influence != 1.0:
        strip.use_animated_influence = True  # (Blender keys the influence once)
        strip.influence = anim_data.action_influence
        influence = strip.fcurves.find("influence")
        for key in influence.keyframe_points:
            key.co[1] = anim_data.action_influence
        influence.update()
    return strip


def stash_original_action(ob, scene=None) -> str | None:
    """Move the user's active action under Waft's results, where it plays exactly as before.

    First bake: onto the ``Waft: original`` track (recorded in ``ob.waft.original_action``, so
    Clear makes exactly it active again). A re-bake after *Edit Original* finds that same action
    active and only deactivates it (it is already stashed). A re-bake that finds another action
    (keys made after the bake, which Blender puts into a new action) puts it on a user track
    ``Keyed after bake`` above the original, with the active action's blend settings, so the
    animation plays as it did and nothing is lost; returns that track's name then."""
    scene = bpy.context.scene if scene is None else scene
    anim_data = ob.animation_data
    action = anim_data.action
    if action is None:
        return None
    slot = compat.active_slot(anim_data)
    original = ob.waft.original_action
    stashed = anim_data.nla_tracks.get(ORIGINAL_TRACK)
    if stashed is not None and action == original:  # edited in place (Edit Original)
        stashed.mute = False  # (muted while the action was active: edit_original_action)
        anim_data.action = None
        return None
    name = ORIGINAL_TRACK if stashed is None else KEYED_AFTER_BAKE
    track = anim_data.nla_tracks.new()
    track.name = name
    _stash_strip(track, action, slot, anim_data, scene)
    if stashed is None:
        ob.waft.original_action = action
        ob.waft.original_slot = slot.identifier if slot is not None else ""
    anim_data.action = None
    return None if stashed is None else track.name


def edit_original_action(ob) -> bool:
    """Make the stashed original action active again for editing (it stays on its track, muted
    meanwhile, so a re-bake finds it, only deactivates it and unmutes the track); whether there
    was one."""
    anim_data = ob.animation_data
    original = ob.waft.original_action
    if anim_data is None or original is None or anim_data.action == original:
        return False
    if anim_data.action is not None:  # keys made after the bake: keep them on a track
        stash_original_action(ob)
    anim_data.action = original
    compat.restore_active_slot(anim_data, original, ob.waft.original_slot)
    stashed = anim_data.nla_tracks.get(ORIGINAL_TRACK)
    if stashed is not None:
        # Active, the action plays from there: its strip would play it a second time (added
        # twice with Add or Combine, or blended in twice below influence 1).
        stashed.mute = True
    return True


def results_left(anim_data) -> bool:
    """Whether any Waft result or rest track (strands, cloth, rods, ragdoll) is still on it."""
    return any(is_result_or_rest_track(t.name) for t in anim_data.nla_tracks)


def restore_original_action(ob, scene=None) -> bool:
    """Undo ``stash_original_action``: remove ``Waft: original`` and make exactly the action the
    first bake found active again. An action made active since (keys inserted after the bake)
    is not dropped: it goes onto a ``Keyed after bake`` track, where it keeps a user. Whether
    the track was there."""
    anim_data = ob.animation_data
    original = ob.waft.original_action
    track = anim_data.nla_tracks.get(ORIGINAL_TRACK)
    later = anim_data.action
    if original is not None and later is not None and later != original:
        keep = anim_data.nla_tracks.new()
        keep.name = KEYED_AFTER_BAKE
        _stash_strip(keep, later, compat.active_slot(anim_data), anim_data,
                     bpy.context.scene if scene is None else scene)
        anim_data.action = None
    if track is not None:
        anim_data.nla_tracks.remove(track)
    if original is not None and anim_data.action is None:
        anim_data.action = original
        compat.restore_active_slot(anim_data, original, ob.waft.original_slot)
    ob.waft.original_action = None
    ob.waft.original_slot = ""
    return track is not None
