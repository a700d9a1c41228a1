"""``waft.ragdoll_apply_preset``: copy a ragdoll preset onto the bodies (all or selected)."""

import bpy

from ..addon.compat import pose_bone_selected
from ..addon.preset_menus import mark_applied
from ..addon.ragdoll.presets import PRESET_ITEMS, PRESET_KIND, apply_preset
from .scope import ActiveArmature


class WAFT_OT_ragdoll_apply_preset(ActiveArmature, bpy.types.Operator):
    """Set the ragdoll's and its bodies' behaviour from a preset"""

    bl_idname = "waft.ragdoll_apply_preset"
    bl_label = "Apply Waft Ragdoll Preset"
    bl_options = {'REGISTER', 'UNDO'}

    preset: bpy.props.EnumProperty(name="Preset", items=PRESET_ITEMS)
    only_selected: bpy.props.BoolProperty(
        name="Only Selected", default=False,
        description="Apply to the selected bodies only (the armature settings still change)")

    def execute(self, context):
        ob = context.active_object
        bodies = [pb.waft_ragdoll for pb in ob.pose.bones if pb.waft_ragdoll.body
                  and (not self.only_selected or pose_bone_selected(pb))]
        apply_preset(ob.waft_ragdoll, bodies, self.preset)
        mark_applied(PRESET_KIND, self.preset)
        self.report({'INFO'}, f"Preset {self.preset.title()} on {len(bodies)} bodies of "
                              f"'{ob.name}'")
        return {'FINISHED'}
