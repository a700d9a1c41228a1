"""The animations a ragdoll's joint limits are fitted to (*Create Waft Ragdoll* › Fit Limits To,
and the warning fix *Fit Limits to Animation*), and reading their poses the way the bake does.

A rig imported from glTF (or a Mixamo/Rigify character with several clips) carries all its
animations: one action per clip, the active one plus the others on NLA tracks, muted or
stashed. Fitting only the one playing left the Godot glTF humanoid's limits round its walk: 16
of its other 30 actions then left them (chest, hips, hands), and a user who switched clips
saw the bake clamp the limbs back inside on the first substep, a pop. A *take* is one
animation to read: the animation as it plays now over the scene's frame range, or one action
(with its slot) played alone over its own frame range.
"""

from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass

import numpy as np

from .. import compat
from ..preview import suspended
from ..sampling import is_result_or_rest_track, is_result_track, tracks_muted

RIG_ACTIONS = "RIG_ACTIONS"
CURRENT = "CURRENT"
TABLE = "NONE"

SCOPE_ITEMS = (
    (RIG_ACTIONS, "Rig's Actions",
     "Widen each joint's limits to every animation of the armature, with 10° to spare: the one "
     "playing over the scene's frame range, and each action of its NLA tracks (muted and "
     "stashed ones too) over its own frame range, so switching to another of the "
     "character's animations meets no limit either"),
    (CURRENT, "Current Animation",
     "Widen each joint's limits to the animation playing now over the scene's frame range, "
     "with 10° to spare"),
    (TABLE, "None (Table Limits)",
     "Keep the humanoid table's limits; an animation that goes past them is pushed back "
     "inside by the bake"),
)


@dataclass(frozen=True)
class Take:
    """One animation to read: ``action`` with ``slot`` (None on Blender 4.2) played alone over
    ``frames``, or, when ``action`` is None, the armature as it plays now."""

    action: object | None
    slot: object | None
    frames: tuple[int, ...]


def action_frames(action) -> tuple[int, ...]:
    """The whole frames covering ``action``'s frame range (its manual range when it has one)."""
    start, end = action.frame_range
    return tuple(range(math.floor(start), math.ceil(end) + 1))


def _strips(strips):
    for strip in strips:
        if strip.type == 'META':
            yield from _strips(strip.strips)
        elif strip.action is not None:
            yield strip


def rig_actions(ob) -> list[tuple[object, object | None]]:
    """(action, slot) of every animation of armature ``ob``: its active action and the action of
    each strip of its NLA tracks, muted or not, but Waft's own result and rest tracks; each
    once. On 4.4+ an action without a slot for ``ob`` plays nothing and is left out."""
    anim_data = ob.animation_data
    if anim_data is None:
        return []
    slotted = hasattr(anim_data, "action_slot")
    found = []
    if anim_data.action is not None:
        found.append((anim_data.action, compat.active_slot(anim_data)))
    for track in anim_data.nla_tracks:
        if not is_result_or_rest_track(track.name):
            found += [(s.action, getattr(s, "action_slot", None)) for s in _strips(track.strips)]
    seen, unique = set(), []
    for action, slot in found:
        key = (action.name, slot.identifier if slot is not None else "")
        if key not in seen and not (slotted and slot is None):
            seen.add(key)
            unique.append((action, slot))
    return unique


def fit_takes(scene, ob, scope: str) -> list[Take]:
    """The takes ``scope`` (RIG_ACTIONS, CURRENT or TABLE) fits armature ``ob``'s limits to.
    In NLA tweak mode the tweaked strip's action cannot be swapped out: only the current
    animation is read."""
    if scope == TABLE:
        return []
    current = Take(None, None, tuple(range(scene.frame_start, scene.frame_end + 1)))
    anim_data = ob.animation_data
    if scope == CURRENT or anim_data is None or anim_data.use_tweak_mode:
        return [current]
    return [current] + [Take(a, s, action_frames(a)) for a, s in rig_actions(ob)]


def is_animated(ob, scope: str) -> bool:
    """Whether ``ob`` has anything ``scope`` would read: an active action or an unmuted user
    NLA track (CURRENT), or any action of the rig (RIG_ACTIONS)."""
    anim_data = ob.animation_data
    if anim_data is None or scope == TABLE:
        return False
    if scope == RIG_ACTIONS and rig_actions(ob):
        return True
    return anim_data.action is not None or any(
        not t.mute and not is_result_or_rest_track(t.name) for t in anim_data.nla_tracks)


