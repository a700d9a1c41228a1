"""Write once: the bone chains' baked rotations go into a new action ``Waft|<object>`` on the
``Waft`` NLA track (REPLACE) above the user's animation, with the ``Waft: rest`` track under it
(rest_channels.py). The shared pieces (bulk F-curves, the stashed original action) are in
addon/writing.py and addon/nla.py."""

from __future__ import annotations

import numpy as np

from .. import rest_channels
from ..nla import add_result_track, new_result_action, remove_track
from ..sampling import WAFT_TRACK
from ..writing import (
    ACTION_PREFIX,
    restore_original_action,
    stash_original_action,
    write_fcurves,
)


def remove_waft_track(ob) -> bool:
    """Remove Waft's track and its action (when nothing else uses it)."""
    return remove_track(ob, WAFT_TRACK)


def write_setup(ob, frames: np.ndarray, bone_quats: dict[str, np.ndarray],
                static_channels=(), *, max_angles: dict[str, float] | None = None,
                keys: list | None = None) -> tuple:
    """Replace Waft's result on ``ob`` by a new action; ``bone_quats``: name → (F, 4).

    ``static_channels`` (from ``rest_channels.static_channels``, read before sampling) go on
    the ``Waft: rest`` track under ``Waft``. ``max_angles``: per bone, the key reduction's
    angle (None: a key on every frame); ``keys`` collects (written, unreduced) key counts.
    """
    anim_data = ob.animation_data or ob.animation_data_create()
    remove_waft_track(ob)
    stash_original_action(ob)
    rest_channels.write_rest_track(ob, static_channels, float(frames[0]), ACTION_PREFIX + ob.name)
    action, slot, container = new_result_action(ob, ACTION_PREFIX + ob.name)
    fcurve_count = 0
    for name, quats in bone_quats.items():
        max_angle = None if max_angles is None else max_angles[name]
        fcurve_count += write_fcurves(container, ob.pose.bones[name], frames, quats,
                                      max_angle=max_angle, keys=keys)
    add_result_track(anim_data, WAFT_TRACK, action, slot, frames[0])
    return action, fcurve_count


def clear_setup(ob) -> bool:
    """Remove Waft's track and action; the original action becomes active again."""
    anim_data = ob.animation_data
    if anim_data is None:
        return False
    removed = remove_waft_track(ob)
    removed = rest_channels.clear_rest_track(ob) or removed
    return restore_original_action(ob) or removed
