"""``waft.assign_bones``: flag the selected pose bones as simulated (or unflag them)."""

import bpy

from .scope import ActiveArmature, selected_pose_bones


class WAFT_OT_assign_bones(ActiveArmature, bpy.types.Operator):
    """Simulate the selected pose bones (making the armature a Waft setup), or stop simulating"""

    bl_idname = "waft.assign_bones"
    bl_label = "Assign Waft Bones"
    bl_options = {'REGISTER', 'UNDO'}

    action: bpy.props.EnumProperty(
        name="Action",
        items=(("ADD", "Add", "Simulate the selected bones"),
               ("REMOVE", "Remove", "Stop simulating the selected bones")),
        default="ADD")

    def execute(self, context):
        ob = context.active_object
        selected = selected_pose_bones(ob)
        if not selected:
            self.report({'ERROR'}, f"Armature '{ob.name}': no pose bones are selected")
            return {'CANCELLED'}
        flag = self.action == "ADD"
        for pose_bone in selected:
            pose_bone.waft.simulate = flag
        if flag:
            ob.waft.enabled = True
        verb = "Simulating" if flag else "No longer simulating"
        self.report({'INFO'}, f"{verb} {len(selected)} bone(s) of '{ob.name}'")
        return {'FINISHED'}
