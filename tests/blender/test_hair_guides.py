"""Hair guide chains in real Blender: hair settings sampled per frame, presets, strands that
never end inside the head or shoulder colliders during a fast head turn, and the one-bone
guide rule for hair setups (a plain single-bone tail stays valid)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

HEAD = np.array([0.0, 0.0, 1.6])
HEAD_RADIUS = 0.11
SHOULDERS = {"Collider.Shoulder.L": (0.17, 0.0, 1.40), "Collider.Shoulder.R": (-0.17, 0.0, 1.40)}
SHOULDER_RADIUS = 0.09
CHAINS, BONES, SEGMENT = 8, 6, 0.05
HAIR_RADIUS = 0.01


def hair_bone(chain: int, index: int) -> str:
    return f"Hair.{chain}.{index:02d}"


def head_rig(scene):
    """A sample-like head: a body, a head bone turning 720 deg/s, eight guides over the crown
    falling to both sides past the shoulders, sphere colliders on head and shoulders."""
    bones = [{"name": "Root", "head": (0, 0, 0.95), "tail": (0, 0, 1.35)},
             {"name": "Head", "head": (0, 0, 1.45), "tail": (0, 0, 1.78), "parent": "Root"}]
    for c in range(CHAINS):
        angle = 2 * math.pi * c / CHAINS
        out = np.array([math.cos(angle), math.sin(angle), 0.0])
        start = HEAD + (HEAD_RADIUS + 0.012) * (0.5 * out + np.array([0, 0, 0.87]))
        direction = out * 0.8 + np.array([0.0, 0.0, -0.6])
        direction /= np.linalg.norm(direction)
        head = start
        for k in range(BONES):
            tail = head + SEGMENT * direction
            bones.append({"name": hair_bone(c, k), "head": tuple(head), "tail": tuple(tail),
                          "parent": hair_bone(c, k - 1) if k else "Head", "connect": k > 0})
            head = tail
            direction = direction * 0.7 + np.array([0.0, 0.0, -0.3])
            direction /= np.linalg.norm(direction)
    ob = rigs.new_armature(scene, "Rig", bones)
    for c in range(CHAINS):
        for k in range(BONES):
            ob.pose.bones[hair_bone(c, k)].waft.simulate = True
    ob.waft.enabled = True
    pb = ob.pose.bones["Head"]
    pb.rotation_mode = 'XYZ'
    scene.render.fps = 24
    scene.frame_start, scene.frame_end = 1, 36
    # 720 deg/s about the head's own axis (bone Y is world Z) for half a second, then back.
    for frame, turn in ((1, 0.0), (13, math.radians(360)), (25, 0.0), (36, 0.0)):
        pb.rotation_euler = (0.0, turn, 0.0)
        pb.keyframe_insert("rotation_euler", frame=frame)
    rigs.set_interpolation(ob, 'LINEAR')
    colliders = [rigs.sphere_collider(scene, "Collider.Head", tuple(HEAD), HEAD_RADIUS)]
    for name, centre in SHOULDERS.items():
        colliders.append(rigs.sphere_collider(scene, name, centre, SHOULDER_RADIUS))
    bpy.context.view_layer.update()  # new empties get their world matrix here
    for empty in colliders:  # the head collider turns with the head
        bone = "Head" if empty.name == "Collider.Head" else "Root"
        world = empty.matrix_world.copy()
        empty.parent, empty.parent_type, empty.parent_bone = ob, 'BONE', bone
        bpy.context.view_layer.update()
        empty.matrix_world = world
    return ob, colliders


def test_hair_preset_sets_the_hair_settings(scene, waft):
    ob, _ = head_rig(scene)
    bpy.context.view_layer.objects.active = ob
    presets = sys.modules[waft.__name__ + ".addon.strands.presets"].PRESETS
    assert bpy.ops.waft.apply_preset(preset='HAIR_UNDERWATER') == {'FINISHED'}
    for name, value in presets["HAIR_UNDERWATER"].items():
        assert getattr(ob.waft, name) == pytest.approx(value), name
    assert ob.waft.gravity_factor < 0 and ob.waft.shape_range < 0.5
    assert bpy.ops.waft.apply_preset(preset='HAIR_CURLY') == {'FINISHED'}
    assert ob.waft.gravity_factor == 1.0 and ob.waft.shape_range == 1.0


def _joint_bends_deg(points: np.ndarray) -> np.ndarray:
    """(F, S, joints) angle between consecutive segments of (F, S, particles, 3) strands."""
    segments = np.diff(points, axis=2)
    segments /= np.linalg.norm(segments, axis=-1, keepdims=True)
    cos = np.sum(segments[:, :, 1:] * segments[:, :, :-1], axis=-1)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def test_underwater_hair_floats_up_bending_smoothly_from_the_root(scene, bake_api):
    """Guides groomed hanging down, under the underwater preset, still: the scalp part keeps
    the groom's first segment, buoyancy lifts the rest, and bending carries the turn along the
    strand, most at the root (a cantilever), never folding one joint. With bending off the whole
    turn was at the first joint: a V of 140-180 degrees at every root."""
    ob, _ = head_rig(scene)
    ob.animation_data_clear()  # a still head: the bend is buoyancy's alone
    bpy.context.view_layer.objects.active = ob
    assert bpy.ops.waft.apply_preset(preset='HAIR_UNDERWATER') == {'FINISHED'}
    ob.waft.radius = HAIR_RADIUS
    scene.frame_start, scene.frame_end = 1, 4
    frames = [1, 4]
    names = [[hair_bone(c, k) for k in range(BONES)] for c in range(CHAINS)]
    groomed = np.stack([rigs.world_points(scene, ob, n, [1]) for n in names], axis=1)
    bake_api.bake_scene(scene, preroll=60)  # 2.5 s: floated up and settled
    points = np.stack([rigs.world_points(scene, ob, n, frames) for n in names], axis=1)
    rise = (points[:, :, -1, 2] - points[:, :, 0, 2]) - (groomed[:, :, -1, 2]
                                                         - groomed[:, :, 0, 2])
    assert rise.min() > 0.1, rise.min()  # every tip floated up by more than 10 cm
    bends = _joint_bends_deg(points)
    assert bends.max() < 75.0, bends.max(axis=(0, 1))
    # most at the root, less and less towards the tip (within a degree of each joint before)
    assert np.all(np.diff(bends, axis=-1) < 1.0), np.round(bends, 1)


def test_strands_never_end_inside_head_or_shoulder_colliders(scene, bake_api):
    ob, colliders = head_rig(scene)
    for name, value in {"shape_stiffness": 0.02, "damping": 1.0, "radius": HAIR_RADIUS,
                        "local_stiffness": 0.3, "shock_propagation": 0.3,
                        "voxel_friction": 0.2, "voxel_resolution": 8}.items():
        setattr(ob.waft, name, value)
    bake_api.bake_scene(scene, preroll=12)
    frames = list(range(scene.frame_start, scene.frame_end + 1))
    names = [[hair_bone(c, k) for k in range(BONES)] for c in range(CHAINS)]
    points = np.stack([rigs.world_points(scene, ob, n, frames) for n in names], axis=1)
    centres = np.empty((len(frames), len(colliders), 3))
    for i, frame in enumerate(frames):
        scene.frame_set(frame)
        centres[i] = [np.array(c.matrix_world.translation) for c in colliders]
    radii = np.array([HEAD_RADIUS] + [SHOULDER_RADIUS] * len(SHOULDERS))
    distance = np.linalg.norm(points[:, :, 1:, None, :] - centres[:, None, None], axis=-1)
    # Every simulated node stays outside every collider, and no strand ends inside one: the
    # tips' centres are outside, and their 1 cm particle shell overlaps by at most a few mm.
    assert np.all(distance >= radii - 0.002)
    assert np.all(distance[:, :, -1] >= radii)
    assert np.all(distance[:, :, -1] >= radii + HAIR_RADIUS - 0.005)
    # The hair really moved with the turn and touched the head somewhere.
    assert np.ptp(points[:, :, -1, 0]) > 0.1
    assert distance.min() < HEAD_RADIUS + 0.03


def test_hair_settings_keyframed_are_sampled_per_frame(scene, bake_api):
    ob, _ = head_rig(scene)
    ob.waft.local_stiffness = 0.0
    ob.waft.keyframe_insert("local_stiffness", frame=1)
    ob.waft.local_stiffness = 1.0
    ob.waft.keyframe_insert("local_stiffness", frame=36)
    baked = bake_api.bake_scene(scene)
    assert baked.frames == 36
    action = ob.animation_data.nla_tracks["Waft: original"].strips[0].action
    paths = {fc.data_path for fc in rigs.action_fcurves(action)}
    assert "waft.local_stiffness" in paths


def test_one_bone_guides_are_rejected_for_hair_setups_only(scene, bake_api, waft):
    error = sys.modules[waft.__name__ + ".core.errors"].SetupError
    ob = rigs.chain_rig(scene, count=1, length=0.2)
    scene.frame_start, scene.frame_end = 1, 4
    bake_api.bake_scene(scene)  # a single-bone tail: valid as before
    assert hasattr(ob, "waft_hair"), "the hair render-strand properties are not registered"
    ob.waft_hair.render_strands = True
    with pytest.raises(error, match=r"Armature 'Rig', bone 'Hair.000': a hair guide needs at "
                                    r"least 2 bones"):
        bake_api.bake_scene(scene)
