"""Reading, sampling and writing without the physics: a stand-in solver returns each body's
animation target, so Blender must play back exactly the user's animation through the keys
Waft wrote (every rotation mode, object scale, unit scale), on the Waft Ragdoll track, and
Clear must give back the file as it was.
"""

from __future__ import annotations

import bpy
import numpy as np
import pytest
import ragdoll_rigs as rigs
import waft_rigs

FRAMES = list(range(1, 13))


def _played(scene, ob):
    return rigs.world_matrices(scene, ob, rigs.NAMES, FRAMES)


@pytest.mark.parametrize("rotation_mode", ["QUATERNION", "XYZ", "ZXY", "AXIS_ANGLE"])
def test_targets_round_trip_through_the_keys(scene, bake_api, kinematic_core, rotation_mode):
    ob = rigs.humanoid(scene, rotation_mode=rotation_mode)
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    rigs.animate_wave(ob, FRAMES, travel=(0.0, -0.02, 0.01))
    before = _played(scene, ob)
    report = bake_api.bake_scene(scene)
    assert report.systems["ragdoll"].bones == len(rigs.NAMES)
    track = ob.animation_data.nla_tracks["Waft Ragdoll"]
    assert track.strips[0].action.name == "Waft Ragdoll|Dummy"
    assert track.strips[0].blend_type == 'REPLACE'
    assert track.strips[0].extrapolation == 'NOTHING'
    assert ob.animation_data.action is None
    assert ob.animation_data.nla_tracks["Waft: original"].strips[0].action.name == "UserMotion"
    assert np.allclose(_played(scene, ob), before, atol=1e-5)


def test_scaled_armature_in_a_centimetre_scene(scene, bake_api, kinematic_core):
    scene.unit_settings.scale_length = 0.01
    ob = rigs.humanoid(scene)
    ob.scale = (100.0, 100.0, 100.0)
    ob.rotation_euler = (0.0, 0.0, 0.7)
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    rigs.animate_wave(ob, FRAMES, travel=(0.01, 0.0, 0.0))
    before = _played(scene, ob)
    bake_api.bake_scene(scene)
    assert np.allclose(_played(scene, ob), before, atol=1e-3)  # cm units, 100× scale


def test_clear_restores_the_file_exactly(scene, bake_api, kinematic_core):
    ob = rigs.humanoid(scene)
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    rigs.animate_wave(ob, FRAMES)
    ob.pose.bones["head"].rotation_quaternion = (0.9, 0.1, 0.0, 0.0)  # a static, unkeyed pose
    scene.frame_set(5)
    before = waft_rigs.fingerprint(scene)
    played = _played(scene, ob)
    scene.frame_set(5)
    bake_api.bake_scene(scene)
    bake_api.bake_scene(scene)  # a re-bake samples the user's pose, not the first bake
    assert np.allclose(_played(scene, ob), played, atol=1e-5)
    scene.frame_set(5)
    assert bake_api.clear_bake(scene) == ["Dummy"]
    assert waft_rigs.fingerprint(scene) == before
    assert not [a for a in bpy.data.actions if a.name.startswith("Waft")]


def test_muting_the_track_plays_the_user_animation(scene, bake_api, kinematic_core):
    ob = rigs.humanoid(scene)
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    rigs.animate_wave(ob, FRAMES)
    played = _played(scene, ob)
    bake_api.bake_scene(scene)
    ob.animation_data.nla_tracks["Waft Ragdoll"].mute = True
    assert np.allclose(_played(scene, ob), played, atol=1e-6)


def test_progress_is_reported_per_phase(scene, bake_api, kinematic_core):
    ob = rigs.humanoid(scene)
    scene.frame_start, scene.frame_end = 1, 30
    rigs.animate_wave(ob, range(1, 31))
    seen = []
    bake_api.bake_scene(scene, progress=seen.append)
    ragdoll = [p for p in seen if p.system == "ragdoll"]
    assert {p.phase for p in ragdoll} == {"sample", "solve"}
    assert ragdoll[-1].done == ragdoll[-1].total


def test_closing_the_generator_changes_nothing(scene, bake_api, kinematic_core):
    ob = rigs.humanoid(scene)
    scene.frame_start, scene.frame_end = 1, 30
    rigs.animate_wave(ob, range(1, 31))
    scene.frame_set(4)
    before = waft_rigs.fingerprint(scene)
    steps = bake_api.bake_scene_steps(scene, sample_chunk=5)
    for _ in range(3):
        next(steps)
    steps.close()
    assert waft_rigs.fingerprint(scene) == before


def test_bake_and_clear_operators_on_the_active_ragdoll(scene, kinematic_core):
    ob = rigs.humanoid(scene)
    other = rigs.humanoid(scene, "Other")
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    rigs.animate_wave(ob, FRAMES)
    bpy.context.view_layer.objects.active = ob
    assert bpy.ops.waft.bake(scope="ACTIVE") == {'FINISHED'}
    assert ob.animation_data.nla_tracks.get("Waft Ragdoll") is not None
    assert other.animation_data is None  # only the active ragdoll was baked
    assert bpy.ops.waft.clear_bake(scope="ACTIVE") == {'FINISHED'}
    assert ob.animation_data.nla_tracks.get("Waft Ragdoll") is None
    assert ob.animation_data.action.name == "UserMotion"
