"""Production rigs for the tests, built the way a user gets them: a Rigify human generated from
Blender's own metarig (Rigify ships with Blender). Imported by the tests in this folder."""

from __future__ import annotations

from pathlib import Path

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


def save_rigify_human(path: Path) -> Path:
    """Generate Rigify's human (``rigify_human``) in an empty file and save it to ``path``,
    read-only (a test that saved over it would change every later test's rig); returns ``path``.
    Generating takes about 10 CPU-s, opening the file well under one."""
    bpy.ops.wm.read_homefile(use_empty=True)
    rigify_human(bpy.context.scene)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    path.chmod(0o444)
    return path


def open_rigify_human(path: Path):
    """Open the file ``save_rigify_human`` wrote: the same fresh rig every time, active and
    selected as generated. Returns the rig."""
    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False)
    rig = bpy.context.view_layer.objects.active
    assert rig is not None and rig.data.bones.get("DEF-spine") is not None, rig
    return rig
