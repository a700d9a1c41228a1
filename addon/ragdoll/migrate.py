"""Files saved before a body's per-frame settings moved onto the pose bone.

Earlier versions kept them in ``PoseBone.waft_ragdoll.<name>`` (where Insert Keyframe cannot
make a path); now they are ``PoseBone.waft_ragdoll_<name>`` (``properties.ANIMATED_BODY_SETTINGS``).
When a file is opened (``load_post``) the stored values move to the bone's own property and
every F-curve or driver on an old path is renamed, so a keyed blend or death switch keeps
playing. A file without old data is left untouched.
"""

from __future__ import annotations

import re

import bpy

from .. import compat
from .properties import ANIMATED_BODY_SETTINGS, BONE_PREFIX, MODE_VALUES

_OLD_PATH = re.compile(r'^(pose\.bones\["(?:[^"\\]|\\.)*"\])\.waft_ragdoll\.('
                       + "|".join(ANIMATED_BODY_SETTINGS) + r")$")
_MODE_NAMES = {value: name for name, value in MODE_VALUES.items()}


def new_path(data_path: str) -> str | None:
    """The current path of an old per-frame body setting path, else None."""
    m = _OLD_PATH.match(data_path)
    return f"{m.group(1)}.{BONE_PREFIX}{m.group(2)}" if m else None


def _move_values(ob) -> int:
    moved = 0
    for pose_bone in ob.pose.bones:
        group = pose_bone.waft_ragdoll
        for name in ANIMATED_BODY_SETTINGS:
            value = group.get(name)
            if value is None:
                continue
            if name == "mode":
                value = _MODE_NAMES.get(int(value), "DRIVEN")
            setattr(pose_bone, BONE_PREFIX + name, value)
            del group[name]
            moved += 1
    return moved


def _rename(fcurves) -> int:
    renamed = 0
    for fcurve in fcurves:
        path = new_path(fcurve.data_path)
        if path is not None:
            fcurve.data_path = path
            renamed += 1
    return renamed


def migrate(data) -> int:
    """Move old values and rename old paths in ``data`` (``bpy.data``); the number changed."""
    changed = 0
    for ob in data.objects:
        if ob.type == 'ARMATURE' and ob.pose is not None:
            changed += _move_values(ob)
        if ob.animation_data is not None:
            changed += _rename(ob.animation_data.drivers)
    for action in data.actions:
        changed += _rename(compat.action_fcurves(action))
    return changed


@bpy.app.handlers.persistent
def _on_load(*_args) -> None:
    migrate(bpy.data)


def register() -> None:
    bpy.app.handlers.load_post.append(_on_load)


def unregister() -> None:
    if _on_load in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(_on_load)