@contextlib.contextmanager
def played_alone(ob, action, slot):
    """While inside, armature ``ob`` plays ``action`` (its ``slot``) alone, as it would once the
    user made it the active action: the NLA stack is switched off (``AnimData.use_nla``, which
    also leaves out Waft's results and the muted/soloed state of every track, untouched), so
    the action is evaluated at full influence with its drivers and constraints. The active
    action, its slot and the slot identifier Blender remembers are given back afterwards."""
    anim_data = ob.animation_data
    slotted = hasattr(anim_data, "action_slot")
    kept_action, kept_nla = anim_data.action, anim_data.use_nla
    kept_slot = anim_data.action_slot if slotted else None
    kept_last = anim_data.last_slot_identifier if slotted else ""
    try:
        anim_data.use_nla = False
        anim_data.action = action
        if slotted:
            anim_data.action_slot = slot
        yield
    finally:
        anim_data.action = kept_action
        if slotted:
            if kept_action is not None:
                anim_data.action_slot = kept_slot
            anim_data.last_slot_identifier = kept_last
        anim_data.use_nla = kept_nla


_ATTRIBUTE = re.compile(r"^(?:(.*)\.)?([A-Za-z_][A-Za-z0-9_]*)$")  # owner.attribute
_CUSTOM = re.compile(r"^(.*)\[(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')\]$")  # owner["key"]


def _owner_and_name(ob, data_path: str):
    """(struct, attribute or custom-property key) a channel's ``data_path`` sets on ``ob``."""
    for pattern, is_key in ((_CUSTOM, True), (_ATTRIBUTE, False)):
        match = pattern.match(data_path)
        if match:
            owner = ob.path_resolve(match.group(1)) if match.group(1) else ob
            name = match.group(2)
            return owner, (name[1:-1] if is_key else name), is_key
    raise ValueError(data_path)


@contextlib.contextmanager
def channels_kept(ob, actions):
    """Give every channel of ``ob`` an F-curve of ``actions`` ((action, slot) pairs) animates
    its value from before the block back afterwards, bit for bit. Playing another of the rig's
    actions sets channels the current animation does not key (a bone the user posed by hand,
    the object's own location); going back to the frame does not undo that."""
    kept, seen = [], set()
    for action, slot in actions:
        for fc in compat.slot_fcurves(action, slot):
            if fc.data_path in seen:
                continue
            seen.add(fc.data_path)
            try:
                owner, name, is_key = _owner_and_name(ob, fc.data_path)
                value = owner[name] if is_key else getattr(owner, name)
            except (ValueError, AttributeError, KeyError, TypeError):
                continue  # a channel of a bone or property this rig does not have: never set
            if hasattr(value, "__len__") and not isinstance(value, str):
                value = value.to_list() if hasattr(value, "to_list") else list(value)
            kept.append((owner, name, is_key, value))
    try:
        yield
    finally:
        for owner, name, is_key, value in kept:
            # a read-only or since-removed property was not changed by playing either
            with contextlib.suppress(AttributeError, TypeError, ValueError):
                if is_key:
                    owner[name] = value
                else:
                    setattr(owner, name, value)


def read_poses(scene, ob, names: list[str], takes: list[Take]) -> np.ndarray:
    """(F, len(names), 4, 4) pose matrices of bones ``names`` (armature space) at every frame of
    every take, in order, read like the bake reads them: the evaluated pose after
    ``scene.frame_set``, never the live preview's, nor a ragdoll already baked over the
    animation. The scene's frame and subframe are put back."""
    index = {pb.name: i for i, pb in enumerate(ob.pose.bones)}
    rows = np.array([index[n] for n in names], dtype=int)
    flat = np.empty(len(ob.pose.bones) * 16, dtype=np.float32)
    poses = np.empty((sum(len(t.frames) for t in takes), len(names), 4, 4))
    kept = scene.frame_current, scene.frame_subframe
    row = 0
    played = rig_actions(ob) if any(t.action is not None for t in takes) else []
    with suspended(), channels_kept(ob, played):
        try:
            for take in takes:
                playing = (tracks_muted((ob,), is_result_track) if take.action is None
                           else played_alone(ob, take.action, take.slot))
                with playing:
                    for frame in take.frames:
                        scene.frame_set(frame)
                        ob.pose.bones.foreach_get("matrix", flat)
                        # column-major 4×4 blocks (reference/blender-api.md §2)
                        poses[row] = flat.reshape(-1, 4, 4)[rows].transpose(0, 2, 1)
                        row += 1
        finally:
            scene.frame_set(kept[0], subframe=kept[1])
    return poses
