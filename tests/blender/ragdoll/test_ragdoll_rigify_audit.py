"""Audit (session 46): ragdolls on Rigify rigs generated from Blender's other metarigs.

Create › Humanoid on the basic human, the horse and the cat gives one tree of DEF bodies (31,
36, 35); on the basic quadruped, the wolf, the bird and the shark it stops with the clear
"separate trees" error (covered by test_ragdoll_operators). Baked limp, the basic human rests
by 3 s; the horse does not (below).
"""

from __future__ import annotations

import bpy
import numpy as np
import pytest

FPS = 24
SECONDS = 6


def _rigify(op: str):
    """Generate the Rigify rig of metarig operator ``op`` into the current (empty) file."""
    if "rigify" not in bpy.context.preferences.addons:
        bpy.ops.preferences.addon_enable(module="rigify")
    scene = bpy.context.scene
    getattr(bpy.ops.object, op)()
    metarig = bpy.context.view_layer.objects.active
    bpy.ops.pose.rigify_generate()
    rig = next(ob for ob in scene.objects if ob.type == 'ARMATURE' and ob is not metarig)
    metarig.hide_set(True)
    for ob in scene.objects:
        ob.select_set(False)
    bpy.context.view_layer.objects.active = rig
    rig.select_set(True)
    return rig


@pytest.mark.xfail(strict=True, reason=(
    "Measured (session 46 audit): a limp Rigify horse (36 DEF bodies, Create › Humanoid, every "
    "body Free, no root lock, default 240 Hz / 4 iterations, ground on) dropped from its rest "
    "pose lies on its side by 3 s yet its forelegs keep moving: the fastest body per second "
    "7,740, 6,828, 2,548, 321, 1,393, 1,037, 1,413, 694, 437, 347 mm/s over 10 s (a forearm "
    "hopping 2 cm off the ground at 9-10 s, the bodies' mean drifting 5 cm in the last 2 s). "
    "The Rigify human on the same settings rests (0 mm/s) by 3 s and the cat is at 14 mm/s at "
    "4 s. Its energy never rises (largest rise 7e-13 J of a 1,314 J fall over 1,440 substeps) "
    "but its kinetic energy stays at 58, 31, 39, 25 J in seconds 3-6: it keeps rocking and "
    "sliding (the forelegs' shoulder and forearm bodies are the fastest). Cause not found."))
def test_a_limp_rigify_horse_comes_to_rest(scene, bake_api):
    rig = _rigify("armature_horse_metarig_add")
    scene.render.fps = FPS
    scene.frame_start, scene.frame_end = 1, 1 + SECONDS * FPS
    bpy.ops.object.mode_set(mode='POSE')
    assert bpy.ops.waft.ragdoll_create(source='HUMANOID') == {'FINISHED'}
    bpy.ops.object.mode_set(mode='OBJECT')
    bodies = [pb for pb in rig.pose.bones if pb.waft_ragdoll.body]
    assert len(bodies) > 30
    for pb in bodies:
        pb.waft_ragdoll.mode = "FREE"
    rig.waft_ragdoll.root_lock = False
    report = bake_api.bake_scene(scene)
    x = report.systems["ragdoll"].body_matrix[rig.name][..., :3, 3]
    assert np.isfinite(x).all()
    speed = np.linalg.norm(np.diff(x, axis=0), axis=-1).max(axis=1) * FPS
    assert x[0, :, 2].max() - x[-1, :, 2].max() > 0.5  # it fell over
    assert speed[-FPS:].max() < 0.005, speed[-FPS:].max()
