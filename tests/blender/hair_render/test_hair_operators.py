"""Render-strand operators and panels, as a user reaches them."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hair_rigs  # noqa: E402


def test_panels_and_operators_are_registered(waft):
    for name in ("WAFT_PT_hair", "WAFT_PT_hair_guides", "WAFT_PT_hair_sidebar"):
        assert hasattr(bpy.types, name)
    assert hasattr(bpy.ops.waft, "hair_add_render_strands")
    assert hasattr(bpy.ops.waft, "hair_export_alembic")
    assert hasattr(bpy.types.Object, "waft_hair")


def test_add_render_strands_uses_the_selected_mesh_as_scalp(scene):
    rig, scalp = hair_rigs.head_rig(scene, guides=4, bones=2)
    rig.waft_hair.render_strands = False
    rig.waft_hair.scalp = None
    view_layer = bpy.context.view_layer
    for ob in scene.objects:
        ob.select_set(ob in (rig, scalp))
    view_layer.objects.active = rig
    assert bpy.ops.waft.hair_add_render_strands() == {'FINISHED'}
    assert rig.waft_hair.render_strands and rig.waft_hair.scalp == scalp


def test_add_render_strands_on_a_groom_uses_its_surface(scene):
    ob, scalp, _head = hair_rigs.curves_head(scene, guides=4, points=4)
    ob.waft_hair.enabled = False
    bpy.context.view_layer.objects.active = ob
    assert bpy.ops.waft.hair_add_render_strands() == {'FINISHED'}
    assert ob.waft_hair.enabled and ob.waft_hair.render_strands and ob.waft_hair.scalp == scalp


def test_export_alembic_operator_exports_the_output(scene, bake_api, tmp_path):
    scene.frame_start, scene.frame_end = 1, 3
    rig, _scalp = hair_rigs.head_rig(scene, guides=4, bones=2)
    rig.waft_hair.count = 50
    hair_rigs.save_first_on_42(tmp_path)
    bake_api.bake_scene(scene)
    bpy.context.view_layer.objects.active = rig
    path = tmp_path / "out.abc"
    assert bpy.ops.waft.hair_export_alembic(filepath=str(path)) == {'FINISHED'}
    assert path.is_file() and path.stat().st_size > 0


class _OperatorProperties:
    """Stands in for the operator properties ``layout.operator`` returns (buttons set them)."""


class _Layout:
    """Records what a panel draws; every ``prop`` must name a real property of its data."""

    def __init__(self, log):
        self.log = log
        self.active = True
        self.use_property_split = False
        self.use_property_decorate = False

    def column(self, **_kw):
        return _Layout(self.log)

    row = column

    def prop(self, data, name, **_kw):
        assert name in data.bl_rna.properties, name
        self.log.append(name)

    def prop_search(self, data, name, search_data, search_name, **_kw):
        assert name in data.bl_rna.properties and hasattr(search_data, search_name)
        self.log.append(name)

    def menu(self, idname, **_kw):
        assert hasattr(bpy.types, idname), idname  # a registered menu
        self.log.append(idname)

    def operator(self, idname, **_kw):
        category, name = idname.split(".")
        assert hasattr(getattr(bpy.ops, category), name), idname
        self.log.append(idname)
        return _OperatorProperties()


class _Panel:
    def __init__(self, log):
        self.layout = _Layout(log)


def _draw_all(ob):
    log = []
    context = type("Context", (), {"object": ob})()
    for name in ("WAFT_PT_hair", "WAFT_PT_hair_guides", "WAFT_PT_hair_sidebar"):
        cls = getattr(bpy.types, name)
        if cls.poll(context):
            cls.draw(_Panel(log), context)
            if hasattr(cls, "draw_header"):
                cls.draw_header(_Panel(log), context)
    return log


def test_panels_draw_real_properties_for_armatures_and_grooms(scene):
    rig, _scalp = hair_rigs.head_rig(scene, guides=4, bones=2)
    log = _draw_all(rig)
    assert {"scalp", "density_group", "count", "clump", "points", "render_strands"} <= set(log)
    groom, _scalp2, _head = hair_rigs.curves_head(scene, guides=4, points=4)
    log = _draw_all(groom)
    assert {"enabled", "shape_stiffness", "collider_collection", "scalp",
            "WAFT_MT_chains_presets", "waft.chains_preset_add",
            "local_stiffness", "shock_propagation", "voxel_friction"} <= set(log)
