"""``waft.apply_preset``: copy a named preset onto the active setup's settings."""

import bpy

from ..addon.preset_menus import mark_applied
from ..addon.strands.presets import PRESET_ITEMS, PRESET_KIND, apply_preset


class WAFT_OT_apply_preset(bpy.types.Operator):
    """Set the active Waft setup's settings from a preset"""

    bl_idname = "waft.apply_preset"
    bl_label = "Apply Waft Preset"
    bl_options = {'REGISTER', 'UNDO'}

    preset: bpy.props.EnumProperty(name="Preset", items=PRESET_ITEMS)

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        # Armatures (bone chains) and hair Curves objects (guide curves) both use Object.waft.
        return ob is not None and ob.type in {'ARMATURE', 'CURVES'}

    def execute(self, context):
        settings = context.active_object.waft
        settings.preset = self.preset
        apply_preset(settings, self.preset)
        mark_applied(PRESET_KIND, self.preset)
        return {'FINISHED'}
