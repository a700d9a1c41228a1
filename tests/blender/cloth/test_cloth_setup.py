"""Cloth setup in real Blender: every core setting is a keyframeable property, the operators
(add with created or mapped bones, fabric presets, bake with the cage mesh), animated settings
sampled per frame, max distance from a vertex group, colliders, Surface pins, shared armatures."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import bpy
import numpy as np
from mathutils import Vector

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cloth_rigs  # noqa: E402
from cloth_rigs import rigs  # noqa: E402


def _core(waft, name: str):
    return sys.modules.get(f"{waft.__name__}.{name}") or __import__(
        f"{waft.__name__}.{name}", fromlist=["_"])


def test_every_cloth_param_is_a_keyframeable_property(waft):
    params = _core(waft, "core.cloth.params")
    rna = bpy.types.Object.bl_rna.properties["waft_cloth"].fixed_type.properties
    for field in dataclasses.fields(params.ClothParams):
        assert field.name in rna, field.name
        assert rna[field.name].is_animatable, field.name
        assert rna[field.name].description, field.name


def test_defaults_match_core(waft, scene):
    params = _core(waft, "core.cloth.params")
    cage = cloth_rigs.grid_cage(scene)
    settings = cage.waft_cloth
    for name, value in params.DEFAULTS.items():
        if name == "backstop_distance":
            assert not settings.use_backstop  # inf = off
            continue
        assert np.allclose(np.array(getattr(settings, name), dtype=float), value,
                           rtol=1e-6), name


def test_map_nearest_uses_existing_bones(scene):
    rig = rigs.new_armature(scene, "Rig", [
        {"name": "Root", "head": (0.0, 0.0, 2.2), "tail": (0.0, 0.0, 2.0)},
        {"name": "A", "head": (-0.25, 0.0, 2.0), "tail": (-0.25, 0.0, 1.8), "parent": "Root"},
        {"name": "B", "head": (0.25, 0.0, 1.9), "tail": (0.25, 0.0, 1.7), "parent": "Root"},
        {"name": "Far", "head": (3.0, 0.0, 0.0), "tail": (3.0, 0.0, 0.2), "parent": "Root"},
    ])
    cage = cloth_rigs.grid_cage(scene)
    cloth_rigs.skin_to(cage, rig)
    cloth_rigs.make_setup(cage, rig, mapping="NEAREST")
    mapping = {item.bone: item.vertex for item in cage.waft_cloth.bones}
    assert mapping == {"A": 0, "B": 11}  # (row 0, column 0) and (row 1, column 5); Far skipped


def test_create_every_row_every_column(scene):
    rig = rigs.new_armature(scene, "Rig", [{"name": "Root", "head": (0.0, 0.0, 2.2),
                                            "tail": (0.0, 0.0, 2.0)}])
    cage = cloth_rigs.grid_cage(scene, rows=4, columns=5)
    cloth_rigs.skin_to(cage, rig, columns=5)
    cloth_rigs.make_setup(cage, rig, column_step=1, row_step=1, prefix="Sk")
    assert len(cage.waft_cloth.bones) == 3 * 5
    chain = [b for b in rig.data.bones if b.name.startswith("Sk.00.")]
    assert [b.name for b in chain] == ["Sk.00.00", "Sk.00.01", "Sk.00.02"]
    assert chain[1].parent == chain[0] and chain[0].parent.name == "Root"


def test_fabric_preset_operator(waft, scene):
    presets = _core(waft, "addon.cloth.presets")
    cage = cloth_rigs.grid_cage(scene)
    bpy.context.view_layer.objects.active = cage
    name = next(iter(presets.FABRICS))
    assert bpy.ops.waft.cloth_apply_fabric(fabric=name) == {'FINISHED'}
    assert cage.waft_cloth.fabric == name
    for key, value in presets.fabric_values(name).items():
        if key == "backstop_distance" and value == float("inf"):
            assert not cage.waft_cloth.use_backstop
        else:
            assert np.allclose(getattr(cage.waft_cloth, key), value, rtol=1e-5), key


def test_bake_cage_operator_writes_the_cage_mesh(scene):
    rig, cage = cloth_rigs.cloth_rig(scene)
    scene.frame_start, scene.frame_end = 1, 6
    bpy.context.view_layer.objects.active = cage
    assert bpy.ops.waft.cloth_bake_cage() == {'FINISHED'}
    assert cage.waft_cloth.cage_output is not None
    assert rig.animation_data.nla_tracks.get("Waft Cloth") is not None


def test_animated_setting_is_sampled_per_frame(scene, bake_api):
    """Wind keyed on from frame 12 pushes the cloth only after frame 12."""
    rig, cage = cloth_rigs.cloth_rig(scene)
    scene.frame_start, scene.frame_end = 1, 30
    settings = cage.waft_cloth
    settings.wind_turbulence = 0.0
    settings.wind_velocity = (0.0, 0.0, 0.0)
    settings.keyframe_insert("wind_velocity", frame=12)
    settings.wind_velocity = (0.0, 8.0, 0.0)
    settings.keyframe_insert("wind_velocity", frame=13)
    cloth = bake_api.bake_scene(scene).systems["cloth"]
    y = cloth.positions["Cage"][:, 6:, 1]
    assert np.abs(y[:12]).max() < 1e-6
    assert y[-1].mean() > 0.05


def test_max_distance_from_vertex_group(scene, bake_api):
    """Painted max distance: no vertex leaves its sphere around the skinned position."""
    rig, cage = cloth_rigs.cloth_rig(scene)
    scene.frame_start, scene.frame_end = 1, 24
    cloth_rigs.key_root(rig, [1, 6, 12, 18, 24],
                        lambda f: (0.4 * (-1) ** (f // 6) if f > 1 else 0.0, 0.0, 0.0))
    group = cage.vertex_groups.new(name="Reach")
    for v in range(30):
        group.add([v], (v // 6) / 4, 'REPLACE')  # 0 at the top, 1 at the hem
    settings = cage.waft_cloth
    settings.max_distance = 0.08
    settings.max_distance_group = "Reach"
    settings.edge_max_distance_scale = 1.0
    cloth = bake_api.bake_scene(scene).systems["cloth"]
    gap = np.linalg.norm(cloth.positions["Cage"] - cloth.reference["Cage"], axis=-1)
    limit = 0.08 * (np.arange(30) // 6) / 4
    assert np.all(gap <= limit[None] + 1e-5), (gap - limit).max()
    assert gap[:, 24:].max() > 0.07  # the hem really reaches its limit


def test_sphere_collider_pushes_the_cloth(scene, bake_api):
    rig, cage = cloth_rigs.cloth_rig(scene)
    scene.frame_start, scene.frame_end = 1, 24
    center = Vector((0.0, -0.05, 1.75))
    rigs.sphere_collider(scene, "Ball", center, 0.12)
    settings = cage.waft_cloth
    settings.radius = 0.01
    cloth = bake_api.bake_scene(scene).systems["cloth"]
    # Frame 1 is the skinned start (inside the ball); from the next frame on it is pushed out.
    distance = np.linalg.norm(cloth.positions["Cage"][1:, 6:] - np.array(center), axis=-1)
    assert distance.min() > 0.12 + 0.01 - 2e-3
    # Without the collider the cloth would hang through the ball.
    assert np.linalg.norm(cloth.reference["Cage"][0, 6:] - np.array(center), axis=-1).min() \
        < 0.12


def test_surface_pins_follow_the_body_triangle(scene, bake_api):
    """Surface pin mode: pinned vertices ride on the body mesh (barycentric, seed 003), here a
    plane that slides and tilts while the armature stands still."""
    rig, cage = cloth_rigs.cloth_rig(scene)
    scene.frame_start, scene.frame_end = 1, 12
    mesh = bpy.data.meshes.new("Body")
    mesh.from_pydata([(-1, -0.01, 1.9), (1, -0.01, 1.9), (1, -0.01, 2.1), (-1, -0.01, 2.1)],
                     [], [(0, 1, 2, 3)])
    body = bpy.data.objects.new("Body", mesh)
    scene.collection.objects.link(body)
    for frame, x in ((1, 0.0), (12, 0.3)):
        body.location.x = x
        body.keyframe_insert("location", frame=frame)
    settings = cage.waft_cloth
    settings.pin_mode = "SURFACE"
    settings.body = body
    cloth = bake_api.bake_scene(scene).systems["cloth"]
    top = cloth.positions["Cage"][:, :6]
    rest = np.array([v.co for v in cage.data.vertices])[:6]
    moved = top[-1] - rest
    np.testing.assert_allclose(moved[:, 0], 0.3, atol=1e-4)
    np.testing.assert_allclose(moved[:, 1:], 0.0, atol=1e-4)


def test_two_cages_share_one_armature_action(scene, bake_api):
    rig, cage = cloth_rigs.cloth_rig(scene)
    scene.frame_start, scene.frame_end = 1, 6
    second = cloth_rigs.grid_cage(scene, "Cage2", rows=3, columns=3, top=1.2)
    cloth_rigs.skin_to(second, rig, columns=3)
    cloth_rigs.make_setup(second, rig, column_step=1, prefix="Back")
    report = bake_api.bake_scene(scene, objects=[second]).systems["cloth"]
    # Baking one cage bakes every cage of its armature (they share one action).
    assert sorted(s.name for s in report.setups) == ["Cage", "Cage2"]
    tracks = [t.name for t in rig.animation_data.nla_tracks]
    assert tracks.count("Waft Cloth") == 1
    curves = cloth_rigs.cloth_fcurves(rig)
    assert ('pose.bones["Back.00.00"].location', 0) in curves
    assert ('pose.bones["Cloth.00.00"].location', 0) in curves


def test_clear_with_strands_on_the_same_armature(scene, bake_api):
    """A strand chain and a cloth cage on one armature: clearing the cloth keeps the strands'
    result and the stashed user action until both results are gone."""
    rig, cage = cloth_rigs.cloth_rig(scene)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode='EDIT')
    tail = rig.data.edit_bones.new("Tail")
    tail.head, tail.tail = (0.0, 0.2, 2.0), (0.0, 0.4, 2.0)
    tail.parent = rig.data.edit_bones["Root"]
    bpy.ops.object.mode_set(mode='OBJECT')
    rig.pose.bones["Tail"].waft.simulate = True
    rig.waft.enabled = True
    scene.frame_start, scene.frame_end = 1, 6
    cloth_rigs.key_root(rig, [1, 6], lambda f: (0.02 * f, 0.0, 0.0))
    user_action = rig.animation_data.action
    keys = cloth_rigs.action_keys(user_action)
    bake_api.bake_scene(scene)
    tracks = [t.name for t in rig.animation_data.nla_tracks]
    assert {"Waft", "Waft Cloth", "Waft: original"} <= set(tracks)
    assert bake_api.clear_bake(scene, objects=["Cage"]) == ["Cage"]
    tracks = [t.name for t in rig.animation_data.nla_tracks]
    assert "Waft Cloth" not in tracks and "Waft" in tracks and "Waft: original" in tracks
    assert rig.animation_data.action is None
    bake_api.clear_bake(scene, objects=["Rig"])
    assert rig.animation_data.action == user_action
    assert cloth_rigs.action_keys(user_action) == keys
    assert not [t.name for t in rig.animation_data.nla_tracks if t.name.startswith("Waft")]


def test_panels_and_operators_are_registered():
    for name in ("WAFT_PT_cloth", "WAFT_PT_cloth_stiffness", "WAFT_PT_cloth_bones",
                 "WAFT_PT_cloth_sidebar", "WAFT_UL_cloth_bones"):
        assert hasattr(bpy.types, name), name
    for op in ("cloth_add", "cloth_apply_fabric", "cloth_bake_cage"):
        assert hasattr(bpy.ops.waft, op), op


def test_reset_frame_restarts_from_the_skinned_pose(scene, bake_api):
    rig, cage = cloth_rigs.cloth_rig(scene)
    scene.frame_start, scene.frame_end = 1, 20
    cloth_rigs.key_root(rig, [1, 8, 20], lambda f: (0.0 if f == 1 else 0.4, 0.0, 0.0))
    cage.waft_cloth.reset_frames = "12"
    cloth = bake_api.bake_scene(scene).systems["cloth"]
    gap = np.linalg.norm(cloth.positions["Cage"] - cloth.reference["Cage"], axis=-1)
    assert gap[10].max() > 0.01  # swinging before the reset
    assert gap[11].max() < 1e-6  # frame 12 is the skinned pose again


def test_stacked_layers_from_vertex_groups(scene, bake_api):
    """Two sheets in one cage, layer groups bottom first: the inner sheet is held in place
    (painted max distance 0), wind pushes the outer sheet onto it, and it never passes through
    (layered self-collision, seed 003); without the layers it would."""
    rig = rigs.new_armature(scene, "Rig", [{"name": "Root", "head": (0.0, 0.0, 2.2),
                                            "tail": (0.0, 0.0, 2.0)}])
    rows, columns = 5, 4
    verts, faces = [], []
    for y in (0.0, 0.03):
        base = len(verts)
        verts += [((c - 1.5) * 0.1, y, 2.0 - r * 0.1) for r in range(rows) for c in range(columns)]
        faces += [(base + r * columns + c, base + r * columns + c + 1,
                   base + (r + 1) * columns + c + 1, base + (r + 1) * columns + c)
                  for r in range(rows - 1) for c in range(columns - 1)]
    mesh = bpy.data.meshes.new("Layers")
    mesh.from_pydata(verts, [], faces)
    cage = bpy.data.objects.new("Layers", mesh)
    scene.collection.objects.link(cage)
    n = rows * columns
    cage.vertex_groups.new(name="Root").add(list(range(2 * n)), 1.0, 'REPLACE')
    cage.vertex_groups.new(name="Pin").add(list(range(columns)) + list(range(n, n + columns)),
                                           1.0, 'REPLACE')
    cage.vertex_groups.new(name="Inner").add(list(range(n)), 1.0, 'REPLACE')
    cage.vertex_groups.new(name="Outer").add(list(range(n, 2 * n)), 1.0, 'REPLACE')
    cage.vertex_groups.new(name="Reach").add(list(range(n, 2 * n)), 1.0, 'REPLACE')
    cage.modifiers.new("Armature", 'ARMATURE').object = rig
    cloth_rigs.make_setup(cage, rig, column_step=2)
    settings = cage.waft_cloth
    settings.max_distance, settings.max_distance_group = 1.0, "Reach"
    settings.wind_velocity = (0.0, -12.0, 0.0)  # blows the outer sheet (+y) onto the inner
    settings.wind_turbulence = 0.0
    scene.frame_start, scene.frame_end = 1, 24

    def outer_minus_inner():
        positions = bake_api.bake_scene(scene).systems["cloth"].positions["Layers"]
        return positions[:, n + columns:, 1] - positions[:, columns:n, 1]

    assert outer_minus_inner().min() < -0.02  # no layers: blown straight through
    for group in ("Inner", "Outer"):
        settings.layers.add().group = group
    assert outer_minus_inner().min() >= -1e-3


def test_bake_and_clear_active_armature_reach_its_cages(scene, bake_api):
    rig, cage = cloth_rigs.cloth_rig(scene)
    scene.frame_start, scene.frame_end = 1, 6
    report = bake_api.bake_scene(scene, objects=[rig])
    assert [s.name for s in report.systems["cloth"].setups] == ["Cage"]
    assert report.setups == []  # not a strand setup
    assert bake_api.clear_bake(scene, objects=[rig]) == ["Cage"]
    assert rig.animation_data.nla_tracks.get("Waft Cloth") is None


def test_pose_basis_equals_core_basis_from_world(waft):
    """The cloth writer's closed-form ``pose_basis`` is ``core.bone_pose.basis_from_world``."""
    pose = _core(waft, "addon.cloth.pose")
    bone_pose = _core(waft, "core.bone_pose")
    rng = np.random.default_rng(7)

    def affine(*shape):
        m = np.zeros(shape + (4, 4))
        m[..., :3, :3] = rng.normal(size=shape + (3, 3)) + 3 * np.eye(3)
        m[..., :3, 3] = rng.normal(size=shape + (3,))
        m[..., 3, 3] = 1.0
        return m

    world, parent_world = affine(5, 7), affine(5, 7)
    rest, parent_rest = affine(7), affine(7)
    expected = bone_pose.basis_from_world(world=world, rest=rest[None], parent_world=parent_world,
                                          parent_rest=parent_rest[None])
    got = pose.pose_basis(world=world, rest=rest, parent_world=parent_world,
                          parent_rest=parent_rest)
    np.testing.assert_allclose(got, expected, atol=1e-9)


def test_surface_pins_bind_to_the_closest_triangle_exactly(waft):
    """A pin over the end of a long, thin triangle whose centroid is further away than a small
    triangle's: it binds to the thin one (the closest surface) and its bound point is exactly
    the pin. The nearest centroid with clamped weights moved it onto the small triangle, 30 cm
    away."""
    topology = sys.modules[waft.__name__ + ".addon.cloth.topology"]
    triangles = np.array([[[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.02, 0.0]],
                          [[0.5, 0.3, 0.0], [0.6, 0.3, 0.0], [0.5, 0.4, 0.0]]])
    pins = np.array([[0.05, 0.005, 0.01], [1.8, 0.001, 0.0], [0.55, 0.33, -0.02]])
    tri, weights, offset = topology.bind_to_surface(pins, triangles)
    assert list(tri) == [0, 0, 1]
    np.testing.assert_allclose(topology.surface_points(triangles[tri], weights, offset), pins,
                               atol=1e-12)
