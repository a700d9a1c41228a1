"""Reduce Keys on an existing bone-chain result (``waft.reduce_keys``).

The same reduction as the bake option (``core.key_reduction``: per bone the fewest LINEAR keys
whose interpolation stays within an angle of the motion at every frame, the angle derived from
the world bound, millimetres at every tail and degrees), applied to the ``Waft`` result already
in the file: each bone's rotation is read as it plays now at every frame of the strip (F-curve
evaluation, so an edited or already reduced result is taken as it is), reduced, and written
back in place. The bound holds against what the result played before the operator; reducing a
reduced result again adds at most its bound once more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.key_reduction import chain_angles, chain_reach, kept_frames
from .. import compat
from ..nla import linear_value
from ..sampling import WAFT_TRACK
from .reading import chain_bone_runs

ROTATION_PROPS = {"rotation_quaternion": 4, "rotation_axis_angle": 4, "rotation_euler": 3}


@dataclass(frozen=True)
class ReduceReport:
    bones: int
    keys_before: int
    keys_after: int

    def summary(self, name: str) -> str:
        share = self.keys_after / max(self.keys_before, 1)
        return (f"'{name}': {self.keys_after} of {self.keys_before} rotation keys kept "
                f"({share:.0%}) on {self.bones} bones")


def _bone_angles(ob, max_distance: float, max_angle: float) -> dict[str, float]:
    """Per chain bone, the rotation error allowed (``core.key_reduction.chain_angles``)."""
    scale = float(np.linalg.norm(np.array(ob.matrix_world)[:3, :3], axis=0).max())
    angles = {}
    for run in chain_bone_runs(ob):
        heads = np.array([pb.bone.head_local for pb in run])
        tails = np.array([pb.bone.tail_local for pb in run])
        per_bone = chain_angles(reach=chain_reach(heads, tails),
                                max_distance=max_distance / max(scale, 1e-12),
                                max_angle=max_angle)
        angles.update(zip((pb.name for pb in run), (float(a) for a in per_bone), strict=True))
    return angles


def _bone_curves(fcurves) -> dict[tuple[str, str], list]:
    """(bone, rotation property) → its F-curves by array index."""
    grouped: dict[tuple[str, str], list] = {}
    for fc in fcurves:
        path = fc.data_path
        if not path.startswith('pose.bones["'):
            continue
        bone, _, prop = path[len('pose.bones["'):].rpartition('"].')
        if prop in ROTATION_PROPS:
            grouped.setdefault((bone.replace('\\"', '"'), prop), []).append(fc)
    return grouped


def reduce_result_keys(ob, *, max_distance: float, max_angle: float) -> ReduceReport | None:
    """Reduce the rotation keys of ``ob``'s ``Waft`` result in place; None without a result."""
    anim_data = ob.animation_data
    track = anim_data.nla_tracks.get(WAFT_TRACK) if anim_data is not None else None
    if track is None or not len(track.strips) or track.strips[0].action is None:
        return None
    strip = track.strips[0]
    angles = _bone_angles(ob, max_distance, max_angle)
    fcurves = compat.slot_fcurves(strip.action, getattr(strip, "action_slot", None))
    first, last = int(np.floor(strip.action_frame_start)), int(np.ceil(strip.action_frame_end))
    frames = np.arange(first, last + 1, dtype=np.float64)
    linear = linear_value()
    before = after = bones = 0
    for (bone, prop), curves in _bone_curves(fcurves).items():
        if bone not in angles or len(curves) != ROTATION_PROPS[prop]:
            continue
        curves.sort(key=lambda fc: fc.array_index)
        values = np.array([[fc.evaluate(f) for fc in curves] for f in frames])
        stored = values.astype(np.float32).astype(np.float64)
        mode = ob.pose.bones[bone].rotation_mode if prop == "rotation_euler" else (
            "QUATERNION" if prop == "rotation_quaternion" else "AXIS_ANGLE")
        keep = kept_frames(stored, mode, max_angle=angles[bone])
        co = np.empty((int(keep.sum()), 2), dtype=np.float32)
        co[:, 0] = frames[keep]
        interpolation = np.full(len(co), linear, dtype=np.int32)
        for index, fc in enumerate(curves):
            before += len(fc.keyframe_points)
            fc.keyframe_points.clear()
            fc.keyframe_points.add(len(co))
            co[:, 1] = stored[keep, index]
            fc.keyframe_points.foreach_set("co", co.ravel())
            fc.keyframe_points.foreach_set("interpolation", interpolation)
            fc.update()
            after += len(co)
        bones += 1
    return ReduceReport(bones=bones, keys_before=before, keys_after=after)
