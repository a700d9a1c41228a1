"""Optional Alembic export of the baked render strands (for pipelines)."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hair_rigs  # noqa: E402


def test_alembic_export_writes_every_frame(scene, bake_api, tmp_path):
    scene.frame_start, scene.frame_end = 1, 6
    rig, _scalp = hair_rigs.head_rig(scene, guides=8, bones=3)
    rig.waft_hair.count = 300
    hair_rigs.save_first_on_42(tmp_path)
    path = tmp_path / "strands.abc"
    rig.waft_hair.alembic_path = str(path)
    bake_api.bake_scene(scene)
    assert path.is_file()
    baked = {}
    for f in (1, 6):
        scene.frame_set(f)
        baked[f] = hair_rigs.evaluated_points(scene.objects["Hair Strands"])
    # Import next to the original: animated (a cache modifier), and the same points per frame.
    before = set(scene.objects)
    bpy.ops.wm.alembic_import(filepath=str(path))
    imported = [ob for ob in scene.objects if ob not in before]
    assert len(imported) == 1 and imported[0].type == 'CURVES'
    assert any(m.type == 'MESH_SEQUENCE_CACHE' for m in imported[0].modifiers)
    for f in (1, 6):
        scene.frame_set(f)
        np.testing.assert_allclose(hair_rigs.evaluated_points(imported[0]), baked[f], atol=1e-5)
