"""Test rigs built from nothing with bpy, and ways to read a baked result back from Blender.

Imported by the tests in this folder (they put this folder on sys.path). Nothing here knows
about Waft's internals: rigs are made the way a user would (edit bones, keyframe_insert,
``PoseBone.waft.simulate``), results are read by playing the scene (``frame_set``) and taking
pose-bone world matrices.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable, Sequence
from pathlib import Path

import bmesh
import bpy
import numpy as np
from mathutils import Vector

ROOT = "Root"


def bone_names(prefix: str, count: int) -> list[str]:
    return [f"{prefix}.{i:03d}" for i in range(count)]


def new_armature(scene, name: str, bones: Sequence[dict]):
    """Armature object from bone dicts: name, head, tail, parent (optional), connect (bool)."""
    data = bpy.data.armatures.new(name)
    ob = bpy.data.objects.new(name, data)
    scene.collection.objects.link(ob)
    view_layer = bpy.context.view_layer
    view_layer.objects.active = ob
    ob.select_set(True)
    bpy.ops.object.mode_set(mode='EDIT')
    for spec in bones:
        edit_bone = data.edit_bones.new(spec["name"])
        edit_bone.head = spec["head"]
        edit_bone.tail = spec["tail"]
        if spec.get("parent"):
            edit_bone.parent = data.edit_bones[spec["parent"]]
            edit_bone.use_connect = spec.get("connect", False)
    bpy.ops.object.mode_set(mode='OBJECT')
    return ob


def chain_rig(scene, name: str = "Rig", *, count: int = 4, length: float = 0.25,
              direction=(0.0, 0.0, -1.0), start=(0.0, 0.0, 2.0), prefix: str = "Hair",
              rotation_mode: str = "QUATERNION", offset=(0.0, 0.0, 0.0)):
    """A ``Root`` bone (animate it) with a simulated chain of ``count`` bones below its tail.

    The first chain bone starts at the root's tail + ``offset`` (not connected if offset ≠ 0).
    """
    direction = Vector(direction).normalized()
    root_head = Vector(start) + Vector((0.0, 0.0, 0.2))
    root_tail = Vector(start)
    bones = [{"name": ROOT, "head": root_head, "tail": root_tail}]
    head = root_tail + Vector(offset)
    names = bone_names(prefix, count)
    for i, bone in enumerate(names):
        tail = head + direction * length
        bones.append({"name": bone, "head": head.copy(), "tail": tail, "parent":
                      names[i - 1] if i else ROOT, "connect": i > 0 or Vector(offset).length == 0})
        head = tail
    ob = new_armature(scene, name, bones)
    for bone in names:
        pose_bone = ob.pose.bones[bone]
        pose_bone.rotation_mode = rotation_mode
        pose_bone.waft.simulate = True
    ob.waft.enabled = True
    return ob


def calm(ob, **overrides) -> None:
    """No damping, drag, shape pull or wind: only gravity and the constraints act."""
    settings = {"damping": 0.0, "drag": 0.0, "shape_stiffness": 0.0, "wind_speed": 0.0}
    settings.update(overrides)
    for key, value in settings.items():
        setattr(ob.waft, key, value)


def key_figure_eight(pose_bone, fps: float, *, peak_g: float, seconds: float = 2.0,
                     scene=None) -> None:
    """Key ``pose_bone.location`` on a 1.5 Hz figure-eight (x peaks at ``peak_g``, z at twice
    that) every 1/12 s in seconds (Bezier) from frame 1 at ``fps``, so every frame rate plays the
    same motion; with ``scene``, also set its frame rate, range and leave the sample rate as is."""
    if scene is not None:
        scene.render.fps, scene.render.fps_base = int(fps), 1.0
        scene.frame_start, scene.frame_end = 1, 1 + int(round(seconds * fps))
    omega = 2 * math.pi * 1.5
    amplitude = peak_g * 9.81 / omega**2
    for k in range(int(round(12 * seconds)) + 1):
        t = k / 12
        pose_bone.location = (amplitude * math.sin(omega * t), 0.0,
                              0.5 * amplitude * math.sin(2 * omega * t))
        pose_bone.keyframe_insert("location", frame=1 + t * fps)


FRAME_RATES = (24, 25, 30, 50, 60)


def bake_at_rates(scene, bake: Callable, rates: Sequence[int] = FRAME_RATES, **kwargs) -> dict:
    """``{fps: bake(fps, **kwargs)}``, each in a freshly reset scene."""
    out = {}
    for fps in rates:
        reset_scene(scene)
        out[fps] = bake(fps, **kwargs)
    return out


def largest_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Largest distance between corresponding points (..., 3)."""
    return float(np.max(np.linalg.norm(a - b, axis=-1)))


