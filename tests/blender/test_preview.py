"""Live preview (Scene.waft.use_preview) in the real bpy wheel: the timeline played forward with
``frame_set`` shows, bit for bit, what the bake of the same scene writes; scrubbing back is
served from the cache; a changed setting starts over; nothing is keyed; turning it off gives
the bones back to the animation."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

pytestmark = pytest.mark.compat

NAMES = rigs.bone_names("Hair", 5)


def _preview_module(waft_module_name: str):
    return importlib.import_module(f"{waft_module_name}.addon.preview")


def _scene(scene, *, fps=24, rotation_mode="QUATERNION", seconds=1.0):
    """A 5-bone chain on a root swinging a fast figure-eight (several g), a moving sphere with
    friction in its way, a sub-frame sample rate, every frame keyed (no key reduction)."""
    ob = rigs.chain_rig(scene, count=5, length=0.08, direction=(1.0, 0.0, -0.3),
                        rotation_mode=rotation_mode)
    rigs.calm(ob, damping=0.5, radius=0.01)
    rigs.key_figure_eight(ob.pose.bones[rigs.ROOT], fps, peak_g=4.0, seconds=seconds,
                          scene=scene)
    ball = rigs.sphere_collider(scene, "Ball", (0.2, 0.0, 1.7), 0.08)
    ball.waft_collider.friction = 0.4
    ball.keyframe_insert("location", frame=1)
    ball.location = (0.1, 0.05, 1.9)
    ball.keyframe_insert("location", frame=scene.frame_end)
    scene.waft.sample_rate = 120.0
    scene.waft.use_key_reduction = False
    scene.frame_set(scene.frame_start)
    return ob


def _shown(ob) -> np.ndarray:
    """The simulated bones' rotation channels and pose matrices: what an animator sees."""
    return rigs.shown_channels([(ob, NAMES)])


def _play(scene, ob, frames) -> dict:
    out = {}
    for frame in frames:
        scene.frame_set(frame)
        out[frame] = _shown(ob)
    return out


@pytest.mark.parametrize(("fps", "rotation_mode"), [(24, "QUATERNION"), (25, "XYZ")])
def test_played_preview_is_the_bake_bit_for_bit(scene, bake_api, waft_module_name, fps,
                                                rotation_mode):
    ob = _scene(scene, fps=fps, rotation_mode=rotation_mode)
    frames = range(scene.frame_start, scene.frame_end + 1)
    actions_before = set(bpy.data.actions.keys())
    scene.waft.use_preview = True
    previewed = _play(scene, ob, frames)
    state = _preview_module(waft_module_name).state(scene)
    assert state.message == "" and sorted(state.cache) == list(frames)
    # The preview writes nothing: no action, no track.
    assert set(bpy.data.actions.keys()) == actions_before
    assert not [t for t in ob.animation_data.nla_tracks if t.name.startswith("Waft")]
    scene.waft.use_preview = False

    bake_api.bake_scene(scene)
    baked = _play(scene, ob, frames)
    moved = max(np.abs(baked[f] - baked[frames[0]]).max() for f in frames)
    assert moved > 0.1  # the chain did swing
    for frame in frames:
        np.testing.assert_array_equal(previewed[frame], baked[frame], err_msg=f"frame {frame}")


def test_scrubbing_back_uses_the_cache_and_a_far_jump_shows_the_animation(
        scene, waft_module_name):
    ob = _scene(scene, seconds=2.0)
    preview = _preview_module(waft_module_name)
    animation = _play(scene, ob, [10])[10]  # preview off: the animation's pose
    scene.waft.use_preview = True
    first = _play(scene, ob, range(1, 16))
    run = preview.state(scene).run
    assert run.next_frame == 16
    again = _play(scene, ob, [12, 5, 15])
    for frame, shown in again.items():
        np.testing.assert_array_equal(shown, first[frame])
    assert preview.state(scene).run is run and run.next_frame == 16  # nothing simulated again
    # A dropped frame or two is caught up (every frame simulated, none skipped) ...
    _play(scene, ob, [18])
    assert sorted(preview.state(scene).cache) == list(range(1, 19))
    # ... a far jump is not: the animation is shown and the status says how to get there.
    far = _play(scene, ob, [scene.frame_end])[scene.frame_end]
    state = preview.state(scene)
    assert "play from frame 1" in state.status()
    assert scene.frame_end not in state.cache
    scene.waft.use_preview = False
    np.testing.assert_array_equal(_play(scene, ob, [scene.frame_end])[scene.frame_end], far)
    np.testing.assert_array_equal(_play(scene, ob, [10])[10], animation)


