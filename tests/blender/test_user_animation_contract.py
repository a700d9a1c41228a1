"""The non-destructive contract on the animation forms users really have: a run cycle looping
with Cycles modifiers, the user's own NLA stack (influence, a muted track), keys inserted after
a bake, editing the original after a bake, save and reopen.

Every check compares every user channel (the pose's local transform channels, exactly) at every
frame of a range wider than the baked one, before the bake and after bake / mute / clear.
"""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

NAMES = rigs.bone_names("Hair", 4)
BAKED = (1, 36)
PLAYED = range(0, 80)  # frames a user plays: before, in and after the baked range (1-36)


def _cyclic_rig(scene):
    """A 12-frame cycle on the root (location) and the first chain bone (rotation), repeated
    forever by Cycles modifiers, as game run cycles are set up."""
    ob = rigs.chain_rig(scene, count=4, length=0.1, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = BAKED
    root = ob.pose.bones["Root"] if "Root" in ob.pose.bones else ob.pose.bones[0]
    first = ob.pose.bones[NAMES[0]]
    for frame, z, w in ((1, 0.0, 1.0), (7, 0.05, 0.95), (13, 0.0, 1.0)):
        root.location = (0.0, 0.0, z)
        root.keyframe_insert("location", frame=frame)
        first.rotation_quaternion = (w, 0.0, (1 - w * w) ** 0.5, 0.0)
        first.keyframe_insert("rotation_quaternion", frame=frame)
    action = ob.animation_data.action
    action.name = "RunCycle"
    for fcurve in rigs.action_fcurves(action):
        fcurve.modifiers.new('CYCLES')
    return ob


def _channels(scene, ob, frames=PLAYED) -> np.ndarray:
    """Every pose bone's local channels at every frame (float64 copies of Blender's floats)."""
    out = []
    for frame in frames:
        scene.frame_set(frame)
        out.append([value for pb in ob.pose.bones for value in
                    (*pb.location, *pb.rotation_quaternion, *pb.rotation_euler, *pb.scale)])
    return np.array(out)


def _user_channels(scene, ob) -> np.ndarray:
    """The channels with every Waft result track muted: what the user's own animation plays."""
    tracks = [t for t in ob.animation_data.nla_tracks
              if t.name.startswith("Waft") and t.name != "Waft: original"]
    saved = [t.mute for t in tracks]
    for t in tracks:
        t.mute = True
    try:
        return _channels(scene, ob)
    finally:
        for t, mute in zip(tracks, saved, strict=True):
            t.mute = mute


def test_a_looping_run_cycle_keeps_looping_after_the_bake(scene, bake_api):
    ob = _cyclic_rig(scene)
    before = _channels(scene, ob)
    root_z = before[:, 2]
    assert root_z[PLAYED.index(30)] == root_z[PLAYED.index(6)]  # it loops before the bake
    bake_api.bake_scene(scene)
    assert np.array_equal(_user_channels(scene, ob), before)  # bitwise, every frame
    baked = _channels(scene, ob)
    # The root is not simulated: with Waft playing it keeps looping past the action's end.
    assert np.array_equal(baked[:, :3], before[:, :3])
    bake_api.clear_bake(scene)
    assert ob.animation_data.action.name == "RunCycle"
    assert np.array_equal(_channels(scene, ob), before)


def test_the_users_nla_stack_plays_the_same_under_waft(scene, bake_api):
    ob = _cyclic_rig(scene)
    anim_data = ob.animation_data
    # A second layer: an additive sway at 40 % influence, and a muted track.
    sway = bpy.data.actions.new("Sway")
    ob.animation_data.action = sway
    first = ob.pose.bones[NAMES[1]]
    for frame, w in ((1, 1.0), (20, 0.9), (40, 1.0)):
        first.rotation_quaternion = (w, (1 - w * w) ** 0.5, 0.0, 0.0)
        first.keyframe_insert("rotation_quaternion", frame=frame)
    anim_data.action = None
    track = anim_data.nla_tracks.new()
    track.name = "Sway layer"
    strip = track.strips.new("Sway", 1, sway)
    strip.influence = 0.4
    strip.use_animated_influence = False
    muted = anim_data.nla_tracks.new()
    muted.name = "Muted layer"
    muted.strips.new("Sway2", 5, sway).blend_type = 'ADD'
    muted.mute = True
    anim_data.action = bpy.data.actions["RunCycle"]
    before = _channels(scene, ob)
    bake_api.bake_scene(scene)
    assert np.array_equal(_user_channels(scene, ob), before)
    assert anim_data.nla_tracks["Muted layer"].mute
    bake_api.clear_bake(scene)
    assert anim_data.action.name == "RunCycle"
    assert [t.name for t in anim_data.nla_tracks] == ["Sway layer", "Muted layer"]
    assert np.array_equal(_channels(scene, ob), before)


def test_keys_inserted_after_a_bake_are_kept_and_clear_restores_the_original(scene,
                                                                             bake_api):
    ob = _cyclic_rig(scene)
    before = _channels(scene, ob)
    bake_api.bake_scene(scene)
    # The user keys a pose after the bake: Blender puts it into a new active action.
    pb = ob.pose.bones[NAMES[2]]
    pb.rotation_quaternion = (0.9, 0.0, 0.0, (1 - 0.81) ** 0.5)
    pb.keyframe_insert("rotation_quaternion", frame=10)
    tweak = ob.animation_data.action
    assert tweak is not None and tweak.name != "RunCycle"
    bake_api.bake_scene(scene)  # re-bake: one original track, the new keys kept above it
    names = [t.name for t in ob.animation_data.nla_tracks]
    assert names.count("Waft: original") == 1 and "Keyed after bake" in names
    assert ob.animation_data.nla_tracks["Waft: original"].strips[0].action.name == "RunCycle"
    bake_api.clear_bake(scene)
    assert ob.animation_data.action.name == "RunCycle"  # exactly what the first bake found
    assert tweak.users >= 1  # the keys made after the bake are not lost
    ob.animation_data.nla_tracks["Keyed after bake"].mute = True
    # With the later keys muted, everything but the bone they key (whose pose keeps its last
    # value: nothing animates it then) plays as before the first bake.
    others = [i for i, pb in enumerate(ob.pose.bones) if pb.name != NAMES[2]]
    columns = np.concatenate([np.arange(13 * i, 13 * i + 13) for i in others])
    assert np.array_equal(_channels(scene, ob)[:, columns], before[:, columns])


def test_edit_original_then_rebake_uses_the_edit(scene, bake_api):
    ob = _cyclic_rig(scene)
    bake_api.bake_scene(scene)
    ob.select_set(True)
    bpy.context.view_layer.objects.active = ob
    assert bpy.ops.waft.edit_original() == {'FINISHED'}
    assert ob.animation_data.action.name == "RunCycle"
    root = ob.pose.bones[0]
    root.location = (0.0, 0.0, 0.2)
    root.keyframe_insert("location", frame=7)  # into the original itself
    edited = _channels(scene, ob)
    bake_api.bake_scene(scene)
    names = [t.name for t in ob.animation_data.nla_tracks]
    assert names.count("Waft: original") == 1 and "Keyed after bake" not in names
    assert ob.animation_data.action is None
    assert np.array_equal(_user_channels(scene, ob)[:, :3], edited[:, :3])


def test_save_and_reopen_keeps_the_loop(scene, bake_api, tmp_path):
    ob = _cyclic_rig(scene)
    before = _channels(scene, ob)
    bake_api.bake_scene(scene)
    baked = _channels(scene, ob)
    name = ob.name
    path = str(tmp_path / "cycle.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    scene = bpy.context.scene
    ob = scene.objects[name]
    assert np.array_equal(_channels(scene, ob), baked)
    assert np.array_equal(_user_channels(scene, ob), before)
    bake_api.clear_bake(scene)
    assert np.array_equal(_channels(scene, ob), before)


def test_the_preview_range_is_baked_also_when_negative(scene, bake_api):
    """The scene plays its preview range when that is on (the only range Blender lets go below
    0): the bake covers exactly it. The frame range was used, clamped at 0, and a -50..-10 range
    baked frame 0 only."""
    ob = rigs.chain_rig(scene, count=3, length=0.1, direction=(1.0, 0.0, 0.0))
    rigs.key_root_location(ob, [-50, -30, -10], lambda f: (0.01 * f, 0.0, 0.0))
    scene.use_preview_range = True
    scene.frame_preview_start, scene.frame_preview_end = -50, -10
    before = _channels(scene, ob, range(-60, 0))
    report = bake_api.bake_scene(scene)
    assert (report.frame_start, report.frame_end) == (-50, -10)
    strip = ob.animation_data.nla_tracks["Waft"].strips[0]
    assert (strip.frame_start, strip.frame_end) == (-50.0, -10.0)
    keys = rigs.action_fcurves(strip.action)[0].keyframe_points
    assert [keys[0].co[0], keys[-1].co[0], len(keys)] == [-50.0, -10.0, 41]
    assert np.array_equal(_user_channels_over(scene, ob, range(-60, 0)), before)


def _user_channels_over(scene, ob, frames) -> np.ndarray:
    track = ob.animation_data.nla_tracks["Waft"]
    track.mute = True
    try:
        return _channels(scene, ob, frames)
    finally:
        track.mute = False


@pytest.mark.skipif(not hasattr(bpy.types, "ActionSlot"), reason="slotted actions: 4.4+")
def test_a_slotted_action_shared_by_two_armatures(scene, bake_api):
    """One action, one slot per armature (Blender 4.4+): baking one armature leaves the other's
    slot and every channel of both as the user had them."""
    ob = _cyclic_rig(scene)
    other = rigs.chain_rig(scene, "Other", count=4, length=0.1, direction=(0.0, 1.0, 0.0),
                           prefix="Hair")
    other.waft.enabled = False
    action = ob.animation_data.action
    other.animation_data_create()
    other.animation_data.action = action
    first = other.pose.bones[NAMES[0]]
    for frame, w in ((1, 1.0), (10, 0.8)):
        first.rotation_quaternion = (w, 0.0, 0.0, (1 - w * w) ** 0.5)
        first.keyframe_insert("rotation_quaternion", frame=frame)
    assert other.animation_data.action == action and len(action.slots) == 2
    slots = (ob.animation_data.action_slot.identifier,
             other.animation_data.action_slot.identifier)
    assert slots[0] != slots[1]
    before, before_other = _channels(scene, ob), _channels(scene, other)
    bake_api.bake_scene(scene, objects=[ob])
    assert other.animation_data.action == action
    assert other.animation_data.action_slot.identifier == slots[1]
    assert np.array_equal(_channels(scene, other), before_other)
    assert np.array_equal(_user_channels(scene, ob), before)
    bake_api.clear_bake(scene)
    assert ob.animation_data.action == action
    assert ob.animation_data.action_slot.identifier == slots[0]
    assert np.array_equal(_channels(scene, ob), before)
    assert np.array_equal(_channels(scene, other), before_other)
