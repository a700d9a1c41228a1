"""The live preview on a production rig: a freshly generated Rigify human with the animator's
own ponytail chain parented to the head (DEF-spine.006 follows the ORG/tweak bones through
constraints), the torso control keyed as a cycle repeated by Cycles modifiers, and an NLA strip
of the user's own under it. Played from the first frame the preview is the bake bit for bit,
and no user channel changes (preview on, off, bake, clear)."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

TAIL = [f"Ponytail.{i:03d}" for i in range(5)]
FRAMES = range(1, 41)


def _ponytail(rig) -> None:
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode='EDIT')
    bones = rig.data.edit_bones
    head = bones["DEF-spine.006"]
    start = head.head + (head.tail - head.head) * 0.9
    start.y += 0.12  # behind the head (Rigify faces -Y)
    parent = head
    for name in TAIL:
        bone = bones.new(name)
        bone.head = start
        bone.tail = start + type(start)((0.0, 0.05, -0.07))
        bone.parent = parent
        bone.use_connect = parent is not head
        bone.use_deform = True
        start, parent = bone.tail.copy(), bone
    bpy.ops.object.mode_set(mode='OBJECT')
    for name in TAIL:
        pose_bone = rig.pose.bones[name]
        pose_bone.rotation_mode = 'QUATERNION'
        pose_bone.waft.simulate = True
    rig.waft.enabled = True
    rig.waft.damping, rig.waft.radius = 1.0, 0.01


def _animate(scene, rig) -> None:
    torso = rig.pose.bones["torso"]
    for frame, x, z in ((1, 0.0, 0.0), (7, 0.12, -0.05), (13, 0.0, 0.0), (19, -0.12, -0.05),
                        (25, 0.0, 0.0)):
        torso.location = (x, 0.0, z)
        torso.keyframe_insert("location", frame=frame)
    action = rig.animation_data.action
    action.name = "Sway"
    for fcurve in rigs.action_fcurves(action):
        fcurve.modifiers.new('CYCLES')
    # The user's own NLA strip under the action: a head turn.
    turn = bpy.data.actions.new("HeadTurn")
    rig.animation_data.action = turn
    head = rig.pose.bones["head"]
    head.rotation_mode = 'XYZ'
    for frame, angle in ((1, 0.0), (20, 0.8), (40, -0.4)):
        head.rotation_euler = (0.0, 0.0, angle)
        head.keyframe_insert("rotation_euler", frame=frame)
    rig.animation_data.action = None
    track = rig.animation_data.nla_tracks.new()
    track.name = "UserTurn"
    track.strips.new("HeadTurn", 1, turn)
    rig.animation_data.action = action


def _user_channels(scene, rig) -> np.ndarray:
    out = []
    for frame in FRAMES:
        scene.frame_set(frame)
        out.append([v for pb in rig.pose.bones if pb.name not in TAIL for v in
                    (*pb.location, *pb.rotation_quaternion, *pb.rotation_euler, *pb.scale)])
    return np.array(out)


def _tail_pose(scene, rig, frames) -> dict:
    out = {}
    for frame in frames:
        scene.frame_set(frame)
        bpy.context.view_layer.update()
        out[frame] = np.array([[*rig.pose.bones[n].rotation_quaternion,
                                *np.array(rig.pose.bones[n].matrix).ravel()] for n in TAIL],
                              dtype=np.float32)
    return out


def test_preview_on_a_rigify_human_is_the_bake_and_keeps_every_user_channel(
        rigify_human, bake_api, waft_module_name):
    scene, rig = bpy.context.scene, rigify_human
    scene.render.fps = 24
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    _ponytail(rig)
    _animate(scene, rig)
    before = _user_channels(scene, rig)
    rest = [tuple(rig.pose.bones[n].rotation_quaternion) for n in TAIL]

    scene.waft.use_preview = True
    previewed = _tail_pose(scene, rig, FRAMES)
    state = sys.modules[f"{waft_module_name}.addon.preview"].state(scene)
    assert state.message == "" and sorted(state.cache) == list(FRAMES), state.status()
    np.testing.assert_array_equal(_user_channels(scene, rig), before)
    scene.waft.use_preview = False
    assert [tuple(rig.pose.bones[n].rotation_quaternion) for n in TAIL] == rest

    report = bake_api.bake_scene(scene)
    assert not report.systems["strands"].from_preview  # the preview was off: solved
    baked = _tail_pose(scene, rig, FRAMES)
    moved = max(np.abs(baked[f][:, :4] - baked[1][:, :4]).max() for f in FRAMES)
    assert moved > 0.05  # the ponytail swings
    for frame in FRAMES:
        np.testing.assert_array_equal(previewed[frame], baked[frame], err_msg=f"frame {frame}")
    np.testing.assert_array_equal(_user_channels(scene, rig), before)
    bake_api.clear_bake(scene)
    np.testing.assert_array_equal(_user_channels(scene, rig), before)
    assert [tuple(rig.pose.bones[n].rotation_quaternion) for n in TAIL] == rest
