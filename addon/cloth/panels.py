"""Cloth panels: Properties editor (Object tab of the cage) and the 3D view sidebar "Waft"."""

import bpy

from ..panels import (
    PropertiesPanel,
    SidebarPanel,
    active_of_type,
    armature_of,
    draw_props,
    settings_subpanel,
    settled_subpanel,
)
from ..preset_menus import draw_preset_menu, preset_classes
from ..strands.panels import draw_warning_boxes
from .presets import PRESET_KIND
from .warnings import cloth_warnings

MAIN = ("damping", "gravity", "radius", "world_motion_fraction")
STIFFNESS = ("use_hard_vertical", "stretch_compliance", "horizontal_compliance",
             "shear_compliance", "bend_compliance")
LIMITS = ("max_distance", "max_distance_scale", "use_backstop", "backstop_distance")
WIND = ("wind_velocity", "wind_turbulence", "wind_seed", "drag")
EDGES = ("edge_damping_scale", "edge_wind_scale", "edge_world_motion_scale",
         "edge_max_distance_scale", "contact_damping")
CUTS = ("cut_threshold", "cut_blend_frames", "reset_frames", "layer_thickness")


def _cage(context):
    return active_of_type(context, 'MESH')


def draw_fabric(layout, settings) -> None:
    draw_preset_menu(layout, PRESET_KIND)


def draw_setup(layout, ob) -> None:
    settings = ob.waft_cloth
    col = layout.column()
    col.use_property_split = True
    col.prop(settings, "armature")
    col.prop_search(settings, "pin_group", ob, "vertex_groups")
    col.prop(settings, "pin_mode")
    if settings.pin_mode == "SURFACE":
        col.prop(settings, "body")
    if settings.armature is not None:
        col.prop_search(settings, "space_bone", settings.armature.data, "bones")
    col.prop_search(settings, "max_distance_group", ob, "vertex_groups")
    col.prop(settings, "collider_collection")
    col.prop(settings, "use_cage_output")


class WAFT_UL_cloth_bones(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_prop, index=0):
        row = layout.row(align=True)
        armature = data.armature
        if armature is not None:
            row.prop_search(item, "bone", armature.data, "bones", text="")
        else:
            row.prop(item, "bone", text="")
        row.prop(item, "vertex", text="")


class WAFT_PT_cloth(PropertiesPanel, bpy.types.Panel):
    bl_label = "Waft Cloth"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        return _cage(context) is not None

    def draw_header(self, context):
        self.layout.prop(context.object.waft_cloth, "enabled", text="")

    def draw(self, context):
        ob = context.object
        layout = self.layout
        layout.active = ob.waft_cloth.enabled
        layout.operator("waft.cloth_add", icon='MOD_CLOTH')
        draw_fabric(layout, ob.waft_cloth)
        draw_setup(layout, ob)
        draw_props(layout, ob.waft_cloth, MAIN)
        layout.operator("waft.cloth_bake_cage", icon='MESH_GRID')
        draw_warning_boxes(layout, ob, cloth_warnings(context.scene, ob))


def _sub_panel(label: str, names: tuple[str, ...], ident: str):
    return settings_subpanel(ident, label, "WAFT_PT_cloth", "waft_cloth", names)


WAFT_PT_cloth_stiffness = _sub_panel("Stiffness", STIFFNESS, "WAFT_PT_cloth_stiffness")
WAFT_PT_cloth_limits = _sub_panel("Max Distance and Backstop", LIMITS, "WAFT_PT_cloth_limits")
WAFT_PT_cloth_wind = _sub_panel("Wind and Drag", WIND, "WAFT_PT_cloth_wind")
WAFT_PT_cloth_edges = _sub_panel("Edges and Contact", EDGES, "WAFT_PT_cloth_edges")
WAFT_PT_cloth_cuts = _sub_panel("Cuts and Layers", CUTS, "WAFT_PT_cloth_cuts")


class _ClothChild(PropertiesPanel):
    """A closed sub-panel of Waft Cloth."""

    bl_context = "object"
    bl_parent_id = "WAFT_PT_cloth"
    bl_options = {'DEFAULT_CLOSED'}


WAFT_PT_cloth_settled = settled_subpanel("WAFT_PT_cloth_settled", "WAFT_PT_cloth", "waft_cloth",
                                         "settled_vertices")


class WAFT_PT_cloth_bones(_ClothChild, bpy.types.Panel):
    bl_label = "Bones"

    def draw(self, context):
        settings = context.object.waft_cloth
        self.layout.template_list("WAFT_UL_cloth_bones", "", settings, "bones", settings,
                                  "bones_index", rows=4)
        layers = self.layout.column()
        layers.label(text="Layers (bottom first)")
        for item in settings.layers:
            layers.prop_search(item, "group", context.object, "vertex_groups", text="")


class WAFT_PT_cloth_sidebar(SidebarPanel, bpy.types.Panel):
    bl_label = "Waft Cloth"

    @classmethod
    def poll(cls, context):
        return _cage(context) is not None

    def draw(self, context):
        ob = context.object
        layout = self.layout
        layout.prop(ob.waft_cloth, "enabled", text=f"Cloth cage: {ob.name}")
        layout.operator("waft.cloth_add", icon='MOD_CLOTH')
        if ob.waft_cloth.enabled:
            draw_fabric(layout, ob.waft_cloth)
            draw_props(layout, ob.waft_cloth, MAIN)
            layout.operator("waft.cloth_bake_cage", icon='MESH_GRID')
            draw_warning_boxes(layout, ob, cloth_warnings(context.scene, ob))


ROD_MAIN = ("damping", "gravity", "radius", "world_motion_fraction", "drag", "wind_velocity")
ROD_STIFFNESS = ("stretch_shear_compliance", "bend_twist_compliance", "bend_stiffness_axes")


class WAFT_PT_rod(PropertiesPanel, bpy.types.Panel):
    bl_label = "Waft Rods"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        return armature_of(context) is not None

    def draw_header(self, context):
        self.layout.prop(context.object.waft_rod, "enabled", text="")

    def draw(self, context):
        ob = context.object
        settings = ob.waft_rod
        layout = self.layout
        layout.active = settings.enabled
        row = layout.row(align=True)
        row.operator("waft.rod_assign", text="Assign Rods").action = "ADD"
        row.operator("waft.rod_assign", text="Remove").action = "REMOVE"
        col = layout.column(align=True)
        for item in settings.chains:
            col.prop_search(item, "root", ob.data, "bones", text="")
        col = layout.column()
        col.use_property_split = True
        col.prop_search(settings, "space_bone", ob.data, "bones")
        col.prop(settings, "collider_collection")
        draw_props(layout, settings, ROD_MAIN + ROD_STIFFNESS)


CLASSES = (WAFT_UL_cloth_bones, WAFT_PT_cloth, WAFT_PT_cloth_stiffness, WAFT_PT_cloth_limits,
           WAFT_PT_cloth_wind, WAFT_PT_cloth_edges, WAFT_PT_cloth_cuts, WAFT_PT_cloth_settled,
           WAFT_PT_cloth_bones,
           WAFT_PT_cloth_sidebar, WAFT_PT_rod, *preset_classes(PRESET_KIND))

register, unregister = bpy.utils.register_classes_factory(CLASSES)
