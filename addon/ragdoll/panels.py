"""Ragdoll panels: Object tab (the armature's ragdoll), Bone tab (the active bone's body), and
a section in the 3D view's Waft sidebar tab."""

import bpy

from ..panels import (
    PropertiesPanel,
    SidebarPanel,
    armature_of,
    draw_props,
    settings_subpanel,
)
from ..preset_menus import draw_preset_menu, preset_classes
from ..strands.panels import draw_warning_boxes
from .presets import PRESET_KIND
from .properties import ANIMATED_BODY_SETTINGS, BONE_PREFIX
from .warnings import ragdoll_warnings

RAGDOLL_MAIN = ("root_lock", "fall_threshold", "use_recovery", "recovery_delay", "recovery_time",
                "gravity_factor", "default_density")
RAGDOLL_WORLD = ("use_ground", "ground_height", "collider_collection", "self_collision",
                 "collide_with_others", "substep_rate", "iterations")
BODY_SHAPE = ("radius", "use_mass", "mass", "density")
BODY_JOINT = ("weld", "swing_limit", "swing_center", "twist_limit", "joint_damping")
BODY_DRIVE = ("motor_strength", "motor_damping", "velocity_drive", "blend", "distance_limit",
              "distance_limit_speed", "linear_damping", "friction", "restitution")


def draw_body_props(layout, pose_bone, names) -> None:
    """A body's settings: the per-frame ones from the pose bone itself (so Insert Keyframe can
    make their path), the others from its ``waft_ragdoll`` group."""
    col = layout.column()
    col.use_property_split = True
    col.use_property_decorate = True
    for name in names:
        if name in ANIMATED_BODY_SETTINGS:
            col.prop(pose_bone, BONE_PREFIX + name)
        else:
            col.prop(pose_bone.waft_ragdoll, name)


def draw_preset(layout, ob) -> None:
    draw_preset_menu(layout, PRESET_KIND)


def draw_warnings(layout, scene, ob) -> None:
    """Each ragdoll setup warning (``warnings.py``) with its one-click fix."""
    draw_warning_boxes(layout, ob, ragdoll_warnings(scene, ob))


def draw_create_buttons(layout) -> None:
    row = layout.row(align=True)
    row.operator("waft.ragdoll_create", text="Create Ragdoll", icon='ARMATURE_DATA')
    row.operator("waft.ragdoll_set_mode", text="Set Mode")


class WAFT_PT_ragdoll(PropertiesPanel, bpy.types.Panel):
    bl_label = "Waft Ragdoll"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        return armature_of(context) is not None

    def draw_header(self, context):
        self.layout.prop(context.object.waft_ragdoll, "enabled", text="")

    def draw(self, context):
        ob = context.object
        settings = ob.waft_ragdoll
        layout = self.layout
        layout.active = settings.enabled
        draw_create_buttons(layout)
        draw_preset(layout, ob)
        draw_props(layout, settings, RAGDOLL_MAIN)
        bodies = sum(1 for pb in ob.pose.bones if pb.waft_ragdoll.body)
        layout.label(text=f"{bodies} bodies", icon='MESH_CAPSULE')
        draw_warnings(layout, context.scene, ob)


WAFT_PT_ragdoll_world = settings_subpanel(
    "WAFT_PT_ragdoll_world", "Ground, Colliders, Quality", "WAFT_PT_ragdoll", "waft_ragdoll",
    RAGDOLL_WORLD)


class WAFT_PT_ragdoll_carrier(PropertiesPanel, bpy.types.Panel):
    bl_label = "Carrier"
    bl_context = "object"
    bl_parent_id = "WAFT_PT_ragdoll"
    bl_options = {'DEFAULT_CLOSED'}

    def draw(self, context):
        settings = context.object.waft_ragdoll
        col = self.layout.column()
        col.use_property_split = True
        col.prop(settings, "carrier")
        if settings.carrier is not None and settings.carrier.type == 'ARMATURE':
            col.prop_search(settings, "carrier_bone", settings.carrier.pose, "bones")
        else:
            col.prop(settings, "carrier_bone")


class WAFT_PT_ragdoll_body(PropertiesPanel, bpy.types.Panel):
    bl_label = "Waft Ragdoll Body"
    bl_context = "bone"

    @classmethod
    def poll(cls, context):
        return armature_of(context) is not None and context.active_pose_bone is not None

    def draw_header(self, context):
        self.layout.prop(context.active_pose_bone.waft_ragdoll, "body", text="")

    def draw(self, context):
        pose_bone = context.active_pose_bone
        layout = self.layout
        layout.active = pose_bone.waft_ragdoll.body
        draw_body_props(layout, pose_bone, ("mode",))
        layout.label(text="Shape")
        draw_body_props(layout, pose_bone, BODY_SHAPE)
        layout.label(text="Joint")
        draw_body_props(layout, pose_bone, BODY_JOINT)
        layout.label(text="Drive")
        draw_body_props(layout, pose_bone, BODY_DRIVE)


class WAFT_PT_ragdoll_sidebar(SidebarPanel, bpy.types.Panel):
    bl_label = "Ragdoll"
    bl_parent_id = "WAFT_PT_sidebar"

    @classmethod
    def poll(cls, context):
        return armature_of(context) is not None

    def draw(self, context):
        ob = context.object
        layout = self.layout
        layout.prop(ob.waft_ragdoll, "enabled", text=f"Ragdoll: {ob.name}")
        draw_create_buttons(layout)
        if ob.waft_ragdoll.enabled:
            draw_preset(layout, ob)
            draw_props(layout, ob.waft_ragdoll, ("root_lock", "fall_threshold"))
            draw_warnings(layout, context.scene, ob)
        pose_bone = context.active_pose_bone
        if pose_bone is not None and pose_bone.waft_ragdoll.body:
            layout.label(text=f"Body: {pose_bone.name}")
            draw_body_props(layout, pose_bone, ("mode", "motor_strength", "blend"))


CLASSES = (WAFT_PT_ragdoll, WAFT_PT_ragdoll_world, WAFT_PT_ragdoll_carrier,
           WAFT_PT_ragdoll_body, WAFT_PT_ragdoll_sidebar, *preset_classes(PRESET_KIND))


register, unregister = bpy.utils.register_classes_factory(CLASSES)