def test_a_changed_setting_starts_the_preview_over(scene, bake_api, waft_module_name):
    ob = _scene(scene)
    preview = _preview_module(waft_module_name)
    scene.waft.use_preview = True
    before = _play(scene, ob, range(1, 13))
    ob.waft.damping = 4.0  # mid-way, at frame 12
    state = preview.state(scene)
    old_cache = state.cache
    scene.frame_set(13)  # near the start: simulated again from frame 1 on the spot
    assert state.cache is not old_cache and sorted(state.cache) == list(range(1, 14))
    after = _play(scene, ob, range(1, 13))
    assert np.abs(after[12] - before[12]).max() > 1e-3
    # A collider's key moved: noticed too.
    ball = scene.objects["Ball"]
    fcurve = rigs.action_fcurves(ball.animation_data.action)[0]
    fcurve.keyframe_points[0].co.y += 0.05
    old_cache = state.cache
    scene.frame_set(5)
    assert state.cache is not old_cache and sorted(state.cache) == list(range(1, 6))
    after = _play(scene, ob, range(1, 13))
    scene.waft.use_preview = False
    bake_api.bake_scene(scene)
    baked = _play(scene, ob, range(1, 13))
    for frame in range(1, 13):
        np.testing.assert_array_equal(after[frame], baked[frame])


def _longer_last_bone(scene, ob):
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode='EDIT')
    bone = ob.data.edit_bones[NAMES[-1]]
    bone.tail = bone.head + (bone.tail - bone.head) * 2.0
    bpy.ops.object.mode_set(mode='OBJECT')


def _parent_moved(scene, ob):
    scene.objects["Carrier"].location = (0.0, 0.0, 0.3)
    scene.objects["Carrier"].rotation_euler = (0.0, 0.0, 0.5)


def _constraint_added(scene, ob):
    ob.pose.bones[rigs.ROOT].constraints.new('COPY_LOCATION').target = scene.objects["Ball"]


def _root_scaled(scene, ob):
    ob.pose.bones[rigs.ROOT].scale = (1.0, 1.5, 1.0)  # not keyed: the user's static pose


@pytest.mark.parametrize("edit", [
    lambda scene, ob: setattr(scene.objects["Ball"], "empty_display_size", 0.16),
    lambda scene, ob: setattr(scene.objects["Ball"], "empty_display_type", 'CUBE'),
    _longer_last_bone, _root_scaled, _parent_moved, _constraint_added,
], ids=["collider size", "collider shape", "bone length", "pose scale", "parent moved",
        "constraint"])
def test_an_edit_outside_waft_settings_starts_the_preview_over(scene, bake_api,
                                                                waft_module_name, edit):
    """What the simulation reads beyond Waft's settings and the keys: a collider's display size
    and type, the bones' rest (Edit Mode), unkeyed pose channels, the armature's parent, bone
    constraints. Each edit went unseen and the preview kept showing the old simulation, up to
    1.1 m from what Bake then wrote. (Constraints: of the chain's bones and their parents.)"""
    ob = _scene(scene)
    carrier = bpy.data.objects.new("Carrier", None)
    scene.collection.objects.link(carrier)
    ob.parent = carrier
    frames = range(scene.frame_start, scene.frame_end + 1)
    scene.waft.use_preview = True
    _play(scene, ob, frames)
    old_cache = _preview_module(waft_module_name).state(scene).cache
    edit(scene, ob)
    scene.frame_set(scene.frame_start)
    shown = _play(scene, ob, frames)
    assert _preview_module(waft_module_name).state(scene).cache is not old_cache
    scene.waft.use_preview = False
    bake_api.bake_scene(scene)
    baked = _play(scene, ob, frames)
    for frame in frames:
        np.testing.assert_array_equal(shown[frame], baked[frame], err_msg=f"frame {frame}")


