"""The non-destructive contract on the rest of the NLA settings users have: the active action's
blend type, influence and extrapolation over their own tracks (and the same settings where
Blender ignores them), channels keyed on some indices only, muted user tracks, a user track
whose name starts with "Waft", Edit Original on an additive action; and the settings under
which a result could not play or be kept (NLA off, a soloed track, a linked rig), which are a
clear error that changes nothing.

Every check compares the pose's local channels bitwise at every frame of a range wider than the
baked one (see test_user_animation_contract.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402
from test_user_animation_contract import NAMES, _channels  # noqa: E402

BAKED = (1, 24)


def _rig(scene):
    """A 4-bone chain whose root is keyed (location x) by the active action 'UserMotion'."""
    ob = rigs.chain_rig(scene, count=4, length=0.1, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = BAKED
    root = ob.pose.bones[0]
    for frame, x in ((5, 0.0), (12, 0.3), (18, 0.1)):
        root.location = (x, 0.0, 0.0)
        root.keyframe_insert("location", frame=frame)
    ob.animation_data.action.name = "UserMotion"
    return ob


def _base_track(ob):
    """A user NLA track under the active action, keying the root's location y and the first
    chain bone's rotation."""
    anim_data = ob.animation_data
    active = anim_data.action
    base = bpy.data.actions.new("Base")
    anim_data.action = base
    root, first = ob.pose.bones[0], ob.pose.bones[NAMES[0]]
    for frame, y, w in ((-10, 0.5, 1.0), (30, 0.9, 0.96), (60, 0.2, 1.0)):
        root.location = (0.0, y, 0.0)
        root.keyframe_insert("location", frame=frame)
        first.rotation_quaternion = (w, 0.0, (1 - w * w) ** 0.5, 0.0)
        first.keyframe_insert("rotation_quaternion", frame=frame)
    anim_data.action = None
    track = anim_data.nla_tracks.new()
    track.name = "Base layer"
    track.strips.new("Base", -10, base)
    anim_data.action = active
    return track


@pytest.mark.parametrize(("blend", "influence", "extrapolation", "cycles"), [
    ('REPLACE', 0.6, 'HOLD', False),
    ('ADD', 0.5, 'HOLD_FORWARD', False),
    ('COMBINE', 0.8, 'NOTHING', False),
    ('COMBINE', 0.7, 'NOTHING', True),
    ('ADD', 1.0, 'HOLD_FORWARD', True),
])
def test_the_active_actions_blend_influence_and_extrapolation_over_a_user_stack_are_kept(
        scene, bake_api, blend, influence, extrapolation, cycles):
    """Over the user's tracks the active action blends with its own settings, and only over
    its keys' range with Nothing or Hold Forward. The strip it moves to plays it so: before,
    the strip played it at influence 1 (its plain influence is ignored by Blender), and over
    100,000 frames whatever its extrapolation."""
    ob = _rig(scene)
    _base_track(ob)
    anim_data = ob.animation_data
    if cycles:
        for fcurve in rigs.action_fcurves(anim_data.action):
            fcurve.modifiers.new('CYCLES')
    anim_data.action_blend_type = blend
    anim_data.action_influence = influence
    anim_data.action_extrapolation = extrapolation
    # (From frame 0: before it a strip cannot play a Cycles modifier's repeats bitwise, see
    # docs/internals.md.)
    frames = range(0 if cycles else -15, 70)
    before = _channels(scene, ob, frames)
    bake_api.bake_scene(scene)
    assert np.array_equal(_user_channels_over(scene, ob, frames), before)
    # The root is not simulated: with Waft playing it moves as before too.
    assert np.array_equal(_channels(scene, ob, frames)[:, :3], before[:, :3])
    bake_api.bake_scene(scene)  # a re-bake samples the same animation: the same keys
    assert np.array_equal(_user_channels_over(scene, ob, frames), before)
    bake_api.clear_bake(scene)
    assert (anim_data.action.name, anim_data.action_blend_type, anim_data.action_influence,
            anim_data.action_extrapolation) == ("UserMotion", blend, float(np.float32(influence)),
                                                extrapolation)
    assert np.array_equal(_channels(scene, ob, frames), before)


