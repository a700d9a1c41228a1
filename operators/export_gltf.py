"""``waft.export_gltf``: the baked armatures to glTF, one clip per action with the physics in it.

Makes the merged copy of each armature's current bake (``addon/merging.py``) and exports every
merged copy of the armature as a glTF animation through Blender's own exporter
(``addon/gltf_export.py``), with the armature's meshes; the scene is left as it was but for
the merged copies (kept, with a fake user, for the next export).
"""

from pathlib import Path

import bpy
from bpy_extras.io_utils import ExportHelper

from ..addon.gltf_export import export_armatures, export_gltf
from ..core.errors import SetupError

FORMATS = (
    ('GLB', "glTF Binary (.glb)", "One file with everything in it"),
    ('GLTF_SEPARATE', "glTF Separate (.gltf + .bin)", "JSON, binary buffers and textures apart"),
)


class WAFT_OT_export_gltf(bpy.types.Operator, ExportHelper):
    """Export the baked armatures to glTF with one clip per action, the physics merged in"""

    bl_idname = "waft.export_gltf"
    bl_label = "Export glTF with Physics"
    bl_options = {'REGISTER'}

    filename_ext = ".glb"
    filter_glob: bpy.props.StringProperty(default="*.glb;*.gltf", options={'HIDDEN'})
    export_format: bpy.props.EnumProperty(name="Format", items=FORMATS, default='GLB')

    @classmethod
    def poll(cls, context):
        if not export_armatures(context):
            cls.poll_message_set("Bake an armature first")
            return False
        return context.mode == 'OBJECT' or context.mode == 'POSE'

    def check(self, context):
        extension = ".glb" if self.export_format == 'GLB' else ".gltf"
        if self.filename_ext != extension:
            self.filename_ext = extension
        return super().check(context)

    def execute(self, context):
        path = Path(bpy.path.abspath(self.filepath))
        if path.suffix.lower() not in {".glb", ".gltf"}:
            path = path.with_suffix(".glb" if self.export_format == 'GLB' else ".gltf")
        try:
            report = export_gltf(context, str(path), export_format=self.export_format)
        except SetupError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        self.report({'INFO'}, report.summary())
        return {'FINISHED'}
