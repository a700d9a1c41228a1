"""``waft.edit_original``: make the user's original action (stashed under Waft's results by the
first bake) the active action again, to edit it; the next bake uses the edit."""

import bpy

from ..addon.writing import edit_original_action


class WAFT_OT_edit_original(bpy.types.Operator):
    """Make your original action active again to edit it"""

    bl_description = (
        "Make your original action active again to edit it (Waft's result is hidden under it "
        "where both key a channel); bake again to simulate on the edited motion"
    )

    bl_idname = "waft.edit_original"
    bl_label = "Edit Original Action"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and getattr(ob, "waft", None) is not None \
            and ob.waft.original_action is not None

    def execute(self, context):
        ob = context.active_object
        if not edit_original_action(ob):
            self.report({'INFO'}, f"'{ob.waft.original_action.name}' is already active")
            return {'CANCELLED'}
        self.report({'INFO'}, f"Editing '{ob.waft.original_action.name}'; bake again to use "
                              "the edit")
        return {'FINISHED'}
