"""``waft.clear_bake``: remove Waft's track and action; the original action is active again."""

import bpy

from ..addon import bake_api
from ..core.errors import WaftError
from .scope import scope_objects, scope_property


class WAFT_OT_clear_bake(bpy.types.Operator):
    """Remove the baked Waft result and make the original action active again"""

    bl_idname = "waft.clear_bake"
    bl_label = "Clear Waft Bake"
    bl_options = {'REGISTER', 'UNDO'}

    scope: scope_property()

    def execute(self, context):
        try:
            cleared = bake_api.clear_bake(context.scene,
                                          objects=scope_objects(context, self.scope))
        except WaftError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        if not cleared:
            self.report({'INFO'}, "No Waft bake to clear")
        else:
            self.report({'INFO'}, f"Cleared Waft bake of {', '.join(cleared)}")
        return {'FINISHED'}
