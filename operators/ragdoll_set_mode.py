"""``waft.ragdoll_set_mode``: set Kinematic / Driven / Free on the selected ragdoll bodies."""

import bpy

from ..addon.compat import pose_bone_selected
from ..addon.ragdoll.properties import MODE_ITEMS
from .scope import ActiveArmature


class WAFT_OT_ragdoll_set_mode(ActiveArmature, bpy.types.Operator):
    """Set the mode of the selected ragdoll bodies"""

    bl_idname = "waft.ragdoll_set_mode"
    bl_label = "Set Waft Ragdoll Mode"
    bl_options = {'REGISTER', 'UNDO'}

    mode: bpy.props.EnumProperty(name="Mode", items=[i[:3] for i in MODE_ITEMS],
                                 default="DRIVEN")

    def execute(self, context):
        ob = context.active_object
        bodies = [pb for pb in ob.pose.bones if pose_bone_selected(pb) and pb.waft_ragdoll.body]
        if not bodies:
            self.report({'ERROR'}, f"Armature '{ob.name}': no selected bone is a ragdoll body")
            return {'CANCELLED'}
        for pb in bodies:
            pb.waft_ragdoll_mode = self.mode
        self.report({'INFO'}, f"{len(bodies)} bodies of '{ob.name}' set to {self.mode.title()}")
        return {'FINISHED'}
