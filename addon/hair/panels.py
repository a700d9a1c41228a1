"""Panels: render strands (Properties editor, Object tab, and the 3D view sidebar tab "Waft")."""

import bpy

from ..panels import (
    PropertiesPanel,
    SidebarPanel,
    active_of_type,
    draw_props,
    settled_subpanel,
)
from ..strands.panels import SETUP_CONSTRAINTS, SETUP_HAIR, SETUP_MAIN, SETUP_WIND, draw_preset

STRANDS = ("scalp", "count", "points", "method", "clump", "randomness", "seed", "root_radius",
           "tip_radius", "body_meshes", "output", "storage", "alembic_path")


def _hair_object(context):
    return active_of_type(context, 'ARMATURE', 'CURVES')


def _draw(layout, ob) -> None:
    hair = ob.waft_hair
    if ob.type == 'CURVES':
        layout.prop(hair, "render_strands")
    draw_props(layout, hair, STRANDS[:1])
    if hair.scalp is not None:
        col = layout.column()
        col.use_property_split = True
        col.prop_search(hair, "density_group", hair.scalp, "vertex_groups")
    draw_props(layout, hair, STRANDS[1:])
    row = layout.row(align=True)
    row.operator("waft.hair_add_render_strands", icon='CURVES')
    row.operator("waft.hair_export_alembic", icon='EXPORT')


class WAFT_PT_hair(PropertiesPanel, bpy.types.Panel):
    bl_label = "Waft Hair Strands"
    bl_context = "object"
    bl_options = {'DEFAULT_CLOSED'}

    @classmethod
    def poll(cls, context):
        return _hair_object(context) is not None

    def draw_header(self, context):
        ob = context.object
        self.layout.prop(ob.waft_hair, "enabled" if ob.type == 'CURVES' else "render_strands",
                         text="")

    def draw(self, context):
        _draw(self.layout, context.object)


class WAFT_PT_hair_guides(PropertiesPanel, bpy.types.Panel):
    """Physics of the hair Curves guides (the same settings as a bone chain's)"""

    bl_label = "Guide Physics"
    bl_context = "object"
    bl_parent_id = "WAFT_PT_hair"
    bl_options = {'DEFAULT_CLOSED'}

    @classmethod
    def poll(cls, context):
        return active_of_type(context, 'CURVES') is not None

    def draw(self, context):
        ob = context.object
        self.layout.active = ob.waft_hair.enabled
        draw_preset(self.layout, ob)  # the hair presets work on Curves guides too
        draw_props(self.layout, ob.waft, SETUP_MAIN + SETUP_HAIR + SETUP_CONSTRAINTS + SETUP_WIND)
        self.layout.prop(ob.waft, "collider_collection")


# The guides' settled pose (hair Curves only: render strands follow their guides).
WAFT_PT_hair_settled = settled_subpanel("WAFT_PT_hair_settled", "WAFT_PT_hair", "waft",
                                        "settled_count", types=('CURVES',))


class WAFT_PT_hair_sidebar(SidebarPanel, bpy.types.Panel):
    bl_label = "Hair Strands"
    bl_options = {'DEFAULT_CLOSED'}

    @classmethod
    def poll(cls, context):
        return _hair_object(context) is not None

    def draw(self, context):
        _draw(self.layout, context.object)


register, unregister = bpy.utils.register_classes_factory(
    (WAFT_PT_hair, WAFT_PT_hair_guides, WAFT_PT_hair_settled, WAFT_PT_hair_sidebar))
