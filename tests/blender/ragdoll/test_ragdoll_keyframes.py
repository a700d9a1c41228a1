"""Every per-frame body setting is keyframed from the bone, as Insert Keyframe (I over the field)
does it: the setting is the pose bone's own property (``PoseBone.waft_ragdoll_<name>``), since
Blender cannot make an animation path to a property group under a pose bone. A death switch keyed
on the bones plays in the bake; files with the old paths are moved over when opened."""

from __future__ import annotations

import importlib

import bpy
import numpy as np
import ragdoll_rigs as rigs
import waft_rigs

FRAMES = list(range(1, 25))
SWITCH = 12  # the death switch: kinematic before, free from this frame


def _properties(waft):
    return importlib.import_module(waft.__name__ + ".addon.ragdoll.properties")


def _paths(ob) -> set[str]:
    return {fc.data_path for fc in waft_rigs.action_fcurves(ob.animation_data.action)}


def test_every_per_frame_setting_keys_from_the_bone(scene, waft):
    properties = _properties(waft)
    ob = rigs.humanoid(scene)
    pb = ob.pose.bones["forearm.L"]
    for name in properties.ANIMATED_BODY_SETTINGS:
        # the field drawn in the Bone tab is the bone's own property: its path can be made
        assert pb.keyframe_insert(properties.BONE_PREFIX + name, frame=1)
        # the group's keyframe_insert (scripts, the "could not make path") keys the same
        assert pb.waft_ragdoll.keyframe_insert(name, frame=2)
    expected = {f'pose.bones["forearm.L"].waft_ragdoll_{name}'
                for name in properties.ANIMATED_BODY_SETTINGS}
    assert expected <= _paths(ob)
    pb.waft_ragdoll.motor_strength = 0.25  # the alias writes the bone's property
    assert pb.waft_ragdoll_motor_strength == 0.25
    pb.bone.name = "forearm.Left"  # Blender renames the paths with the bone
    assert 'pose.bones["forearm.Left"].waft_ragdoll_blend' in _paths(ob)


def test_death_switch_keyed_on_the_bones_plays_in_the_bake(scene, bake_api):
    ob = rigs.humanoid(scene)
    ob.waft_ragdoll.use_ground = False
    ob.waft_ragdoll.root_lock = False
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    rigs.animate_wave(ob, FRAMES, travel=(0.0, -0.03, 0.0))
    for pb in ob.pose.bones:
        body = pb.waft_ragdoll
        body.mode = "KINEMATIC"
        body.keyframe_insert("mode", frame=1)
        body.mode = "FREE"
        body.keyframe_insert("mode", frame=SWITCH)
    names = list(rigs.NAMES)
    animated = rigs.world_matrices(scene, ob, names, FRAMES)
    bake_api.bake_scene(scene)
    baked = rigs.world_matrices(scene, ob, names, FRAMES)
    before = FRAMES.index(SWITCH)
    assert np.max(np.abs(baked[:before] - animated[:before])) < 1e-5  # kinematic: the animation
    fallen = np.linalg.norm(baked[-1, :, :3, 3] - animated[-1, :, :3, 3], axis=-1)
    assert fallen.max() > 0.1  # free from the switch: it fell away from the animation


def _old_fcurve(ob, action, data_path: str):
    """An F-curve on a path the current properties do not resolve (as an old file has it)."""
    ob.animation_data.action = action
    if hasattr(action, "fcurve_ensure_for_datablock"):  # 4.4+: the slot is made for ob
        return action.fcurve_ensure_for_datablock(ob, data_path)
    return action.fcurves.new(data_path)


def test_old_file_paths_and_values_move_to_the_bone(scene, tmp_path):
    """A file saved when the settings were PoseBone.waft_ragdoll.<name>: the keyed blend and the
    stored motor strength and mode play as before after opening it."""
    ob = rigs.humanoid(scene)
    pb = ob.pose.bones["forearm.L"]
    pb.waft_ragdoll["motor_strength"] = 0.3  # what the old property stored
    pb.waft_ragdoll["mode"] = 2  # FREE, as an enum stores it
    ob.animation_data_create()
    fcurve = _old_fcurve(ob, bpy.data.actions.new("Old"),
                         'pose.bones["forearm.L"].waft_ragdoll.blend')
    fcurve.keyframe_points.insert(1, 0.0)
    fcurve.keyframe_points.insert(10, 0.7)
    path = tmp_path / "old.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False)
    ob = bpy.data.objects["Dummy"]
    pb = ob.pose.bones["forearm.L"]
    assert abs(pb.waft_ragdoll_motor_strength - 0.3) < 1e-7
    assert pb.waft_ragdoll_mode == "FREE"
    assert pb.waft_ragdoll.get("motor_strength") is None
    assert _paths(ob) == {'pose.bones["forearm.L"].waft_ragdoll_blend'}
    bpy.context.scene.frame_set(10)
    assert abs(pb.waft_ragdoll_blend - 0.7) < 1e-6
