"""A small humanoid armature (17 bones, metres, Z up, facing -Y) built with bpy, and helpers to
animate it and read the played-back pose. Shared by the ragdoll tests and bench_ragdoll.py.
"""

from __future__ import annotations

import importlib
import math

import bpy
import numpy as np
from mathutils import Euler, Vector

# name, head, tail, parent (connected when the head is the parent's tail)
HUMANOID = (
    ("hips", (0.0, 0.0, 0.95), (0.0, 0.0, 1.05), None),
    ("spine", (0.0, 0.0, 1.05), (0.0, 0.0, 1.20), "hips"),
    ("chest", (0.0, 0.0, 1.20), (0.0, 0.0, 1.40), "spine"),
    ("neck", (0.0, 0.0, 1.40), (0.0, 0.0, 1.50), "chest"),
    ("head", (0.0, 0.0, 1.50), (0.0, 0.0, 1.72), "neck"),
    ("upper_arm.L", (0.18, 0.0, 1.38), (0.46, 0.0, 1.38), "chest"),
    ("forearm.L", (0.46, 0.0, 1.38), (0.72, 0.0, 1.38), "upper_arm.L"),
    ("hand.L", (0.72, 0.0, 1.38), (0.82, 0.0, 1.38), "forearm.L"),
    ("upper_arm.R", (-0.18, 0.0, 1.38), (-0.46, 0.0, 1.38), "chest"),
    ("forearm.R", (-0.46, 0.0, 1.38), (-0.72, 0.0, 1.38), "upper_arm.R"),
    ("hand.R", (-0.72, 0.0, 1.38), (-0.82, 0.0, 1.38), "forearm.R"),
    ("thigh.L", (0.10, 0.0, 0.95), (0.10, 0.0, 0.52), "hips"),
    ("shin.L", (0.10, 0.0, 0.52), (0.10, 0.0, 0.10), "thigh.L"),
    ("foot.L", (0.10, 0.0, 0.10), (0.10, -0.15, 0.03), "shin.L"),
    ("thigh.R", (-0.10, 0.0, 0.95), (-0.10, 0.0, 0.52), "hips"),
    ("shin.R", (-0.10, 0.0, 0.52), (-0.10, 0.0, 0.10), "thigh.R"),
    ("foot.R", (-0.10, 0.0, 0.10), (-0.10, -0.15, 0.03), "shin.R"),
)
NAMES = tuple(b[0] for b in HUMANOID)


def humanoid(scene, name: str = "Dummy", *, rotation_mode: str = "QUATERNION",
             location=(0.0, 0.0, 0.0)):
    """The armature, every bone a DRIVEN body with default settings, ragdoll enabled."""
    data = bpy.data.armatures.new(name)
    ob = bpy.data.objects.new(name, data)
    ob.location = location
    scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    ob.select_set(True)
    bpy.ops.object.mode_set(mode='EDIT')
    for bone, head, tail, parent in HUMANOID:
        edit = data.edit_bones.new(bone)
        edit.head, edit.tail = head, tail
        edit.roll = 0.0
        if parent:
            edit.parent = data.edit_bones[parent]
            edit.use_connect = Vector(head) == data.edit_bones[parent].tail
    bpy.ops.object.mode_set(mode='OBJECT')
    for pb in ob.pose.bones:
        pb.rotation_mode = rotation_mode
        pb.waft_ragdoll.body = True
        pb.waft_ragdoll.radius = 0.05
    ob.pose.bones["hips"].waft_ragdoll.radius = 0.12
    ob.waft_ragdoll.enabled = True
    return ob


def set_rotation(pb, euler_xyz) -> None:
    q = Euler(euler_xyz, 'XYZ').to_quaternion()
    if pb.rotation_mode == 'QUATERNION':
        pb.rotation_quaternion = q
    elif pb.rotation_mode == 'AXIS_ANGLE':
        axis, angle = q.to_axis_angle()
        pb.rotation_axis_angle = (angle, *axis)
    else:
        pb.rotation_euler = q.to_euler(pb.rotation_mode)


def rotation_prop(pb) -> str:
    return {"QUATERNION": "rotation_quaternion",
            "AXIS_ANGLE": "rotation_axis_angle"}.get(pb.rotation_mode, "rotation_euler")