def test_keyed_waft_settings_do_not_start_the_preview_over(scene, bake_api, waft_module_name):
    """A keyed Waft setting (a wind picking up, the damping) changes value every frame:
    the preview plays on (its keys are what is compared), bit for bit the bake, and a moved
    key of it starts the preview over."""
    ob = _scene(scene)
    ob.waft.wind_direction = (0.0, 1.0, 0.0)
    for frame, speed in ((1, 0.0), (scene.frame_end, 8.0)):
        ob.waft.wind_speed = speed
        ob.waft.keyframe_insert("wind_speed", frame=frame)
    for frame, damping in ((1, 0.5), (12, 3.0)):
        ob.waft.damping = damping
        ob.waft.keyframe_insert("damping", frame=frame)
    preview = _preview_module(waft_module_name)
    frames = range(scene.frame_start, scene.frame_end + 1)
    scene.waft.use_preview = True
    run = preview.state(scene).run
    previewed = _play(scene, ob, frames)
    state = preview.state(scene)
    assert state.run is run and sorted(state.cache) == list(frames), state.status()
    fcurve = next(fc for fc in rigs.action_fcurves(ob.animation_data.action)
                  if fc.data_path == "waft.wind_speed")
    fcurve.keyframe_points[1].co.y = 2.0
    scene.frame_set(3)
    assert state.run is not run and sorted(state.cache) == [1, 2, 3]
    scene.waft.use_preview = False
    fcurve.keyframe_points[1].co.y = 8.0
    bake_api.bake_scene(scene)
    baked = _play(scene, ob, frames)
    for frame in frames:
        np.testing.assert_array_equal(previewed[frame], baked[frame], err_msg=f"frame {frame}")


def test_preview_off_gives_unkeyed_bones_back_and_bad_setups_say_why(scene, waft_module_name):
    ob = _scene(scene)
    rest = [tuple(ob.pose.bones[n].rotation_quaternion) for n in NAMES]
    scene.waft.use_preview = True
    _play(scene, ob, range(1, 8))
    assert [tuple(ob.pose.bones[n].rotation_quaternion) for n in NAMES] != rest
    scene.waft.use_preview = False
    assert [tuple(ob.pose.bones[n].rotation_quaternion) for n in NAMES] == rest
    # A setup the bake would refuse: the status names it, the bones show the animation.
    ob.waft.damping = float("nan")
    scene.waft.use_preview = True
    scene.frame_set(1)
    status = _preview_module(waft_module_name).state(scene).status()
    assert "Rig" in status and "damping" in status
    assert [tuple(ob.pose.bones[n].rotation_quaternion) for n in NAMES] == rest


def test_preview_survives_undo(scene, waft_module_name):
    ob = _scene(scene)
    scene.waft.use_preview = True
    before = _play(scene, ob, range(1, 6))
    bpy.ops.ed.undo_push(message="before")
    ob.waft.damping = 3.0
    bpy.ops.ed.undo_push(message="damping")
    bpy.ops.ed.undo()  # Blender rebuilds the objects the preview held
    scene = bpy.context.scene
    ob = scene.objects["Rig"]
    assert ob.waft.damping == 0.5
    after = _play(scene, ob, range(1, 6))
    for frame in range(1, 6):
        np.testing.assert_array_equal(after[frame], before[frame])
    assert sorted(_preview_module(waft_module_name).state(scene).cache) == list(range(1, 6))


def _rest_track(ob) -> list:
    """Every key of Waft's rest track (what the bake keeps of the unkeyed pose)."""
    out = []
    for track in ob.animation_data.nla_tracks:
        if track.name.startswith("Waft") and "rest" in track.name:
            for strip in track.strips:
                for fc in rigs.action_fcurves(strip.action):
                    out.append((fc.data_path, fc.array_index,
                                tuple(tuple(k.co) for k in fc.keyframe_points)))
    return sorted(out)


