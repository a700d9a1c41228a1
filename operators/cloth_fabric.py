"""``waft.cloth_apply_fabric``: set the active cage's cloth settings from a fabric preset."""

import bpy

from ..addon.cloth.presets import FABRIC_ITEMS, PRESET_KIND, apply_fabric
from ..addon.preset_menus import mark_applied
from ..addon.reading import unit_scale


class WAFT_OT_cloth_apply_fabric(bpy.types.Operator):
    """Set the active cloth cage's settings from a fabric (tweed, silk, leather, ...)"""

    bl_idname = "waft.cloth_apply_fabric"
    bl_label = "Apply Fabric"
    bl_options = {'REGISTER', 'UNDO'}

    fabric: bpy.props.EnumProperty(name="Fabric", items=FABRIC_ITEMS)

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.type == 'MESH'

    def execute(self, context):
        apply_fabric(context.active_object.waft_cloth, self.fabric,
                     unit_scale=unit_scale(context.scene))
        mark_applied(PRESET_KIND, self.fabric)
        return {'FINISHED'}
