"""``waft.import_vrm_springs``: the active armature's VRM spring bones from its .vrm/.glb file.

Reads the file's glTF JSON (VRM 1.0 ``VRMC_springBone`` or VRM 0.x ``secondaryAnimation``,
``addon/strands/vrm_file.py``) and makes the armature a VRM Spring Bone setup with the file's
chains, settings and colliders (``addon/strands/vrm_import.py``). The armature is the character
imported from that file (Blender's glTF importer or the VRM Add-on): bones are found by the
file's node names. A file that does not fit changes nothing.
"""

from pathlib import Path

import bpy
from bpy_extras.io_utils import ImportHelper

from ..addon.strands.vrm_file import read_gltf_json, read_springs
from ..addon.strands.vrm_import import apply_springs
from ..core.errors import SetupError


class WAFT_OT_import_vrm_springs(bpy.types.Operator, ImportHelper):
    """Make this armature's chains and colliders from the VRM spring bones of its .vrm file"""

    bl_idname = "waft.import_vrm_springs"
    bl_label = "Import VRM Spring Bones"
    bl_options = {'REGISTER', 'UNDO'}

    filename_ext = ".vrm"
    filter_glob: bpy.props.StringProperty(default="*.vrm;*.glb;*.gltf", options={'HIDDEN'})

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        if ob is None or ob.type != 'ARMATURE':
            cls.poll_message_set("Select the character's armature")
            return False
        return context.mode in {'OBJECT', 'POSE'}

    def execute(self, context):
        rig = context.active_object
        path = Path(bpy.path.abspath(self.filepath))
        try:
            springs = read_springs(read_gltf_json(path), source=f"'{path.name}'")
            report = apply_springs(context, rig, springs, source=f"'{path.name}'")
        except SetupError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        for note in report.skipped:
            self.report({'WARNING'}, f"Not carried over: {note}")
        self.report({'INFO'}, report.summary(rig.name, springs.version))
        return {'FINISHED'}