def test_baking_while_the_preview_shows_bakes_the_animation_not_the_preview(
        scene, bake_api, waft_module_name):
    """The preview poses the unkeyed simulated bones; a bake started with it on must read the
    animator's pose (its rest track) and sample the animation, never the preview's pose."""
    ob = _scene(scene)
    rest = [tuple(ob.pose.bones[n].rotation_quaternion) for n in NAMES]
    frames = range(scene.frame_start, scene.frame_end + 1)
    bake_api.bake_scene(scene)
    reference, reference_rest = _play(scene, ob, frames), _rest_track(ob)
    bake_api.clear_bake(scene)
    assert [tuple(ob.pose.bones[n].rotation_quaternion) for n in NAMES] == rest

    scene.waft.use_preview = True
    _play(scene, ob, range(1, 21))  # the preview's pose is on the bones at frame 20
    bake_api.bake_scene(scene)
    assert _rest_track(ob) == reference_rest
    scene.waft.use_preview = False
    baked = _play(scene, ob, frames)
    for frame in frames:
        np.testing.assert_array_equal(baked[frame], reference[frame], err_msg=f"frame {frame}")
    bake_api.clear_bake(scene)
    assert [tuple(ob.pose.bones[n].rotation_quaternion) for n in NAMES] == rest


def test_bake_after_a_full_preview_writes_it_without_solving_again(scene, bake_api):
    """Played through, the preview has solved the bake's exact input: *Bake* checks that input
    bit for bit and writes the preview's result, the same keys a fresh solve writes. A change
    the preview has not played yet (no frame change since) is solved, never taken from it."""
    ob = _scene(scene)
    frames = range(scene.frame_start, scene.frame_end + 1)
    bake_api.bake_scene(scene)
    solved = _play(scene, ob, frames)
    bake_api.clear_bake(scene)

    scene.waft.use_preview = True
    _play(scene, ob, frames)
    report = bake_api.bake_scene(scene)
    assert report.systems["strands"].from_preview
    assert "not solved again" in report.summary() or "not solved again" in \
        report.systems["strands"].summary()
    scene.waft.use_preview = False
    reused = _play(scene, ob, frames)
    for frame in frames:
        np.testing.assert_array_equal(reused[frame], solved[frame], err_msg=f"frame {frame}")

    bake_api.clear_bake(scene)
    scene.waft.use_preview = True
    _play(scene, ob, frames)
    ob.waft.damping = 3.0  # then straight to Bake, no frame change
    report = bake_api.bake_scene(scene)
    assert not report.systems["strands"].from_preview
    scene.waft.use_preview = False
    changed = _play(scene, ob, frames)
    assert max(np.abs(changed[f] - solved[f]).max() for f in frames) > 1e-4


def test_preview_with_a_body_mesh_collider_is_the_bake(scene, bake_api):
    """A deforming-free but moving body mesh in the chain's way: the mesh rows the preview
    reads sample by sample are the bake's, bit for bit."""
    ob = _scene(scene)
    bpy.ops.mesh.primitive_uv_sphere_add(segments=16, ring_count=8, radius=0.1,
                                         location=(0.15, 0.0, 1.75))
    body = bpy.context.object
    body.waft_collider.enabled = True
    body.keyframe_insert("location", frame=1)
    body.location = (0.05, 0.05, 1.8)
    body.keyframe_insert("location", frame=scene.frame_end)
    scene.frame_set(scene.frame_start)
    frames = range(scene.frame_start, scene.frame_end + 1)
    scene.waft.use_preview = True
    previewed = _play(scene, ob, frames)
    scene.waft.use_preview = False
    bake_api.bake_scene(scene)
    baked = _play(scene, ob, frames)
    for frame in frames:
        np.testing.assert_array_equal(previewed[frame], baked[frame], err_msg=f"frame {frame}")
