"""Game-ready bake targets: the merged copy of the user's action with the physics in it, and
the one-click glTF export that writes one clip per merged copy (checked by re-importing)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

CYCLE = 24
HAIR = rigs.bone_names("Hair", 4)


@pytest.fixture
def merging(waft_module_name):
    return importlib.import_module(f"{waft_module_name}.addon.merging")


def _walk(scene, *, name: str = "Rig"):
    """A root swaying over one keyed cycle (Cycles modifier) with a 4-bone tail, and a static
    keyed user channel on the tail's first bone (its scale) that the bake does not touch."""
    scene.render.fps, scene.render.fps_base = 24, 1.0
    scene.frame_start, scene.frame_end = 1, CYCLE
    ob = rigs.chain_rig(scene, name, count=4, length=0.15, direction=(0.0, 0.5, -1.0))
    rigs.key_sway(ob.pose.bones[rigs.ROOT], CYCLE, step=4, sway=0.2, bob=0.05, turn=0.4)
    first = ob.pose.bones[HAIR[0]]
    first.scale = (1.0, 1.1, 1.0)
    first.keyframe_insert("scale", frame=1)
    rigs.make_cyclic(ob)
    ob.animation_data.action.name = "Walk"
    return ob


def _curves(action) -> dict:
    """(path, index) → (keys, modifier types), exactly as stored."""
    out = {}
    for fc in rigs.action_fcurves(action):
        co = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
        fc.keyframe_points.foreach_get("co", co)
        out[(fc.data_path, fc.array_index)] = (co.tobytes(), tuple(m.type for m in fc.modifiers))
    return out


def _bone_matrices(scene, ob, frames) -> np.ndarray:
    """(F, bones, 4, 4) world matrices of every pose bone, played back."""
    out = []
    for frame in frames:
        scene.frame_set(frame)
        mw = np.array(ob.matrix_world)
        out.append([mw @ np.array(pb.matrix) for pb in ob.pose.bones])
    return np.array(out)


def test_merged_copy_holds_user_channels_bitwise_and_plays_the_bake(scene, bake_api, merging):
    ob = _walk(scene)
    user = _curves(ob.animation_data.action)
    bake_api.bake_scene(scene)
    played = _bone_matrices(scene, ob, range(1, CYCLE + 1))
    copy = merging.merge_results(ob)
    assert copy.name == "Walk (Waft)" and copy.use_fake_user
    merged = _curves(copy)
    baked = {key for key in merged if key not in user or merged[key] != user[key]}
    # Every user channel the bake does not key is the user's, bitwise (keys and modifiers).
    for key, curve in user.items():
        if not key[0].startswith(f'pose.bones["{HAIR[0][:4]}'):
            assert merged[key] == curve, key
    assert merged[('pose.bones["Hair.000"].scale', 1)] == user[('pose.bones["Hair.000"].scale', 1)]
    assert {path for path, _ in baked} == {f'pose.bones["{n}"].rotation_quaternion' for n in HAIR}
    assert (copy.frame_start, copy.frame_end) == (1, CYCLE)
    # The copy alone plays what the NLA stack played (the result keys, float32 as stored).
    assert ob.animation_data.action is None  # stashed by the bake; the user's action untouched
    assert _curves(bpy.data.actions["Walk"]) == user
    stack = ob.animation_data.nla_tracks
    mutes = [t.mute for t in stack]
    for track in stack:
        track.mute = True
    ob.animation_data.action = copy
    alone = _bone_matrices(scene, ob, range(1, CYCLE + 1))
    ob.animation_data.action = None
    for track, mute in zip(stack, mutes, strict=True):
        track.mute = mute
    assert np.abs(alone - played).max() < 1e-5
    # A re-bake replaces the copy (same name, one copy), the Walk action stays.
    ob.waft.damping = 0.9
    bake_api.bake_scene(scene)
    again = merging.merge_results(ob)
    assert again.name == "Walk (Waft)"
    assert [a.name for a in merging.merged_copies(ob)] == ["Walk (Waft)"]
    assert _curves(bpy.data.actions["Walk"]) == user


def test_loop_bake_merges_into_a_cyclic_clip(scene, bake_api, merging):
    ob = _walk(scene)
    scene.waft.use_loop = True
    bake_api.bake_scene(scene)
    copy = merging.merge_results(ob, loop=True)
    assert copy.use_cyclic and (copy.frame_start, copy.frame_end) == (1, CYCLE)
    for fc in rigs.action_fcurves(copy):
        assert [m.type for m in fc.modifiers] == ['CYCLES'], fc.data_path


def test_bake_target_merged_makes_the_copy_with_the_bake(scene, bake_api, merging):
    ob = _walk(scene)
    scene.waft.bake_target = 'MERGED'
    bake_api.bake_scene(scene)
    assert [a.name for a in merging.merged_copies(ob)] == ["Walk (Waft)"]
    bake_api.clear_bake(scene)
    # The copy is an export artefact: Clear leaves it (it has a fake user), the user's action
    # is active again.
    assert ob.animation_data.action.name == "Walk"
    assert [a.name for a in merging.merged_copies(ob)] == ["Walk (Waft)"]


