"""Bad input gets a clear error naming the object (and bone), and the .blend is left unchanged.

Each case starts from a rig with a user action AND a previous Waft bake, so "unchanged" covers
both the user's animation and Waft's earlier result; the fingerprint compares actions, their
F-curves, NLA tracks and strips, pose values, object matrices and the current frame.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import bpy
import pytest
from mathutils import Vector

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

NAMES = rigs.bone_names("Hair", 4)


@pytest.fixture
def baked_rig(scene, bake_api):
    """A keyed rig baked once; the current frame is left at 7 (not the range start)."""
    ob = rigs.chain_rig(scene, count=4, length=0.1, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = 1, 12
    rigs.key_root_location(ob, [1, 12], lambda f: (0.02 * f, 0.0, 0.0))
    bake_api.bake_scene(scene)
    scene.frame_set(7)
    return ob


def _fails_cleanly(scene, bake_api, error_type, pattern: str, **kwargs) -> str:
    before = rigs.fingerprint(scene)
    with pytest.raises(error_type) as info:
        bake_api.bake_scene(scene, **kwargs)
    message = str(info.value)
    assert re.search(pattern, message), message
    assert rigs.fingerprint(scene) == before
    return message


def _setup_error(waft):
    return sys.modules[waft.__name__ + ".core.errors"].SetupError


def test_branching_chain_names_the_bone_and_both_branches(scene, bake_api, baked_rig, waft):
    ob = baked_rig
    bpy.ops.object.mode_set(mode='EDIT')
    branch = ob.data.edit_bones.new("Branch")
    branch.head = ob.data.edit_bones["Hair.001"].tail
    branch.tail = branch.head + ob.data.edit_bones["Hair.001"].vector
    branch.parent = ob.data.edit_bones["Hair.001"]
    bpy.ops.object.mode_set(mode='OBJECT')
    ob.pose.bones["Branch"].waft.simulate = True
    scene.frame_set(7)
    _fails_cleanly(scene, bake_api, _setup_error(waft),
                   r"'Rig', bone 'Hair\.001'.*branches into .*'(Hair\.002|Branch)' and")


def test_zero_length_bone(scene, bake_api, waft):
    ob = rigs.chain_rig(scene, count=3, length=0.1, direction=(1.0, 0.0, 0.0))
    bpy.ops.object.mode_set(mode='EDIT')
    bone = ob.data.edit_bones["Hair.002"]
    # Collapsing it: 5.0 keeps a 2e-6 stub, 4.2 deletes an exactly zero bone, so use the stub.
    bone.tail = bone.head + Vector((2e-6, 0.0, 0.0))
    bpy.ops.object.mode_set(mode='OBJECT')
    _fails_cleanly(scene, bake_api, _setup_error(waft), r"'Rig', bone 'Hair\.002'.*zero length")


def test_pose_scale_zero_collapses_a_bone(scene, bake_api, baked_rig, waft):
    pose_bone = baked_rig.pose.bones["Hair.001"]
    pose_bone.scale = (0.0, 0.0, 0.0)
    pose_bone.keyframe_insert("scale", frame=5)
    scene.frame_set(7)
    _fails_cleanly(scene, bake_api, _setup_error(waft), r"'Rig', bone 'Hair\.001'.*zero length")


@pytest.mark.parametrize("scale", [(1.0, 0.0, 1.0), (-1.0, 1.0, 1.0)])
def test_zero_or_negative_armature_scale(scene, bake_api, baked_rig, waft, scale):
    baked_rig.scale = scale
    _fails_cleanly(scene, bake_api, _setup_error(waft), r"Armature 'Rig'.*(zero|negative)")


@pytest.mark.parametrize("scale", [(0.0, 0.0, 0.0), (1.0, 1.0, -1.0)])
def test_zero_or_negative_collider_scale(scene, bake_api, baked_rig, waft, scale):
    ball = rigs.sphere_collider(scene, "Ball", (0.3, 0.0, 1.8), 0.1)
    ball.scale = scale
    _fails_cleanly(scene, bake_api, _setup_error(waft), r"Collider 'Ball'.*(zero|negative)")


def test_collider_scale_animated_to_zero_names_the_frame(scene, bake_api, baked_rig, waft):
    ball = rigs.sphere_collider(scene, "Ball", (0.3, 0.0, 1.8), 0.1)
    ball.keyframe_insert("scale", frame=1)
    ball.scale = (0.0, 0.0, 0.0)
    ball.keyframe_insert("scale", frame=9)
    scene.frame_set(7)
    _fails_cleanly(scene, bake_api, _setup_error(waft), r"Collider 'Ball'.*frame 9")


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_setup_setting(scene, bake_api, baked_rig, waft, value):
    baked_rig.waft["damping"] = value  # the id property bypasses the UI range
    _fails_cleanly(scene, bake_api, _setup_error(waft), r"Armature 'Rig'.*'damping'")


def test_non_finite_bone_override(scene, bake_api, baked_rig, waft):
    settings = baked_rig.pose.bones["Hair.002"].waft
    settings.use_overrides = True
    settings["radius"] = float("nan")
    _fails_cleanly(scene, bake_api, _setup_error(waft), r"'Rig', bone 'Hair\.002'.*'radius'")


def test_setting_keyed_to_nan_names_the_frame(scene, bake_api, baked_rig, waft):
    baked_rig.waft.drag = 0.5
    baked_rig.waft.keyframe_insert("drag", frame=1)
    fcurve = next(c for c in rigs.action_fcurves(baked_rig.animation_data.nla_tracks[
        "Waft: original"].strips[0].action) if c.data_path == "waft.drag") \
        if baked_rig.animation_data.action is None else None
    assert fcurve is None  # keyframe_insert made a new active action for the setting
    action = baked_rig.animation_data.action
    curve = next(c for c in rigs.action_fcurves(action) if c.data_path == "waft.drag")
    curve.keyframe_points.insert(10, float("nan"))
    scene.frame_set(7)
    _fails_cleanly(scene, bake_api, _setup_error(waft), r"Armature 'Rig'.*'drag'.*frame \d+")


def test_a_bone_keyed_to_nan_names_the_bone_and_frame(scene, bake_api, baked_rig, waft):
    """It said "evaluated pose is not finite": no bone, no frame."""
    action = baked_rig.animation_data.nla_tracks["Waft: original"].strips[0].action
    curve = next(c for c in rigs.action_fcurves(action)
                 if c.data_path == f'pose.bones["{rigs.ROOT}"].location' and c.array_index == 0)
    curve.keyframe_points.insert(10, float("nan"))
    scene.frame_set(1)  # (on its first key the bone is still finite: the file compares equal)
    _fails_cleanly(scene, bake_api, _setup_error(waft),
                   rf"Armature 'Rig', bone '{rigs.ROOT}': its evaluated pose is not finite at "
                   r"frame [\d.]+")


def test_nothing_flagged(scene, bake_api, baked_rig, waft):
    for name in NAMES:
        baked_rig.pose.bones[name].waft.simulate = False
    _fails_cleanly(scene, bake_api, _setup_error(waft), r"Armature 'Rig'.*no bones are flagged")


def test_no_setup_in_the_scene(scene, bake_api, waft):
    rigs.chain_rig(scene, count=2).waft.enabled = False
    _fails_cleanly(scene, bake_api, _setup_error(waft), r"Scene 'Scene' has no Waft setup")


def test_empty_frame_range(scene, bake_api, baked_rig, waft):
    _fails_cleanly(scene, bake_api, _setup_error(waft), r"Scene 'Scene'.*10.5 is empty",
                   frame_start=10, frame_end=5)


def test_missing_collider_object(scene, bake_api, baked_rig, waft):
    collection = bpy.data.collections.new("RigColliders")
    scene.collection.children.link(collection)
    ball = rigs.sphere_collider(scene, "Ball", (0.3, 0.0, 1.8), 0.1)
    collection.objects.link(ball)
    baked_rig.waft.collider_collection = collection
    bake_api.bake_scene(scene)
    bpy.data.objects.remove(ball)  # the collider the setup relied on is gone
    scene.frame_set(7)
    _fails_cleanly(scene, bake_api, _setup_error(waft),
                   r"Armature 'Rig'.*collection 'RigColliders' holds no Waft collider")


def test_collider_without_a_shape(scene, bake_api, baked_rig, waft):
    axes = rigs.sphere_collider(scene, "Axes", (0.3, 0.0, 1.8), 0.1)
    axes.empty_display_type = 'PLAIN_AXES'
    _fails_cleanly(scene, bake_api, _setup_error(waft), r"Collider 'Axes'.*PLAIN_AXES")


def test_diverging_simulation_names_setup_and_frame(scene, bake_api, baked_rig, waft):
    # Constraints off and absurd gravity: the chain falls away from its root without bound.
    baked_rig.waft["gravity_factor"] = 1e12
    baked_rig.waft["stretch_compliance"] = 1e9
    baked_rig.waft.use_tether = False
    errors = sys.modules[waft.__name__ + ".core.errors"]
    message = _fails_cleanly(scene, bake_api, errors.DivergenceError,
                             r"setup 'Rig' diverged at frame \d+")
    frame = int(re.search(r"frame (\d+)", message).group(1))
    assert 1 <= frame <= 12  # a scene frame number, inside the baked range


def test_operator_reports_the_error_and_cancels(scene, baked_rig):
    baked_rig.scale = (0.0, 1.0, 1.0)
    before = rigs.fingerprint(scene)
    # bpy.ops turns an operator's ERROR report into RuntimeError carrying the message.
    with pytest.raises(RuntimeError, match=r"Armature 'Rig': world scale is zero"):
        bpy.ops.waft.bake()
    assert rigs.fingerprint(scene) == before


def test_pose_scale_zero_only_at_an_off_grid_scene_frame(scene, bake_api, baked_rig, waft):
    """At 25 fps most scene frames fall between the 120 Hz samples, and the writer reads the
    bones there: a bone collapsed at such a frame alone (keyed Constant from frame 7 to 7.03,
    between the samples at 6.83 and 7.04) is caught by the check of the scene frames, which
    is skipped only for frames on the grid (already checked with the samples)."""
    scene.render.fps, scene.render.fps_base = 25, 1.0
    scene.waft.sample_rate = 120.0
    pose_bone = baked_rig.pose.bones["Hair.001"]
    for frame, scale in ((1.0, 1.0), (7.0, 0.0), (7.03, 1.0)):
        pose_bone.scale = (scale,) * 3
        pose_bone.keyframe_insert("scale", frame=frame)
    rigs.set_interpolation(baked_rig, 'CONSTANT')  # (the root's keys too: no matter here)
    scene.frame_set(7)
    _fails_cleanly(scene, bake_api, _setup_error(waft),
                   r"'Rig', bone 'Hair\.001'.*zero length at frame 7\b")
