"""Bad render-strand input: a SetupError naming the object, and nothing written (the file's
fingerprint, objects and Curves data unchanged)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import bpy
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import hair_rigs  # noqa: E402
import waft_rigs  # noqa: E402


def _setup_error(waft):
    return sys.modules[waft.__name__ + ".core.errors"].SetupError


def _state(scene):
    return (waft_rigs.fingerprint(scene), sorted(o.name for o in bpy.data.objects),
            len(bpy.data.hair_curves), len(bpy.data.node_groups))


def _fails_cleanly(scene, bake_api, waft, pattern):
    before = _state(scene)
    with pytest.raises(_setup_error(waft)) as info:
        bake_api.bake_scene(scene)
    assert re.search(pattern, str(info.value)), str(info.value)
    assert _state(scene) == before


@pytest.fixture
def rig(scene):
    scene.frame_start, scene.frame_end = 1, 4
    rig, scalp = hair_rigs.head_rig(scene, guides=6, bones=3)
    rig.waft_hair.count = 200
    scene.frame_set(2)
    return rig, scalp


def test_missing_scalp(scene, bake_api, waft, rig):
    rig[0].waft_hair.scalp = None
    _fails_cleanly(scene, bake_api, waft, r"Armature 'Hair'.*no Scalp mesh")


def test_scalp_without_faces(scene, bake_api, waft, rig):
    ob, scalp = rig
    mesh = bpy.data.meshes.new("Points")
    mesh.from_pydata([(0, 0, 1.6), (0.1, 0, 1.6), (0, 0.1, 1.6)], [], [])
    scalp.data = mesh
    _fails_cleanly(scene, bake_api, waft, r"Armature 'Hair'.*scalp 'Scalp' has no faces")


def test_density_zero_everywhere(scene, bake_api, waft, rig):
    ob, scalp = rig
    group = scalp.vertex_groups.new(name="Density")
    group.add(list(range(len(scalp.data.vertices))), 0.0, 'REPLACE')
    ob.waft_hair.density_group = "Density"
    _fails_cleanly(scene, bake_api, waft, r"Armature 'Hair'.*'Density'.*zero everywhere")


def test_missing_density_group(scene, bake_api, waft, rig):
    rig[0].waft_hair.density_group = "Nope"
    _fails_cleanly(scene, bake_api, waft, r"Armature 'Hair'.*no vertex group 'Nope'")


def test_a_density_group_thins_the_hair_where_it_is_zero(scene, bake_api, rig, tmp_path):
    ob, scalp = rig
    hair_rigs.save_first_on_42(tmp_path)
    group = scalp.vertex_groups.new(name="Density")
    top = [v.index for v in scalp.data.vertices if v.co.z > 1.66]
    group.add(top, 1.0, 'REPLACE')
    ob.waft_hair.density_group = "Density"
    bake_api.bake_scene(scene)
    scene.frame_set(1)
    roots = hair_rigs.evaluated_points(scene.objects["Hair Strands"]).reshape(200, -1, 3)[:, 0]
    # Roots only on faces touching the painted crown (z of the lowest such vertex ring).
    lowest = min(v.co.z for v in scalp.data.vertices if v.co.z <= 1.66 and any(
        v.index in p.vertices and any(i in top for i in p.vertices)
        for p in scalp.data.polygons))
    assert roots[:, 2].min() >= lowest - 1e-5