def key_root_location(ob, frames: Sequence[int], location: Callable[[int], Sequence[float]],
                      *, interpolation: str = "LINEAR") -> None:
    """Keyframe the root bone's location (pose space) on ``frames``."""
    pose_bone = ob.pose.bones[ROOT]
    for frame in frames:
        pose_bone.location = location(frame)
        pose_bone.keyframe_insert("location", frame=frame)
    set_interpolation(ob, interpolation)


def set_interpolation(ob, interpolation: str) -> None:
    for fcurve in action_fcurves(ob.animation_data.action):
        for key in fcurve.keyframe_points:
            key.interpolation = interpolation


def action_fcurves(action) -> list:
    if hasattr(action, "fcurves"):
        return list(action.fcurves)
    curves = []
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                curves.extend(bag.fcurves)
    return curves


def sphere_collider(scene, name: str, location, radius: float):
    empty = bpy.data.objects.new(name, None)
    empty.empty_display_type = 'SPHERE'
    empty.empty_display_size = radius
    empty.location = location
    empty.waft_collider.enabled = True
    scene.collection.objects.link(empty)
    return empty


def mesh_sphere(scene, name: str, location, radius: float, *, segments=48, rings=24):
    """A UV-sphere mesh object enabled as a Waft (body-mesh) collider."""
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=segments, v_segments=rings, radius=radius)
    bm.to_mesh(mesh)
    bm.free()
    ob = bpy.data.objects.new(name, mesh)
    ob.location = location
    scene.collection.objects.link(ob)
    ob.waft_collider.enabled = True
    return ob


def world_points(scene, ob, names: Sequence[str], frames: Sequence[int]) -> np.ndarray:
    """(F, len(names) + 1, 3): head of the first bone, then every bone's tail, in world space."""
    out = np.empty((len(frames), len(names) + 1, 3))
    for i, frame in enumerate(frames):
        scene.frame_set(frame)
        mw = ob.matrix_world
        out[i, 0] = mw @ ob.pose.bones[names[0]].head
        for j, name in enumerate(names):
            out[i, j + 1] = mw @ ob.pose.bones[name].tail
    return out


def shown_channels(rigs_names) -> np.ndarray:
    """For ``[(armature, bone names), …]``: each bone's rotation channels as stored (quaternion
    or Euler, float32) and its evaluated pose matrix, flattened: what an animator sees (the
    preview tests compare it with the bake bit for bit)."""
    bpy.context.view_layer.update()
    values = []
    for ob, names in rigs_names:
        for name in names:
            pose_bone = ob.pose.bones[name]
            prop = ("rotation_quaternion" if pose_bone.rotation_mode == "QUATERNION"
                    else "rotation_euler")
            values.extend(getattr(pose_bone, prop))
            values.extend(v for row in pose_bone.matrix for v in row)
    return np.array(values, dtype=np.float32)


def pose_values(ob) -> list:
    """Every pose bone's local transform channels, exactly."""
    return [(pb.name, tuple(pb.location), tuple(pb.rotation_quaternion), tuple(pb.rotation_euler),
             tuple(pb.rotation_axis_angle), tuple(pb.scale)) for pb in ob.pose.bones]


