"""The user's own animation survives every Waft operation, and muting Waft gives it back."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

NAMES = rigs.bone_names("Hair", 4)
FRAMES = range(1, 25)


def _user_rig(scene):
    """A rig whose user action keys the root's location and the first chain bone's rotation."""
    ob = rigs.chain_rig(scene, count=4, length=0.1, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = 1, 24
    rigs.key_root_location(ob, [1, 12, 24], lambda f: (0.02 * f, 0.0, 0.0))
    first = ob.pose.bones[NAMES[0]]
    for frame, w in ((1, 1.0), (24, 0.9)):
        first.rotation_quaternion = (w, 0.0, (1 - w * w) ** 0.5, 0.0)
        first.keyframe_insert("rotation_quaternion", frame=frame)
    ob.animation_data.action.name = "UserMotion"
    return ob


def _points(scene, ob) -> np.ndarray:
    return rigs.world_points(scene, ob, NAMES, FRAMES)


def _waft_track(ob):
    return ob.animation_data.nla_tracks.get("Waft")


def _assert_nla_layout(ob) -> None:
    tracks = [t.name for t in ob.animation_data.nla_tracks]
    # Bottom → top: Waft replaces from above; its rest track holds unkeyed channels.
    assert tracks == ["Waft: original", "Waft: rest", "Waft"]
    assert ob.animation_data.action is None
    original = ob.animation_data.nla_tracks["Waft: original"].strips[0]
    assert original.action.name == "UserMotion"
    assert _waft_track(ob).strips[0].action.name == "Waft|Rig"
    assert _waft_track(ob).strips[0].blend_type == 'REPLACE'


def test_bake_keeps_the_original_and_muting_waft_plays_it(scene, bake_api):
    ob = _user_rig(scene)
    original = _points(scene, ob)
    bake_api.bake_scene(scene)
    _assert_nla_layout(ob)
    baked = _points(scene, ob)
    assert np.max(np.abs(baked - original)) > 0.05  # the chain now sags and swings
    assert np.allclose(baked[:, 0], original[:, 0], atol=1e-6)  # its root does not
    _waft_track(ob).mute = True
    assert np.allclose(_points(scene, ob), original, atol=1e-6)


def test_rebake_replaces_the_previous_result(scene, bake_api):
    ob = _user_rig(scene)
    bake_api.bake_scene(scene)
    first = _points(scene, ob)
    ob.waft.damping = 8.0
    bake_api.bake_scene(scene)
    _assert_nla_layout(ob)
    assert sorted(a.name for a in bpy.data.actions) == ["UserMotion", "Waft|Rig",
                                                        "Waft|Rig|rest"]
    assert np.max(np.abs(_points(scene, ob) - first)) > 1e-3  # the new settings took effect


def test_a_muted_waft_track_stays_muted_after_rebake_sampling(scene, bake_api):
    """Sampling mutes Waft's track (so the old bake is not the reference) and restores it."""
    ob = _user_rig(scene)
    bake_api.bake_scene(scene)
    first = _points(scene, ob)
    bake_api.bake_scene(scene)  # would differ if the first bake were sampled as the reference
    assert np.array_equal(_points(scene, ob), first)
    assert _waft_track(ob).mute is False


def test_clear_restores_the_original_action(scene, bake_api):
    ob = _user_rig(scene)
    original = _points(scene, ob)
    bake_api.bake_scene(scene)
    assert bake_api.clear_bake(scene) == ["Rig"]
    assert len(ob.animation_data.nla_tracks) == 0
    assert ob.animation_data.action.name == "UserMotion"
    assert [a.name for a in bpy.data.actions] == ["UserMotion"]
    assert np.allclose(_points(scene, ob), original, atol=1e-6)
    assert bake_api.clear_bake(scene) == []  # nothing left to clear


def test_save_and_reopen_keeps_both_actions(scene, bake_api, tmp_path):
    ob = _user_rig(scene)
    original = _points(scene, ob)
    bake_api.bake_scene(scene)
    baked = _points(scene, ob)
    path = str(tmp_path / "baked.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    scene = bpy.context.scene
    ob = scene.objects["Rig"]
    _assert_nla_layout(ob)
    assert np.allclose(_points(scene, ob), baked, atol=1e-6)
    _waft_track(ob).mute = True
    assert np.allclose(_points(scene, ob), original, atol=1e-6)
    _waft_track(ob).mute = False
    bake_api.clear_bake(scene)
    assert ob.animation_data.action.name == "UserMotion"
    assert np.allclose(_points(scene, ob), original, atol=1e-6)


def test_bake_and_clear_are_single_undo_steps(scene):
    """Both operators register an undo step. ``ed.undo`` itself cannot run in the bpy module
    (its poll fails without a window region), so the undo is checked as far as headless allows:
    the UNDO flag and the undo push the operator call makes."""
    for op in (bpy.types.WAFT_OT_bake, bpy.types.WAFT_OT_clear_bake,
               bpy.types.WAFT_OT_add_collider, bpy.types.WAFT_OT_assign_bones):
        assert {'REGISTER', 'UNDO'} <= set(op.bl_options)
    assert not bpy.ops.ed.undo.poll()  # documents why undo is not replayed here


def test_user_without_an_action_gets_a_clean_clear(scene, bake_api):
    ob = rigs.chain_rig(scene, count=3, length=0.1, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = 1, 12
    bake_api.bake_scene(scene)
    assert [t.name for t in ob.animation_data.nla_tracks] == ["Waft: rest", "Waft"]
    bake_api.clear_bake(scene)
    assert len(ob.animation_data.nla_tracks) == 0 and ob.animation_data.action is None
    assert len(bpy.data.actions) == 0
