"""Fit Colliders to Bones: capsules from the skin a bone moves, parented to it, refitted in
place, clear errors that change nothing."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs  # noqa: E402

RADIUS = 0.08


def _leg(scene):
    """A thigh (z 1.0 → 0.6) and a shin (0.6 → 0.2) skinning a tube of radius 8 cm."""
    rig = waft_rigs.new_armature(scene, "Rig", [
        {"name": "Thigh", "head": (0.1, 0.0, 1.0), "tail": (0.1, 0.0, 0.6)},
        {"name": "Shin", "head": (0.1, 0.0, 0.6), "tail": (0.1, 0.0, 0.2), "parent": "Thigh",
         "connect": True},
        {"name": "Hand", "head": (0.6, 0.0, 1.0), "tail": (0.6, 0.0, 0.8)}])
    heights = np.linspace(1.0, 0.2, 17)
    angles = np.linspace(0.0, 2.0 * np.pi, 16, endpoint=False)
    verts = [(0.1 + RADIUS * math.cos(a), RADIUS * math.sin(a), z) for z in heights
             for a in angles]
    faces = [(r * 16 + i, r * 16 + (i + 1) % 16, (r + 1) * 16 + (i + 1) % 16, (r + 1) * 16 + i)
             for r in range(16) for i in range(16)]
    mesh = bpy.data.meshes.new("Leg")
    mesh.from_pydata(verts, [], faces)
    body = bpy.data.objects.new("Body", mesh)
    scene.collection.objects.link(body)
    thigh, shin = body.vertex_groups.new(name="Thigh"), body.vertex_groups.new(name="Shin")
    for i, (_, _, z) in enumerate(verts):
        (thigh if z > 0.6 + 1e-6 else shin).add([i], 1.0, 'REPLACE')
    body.modifiers.new("Armature", 'ARMATURE').object = rig
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode='POSE')
    return rig, body


def _select(rig, names):
    for pb in rig.pose.bones:
        waft_rigs.set_selected(pb, pb.name in names)


def test_capsules_fit_the_skin_and_follow_their_bones(scene):
    rig, _ = _leg(scene)
    _select(rig, {"Thigh", "Shin"})
    assert bpy.ops.waft.fit_colliders() == {'FINISHED'}
    for name, top, bottom in (("Thigh", 1.0, 0.65), ("Shin", 0.6, 0.2)):
        empty = bpy.data.objects[f"WaftCollider.{name}"]
        settings = empty.waft_collider
        assert settings.enabled and settings.shape == "CAPSULE"
        assert settings.radius_a == settings.radius_b == pytest.approx(RADIUS, rel=0.02)
        assert empty.parent == rig and empty.parent_bone == name
        bpy.context.view_layer.update()
        axis = np.array(empty.matrix_world.col[2][:3])
        assert abs(axis @ (0.0, 0.0, 1.0)) == pytest.approx(1.0, abs=1e-6)  # along the bone
        centre = np.array(empty.matrix_world.translation)
        assert centre == pytest.approx((0.1, 0.0, 0.5 * (top + bottom)), abs=0.01)
        # segment + caps = the skin's extent along the bone
        half = empty.empty_display_size + settings.radius_a
        assert half == pytest.approx(0.5 * (top - bottom), abs=0.01)
    # It moves with its bone.
    rig.pose.bones["Thigh"].rotation_mode = 'XYZ'
    rig.pose.bones["Thigh"].rotation_euler = (math.radians(90.0), 0.0, 0.0)
    bpy.context.view_layer.update()
    moved = np.array(bpy.data.objects["WaftCollider.Shin"].matrix_world.translation)
    assert np.linalg.norm(moved - (0.1, 0.0, 0.4)) > 0.2


def test_fitting_again_updates_instead_of_adding(scene):
    rig, body = _leg(scene)
    _select(rig, {"Thigh"})
    bpy.ops.waft.fit_colliders()
    # the artist made the leg thicker
    for vertex in body.data.vertices:
        vertex.co.x = 0.1 + (vertex.co.x - 0.1) * 1.5
        vertex.co.y *= 1.5
    bpy.ops.waft.fit_colliders()
    capsules = [ob for ob in bpy.data.objects if ob.name.startswith("WaftCollider.Thigh")]
    assert len(capsules) == 1
    assert capsules[0].waft_collider.radius_a == pytest.approx(1.5 * RADIUS, rel=0.02)


def test_clear_errors_change_nothing(scene):
    rig, body = _leg(scene)
    _select(rig, set())
    objects = set(bpy.data.objects.keys())
    with pytest.raises(RuntimeError, match="select the bones"):
        bpy.ops.waft.fit_colliders()
    _select(rig, {"Hand"})  # a bone no vertex belongs to
    with pytest.raises(RuntimeError, match="no skin vertex belongs to Hand"):
        bpy.ops.waft.fit_colliders()
    body.modifiers.clear()
    _select(rig, {"Thigh"})
    with pytest.raises(RuntimeError, match="deforms no mesh"):
        bpy.ops.waft.fit_colliders()
    assert set(bpy.data.objects.keys()) == objects


def test_undoable():
    assert 'UNDO' in bpy.types.WAFT_OT_fit_colliders.bl_options