@pytest.mark.parametrize("tracks", ["none", "muted"])
def test_settings_blender_ignores_without_a_playing_track_stay_ignored(scene, bake_api, tracks):
    """With no NLA track that plays (none, or only muted ones) Blender plays the active action
    directly: its blend type Add and influence 0.5 do nothing. After the bake Waft's tracks
    play, so the strip holding the action must not apply them either (a quaternion's w became
    2)."""
    ob = _rig(scene)
    root = ob.pose.bones[0]
    for frame, w in ((5, 1.0), (12, 0.98)):  # (Add onto nothing doubles a quaternion's w)
        root.rotation_quaternion = (w, 0.0, 0.0, (1 - w * w) ** 0.5)
        root.keyframe_insert("rotation_quaternion", frame=frame)
    if tracks == "muted":
        _base_track(ob).mute = True
    anim_data = ob.animation_data
    anim_data.action_blend_type = 'ADD'
    anim_data.action_influence = 0.5
    frames = range(-5, 40)
    before = _channels(scene, ob, frames)
    bake_api.bake_scene(scene)
    assert np.array_equal(_user_channels_over(scene, ob, frames), before)
    bake_api.clear_bake(scene)
    assert np.array_equal(_channels(scene, ob, frames), before)


def test_a_rotation_keyed_on_some_indices_keeps_the_others(scene, bake_api):
    """A simulated bone in XYZ Euler keyed about Z only, posed about X and Y: the unkeyed
    indices are the user's static pose. They were taken as animated with Z and played 0
    outside the bake, and Clear left them at the last played value."""
    ob = _rig(scene)
    first = ob.pose.bones[NAMES[1]]
    first.rotation_mode = 'XYZ'
    first.rotation_euler = (0.3, -0.2, 0.0)
    for frame, z in ((1, 0.0), (12, 0.5), (24, 0.0)):
        first.rotation_euler[2] = z
        first.keyframe_insert("rotation_euler", index=2, frame=frame)
    frames = range(-5, 40)
    before = _channels(scene, ob, frames)
    bake_api.bake_scene(scene)
    assert np.array_equal(_user_channels_over(scene, ob, frames), before)
    after = _channels(scene, ob, frames)
    outside = [i for i, f in enumerate(frames) if not BAKED[0] <= f <= BAKED[1]]
    assert np.array_equal(after[outside], before[outside])
    bake_api.clear_bake(scene)
    assert np.array_equal(_channels(scene, ob, frames), before)
    assert tuple(first.rotation_euler)[:2] == (float(np.float32(0.3)), float(np.float32(-0.2)))


def test_a_muted_user_track_does_not_count_as_animating(scene, bake_api):
    """A muted track keys a simulated bone: it plays nothing, so the bone's rotation is the
    user's static pose, held under the result (it played the identity outside the bake)."""
    ob = _rig(scene)
    track = _base_track(ob)
    track.mute = True
    first = ob.pose.bones[NAMES[0]]
    first.rotation_quaternion = (0.9486833, 0.3162278, 0.0, 0.0)
    frames = range(-5, 40)
    before = _channels(scene, ob, frames)
    bake_api.bake_scene(scene)
    after = _channels(scene, ob, frames)  # Waft playing: outside the bake, the static pose
    outside = [i for i, f in enumerate(frames) if not BAKED[0] <= f <= BAKED[1]]
    assert np.array_equal(after[outside], before[outside])
    assert np.array_equal(_user_channels_over(scene, ob, frames), before)
    bake_api.clear_bake(scene)
    assert np.array_equal(_channels(scene, ob, frames), before)
    assert track.mute


