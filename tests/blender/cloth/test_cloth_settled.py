"""Capture Settled Pose in real Blender: a panel modelled lying flat falls into place at the start
of every shot; once its hanging state is captured (the operator, as a user clicks it), bakes
start and restart after a cut from it. Errors leave the file unchanged."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cloth_rigs  # noqa: E402
from cloth_rigs import rigs  # noqa: E402

CUT = 60  # the shot cuts from frame 59 to 60: the character is 3 m away
CAPTURED = 55


def _flat_panel(scene):
    """A Root bone and a 5 x 6 cage modelled flat at the top row's height (pinned along that
    row), skinned to Root: its skinned shape is not how it hangs."""
    rig = rigs.new_armature(scene, "Rig", [{"name": cloth_rigs.ROOT,
                                            "head": (0.0, 0.0, cloth_rigs.TOP + 0.2),
                                            "tail": (0.0, 0.0, cloth_rigs.TOP)}])
    cage = cloth_rigs.grid_cage(scene)
    for v in cage.data.vertices:
        x, _, z = v.co
        v.co = (x, cloth_rigs.TOP - z, cloth_rigs.TOP)
    cage.data.update()
    cloth_rigs.skin_to(cage, rig)
    cloth_rigs.make_setup(cage, rig)
    scene.frame_start, scene.frame_end = 1, 72
    cloth_rigs.key_root(rig, [1, CUT - 1, CUT, 72],
                        lambda f: (0.0 if f < CUT else 3.0, 0.0, 0.0), interpolation="CONSTANT")
    settings = cage.waft_cloth
    settings.cut_threshold = 0.5
    settings.cut_blend_frames = 0
    settings.damping = 6.0
    return rig, cage


def _speeds(scene, bake_api) -> np.ndarray:
    """(F - 1,) fastest cage vertex per frame (m/s) of a fresh bake."""
    cloth = bake_api.bake_scene(scene).systems["cloth"]
    positions = cloth.positions["Cage"]
    return np.linalg.norm(np.diff(positions, axis=0), axis=-1).max(axis=1) * scene.render.fps


def test_captured_settled_pose_starts_and_restarts_the_cloth_hanging(scene, bake_api):
    _rig, cage = _flat_panel(scene)
    falling = _speeds(scene, bake_api)
    first, after_cut = falling[:6].max(), falling[CUT - 1 : CUT + 5].max()
    assert first > 1.0 and after_cut > 1.0  # it falls from flat at the start and after the cut

    scene.frame_set(CAPTURED)
    assert bpy.ops.waft.capture_settled() == {'FINISHED'}
    assert scene.frame_current == CAPTURED
    settings = cage.waft_cloth
    assert settings.use_settled_pose and settings.settled_frame == CAPTURED
    offset = np.empty(3 * len(cage.data.vertices))
    cage.data.attributes["waft_settled_offset"].data.foreach_get("vector", offset)
    offset = offset.reshape(-1, 3)
    assert np.all(offset[:6] == 0.0)  # the pinned row stays on the skinned cage
    assert offset[-6:, 2].max() < -0.2  # the far edge hangs well below where it was modelled

    settled = _speeds(scene, bake_api)
    assert settled[:6].max() < 0.3 * first
    assert settled[CUT - 1 : CUT + 5].max() < 0.3 * after_cut


def test_capture_is_an_undoable_operator_and_refuses_the_start_frame(scene, bake_api):
    _rig, cage = _flat_panel(scene)
    operator = bpy.types.WAFT_OT_capture_settled
    assert 'UNDO' in operator.bl_options
    scene.frame_set(scene.frame_start)
    before = rigs.fingerprint(scene)
    with pytest.raises(RuntimeError, match="later frame"):
        bpy.ops.waft.capture_settled()
    assert rigs.fingerprint(scene) == before
    assert "waft_settled_offset" not in cage.data.attributes
    assert not cage.waft_cloth.use_settled_pose


def test_stale_settled_pose_is_a_clear_error_naming_the_cage(scene, bake_api, waft):
    _rig, cage = _flat_panel(scene)
    scene.frame_set(CAPTURED)
    assert bpy.ops.waft.capture_settled() == {'FINISHED'}
    bake_api.bake_scene(scene, frame_end=10)  # a previous result, which must survive
    cage.waft_cloth.settled_vertices += 6  # as if the cage had a row fewer when captured
    before = rigs.fingerprint(scene)
    error = sys.modules[waft.__name__ + ".core.errors"].SetupError
    with pytest.raises(error, match="Cloth cage 'Cage'.*capture it again"):
        bake_api.bake_scene(scene)
    assert rigs.fingerprint(scene) == before
