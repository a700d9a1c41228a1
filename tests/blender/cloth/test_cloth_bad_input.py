"""Bad cloth setups get a clear error naming the cage (and vertex or bone) and why, and the
.blend is left unchanged: every case starts from a rig with a user action and a previous cloth
bake, and compares the file's fingerprint (actions, NLA, pose, matrices, current frame)."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import bmesh
import bpy
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cloth_rigs  # noqa: E402
from cloth_rigs import rigs  # noqa: E402


@pytest.fixture
def baked(scene, bake_api):
    rig, cage = cloth_rigs.cloth_rig(scene)
    scene.frame_start, scene.frame_end = 1, 8
    cloth_rigs.key_root(rig, [1, 8], lambda f: (0.05 * f, 0.0, 0.0))
    bake_api.bake_scene(scene)
    scene.frame_set(5)
    return rig, cage


def _setup_error(waft):
    return sys.modules[waft.__name__ + ".core.errors"].SetupError


def _fails_cleanly(scene, bake_api, waft, pattern: str) -> str:
    before = rigs.fingerprint(scene)
    with pytest.raises(_setup_error(waft)) as info:
        bake_api.bake_scene(scene)
    message = str(info.value)
    assert re.search(pattern, message), message
    assert rigs.fingerprint(scene) == before
    return message


def _edit_mesh(cage, edit) -> None:
    mesh = bmesh.new()
    mesh.from_mesh(cage.data)
    edit(mesh)
    mesh.to_mesh(cage.data)
    mesh.free()
    cage.data.update()


def test_triangle_only_cage(scene, bake_api, waft, baked):
    _rig, cage = baked
    _edit_mesh(cage, lambda m: bmesh.ops.triangulate(m, faces=m.faces[:]))
    _fails_cleanly(scene, bake_api, waft, r"Cloth cage 'Cage'.*triangles only")


def test_non_manifold_cage(scene, bake_api, waft, baked):
    _rig, cage = baked

    def fin(m):  # a third face on the inner edge between vertices 7 and 8
        m.verts.ensure_lookup_table()
        a, b = m.verts[7], m.verts[8]
        c = m.verts.new((a.co.x, 0.1, a.co.z))
        d = m.verts.new((b.co.x, 0.1, b.co.z))
        m.faces.new((a, b, d, c))
    _edit_mesh(cage, fin)
    _fails_cleanly(scene, bake_api, waft, r"Cloth cage 'Cage'.*non-manifold.*vertices 7 and 8")


def test_vertex_without_neighbours(scene, bake_api, waft, baked):
    _rig, cage = baked
    _edit_mesh(cage, lambda m: m.verts.new((3.0, 0.0, 0.0)))
    _fails_cleanly(scene, bake_api, waft, r"Cloth cage 'Cage'.*vertex 30 has no neighbours")


def test_bone_mapped_to_no_vertex(scene, bake_api, waft, baked):
    _rig, cage = baked
    item = cage.waft_cloth.bones[2]
    item.vertex = -1
    _fails_cleanly(scene, bake_api, waft, rf"Cloth cage 'Cage', bone '{item.bone}'.*no vertex")


def test_bone_missing_from_the_armature(scene, bake_api, waft, baked):
    _rig, cage = baked
    cage.waft_cloth.bones[0].bone = "Nope"
    _fails_cleanly(scene, bake_api, waft, r"bone 'Nope'.*'Rig' has no such bone")


def test_no_vertex_pinned(scene, bake_api, waft, baked):
    _rig, cage = baked
    cage.vertex_groups["Pin"].remove(list(range(6)))
    _fails_cleanly(scene, bake_api, waft, r"Cloth cage 'Cage'.*no vertex is pinned")


def test_every_vertex_pinned(scene, bake_api, waft, baked):
    _rig, cage = baked
    cage.vertex_groups["Pin"].add(list(range(30)), 1.0, 'REPLACE')
    _fails_cleanly(scene, bake_api, waft, r"Cloth cage 'Cage'.*every vertex is pinned")


def test_missing_armature(scene, bake_api, waft, baked):
    _rig, cage = baked
    cage.waft_cloth.armature = None
    _fails_cleanly(scene, bake_api, waft, r"Cloth cage 'Cage'.*no armature")


def test_nan_setting(scene, bake_api, waft, baked):
    _rig, cage = baked
    cage.waft_cloth.damping = math.nan
    _fails_cleanly(scene, bake_api, waft, r"Cloth cage 'Cage'.*'damping'.*finite")


def test_setting_keyed_to_nan(scene, bake_api, waft, baked):
    _rig, cage = baked
    settings = cage.waft_cloth
    settings.drag = 0.5
    settings.keyframe_insert("drag", frame=1)
    settings.drag = math.inf
    settings.keyframe_insert("drag", frame=6)
    scene.frame_set(1)  # fine on the current frame: only sampling meets the bad value
    _fails_cleanly(scene, bake_api, waft, r"Cloth cage 'Cage'.*'drag'.*not finite at frame")


def test_armature_scaled_to_zero_names_the_armature_and_frame(scene, bake_api, waft, baked):
    """It named the cage and a sample index ("space matrix at frame index 24")."""
    rig, _cage = baked
    for frame, size in ((1, 1.0), (4, 0.0), (8, 1.0)):
        rig.scale = (size, size, size)
        rig.keyframe_insert("scale", frame=frame)
    scene.frame_set(1)
    _fails_cleanly(scene, bake_api, waft, r"Armature 'Rig': world scale is zero or negative at "
                                          r"frame 4")


def test_a_bone_keyed_to_nan_names_the_bone_not_a_vertex(scene, bake_api, waft, baked):
    rig, _cage = baked
    action = rig.animation_data.nla_tracks["Waft: original"].strips[0].action
    curve = next(c for c in rigs.action_fcurves(action) if c.array_index == 0
                 and c.data_path == f'pose.bones["{cloth_rigs.ROOT}"].location')
    curve.keyframe_points.insert(6, float("nan"))
    scene.frame_set(1)
    _fails_cleanly(scene, bake_api, waft, rf"Armature 'Rig', bone '{cloth_rigs.ROOT}': its "
                                          r"evaluated pose is not finite at frame [\d.]+")


def test_missing_pin_group(scene, bake_api, waft, baked):
    _rig, cage = baked
    cage.waft_cloth.pin_group = "Gone"
    _fails_cleanly(scene, bake_api, waft, r"Cloth cage 'Cage'.*pin vertex group 'Gone'")


def test_modifier_changing_vertex_count(scene, bake_api, waft, baked):
    _rig, cage = baked
    cage.modifiers.new("Subdivision", 'SUBSURF')
    _fails_cleanly(scene, bake_api, waft, r"Cloth cage 'Cage'.*vertex count")


def test_failure_in_another_cage_writes_nothing(scene, bake_api, waft, baked):
    rig, cage = baked
    other = cloth_rigs.grid_cage(scene, "Other", rows=3, columns=3)
    other.waft_cloth.enabled = True
    other.waft_cloth.armature = rig
    _fails_cleanly(scene, bake_api, waft, r"Cloth cage 'Other'")
    assert bpy.data.objects["Cage"].waft_cloth.enabled
