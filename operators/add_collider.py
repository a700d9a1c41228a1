"""``waft.add_collider``: add a collider empty at the 3D cursor or the active pose bone's head.

In Pose Mode the empty is parented to the active bone (parent type BONE) so it follows the
animation; the collider shape comes from the empty's display type or the chosen enum, and it
collides at the size it shows (``Size``; ``Radius`` for capsules).
"""

import bpy
from mathutils import Matrix

from ..addon.properties import COLLIDER_SHAPES

# Display type drawn for each shape. A capsule has no empty type of its own: Plain Axes of its
# half-length draw its segment along local Z; the viewport overlay (addon/overlay.py) draws the
# whole surface. (A sphere empty once stood for it: drawn at the Size, it collided as a capsule
# of 0.5 m radius, the property default.)
DISPLAY_FOR_SHAPE = {"SPHERE": 'SPHERE', "CAPSULE": 'PLAIN_AXES', "BOX": 'CUBE',
                     "PLANE": 'SINGLE_ARROW'}


class WAFT_OT_add_collider(bpy.types.Operator):
    """Add a Waft collider empty (parented to the active bone in Pose Mode)"""

    bl_idname = "waft.add_collider"
    bl_label = "Add Waft Collider"
    bl_options = {'REGISTER', 'UNDO'}

    shape: bpy.props.EnumProperty(
        name="Shape", items=[i for i in COLLIDER_SHAPES if i[0] != "AUTO"], default="SPHERE")
    size: bpy.props.FloatProperty(name="Size", default=0.1, min=1e-4, unit='LENGTH',
                                  description="Sphere radius, box half-extent, capsule "
                                              "half-length (its segment along local Z) or the "
                                              "drawn half-width of a plane")
    radius: bpy.props.FloatProperty(name="Radius", default=0.05, min=1e-4, unit='LENGTH',
                                    description="Capsule radius at both ends")

    def execute(self, context):
        empty = bpy.data.objects.new(f"WaftCollider.{self.shape.title()}", None)
        empty.empty_display_type = DISPLAY_FOR_SHAPE[self.shape]
        empty.empty_display_size = self.size
        empty.waft_collider.enabled = True
        empty.waft_collider.shape = self.shape
        if self.shape == "CAPSULE":
            empty.waft_collider.radius_a = empty.waft_collider.radius_b = self.radius
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