def test_a_user_track_named_like_waft_is_the_users(scene, bake_api):
    """Waft's tracks are known by their exact names: "Wafting idle" was taken for one, and with
    Constrained Bones = Turn Off for Result the bake rebuilt it and keyed a constraint's
    influence into the user's action, which Clear left there."""
    ob = _rig(scene)
    scene.waft.constrained_bones = 'TURN_OFF'
    limit = ob.pose.bones[NAMES[0]].constraints.new('LIMIT_ROTATION')
    limit.use_limit_x, limit.max_x, limit.owner_space = True, 0.1, 'LOCAL'
    track = _base_track(ob)
    track.name = "Wafting idle"
    strip = track.strips[0]
    strip.blend_type, strip.extrapolation = 'COMBINE', 'HOLD_FORWARD'
    base = strip.action
    state = (len(rigs.action_fcurves(base)), sorted(base.keys()))
    frames = range(-5, 40)
    before = _channels(scene, ob, frames)
    bake_api.bake_scene(scene)
    bake_api.bake_scene(scene)
    assert ob.animation_data.nla_tracks["Wafting idle"].strips[0] == strip
    assert (strip.blend_type, strip.extrapolation) == ('COMBINE', 'HOLD_FORWARD')
    assert (len(rigs.action_fcurves(base)), sorted(base.keys())) == state
    bake_api.clear_bake(scene)
    assert [t.name for t in ob.animation_data.nla_tracks] == ["Wafting idle"]
    assert (len(rigs.action_fcurves(base)), sorted(base.keys())) == state
    assert np.array_equal(_channels(scene, ob, frames), before)


def test_edit_original_on_an_additive_action_plays_it_once(scene, bake_api):
    """While the original is active again for editing, its stashed strip is muted: both
    played an Add action twice (a root at 0.3 went to 0.6)."""
    ob = _rig(scene)
    _base_track(ob)
    ob.animation_data.action_blend_type = 'ADD'
    frames = range(0, 30)
    before = _channels(scene, ob, frames)
    bake_api.bake_scene(scene)
    ob.select_set(True)
    bpy.context.view_layer.objects.active = ob
    assert bpy.ops.waft.edit_original() == {'FINISHED'}
    assert np.array_equal(_channels(scene, ob, frames)[:, :3], before[:, :3])
    bake_api.bake_scene(scene)
    assert not ob.animation_data.nla_tracks["Waft: original"].mute
    assert np.array_equal(_user_channels_over(scene, ob, frames), before)
    bake_api.clear_bake(scene)
    assert np.array_equal(_channels(scene, ob, frames), before)


def _user_channels_over(scene, ob, frames) -> np.ndarray:
    tracks = [t for t in ob.animation_data.nla_tracks if t.name in ("Waft", "Waft Ragdoll")]
    for t in tracks:
        t.mute = True
    try:
        return _channels(scene, ob, frames)
    finally:
        for t in tracks:
            t.mute = False


def _no_nla(ob):
    ob.animation_data.use_nla = False


def _solo(ob):
    _base_track(ob).is_solo = True


@pytest.mark.parametrize(("spoil", "message"), [
    (_no_nla, r"Armature 'Rig': its NLA tracks are turned off"),
    (_solo, r"Armature 'Rig': NLA track 'Base layer' is soloed"),
])
def test_a_result_that_could_not_play_is_a_clear_error_that_changes_nothing(
        scene, bake_api, spoil, message):
    ob = _rig(scene)
    spoil(ob)
    before = rigs.fingerprint(scene)
    with pytest.raises(Exception, match=message):
        bake_api.bake_scene(scene)
    assert rigs.fingerprint(scene) == before


def test_a_linked_rig_without_an_override_is_a_clear_error(scene, bake_api, tmp_path):
    """Keys written into a linked object are lost on save (tracks were written, then gone,
    leaving orphan actions): the rig must be overridden first."""
    ob = _rig(scene)
    ob.name = "LinkedRig"
    library = str(tmp_path / "library.blend")
    bpy.ops.wm.save_as_mainfile(filepath=library)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = BAKED
    with bpy.data.libraries.load(library, link=True) as (_, into):
        into.objects = ["LinkedRig"]
    scene.collection.objects.link(into.objects[0])
    before = rigs.fingerprint(scene)
    actions = set(bpy.data.actions.keys())
    with pytest.raises(Exception, match=r"Armature 'LinkedRig' is linked from .*library "
                                        r"override"):
        bake_api.bake_scene(scene)
    assert rigs.fingerprint(scene) == before
    assert set(bpy.data.actions.keys()) == actions
