"""While a bake samples, only what it reads is evaluated (``addon/sampling_scope.py``): a skinned
body no setup reads is disabled in viewports and given back afterwards, and the result is the
same bit for bit as with every object evaluated, also when a simulated chain follows that body
through a constraint (Blender still evaluates a disabled object an enabled one depends on)."""

from __future__ import annotations

import contextlib
import importlib
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

pytestmark = pytest.mark.compat

NAMES = rigs.bone_names("Hair", 4)


def _character(scene):
    """A body rig swinging a bone, its skinned 40k-vertex body (with a vertex group ``Spot``),
    a tail rig whose root copies ``Spot`` (so it moves with the body), and an unrelated
    armature; the user has hidden a prop."""
    body_rig = rigs.new_armature(scene, "BodyRig", [
        {"name": "Spine", "head": (0.0, 0.0, 0.0), "tail": (0.0, 0.0, 1.0)}])
    spine = body_rig.pose.bones["Spine"]
    spine.rotation_mode = 'XYZ'
    for frame, angle in ((1, 0.0), (12, 0.8), (24, -0.4)):
        spine.rotation_euler = (angle, 0.0, 0.0)
        spine.keyframe_insert("rotation_euler", frame=frame)
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=200, y_subdivisions=200, size=1.0,
                                    location=(0.0, 0.3, 0.8))
    body = bpy.context.object
    body.name = "Body"
    everything = body.vertex_groups.new(name="Spine")
    everything.add(list(range(len(body.data.vertices))), 1.0, 'REPLACE')
    body.vertex_groups.new(name="Spot").add([len(body.data.vertices) // 2], 1.0, 'REPLACE')
    body.modifiers.new("Armature", 'ARMATURE').object = body_rig
    tail = rigs.chain_rig(scene, "Tail", count=4, length=0.1)
    follow = tail.pose.bones[rigs.ROOT].constraints.new('COPY_LOCATION')
    follow.target, follow.subtarget = body, "Spot"
    rigs.new_armature(scene, "Unrelated", [
        {"name": "Bone", "head": (2.0, 0.0, 0.0), "tail": (2.0, 0.0, 1.0)}])
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.ops.mesh.primitive_cube_add(location=(3.0, 0.0, 0.0))
    prop = bpy.context.object
    prop.name = "Prop"
    prop.modifiers.new("Bevel", 'BEVEL')
    prop.hide_viewport = True
    scene.frame_start, scene.frame_end = 1, 24
    return tail, body


def _keys(tail) -> np.ndarray:
    curves = rigs.action_fcurves(tail.animation_data.nla_tracks["Waft"].strips[0].action)
    values = []
    for fc in sorted(curves, key=lambda fc: (fc.data_path, fc.array_index)):
        co = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
        fc.keyframe_points.foreach_get("co", co)
        values.append(co)
    return np.concatenate(values)


def test_a_body_nothing_reads_is_not_evaluated_and_the_bake_is_unchanged(
        scene, bake_api, waft_module_name):
    tail, body = _character(scene)
    scope = importlib.import_module(f"{waft_module_name}.addon.sampling_scope")
    needed = scope.needed_objects(scene)
    assert tail in needed and body not in needed
    seen = []  # (body, unrelated, prop) disabled, at each frame the bake sets

    def watch(scene_, *_args):
        seen.append((body.hide_viewport, scene_.objects["Unrelated"].hide_viewport,
                     scene_.objects["Prop"].hide_viewport))

    bpy.app.handlers.frame_change_post.append(watch)
    try:
        bake_api.bake_scene(scene)
    finally:
        bpy.app.handlers.frame_change_post.remove(watch)
    assert seen and all(s == (True, True, True) for s in seen)
    assert not body.hide_viewport and not scene.objects["Unrelated"].hide_viewport
    assert scene.objects["Prop"].hide_viewport  # the user's own, kept
    scoped = _keys(tail)
    moved = rigs.world_points(scene, tail, NAMES, range(1, 25))
    assert np.abs(moved[:, 0] - moved[0, 0]).max() > 0.05  # the tail rides the body

    bake_api.clear_bake(scene)
    original = scope.unneeded_hidden
    scope.unneeded_hidden = lambda _scene: contextlib.nullcontext([])
    try:
        bake_api.bake_scene(scene)  # every object evaluated
    finally:
        scope.unneeded_hidden = original
    np.testing.assert_array_equal(_keys(tail), scoped)


def test_a_cancelled_bake_gives_every_object_back(scene, bake_api):
    tail, body = _character(scene)
    before = {ob.name: ob.hide_viewport for ob in scene.objects}
    steps = bake_api.bake_scene_steps(scene, sample_chunk=2)
    next(steps)
    next(steps)
    assert body.hide_viewport  # sampling
    steps.close()  # the modal bake's Esc
    assert {ob.name: ob.hide_viewport for ob in scene.objects} == before


def test_what_waft_settings_point_to_stays_evaluated(scene, bake_api, waft_module_name):
    """A scalp (Render Strands), a body-mesh collider and a cloth cage's armature are read by
    the bake itself: never disabled."""
    tail, body = _character(scene)
    scope = importlib.import_module(f"{waft_module_name}.addon.sampling_scope")
    tail.waft_hair.scalp = body
    assert body in scope.needed_objects(scene)
    tail.waft_hair.scalp = None
    body.waft_collider.enabled = True
    assert body in scope.needed_objects(scene)


def test_what_a_bake_writes_is_not_evaluated_while_it_samples(scene, waft_module_name):
    """The render strands' Curves object (geometry nodes rebuild it on every frame set) and a
    cloth cage's output are written by the bake, not read: a re-bake samples without them."""
    tail, _body = _character(scene)
    scope = importlib.import_module(f"{waft_module_name}.addon.sampling_scope")
    strands = bpy.data.objects.new("Tail Strands", bpy.data.hair_curves.new("Tail Strands"))
    scene.collection.objects.link(strands)
    strands.modifiers.new("Waft Strands", 'NODES')
    tail.waft_hair.output = strands
    assert scope.costly(strands) and strands not in scope.needed_objects(scene)
    with scope.unneeded_hidden(scene) as hidden:
        assert strands in hidden and strands.hide_viewport
    assert not strands.hide_viewport


def test_an_overridden_character_is_disabled_while_sampling_and_the_file_keeps_nothing(
        scene, bake_api, tmp_path):
    """A linked character's library override (the usual production setup) is disabled while the
    bake samples a tail beside it, and given back: saved and reopened, it is enabled and its
    override records no visibility change."""
    import test_library_override as library

    library._library(scene, tmp_path / "character.blend")
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 24
    character = library._link_and_override(scene, tmp_path / "character.blend")
    tail = rigs.chain_rig(scene, "Tail", count=3, length=0.1, start=(2.0, 0.0, 2.0))
    rigs.key_root_location(tail, (1, 24), lambda f: (0.01 * f, 0.0, 0.0))
    seen = []

    def watch(*_args):
        seen.append(character.hide_viewport)

    bpy.app.handlers.frame_change_post.append(watch)
    try:
        bake_api.bake_scene(scene)
    finally:
        bpy.app.handlers.frame_change_post.remove(watch)
    assert seen and all(seen)
    assert tail.animation_data.nla_tracks.get("Waft") is not None
    scene, character = library._reopen(tmp_path / "shot.blend")
    assert not character.hide_viewport
    paths = [p.rna_path for p in character.override_library.properties]
    assert "hide_viewport" not in paths


def test_the_preview_samples_without_the_body_and_shows_it(scene, bake_api):
    """The live preview samples each frame (and its sub-frames) with the unread body disabled,
    gives it back before the frame is shown, and still plays the bake bit for bit."""
    tail, body = _character(scene)
    scene.waft.sample_rate = 120.0
    seen = []

    def watch(*_args):
        seen.append(body.hide_viewport)

    scene.frame_set(1)
    bpy.app.handlers.frame_change_post.insert(0, watch)  # before the preview's own handler
    try:
        scene.waft.use_preview = True
        previewed = {}
        for frame in range(1, 25):
            scene.frame_set(frame)
            assert not body.hide_viewport  # shown between frame changes
            previewed[frame] = rigs.shown_channels([(tail, NAMES)])
    finally:
        bpy.app.handlers.frame_change_post.remove(watch)
    assert any(seen)  # the preview's sub-frame samples ran with the body disabled
    scene.waft.use_preview = False
    bake_api.bake_scene(scene)
    for frame in range(1, 25):
        scene.frame_set(frame)
        np.testing.assert_array_equal(previewed[frame], rigs.shown_channels([(tail, NAMES)]),
                                      err_msg=f"frame {frame}")