def animate_wave(ob, frames, *, amplitude: float = 0.4, period: float = 24.0,
                 travel=(0.0, 0.0, 0.0)) -> None:
    """Key arms, legs, spine and the hips' location on every ``frames``: a smooth wave.

    ``travel``: hips displacement per frame in armature space.
    """
    to_local = ob.data.bones["hips"].matrix_local.to_3x3().inverted()  # pose location is
    for frame in frames:  # in the bone's rest frame (its Y is the armature's Z)
        phase = 2.0 * math.pi * frame / period
        s = math.sin(phase)
        hips = ob.pose.bones["hips"]
        hips.location = to_local @ Vector(travel) * frame
        hips.keyframe_insert("location", frame=frame)
        poses = {
            "spine": (0.1 * s, 0.0, 0.05 * s),
            "chest": (0.1 * s, 0.05 * s, 0.0),
            "upper_arm.L": (0.0, 0.0, amplitude * s),
            "forearm.L": (0.0, 0.0, 0.5 * amplitude * (1 + s)),
            "upper_arm.R": (0.0, 0.0, -amplitude * s),
            "forearm.R": (0.0, 0.0, -0.5 * amplitude * (1 + s)),
            "thigh.L": (amplitude * s, 0.0, 0.0),
            "shin.L": (-0.5 * amplitude * (1 - s), 0.0, 0.0),
            "thigh.R": (-amplitude * s, 0.0, 0.0),
            "shin.R": (-0.5 * amplitude * (1 + s), 0.0, 0.0),
        }
        for bone, euler in poses.items():
            pb = ob.pose.bones[bone]
            set_rotation(pb, euler)
            pb.keyframe_insert(rotation_prop(pb), frame=frame)
    ob.animation_data.action.name = "UserMotion"


def world_matrices(scene, ob, names, frames) -> np.ndarray:
    """(F, N, 4, 4) world matrices of pose bones played back by Blender."""
    out = np.empty((len(frames), len(names), 4, 4))
    for i, frame in enumerate(frames):
        scene.frame_set(frame)
        mw = np.array(ob.matrix_world)
        for j, name in enumerate(names):
            out[i, j] = mw @ np.array(ob.pose.bones[name].matrix)
    return out


def local_rotations(world: np.ndarray, parents: list[int]) -> np.ndarray:
    """(F, N, 3, 3) each bone's rotation relative to its parent (world for roots)."""
    rot = world[..., :3, :3] / np.linalg.norm(world[..., :3, :3], axis=-2, keepdims=True)
    out = rot.copy()
    for j, p in enumerate(parents):
        if p >= 0:
            out[:, j] = np.swapaxes(rot[:, p], -1, -2) @ rot[:, j]
    return out


def angle_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotation angle (radians) between stacks of rotation matrices."""
    rel = np.swapaxes(a, -1, -2) @ b
    cos = (np.trace(rel, axis1=-2, axis2=-1) - 1.0) / 2.0
    return np.arccos(np.clip(cos, -1.0, 1.0))


def limits_exceeded_deg(scene, rig, frames, waft_name) -> float:
    """The most any jointed body of ``rig`` is outside its limits over ``frames`` (degrees),
    measured as the panel's warning does (``ragdoll/warnings.py``: the widening its swing or
    twist range would need, margin 0)."""
    create = importlib.import_module(waft_name + ".addon.ragdoll.create")
    warnings = importlib.import_module(waft_name + ".addon.ragdoll.warnings")
    limits = importlib.import_module(waft_name + ".core.ragdoll.limits")
    hung = warnings.jointed_bodies(rig)
    children, parents = list(hung), list(hung.values())
    bodies = [rig.pose.bones[n].waft_ragdoll for n in children]
    swing = np.array([tuple(b.swing_limit) for b in bodies])
    twist = np.array([tuple(b.twist_limit) for b in bodies])
    center = np.array([tuple(b.swing_center) for b in bodies])
    relative = create.rest_relative(rig, children, parents)
    worst = 0.0
    for frame in frames:
        scene.frame_set(frame)
        q = create.bone_orientation(np.array([np.array(rig.pose.bones[n].matrix)
                                              for n in children + parents]))
        k = len(children)
        new_swing, new_twist, new_center = limits.fit_limits(
            q_child=q[None, :k], q_parent=q[None, k:], rest_relative=relative,
            swing_limit=swing, twist_limit=twist, margin=0.0, swing_center=center)
        ends = np.abs(np.concatenate((new_center - new_swing - (center - swing),
                                      new_center + new_swing - (center + swing)), axis=1))
        ends = np.where(np.isfinite(ends), ends, 0.0)
        grow = np.maximum(ends.max(axis=1), np.abs(new_twist - twist).max(axis=1))
        worst = max(worst, math.degrees(float(grow.max())))
    return worst
