"""Panels every system shares: the mixins and drawing helpers, the collider and scene (bake)
panels, and the 3D view sidebar tab "Waft" under which each system adds its own panel."""

import bpy

from .preview import draw_status
from .reading import space_armature


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
    owner = getattr(data, "id_data", None)
    armature = space_armature(owner) if isinstance(owner, bpy.types.Object) else None
    for name in names:
        if name.endswith("_bone") and armature is not None:
            col.prop_search(data, name, armature.data, "bones")  # a bone of that armature
        else:
            col.prop(data, name)


class PropertiesPanel:
    """Mixin: a panel of the Properties editor (each subclass sets its ``bl_context`` tab)."""

    bl_space_type = 'PROPERTIES'
    bl_region_type = 'WINDOW'


class SidebarPanel:
    """Mixin: a panel of the 3D view's sidebar tab "Waft"."""

    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Waft"


def settings_subpanel(ident: str, label: str, parent: str, group: str, names, *, poll=None):
    """A closed sub-panel ``ident`` of the Object tab under ``parent`` that draws the settings
    ``names`` of ``context.object.<group>`` (e.g. ``waft_cloth``); ``poll(context)``: when to
    show it (None: wherever the parent shows)."""
    def draw(self, context):
        draw_props(self.layout, getattr(context.object, group), names)

    members = {"bl_label": label, "bl_context": "object", "bl_parent_id": parent,
               "bl_options": {'DEFAULT_CLOSED'}, "draw": draw}
    if poll is not None:
        members["poll"] = classmethod(lambda cls, context: poll(context))
    return type(ident, (PropertiesPanel, bpy.types.Panel), members)


def settled_subpanel(ident: str, parent: str, group: str, count: str, *, types=None):
    """A closed sub-panel "Settled Pose" under ``parent``: the Settled Pose switch of
    ``context.object.<group>`` (greyed out until a pose was captured: ``<count>`` > 0), the
    frame it was captured at, and Capture Settled Pose. ``types``: only for active objects of
    these types (None: wherever the parent shows)."""
    def draw(self, context):
        settings = getattr(context.object, group)
        layout = self.layout
        captured = getattr(settings, count) > 0
        row = layout.row()
        row.active = captured
        row.prop(settings, "use_settled_pose")
        layout.label(text=f"Captured at frame {settings.settled_frame}" if captured
                     else "No pose captured yet", icon='INFO')
        layout.operator("waft.capture_settled", icon='PINNED')

    members = {"bl_label": "Settled Pose", "bl_context": "object", "bl_parent_id": parent,
               "bl_options": {'DEFAULT_CLOSED'}, "draw": draw}
    if types is not None:
        members["poll"] = classmethod(lambda cls, context: active_of_type(context, *types)
                                      is not None)
    return type(ident, (PropertiesPanel, bpy.types.Panel), members)


class WAFT_PT_collider(PropertiesPanel, bpy.types.Panel):
    bl_label = "Waft Collider"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.type in {'EMPTY', 'MESH'}

    def draw_header(self, context):
        self.layout.prop(context.object.waft_collider, "enabled", text="")

    def draw(self, context):
        settings = context.object.waft_collider
        self.layout.active = settings.enabled
        if context.object.type == 'MESH':
            # A body-mesh collider: its deformed surface is the shape.
            draw_props(self.layout, settings, ["friction", "depth"])
            return
        names = ["shape", "friction"]
        if settings.shape == "CAPSULE":
            names += ["radius_a", "radius_b"]
        draw_props(self.layout, settings, names)
        self.layout.prop(context.object, "empty_display_size", text="Size")


class WAFT_PT_scene(PropertiesPanel, bpy.types.Panel):
    bl_label = "Waft Bake"
    bl_context = "scene"

    def draw(self, context):
        draw_props(self.layout, context.scene.waft, (
            "substep_rate", "sample_rate", "iterations", "preroll", "use_loop", "loop_cycles",
            "use_key_reduction", "key_error_distance", "key_error_angle", "bake_target",
            "constrained_bones", "show_collider_shapes",
            "show_simulation_shapes"))
        draw_status(self.layout.box(), context.scene)
        draw_bake_buttons(self.layout)


def draw_bake_buttons(layout, ob=None) -> None:
    row = layout.row(align=True)
    row.operator("waft.bake", text="Bake All", icon='PHYSICS').scope = "ALL"
    row.operator("waft.bake", text="Bake Active").scope = "ACTIVE"
    layout.operator("waft.clear_bake", text="Clear Bake", icon='X').scope = "ALL"
    row = layout.row(align=True)
    row.operator("waft.reduce_keys", icon='IPO_LINEAR').scope = "ALL"
    row.operator("waft.export_gltf", icon='EXPORT')
    draw_original_action(layout, ob)


def draw_original_action(layout, ob) -> None:
    """Where the active object's own action is after a bake, and the way back to edit it."""
    original = getattr(getattr(ob, "waft", None), "original_action", None)
    if original is None:
        return
    anim_data = ob.animation_data
    box = layout.box()
    if anim_data is not None and anim_data.action == original:
        box.label(text=f"Editing your action '{original.name}'", icon='ACTION')
        box.label(text="Bake again to simulate on the edit")
        return
    box.label(text=f"Your action '{original.name}' plays on", icon='ACTION')
    box.label(text="NLA track 'Waft: original' under Waft")
    box.operator("waft.edit_original", icon='GREASEPENCIL')


class WAFT_PT_sidebar(SidebarPanel, bpy.types.Panel):
    """Bake and clear every Waft setup of the scene, and the scene's solver settings"""

    # The sidebar tab's top panel; each system adds a child panel
    # (``bl_parent_id = "WAFT_PT_sidebar"``) for the active object.

    bl_label = "Waft"

    def draw(self, context):
        layout = self.layout
        draw_status(layout.box(), context.scene)
        draw_bake_buttons(layout, context.active_object)
        draw_props(layout, context.scene.waft, ("substep_rate", "sample_rate", "preroll",
                                                "constrained_bones"))
        row = layout.row(align=True)
        row.operator("waft.add_collider", icon='SPHERE')
        row.operator("waft.fit_colliders", text="Fit to Bones", icon='MESH_CAPSULE')


CLASSES = (WAFT_PT_collider, WAFT_PT_scene, WAFT_PT_sidebar)


register, unregister = bpy.utils.register_classes_factory(CLASSES)