def fingerprint(scene) -> dict:
    """What a failed bake must not change: actions, their curves, NLA, pose, current frame."""
    bpy.context.view_layer.update()  # compare evaluated state (matrix_world after a scale edit)
    actions = {}
    for action in bpy.data.actions:
        curves = action_fcurves(action)
        actions[action.name] = (len(curves), action.users,
                                sorted((fc.data_path, fc.array_index, len(fc.keyframe_points))
                                       for fc in curves))
    objects = {}
    for ob in scene.objects:
        ad = ob.animation_data
        nla = None
        if ad is not None:
            nla = (ad.action.name if ad.action else None,
                   [(t.name, t.mute, [(s.name, s.action.name if s.action else None,
                                       s.frame_start, s.frame_end) for s in t.strips])
                    for t in ad.nla_tracks])
        pose = pose_values(ob) if ob.type == 'ARMATURE' else None
        objects[ob.name] = (nla, pose, tuple(map(tuple, ob.matrix_world)))
    return {"frame": (scene.frame_current, scene.frame_subframe), "actions": actions,
            "objects": objects}


def zero_crossing_times(times: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Times where ``values`` changes sign, linearly interpolated between samples."""
    sign = np.signbit(values)
    idx = np.nonzero(sign[1:] != sign[:-1])[0]
    v0, v1 = values[idx], values[idx + 1]
    return times[idx] + (times[idx + 1] - times[idx]) * v0 / (v0 - v1)


def pendulum_period(length: float, g: float, amplitude_deg: float) -> float:
    """Exact period 2π√(L/g)·(2/π)K(sin(θ0/2)), K by the arithmetic-geometric mean."""
    k = math.sin(math.radians(amplitude_deg) / 2)
    a, b = 1.0, math.sqrt(1 - k * k)
    for _ in range(30):
        a, b = (a + b) / 2, math.sqrt(a * b)
    complete_k = math.pi / (2 * a)
    return 2 * math.pi * math.sqrt(length / g) * (2 / math.pi) * complete_k


def reset_scene(scene) -> None:
    """Remove every object, armature and action so one test can build several rigs in turn."""
    for ob in list(scene.objects):
        bpy.data.objects.remove(ob)
    for armature in list(bpy.data.armatures):
        bpy.data.armatures.remove(armature)
    for action in list(bpy.data.actions):
        bpy.data.actions.remove(action)


def set_selected(pose_bone, state: bool) -> None:
    """``PoseBone.select`` on 5.0, ``Bone.select`` on 4.2–4.5."""
    if hasattr(pose_bone, "select"):
        pose_bone.select = state
    else:
        pose_bone.bone.select = state


def gltf_json(path: Path) -> dict:
    """The JSON chunk of a binary glTF (.glb / .vrm) file."""
    data = Path(path).read_bytes()
    length = struct.unpack_from("<I", data, 12)[0]
    return json.loads(data[20:20 + length])


def key_sway(root, cycle: int, *, step: int, sway: float, bob: float, turn: float) -> None:
    """Key ``root`` over one cycle of ``cycle`` frames from frame 1 (frame 1 = frame cycle + 1),
    every ``step`` frames: sideways ``sway`` and twice-as-fast ``bob`` in location, ``turn``
    about Z (XYZ Euler), like a walk seen from the hips."""
    root.rotation_mode = 'XYZ'
    for k in range(0, cycle + 1, step):
        phase = 2 * math.pi * k / cycle
        root.location = (sway * math.sin(phase), 0.0, bob * math.sin(2 * phase))
        root.rotation_euler = (0.0, 0.0, turn * math.sin(phase))
        root.keyframe_insert("location", frame=1 + k)
        root.keyframe_insert("rotation_euler", frame=1 + k)


def make_cyclic(ob) -> None:
    """A Cycles modifier on every F-curve of ``ob``'s active action."""
    for fcurve in action_fcurves(ob.animation_data.action):
        fcurve.modifiers.new('CYCLES')
