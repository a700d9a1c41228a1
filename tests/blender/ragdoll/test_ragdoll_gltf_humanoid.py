"""Create Waft Ragdoll › Humanoid on the Godot glTF humanoid (../shared/assets): a rig nobody
here made, whose forearms bend about their local Z (Rigify's and Mixamo's bend about X)."""

from __future__ import annotations

import importlib
import math
import shutil
import tempfile
from pathlib import Path

import bpy
import numpy as np
import pytest

ASSET = (Path(__file__).resolve().parents[4] / "shared" / "assets" / "godot_skel_bone_2025"
         / "skel_bone_2025.glb")
JOINTS = (("lower_arm_l", "upper_arm_l"), ("lower_arm_r", "upper_arm_r"),
          ("lower_leg_l", "upper_leg_l"), ("lower_leg_r", "upper_leg_r"))


@pytest.fixture
def walker(scene):
    if not ASSET.exists():
        pytest.skip(f"no {ASSET}")
    with tempfile.TemporaryDirectory() as tmp:  # the importer may write next to the file
        copy = Path(tmp) / ASSET.name
        shutil.copyfile(ASSET, copy)
        bpy.ops.import_scene.gltf(filepath=str(copy))
    rig = next(o for o in scene.objects if o.type == 'ARMATURE')
    # (Blender 4.2's importer names the actions '<name>_<armature>')
    walk = bpy.data.actions.get("hmd-walk") or bpy.data.actions["hmd-walk_Rig"]
    rig.animation_data.action = walk
    if hasattr(rig.animation_data, "action_slot"):
        rig.animation_data.action_slot = walk.slots[0]
    scene.frame_start, scene.frame_end = (int(v) for v in walk.frame_range)
    bpy.context.view_layer.objects.active = rig
    rig.select_set(True)
    return rig


def test_elbows_and_knees_are_one_sided_hinges_about_the_rigs_own_axis(scene, walker,
                                                                      waft_module_name):
    """With Fit Limits off (the humanoid table alone), the walk's elbows (26-46° about local Z,
    the left one negative) and knees (up to 60° about X) are inside their limits, which bend
    one way only: a symmetric cone about X clamped the elbows at 15° and the Physical Animation
    preset then held the head 47 cm off the walk."""
    bpy.ops.object.mode_set(mode='POSE')
    assert bpy.ops.waft.ragdoll_create(source='HUMANOID', fit_to_animation=False) == {'FINISHED'}
    bpy.ops.object.mode_set(mode='OBJECT')
    create = importlib.import_module(waft_module_name + ".addon.ragdoll.create")
    limits = importlib.import_module(waft_module_name + ".core.ragdoll.limits")
    frames = range(scene.frame_start, scene.frame_end + 1)
    matrices = []
    for frame in frames:
        scene.frame_set(frame)
        matrices.append([[np.array(walker.pose.bones[n].matrix) for n in pair]
                         for pair in JOINTS])
    q = create.bone_orientation(np.array(matrices))  # (F, joints, 2, 4)
    for j, (child, parent) in enumerate(JOINTS):
        body = walker.pose.bones[child].waft_ragdoll
        d = limits.joint_rotation(q[:, j, 0], q[:, j, 1], np.tile(
            create.rest_relative(walker, [child], [parent]), (len(frames), 1)))
        swing, twist = limits.swing_twist(d)
        tile = [np.tile(np.array(tuple(v)), (len(frames), 1))
                for v in (body.swing_limit, body.twist_limit, body.swing_center)]
        fix, _ = limits.limit_correction(swing, twist, *tile)
        assert np.degrees(np.abs(fix).max()) < 3.0, child  # (the ellipse's corners: 2.7°)
        hinge = 1 if child.startswith("lower_arm") else 0  # the axis the walk bends about
        low = body.swing_center[hinge] - body.swing_limit[hinge]
        high = body.swing_center[hinge] + body.swing_limit[hinge]
        bend = swing[:, 2 * hinge]
        # one-sided: 145° the way the walk bends, 10° the other way
        way = 1.0 if bend.mean() > 0 else -1.0
        assert math.degrees(max(way * low, way * high)) == pytest.approx(145.0)
        assert math.degrees(min(way * low, way * high)) == pytest.approx(-10.0)
