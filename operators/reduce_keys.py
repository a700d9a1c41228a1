"""``waft.reduce_keys``: fewer keys on the bone chains' existing result, within Key Error
Distance and Key Error Angle (``addon/strands/reduce_keys.py``)."""

import bpy

from ..addon.strands.reduce_keys import reduce_result_keys
from ..core.errors import WaftError
from .scope import scope_property


class WAFT_OT_reduce_keys(bpy.types.Operator):
    """Thin out the keys of the baked bone chains within Key Error Distance and Key Error Angle"""

    bl_idname = "waft.reduce_keys"
    bl_label = "Reduce Keys of Result"
    bl_options = {'REGISTER', 'UNDO'}

    scope: scope_property()

    def execute(self, context):
        settings = context.scene.waft
        if self.scope == "ALL":
            objects = [ob for ob in context.scene.objects if ob.type == 'ARMATURE']
        else:
            objects = [context.active_object] if context.active_object is not None else []
        lines = []
        try:
            for ob in objects:
                report = reduce_result_keys(ob, max_distance=settings.key_error_distance,
                                            max_angle=settings.key_error_angle)
                if report is not None:
                    lines.append(report.summary(ob.name))
        except WaftError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        if not lines:
            self.report({'INFO'}, "No baked bone chains to reduce (bake first)")
            return {'CANCELLED'}
        self.report({'INFO'}, "Reduced keys: " + "; ".join(lines))
        return {'FINISHED'}
