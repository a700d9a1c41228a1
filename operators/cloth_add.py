"""``waft.cloth_add``: make the active quad mesh a cloth cage driving an armature's bones.

The armature is the other selected object (or the cage's Armature modifier / parent). Bones are
either created on the grid (Alan Wake: every row but the last, every other column) or existing
bones are mapped to the vertex nearest their head.
"""

import bpy

from ..addon.cloth import setup
from ..core.errors import WaftError


def find_armature(context, cage):
    for ob in context.selected_objects:
        if ob.type == 'ARMATURE':
            return ob
    for modifier in cage.modifiers:
        if modifier.type == 'ARMATURE' and modifier.object is not None:
            return modifier.object
    if cage.parent is not None and cage.parent.type == 'ARMATURE':
        return cage.parent
    return cage.waft_cloth.armature


class WAFT_OT_cloth_add(bpy.types.Operator):
    """Make the active mesh a Waft cloth cage and map the armature's bones to its grid"""

    bl_idname = "waft.cloth_add"
    bl_label = "Add Cloth Setup"
    bl_options = {'REGISTER', 'UNDO'}

    mapping: bpy.props.EnumProperty(
        name="Bones",
        items=(("CREATE", "Create on Grid",
                "New bones along the cage's columns (every Row Step-th row but the last, "
                "every Column Step-th column), parented to Parent Bone"),
               ("NEAREST", "Map Nearest",
                "Map existing bones to the vertex nearest their head")),
        default="CREATE")
    row_step: bpy.props.IntProperty(name="Row Step", default=1, min=1,
                                    description="A bone on every n-th row (Alan Wake: 1)")
    column_step: bpy.props.IntProperty(name="Column Step", default=2, min=1,
                                       description="A bone on every n-th column (Alan Wake: 2)")
    pin_group: bpy.props.StringProperty(
        name="Pin Group", default="",
        description="Vertex group of the pinned vertices (empty: keep the cage's, else 'Pin')")
    parent_bone: bpy.props.StringProperty(
        name="Parent Bone", default="",
        description="Parent of the created bones (empty: the bone the pinned vertices are "
                    "weighted to most)")
    prefix: bpy.props.StringProperty(name="Prefix", default="Cloth")

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.type == 'MESH'

    def execute(self, context):
        cage = context.active_object
        armature = find_armature(context, cage)
        if armature is None:
            self.report({'ERROR'}, f"Cloth cage '{cage.name}': select the armature too (or give "
                                   f"the cage an Armature modifier)")
            return {'CANCELLED'}
        settings = cage.waft_cloth
        settings.armature = armature
        if self.pin_group:
            settings.pin_group = self.pin_group
        elif not settings.pin_group and "Pin" in cage.vertex_groups:
            settings.pin_group = "Pin"
        try:
            if self.mapping == "CREATE":
                parent = self.parent_bone or setup.pin_parent_bone(cage, armature)
                pairs = setup.create_grid_bones(
                    cage, armature, parent_bone=parent, row_step=self.row_step,
                    column_step=self.column_step, prefix=self.prefix)
            else:
                pairs = setup.map_nearest_bones(cage, armature)
        except WaftError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        if not pairs:
            self.report({'ERROR'}, f"Cloth cage '{cage.name}': no bone could be mapped")
            return {'CANCELLED'}
        setup.set_mapping(cage, pairs)
        settings.enabled = True
        self.report({'INFO'}, f"Cloth cage '{cage.name}' drives {len(pairs)} bone(s) of "
                              f"'{armature.name}'")
        return {'FINISHED'}
