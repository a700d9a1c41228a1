"""Bad ragdoll input: a clear SetupError naming the armature and bone and why, and the .blend
unchanged (fingerprint of actions, NLA, pose, matrices, current frame). Each case starts from a
ragdoll that was baked once, so "unchanged" covers the previous result too.
"""

from __future__ import annotations

import re

import bpy
import pytest
import ragdoll_rigs as rigs
import waft_rigs
from mathutils import Vector

FRAMES = list(range(1, 9))


@pytest.fixture
def baked(scene, bake_api, kinematic_core):
    ob = rigs.humanoid(scene)
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    rigs.animate_wave(ob, FRAMES)
    bake_api.bake_scene(scene)
    scene.frame_set(3)
    return ob


def _fails_cleanly(scene, bake_api, error_type, pattern: str) -> str:
    before = waft_rigs.fingerprint(scene)
    with pytest.raises(error_type) as info:
        bake_api.bake_scene(scene)
    message = str(info.value)
    assert re.search(pattern, message), message
    assert waft_rigs.fingerprint(scene) == before
    return message


def test_zero_length_bone(scene, bake_api, baked, setup_error):
    bpy.context.view_layer.objects.active = baked
    bpy.ops.object.mode_set(mode='EDIT')
    bone = baked.data.edit_bones["hand.L"]
    bone.tail = bone.head + Vector((2e-6, 0.0, 0.0))  # Blender keeps a 2e-6 stub
    bpy.ops.object.mode_set(mode='OBJECT')
    scene.frame_set(3)
    _fails_cleanly(scene, bake_api, setup_error, r"'Dummy', bone 'hand\.L'.*zero length")


def test_parent_not_chosen(scene, bake_api, baked, setup_error):
    baked.pose.bones["forearm.R"].waft_ragdoll.body = False
    _fails_cleanly(scene, bake_api, setup_error,
                   r"'Dummy', bone 'hand\.R'.*parent bone 'forearm\.R' is not a ragdoll body")


def test_two_roots(scene, bake_api, baked, setup_error):
    baked.pose.bones["hips"].waft_ragdoll.body = False
    _fails_cleanly(scene, bake_api, setup_error,
                   r"'Dummy', bone 'thigh\.L'.*parent bone 'hips' is not a ragdoll body")


def test_twist_min_above_max(scene, bake_api, baked, setup_error):
    baked.pose.bones["shin.L"].waft_ragdoll.twist_limit = (0.5, -0.5)
    _fails_cleanly(scene, bake_api, setup_error,
                   r"'Dummy', bone 'shin\.L'.*twist limit min 28.6\d*° is greater than max")


def test_negative_swing_limit(scene, bake_api, baked, setup_error):
    baked.pose.bones["shin.L"].waft_ragdoll["swing_limit"] = (-0.1, 0.5)
    _fails_cleanly(scene, bake_api, setup_error, r"'Dummy', bone 'shin\.L'.*swing limit")


@pytest.mark.parametrize("value", [0.0, -2.0])
def test_zero_or_negative_mass(scene, bake_api, baked, setup_error, value):
    body = baked.pose.bones["head"].waft_ragdoll
    body.use_mass = True
    body["mass"] = value
    _fails_cleanly(scene, bake_api, setup_error, r"'Dummy', bone 'head'.*mass .* positive")


def test_negative_density(scene, bake_api, baked, setup_error):
    baked.pose.bones["chest"].waft_ragdoll["density"] = -5.0
    _fails_cleanly(scene, bake_api, setup_error, r"'Dummy', bone 'chest'.*density .* positive")


def test_zero_default_density(scene, bake_api, baked, setup_error):
    baked.waft_ragdoll.default_density = 0.0
    _fails_cleanly(scene, bake_api, setup_error,
                   r"'Dummy', bone 'hips'.*density 0 .*default density.* positive")


@pytest.mark.parametrize("name", ["motor_strength", "blend", "radius", "joint_damping"])
def test_nan_body_setting(scene, bake_api, baked, setup_error, name):
    setattr(baked.pose.bones["upper_arm.L"].waft_ragdoll, name, float("nan"))  # RNA keeps NaN
    _fails_cleanly(scene, bake_api, setup_error, rf"'Dummy', bone 'upper_arm\.L'.*'{name}'")


