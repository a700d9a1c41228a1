"""Merged copy: the user's action with Waft's results written into it, for export.

A bake leaves the user's action untouched and plays the physics from Waft's own NLA tracks
(writing.py). Game exporters that take one clip per action (glTF's Actions mode, FBX's "All
Actions") then see body and physics as two clips. The merged copy is a new action, ``<action>
(Waft)``, made from a copy of the user's original action: every channel a Waft result track keys
is replaced, over the frames that track plays, by the result's keys (the user's keys of that
channel outside those frames are kept); every other channel is the user's, bitwise (same keys,
same modifiers). Its manual frame range is the baked range, so an exporter takes exactly the
baked clip; a Loop bake also gets a Cycles modifier on the baked channels and a cyclic range.

The user's action, the NLA tracks and the pose are not changed. Copies are found again by two
custom properties (which armature, which original action), so a re-bake replaces its copy and
copies made for other actions of the same armature (a walk, then a run) stay for the export.
"""

from __future__ import annotations

import bpy
import numpy as np

from . import compat
from .nla import remove_waft_slot, waft_slots
from .sampling import is_result_track

FOR_OBJECT = "waft_merged_for"  # custom property on a merged copy: the armature's name
FROM_ACTION = "waft_merged_from"  # …and the original action's name ('' when there was none)
SUFFIX = " (Waft)"

KEY_FLOAT2 = ("co", "handle_left", "handle_right")
KEY_ENUM = ("interpolation", "handle_left_type", "handle_right_type", "easing")


def merged_copies(ob) -> list:
    """The merged copies made for ``ob``, by name."""
    return sorted((a for a in bpy.data.actions if a.get(FOR_OBJECT) == ob.name),
                  key=lambda a: a.name)


def _original(ob):
    """(the user's action the result plays over, its slot identifier): the stashed original
    after a bake, else the active action; (None, '') when the armature has none."""
    anim_data = ob.animation_data
    if ob.waft.original_action is not None:
        return ob.waft.original_action, ob.waft.original_slot
    if anim_data is not None and anim_data.action is not None:
        slot = compat.active_slot(anim_data)
        return anim_data.action, slot.identifier if slot is not None else ""
    return None, ""


def _read_keys(fcurve) -> dict[str, np.ndarray]:
    points = fcurve.keyframe_points
    n = len(points)
    keys = {}
    for name in KEY_FLOAT2:
        values = np.empty(2 * n, dtype=np.float32)
        points.foreach_get(name, values)
        keys[name] = values.reshape(n, 2)
    for name in KEY_ENUM:
        values = np.empty(n, dtype=np.int32)
        points.foreach_get(name, values)
        keys[name] = values
    return keys


def _take(keys: dict[str, np.ndarray], keep: np.ndarray) -> dict[str, np.ndarray]:
    return {name: values[keep] for name, values in keys.items()}


def _shift(keys: dict[str, np.ndarray], offset: float) -> dict[str, np.ndarray]:
    out = dict(keys)
    for name in KEY_FLOAT2:
        out[name] = keys[name].copy()
        out[name][:, 0] += np.float32(offset)
    return out


def _write_keys(fcurve, keys: dict[str, np.ndarray]) -> None:
    points = fcurve.keyframe_points
    points.add(len(keys["co"]))
    for name in KEY_FLOAT2:
        points.foreach_set(name, keys[name].ravel())
    for name in KEY_ENUM:
        points.foreach_set(name, keys[name])
    fcurve.update()


def _result_curves(anim_data):
    """(F-curve, first frame, last frame, action-to-scene frame offset) of every unmuted Waft
    result strip, bottom track first (the order NLA evaluates them, so later ones win)."""
    out = []
    for track in anim_data.nla_tracks:
        if track.mute or not is_result_track(track.name):
            continue
        for strip in track.strips:
            if strip.mute or strip.action is None:
                continue
            offset = strip.frame_start - strip.action_frame_start
            container = compat.fcurve_container(strip.action, getattr(strip, "action_slot", None))
            for fcurve in container.fcurves:
                out.append((fcurve, strip.frame_start, strip.frame_end, offset))
    return out


