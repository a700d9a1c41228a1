"""Setup warnings where the artist looks (the bone-chain panels), each with a one-click fix that
really fixes it and undoes: a collider inside the chain, constraints that override the baked
keys, travel keyed on a root bone while World Motion is measured on the object."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

NAMES = rigs.bone_names("Hair", 4)


def _warnings(waft):
    return sys.modules[f"{waft.__name__}.addon.strands.warnings"]


def _fix(ob, warning) -> set:
    return bpy.ops.waft.fix_warning(fix=warning.fix, armature=ob.name, target=warning.target)


def _tail_inside(scene, ob, collider, waft) -> float:
    warnings = _warnings(waft)
    read = sys.modules[f"{waft.__name__}.addon.reading"].read_collider(collider)
    points, radii, _ = warnings._tails(ob, [ob.pose.bones[n] for n in NAMES])
    return float(warnings.penetration(read, points, radii).max())


def test_a_collider_inside_the_chain_is_shrunk_clear_and_the_bake_no_longer_pops(
        scene, bake_api, waft):
    ob = rigs.chain_rig(scene, count=4, length=0.1)
    rigs.calm(ob, damping=1.0, radius=0.01)
    tail = np.array(ob.matrix_world) @ np.append(ob.pose.bones[NAMES[1]].tail, 1.0)
    ball = rigs.sphere_collider(scene, "Ball", tuple(tail[:3] + (0.03, 0.0, 0.0)), 0.06)
    bpy.context.view_layer.update()
    found = _warnings(waft).chain_warnings(scene, ob)
    assert [w.fix for w in found] == ["COLLIDER"] and "Ball" in found[0].text
    assert _tail_inside(scene, ob, ball, waft) > 0.02
    # Baked as it is, the chain is thrown out of the ball on the first frames.
    scene.frame_start, scene.frame_end = 1, 6
    bake_api.bake_scene(scene)
    thrown = rigs.world_points(scene, ob, NAMES, [1, 2])
    bake_api.clear_bake(scene)

    bpy.ops.ed.undo_push(message="before fix")
    assert _fix(ob, found[0]) == {'FINISHED'}
    assert ball.empty_display_size < 0.05
    bpy.ops.ed.undo_push(message="fix")
    bpy.ops.ed.undo()  # the collider as it was
    scene = bpy.context.scene
    ob, ball = scene.objects["Rig"], scene.objects["Ball"]
    assert np.isclose(ball.empty_display_size, 0.06)
    assert _fix(ob, found[0]) == {'FINISHED'}
    assert -2e-3 < _tail_inside(scene, ob, ball, waft) <= -1e-3 + 1e-6  # clear by 1 mm
    assert abs(ball.empty_display_size - (0.03 - 0.01 - 1e-3)) < 1e-5  # touching + 1 mm
    assert _warnings(waft).chain_warnings(scene, ob) == []
    bake_api.bake_scene(scene)
    calm = rigs.world_points(scene, ob, NAMES, [1, 2])
    jump = lambda p: np.linalg.norm(p[1] - p[0], axis=-1).max()  # noqa: E731
    assert jump(thrown) > 5 * jump(calm)


def test_a_plane_over_the_chain_is_moved_back(scene, waft):
    ob = rigs.chain_rig(scene, count=4, length=0.1)
    assert bpy.ops.waft.add_collider(shape='PLANE', size=0.5) == {'FINISHED'}
    plane = scene.objects["WaftCollider.Plane"]
    plane.location = (0.0, 0.0, 1.75)  # the chain hangs from 2.0 to 1.6: half is below
    bpy.context.view_layer.update()
    found = _warnings(waft).chain_warnings(scene, ob)
    assert [w.fix for w in found] == ["COLLIDER"]
    assert _fix(ob, found[0]) == {'FINISHED'}
    bpy.context.view_layer.update()
    assert abs(plane.location.z - (1.6 - 0.01 - 1e-3)) < 1e-5
    assert _warnings(waft).chain_warnings(scene, ob) == []


def test_an_overriding_constraint_is_turned_off_for_the_result(scene, waft):
    ob = rigs.chain_rig(scene, count=4, length=0.1)
    constraint = ob.pose.bones[NAMES[2]].constraints.new('COPY_ROTATION')
    constraint.target, constraint.subtarget = ob, rigs.ROOT
    found = _warnings(waft).chain_warnings(scene, ob)
    assert [w.fix for w in found] == ["CONSTRAINTS"] and NAMES[2] in found[0].text
    assert _fix(ob, found[0]) == {'FINISHED'}
    assert scene.waft.constrained_bones == 'TURN_OFF'
    assert _warnings(waft).chain_warnings(scene, ob) == []
    assert not constraint.mute and constraint.influence == 1.0  # the rig itself is untouched


def test_travel_on_a_root_bone_makes_it_the_space_bone(scene, waft):
    ob = rigs.chain_rig(scene, count=4, length=0.1)
    ob.waft.world_motion_fraction = 0.2
    rigs.key_root_location(ob, [1, 48], lambda f: (0.0, 0.04 * (f - 1), 0.0))
    found = _warnings(waft).chain_warnings(scene, ob)
    assert [w.fix for w in found] == ["SPACE_BONE"] and found[0].target == rigs.ROOT
    assert _fix(ob, found[0]) == {'FINISHED'}
    assert ob.waft.space_bone == rigs.ROOT
    assert _warnings(waft).chain_warnings(scene, ob) == []
    ob.waft.space_bone = ""
    ob.waft.world_motion_fraction = 1.0  # all the travel felt: the space does not matter
    assert _warnings(waft).chain_warnings(scene, ob) == []
