"""What a live preview puts on the bones: for each simulated frame, the channel values the
bake's F-curves would hold at that frame. The bake converts a whole shot at once (quaternion
signs made continuous along the frames, Euler angles unwrapped along them); a preview gets one
frame at a time, so ``RotationTrack`` carries both from frame to frame and gives the same
values bit for bit (``core.rotations.unwrap_steps``, the bake's own unwrap rule)."""

from __future__ import annotations

import bpy
import numpy as np

from ..core.rotations import unwrap_steps
from .writing import rotation_channels


class RotationTrack:
    """One preview run's bones, frame after frame (see module doc)."""

    def __init__(self):
        self._raw: np.ndarray | None = None  # the last frame's quaternions before the signs
        self._signs: np.ndarray | None = None  # (…, 1) their signs
        self._euler: dict = {}  # (mode, bones): (last raw Euler angles, unwrap correction)

    def signed(self, raw: np.ndarray) -> np.ndarray:
        """``make_sign_continuous`` along the frames, one frame at a time: (…, 4) quaternions
        times the product of the sign flips so far."""
        if self._raw is None:
            signs = np.ones(raw.shape[:-1] + (1,))
        else:
            flips = np.sign(np.sum(raw * self._raw, axis=-1, keepdims=True))
            flips[flips == 0] = 1.0
            signs = self._signs * flips
        self._raw, self._signs = raw, signs
        return raw * signs

    def channels(self, bones: list, quats: np.ndarray) -> list:
        """``[(object, bone name, property, values), …]`` for ``bones`` ``[(object, bone
        name), …]`` and their (n, 4) sign-continuous quaternions: one conversion per rotation
        mode (a (1, n, 4) block, so nothing is unwrapped across bones)."""
        by_mode: dict = {}
        for j, (ob, name) in enumerate(bones):
            by_mode.setdefault(ob.pose.bones[name].rotation_mode, []).append(j)
        shown = []
        for mode, group in by_mode.items():
            index = np.array(group)
            prop, values = rotation_channels(mode, quats[None, index])
            values = values[0]
            if prop == "rotation_euler":
                key = (mode, tuple((bones[j][0].name, bones[j][1]) for j in group))
                values = self._unwrapped(key, values)
            shown += [(bones[j][0], bones[j][1], prop, tuple(v))
                      for j, v in zip(group, values.tolist(), strict=True)]
        return shown

    def _unwrapped(self, key, euler: np.ndarray) -> np.ndarray:
        """The bake's Euler unwrap along the frames (``quaternion_to_euler``: the running sum
        of ``unwrap_steps``), one frame at a time for the bones ``key`` names."""
        previous = self._euler.get(key)
        correction = (np.zeros_like(euler) if previous is None
                      else previous[1] + unwrap_steps(euler - previous[0]))
        self._euler[key] = (euler, correction)
        return euler if previous is None else euler + correction


def static_pose(ob, channels) -> list:
    """``[(object name, bone name, property, values), …]`` of the unanimated channels
    ``channels`` (``(data path, index, value, bone name)``, as ``rest_channels`` and the cloth
    writer list them) of armature ``ob``: what a preview puts back before each sample, so its
    own pose is never read as the animation (as the bake's rest track does). By name, not by
    reference: undo rebuilds the objects."""
    bones = ob.pose.bones
    per_bone: dict = {}
    for path, index, value, name in channels:
        prop = path.rsplit(".", 1)[1]
        per_bone.setdefault((name, prop), list(getattr(bones[name], prop)))[index] = value
    return [(ob.name, name, prop, tuple(values)) for (name, prop), values in per_bone.items()]


def restore_static(static: list) -> None:
    """Put ``static_pose`` back (found by name: also on objects undo rebuilt)."""
    objects = bpy.data.objects
    for object_name, name, prop, values in static:
        ob = objects.get(object_name)
        pose_bone = ob.pose.bones.get(name) if ob is not None and ob.pose else None
        if pose_bone is not None:
            setattr(pose_bone, prop, values)


def show(frame_pose: list) -> None:
    """Set what one simulated frame shows on the bones (hair guides, entries without an
    object, are drawn by the overlay instead)."""
    for ob, name, prop, values in frame_pose:
        if ob is not None:
            setattr(ob.pose.bones[name], prop, values)
