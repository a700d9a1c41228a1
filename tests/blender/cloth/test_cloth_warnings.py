"""Setup warnings on a cloth cage (its Waft Cloth panels), each with a one-click fix that really
fixes it and undoes: a collider inside the cage at rest, a constraint on a driven bone that
overrides the baked keys."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cloth_rigs  # noqa: E402
from cloth_rigs import rigs  # noqa: E402


def _warnings(waft):
    return sys.modules[f"{waft.__name__}.addon.cloth.warnings"]


def _fix(ob, warning) -> set:
    return bpy.ops.waft.fix_warning(fix=warning.fix, armature=ob.name, target=warning.target)


def _deepest(waft, cage, collider) -> float:
    warnings = _warnings(waft)
    read = sys.modules[f"{waft.__name__}.addon.reading"].read_collider(collider)
    points, radii = warnings.cloth_samples(cage)
    return float(warnings.penetration(read, points, radii).max())


def _thrown(scene, rig, cage, bake_api) -> float:
    """How far the driven bones move off the cage's plane (y = 0, the ball behind it at
    y > 0 pushes toward -y) over the first three frames of a bake (m)."""
    bake_api.bake_scene(scene)
    names = [item.bone for item in cage.waft_cloth.bones]
    world = cloth_rigs.bone_worlds(scene, rig, names, [1, 2, 3])
    bake_api.clear_bake(scene)
    return float(np.abs(world[:, :, 1, 3]).max())


def test_a_collider_inside_the_cage_is_shrunk_clear_and_the_bake_no_longer_pops(
        scene, bake_api, waft):
    rig, cage = cloth_rigs.cloth_rig(scene)
    scene.frame_start, scene.frame_end = 1, 6
    # a ball 5 cm behind the middle of the cage, 12 cm across: several free vertices inside
    ball = rigs.sphere_collider(scene, "Ball", (0.0, 0.05, 1.75), 0.12)
    bpy.context.view_layer.update()
    found = _warnings(waft).cloth_warnings(scene, cage)
    assert [w.fix for w in found] == ["COLLIDER"] and "Ball" in found[0].text, found
    assert _deepest(waft, cage, ball) > 0.05
    thrown = _thrown(scene, rig, cage, bake_api)

    bpy.ops.ed.undo_push(message="before fix")
    assert _fix(cage, found[0]) == {'FINISHED'}
    bpy.ops.ed.undo_push(message="fix")
    bpy.ops.ed.undo()  # the collider as it was
    scene = bpy.context.scene
    cage, ball, rig = scene.objects["Cage"], scene.objects["Ball"], scene.objects["Rig"]
    assert np.isclose(ball.empty_display_size, 0.12)
    assert _fix(cage, found[0]) == {'FINISHED'}
    assert -2e-3 < _deepest(waft, cage, ball) <= -1e-3 + 1e-6  # clear by 1 mm
    assert _warnings(waft).cloth_warnings(scene, cage) == []
    calm = _thrown(scene, rig, cage, bake_api)
    assert thrown > 0.02 and thrown > 5.0 * calm, (thrown, calm)


def test_an_overriding_constraint_on_a_driven_bone_is_turned_off_for_the_result(scene, waft):
    rig, cage = cloth_rigs.cloth_rig(scene)
    bone = cage.waft_cloth.bones[1].bone
    constraint = rig.pose.bones[bone].constraints.new('COPY_ROTATION')
    constraint.target, constraint.subtarget = rig, rigs.ROOT
    found = _warnings(waft).cloth_warnings(scene, cage)
    assert [w.fix for w in found] == ["CONSTRAINTS"] and bone in found[0].text
    assert _fix(cage, found[0]) == {'FINISHED'}
    assert scene.waft.constrained_bones == 'TURN_OFF'
    assert _warnings(waft).cloth_warnings(scene, cage) == []
    assert not constraint.mute and constraint.influence == 1.0  # the rig itself is untouched


def test_the_cloth_panels_draw_the_warnings(scene, waft):
    rig, cage = cloth_rigs.cloth_rig(scene)
    rigs.sphere_collider(scene, "Ball", (0.0, 0.05, 1.75), 0.12)
    bpy.context.view_layer.update()
    drawn = []

    class Layout:  # records what the panel draws
        def __getattr__(self, name):
            def record(*args, **kwargs):
                drawn.append((name, kwargs.get("text", "")))
                return self
            return record

    panels = sys.modules[f"{waft.__name__}.addon.cloth.panels"]
    for panel in (panels.WAFT_PT_cloth, panels.WAFT_PT_cloth_sidebar):
        drawn.clear()
        bpy.context.view_layer.objects.active = cage
        panel.draw(type("P", (), {"layout": Layout()})(), bpy.context)
        assert ("operator", "Shrink 'Ball' to Clear") in drawn, (panel, drawn)
