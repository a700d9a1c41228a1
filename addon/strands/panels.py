"""The bone-chain system's panels: the armature's Waft settings (Object tab, with sub-panels),
per-bone flags (Bone tab), and its part of the sidebar tab."""

import bpy

from ..panels import (
    PropertiesPanel,
    SidebarPanel,
    armature_of,
    draw_props,
    settings_subpanel,
    settled_subpanel,
)
from ..preset_menus import draw_preset_menu, preset_classes
from .presets import PRESET_KIND
from .warnings import chain_warnings

SETUP_MAIN = ("shape_stiffness", "shape_decay", "damping", "gravity_factor", "radius")


SETUP_CONSTRAINTS = ("stretch_compliance", "ftl_damping", "use_bending", "bend_compliance",
                     "use_tether", "max_distance", "world_motion_fraction", "space_bone")


SETUP_WIND = ("wind_direction", "wind_speed", "wind_turbulence", "wind_gust",
              "wind_direction_variation", "wind_tangent_response", "wind_strand_variation",
              "wind_seed", "drag")


SETUP_HAIR = ("local_stiffness", "shape_range", "shock_propagation", "voxel_friction",
              "voxel_resolution")


# VRM Spring Bone: the joint settings of VRMC_springBone (Radius is the hit radius).
SETUP_VRM = ("vrm_stiffness", "vrm_gravity_power", "vrm_gravity_dir", "vrm_drag_force")
BONE_VRM = ("vrm_stiffness", "vrm_gravity_power", "vrm_drag_force")


def draw_warnings(layout, scene, ob) -> None:
    """Each setup warning (``warnings.py``) with its one-click fix."""
    draw_warning_boxes(layout, ob, chain_warnings(scene, ob))


def draw_warning_boxes(layout, ob, found) -> None:
    """Setup warnings of armature ``ob`` (bone chains' or a ragdoll's), each in a box with its
    one-click fix (``waft.fix_warning``)."""
    for warning in found:
        box = layout.box()
        box.label(text=warning.text, icon='ERROR', translate=False)
        op = box.operator("waft.fix_warning", text=warning.label, translate=False)
        op.fix, op.armature, op.target = warning.fix, ob.name, warning.target


def uses_vrm(ob) -> bool:
    return ob is not None and ob.type == 'ARMATURE' and ob.waft.solver == 'VRM'


def draw_vrm(layout, ob) -> None:
    """The VRM Spring Bone settings: VRM's joint fields, the hit radius and the centre."""
    draw_props(layout, ob.waft, SETUP_VRM)
    col = layout.column()
    col.use_property_split = True
    col.prop(ob.waft, "radius", text="Hit Radius")
    col.prop_search(ob.waft, "space_bone", ob.data, "bones", text="Center")


def waft_solver_shown(context) -> bool:
    return armature_of(context) is not None and not uses_vrm(context.object)


def draw_preset(layout, ob) -> None:
    draw_preset_menu(layout, PRESET_KIND)


class ArmaturePanel:
    """Mixin: shown while the active object is an armature."""

    @classmethod
    def poll(cls, context):
        return armature_of(context) is not None


def draw_assign_row(layout) -> None:
    row = layout.row(align=True)
    row.operator("waft.assign_bones", text="Assign Bones").action = "ADD"
    row.operator("waft.assign_bones", text="Remove Bones").action = "REMOVE"


class WAFT_PT_setup(ArmaturePanel, PropertiesPanel, bpy.types.Panel):
    bl_label = "Waft"
    bl_context = "object"

    def draw_header(self, context):
        self.layout.prop(context.object.waft, "enabled", text="")

    def draw(self, context):
        ob = context.object
        layout = self.layout
        layout.active = ob.waft.enabled
        layout.prop(ob.waft, "solver")
        if uses_vrm(ob):
            draw_vrm(layout, ob)
        else:
            draw_preset(layout, ob)
            draw_props(layout, ob.waft, SETUP_MAIN)
        layout.prop(ob.waft, "collider_collection")
        draw_warnings(layout, context.scene, ob)
        draw_assign_row(layout)
        layout.operator("waft.import_vrm_springs", icon='IMPORT')


WAFT_PT_setup_constraints = settings_subpanel(
    "WAFT_PT_setup_constraints", "Constraints", "WAFT_PT_setup", "waft", SETUP_CONSTRAINTS,
    poll=waft_solver_shown)


WAFT_PT_setup_wind = settings_subpanel(
    "WAFT_PT_setup_wind", "Wind and Drag", "WAFT_PT_setup", "waft", SETUP_WIND,
    poll=waft_solver_shown)


WAFT_PT_setup_hair = settings_subpanel(
    "WAFT_PT_setup_hair", "Hair Shape and Friction", "WAFT_PT_setup", "waft", SETUP_HAIR,
    poll=waft_solver_shown)


WAFT_PT_setup_settled = settled_subpanel(
    "WAFT_PT_setup_settled", "WAFT_PT_setup", "waft", "settled_count")


class WAFT_PT_bone(PropertiesPanel, bpy.types.Panel):
    bl_label = "Waft"
    bl_context = "bone"

    @classmethod
    def poll(cls, context):
        return armature_of(context) is not None and context.active_pose_bone is not None

    def draw_header(self, context):
        self.layout.prop(context.active_pose_bone.waft, "simulate", text="")

    def draw(self, context):
        settings = context.active_pose_bone.waft
        layout = self.layout
        layout.active = settings.simulate
        draw_props(layout, settings, ("pinned", "use_overrides"))
        bone = context.active_pose_bone
        if bone.parent is None or not bone.parent.waft.simulate:  # a chain's first bone
            layout.prop(settings, "collider_collection")
        col = layout.column()
        col.active = settings.use_overrides
        if uses_vrm(context.object):
            draw_props(col, settings, BONE_VRM)
            col.prop(settings, "radius", text="Hit Radius")
        else:
            draw_props(col, settings, ("shape_stiffness", "damping", "radius"))


class WAFT_PT_chains_sidebar(ArmaturePanel, SidebarPanel, bpy.types.Panel):
    bl_label = "Bone Chains"
    bl_parent_id = "WAFT_PT_sidebar"

    def draw(self, context):
        ob = context.object
        layout = self.layout
        layout.prop(ob.waft, "enabled", text=f"Waft setup: {ob.name}")
        draw_assign_row(layout)
        if not ob.waft.enabled:
            return
        draw_warnings(layout, context.scene, ob)
        layout.prop(ob.waft, "solver")
        if uses_vrm(ob):
            draw_vrm(layout, ob)
            return
        draw_preset(layout, ob)
        draw_props(layout, ob.waft, SETUP_MAIN)
        draw_props(layout, ob.waft, ("local_stiffness", "shock_propagation", "voxel_friction"))


CLASSES = (WAFT_PT_setup, WAFT_PT_setup_constraints, WAFT_PT_setup_wind, WAFT_PT_setup_hair,
           WAFT_PT_setup_settled, WAFT_PT_bone, WAFT_PT_chains_sidebar,
           *preset_classes(PRESET_KIND))


register, unregister = bpy.utils.register_classes_factory(CLASSES)
