"""Ragdoll setup warnings (the panel's) and their one-click fixes, run as a user runs them."""

from __future__ import annotations

import importlib
import math

import bpy
import ragdoll_rigs as rigs


def _warnings(waft, scene, ob) -> list:
    module = importlib.import_module(waft.__name__ + ".addon.ragdoll.warnings")
    return module.ragdoll_warnings(scene, ob)


def _fix(ob, warning):
    return bpy.ops.waft.fix_warning(fix=warning.fix, armature=ob.name, target=warning.target)


def _bend_forearm(scene, ob, degrees: float) -> None:
    """forearm.L keyed straight at frames 1 and 9, bent ``degrees`` about X at frame 5."""
    scene.frame_start, scene.frame_end = 1, 9
    forearm = ob.pose.bones["forearm.L"]
    for frame, angle in ((1, 0.0), (5, degrees), (9, 0.0)):
        rigs.set_rotation(forearm, (math.radians(angle), 0.0, 0.0))
        forearm.keyframe_insert("rotation_quaternion", frame=frame)


def _reach_x(pose_bone) -> float:
    """How far the swing range about local X reaches the way the forearm was bent (the fit
    moves a range's centre: a one-sided widening, not a symmetric one)."""
    body = pose_bone.waft_ragdoll
    return body.swing_center[0] + body.swing_limit[0]


def _limit_every_joint(ob, swing_deg: float, twist_deg: float) -> None:
    for pb in ob.pose.bones:
        pb.waft_ragdoll.swing_limit = (math.radians(swing_deg),) * 2
        pb.waft_ragdoll.twist_limit = (-math.radians(twist_deg), math.radians(twist_deg))


def test_animation_outside_the_limits_is_named_and_fitting_clears_it(scene, waft):
    ob = rigs.humanoid(scene)
    ob.waft_ragdoll.use_ground = False  # its feet start 2 cm in it: another warning
    _limit_every_joint(ob, 30.0, 20.0)
    _bend_forearm(scene, ob, 80.0)
    scene.frame_set(1)
    assert _warnings(waft, scene, ob) == []  # straight here: inside its limits
    scene.frame_set(5)
    found = _warnings(waft, scene, ob)
    assert [w.fix for w in found] == ["FIT_LIMITS"]
    assert "'forearm.L'" in found[0].text and "50°" in found[0].text, found[0].text
    name, before = ob.name, tuple(ob.pose.bones["forearm.L"].waft_ragdoll.swing_limit)
    bpy.ops.ed.undo_push(message="before the fix")
    assert _fix(ob, found[0]) == {'FINISHED'}
    assert scene.frame_current == 5  # the frame the user was on
    assert _warnings(waft, scene, ob) == []
    assert _reach_x(ob.pose.bones["forearm.L"]) >= math.radians(80.0)
    assert tuple(ob.pose.bones["hand.L"].waft_ragdoll.swing_limit) == before  # not animated
    bpy.ops.ed.undo_push(message="fix")
    bpy.ops.ed.undo()  # the limits as they were
    ob = bpy.context.scene.objects[name]
    assert tuple(ob.pose.bones["forearm.L"].waft_ragdoll.swing_limit) == before


def test_limits_are_fitted_to_the_animation_not_to_a_baked_result(scene, waft, bake_api):
    """Baked, the bones play the ragdoll's result (inside the limits); the fix reads the
    animation under it."""
    ob = rigs.humanoid(scene)
    ob.waft_ragdoll.use_ground = False
    _limit_every_joint(ob, 30.0, 20.0)
    _bend_forearm(scene, ob, 80.0)
    bake_api.bake_scene(scene)
    assert bpy.ops.waft.fix_warning(fix="FIT_LIMITS", armature=ob.name) == {'FINISHED'}
    assert _reach_x(ob.pose.bones["forearm.L"]) >= math.radians(80.0)


def test_a_constraint_on_a_body_is_turned_off_for_the_result(scene, waft):
    ob = rigs.humanoid(scene)
    ob.waft_ragdoll.use_ground = False  # its feet start 2 cm in it: another warning
    constraint = ob.pose.bones["spine"].constraints.new('COPY_ROTATION')
    constraint.target, constraint.subtarget = ob, "hips"
    found = _warnings(waft, scene, ob)
    assert [w.fix for w in found] == ["CONSTRAINTS"] and "'spine'" in found[0].text
    assert _fix(ob, found[0]) == {'FINISHED'}
    assert scene.waft.constrained_bones == 'TURN_OFF'
    assert _warnings(waft, scene, ob) == []
    assert not constraint.mute and constraint.influence == 1.0  # the rig itself is untouched


class _Layout:
    """Stands in for ``UILayout``: records the labels and the operators' settings drawn."""

    def __init__(self, log):
        self.log, self.active, self.use_property_split, self.use_property_decorate = \
            log, True, False, False

    def operator(self, idname, text="", **_):
        props = type("Props", (), {})()
        self.log.append((idname, text, props))
        return props

    def label(self, text="", **_):
        self.log.append(("label", text, None))

    def row(self, **_):
        return self

    column = box = row

    def prop(self, *_, **__):
        pass

    def separator(self, **_):
        pass

    def menu(self, *_, **__):
        pass


def test_the_panel_shows_the_warning_with_its_fix(scene, waft):
    ob = rigs.humanoid(scene)
    ob.waft_ragdoll.use_ground = False  # its feet start 2 cm in it: another warning
    _limit_every_joint(ob, 30.0, 20.0)
    _bend_forearm(scene, ob, 80.0)
    scene.frame_set(5)
    panels = importlib.import_module(waft.__name__ + ".addon.ragdoll.panels")
    log: list = []
    panels.draw_warnings(_Layout(log), scene, ob)
    labels = [text for kind, text, _ in log if kind == "label"]
    fixes = [(text, props) for kind, text, props in log if kind == "waft.fix_warning"]
    assert len(labels) == 1 and "'forearm.L'" in labels[0]
    assert [text for text, _ in fixes] == ["Fit Limits to Animation"]
    assert fixes[0][1].fix == "FIT_LIMITS" and fixes[0][1].armature == ob.name
