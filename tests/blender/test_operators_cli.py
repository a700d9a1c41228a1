"""Operators and the ``waft`` CLI command, run headless as a render farm would."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np
import pytest
from mathutils import Vector

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402


def _select_pose_bones(ob, names) -> None:
    for pose_bone in ob.pose.bones:
        rigs.set_selected(pose_bone, pose_bone.name in names)


def test_assign_bones_flags_selection_and_makes_a_setup(scene):
    ob = rigs.chain_rig(scene, count=3)
    for pose_bone in ob.pose.bones:
        pose_bone.waft.simulate = False
    ob.waft.enabled = False
    bpy.ops.object.mode_set(mode='POSE')
    _select_pose_bones(ob, {"Hair.000", "Hair.001"})
    assert bpy.ops.waft.assign_bones(action='ADD') == {'FINISHED'}
    assert ob.waft.enabled
    assert [pb.name for pb in ob.pose.bones if pb.waft.simulate] == ["Hair.000", "Hair.001"]
    _select_pose_bones(ob, {"Hair.001"})
    assert bpy.ops.waft.assign_bones(action='REMOVE') == {'FINISHED'}
    assert [pb.name for pb in ob.pose.bones if pb.waft.simulate] == ["Hair.000"]


def test_bake_and_clear_operators(scene):
    ob = rigs.chain_rig(scene, count=3, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = 1, 10
    assert bpy.ops.waft.bake(scope='ALL') == {'FINISHED'}
    assert ob.animation_data.nla_tracks["Waft"].strips[0].action.name == "Waft|Rig"
    bpy.context.view_layer.objects.active = ob
    assert bpy.ops.waft.clear_bake(scope='ACTIVE') == {'FINISHED'}
    assert ob.animation_data.nla_tracks.get("Waft") is None


def test_bake_active_scope_leaves_other_setups_alone(scene):
    first = rigs.chain_rig(scene, "First", count=2, direction=(1.0, 0.0, 0.0))
    second = rigs.chain_rig(scene, "Second", count=2, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = 1, 5
    bpy.context.view_layer.objects.active = second
    assert bpy.ops.waft.bake(scope='ACTIVE') == {'FINISHED'}
    assert first.animation_data is None
    assert second.animation_data.nla_tracks.get("Waft") is not None


def test_apply_preset_sets_the_table_values(scene, waft):
    ob = rigs.chain_rig(scene, count=2)
    presets = sys.modules[waft.__name__ + ".addon.strands.presets"].PRESETS
    bpy.context.view_layer.objects.active = ob
    assert bpy.ops.waft.apply_preset(preset='STIFF') == {'FINISHED'}
    assert ob.waft.preset == 'STIFF'
    for name, value in presets["STIFF"].items():
        assert getattr(ob.waft, name) == pytest.approx(value)


def test_add_collider_at_cursor_and_on_the_active_bone(scene):
    scene.cursor.location = (1.0, 2.0, 3.0)
    assert bpy.ops.waft.add_collider(shape='SPHERE', size=0.2) == {'FINISHED'}
    empty = bpy.context.scene.objects["WaftCollider.Sphere"]
    assert empty.waft_collider.enabled and empty.empty_display_type == 'SPHERE'
    assert tuple(empty.matrix_world.translation) == pytest.approx((1.0, 2.0, 3.0))

    ob = rigs.chain_rig(scene, count=2)
    bpy.ops.object.mode_set(mode='POSE')
    ob.data.bones.active = ob.data.bones["Hair.001"]
    assert bpy.ops.waft.add_collider(shape='CAPSULE') == {'FINISHED'}
    capsule = bpy.context.scene.objects["WaftCollider.Capsule"]
    assert capsule.parent is ob and capsule.parent_bone == "Hair.001"
    bpy.context.view_layer.update()
    head = ob.matrix_world @ ob.pose.bones["Hair.001"].head
    assert (capsule.matrix_world.translation - head).length < 1e-6
    # Parented to the bone: it follows when the bone moves.
    ob.pose.bones[rigs.ROOT].location = (0.5, 0.0, 0.0)
    bpy.context.view_layer.update()
    assert (capsule.matrix_world.translation - head - Vector((0.5, 0, 0))).length < 1e-6


def test_cli_bake_saves_the_output_file(scene, waft, tmp_path):
    cli = sys.modules[waft.__name__ + ".addon.cli"]
    ob = rigs.chain_rig(scene, count=3, direction=(1.0, 0.0, 0.0))
    out = tmp_path / "baked.blend"
    assert cli.main(["bake", "--frames", "1", "20", "--substep-rate", "480",
                     "--preroll", "5", "--output", str(out)]) == 0
    assert out.is_file()
    bpy.ops.wm.open_mainfile(filepath=str(out))
    ob = bpy.context.scene.objects["Rig"]
    strip = ob.animation_data.nla_tracks["Waft"].strips[0]
    assert (strip.frame_start, strip.frame_end) == (1.0, 20.0)
    keys = np.array([len(c.keyframe_points) for c in rigs.action_fcurves(strip.action)])
    assert len(keys) == 3 * 4 and np.all(keys == 20)
    assert cli.main(["clear", "--save"]) == 0
    bpy.ops.wm.open_mainfile(filepath=str(out))
    assert bpy.context.scene.objects["Rig"].animation_data.nla_tracks.get("Waft") is None


def test_cli_error_returns_1_with_a_message(scene, waft, capsys):
    cli = sys.modules[waft.__name__ + ".addon.cli"]
    rigs.chain_rig(scene, count=2)
    assert cli.main(["bake", "--objects", "Nobody"]) == 1
    assert "Object 'Nobody' is not in scene" in capsys.readouterr().err
    assert cli.main(["bake", "--frames", "5"]) == 1  # usage error: END missing


def test_cli_command_is_registered(waft):
    assert waft._cli_handle is not None
