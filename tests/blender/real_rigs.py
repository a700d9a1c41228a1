"""Production rigs for the tests, built the way a user gets them: a Rigify human generated from
Blender's own metarig (Rigify ships with Blender). Imported by the tests in this folder."""

from __future__ import annotations

import bpy


def rigify_human(scene):
    """Generate Rigify's human metarig into ``scene``; returns the generated rig ("rig": ORG,
    MCH, DEF and control bones, DEF bones constrained to follow the ORG/tweak bones)."""
    if "rigify" not in bpy.context.preferences.addons:
        bpy.ops.preferences.addon_enable(module="rigify")  # Rigify reads its preferences
    view_layer = bpy.context.view_layer
    bpy.ops.object.armature_human_metarig_add()
    metarig = view_layer.objects.active
    bpy.ops.pose.rigify_generate()
    rig = next(ob for ob in scene.objects if ob.type == 'ARMATURE' and ob is not metarig
               and ob.data.bones.get("DEF-spine") is not None)
    metarig.hide_set(True)
    view_layer.objects.active = rig
    rig.select_set(True)
    return rig
