"""``waft.add_collider``: add a collider empty at the 3D cursor or the active pose bone's head.

In Pose Mode the empty is parented to the active bone (parent type BONE) so it follows the
animation; the collider shape comes from the empty's display type or the chosen enum.
"""

import bpy
from mathutils import Matrix

from ..addon.properties import COLLIDER_SHAPES

# Display type drawn for each shape; CAPSULE has no empty type of its own.
DISPLAY_FOR_SHAPE = {"SPHERE": 'SPHERE', "CAPSULE": 'SPHERE', "BOX": 'CUBE',
                     "PLANE": 'SINGLE_ARROW'}


class WAFT_OT_add_collider(bpy.types.Operator):
    """Add a Waft collider empty (parented to the active bone in Pose Mode)"""

    bl_idname = "waft.add_collider"
    bl_label = "Add Waft Collider"
    bl_options = {'REGISTER', 'UNDO'}

    shape: bpy.props.EnumProperty(
        name="Shape", items=[i for i in COLLIDER_SHAPES if i[0] != "AUTO"], default="SPHERE")
    size: bpy.props.FloatProperty(name="Size", default=0.1, min=1e-4, unit='LENGTH',
                                  description="Display size: radius, half-extent or "
                                              "half-length")

    def execute(self, context):
        empty = bpy.data.objects.new(f"WaftCollider.{self.shape.title()}", None)
        empty.empty_display_type = DISPLAY_FOR_SHAPE[self.shape]
        empty.empty_display_size = self.size
        empty.waft_collider.enabled = True
        empty.waft_collider.shape = self.shape
        context.collection.objects.link(empty)
        rig = context.active_object
        pose_bone = context.active_pose_bone if context.mode == 'POSE' else None
        if rig is not None and rig.type == 'ARMATURE' and pose_bone is not None:
            head = rig.matrix_world @ pose_bone.head
            empty.parent = rig
            empty.parent_type = 'BONE'
            empty.parent_bone = pose_bone.name
            # Parent-bone space sits at the bone's tail; keep the empty at the head in world.
            empty.matrix_world = Matrix.Translation(head)
        else:
            empty.matrix_world = Matrix.Translation(context.scene.cursor.location)
        self.report({'INFO'}, f"Added Waft collider '{empty.name}'")
        return {'FINISHED'}