def test_nan_ragdoll_setting(scene, bake_api, baked, setup_error):
    baked.waft_ragdoll["fall_threshold"] = float("inf")
    _fails_cleanly(scene, bake_api, setup_error, r"Armature 'Dummy'.*'fall_threshold'")


def test_setting_keyed_to_nan_names_the_frame(scene, bake_api, baked, setup_error):
    body = baked.pose.bones["forearm.L"].waft_ragdoll
    original = baked.animation_data.nla_tracks["Waft: original"].strips[0].action
    baked.animation_data.action = original  # key into the user's action, as a user would
    baked.animation_data.nla_tracks.remove(baked.animation_data.nla_tracks["Waft: original"])
    baked.waft.original_action = None
    body.blend = 0.2
    body.keyframe_insert("blend", frame=1)  # the bone's own property (waft_ragdoll_blend)
    curve = next(c for c in waft_rigs.action_fcurves(original)
                 if c.data_path.endswith("waft_ragdoll_blend"))
    curve.keyframe_points[0].interpolation = 'CONSTANT'  # finite until the NaN key
    curve.keyframe_points.insert(6, float("nan"))
    scene.frame_set(3)
    _fails_cleanly(scene, bake_api, setup_error,
                   r"'Dummy', bone 'forearm\.L'.*'blend'.*frame 6")


def test_missing_carrier(scene, bake_api, baked, setup_error):
    baked.waft_ragdoll.carrier_bone = "chest"  # the carrier armature was deleted
    _fails_cleanly(scene, bake_api, setup_error, r"Armature 'Dummy'.*carrier.*missing")


def test_carrier_that_is_not_a_ragdoll(scene, bake_api, baked, setup_error):
    other = rigs.humanoid(scene, "Carrier")
    other.waft_ragdoll.enabled = False
    baked.waft_ragdoll.carrier = other
    baked.waft_ragdoll.carrier_bone = "chest"
    _fails_cleanly(scene, bake_api, setup_error,
                   r"Armature 'Dummy'.*carrier 'Carrier' is not a Waft ragdoll")


def test_carrier_bone_that_is_not_a_body(scene, bake_api, baked, setup_error):
    other = rigs.humanoid(scene, "Carrier")
    other.pose.bones["head"].waft_ragdoll.body = False
    baked.waft_ragdoll.carrier = other
    baked.waft_ragdoll.carrier_bone = "head"
    _fails_cleanly(scene, bake_api, setup_error,
                   r"Armature 'Dummy'.*carrier bone 'head' is not a body of ragdoll 'Carrier'")


def test_nothing_chosen(scene, bake_api, baked, setup_error):
    for pb in baked.pose.bones:
        pb.waft_ragdoll.body = False
    _fails_cleanly(scene, bake_api, setup_error, r"Armature 'Dummy'.*no bones are ragdoll bodies")



def test_location_keyed_out_of_range_names_the_bone(scene, bake_api, setup_error):
    """A location keyed "to infinity" is stored as 3.4e38 (finite): the real solver's input check
    names the keyed bone and the time, not the body that would have diverged furthest (it named
    the hips)."""
    ob = rigs.humanoid(scene)
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    rigs.animate_wave(ob, FRAMES)
    arm = ob.pose.bones["upper_arm.L"]
    arm.location = (0.0, 0.0, 0.0)
    arm.keyframe_insert("location", frame=1)
    arm.location = (0.0, float("inf"), 0.0)  # (a bone not connected to its parent)
    arm.keyframe_insert("location", frame=6)
    for curve in waft_rigs.action_fcurves(ob.animation_data.action):
        if curve.data_path == 'pose.bones["upper_arm.L"].location':
            curve.keyframe_points[0].interpolation = 'CONSTANT'  # in range until frame 6
    scene.frame_set(3)
    _fails_cleanly(scene, bake_api, setup_error,
                   r"'Dummy'.*'upper_arm\.L'.*e\+38 m from the origin at 5 frames after "
                   r"the bake's first frame")
