"""Installed from the zip, one full bake: also run on the oldest supported Blender (4.2 LTS).

4.2 has no slotted actions (``Action.fcurves``, ``fcurves.new(action_group=…)``) and selects
pose bones through ``Bone.select``; these tests pass on 4.2 and 5.0 alike.
"""

from __future__ import annotations

import sys
from pathlib import Path

import addon_utils
import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

pytestmark = pytest.mark.compat


def test_installed_from_zip_and_registered(waft, waft_module_name):
    assert addon_utils.check(waft_module_name) == (True, True)
    assert waft.__name__.startswith("bl_ext.")
    assert hasattr(bpy.types.Object, "waft") and hasattr(bpy.types.PoseBone, "waft")
    assert hasattr(bpy.ops.waft, "bake") and hasattr(bpy.ops.waft, "clear_bake")


def test_full_bake_keeps_the_user_action_on_every_version(scene, bake_api):
    names = rigs.bone_names("Hair", 5)
    ob = rigs.chain_rig(scene, count=5, length=0.1, direction=(1.0, 0.0, 0.0),
                        rotation_mode="XYZ")
    ob.pose.bones[names[0]].rotation_mode = "QUATERNION"
    rigs.sphere_collider(scene, "Ball", (0.25, 0.0, 1.8), 0.08)
    scene.frame_start, scene.frame_end = 1, 24
    rigs.key_root_location(ob, [1, 12, 24], lambda f: (0.3 * ((f - 1) % 2), 0.0, 0.0))
    ob.animation_data.action.name = "UserMotion"
    original = rigs.world_points(scene, ob, names, range(1, 25))

    report = bake_api.bake_scene(scene)
    assert report.bones == 5 and report.frames == 24
    tracks = [t.name for t in ob.animation_data.nla_tracks]
    assert tracks == ["Waft: original", "Waft: rest", "Waft"]
    action = ob.animation_data.nla_tracks["Waft"].strips[0].action
    paths = sorted({c.data_path.rsplit(".", 1)[1] for c in rigs.action_fcurves(action)})
    assert paths == ["rotation_euler", "rotation_quaternion"]
    assert len(rigs.action_fcurves(action)) == 4 + 4 * 3
    groups = {c.group.name for c in rigs.action_fcurves(action)}
    assert groups == set(names)

    baked = rigs.world_points(scene, ob, names, range(1, 25))
    assert baked[-1, -1, 2] < original[-1, -1, 2] - 0.1  # the chain fell under gravity
    simulated = report.chain_positions["Rig: Hair.000"]
    assert np.allclose(baked[:, 0], original[:, 0], atol=1e-6)  # root stays on its parent
    assert np.linalg.norm(simulated - np.array((0.25, 0.0, 1.8)), axis=-1).min() > 0.08
    ob.animation_data.nla_tracks["Waft"].mute = True
    assert np.allclose(rigs.world_points(scene, ob, names, range(1, 25)), original, atol=1e-6)
    ob.animation_data.nla_tracks["Waft"].mute = False

    assert bake_api.clear_bake(scene) == ["Rig"]
    assert ob.animation_data.action.name == "UserMotion"
    assert sorted(a.name for a in bpy.data.actions) == ["UserMotion"]


def test_assign_bones_uses_this_versions_selection_flag(scene):
    ob = rigs.chain_rig(scene, count=2)
    for pose_bone in ob.pose.bones:
        pose_bone.waft.simulate = False
    bpy.ops.object.mode_set(mode='POSE')
    for pose_bone in ob.pose.bones:
        rigs.set_selected(pose_bone, pose_bone.name == "Hair.001")
    assert bpy.ops.waft.assign_bones(action='ADD') == {'FINISHED'}
    assert [pb.name for pb in ob.pose.bones if pb.waft.simulate] == ["Hair.001"]
