"""Reduce Keys: fewer rotation keys, and every played-back frame within the world-space bound
(millimetres at every bone tail, degrees per bone) of the bake with a key on every frame."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

NAMES = rigs.bone_names("Hair", 6)


def _swinging_chain(scene, rotation_mode: str):
    scene.render.fps, scene.render.fps_base = 24, 1.0
    scene.frame_start, scene.frame_end = 1, 96
    ob = rigs.chain_rig(scene, count=6, length=0.15, direction=(0.3, 0.0, -1.0),
                        rotation_mode=rotation_mode)
    root = ob.pose.bones[rigs.ROOT]
    for frame, x in ((1, 0.0), (12, 0.4), (30, -0.3), (50, 0.0)):
        root.location = (x, 0.0, 0.0)
        root.keyframe_insert("location", frame=frame)
    return ob


def _played(scene, ob) -> tuple[np.ndarray, np.ndarray]:
    """(tails (F, 6, 3) world, bone world rotations (F, 6, 3, 3)) over the shot."""
    tails, rotations = [], []
    for frame in range(1, 97):
        scene.frame_set(frame)
        mw = ob.matrix_world
        tails.append([tuple(mw @ ob.pose.bones[n].tail) for n in NAMES])
        rotations.append([np.array((mw @ ob.pose.bones[n].matrix).to_3x3().normalized())
                          for n in NAMES])
    return np.array(tails), np.array(rotations)


@pytest.mark.parametrize("rotation_mode", ["QUATERNION", "XYZ"])
def test_reduced_keys_stay_within_the_bound(scene, bake_api, rotation_mode):
    ob = _swinging_chain(scene, rotation_mode)
    full = bake_api.bake_scene(scene)
    tails, rotations = _played(scene, ob)
    scene.waft.use_key_reduction = True
    scene.waft.key_error_distance = 0.001
    scene.waft.key_error_angle = math.radians(0.5)
    reduced = bake_api.bake_scene(scene)
    tails_r, rotations_r = _played(scene, ob)
    assert np.linalg.norm(tails_r - tails, axis=-1).max() <= 0.001 + 1e-5
    trace = np.einsum("fbij,fbij->fb", rotations, rotations_r)
    angle = np.degrees(np.arccos(np.clip((trace - 1) / 2, -1, 1)))
    assert angle.max() <= 0.5 + 0.01
    # Keys: written vs a key on every frame, and what the file holds.
    assert full.systems["strands"].keys == full.systems["strands"].keys_unreduced
    ratio = reduced.systems["strands"].keys / reduced.systems["strands"].keys_unreduced
    # A chain swinging all shot long keeps most keys at 1 mm (measured 78 %): the bound is
    # guaranteed, so each of the 6 bones may turn at most 1 mm / (6 × its reach).
    assert ratio < 0.9, ratio
    action = ob.animation_data.nla_tracks["Waft"].strips[0].action
    stored = sum(len(fc.keyframe_points) for fc in rigs.action_fcurves(action))
    assert stored == reduced.systems["strands"].keys
    assert "keys kept" in reduced.systems["strands"].summary()


def test_reduce_keys_operator_on_an_existing_result(scene, bake_api):
    """The operator reduces a bake made with a key on every frame to what the bake option
    writes, within the same bound of the played-back motion, as one undoable step."""
    import bpy

    ob = _swinging_chain(scene, "QUATERNION")
    bake_api.bake_scene(scene)
    tails, rotations = _played(scene, ob)
    action = ob.animation_data.nla_tracks["Waft"].strips[0].action
    every = sum(len(fc.keyframe_points) for fc in rigs.action_fcurves(action))
    scene.waft.key_error_distance = 0.001
    scene.waft.key_error_angle = math.radians(0.5)
    assert bpy.ops.waft.reduce_keys() == {'FINISHED'}
    kept = sum(len(fc.keyframe_points) for fc in rigs.action_fcurves(action))
    assert kept < 0.9 * every
    tails_r, rotations_r = _played(scene, ob)
    assert np.linalg.norm(tails_r - tails, axis=-1).max() <= 0.001 + 1e-5
    trace = np.einsum("fbij,fbij->fb", rotations, rotations_r)
    assert np.degrees(np.arccos(np.clip((trace - 1) / 2, -1, 1))).max() <= 0.5 + 0.01
    # The same keys as the bake option writes.
    scene.waft.use_key_reduction = True
    reduced = bake_api.bake_scene(scene)
    assert reduced.systems["strands"].keys == kept
    bake_api.clear_bake(scene)
    assert bpy.ops.waft.reduce_keys() == {'CANCELLED'}  # nothing baked
