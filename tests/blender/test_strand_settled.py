"""Capture Settled Pose for bone chains and hair guides in real Blender: a tail or a groom
modelled sticking out falls into place at the start of every bake; once its hanging state is
captured (the operator, as a user clicks it), bakes start from it, and chains restart from it
after an animation cut. Stale poses are clear errors that leave the file unchanged."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "hair_render"))
import hair_rigs  # noqa: E402
import waft_rigs as rigs  # noqa: E402

BONES = 6
CUT = 60  # the shot cuts from frame 59 to 60: the character is 3 m away
CAPTURED = 45


def _level_tail(scene):
    """A Root bone and a tail of BONES bones modelled level (+x): not how it hangs."""
    ob = rigs.chain_rig(scene, count=BONES, length=0.1, direction=(1.0, 0.0, 0.0))
    rigs.calm(ob, damping=4.0)
    scene.frame_start, scene.frame_end = 1, 72
    rigs.key_root_location(ob, [1, CUT - 1, CUT, 72],
                           lambda f: (0.0, 0.0, 0.0) if f < CUT else (3.0, 0.0, 0.0),
                           interpolation="CONSTANT")
    return ob


def _speeds(positions: np.ndarray, fps: float) -> np.ndarray:
    """(F - 1,) fastest point per frame relative to the first (root) point, m/s."""
    local = positions - positions[:, :1]
    return np.linalg.norm(np.diff(local, axis=0), axis=-1).max(axis=1) * fps


def _tail_speeds(scene, bake_api) -> np.ndarray:
    report = bake_api.bake_scene(scene).systems["strands"]
    (positions,) = report.chain_positions.values()
    return _speeds(positions, scene.render.fps)


def test_captured_settled_pose_starts_and_restarts_a_bone_chain_hanging(scene, bake_api):
    ob = _level_tail(scene)
    falling = _tail_speeds(scene, bake_api)
    assert falling[:6].max() > 1.0  # it falls from level at the start

    scene.frame_set(CAPTURED)
    assert bpy.ops.waft.capture_settled() == {'FINISHED'}
    assert scene.frame_current == CAPTURED
    assert ob.waft.use_settled_pose and ob.waft.settled_frame == CAPTURED
    assert ob.waft.settled_count == BONES
    names = rigs.bone_names("Hair", BONES)
    assert all(ob.pose.bones[n].waft.has_settled for n in names)
    tip = ob.pose.bones[names[-1]].waft.settled_offset
    assert tip[2] < -0.3  # the tip hangs well below where it was modelled

    settled = _tail_speeds(scene, bake_api)
    assert settled[:CUT - 2].max() < 0.05 * falling[:6].max()  # hangs still from frame 1
    assert settled[CUT:].max() < 0.05 * falling[:6].max()  # and after the cut


def test_capture_is_undoable_and_refuses_the_start_frame(scene, bake_api):
    """An undo step (``ed.undo`` cannot replay in the bpy module, see test_original_action);
    the refusal changes nothing."""
    ob = _level_tail(scene)
    assert 'UNDO' in bpy.types.WAFT_OT_capture_settled.bl_options
    scene.frame_set(scene.frame_start)
    before = rigs.fingerprint(scene)
    with pytest.raises(RuntimeError, match="later frame"):
        bpy.ops.waft.capture_settled()
    assert rigs.fingerprint(scene) == before
    assert not ob.waft.use_settled_pose and ob.waft.settled_count == 0



def test_stale_settled_pose_is_a_clear_error_naming_armature_and_bone(scene, bake_api, waft):
    ob = _level_tail(scene)
    scene.frame_set(CAPTURED)
    assert bpy.ops.waft.capture_settled() == {'FINISHED'}
    bake_api.bake_scene(scene, frame_end=10)  # a previous result, which must survive
    error = sys.modules[waft.__name__ + ".core.errors"].SetupError
    root = ob.pose.bones[rigs.ROOT]
    root.waft.simulate = True  # the chain now starts one bone earlier: no pose for that bone
    before = rigs.fingerprint(scene)
    with pytest.raises(error, match=r"Armature 'Rig', bone 'Root'.*no saved pose"):
        bake_api.bake_scene(scene)
    assert rigs.fingerprint(scene) == before
    root.waft.simulate = False
    ob.pose.bones["Hair.005"].waft.simulate = False  # one bone fewer than captured
    with pytest.raises(error, match=r"Armature 'Rig'.*captured with 6 simulated bones.*again"):
        bake_api.bake_scene(scene)


def _hedgehog(scene):
    """A still head whose guides stick straight out along the scalp normal (not how hair
    hangs), no shape pull: they fall at the start of a bake."""
    ob, _scalp, head = hair_rigs.curves_head(scene, guides=8, points=6, length=0.3,
                                             turn_deg=0.0)
    points = hair_rigs.original_points(ob).reshape(8, 6, 3)
    root = points[:, :1]
    out = root / np.linalg.norm(root, axis=-1, keepdims=True)
    points = root + 0.3 * np.linspace(0.0, 1.0, 6)[None, :, None] * out
    ob.data.position_data.foreach_set("vector", points.astype(np.float32).ravel())
    ob.data.update_tag()
    rigs.calm(ob, damping=4.0)
    scene.frame_start, scene.frame_end = 1, 48
    bpy.context.view_layer.objects.active = ob
    return ob


def _guide_speeds(scene, bake_api, ob, frames: int = 8) -> np.ndarray:
    bake_api.bake_scene(scene)
    positions = []
    for frame in range(1, frames + 1):
        scene.frame_set(frame)
        positions.append(hair_rigs.evaluated_points(ob).reshape(8, 6, 3))
    positions = np.array(positions)  # (F, G, P, 3)
    return np.max([_speeds(positions[:, g], scene.render.fps) for g in range(8)], axis=0)


def test_captured_settled_pose_starts_hair_guides_hanging(scene, bake_api):
    ob = _hedgehog(scene)
    falling = _guide_speeds(scene, bake_api, ob)
    assert falling.max() > 1.0

    scene.frame_set(40)
    assert bpy.ops.waft.capture_settled() == {'FINISHED'}
    assert ob.waft.use_settled_pose and ob.waft.settled_count == 8 * 6
    offset = np.empty(8 * 6 * 3)
    ob.data.attributes["waft_settled_offset"].data.foreach_get("vector", offset)
    offset = offset.reshape(8, 6, 3)
    assert np.all(offset[:, 0] == 0.0)  # roots stay on the scalp
    assert offset[:, -1, 2].min() < -0.05  # every tip hangs below where it was groomed

    settled = _guide_speeds(scene, bake_api, ob)
    assert settled.max() < 0.1 * falling.max()


def test_stale_hair_settled_pose_is_a_clear_error(scene, bake_api, waft):
    ob = _hedgehog(scene)
    scene.frame_set(40)
    assert bpy.ops.waft.capture_settled() == {'FINISHED'}
    ob.waft.settled_count -= 6  # as if a guide had been added since the capture
    error = sys.modules[waft.__name__ + ".core.errors"].SetupError
    before = rigs.fingerprint(scene)
    with pytest.raises(error, match="Curves 'Groom'.*capture it again"):
        bake_api.bake_scene(scene)
    assert rigs.fingerprint(scene) == before
