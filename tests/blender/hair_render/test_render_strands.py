"""Render strands of a guide armature: a Curves object that follows the bake on every frame,
roots on the evaluated scalp, and playback after reopening the file with Waft disabled."""

from __future__ import annotations

import sys
from pathlib import Path

import addon_utils
import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hair_rigs  # noqa: E402

from waft.core.hair import closest_on_mesh  # noqa: E402

# Also on Blender 4.2 (tools/test.sh -m compat): there the bake goes to disk beside the saved file.
pytestmark = pytest.mark.compat

FRAMES = range(1, 13)


@pytest.fixture
def baked(scene, bake_api, tmp_path):
    scene.frame_start, scene.frame_end = 1, 12
    rig, scalp = hair_rigs.head_rig(scene)
    hair_rigs.save_first_on_42(tmp_path)
    report = bake_api.bake_scene(scene)
    return rig, scalp, report


def test_strands_object_has_curves_radius_and_follows_the_bake(scene, baked):
    rig, scalp, _report = baked
    ob = scene.objects["Hair Strands"]
    assert ob.type == 'CURVES' and rig.waft_hair.output == ob
    data = ob.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    assert len(data.curves) == 2000 and len(data.points) == 2000 * 8
    radius = np.empty(len(data.points), dtype=np.float32)
    data.attributes["radius"].data.foreach_get("value", radius)
    np.testing.assert_allclose(radius[:8], np.linspace(0.0008, 0.0002, 8), rtol=1e-5)
    frames = {}
    for f in FRAMES:
        scene.frame_set(f)
        frames[f] = hair_rigs.evaluated_points(ob).reshape(2000, 8, 3)
    # The head turns 90° in 5 frames: strands move, and every point stays finite.
    assert np.all(np.isfinite(np.stack(list(frames.values()))))
    turn = np.linalg.norm(frames[6][:, -1, :2] - frames[1][:, -1, :2], axis=1)
    assert np.median(turn) > 0.05


def test_no_render_root_leaves_the_evaluated_scalp(scene, baked):
    _rig, scalp, _report = baked
    ob = scene.objects["Hair Strands"]
    for f in FRAMES:
        scene.frame_set(f)
        roots = hair_rigs.evaluated_points(ob).reshape(2000, 8, 3)[:, 0]
        vertices, triangles = hair_rigs.evaluated_triangles(scalp)
        on = closest_on_mesh(roots, vertices=vertices, triangles=triangles).position
        assert np.max(np.linalg.norm(on - roots, axis=1)) < 1e-5, f  # float32 positions


def test_plays_back_after_reopen_with_waft_disabled(scene, baked, tmp_path, waft_module_name):
    ob = scene.objects["Hair Strands"]
    before = {}
    for f in FRAMES:
        scene.frame_set(f)
        before[f] = hair_rigs.evaluated_points(ob)
    path = tmp_path / "strands.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    addon_utils.disable(waft_module_name, default_set=True)
    try:
        bpy.ops.wm.read_homefile(use_empty=True)
        bpy.ops.wm.open_mainfile(filepath=str(path))
        assert not hasattr(bpy.types.Object, "waft_hair"), "Waft is still registered"
        assert not any("waft" in getattr(h, "__module__", "")
                       for h in bpy.app.handlers.frame_change_pre)
        reopened = bpy.context.scene
        ob = reopened.objects["Hair Strands"]
        for f in (12, 3, 7, 1, 10):  # out of order: the bake, not a leftover state, plays
            reopened.frame_set(f)
            np.testing.assert_allclose(hair_rigs.evaluated_points(ob), before[f], atol=1e-6)
    finally:
        addon_utils.enable(waft_module_name, default_set=True)
    assert addon_utils.check(waft_module_name) == (True, True)


def test_clear_bake_removes_the_strands_bake(scene, baked, bake_api):
    ob = scene.objects["Hair Strands"]
    assert ob.modifiers.get("Waft Strands") is not None
    assert "Hair" in bake_api.clear_bake(scene)
    assert ob.modifiers.get("Waft Strands") is None


def test_animated_clump_gathers_the_tips_onto_the_guides(scene, bake_api, tmp_path):
    scene.frame_start, scene.frame_end = 1, 12
    rig, _scalp = hair_rigs.head_rig(scene)
    hair = rig.waft_hair
    hair.randomness = 0.0
    hair.count = 500
    for frame, clump in ((1, 0.0), (12, 1.0)):
        hair.clump = clump
        rig.keyframe_insert('waft_hair.clump', frame=frame)
    hair_rigs.save_first_on_42(tmp_path)
    bake_api.bake_scene(scene)
    ob = scene.objects["Hair Strands"]
    tips = {}
    for f in (1, 12):
        scene.frame_set(f)
        tips[f] = hair_rigs.evaluated_points(ob).reshape(500, 8, 3)[:, -1]
    distinct = {f: len(np.unique(np.round(t, 5), axis=0)) for f, t in tips.items()}
    assert distinct[1] > 400  # every strand its own tip
    assert distinct[12] <= 16  # clump 1: every tip on one of the 16 guide tips
