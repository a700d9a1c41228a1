"""Panels: Properties editor (Object, Bone, Scene tabs) and the 3D view sidebar tab "Waft"."""

import bpy

SETUP_MAIN = ("shape_stiffness", "shape_decay", "damping", "gravity_factor", "radius")
SETUP_CONSTRAINTS = ("stretch_compliance", "ftl_damping", "use_bending", "bend_compliance",
                     "use_tether", "max_distance", "world_motion_fraction")
SETUP_WIND = ("wind_direction", "wind_speed", "wind_turbulence", "wind_gust",
              "wind_direction_variation", "wind_tangent_response", "wind_strand_variation",
              "wind_seed", "drag")
SETUP_HAIR = ("local_stiffness", "shape_range", "shock_propagation", "voxel_friction",
              "voxel_resolution")


def active_of_type(context, *types):
    """``context.object`` when its type is one of ``types`` ('ARMATURE', 'MESH', ...)."""
    ob = context.object
    return ob if ob is not None and ob.type in types else None


def armature_of(context):
    """The active object if it is an armature, else None."""
    return active_of_type(context, 'ARMATURE')


def draw_props(layout, data, names) -> None:
    col = layout.column()
    col.use_property_split = True
    col.use_property_decorate = True  # the keyframe dot: every setting can be animated
    for name in names:
        col.prop(data, name)


def draw_apply_row(layout, settings, prop: str, operator: str) -> None:
    """The enum ``prop`` of ``settings`` (a preset, a fabric) and an Apply button running
    ``operator`` with the chosen value."""
    row = layout.row(align=True)
    row.prop(settings, prop, text="")
    setattr(row.operator(operator, text="Apply"), prop, getattr(settings, prop))


def draw_preset(layout, ob) -> None:
    draw_apply_row(layout, ob.waft, "preset", "waft.apply_preset")


class PropertiesPanel:
    """Mixin: a panel of the Properties editor (each subclass sets its ``bl_context`` tab)."""

    bl_space_type = 'PROPERTIES'
    bl_region_type = 'WINDOW'


class SidebarPanel:
    """Mixin: a panel of the 3D view's sidebar tab "Waft"."""

    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Waft"


def settings_subpanel(ident: str, label: str, parent: str, group: str, names):
    """A closed sub-panel ``ident`` of the Object tab under ``parent`` that draws the settings
    ``names`` of ``context.object.<group>`` (e.g. ``waft_cloth``)."""
    def draw(self, context):
        draw_props(self.layout, getattr(context.object, group), names)

    return type(ident, (PropertiesPanel, bpy.types.Panel), {
        "bl_label": label, "bl_context": "object", "bl_parent_id": parent,
        "bl_options": {'DEFAULT_CLOSED'}, "draw": draw})


class WAFT_PT_setup(PropertiesPanel, bpy.types.Panel):
    bl_label = "Waft"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        return armature_of(context) is not None

    def draw_header(self, context):
        self.layout.prop(context.object.waft, "enabled", text="")

    def draw(self, context):
        ob = context.object
        layout = self.layout
        layout.active = ob.waft.enabled
        draw_preset(layout, ob)
        draw_props(layout, ob.waft, SETUP_MAIN)
        layout.prop(ob.waft, "collider_collection")
        row = layout.row(align=True)
        row.operator("waft.assign_bones", text="Assign Bones").action = "ADD"
        row.operator("waft.assign_bones", text="Remove Bones").action = "REMOVE"


WAFT_PT_setup_constraints = settings_subpanel(
    "WAFT_PT_setup_constraints", "Constraints", "WAFT_PT_setup", "waft", SETUP_CONSTRAINTS)
WAFT_PT_setup_wind = settings_subpanel(
    "WAFT_PT_setup_wind", "Wind and Drag", "WAFT_PT_setup", "waft", SETUP_WIND)
WAFT_PT_setup_hair = settings_subpanel(
    "WAFT_PT_setup_hair", "Hair Shape and Friction", "WAFT_PT_setup", "waft", SETUP_HAIR)


class WAFT_PT_collider(PropertiesPanel, bpy.types.Panel):
    bl_label = "Waft Collider"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.type == 'EMPTY'

    def draw_header(self, context):
        self.layout.prop(context.object.waft_collider, "enabled", text="")

    def draw(self, context):
        settings = context.object.waft_collider
        self.layout.active = settings.enabled
        names = ["shape", "friction"]
        if settings.shape == "CAPSULE":
            names += ["radius_a", "radius_b"]
        draw_props(self.layout, settings, names)
        self.layout.prop(context.object, "empty_display_size", text="Size")


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
        col = layout.column()
        col.active = settings.use_overrides
        draw_props(col, settings, ("shape_stiffness", "damping", "radius"))


class WAFT_PT_scene(PropertiesPanel, bpy.types.Panel):
    bl_label = "Waft Bake"
    bl_context = "scene"

    def draw(self, context):
        draw_props(self.layout, context.scene.waft, ("substep_rate", "iterations", "preroll"))
        draw_bake_buttons(self.layout)


def draw_bake_buttons(layout) -> None:
    row = layout.row(align=True)
    row.operator("waft.bake", text="Bake All", icon='PHYSICS').scope = "ALL"
    row.operator("waft.bake", text="Bake Active").scope = "ACTIVE"
    layout.operator("waft.clear_bake", text="Clear Bake", icon='X').scope = "ALL"


class WAFT_PT_sidebar(SidebarPanel, bpy.types.Panel):
    bl_label = "Waft"

    def draw(self, context):
        layout = self.layout
        draw_bake_buttons(layout)
        draw_props(layout, context.scene.waft, ("substep_rate", "preroll"))
        layout.operator("waft.add_collider", icon='SPHERE')
        ob = armature_of(context)
        if ob is None:
            return
        layout.separator()
        layout.prop(ob.waft, "enabled", text=f"Waft setup: {ob.name}")
        row = layout.row(align=True)
        row.operator("waft.assign_bones", text="Assign Bones").action = "ADD"
        row.operator("waft.assign_bones", text="Remove").action = "REMOVE"
        if ob.waft.enabled:
            draw_preset(layout, ob)
            draw_props(layout, ob.waft, SETUP_MAIN)
            draw_props(layout, ob.waft, ("local_stiffness", "shock_propagation",
                                         "voxel_friction"))


CLASSES = (WAFT_PT_setup, WAFT_PT_setup_constraints, WAFT_PT_setup_wind, WAFT_PT_setup_hair,
           WAFT_PT_collider,
           WAFT_PT_bone, WAFT_PT_scene, WAFT_PT_sidebar)


register, unregister = bpy.utils.register_classes_factory(CLASSES)