def _replace_existing(ob, original_name: str, new) -> None:
    """Point everything that used the previous copy for the same original at ``new``, then
    remove the previous copy (it is derived data: the bake it came from is gone)."""
    for action in list(bpy.data.actions):
        if action is new or action.get(FOR_OBJECT) != ob.name:
            continue
        if action.get(FROM_ACTION) != original_name:
            continue
        action.user_remap(new)
        bpy.data.actions.remove(action)


def merge_results(ob, *, loop: bool = False):
    """Make (or remake) the merged copy of ``ob``'s user action with its Waft results; returns
    it, or None when ``ob`` has no Waft result to merge."""
    anim_data = ob.animation_data
    if anim_data is None:
        return None
    results = _result_curves(anim_data)
    if not results:
        return None
    original, slot_identifier = _original(ob)
    if original is not None:
        copy = original.copy()
        for waft_slot in [s for s in getattr(copy, "slots", ())
                          if s.identifier in waft_slots(copy)]:
            remove_waft_slot(copy, waft_slot)  # a Slot in Your Action result: merged below
        slot = next((s for s in getattr(copy, "slots", ()) if s.identifier == slot_identifier),
                    None)
        container = compat.fcurve_container(copy, slot) if slot is not None else copy
        if slot is None and compat.LAYERED_ACTIONS:
            slot, container = compat.new_fcurve_container(copy, ob)
    else:
        copy = bpy.data.actions.new(ob.name)
        slot, container = compat.new_fcurve_container(copy, ob)
    base = original.name if original is not None else ob.name
    copy.name = base + SUFFIX
    copy.use_fake_user = True
    first = min(lo for _fc, lo, _hi, _off in results)
    last = max(hi for _fc, _lo, hi, _off in results)
    for fcurve, lo, hi, offset in results:
        baked = _shift(_read_keys(fcurve), offset)
        inside = (baked["co"][:, 0] >= lo - 1e-4) & (baked["co"][:, 0] <= hi + 1e-4)
        baked = _take(baked, inside)
        group = fcurve.group.name if fcurve.group is not None else ""
        kept = None
        existing = container.fcurves.find(fcurve.data_path, index=fcurve.array_index)
        if existing is not None:
            old = _read_keys(existing)
            outside = (old["co"][:, 0] < lo - 1e-4) | (old["co"][:, 0] > hi + 1e-4)
            kept = _take(old, outside)
            container.fcurves.remove(existing)
        if kept is not None and len(kept["co"]):
            merged = {name: np.concatenate((kept[name], baked[name])) for name in baked}
            order = np.argsort(merged["co"][:, 0], kind="stable")
            baked = _take(merged, order)
        target = compat.new_fcurve(container, fcurve.data_path, fcurve.array_index, group)
        _write_keys(target, baked)
        if loop:
            target.modifiers.new('CYCLES')
    copy.use_frame_range = True
    copy.frame_start, copy.frame_end = first, last
    copy.use_cyclic = bool(loop)
    copy[FOR_OBJECT] = ob.name
    copy[FROM_ACTION] = original.name if original is not None else ""
    _replace_existing(ob, copy[FROM_ACTION], copy)
    copy.name = base + SUFFIX  # the name the removed copy held
    return copy


def copy_slot(action, ob):
    """The slot of a merged copy that animates ``ob`` (None on 4.2, which has no slots)."""
    if not compat.LAYERED_ACTIONS:
        return None
    identifier = _original(ob)[1]
    for slot in action.slots:
        if slot.identifier == identifier:
            return slot
    objects = [s for s in action.slots if s.target_id_type == 'OBJECT']
    return objects[0] if objects else None


def merge_baked(armatures, *, loop: bool) -> list[str]:
    """Merge every armature of ``armatures`` that has a Waft result; the copies' names."""
    made = [merge_results(ob, loop=loop) for ob in armatures]
    return [copy.name for copy in made if copy is not None]
