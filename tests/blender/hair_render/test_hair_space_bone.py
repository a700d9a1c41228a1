"""World Motion for a hair Curves groom whose scalp is carried by a bone (root motion keyed on
a bone): with the Space Bone set, the groom feels the travel as when the head object carries
it; without it the bone-keyed travel ignores World Motion."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import hair_rigs  # noqa: E402
import waft_rigs  # noqa: E402

FRAMES = range(1, 25)
KEYS = (1, 5, 9, 13, 17, 21)


def _travel(frame: int) -> float:
    return 0.0 if (frame - 1) // 4 % 2 == 0 else 0.5  # 0.5 m in 4 frames, back and forth


def _groom(*, on_bone: bool, fraction: float, space_bone: str = ""):
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    ob, scalp, head = hair_rigs.curves_head(scene, turn_deg=0.0)
    ob.waft.world_motion_fraction = fraction
    ob.waft.shape_stiffness = 0.02
    ob.waft.space_bone = space_bone
    if on_bone:
        rig = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
        scene.collection.objects.link(rig)
        bpy.context.view_layer.objects.active = rig
        bpy.ops.object.mode_set(mode='EDIT')
        root = rig.data.edit_bones.new("Root")
        root.head, root.tail = (0.0, 0.0, 0.0), (0.0, 0.2, 0.0)  # bone X is world X
        bpy.ops.object.mode_set(mode='OBJECT')
        group = scalp.vertex_groups.new(name="Root")
        group.add(list(range(len(scalp.data.vertices))), 1.0, 'REPLACE')
        scalp.modifiers.new("Armature", 'ARMATURE').object = rig
        pose_bone = rig.pose.bones["Root"]
        for frame in KEYS:
            pose_bone.location = (_travel(frame), 0.0, 0.0)
            pose_bone.keyframe_insert("location", frame=frame)
    else:
        for frame in KEYS:
            head.location = (hair_rigs.HEAD.x + _travel(frame), hair_rigs.HEAD.y,
                             hair_rigs.HEAD.z)
            head.keyframe_insert("location", frame=frame)
    for keyed in bpy.data.objects:
        if keyed.animation_data is not None and keyed.animation_data.action is not None:
            for fc in waft_rigs.action_fcurves(keyed.animation_data.action):
                for key in fc.keyframe_points:
                    key.interpolation = 'LINEAR'
    return scene, ob, scalp


def _swing(bake_api, **groom) -> tuple[np.ndarray, float]:
    """Guide points relative to their roots after the bake, and the largest tip deviation
    from the groom carried rigidly."""
    scene, ob, _ = _groom(**groom)
    bake_api.bake_scene(scene)
    rel = []
    for f in FRAMES:
        scene.frame_set(f)
        points = hair_rigs.evaluated_points(ob).reshape(12, 6, 3)
        rel.append(points - points[:, :1])
    rel = np.array(rel)
    return rel, float(np.linalg.norm(rel[:, :, -1] - rel[:1, :, -1], axis=-1).max())


def test_space_bone_carries_a_curves_groom_like_its_head_object(bake_api):
    on_object, swing_object = _swing(bake_api, on_bone=False, fraction=0.1)
    _, swing_ignored = _swing(bake_api, on_bone=True, fraction=0.1)
    on_bone, swing_bone = _swing(bake_api, on_bone=True, fraction=0.1, space_bone="Root")
    _, swing_full = _swing(bake_api, on_bone=True, fraction=1.0, space_bone="Root")
    assert swing_full > 0.05
    assert swing_ignored > 0.8 * swing_full  # without the space bone: World Motion ignored
    assert swing_bone < 0.6 * swing_full  # as the object-keyed travel: 0.28 of 0.58 m
    assert np.abs(on_bone - on_object).max() < 1e-3
    assert abs(swing_bone - swing_object) < 1e-3
