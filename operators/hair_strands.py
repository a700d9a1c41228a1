"""Render-strand operators: add render strands to a guide setup, export them to Alembic."""

import bpy

from ..addon.hair import curves


class WAFT_OT_hair_add_render_strands(bpy.types.Operator):
    """Turn on render strands for the active guide armature"""

    bl_description = (
        "Turn on render strands for the active guide armature (or hair Curves guides); a "
        "selected mesh becomes the scalp"
    )

    bl_idname = "waft.hair_add_render_strands"
    bl_label = "Add Render Strands"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        ob = context.object
        return ob is not None and ob.type in {'ARMATURE', 'CURVES'}

    def execute(self, context):
        ob = context.object
        hair = ob.waft_hair
        hair.render_strands = True
        if ob.type == 'CURVES':
            hair.enabled = True
            if hair.scalp is None and ob.data.surface is not None:
                hair.scalp = ob.data.surface
        if hair.scalp is None:
            meshes = [o for o in context.selected_objects if o.type == 'MESH']
            if meshes:
                hair.scalp = meshes[0]
        if hair.scalp is None:
            self.report({'WARNING'}, f"Render strands on for '{ob.name}': pick a Scalp mesh")
        else:
            self.report({'INFO'}, f"Render strands of '{ob.name}' grow on '{hair.scalp.name}'; "
                                  "bake to create them")
        return {'FINISHED'}


class WAFT_OT_hair_export_alembic(bpy.types.Operator):
    """Export the baked render strands of the active object to its Alembic path"""

    bl_idname = "waft.hair_export_alembic"
    bl_label = "Export Alembic"
    bl_options = {'REGISTER'}

    filepath: bpy.props.StringProperty(name="File Path", subtype='FILE_PATH', default="")

    @classmethod
    def poll(cls, context):
        ob = context.object
        return ob is not None and hasattr(ob, "waft_hair") and (
            ob.type == 'CURVES' and ob.modifiers.get(curves.MODIFIER) is not None
            or ob.waft_hair.output is not None)

    def execute(self, context):
        ob = context.object
        target = ob if ob.modifiers.get(curves.MODIFIER) else ob.waft_hair.output
        path = self.filepath or ob.waft_hair.alembic_path
        if not path:
            self.report({'ERROR'}, f"'{ob.name}': set an Alembic path first")
            return {'CANCELLED'}
        scene = context.scene
        written = curves.export_alembic(scene, target, path, frame_start=scene.frame_start,
                                        frame_end=scene.frame_end)
        self.report({'INFO'}, f"Exported '{target.name}' to {written}")
        return {'FINISHED'}
