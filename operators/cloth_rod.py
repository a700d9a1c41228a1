"""``waft.rod_assign``: make the selected pose bones' chains Waft rods (ties, ribbons, hoods), or
remove them."""

import bpy

from .scope import ActiveArmature, selected_pose_bones


class WAFT_OT_rod_assign(ActiveArmature, bpy.types.Operator):
    """Simulate the chains starting at the selected pose bones as rods (or stop)"""

    bl_idname = "waft.rod_assign"
    bl_label = "Assign Waft Rods"
    bl_options = {'REGISTER', 'UNDO'}

    action: bpy.props.EnumProperty(
        name="Action",
        items=(("ADD", "Add", "Each selected bone whose parent is not selected starts a rod"),
               ("REMOVE", "Remove", "Remove the rods that start at a selected bone")),
        default="ADD")

    def execute(self, context):
        ob = context.active_object
        selected = selected_pose_bones(ob)
        if not selected:
            self.report({'ERROR'}, f"Armature '{ob.name}': no pose bones are selected")
            return {'CANCELLED'}
        chains = ob.waft_rod.chains
        names = {pb.name for pb in selected}
        if self.action == "REMOVE":
            for index in reversed(range(len(chains))):
                if chains[index].root in names:
                    chains.remove(index)
            return {'FINISHED'}
        roots = [pb.name for pb in selected if pb.parent is None or pb.parent.name not in names]
        existing = {item.root for item in chains}
        for name in roots:
            if name not in existing:
                chains.add().root = name
        ob.waft_rod.enabled = True
        self.report({'INFO'}, f"Armature '{ob.name}': {len(chains)} rod chain(s)")
        return {'FINISHED'}