def test_gltf_export_round_trip_keeps_the_physics(scene, bake_api, tmp_path):
    ob = _walk(scene)
    bake_api.bake_scene(scene)
    frames = range(1, CYCLE + 1)
    played = _bone_matrices(scene, ob, frames)
    before = rigs.fingerprint(scene)
    user = _curves(bpy.data.actions["Walk"])
    path = tmp_path / "walk.glb"
    result = bpy.ops.waft.export_gltf(filepath=str(path))
    assert result == {'FINISHED'}
    assert path.stat().st_size > 0
    # The scene is as it was, but for the new merged copy.
    after = rigs.fingerprint(scene)
    assert after["objects"] == before["objects"] and after["frame"] == before["frame"]
    assert set(after["actions"]) == set(before["actions"]) | {"Walk (Waft)"}
    assert _curves(bpy.data.actions["Walk"]) == user
    # Re-import into an empty scene: one clip, named after the merged copy, plays the bake.
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = 24
    bpy.ops.import_scene.gltf(filepath=str(path))
    rig = next(o for o in scene.objects if o.type == 'ARMATURE')
    imported = [a for a in bpy.data.actions if a.name.startswith("Walk (Waft)")]
    assert len(imported) == 1, [a.name for a in bpy.data.actions]
    rig.animation_data.action = imported[0]
    if hasattr(rig.animation_data, "action_slot") and imported[0].slots:
        rig.animation_data.action_slot = imported[0].slots[0]
    names = [pb.name for pb in rig.pose.bones]
    assert sorted(names) == sorted([rigs.ROOT, *HAIR])
    # glTF stores each joint's rest in its own axes: imported = original @ (a constant per
    # bone), the importer's rest correction. Measure it on the first frame, check every frame.
    order = [names.index(n) for n in [rigs.ROOT, *HAIR]]
    back = _bone_matrices(scene, rig, frames)[:, order]
    correction = np.linalg.inv(played[0]) @ back[0]
    replay = played @ correction
    assert np.abs(back[..., :3, 3] - replay[..., :3, 3]).max() < 1e-4
    assert np.abs(back[..., :3, :3] - replay[..., :3, :3]).max() < 1e-3
    # ... and the clip is the physics: the tip bends against its parent (rigid without it).
    local = np.linalg.inv(back[:, -2]) @ back[:, -1]
    assert np.abs(local[:, :3, :3] - local[0, :3, :3]).max() > 0.005  # measured 0.0225


def test_failed_export_changes_nothing_and_says_why(scene, bake_api, tmp_path):
    _walk(scene)
    bake_api.bake_scene(scene)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    before = rigs.fingerprint(scene)
    with pytest.raises(RuntimeError, match="glTF export to .* failed"):
        bpy.ops.waft.export_gltf(filepath=str(blocker / "walk.glb"))
    after = rigs.fingerprint(scene)
    assert after["objects"] == before["objects"] and after["frame"] == before["frame"]
    selected = [ob.name for ob in scene.objects if ob.select_get()]
    assert selected == ["Rig"]


def test_export_needs_a_bake(scene):
    _walk(scene)
    assert not bpy.ops.waft.export_gltf.poll()


@pytest.mark.skipif(bpy.app.version < (4, 4, 0), reason="action slots came with Blender 4.4")
def test_slot_in_your_action_target(scene, bake_api, merging):
    ob = _walk(scene)
    walk = ob.animation_data.action
    user = _curves(walk)
    user_slots = [s.identifier for s in walk.slots]
    bake_api.bake_scene(scene)
    track_played = _bone_matrices(scene, ob, range(1, CYCLE + 1))
    bake_api.clear_bake(scene)
    scene.waft.bake_target = 'SLOT'
    for _ in range(2):  # a re-bake replaces its slot
        report = bake_api.bake_scene(scene)
        assert report.bones == 4
        assert len(walk.slots) == 2
        strip = ob.animation_data.nla_tracks["Waft"].strips[0]
        assert strip.action == walk and strip.action_slot.identifier not in user_slots
        assert not [a for a in bpy.data.actions if a.name.startswith("Waft|Rig")
                    and not a.name.endswith("rest")]
        # The user's own slot is bitwise as it was; the result plays as the track target does.
        assert {k: v for k, v in _curves_of_slot(walk, user_slots[0]).items()} == user
        assert np.abs(_bone_matrices(scene, ob, range(1, CYCLE + 1)) - track_played).max() < 1e-6
    copy = merging.merge_results(ob)
    assert [s.identifier for s in copy.slots] == user_slots
    bake_api.clear_bake(scene)
    assert [s.identifier for s in walk.slots] == user_slots
    assert not [k for k, _v in walk.items()]
    assert _curves(walk) == user
    assert ob.animation_data.action == walk


def _curves_of_slot(action, identifier: str) -> dict:
    slot = next(s for s in action.slots if s.identifier == identifier)
    out = {}
    for layer in action.layers:
        for strip in layer.strips:
            bag = strip.channelbag(slot)
            for fc in bag.fcurves if bag is not None else ():
                co = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
                fc.keyframe_points.foreach_get("co", co)
                out[(fc.data_path, fc.array_index)] = (co.tobytes(),
                                                       tuple(m.type for m in fc.modifiers))
    return out


def test_export_with_an_excluded_collection_keeps_the_selection(scene, bake_api, tmp_path):
    ob = _walk(scene)
    hidden = bpy.data.collections.new("Hidden")
    scene.collection.children.link(hidden)
    body = bpy.data.objects.new("Body", bpy.data.meshes.new("Body"))
    hidden.objects.link(body)
    body.parent = ob
    other = bpy.data.objects.new("Other", None)
    scene.collection.objects.link(other)
    bpy.context.view_layer.layer_collection.children["Hidden"].exclude = True
    bake_api.bake_scene(scene)
    ob.select_set(False)
    other.select_set(True)
    assert bpy.ops.waft.export_gltf(filepath=str(tmp_path / "walk.glb")) == {'FINISHED'}
    assert [o.name for o in bpy.context.view_layer.objects if o.select_get()] == ["Other"]
