"""NLA plumbing every system's writer shares: bulk LINEAR keys, result tracks, held rest tracks.

Each system keys its result into a new action on its own REPLACE track (``Waft``, ``Waft Cloth``,
``Waft Ragdoll``, ...) and keeps the user's static values of keyed channels that no user action
animates on a HOLD track under it (``… rest``, see rest_channels.py for why). Only the track and
action names differ between systems; the layout is written here once.
"""

from __future__ import annotations

import bpy
import numpy as np

from . import compat

_LINEAR = None


def linear_value() -> int:
    """The enum value of LINEAR keyframe interpolation (looked up once)."""
    global _LINEAR
    if _LINEAR is None:
        items = bpy.types.Keyframe.bl_rna.properties["interpolation"].enum_items
        _LINEAR = items["LINEAR"].value
    return _LINEAR


def key_channels(container, path: str, group: str, frames: np.ndarray,
                 values: np.ndarray) -> int:
    """One LINEAR F-curve per column of ``values`` (F, C) at ``frames``, by the bulk
    ``foreach_set`` path (reference/blender-api.md §1); returns the number of F-curves."""
    co = np.empty((len(frames), 2), dtype=np.float32)
    co[:, 0] = frames
    interpolation = np.full(len(frames), linear_value(), dtype=np.int32)
    for index in range(values.shape[1]):
        fcurve = compat.new_fcurve(container, path, index, group)
        fcurve.keyframe_points.add(len(frames))
        co[:, 1] = values[:, index]
        fcurve.keyframe_points.foreach_set("co", co.ravel())
        fcurve.keyframe_points.foreach_set("interpolation", interpolation)
        fcurve.update()
    return values.shape[1]


WAFT_SLOTS = "waft_result_slots"  # on a user's action: identifiers of the slots Waft added


def slot_marker(name: str, slot) -> str:
    """A per-slot ID property name on an action (removed with the slot, ``remove_waft_slot``)."""
    return name if slot is None else f"{name}:{slot.identifier}"


def waft_slots(action) -> list[str]:
    """Identifiers of the slots Waft added to ``action`` (Slot in Your Action)."""
    return [s for s in action.get(WAFT_SLOTS, "").split("\n") if s]


def new_result_action(ob, name: str):
    """(action, slot, F-curve container) for a system's result on ``ob``.

    A new action ``name``; with Bake Target *Slot in Your Action* (Blender 4.4+ and a user
    action stashed by the bake) a new slot of the user's own action instead, so the result
    travels with that action (append, asset libraries), played by the same NLA track."""
    original = ob.waft.original_action
    if (bpy.context.scene.waft.bake_target == 'SLOT' and compat.LAYERED_ACTIONS
            and original is not None and original.library is None):
        slot, container = compat.new_fcurve_container(original, ob, name="Waft " + ob.name)
        original[WAFT_SLOTS] = "\n".join([*waft_slots(original), slot.identifier])
        return original, slot, container
    action = bpy.data.actions.new(name)
    slot, container = compat.new_fcurve_container(action, ob)
    return action, slot, container


def remove_waft_slot(action, slot) -> bool:
    """Remove ``slot`` from ``action`` when Waft added it there (a Slot in Your Action result)
    with its per-slot markers; whether it did."""
    if slot is None or slot.identifier not in waft_slots(action):
        return False
    identifier = slot.identifier
    for key in [k for k, _value in action.items() if k.endswith(":" + identifier)]:
        del action[key]
    left = [s for s in waft_slots(action) if s != identifier]
    if left:
        action[WAFT_SLOTS] = "\n".join(left)
    else:
        del action[WAFT_SLOTS]
    action.slots.remove(slot)
    return True


def remove_track_and_orphans(anim_data, track) -> None:
    """Remove ``track`` and the actions of its strips that nothing else uses (a result in a
    slot of the user's action: that slot)."""
    played = [(strip.action, getattr(strip, "action_slot", None)) for strip in track.strips
              if strip.action is not None]
    anim_data.nla_tracks.remove(track)
    for action, slot in played:
        if remove_waft_slot(action, slot):
            continue
        if action.users == 0:
            bpy.data.actions.remove(action)


def remove_track(ob, name: str) -> bool:
    """Remove ``ob``'s NLA track ``name`` and its orphaned actions; whether it was there."""
    anim_data = ob.animation_data
    track = anim_data.nla_tracks.get(name) if anim_data is not None else None
    if track is None:
        return False
    remove_track_and_orphans(anim_data, track)
    return True


def add_result_track(anim_data, name: str, action, slot, frame: float):
    """A new top track ``name`` playing ``action`` from ``frame``: REPLACE, and extrapolation
    NOTHING so the user's animation shows outside the baked range."""
    track = anim_data.nla_tracks.new()  # new tracks go on top
    track.name = name
    strip = track.strips.new(name, int(frame), action)
    compat.assign_strip_slot(strip, slot)
    strip.blend_type = 'REPLACE'
    strip.extrapolation = 'NOTHING'
    return track


def held_values(ob, name: str) -> dict[tuple[str, int], float]:
    """(data path, index) → value held by the rest track ``name`` of the previous bake (the
    pose itself may be stale)."""
    anim_data = ob.animation_data
    track = anim_data.nla_tracks.get(name) if anim_data is not None else None
    values = {}
    if track is None:
        return values
    for strip in track.strips:
        slot = getattr(strip, "action_slot", None)
        for fcurve in compat.slot_fcurves(strip.action, slot) if strip.action else ():
            if len(fcurve.keyframe_points):
                values[(fcurve.data_path, fcurve.array_index)] = fcurve.keyframe_points[0].co[1]
    return values


def write_held_track(ob, channels, frame: float, action_name: str, name: str) -> None:
    """``channels`` ((data path, index, value, group), ...) as one key each in a new action
    ``action_name`` on a new track ``name`` (HOLD: constant at every frame)."""
    if not channels:
        return
    action = bpy.data.actions.new(action_name)
    slot, container = compat.new_fcurve_container(action, ob)
    co = np.array([frame, 0.0], dtype=np.float32)
    for path, index, value, group in channels:
        fcurve = compat.new_fcurve(container, path, index, group)
        fcurve.keyframe_points.add(1)
        co[1] = value
        fcurve.keyframe_points.foreach_set("co", co)
        fcurve.update()
    track = ob.animation_data.nla_tracks.new()
    track.name = name
    strip = track.strips.new(name, int(frame), action)
    compat.assign_strip_slot(strip, slot)
    strip.extrapolation = 'HOLD'


def clear_held_track(ob, name: str) -> bool:
    """Remove the rest track ``name`` and put its held values back on the pose."""
    values = held_values(ob, name)
    if not remove_track(ob, name):
        return False
    for (path, index), value in values.items():
        owner_path, prop = path.rsplit(".", 1)
        try:
            owner = ob.path_resolve(owner_path)
        except ValueError:  # the bone (or constraint) was renamed or removed since the bake
            continue
        if isinstance(getattr(owner, prop), float):  # a constraint's influence
            setattr(owner, prop, value)
        else:
            getattr(owner, prop)[index] = value
    return True
