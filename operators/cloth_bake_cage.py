"""``waft.cloth_bake_cage``: bake the active cloth cage and also write the simulated cage as
an animated mesh (``<cage> Waft``) to look at next to the bones."""

import bpy

from ..addon import bake_api
from ..core.errors import WaftError
from .bake import report_done
from .scope import ActiveCage


class WAFT_OT_cloth_bake_cage(ActiveCage, bpy.types.Operator):
    """Bake the active cloth cage, with the simulated cage mesh as extra output"""

    bl_idname = "waft.cloth_bake_cage"
    bl_label = "Bake Cloth with Cage Mesh"
    bl_options = {'REGISTER', 'UNDO'}

    def execute(self, context):
        cage = context.active_object
        cage.waft_cloth.use_cage_output = True
        try:
            report = bake_api.bake_scene(context.scene, objects=[cage])
        except WaftError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        report_done(self, report)
        return {'FINISHED'}
