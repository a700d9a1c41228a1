"""The live preview plays ragdolls too: the timeline played forward shows, bit for bit, the bone
channels and matrices the bake of the same scene writes (a walk into a wall that makes the
ragdoll let go and blend back, quaternion and Euler bones, 24 and 25 fps, the Sample Rate's
sub-frames), the animation target is drawn beside it as after a bake, nothing is keyed,
turning it off gives the bones back, and *Bake* right after a full preview writes the
preview's simulation without solving again."""

from __future__ import annotations

import sys

import bpy
import numpy as np
import pytest
import ragdoll_rigs as rigs
import waft_rigs

FRAMES = range(1, 31)


def _scene(scene, fps: int, rotation_mode: str):
    """The humanoid walking at 1.5 m/s into a wall, root-locked with a fall threshold, blended
    30 % toward its animation, recovering after the fall; the ground on."""
    scene.render.fps = fps
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    scene.waft.sample_rate = 120.0
    ob = rigs.humanoid(scene, rotation_mode=rotation_mode)
    settings = ob.waft_ragdoll
    settings.root_lock, settings.fall_threshold = True, 0.15
    settings.use_recovery, settings.recovery_delay, settings.recovery_time = True, 0.1, 0.2
    for pose_bone in ob.pose.bones:
        pose_bone.waft_ragdoll.blend = 0.3
    rigs.animate_wave(ob, FRAMES, travel=(0.0, -1.5 / fps, 0.0))
    wall = waft_rigs.sphere_collider(scene, "Wall", (0.0, -0.95, 1.0), 1.0)
    wall.empty_display_type = 'CUBE'
    wall.scale = (1.0, 0.25, 1.0)
    scene.frame_set(scene.frame_start)
    return ob


def _shown(ob) -> np.ndarray:
    bpy.context.view_layer.update()
    values = []
    for pose_bone in ob.pose.bones:
        values.extend(pose_bone.location)
        values.extend(getattr(pose_bone, rigs.rotation_prop(pose_bone)))
        values.extend(v for row in pose_bone.matrix for v in row)
    return np.array(values, dtype=np.float32)


def _play(scene, ob) -> dict:
    out = {}
    for frame in FRAMES:
        scene.frame_set(frame)
        out[frame] = _shown(ob)
    return out


def _preview(waft_module_name):
    return sys.modules[f"{waft_module_name}.addon.preview"]


@pytest.mark.parametrize(("fps", "rotation_mode"), [(24, "QUATERNION"), (25, "XYZ")])
def test_played_ragdoll_preview_is_the_bake_bit_for_bit(scene, bake_api, waft_module_name, fps,
                                                        rotation_mode):
    ob = _scene(scene, fps, rotation_mode)
    rest = _shown(ob)
    actions_before = set(bpy.data.actions.keys())
    scene.waft.use_preview = True
    previewed = _play(scene, ob)
    state = _preview(waft_module_name).state(scene)
    assert state.message == "" and sorted(state.cache) == list(FRAMES), state.status()
    status = state.status()
    assert "read the shot" in status
    # the animation target is drawn beside the preview (the red bodies), as after a bake
    targets = sys.modules[f"{waft_module_name}.addon.ragdoll.targets"]
    drawn = targets.target_lines(ob.name, 10)
    assert drawn is not None
    assert set(bpy.data.actions.keys()) == actions_before  # nothing keyed
    scene.waft.use_preview = False
    scene.frame_set(scene.frame_start)
    np.testing.assert_array_equal(_shown(ob), rest)  # the animation again
    report = bake_api.bake_scene(scene).systems["ragdoll"]
    assert not report.from_preview  # the preview was off: the bake solved
    fell = report.setups[0].fell_at
    assert fell is not None and FRAMES[0] < fell < FRAMES[-1] - 5  # it falls and blends back
    assert f"fell at frame {fell}" in status  # the preview said where, as the bake does
    np.testing.assert_array_equal(targets.target_lines(ob.name, 10), drawn)
    baked = _play(scene, ob)
    for frame in FRAMES:
        np.testing.assert_array_equal(previewed[frame], baked[frame], err_msg=f"frame {frame}")


def test_ragdoll_preview_off_gives_the_bones_back(scene):
    ob = _scene(scene, 24, "QUATERNION")
    scene.frame_set(8)
    animation = _shown(ob)
    scene.waft.use_preview = True
    for frame in range(1, 9):
        scene.frame_set(frame)
    assert np.abs(_shown(ob) - animation).max() > 1e-3  # the simulation's pose
    scene.waft.use_preview = False
    np.testing.assert_array_equal(_shown(ob), animation)


def test_bake_after_a_full_ragdoll_preview_writes_it_without_solving_again(scene, bake_api):
    ob = _scene(scene, 24, "QUATERNION")
    bake_api.bake_scene(scene)
    solved = _play(scene, ob)
    bake_api.clear_bake(scene)
    scene.waft.use_preview = True
    _play(scene, ob)
    report = bake_api.bake_scene(scene).systems["ragdoll"]
    assert report.from_preview and "not solved again" in report.summary()
    scene.waft.use_preview = False
    reused = _play(scene, ob)
    for frame in FRAMES:
        np.testing.assert_array_equal(reused[frame], solved[frame], err_msg=f"frame {frame}")
    # A setting changed after the preview played (no frame change since): solved again.
    bake_api.clear_bake(scene)
    scene.waft.use_preview = True
    _play(scene, ob)
    ob.pose.bones["forearm.L"].waft_ragdoll.motor_strength = 0.2
    report = bake_api.bake_scene(scene).systems["ragdoll"]
    assert not report.from_preview
    scene.waft.use_preview = False
    changed = _play(scene, ob)
    assert max(np.abs(changed[f] - solved[f]).max() for f in FRAMES) > 1e-4


def test_a_body_setting_starts_the_preview_over_and_a_keyed_one_does_not(scene,
                                                                         waft_module_name):
    """A body's per-frame settings live on the pose bone (``waft_ragdoll_<name>``): changing one
    starts the preview over; keyed (a timed blend), its value changes every frame and the
    preview plays on."""
    ob = _scene(scene, 24, "QUATERNION")
    preview = _preview(waft_module_name)
    scene.waft.use_preview = True
    _play(scene, ob)
    state = preview.state(scene)
    run = state.run
    scene.frame_set(5)
    assert state.run is run  # nothing changed: scrubbing back over the cache
    ob.pose.bones["spine"].waft_ragdoll.motor_strength = 0.3
    scene.frame_set(2)
    assert state.run is not run and sorted(state.cache) == [1, 2]
    bone = ob.pose.bones["spine"]
    for frame, blend in ((1, 0.0), (20, 1.0)):
        bone.waft_ragdoll_blend = blend
        bone.keyframe_insert("waft_ragdoll_blend", frame=frame)
    scene.frame_set(1)
    run = state.run
    _play(scene, ob)
    assert state.run is run and sorted(state.cache) == list(FRAMES), state.status()
    scene.waft.use_preview = False
